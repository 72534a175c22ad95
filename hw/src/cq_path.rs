//! The completion path: the completion rings' queue manager and the completion writer that
//! fills them, the unit the transport's engines hand completions to (host writes and reads of
//! the rings pass through to the manager; the writer's DMA port leaves on `wr_*`).

use rust_hdl::prelude::*;

use crate::cq_writer::CqWriter;
use crate::queue_mgr::QueueMgr;

#[derive(LogicBlock)]
pub struct CqPath<const Q: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub reg_wr_en: Signal<In, Bit>,
    pub reg_wr_queue: Signal<In, Bits<Q>>,
    pub reg_wr_word: Signal<In, Bits<3>>,
    pub reg_wr_data: Signal<In, Bits<32>>,
    pub reg_rd_start: Signal<In, Bit>,
    pub reg_rd_queue: Signal<In, Bits<Q>>,
    pub reg_rd_word: Signal<In, Bits<3>>,
    pub s_cqe_valid: Signal<In, Bit>,
    pub s_cqe_cq: Signal<In, Bits<Q>>,
    pub s_cqe_data: Signal<In, Bits<64>>,
    pub s_cqe_last: Signal<In, Bit>,
    pub wr_req_ready: Signal<In, Bit>,
    pub wr_data_ready: Signal<In, Bit>,
    pub wr_done_valid: Signal<In, Bit>,
    pub wr_done_err: Signal<In, Bit>,
    pub reg_rd_data: Signal<Out, Bits<32>>,
    pub s_cqe_ready: Signal<Out, Bit>,
    pub wr_req_valid: Signal<Out, Bit>,
    pub wr_req_addr: Signal<Out, Bits<64>>,
    pub wr_req_len: Signal<Out, Bits<16>>,
    pub wr_req_tag: Signal<Out, Bits<7>>,
    pub wr_data_valid: Signal<Out, Bit>,
    pub wr_data: Signal<Out, Bits<64>>,
    pub wr_data_keep: Signal<Out, Bits<8>>,
    pub wr_data_last: Signal<Out, Bit>,
    pub ev_written: Signal<Out, Bit>,
    pub ev_overflow: Signal<Out, Bit>,
    pub ev_dma_error: Signal<Out, Bit>,
    pub ev_irq: Signal<Out, Bit>,
    pub ev_irq_cq: Signal<Out, Bits<Q>>,
    mgr: QueueMgr<Q>,
    writer: CqWriter<Q>,
}

impl<const Q: usize> Default for CqPath<Q> {
    fn default() -> Self {
        CqPath {
            clock: Default::default(),
            reset: Default::default(),
            reg_wr_en: Default::default(),
            reg_wr_queue: Default::default(),
            reg_wr_word: Default::default(),
            reg_wr_data: Default::default(),
            reg_rd_start: Default::default(),
            reg_rd_queue: Default::default(),
            reg_rd_word: Default::default(),
            s_cqe_valid: Default::default(),
            s_cqe_cq: Default::default(),
            s_cqe_data: Default::default(),
            s_cqe_last: Default::default(),
            wr_req_ready: Default::default(),
            wr_data_ready: Default::default(),
            wr_done_valid: Default::default(),
            wr_done_err: Default::default(),
            reg_rd_data: Default::default(),
            s_cqe_ready: Default::default(),
            wr_req_valid: Default::default(),
            wr_req_addr: Default::default(),
            wr_req_len: Default::default(),
            wr_req_tag: Default::default(),
            wr_data_valid: Default::default(),
            wr_data: Default::default(),
            wr_data_keep: Default::default(),
            wr_data_last: Default::default(),
            ev_written: Default::default(),
            ev_overflow: Default::default(),
            ev_dma_error: Default::default(),
            ev_irq: Default::default(),
            ev_irq_cq: Default::default(),
            mgr: QueueMgr::new(true),
            writer: Default::default(),
        }
    }
}

impl<const Q: usize> Logic for CqPath<Q> {
    #[hdl_gen]
    fn update(&mut self) {
        self.mgr.clock.next = self.clock.val();
        self.writer.clock.next = self.clock.val();
        self.mgr.reset.next = self.reset.val();
        self.writer.reset.next = self.reset.val();
        self.mgr.wr_en.next = self.reg_wr_en.val();
        self.mgr.wr_queue.next = self.reg_wr_queue.val();
        self.mgr.wr_word.next = self.reg_wr_word.val();
        self.mgr.wr_data.next = self.reg_wr_data.val();
        self.mgr.rd_start.next = self.reg_rd_start.val();
        self.mgr.rd_queue.next = self.reg_rd_queue.val();
        self.mgr.rd_word.next = self.reg_rd_word.val();
        self.reg_rd_data.next = self.mgr.rd_data.val();
        // Writer and manager.
        self.mgr.look_valid.next = self.writer.look_valid.val();
        self.writer.look_ready.next = self.mgr.look_ready.val();
        self.mgr.look_queue.next = self.writer.look_queue.val();
        self.writer.got_valid.next = self.mgr.got_valid.val();
        self.writer.got_base.next = self.mgr.got_base.val();
        self.writer.got_size.next = self.mgr.got_size.val();
        self.writer.got_prod.next = self.mgr.got_prod.val();
        self.writer.got_cons.next = self.mgr.got_cons.val();
        self.mgr.commit_valid.next = self.writer.commit_valid.val();
        self.writer.commit_ready.next = self.mgr.commit_ready.val();
        self.mgr.commit_queue.next = self.writer.commit_queue.val();
        self.mgr.commit_index.next = self.writer.commit_index.val();
        self.mgr.disarm_valid.next = self.writer.disarm_valid.val();
        self.writer.disarm_ready.next = self.mgr.disarm_ready.val();
        self.mgr.disarm_queue.next = self.writer.disarm_queue.val();
        self.mgr.disarm_size.next = self.writer.disarm_size.val();
        // Completions in, DMA out.
        self.writer.s_cqe_valid.next = self.s_cqe_valid.val();
        self.s_cqe_ready.next = self.writer.s_cqe_ready.val();
        self.writer.s_cqe_cq.next = self.s_cqe_cq.val();
        self.writer.s_cqe_data.next = self.s_cqe_data.val();
        self.writer.s_cqe_last.next = self.s_cqe_last.val();
        self.wr_req_valid.next = self.writer.wr_req_valid.val();
        self.wr_req_addr.next = self.writer.wr_req_addr.val();
        self.wr_req_len.next = self.writer.wr_req_len.val();
        self.wr_req_tag.next = self.writer.wr_req_tag.val();
        self.wr_data_valid.next = self.writer.wr_data_valid.val();
        self.wr_data.next = self.writer.wr_data.val();
        self.wr_data_keep.next = self.writer.wr_data_keep.val();
        self.wr_data_last.next = self.writer.wr_data_last.val();
        self.ev_written.next = self.writer.ev_written.val();
        self.ev_overflow.next = self.writer.ev_overflow.val();
        self.ev_dma_error.next = self.writer.ev_dma_error.val();
        self.ev_irq.next = self.writer.ev_irq.val();
        self.ev_irq_cq.next = self.writer.ev_irq_cq.val();
        self.writer.wr_req_ready.next = self.wr_req_ready.val();
        self.writer.wr_data_ready.next = self.wr_data_ready.val();
        self.writer.wr_done_valid.next = self.wr_done_valid.val();
        self.writer.wr_done_err.next = self.wr_done_err.val();
    }
}
