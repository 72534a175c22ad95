//! One entry of a work ring read over the DMA port, for the engines that read requests where
//! they lie: the ring looked up in its queue manager, the entry at an index addressed (the
//! ring's consumer, or the caller's own index), and read; its beats are passed on as they come
//! (`m_beat_*`: every beat is taken, so the DMA port's shared read data channel never waits).
//! A disabled ring (SIZE.ENABLE clear), or one whose producer has reached the index, is
//! answered without a read (`m_empty`). `m_done` marks the clock the read's last beat passes
//! or the ring is found empty; `m_index` holds the index read until the next request.
//! Shared by the receive request fetch ([`crate::recv_wqe`]) and the send request reader
//! ([`crate::send_wqe`]).

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct SlotRead<const Q: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    pub s_ring: Signal<In, Bits<Q>>,
    pub s_index: Signal<In, Bits<16>>,
    /// Read at the ring's consumer (`s_index` is not used).
    pub s_at_cons: Signal<In, Bit>,
    /// The rings' queue manager ([`crate::queue_mgr`], engine side).
    pub look_valid: Signal<Out, Bit>,
    pub look_ready: Signal<In, Bit>,
    pub look_queue: Signal<Out, Bits<Q>>,
    pub got_valid: Signal<In, Bit>,
    pub got_base: Signal<In, Bits<64>>,
    pub got_size: Signal<In, Bits<32>>,
    pub got_prod: Signal<In, Bits<16>>,
    pub got_cons: Signal<In, Bits<16>>,
    /// The DMA port's read side.
    pub m_dma_rd_req_valid: Signal<Out, Bit>,
    pub m_dma_rd_req_ready: Signal<In, Bit>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_data_valid: Signal<In, Bit>,
    pub m_dma_rd_data_ready: Signal<Out, Bit>,
    pub m_dma_rd_data: Signal<In, Bits<64>>,
    pub m_dma_rd_data_last: Signal<In, Bit>,
    pub m_dma_rd_data_err: Signal<In, Bit>,
    /// A beat of the entry (`m_beat_err`: the host refused it).
    pub m_beat_valid: Signal<Out, Bit>,
    pub m_beat: Signal<Out, Bits<64>>,
    pub m_beat_err: Signal<Out, Bit>,
    pub m_done: Signal<Out, Bit>,
    pub m_empty: Signal<Out, Bit>,
    pub m_index: Signal<Out, Bits<16>>,

    // 0 IDLE, 1 LOOK, 2 GOT, 3 RD_REQ, 4 RD_DATA.
    st: DFF<Bits<3>>,
    ring: DFF<Bits<Q>>,
    index: DFF<Bits<16>>,
    at_cons: DFF<Bit>,
    addr: DFF<Bits<64>>,

    idx: Signal<Local, Bits<16>>,
    size32: Signal<Local, Bits<32>>,
    mask: Signal<Local, Bits<16>>,
    empty: Signal<Local, Bit>,
    k_one16: Constant<Bits<16>>,
    k_one32: Constant<Bits<32>>,
    k_len: Constant<Bits<16>>,
    k_log: Constant<Bits<64>>,
}

impl<const Q: usize> SlotRead<Q> {
    /// A reader of `bytes`-byte entries (a power of two, eight at least).
    pub fn new(bytes: u64) -> Self {
        assert!(bytes.is_power_of_two() && (8..1 << 16).contains(&bytes));
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_ring: Default::default(),
            s_index: Default::default(),
            s_at_cons: Default::default(),
            look_valid: Default::default(),
            look_ready: Default::default(),
            look_queue: Default::default(),
            got_valid: Default::default(),
            got_base: Default::default(),
            got_size: Default::default(),
            got_prod: Default::default(),
            got_cons: Default::default(),
            m_dma_rd_req_valid: Default::default(),
            m_dma_rd_req_ready: Default::default(),
            m_dma_rd_req_addr: Default::default(),
            m_dma_rd_req_len: Default::default(),
            m_dma_rd_data_valid: Default::default(),
            m_dma_rd_data_ready: Default::default(),
            m_dma_rd_data: Default::default(),
            m_dma_rd_data_last: Default::default(),
            m_dma_rd_data_err: Default::default(),
            m_beat_valid: Default::default(),
            m_beat: Default::default(),
            m_beat_err: Default::default(),
            m_done: Default::default(),
            m_empty: Default::default(),
            m_index: Default::default(),
            st: Default::default(),
            ring: Default::default(),
            index: Default::default(),
            at_cons: Default::default(),
            addr: Default::default(),
            idx: Default::default(),
            size32: Default::default(),
            mask: Default::default(),
            empty: Default::default(),
            k_one16: Constant::new(bits::<16>(1)),
            k_one32: Constant::new(bits::<32>(1)),
            k_len: Constant::new(bits::<16>(bytes)),
            k_log: Constant::new(bits::<64>(bytes.trailing_zeros() as u64)),
        }
    }
}

impl<const Q: usize> Logic for SlotRead<Q> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, st, ring, index, at_cons, addr);
        self.s_ready.next = false;
        self.look_valid.next = false;
        self.look_queue.next = self.ring.q.val();
        self.m_dma_rd_req_valid.next = false;
        self.m_dma_rd_req_addr.next = self.addr.q.val();
        self.m_dma_rd_req_len.next = self.k_len.val();
        self.m_dma_rd_data_ready.next = false;
        self.m_beat_valid.next = false;
        self.m_beat.next = self.m_dma_rd_data.val();
        self.m_beat_err.next = self.m_dma_rd_data_err.val();
        self.m_done.next = false;
        self.m_index.next = self.index.q.val();

        self.size32.next = self.k_one32.val() << self.got_size.val().get_bits::<5>(0);
        self.mask.next = self.size32.val().get_bits::<16>(0) - self.k_one16.val();
        self.idx.next = self.index.q.val();
        if self.at_cons.q.val() {
            self.idx.next = self.got_cons.val();
        }
        // Disabled (SIZE.ENABLE, bit 8), or nothing posted at the index.
        self.empty.next = !self.got_size.val().get_bit(8) | (self.got_prod.val() == self.idx.val());
        self.m_empty.next = false;

        if self.st.q.val() == 0 {
            self.s_ready.next = true;
            if self.s_valid.val() {
                self.ring.d.next = self.s_ring.val();
                self.index.d.next = self.s_index.val();
                self.at_cons.d.next = self.s_at_cons.val();
                self.st.d.next = 1.into();
            }
        }
        if self.st.q.val() == 1 {
            self.look_valid.next = true;
            if self.look_ready.val() {
                self.st.d.next = 2.into();
            }
        }
        if (self.st.q.val() == 2) & self.got_valid.val() {
            self.index.d.next = self.idx.val();
            self.addr.d.next = self.got_base.val()
                + (bit_cast::<64, 16>(self.idx.val() & self.mask.val()) << self.k_log.val());
            self.st.d.next = 3.into();
            if self.empty.val() {
                self.m_done.next = true;
                self.m_empty.next = true;
                self.st.d.next = 0.into();
            }
        }
        if self.st.q.val() == 3 {
            self.m_dma_rd_req_valid.next = true;
            if self.m_dma_rd_req_ready.val() {
                self.st.d.next = 4.into();
            }
        }
        if self.st.q.val() == 4 {
            self.m_dma_rd_data_ready.next = true;
            self.m_beat_valid.next = self.m_dma_rd_data_valid.val();
            if self.m_dma_rd_data_valid.val() & self.m_dma_rd_data_last.val() {
                self.m_done.next = true;
                self.st.d.next = 0.into();
            }
        }
        if self.reset.val() {
            self.st.d.next = 0.into();
        }
    }
}
