//! A payload stream written to host memory in up to three pieces: the responder's DMA writes
//! (a WRITE's payload where its VA falls, a SEND's across the receive request's
//! scatter/gather entries).
//!
//! A command names the pieces (`s_cmd_addr*` a device address at any byte, `s_cmd_len*`
//! bytes; a piece of length 0 is skipped); the payload's bytes go to them in order, piece 0
//! first. For each piece the engine issues one write on the DMA port (request, then its data
//! beats, the last one marked and its `keep` covering the piece's last bytes), then the next;
//! when every write is done it reports on `m_done_*`: `err` if the host refused any of them,
//! `tail` if it took the payload's last beat (if not, the rest of the payload is the caller's
//! to discard).
//!
//! Pieces start at any byte of the payload, so the bytes pass through a 16-byte window: a beat
//! comes in at the window's fill and a beat leaves from its bottom, shifted by the bytes it
//! takes (at most eight). Both shifts are one of nine constant shifts chosen by registers (the
//! fill, the piece's remaining bytes); only the final choice between "a beat left" and "no
//! beat left" waits on the DMA port's ready. A beat is taken while the window will hold at
//! most eight bytes after this clock's beat leaves, so a piece streams one beat per clock at
//! any offset; `s_axis_tready` therefore follows `m_dma_wr_data_ready` through one gate, as
//! a pass-through would. The payload's beats are
//! full but its last (the receive path's `tkeep` is contiguous from lane 0), so bytes above
//! the fill are never read.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct PayloadScatter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The pieces, taken while idle.
    pub s_cmd_valid: Signal<In, Bit>,
    pub s_cmd_ready: Signal<Out, Bit>,
    pub s_cmd_addr0: Signal<In, Bits<64>>,
    pub s_cmd_len0: Signal<In, Bits<16>>,
    pub s_cmd_addr1: Signal<In, Bits<64>>,
    pub s_cmd_len1: Signal<In, Bits<16>>,
    pub s_cmd_addr2: Signal<In, Bits<64>>,
    pub s_cmd_len2: Signal<In, Bits<16>>,
    /// The payload.
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// The DMA port's write side ([`crate::dma_arbiter`]).
    pub m_dma_wr_req_valid: Signal<Out, Bit>,
    pub m_dma_wr_req_ready: Signal<In, Bit>,
    pub m_dma_wr_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_req_len: Signal<Out, Bits<16>>,
    pub m_dma_wr_data_valid: Signal<Out, Bit>,
    pub m_dma_wr_data_ready: Signal<In, Bit>,
    pub m_dma_wr_data: Signal<Out, Bits<64>>,
    pub m_dma_wr_data_keep: Signal<Out, Bits<8>>,
    pub m_dma_wr_data_last: Signal<Out, Bit>,
    pub m_dma_wr_done_valid: Signal<In, Bit>,
    pub m_dma_wr_done_err: Signal<In, Bit>,
    /// Every piece written (or refused).
    pub m_done_valid: Signal<Out, Bit>,
    pub m_done_ready: Signal<In, Bit>,
    pub m_done_err: Signal<Out, Bit>,
    pub m_done_tail: Signal<Out, Bit>,

    // 0 IDLE, 1 REQ (the current piece's write request), 2 DATA, 3 WAIT (the writes' dones).
    st: DFF<Bits<2>>,
    /// The pieces not yet written; the current one is always piece 0 (they shift down).
    a0: DFF<Bits<64>>,
    a1: DFF<Bits<64>>,
    a2: DFF<Bits<64>>,
    l0: DFF<Bits<16>>,
    l1: DFF<Bits<16>>,
    l2: DFF<Bits<16>>,
    left: DFF<Bits<2>>,
    /// The current piece's bytes not yet sent.
    rem: DFF<Bits<16>>,
    /// The byte window and its fill (0..=16).
    win: DFF<Bits<128>>,
    fill: DFF<Bits<5>>,
    /// The payload's last beat was taken.
    in_done: DFF<Bit>,
    /// Writes requested and not yet done; a refused one.
    outs: DFF<Bits<2>>,
    err: DFF<Bit>,

    take: Signal<Local, Bits<5>>,
    rem_gt8: Signal<Local, Bit>,
    can_emit: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    accept: Signal<Local, Bit>,
    in_n: Signal<Local, Bits<5>>,
    in_w: Signal<Local, Bits<128>>,
    fill_t: Signal<Local, Bits<5>>,
    /// The window less the beat leaving; the incoming beat at the fill, with and without one
    /// leaving.
    win_t: Signal<Local, Bits<128>>,
    in_at_fill: Signal<Local, Bits<128>>,
    in_at_fill_t: Signal<Local, Bits<128>>,
    req_fire: Signal<Local, Bit>,
    outs_up: Signal<Local, Bits<2>>,
    k_one2: Constant<Bits<2>>,
    k_three2: Constant<Bits<2>>,
    k_zero16: Constant<Bits<16>>,
    k_eight16: Constant<Bits<16>>,
    k_eight5: Constant<Bits<5>>,
}

impl Default for PayloadScatter {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_cmd_valid: Default::default(),
            s_cmd_ready: Default::default(),
            s_cmd_addr0: Default::default(),
            s_cmd_len0: Default::default(),
            s_cmd_addr1: Default::default(),
            s_cmd_len1: Default::default(),
            s_cmd_addr2: Default::default(),
            s_cmd_len2: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            m_dma_wr_req_valid: Default::default(),
            m_dma_wr_req_ready: Default::default(),
            m_dma_wr_req_addr: Default::default(),
            m_dma_wr_req_len: Default::default(),
            m_dma_wr_data_valid: Default::default(),
            m_dma_wr_data_ready: Default::default(),
            m_dma_wr_data: Default::default(),
            m_dma_wr_data_keep: Default::default(),
            m_dma_wr_data_last: Default::default(),
            m_dma_wr_done_valid: Default::default(),
            m_dma_wr_done_err: Default::default(),
            m_done_valid: Default::default(),
            m_done_ready: Default::default(),
            m_done_err: Default::default(),
            m_done_tail: Default::default(),
            st: Default::default(),
            a0: Default::default(),
            a1: Default::default(),
            a2: Default::default(),
            l0: Default::default(),
            l1: Default::default(),
            l2: Default::default(),
            left: Default::default(),
            rem: Default::default(),
            win: Default::default(),
            fill: Default::default(),
            in_done: Default::default(),
            outs: Default::default(),
            err: Default::default(),
            take: Default::default(),
            rem_gt8: Default::default(),
            can_emit: Default::default(),
            fire: Default::default(),
            accept: Default::default(),
            in_n: Default::default(),
            in_w: Default::default(),
            fill_t: Default::default(),
            win_t: Default::default(),
            in_at_fill: Default::default(),
            in_at_fill_t: Default::default(),
            req_fire: Default::default(),
            outs_up: Default::default(),
            k_one2: Constant::new(bits::<2>(1)),
            k_three2: Constant::new(bits::<2>(3)),
            k_zero16: Constant::new(bits::<16>(0)),
            k_eight16: Constant::new(bits::<16>(8)),
            k_eight5: Constant::new(bits::<5>(8)),
        }
    }
}

impl Logic for PayloadScatter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, a0, a1, a2, l0, l1, l2, left, rem, win, fill, in_done, outs, err
        );
        self.s_cmd_ready.next = false;
        self.s_axis_tready.next = false;
        self.m_dma_wr_req_valid.next = false;
        self.m_dma_wr_req_addr.next = self.a0.q.val();
        self.m_dma_wr_req_len.next = self.l0.q.val();
        self.m_done_valid.next = false;
        self.m_done_err.next = self.err.q.val();
        self.m_done_tail.next = self.in_done.q.val();

        // ---- The beat leaving: min(8, rem) bytes from the window's bottom.
        self.rem_gt8.next = self.rem.q.val() > self.k_eight16.val();
        self.take.next = self.k_eight5.val();
        if self.rem.q.val() < self.k_eight16.val() {
            self.take.next = bit_cast::<5, 16>(self.rem.q.val());
        }
        self.fill_t.next = self.fill.q.val() - self.take.val();
        self.can_emit.next = (self.st.q.val() == 2) & (self.fill.q.val() >= self.take.val());
        self.m_dma_wr_data_valid.next = self.can_emit.val();
        self.m_dma_wr_data.next = self.win.q.val().get_bits::<64>(0);
        self.m_dma_wr_data_last.next = !self.rem_gt8.val();
        self.m_dma_wr_data_keep.next = 255.into();
        if self.take.val() == 7 {
            self.m_dma_wr_data_keep.next = 127.into();
        }
        if self.take.val() == 6 {
            self.m_dma_wr_data_keep.next = 63.into();
        }
        if self.take.val() == 5 {
            self.m_dma_wr_data_keep.next = 31.into();
        }
        if self.take.val() == 4 {
            self.m_dma_wr_data_keep.next = 15.into();
        }
        if self.take.val() == 3 {
            self.m_dma_wr_data_keep.next = 7.into();
        }
        if self.take.val() == 2 {
            self.m_dma_wr_data_keep.next = 3.into();
        }
        if self.take.val() == 1 {
            self.m_dma_wr_data_keep.next = 1.into();
        }
        self.fire.next = self.can_emit.val() & self.m_dma_wr_data_ready.val();

        // ---- The beat arriving: taken while the window has room for it whatever leaves.
        // Only while a piece wants bytes: a command of no bytes takes no beat (the stream's
        // next beats may be another frame's).
        self.accept.next = ((self.st.q.val() == 2)
            | ((self.st.q.val() == 1)
                & self.left.q.val().any()
                & (self.l0.q.val() != self.k_zero16.val())))
            & !self.in_done.q.val()
            & ((self.fill.q.val() <= self.k_eight5.val())
                | (self.fire.val() & (self.fill_t.val() <= self.k_eight5.val())));
        self.s_axis_tready.next = self.accept.val();
        self.in_n.next = self.k_eight5.val();
        if self.s_axis_tlast.val() {
            self.in_n.next = 0.into();
            if self.s_axis_tkeep.val().get_bit(0) {
                self.in_n.next = 1.into();
            }
            if self.s_axis_tkeep.val().get_bit(1) {
                self.in_n.next = 2.into();
            }
            if self.s_axis_tkeep.val().get_bit(2) {
                self.in_n.next = 3.into();
            }
            if self.s_axis_tkeep.val().get_bit(3) {
                self.in_n.next = 4.into();
            }
            if self.s_axis_tkeep.val().get_bit(4) {
                self.in_n.next = 5.into();
            }
            if self.s_axis_tkeep.val().get_bit(5) {
                self.in_n.next = 6.into();
            }
            if self.s_axis_tkeep.val().get_bit(6) {
                self.in_n.next = 7.into();
            }
            if self.s_axis_tkeep.val().get_bit(7) {
                self.in_n.next = 8.into();
            }
        }
        self.in_w.next = bit_cast::<128, 64>(self.s_axis_tdata.val());

        // The window less `take` bytes, and the fill after it (registers only).
        self.win_t.next = self.win.q.val();
        if self.take.val() == 1 {
            self.win_t.next = self.win.q.val() >> 8;
        }
        if self.take.val() == 2 {
            self.win_t.next = self.win.q.val() >> 16;
        }
        if self.take.val() == 3 {
            self.win_t.next = self.win.q.val() >> 24;
        }
        if self.take.val() == 4 {
            self.win_t.next = self.win.q.val() >> 32;
        }
        if self.take.val() == 5 {
            self.win_t.next = self.win.q.val() >> 40;
        }
        if self.take.val() == 6 {
            self.win_t.next = self.win.q.val() >> 48;
        }
        if self.take.val() == 7 {
            self.win_t.next = self.win.q.val() >> 56;
        }
        if self.take.val() == 8 {
            self.win_t.next = self.win.q.val() >> 64;
        }
        // The arriving beat placed at the fill, and at the fill less `take`.
        self.in_at_fill.next = self.in_w.val();
        if self.fill.q.val() == 1 {
            self.in_at_fill.next = self.in_w.val() << 8;
        }
        if self.fill.q.val() == 2 {
            self.in_at_fill.next = self.in_w.val() << 16;
        }
        if self.fill.q.val() == 3 {
            self.in_at_fill.next = self.in_w.val() << 24;
        }
        if self.fill.q.val() == 4 {
            self.in_at_fill.next = self.in_w.val() << 32;
        }
        if self.fill.q.val() == 5 {
            self.in_at_fill.next = self.in_w.val() << 40;
        }
        if self.fill.q.val() == 6 {
            self.in_at_fill.next = self.in_w.val() << 48;
        }
        if self.fill.q.val() == 7 {
            self.in_at_fill.next = self.in_w.val() << 56;
        }
        if self.fill.q.val() == 8 {
            self.in_at_fill.next = self.in_w.val() << 64;
        }
        self.in_at_fill_t.next = self.in_w.val();
        if self.fill_t.val() == 1 {
            self.in_at_fill_t.next = self.in_w.val() << 8;
        }
        if self.fill_t.val() == 2 {
            self.in_at_fill_t.next = self.in_w.val() << 16;
        }
        if self.fill_t.val() == 3 {
            self.in_at_fill_t.next = self.in_w.val() << 24;
        }
        if self.fill_t.val() == 4 {
            self.in_at_fill_t.next = self.in_w.val() << 32;
        }
        if self.fill_t.val() == 5 {
            self.in_at_fill_t.next = self.in_w.val() << 40;
        }
        if self.fill_t.val() == 6 {
            self.in_at_fill_t.next = self.in_w.val() << 48;
        }
        if self.fill_t.val() == 7 {
            self.in_at_fill_t.next = self.in_w.val() << 56;
        }
        if self.fill_t.val() == 8 {
            self.in_at_fill_t.next = self.in_w.val() << 64;
        }

        self.win.d.next = self.win.q.val();
        self.fill.d.next = self.fill.q.val();
        if self.fire.val() {
            self.win.d.next = self.win_t.val();
            self.fill.d.next = self.fill_t.val();
            if self.accept.val() & self.s_axis_tvalid.val() {
                self.win.d.next = self.win_t.val() | self.in_at_fill_t.val();
                self.fill.d.next = self.fill_t.val() + self.in_n.val();
            }
        } else if self.accept.val() & self.s_axis_tvalid.val() {
            self.win.d.next = self.win.q.val() | self.in_at_fill.val();
            self.fill.d.next = self.fill.q.val() + self.in_n.val();
        }
        if self.accept.val() & self.s_axis_tvalid.val() & self.s_axis_tlast.val() {
            self.in_done.d.next = true;
        }

        // ---- The pieces.
        if self.st.q.val() == 0 {
            self.s_cmd_ready.next = true;
            if self.s_cmd_valid.val() {
                self.a0.d.next = self.s_cmd_addr0.val();
                self.a1.d.next = self.s_cmd_addr1.val();
                self.a2.d.next = self.s_cmd_addr2.val();
                self.l0.d.next = self.s_cmd_len0.val();
                self.l1.d.next = self.s_cmd_len1.val();
                self.l2.d.next = self.s_cmd_len2.val();
                self.left.d.next = self.k_three2.val();
                self.win.d.next = 0.into();
                self.fill.d.next = 0.into();
                self.in_done.d.next = false;
                self.err.d.next = false;
                self.st.d.next = 1.into();
            }
        }
        if self.st.q.val() == 1 {
            if !self.left.q.val().any() {
                self.st.d.next = 3.into();
            } else if self.l0.q.val() == self.k_zero16.val() {
                self.a0.d.next = self.a1.q.val();
                self.a1.d.next = self.a2.q.val();
                self.l0.d.next = self.l1.q.val();
                self.l1.d.next = self.l2.q.val();
                self.l2.d.next = 0.into();
                self.left.d.next = self.left.q.val() - self.k_one2.val();
            } else {
                self.m_dma_wr_req_valid.next = true;
                if self.m_dma_wr_req_ready.val() {
                    self.rem.d.next = self.l0.q.val();
                    self.st.d.next = 2.into();
                }
            }
        }
        // `fire` is only ever high in DATA.
        if self.fire.val() {
            self.rem.d.next = self.rem.q.val() - bit_cast::<16, 5>(self.take.val());
        }
        if self.fire.val() & !self.rem_gt8.val() {
            self.a0.d.next = self.a1.q.val();
            self.a1.d.next = self.a2.q.val();
            self.l0.d.next = self.l1.q.val();
            self.l1.d.next = self.l2.q.val();
            self.l2.d.next = 0.into();
            self.left.d.next = self.left.q.val() - self.k_one2.val();
            self.st.d.next = 1.into();
        }
        if (self.st.q.val() == 3) & !self.outs.q.val().any() {
            self.m_done_valid.next = true;
            if self.m_done_ready.val() {
                self.st.d.next = 0.into();
            }
        }
        // ---- Writes requested and done.
        self.req_fire.next = self.m_dma_wr_req_valid.val() & self.m_dma_wr_req_ready.val();
        self.outs_up.next = self.outs.q.val();
        if self.req_fire.val() {
            self.outs_up.next = self.outs.q.val() + self.k_one2.val();
        }
        self.outs.d.next = self.outs_up.val();
        if self.m_dma_wr_done_valid.val() {
            self.outs.d.next = self.outs_up.val() - self.k_one2.val();
            if self.m_dma_wr_done_err.val() {
                self.err.d.next = true;
            }
        }

        if self.reset.val() {
            self.st.d.next = 0.into();
            self.outs.d.next = 0.into();
        }
    }
}
