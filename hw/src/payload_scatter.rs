//! A payload stream written to host memory in up to four pieces: the responder's DMA writes
//! (a WRITE's payload where its VA falls, a SEND's across the receive request's three
//! scatter/gather entries) and the completer's (a READ response's across the READ's four).
//!
//! A command names the pieces (`s_cmd_addr*` a device address at any byte, `s_cmd_len*`
//! bytes; a piece of length 0 is skipped); the payload's bytes go to them in order, piece 0
//! first. For each piece the engine issues one write on the DMA port (request, then its data
//! beats, the last one marked and its `keep` covering the piece's last bytes), then the next;
//! when every write is done it reports on `m_done_*`: `err` if the host refused any of them,
//! `tail` if it took the payload's last beat (if not, the rest of the payload is the caller's
//! to discard).
//!
//! Pieces start at any byte of the payload, so the beats pass through a window (`lo`, `hi`)
//! and a byte pointer into `lo`: a beat leaving is the eight bytes from the pointer on (`hi`
//! only when they reach into it), chosen by the pointer, a register, as an AND-OR of eight
//! fixed shifts. A beat leaving moves the pointer by the bytes it takes (eight but at a
//! piece's end); passing the end of `lo` moves `hi` down, and a third beat (`nx`) behind it.
//! A beat arrives into the first free slot after that move, so a piece streams one beat per
//! clock at any offset. The third slot is there so that `s_axis_tready` comes from registers
//! only (`nx` empty, the state), not from the DMA port's ready through the window's logic:
//! with two slots the input had to wait on the beat leaving, and that path (the window's
//! valid bits -> the beat leaving -> the input's handshake -> the valid bits, across the 128
//! data bits' enables) set Fmax at 113.6 MHz on the 1024-row responder path (seed 1 of
//! `rnic build --core-only --top responder_path_1k --part LFE5UM5G-85F-8 --freq 125
//! --seeds 3`). The report leaves straight from the last write's done.
//!
//! A piece's write is requested only once its bytes are at hand (a beat in the window, or the
//! payload all in): the DMA port grants a write with its whole burst, and the responder's and
//! the completer's payloads come down one receive stream in packet order, so a write granted
//! before its bytes arrived could wait on a payload queued ahead of them, whose own write
//! waits for the port (both NICs of `rc_nic`'s two-NIC test stopped so).

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
    pub s_cmd_addr3: Signal<In, Bits<64>>,
    pub s_cmd_len3: Signal<In, Bits<16>>,
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
    a3: DFF<Bits<64>>,
    l0: DFF<Bits<16>>,
    l1: DFF<Bits<16>>,
    l2: DFF<Bits<16>>,
    l3: DFF<Bits<16>>,
    /// `l0 != 0`, kept beside it: the beat arriving (`want`) waits on a register, not on a
    /// 16-bit compare.
    l0_nz: DFF<Bit>,
    /// The current piece's bytes not yet sent, and the next beat's bytes (min(8, rem)) and
    /// whether it is the piece's last, kept beside it as registers.
    rem: DFF<Bits<16>>,
    take: DFF<Bits<4>>,
    lastb: DFF<Bit>,
    /// The window: two beats and the byte pointer into `lo`; a third beat behind them
    /// (valid bits in order: `nx_v` implies `hi_v` implies `lo_v`).
    lo: DFF<Bits<64>>,
    hi: DFF<Bits<64>>,
    nx: DFF<Bits<64>>,
    lo_v: DFF<Bit>,
    hi_v: DFF<Bit>,
    nx_v: DFF<Bit>,
    ptr: DFF<Bits<3>>,
    /// The payload's last beat was taken.
    in_done: DFF<Bit>,
    /// Piece 0 is written: REQ moves the pieces down first (there, not as the piece's last
    /// beat leaves, which would hang 320 piece bits on that beat's handshake).
    used: DFF<Bit>,
    /// Writes requested and not yet done; a refused one.
    outs: DFF<Bits<3>>,
    err: DFF<Bit>,

    /// `ptr + take` and whether it passes the end of `lo`, kept beside them as registers:
    /// the beat's handshake (`fire`, then `s_axis_tready`) starts at a flip-flop, not at an
    /// adder and a compare.
    pt: DFF<Bits<4>>,
    need_hi: DFF<Bit>,
    wraps: Signal<Local, Bit>,
    /// The pointer's and `take`'s next values, from which `pt` and `need_hi` are kept.
    ptr_nx: Signal<Local, Bits<3>>,
    take_nx: Signal<Local, Bits<4>>,
    pt_nx: Signal<Local, Bits<4>>,
    can_emit: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    shift: Signal<Local, Bit>,
    want: Signal<Local, Bit>,
    accept: Signal<Local, Bit>,
    take_in: Signal<Local, Bit>,
    /// Rotations of the window, one per pointer value, and the pointer's one-hot masks.
    rot1: Signal<Local, Bits<64>>,
    rot2: Signal<Local, Bits<64>>,
    rot3: Signal<Local, Bits<64>>,
    rot4: Signal<Local, Bits<64>>,
    rot5: Signal<Local, Bits<64>>,
    rot6: Signal<Local, Bits<64>>,
    rot7: Signal<Local, Bits<64>>,
    m0: Signal<Local, Bits<64>>,
    m1: Signal<Local, Bits<64>>,
    m2: Signal<Local, Bits<64>>,
    m3: Signal<Local, Bits<64>>,
    m4: Signal<Local, Bits<64>>,
    m5: Signal<Local, Bits<64>>,
    m6: Signal<Local, Bits<64>>,
    m7: Signal<Local, Bits<64>>,
    rem_next: Signal<Local, Bits<16>>,
    /// The piece a write request is for: the command's first (from IDLE) or piece 0.
    req_len: Signal<Local, Bits<16>>,
    req_fire: Signal<Local, Bit>,
    rest_empty: Signal<Local, Bit>,
    outs_up: Signal<Local, Bits<3>>,
    k_one3: Constant<Bits<3>>,
    k_zero16: Constant<Bits<16>>,
    k_eight16: Constant<Bits<16>>,
    k_eight4: Constant<Bits<4>>,
    k_ones64: Constant<Bits<64>>,
    k_zero64: Constant<Bits<64>>,
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
            s_cmd_addr3: Default::default(),
            s_cmd_len3: Default::default(),
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
            a3: Default::default(),
            l0: Default::default(),
            l1: Default::default(),
            l2: Default::default(),
            l3: Default::default(),
            l0_nz: Default::default(),
            rem: Default::default(),
            take: Default::default(),
            lastb: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            nx: Default::default(),
            lo_v: Default::default(),
            hi_v: Default::default(),
            nx_v: Default::default(),
            ptr: Default::default(),
            in_done: Default::default(),
            used: Default::default(),
            outs: Default::default(),
            err: Default::default(),
            pt: Default::default(),
            wraps: Default::default(),
            need_hi: Default::default(),
            ptr_nx: Default::default(),
            take_nx: Default::default(),
            pt_nx: Default::default(),
            can_emit: Default::default(),
            fire: Default::default(),
            shift: Default::default(),
            want: Default::default(),
            accept: Default::default(),
            take_in: Default::default(),
            rot1: Default::default(),
            rot2: Default::default(),
            rot3: Default::default(),
            rot4: Default::default(),
            rot5: Default::default(),
            rot6: Default::default(),
            rot7: Default::default(),
            m0: Default::default(),
            m1: Default::default(),
            m2: Default::default(),
            m3: Default::default(),
            m4: Default::default(),
            m5: Default::default(),
            m6: Default::default(),
            m7: Default::default(),
            rem_next: Default::default(),
            req_len: Default::default(),
            req_fire: Default::default(),
            rest_empty: Default::default(),
            outs_up: Default::default(),
            k_one3: Constant::new(bits::<3>(1)),
            k_zero16: Constant::new(bits::<16>(0)),
            k_eight16: Constant::new(bits::<16>(8)),
            k_eight4: Constant::new(bits::<4>(8)),
            k_ones64: Constant::new(bits::<64>(u64::MAX)),
            k_zero64: Constant::new(bits::<64>(0)),
        }
    }
}

impl Logic for PayloadScatter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, a0, a1, a2, a3, l0, l1, l2, l3, rem, take, lastb, lo, hi, nx, lo_v,
            hi_v, nx_v, ptr, in_done, outs, err, used, pt, need_hi, l0_nz
        );
        self.ptr_nx.next = self.ptr.q.val();
        self.take_nx.next = self.take.q.val();
        self.s_cmd_ready.next = false;
        self.m_dma_wr_req_valid.next = false;
        self.m_dma_wr_req_addr.next = self.a0.q.val();
        self.m_dma_wr_req_len.next = self.l0.q.val();
        self.req_len.next = self.l0.q.val();
        self.m_done_valid.next = false;
        self.m_done_err.next =
            self.err.q.val() | (self.m_dma_wr_done_valid.val() & self.m_dma_wr_done_err.val());
        self.m_done_tail.next = self.in_done.q.val();

        // ---- The beat leaving: `take` bytes from the pointer on.
        self.wraps.next = self.pt.q.val().get_bit(3);
        self.can_emit.next = (self.st.q.val() == 2)
            & self.lo_v.q.val()
            & (!self.need_hi.q.val() | self.hi_v.q.val());
        self.fire.next = self.can_emit.val() & self.m_dma_wr_data_ready.val();
        self.shift.next = self.fire.val() & self.wraps.val();
        self.rot1.next = (self.lo.q.val() >> 8) | (self.hi.q.val() << 56);
        self.rot2.next = (self.lo.q.val() >> 16) | (self.hi.q.val() << 48);
        self.rot3.next = (self.lo.q.val() >> 24) | (self.hi.q.val() << 40);
        self.rot4.next = (self.lo.q.val() >> 32) | (self.hi.q.val() << 32);
        self.rot5.next = (self.lo.q.val() >> 40) | (self.hi.q.val() << 24);
        self.rot6.next = (self.lo.q.val() >> 48) | (self.hi.q.val() << 16);
        self.rot7.next = (self.lo.q.val() >> 56) | (self.hi.q.val() << 8);
        self.m0.next = self.k_zero64.val();
        self.m1.next = self.k_zero64.val();
        self.m2.next = self.k_zero64.val();
        self.m3.next = self.k_zero64.val();
        self.m4.next = self.k_zero64.val();
        self.m5.next = self.k_zero64.val();
        self.m6.next = self.k_zero64.val();
        self.m7.next = self.k_zero64.val();
        if self.ptr.q.val() == 0 {
            self.m0.next = self.k_ones64.val();
        }
        if self.ptr.q.val() == 1 {
            self.m1.next = self.k_ones64.val();
        }
        if self.ptr.q.val() == 2 {
            self.m2.next = self.k_ones64.val();
        }
        if self.ptr.q.val() == 3 {
            self.m3.next = self.k_ones64.val();
        }
        if self.ptr.q.val() == 4 {
            self.m4.next = self.k_ones64.val();
        }
        if self.ptr.q.val() == 5 {
            self.m5.next = self.k_ones64.val();
        }
        if self.ptr.q.val() == 6 {
            self.m6.next = self.k_ones64.val();
        }
        if self.ptr.q.val() == 7 {
            self.m7.next = self.k_ones64.val();
        }
        self.m_dma_wr_data_valid.next = self.can_emit.val();
        self.m_dma_wr_data.next = (self.lo.q.val() & self.m0.val())
            | (self.rot1.val() & self.m1.val())
            | (self.rot2.val() & self.m2.val())
            | (self.rot3.val() & self.m3.val())
            | (self.rot4.val() & self.m4.val())
            | (self.rot5.val() & self.m5.val())
            | (self.rot6.val() & self.m6.val())
            | (self.rot7.val() & self.m7.val());
        self.m_dma_wr_data_last.next = self.lastb.q.val();
        self.m_dma_wr_data_keep.next = 255.into();
        if self.take.q.val() == 7 {
            self.m_dma_wr_data_keep.next = 127.into();
        }
        if self.take.q.val() == 6 {
            self.m_dma_wr_data_keep.next = 63.into();
        }
        if self.take.q.val() == 5 {
            self.m_dma_wr_data_keep.next = 31.into();
        }
        if self.take.q.val() == 4 {
            self.m_dma_wr_data_keep.next = 15.into();
        }
        if self.take.q.val() == 3 {
            self.m_dma_wr_data_keep.next = 7.into();
        }
        if self.take.q.val() == 2 {
            self.m_dma_wr_data_keep.next = 3.into();
        }
        if self.take.q.val() == 1 {
            self.m_dma_wr_data_keep.next = 1.into();
        }

        // ---- The beat arriving, only while a piece wants bytes (a command of no bytes takes
        // no beat: the stream's next beats may be another frame's), while the third slot is
        // free, into the first free slot after the window moves.
        self.want.next = (self.st.q.val() == 2) | ((self.st.q.val() == 1) & self.l0_nz.q.val());
        self.accept.next = self.want.val() & !self.in_done.q.val() & !self.nx_v.q.val();
        self.s_axis_tready.next = self.accept.val();
        self.take_in.next = self.accept.val() & self.s_axis_tvalid.val();
        if self.take_in.val() & self.s_axis_tlast.val() {
            self.in_done.d.next = true;
        }
        if self.shift.val() {
            self.lo.d.next = self.hi.q.val();
            self.hi.d.next = self.nx.q.val();
            self.lo_v.d.next = self.hi_v.q.val();
            self.hi_v.d.next = self.nx_v.q.val();
            self.nx_v.d.next = false;
            // `nx` is free here (else no beat is taken): the beat goes after `hi`'s.
            if self.take_in.val() {
                if self.hi_v.q.val() {
                    self.hi.d.next = self.s_axis_tdata.val();
                    self.hi_v.d.next = true;
                } else {
                    self.lo.d.next = self.s_axis_tdata.val();
                    self.lo_v.d.next = true;
                }
            }
        } else if self.take_in.val() {
            if self.hi_v.q.val() {
                self.nx.d.next = self.s_axis_tdata.val();
                self.nx_v.d.next = true;
            } else if self.lo_v.q.val() {
                self.hi.d.next = self.s_axis_tdata.val();
                self.hi_v.d.next = true;
            } else {
                self.lo.d.next = self.s_axis_tdata.val();
                self.lo_v.d.next = true;
            }
        }
        // The pointer wraps at 8 (a whole beat leaves it where it was).
        if self.fire.val() {
            self.ptr_nx.next = self.pt.q.val().get_bits::<3>(0);
        }

        // ---- The pieces: a write request leaves from REQ once the piece's bytes are at hand.
        self.rem_next.next = self.rem.q.val() - bit_cast::<16, 4>(self.take.q.val());
        if self.st.q.val() == 0 {
            self.s_cmd_ready.next = true;
            if self.s_cmd_valid.val() {
                self.a0.d.next = self.s_cmd_addr0.val();
                self.a1.d.next = self.s_cmd_addr1.val();
                self.a2.d.next = self.s_cmd_addr2.val();
                self.a3.d.next = self.s_cmd_addr3.val();
                self.l0.d.next = self.s_cmd_len0.val();
                self.l0_nz.d.next = self.s_cmd_len0.val() != self.k_zero16.val();
                self.l1.d.next = self.s_cmd_len1.val();
                self.l2.d.next = self.s_cmd_len2.val();
                self.l3.d.next = self.s_cmd_len3.val();
                self.lo_v.d.next = false;
                self.hi_v.d.next = false;
                self.nx_v.d.next = false;
                self.ptr_nx.next = 0.into();
                self.in_done.d.next = false;
                self.used.d.next = false;
                self.err.d.next = false;
                self.st.d.next = 1.into();
            }
        }
        // No bytes left for the pieces after piece 0: WAIT follows it (or replaces it).
        self.rest_empty.next = (self.l1.q.val() == self.k_zero16.val())
            & (self.l2.q.val() == self.k_zero16.val())
            & (self.l3.q.val() == self.k_zero16.val());
        if self.st.q.val() == 1 {
            if !self.used.q.val() & self.l0_nz.q.val() {
                self.m_dma_wr_req_valid.next = self.lo_v.q.val() | self.in_done.q.val();
            } else if self.rest_empty.val() {
                self.st.d.next = 3.into();
            } else {
                self.a0.d.next = self.a1.q.val();
                self.a1.d.next = self.a2.q.val();
                self.a2.d.next = self.a3.q.val();
                self.l0.d.next = self.l1.q.val();
                self.l0_nz.d.next = self.l1.q.val() != self.k_zero16.val();
                self.l1.d.next = self.l2.q.val();
                self.l2.d.next = self.l3.q.val();
                self.l3.d.next = 0.into();
                self.used.d.next = false;
            }
        }
        // A request taken: DATA, with the piece's counters.
        self.req_fire.next = self.m_dma_wr_req_valid.val() & self.m_dma_wr_req_ready.val();
        if self.req_fire.val() {
            self.rem.d.next = self.req_len.val();
            self.take_nx.next = self.k_eight4.val();
            if self.req_len.val() < self.k_eight16.val() {
                self.take_nx.next = self.req_len.val().get_bits::<4>(0);
            }
            self.lastb.d.next = self.req_len.val() <= self.k_eight16.val();
            self.st.d.next = 2.into();
        }
        // `fire` is only ever high in DATA.
        if self.fire.val() {
            self.rem.d.next = self.rem_next.val();
            self.take_nx.next = self.k_eight4.val();
            if self.rem_next.val() < self.k_eight16.val() {
                self.take_nx.next = self.rem_next.val().get_bits::<4>(0);
            }
            self.lastb.d.next = self.rem_next.val() <= self.k_eight16.val();
        }
        if self.fire.val() & self.lastb.q.val() {
            self.used.d.next = true;
            self.st.d.next = 1.into();
            if self.rest_empty.val() {
                self.st.d.next = 3.into();
            }
        }

        self.ptr.d.next = self.ptr_nx.val();
        self.take.d.next = self.take_nx.val();
        self.pt_nx.next = bit_cast::<4, 3>(self.ptr_nx.val()) + self.take_nx.val();
        self.pt.d.next = self.pt_nx.val();
        self.need_hi.d.next = self.pt_nx.val() > self.k_eight4.val();

        // ---- Writes requested and done; the report as the last done comes in.
        self.outs_up.next = self.outs.q.val();
        if self.req_fire.val() {
            self.outs_up.next = self.outs.q.val() + self.k_one3.val();
        }
        self.outs.d.next = self.outs_up.val();
        if self.m_dma_wr_done_valid.val() {
            self.outs.d.next = self.outs_up.val() - self.k_one3.val();
            if self.m_dma_wr_done_err.val() {
                self.err.d.next = true;
            }
        }
        if (self.st.q.val() == 3)
            & (!self.outs.q.val().any()
                | ((self.outs.q.val() == 1) & self.m_dma_wr_done_valid.val()))
        {
            self.m_done_valid.next = true;
            if self.m_done_ready.val() {
                self.st.d.next = 0.into();
            }
        }
        if self.reset.val() {
            self.st.d.next = 0.into();
            self.outs.d.next = 0.into();
        }
    }
}
