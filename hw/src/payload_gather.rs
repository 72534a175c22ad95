//! A packet's payload read from host memory across a send work request's scatter/gather
//! entries: the requester's DMA reads, the transport model's `gather`.
//!
//! A command names the entries (`s_cmd_addr*` device addresses at any byte, `s_cmd_len*`
//! their lengths; an entry past the request's `NUM_SGE` has length 0) and the part of the
//! message the packet carries (`s_cmd_off`, `s_cmd_take` bytes, inside the message). The
//! engine walks the entries as the model does: an entry wholly before `off` is skipped, the
//! next ones give a piece each (from `off`'s byte in the first, from their start in the
//! others) until `take` bytes are covered. Each piece is one read on the DMA port (from its
//! address rounded down to eight bytes, so its first beat may start with bytes before the
//! piece), issued as soon as the walk reaches it. The data beats come back in request order;
//! each beat's bytes of its piece are appended to a window at a byte pointer, and every eight
//! bytes leave as a beat on `m_axis_*`, packed from the payload's first byte, the last one
//! with `tlast` and `tkeep` covering the payload's last bytes. `tuser` on the last beat marks
//! a payload a read of which the host refused.
//!
//! The walk takes four clocks per entry it reaches (compare, choose, size, issue), once per
//! packet, while the reads' data is still on its way. A command with `take` 0 is taken and
//! nothing happens (a packet without payload has no stream). The caller issues a command only
//! when it has room for the whole payload behind `m_axis_*` (the DMA port's read data
//! channel is shared, `crate::dma_arbiter`): `m_axis_tready` low stalls the reads' data.
//!
//! The append: a beat's bytes `s .. e` (its piece's first byte on the piece's first beat, the
//! piece's end on its last) go to the window from the pointer `pos` on. The beat is rotated
//! by `pos - s` lanes (an AND-OR of eight fixed shifts by a registered amount): lanes below
//! `pos` keep the window's bytes, the rest take the rotated beat's; when `pos + e - s`
//! reaches eight the window leaves as a beat and the rotated beat's lanes below the new
//! pointer are the new window.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct PayloadGather {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The entries and the packet's part of the message, taken while idle.
    pub s_cmd_valid: Signal<In, Bit>,
    pub s_cmd_ready: Signal<Out, Bit>,
    pub s_cmd_addr0: Signal<In, Bits<64>>,
    pub s_cmd_len0: Signal<In, Bits<32>>,
    pub s_cmd_addr1: Signal<In, Bits<64>>,
    pub s_cmd_len1: Signal<In, Bits<32>>,
    pub s_cmd_addr2: Signal<In, Bits<64>>,
    pub s_cmd_len2: Signal<In, Bits<32>>,
    pub s_cmd_addr3: Signal<In, Bits<64>>,
    pub s_cmd_len3: Signal<In, Bits<32>>,
    pub s_cmd_off: Signal<In, Bits<32>>,
    pub s_cmd_take: Signal<In, Bits<16>>,
    /// The DMA port's read side ([`crate::dma_arbiter`]): 8-byte-aligned reads, data in
    /// request order.
    pub m_dma_rd_req_valid: Signal<Out, Bit>,
    pub m_dma_rd_req_ready: Signal<In, Bit>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_data_valid: Signal<In, Bit>,
    pub m_dma_rd_data_ready: Signal<Out, Bit>,
    pub m_dma_rd_data: Signal<In, Bits<64>>,
    pub m_dma_rd_data_last: Signal<In, Bit>,
    pub m_dma_rd_data_err: Signal<In, Bit>,
    /// The payload.
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,

    // ---- The command.
    e_addr0: DFF<Bits<64>>,
    e_len0: DFF<Bits<32>>,
    e_addr1: DFF<Bits<64>>,
    e_len1: DFF<Bits<32>>,
    e_addr2: DFF<Bits<64>>,
    e_len2: DFF<Bits<32>>,
    e_addr3: DFF<Bits<64>>,
    e_len3: DFF<Bits<32>>,
    // ---- The walk: 0 idle, 1 compare, 2 choose, 3 size, 4 issue.
    w_st: DFF<Bits<3>>,
    w_i: DFF<Bits<2>>,
    w_skip: DFF<Bits<32>>,
    w_left: DFF<Bits<16>>,
    w_len: DFF<Bits<32>>,
    w_addr: DFF<Bits<64>>,
    w_before: DFF<Bit>,
    w_avail: DFF<Bits<32>>,
    w_t: DFF<Bits<16>>,
    w_rlen: DFF<Bits<16>>,
    w_end: DFF<Bits<3>>,
    w_rest: DFF<Bits<16>>,
    /// The pieces issued, for the data side: first lane, end lane (0: the whole last beat),
    /// and whether the piece ends the payload; written at issue `wq`, read at `dq`.
    p_lo0: DFF<Bits<3>>,
    p_end0: DFF<Bits<3>>,
    p_fin0: DFF<Bit>,
    p_lo1: DFF<Bits<3>>,
    p_end1: DFF<Bits<3>>,
    p_fin1: DFF<Bit>,
    p_lo2: DFF<Bits<3>>,
    p_end2: DFF<Bits<3>>,
    p_fin2: DFF<Bit>,
    p_lo3: DFF<Bits<3>>,
    p_end3: DFF<Bits<3>>,
    p_fin3: DFF<Bit>,
    wq: DFF<Bits<2>>,
    dq: DFF<Bits<2>>,
    // ---- The data side.
    busy: DFF<Bit>,
    d_first: DFF<Bit>,
    pos: DFF<Bits<3>>,
    win: DFF<Bits<64>>,
    bad: DFF<Bit>,
    flush: DFF<Bit>,
    o_data: DFF<Bits<64>>,
    o_keep: DFF<Bits<8>>,
    o_last: DFF<Bit>,
    o_user: DFF<Bit>,
    o_v: DFF<Bit>,
    // ---- Locals.
    take: Signal<Local, Bit>,
    l_len: Signal<Local, Bits<32>>,
    l_addr: Signal<Local, Bits<64>>,
    l_lo: Signal<Local, Bits<3>>,
    l_endp: Signal<Local, Bits<3>>,
    l_fin: Signal<Local, Bit>,
    l_s: Signal<Local, Bits<4>>,
    l_e: Signal<Local, Bits<4>>,
    l_c: Signal<Local, Bits<4>>,
    l_sum: Signal<Local, Bits<4>>,
    l_r: Signal<Local, Bits<3>>,
    l_rot: Signal<Local, Bits<64>>,
    l_keep_lo: Signal<Local, Bits<64>>,
    l_low: Signal<Local, Bits<64>>,
    l_out_free: Signal<Local, Bit>,
    l_beat: Signal<Local, Bit>,
    l_done: Signal<Local, Bit>,
    l_pos3: Signal<Local, Bits<3>>,
    l_sum16: Signal<Local, Bits<16>>,
    l_alo: Signal<Local, Bits<3>>,
    l_fkeep: Signal<Local, Bits<8>>,
    k_one2: Constant<Bits<2>>,
    k_seven16: Constant<Bits<16>>,
    k_eight4: Constant<Bits<4>>,
    k_align: Constant<Bits<64>>,
    k_full8: Constant<Bits<8>>,
    k_lanes1: Constant<Bits<64>>,
    k_keeps1: Constant<Bits<8>>,
    k_lanes2: Constant<Bits<64>>,
    k_keeps2: Constant<Bits<8>>,
    k_lanes3: Constant<Bits<64>>,
    k_keeps3: Constant<Bits<8>>,
    k_lanes4: Constant<Bits<64>>,
    k_keeps4: Constant<Bits<8>>,
    k_lanes5: Constant<Bits<64>>,
    k_keeps5: Constant<Bits<8>>,
    k_lanes6: Constant<Bits<64>>,
    k_keeps6: Constant<Bits<8>>,
    k_lanes7: Constant<Bits<64>>,
    k_keeps7: Constant<Bits<8>>,
}

impl Default for PayloadGather {
    fn default() -> Self {
        PayloadGather {
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
            s_cmd_addr3: Default::default(),
            s_cmd_len3: Default::default(),
            s_cmd_off: Default::default(),
            s_cmd_take: Default::default(),
            m_dma_rd_req_valid: Default::default(),
            m_dma_rd_req_ready: Default::default(),
            m_dma_rd_req_addr: Default::default(),
            m_dma_rd_req_len: Default::default(),
            m_dma_rd_data_valid: Default::default(),
            m_dma_rd_data_ready: Default::default(),
            m_dma_rd_data: Default::default(),
            m_dma_rd_data_last: Default::default(),
            m_dma_rd_data_err: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            e_addr0: Default::default(),
            e_len0: Default::default(),
            e_addr1: Default::default(),
            e_len1: Default::default(),
            e_addr2: Default::default(),
            e_len2: Default::default(),
            e_addr3: Default::default(),
            e_len3: Default::default(),
            w_st: Default::default(),
            w_i: Default::default(),
            w_skip: Default::default(),
            w_left: Default::default(),
            w_len: Default::default(),
            w_addr: Default::default(),
            w_before: Default::default(),
            w_avail: Default::default(),
            w_t: Default::default(),
            w_rlen: Default::default(),
            w_end: Default::default(),
            w_rest: Default::default(),
            p_lo0: Default::default(),
            p_end0: Default::default(),
            p_fin0: Default::default(),
            p_lo1: Default::default(),
            p_end1: Default::default(),
            p_fin1: Default::default(),
            p_lo2: Default::default(),
            p_end2: Default::default(),
            p_fin2: Default::default(),
            p_lo3: Default::default(),
            p_end3: Default::default(),
            p_fin3: Default::default(),
            wq: Default::default(),
            dq: Default::default(),
            busy: Default::default(),
            d_first: Default::default(),
            pos: Default::default(),
            win: Default::default(),
            bad: Default::default(),
            flush: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            o_user: Default::default(),
            o_v: Default::default(),
            take: Default::default(),
            l_len: Default::default(),
            l_addr: Default::default(),
            l_lo: Default::default(),
            l_endp: Default::default(),
            l_fin: Default::default(),
            l_s: Default::default(),
            l_e: Default::default(),
            l_c: Default::default(),
            l_sum: Default::default(),
            l_r: Default::default(),
            l_rot: Default::default(),
            l_keep_lo: Default::default(),
            l_low: Default::default(),
            l_out_free: Default::default(),
            l_beat: Default::default(),
            l_done: Default::default(),
            l_pos3: Default::default(),
            l_sum16: Default::default(),
            l_alo: Default::default(),
            l_fkeep: Default::default(),
            k_one2: Constant::new(bits::<2>(1)),
            k_seven16: Constant::new(bits::<16>(7)),
            k_eight4: Constant::new(bits::<4>(8)),
            k_align: Constant::new(bits::<64>(!7u64)),
            k_full8: Constant::new(bits::<8>(0xFF)),
            // Lanes below n: the window's bytes that stay; the keep of n bytes.
            k_lanes1: Constant::new(bits::<64>((1u64 << 8) - 1)),
            k_keeps1: Constant::new(bits::<8>((1u64 << 1) - 1)),
            k_lanes2: Constant::new(bits::<64>((1u64 << 16) - 1)),
            k_keeps2: Constant::new(bits::<8>((1u64 << 2) - 1)),
            k_lanes3: Constant::new(bits::<64>((1u64 << 24) - 1)),
            k_keeps3: Constant::new(bits::<8>((1u64 << 3) - 1)),
            k_lanes4: Constant::new(bits::<64>((1u64 << 32) - 1)),
            k_keeps4: Constant::new(bits::<8>((1u64 << 4) - 1)),
            k_lanes5: Constant::new(bits::<64>((1u64 << 40) - 1)),
            k_keeps5: Constant::new(bits::<8>((1u64 << 5) - 1)),
            k_lanes6: Constant::new(bits::<64>((1u64 << 48) - 1)),
            k_keeps6: Constant::new(bits::<8>((1u64 << 6) - 1)),
            k_lanes7: Constant::new(bits::<64>((1u64 << 56) - 1)),
            k_keeps7: Constant::new(bits::<8>((1u64 << 7) - 1)),
        }
    }
}

impl Logic for PayloadGather {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, e_addr0, e_len0, e_addr1, e_len1, e_addr2, e_len2, e_addr3, e_len3, w_st,
            w_i, w_skip, w_left, w_len, w_addr, w_before, w_avail, w_t, w_rlen, w_end, w_rest,
            p_lo0, p_end0, p_fin0, p_lo1, p_end1, p_fin1, p_lo2, p_end2, p_fin2, p_lo3, p_end3,
            p_fin3, wq, dq, busy, d_first, pos, win, bad, flush, o_data, o_keep, o_last, o_user,
            o_v
        );
        self.p_lo0.d.next = self.p_lo0.q.val();
        self.p_end0.d.next = self.p_end0.q.val();
        self.p_fin0.d.next = self.p_fin0.q.val();
        self.p_lo1.d.next = self.p_lo1.q.val();
        self.p_end1.d.next = self.p_end1.q.val();
        self.p_fin1.d.next = self.p_fin1.q.val();
        self.p_lo2.d.next = self.p_lo2.q.val();
        self.p_end2.d.next = self.p_end2.q.val();
        self.p_fin2.d.next = self.p_fin2.q.val();
        self.p_lo3.d.next = self.p_lo3.q.val();
        self.p_end3.d.next = self.p_end3.q.val();
        self.p_fin3.d.next = self.p_fin3.q.val();

        // ---- The command: taken while nothing is under way.
        self.s_cmd_ready.next = !self.busy.q.val() & (self.w_st.q.val() == 0);
        self.take.next = self.s_cmd_valid.val() & !self.busy.q.val() & (self.w_st.q.val() == 0);
        self.e_addr0.d.next = self.e_addr0.q.val();
        self.e_len0.d.next = self.e_len0.q.val();
        self.e_addr1.d.next = self.e_addr1.q.val();
        self.e_len1.d.next = self.e_len1.q.val();
        self.e_addr2.d.next = self.e_addr2.q.val();
        self.e_len2.d.next = self.e_len2.q.val();
        self.e_addr3.d.next = self.e_addr3.q.val();
        self.e_len3.d.next = self.e_len3.q.val();
        self.w_st.d.next = self.w_st.q.val();
        self.w_i.d.next = self.w_i.q.val();
        self.w_skip.d.next = self.w_skip.q.val();
        self.w_left.d.next = self.w_left.q.val();
        self.busy.d.next = self.busy.q.val();
        if self.take.val() {
            self.e_addr0.d.next = self.s_cmd_addr0.val();
            self.e_len0.d.next = self.s_cmd_len0.val();
            self.e_addr1.d.next = self.s_cmd_addr1.val();
            self.e_len1.d.next = self.s_cmd_len1.val();
            self.e_addr2.d.next = self.s_cmd_addr2.val();
            self.e_len2.d.next = self.s_cmd_len2.val();
            self.e_addr3.d.next = self.s_cmd_addr3.val();
            self.e_len3.d.next = self.s_cmd_len3.val();
            self.w_i.d.next = 0.into();
            self.w_skip.d.next = self.s_cmd_off.val();
            self.w_left.d.next = self.s_cmd_take.val();
            if self.s_cmd_take.val() != 0 {
                self.w_st.d.next = 1.into();
                self.busy.d.next = true;
            }
        }

        // ---- The walk.
        self.l_len.next = self.e_len0.q.val();
        self.l_addr.next = self.e_addr0.q.val();
        if self.w_i.q.val() == 1 {
            self.l_len.next = self.e_len1.q.val();
            self.l_addr.next = self.e_addr1.q.val();
        }
        if self.w_i.q.val() == 2 {
            self.l_len.next = self.e_len2.q.val();
            self.l_addr.next = self.e_addr2.q.val();
        }
        if self.w_i.q.val() == 3 {
            self.l_len.next = self.e_len3.q.val();
            self.l_addr.next = self.e_addr3.q.val();
        }
        self.w_len.d.next = self.w_len.q.val();
        self.w_addr.d.next = self.w_addr.q.val();
        self.w_before.d.next = self.w_before.q.val();
        self.w_avail.d.next = self.w_avail.q.val();
        self.w_t.d.next = self.w_t.q.val();
        self.w_rlen.d.next = self.w_rlen.q.val();
        self.w_end.d.next = self.w_end.q.val();
        self.w_rest.d.next = self.w_rest.q.val();
        self.wq.d.next = self.wq.q.val();
        self.m_dma_rd_req_valid.next = false;
        self.m_dma_rd_req_addr.next = self.w_addr.q.val() & self.k_align.val();
        self.m_dma_rd_req_len.next = self.w_rlen.q.val();
        self.l_alo.next = self.w_addr.q.val().get_bits::<3>(0);
        self.l_sum16.next = 0.into();
        match self.w_st.q.val().index() {
            1 => {
                // Compare: is the entry wholly before the packet's part?
                self.w_len.d.next = self.l_len.val();
                self.w_before.d.next = self.w_skip.q.val() >= self.l_len.val();
                self.w_avail.d.next = self.l_len.val() - self.w_skip.q.val();
                self.w_addr.d.next = self.l_addr.val() + bit_cast::<64, 32>(self.w_skip.q.val());
                self.w_st.d.next = 2.into();
            }
            2 => {
                // Choose: skip the entry, or take what it has up to what is left.
                if self.w_before.q.val() {
                    self.w_skip.d.next = self.w_skip.q.val() - self.w_len.q.val();
                    self.w_i.d.next = self.w_i.q.val() + self.k_one2.val();
                    self.w_st.d.next = 1.into();
                } else {
                    self.w_t.d.next = self.w_left.q.val();
                    if self.w_avail.q.val() < bit_cast::<32, 16>(self.w_left.q.val()) {
                        self.w_t.d.next = self.w_avail.q.val().get_bits::<16>(0);
                    }
                    self.w_st.d.next = 3.into();
                }
            }
            3 => {
                // Size: the read from the piece's first byte's lane, where its last byte
                // ends, what is left after it.
                self.l_sum16.next = bit_cast::<16, 3>(self.l_alo.val()) + self.w_t.q.val();
                self.w_rlen.d.next = self.l_sum16.val();
                self.w_end.d.next = self.l_sum16.val().get_bits::<3>(0);
                self.w_rest.d.next = self.w_left.q.val() - self.w_t.q.val();
                self.w_st.d.next = 4.into();
            }
            4 => {
                // Issue: the read, and the piece for the data side.
                self.m_dma_rd_req_valid.next = true;
                if self.m_dma_rd_req_ready.val() {
                    if self.wq.q.val() == 0 {
                        self.p_lo0.d.next = self.l_alo.val();
                        self.p_end0.d.next = self.w_end.q.val();
                        self.p_fin0.d.next = self.w_rest.q.val() == 0;
                    }
                    if self.wq.q.val() == 1 {
                        self.p_lo1.d.next = self.l_alo.val();
                        self.p_end1.d.next = self.w_end.q.val();
                        self.p_fin1.d.next = self.w_rest.q.val() == 0;
                    }
                    if self.wq.q.val() == 2 {
                        self.p_lo2.d.next = self.l_alo.val();
                        self.p_end2.d.next = self.w_end.q.val();
                        self.p_fin2.d.next = self.w_rest.q.val() == 0;
                    }
                    if self.wq.q.val() == 3 {
                        self.p_lo3.d.next = self.l_alo.val();
                        self.p_end3.d.next = self.w_end.q.val();
                        self.p_fin3.d.next = self.w_rest.q.val() == 0;
                    }
                    self.wq.d.next = self.wq.q.val() + self.k_one2.val();
                    self.w_left.d.next = self.w_rest.q.val();
                    self.w_skip.d.next = 0.into();
                    self.w_i.d.next = self.w_i.q.val() + self.k_one2.val();
                    self.w_st.d.next = 1.into();
                    if self.w_rest.q.val() == 0 {
                        self.w_st.d.next = 0.into();
                    }
                }
            }
            _ => {}
        }

        // ---- The data side: the current piece's lanes.
        self.l_lo.next = self.p_lo0.q.val();
        self.l_endp.next = self.p_end0.q.val();
        self.l_fin.next = self.p_fin0.q.val();
        if self.dq.q.val() == 1 {
            self.l_lo.next = self.p_lo1.q.val();
            self.l_endp.next = self.p_end1.q.val();
            self.l_fin.next = self.p_fin1.q.val();
        }
        if self.dq.q.val() == 2 {
            self.l_lo.next = self.p_lo2.q.val();
            self.l_endp.next = self.p_end2.q.val();
            self.l_fin.next = self.p_fin2.q.val();
        }
        if self.dq.q.val() == 3 {
            self.l_lo.next = self.p_lo3.q.val();
            self.l_endp.next = self.p_end3.q.val();
            self.l_fin.next = self.p_fin3.q.val();
        }
        self.l_s.next = 0.into();
        if self.d_first.q.val() {
            self.l_s.next = bit_cast::<4, 3>(self.l_lo.val());
        }
        self.l_e.next = self.k_eight4.val();
        if self.m_dma_rd_data_last.val() & (self.l_endp.val() != 0) {
            self.l_e.next = bit_cast::<4, 3>(self.l_endp.val());
        }
        self.l_c.next = self.l_e.val() - self.l_s.val();
        self.l_sum.next = bit_cast::<4, 3>(self.pos.q.val()) + self.l_c.val();
        self.l_r.next = self.pos.q.val() - self.l_s.val().get_bits::<3>(0);
        // The beat rotated left by r lanes: byte i to lane (i + r) mod 8.
        self.l_rot.next = self.m_dma_rd_data.val();
        match self.l_r.val().index() {
            1 => {
                self.l_rot.next =
                    (self.m_dma_rd_data.val() << 8) | (self.m_dma_rd_data.val() >> 56);
            }
            2 => {
                self.l_rot.next =
                    (self.m_dma_rd_data.val() << 16) | (self.m_dma_rd_data.val() >> 48);
            }
            3 => {
                self.l_rot.next =
                    (self.m_dma_rd_data.val() << 24) | (self.m_dma_rd_data.val() >> 40);
            }
            4 => {
                self.l_rot.next =
                    (self.m_dma_rd_data.val() << 32) | (self.m_dma_rd_data.val() >> 32);
            }
            5 => {
                self.l_rot.next =
                    (self.m_dma_rd_data.val() << 40) | (self.m_dma_rd_data.val() >> 24);
            }
            6 => {
                self.l_rot.next =
                    (self.m_dma_rd_data.val() << 48) | (self.m_dma_rd_data.val() >> 16);
            }
            7 => {
                self.l_rot.next =
                    (self.m_dma_rd_data.val() << 56) | (self.m_dma_rd_data.val() >> 8);
            }
            _ => {}
        }
        self.l_keep_lo.next = 0.into();
        self.l_fkeep.next = 0.into();
        match self.pos.q.val().index() {
            1 => {
                self.l_keep_lo.next = self.k_lanes1.val();
                self.l_fkeep.next = self.k_keeps1.val();
            }
            2 => {
                self.l_keep_lo.next = self.k_lanes2.val();
                self.l_fkeep.next = self.k_keeps2.val();
            }
            3 => {
                self.l_keep_lo.next = self.k_lanes3.val();
                self.l_fkeep.next = self.k_keeps3.val();
            }
            4 => {
                self.l_keep_lo.next = self.k_lanes4.val();
                self.l_fkeep.next = self.k_keeps4.val();
            }
            5 => {
                self.l_keep_lo.next = self.k_lanes5.val();
                self.l_fkeep.next = self.k_keeps5.val();
            }
            6 => {
                self.l_keep_lo.next = self.k_lanes6.val();
                self.l_fkeep.next = self.k_keeps6.val();
            }
            7 => {
                self.l_keep_lo.next = self.k_lanes7.val();
                self.l_fkeep.next = self.k_keeps7.val();
            }
            _ => {}
        }
        self.l_low.next =
            (self.win.q.val() & self.l_keep_lo.val()) | (self.l_rot.val() & !self.l_keep_lo.val());
        self.l_pos3.next = self.l_sum.val().get_bits::<3>(0);

        self.l_out_free.next = !self.o_v.q.val() | self.m_axis_tready.val();
        // Read data comes only for reads this engine issued, so busy is all the gate it needs.
        self.m_dma_rd_data_ready.next =
            self.busy.q.val() & !self.flush.q.val() & self.l_out_free.val();
        self.l_beat.next = self.m_dma_rd_data_valid.val()
            & self.busy.q.val()
            & !self.flush.q.val()
            & self.l_out_free.val();
        self.l_done.next = self.l_beat.val() & self.m_dma_rd_data_last.val() & self.l_fin.val();

        self.dq.d.next = self.dq.q.val();
        self.d_first.d.next = self.d_first.q.val();
        self.pos.d.next = self.pos.q.val();
        self.win.d.next = self.win.q.val();
        self.bad.d.next = self.bad.q.val();
        self.flush.d.next = self.flush.q.val();
        if self.take.val() {
            self.wq.d.next = 0.into();
            self.dq.d.next = 0.into();
            self.d_first.d.next = true;
            self.pos.d.next = 0.into();
            self.bad.d.next = false;
            self.flush.d.next = false;
        }

        // ---- The output register.
        self.o_data.d.next = self.o_data.q.val();
        self.o_keep.d.next = self.o_keep.q.val();
        self.o_last.d.next = self.o_last.q.val();
        self.o_user.d.next = self.o_user.q.val();
        self.o_v.d.next = self.o_v.q.val() & !self.m_axis_tready.val();

        if self.l_beat.val() {
            self.d_first.d.next = self.m_dma_rd_data_last.val();
            if self.m_dma_rd_data_last.val() {
                self.dq.d.next = self.dq.q.val() + self.k_one2.val();
            }
            self.bad.d.next = self.bad.q.val() | self.m_dma_rd_data_err.val();
            self.pos.d.next = self.l_pos3.val();
            if self.l_sum.val() >= self.k_eight4.val() {
                // The window is full: it leaves, the rotated beat's rest stays.
                self.win.d.next = self.l_rot.val();
                self.o_data.d.next = self.l_low.val();
                self.o_keep.d.next = self.k_full8.val();
                self.o_last.d.next = self.l_done.val() & (self.l_pos3.val() == 0);
                self.o_user.d.next = self.bad.q.val() | self.m_dma_rd_data_err.val();
                self.o_v.d.next = true;
                if self.l_done.val() {
                    if self.l_pos3.val() == 0 {
                        self.busy.d.next = false;
                    } else {
                        self.flush.d.next = true;
                    }
                }
            } else {
                self.win.d.next = self.l_low.val();
                if self.l_done.val() {
                    self.flush.d.next = true;
                }
            }
        }
        if self.flush.q.val() & self.l_out_free.val() {
            // The payload's last bytes.
            self.o_data.d.next = self.win.q.val();
            self.o_keep.d.next = self.l_fkeep.val();
            self.o_last.d.next = true;
            self.o_user.d.next = self.bad.q.val();
            self.o_v.d.next = true;
            self.flush.d.next = false;
            self.busy.d.next = false;
            self.pos.d.next = 0.into();
        }
        self.m_axis_tdata.next = self.o_data.q.val();
        self.m_axis_tkeep.next = self.o_keep.q.val();
        self.m_axis_tlast.next = self.o_last.q.val();
        self.m_axis_tuser.next = self.o_user.q.val();
        self.m_axis_tvalid.next = self.o_v.q.val();

        if self.reset.val() {
            self.w_st.d.next = 0.into();
            self.busy.d.next = false;
            self.flush.d.next = false;
            self.o_v.d.next = false;
            self.wq.d.next = 0.into();
        }
    }
}
