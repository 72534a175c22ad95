//! The work request path of one block of work rings: the queue manager and the descriptor
//! fetch engine that reads the rings whose doorbells rang (host writes and reads of the rings
//! pass through to the manager; the fetch engine's DMA reads leave on `rd_*`, the requests it
//! fetched on `m_wqe_*`).

use rust_hdl::prelude::*;

use crate::queue_mgr::QueueMgr;
use crate::wqe_fetch::WqeFetch;

#[derive(LogicBlock)]
pub struct WqPath<const Q: usize, const N: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub reg_wr_en: Signal<In, Bit>,
    pub reg_wr_queue: Signal<In, Bits<Q>>,
    pub reg_wr_word: Signal<In, Bits<3>>,
    pub reg_wr_data: Signal<In, Bits<32>>,
    pub reg_rd_start: Signal<In, Bit>,
    pub reg_rd_queue: Signal<In, Bits<Q>>,
    pub reg_rd_word: Signal<In, Bits<3>>,
    pub rd_req_ready: Signal<In, Bit>,
    pub rd_data_valid: Signal<In, Bit>,
    pub rd_data: Signal<In, Bits<64>>,
    pub rd_data_last: Signal<In, Bit>,
    pub rd_data_err: Signal<In, Bit>,
    pub m_wqe_room: Signal<In, Bit>,
    pub reg_rd_data: Signal<Out, Bits<32>>,
    pub rd_req_valid: Signal<Out, Bit>,
    pub rd_req_addr: Signal<Out, Bits<64>>,
    pub rd_req_len: Signal<Out, Bits<16>>,
    pub rd_req_tag: Signal<Out, Bits<7>>,
    pub rd_data_ready: Signal<Out, Bit>,
    pub m_wqe_valid: Signal<Out, Bit>,
    pub m_wqe_data: Signal<Out, Bits<64>>,
    pub m_wqe_last: Signal<Out, Bit>,
    pub m_wqe_err: Signal<Out, Bit>,
    pub m_wqe_queue: Signal<Out, Bits<Q>>,
    pub m_wqe_index: Signal<Out, Bits<16>>,
    mgr: QueueMgr<Q>,
    fetch: WqeFetch<Q, N>,
    k_zero32: Constant<Bits<32>>,
}

impl<const Q: usize, const N: usize> WqPath<Q, N> {
    /// `2^Q` work rings of `2^entry_log`-byte requests.
    pub fn new(entry_log: u32) -> Self {
        WqPath {
            clock: Default::default(),
            reset: Default::default(),
            reg_wr_en: Default::default(),
            reg_wr_queue: Default::default(),
            reg_wr_word: Default::default(),
            reg_wr_data: Default::default(),
            reg_rd_start: Default::default(),
            reg_rd_queue: Default::default(),
            reg_rd_word: Default::default(),
            rd_req_ready: Default::default(),
            rd_data_valid: Default::default(),
            rd_data: Default::default(),
            rd_data_last: Default::default(),
            rd_data_err: Default::default(),
            m_wqe_room: Default::default(),
            reg_rd_data: Default::default(),
            rd_req_valid: Default::default(),
            rd_req_addr: Default::default(),
            rd_req_len: Default::default(),
            rd_req_tag: Default::default(),
            rd_data_ready: Default::default(),
            m_wqe_valid: Default::default(),
            m_wqe_data: Default::default(),
            m_wqe_last: Default::default(),
            m_wqe_err: Default::default(),
            m_wqe_queue: Default::default(),
            m_wqe_index: Default::default(),
            mgr: QueueMgr::new(false),
            fetch: WqeFetch::new(entry_log),
            k_zero32: Constant::new(bits::<32>(0)),
        }
    }
}

impl<const Q: usize, const N: usize> Logic for WqPath<Q, N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.mgr.clock.next = self.clock.val();
        self.fetch.clock.next = self.clock.val();
        self.mgr.reset.next = self.reset.val();
        self.fetch.reset.next = self.reset.val();
        self.mgr.wr_en.next = self.reg_wr_en.val();
        self.mgr.wr_queue.next = self.reg_wr_queue.val();
        self.mgr.wr_word.next = self.reg_wr_word.val();
        self.mgr.wr_data.next = self.reg_wr_data.val();
        self.mgr.rd_start.next = self.reg_rd_start.val();
        self.mgr.rd_queue.next = self.reg_rd_queue.val();
        self.mgr.rd_word.next = self.reg_rd_word.val();
        self.reg_rd_data.next = self.mgr.rd_data.val();
        self.fetch.db_valid.next = self.mgr.db_valid.val();
        self.fetch.db_queue.next = self.mgr.db_queue.val();
        self.mgr.look_valid.next = self.fetch.look_valid.val();
        self.fetch.look_ready.next = self.mgr.look_ready.val();
        self.mgr.look_queue.next = self.fetch.look_queue.val();
        self.fetch.got_valid.next = self.mgr.got_valid.val();
        self.fetch.got_base.next = self.mgr.got_base.val();
        self.fetch.got_size.next = self.mgr.got_size.val();
        self.fetch.got_prod.next = self.mgr.got_prod.val();
        self.fetch.got_cons.next = self.mgr.got_cons.val();
        self.mgr.commit_valid.next = self.fetch.commit_valid.val();
        self.fetch.commit_ready.next = self.mgr.commit_ready.val();
        self.mgr.commit_queue.next = self.fetch.commit_queue.val();
        self.mgr.commit_index.next = self.fetch.commit_index.val();
        self.mgr.disarm_valid.next = false;
        self.mgr.disarm_queue.next = self.fetch.commit_queue.val();
        self.mgr.disarm_size.next = self.k_zero32.val();
        self.rd_req_valid.next = self.fetch.rd_req_valid.val();
        self.rd_req_addr.next = self.fetch.rd_req_addr.val();
        self.rd_req_len.next = self.fetch.rd_req_len.val();
        self.rd_req_tag.next = self.fetch.rd_req_tag.val();
        self.rd_data_ready.next = self.fetch.rd_data_ready.val();
        self.m_wqe_valid.next = self.fetch.m_wqe_valid.val();
        self.m_wqe_data.next = self.fetch.m_wqe_data.val();
        self.m_wqe_last.next = self.fetch.m_wqe_last.val();
        self.m_wqe_err.next = self.fetch.m_wqe_err.val();
        self.m_wqe_queue.next = self.fetch.m_wqe_queue.val();
        self.m_wqe_index.next = self.fetch.m_wqe_index.val();
        self.fetch.rd_req_ready.next = self.rd_req_ready.val();
        self.fetch.rd_data_valid.next = self.rd_data_valid.val();
        self.fetch.rd_data.next = self.rd_data.val();
        self.fetch.rd_data_last.next = self.rd_data_last.val();
        self.fetch.rd_data_err.next = self.rd_data_err.val();
        self.fetch.m_wqe_room.next = self.m_wqe_room.val();
    }
}
