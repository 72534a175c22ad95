//! The receive request at the head of a receive ring, for the responder's SEND path: the ring
//! looked up in its queue manager, the `recv_wqe` at the consumer's slot read over the DMA
//! port, and each of its scatter/gather entries looked up in the memory region table,
//! checked for a local write over its whole length (the key's index and tag, the QP's PD,
//! LOCAL_WRITE, the bounds, as the transport model's `MrTable::check`) and translated to a
//! device address.
//!
//! A request (`s_req_*`: the ring and the QP's PD) is answered on `m_*`: `empty` when the ring
//! is disabled or its producer has not passed its consumer; `dma_err` when the host refused
//! the read; else the request's `wr_id`, its ring index (the consumer, which the caller
//! commits once the message is complete), and per entry the device address and length
//! (zero for entries past `NUM_SGE`), `ok` when every entry passes (a request with more than
//! three entries never does), and the entries' total length. Nothing here changes the
//! ring: the caller decides when the request is used up.
//!
//! The request is read by [`crate::slot_read`]; its eight beats land in registers as they
//! come, and its entries are checked one after another by [`crate::sge_check`].

use rust_hdl::prelude::*;

use crate::row_table::MR_BITS;
use crate::sge_check::SgeCheck;
use crate::slot_read::SlotRead;

/// Bytes of a receive request.
pub const WQE_BYTES: u64 = rnic_regmap::desc::RECV_WQE.size as u64;

#[derive(LogicBlock)]
pub struct RecvWqe<const A: usize, const Q: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_req_valid: Signal<In, Bit>,
    pub s_req_ready: Signal<Out, Bit>,
    pub s_req_ring: Signal<In, Bits<Q>>,
    pub s_req_pd: Signal<In, Bits<16>>,
    /// The receive rings' queue manager ([`crate::queue_mgr`], engine side).
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
    /// Memory region lookups by the key's index ([`crate::row_table`]).
    pub mr_look_valid: Signal<Out, Bit>,
    pub mr_look_ready: Signal<In, Bit>,
    pub mr_look_row: Signal<Out, Bits<A>>,
    pub mr_got_data: Signal<In, Bits<MR_BITS>>,
    /// The answer, held until taken, and its fields kept after that until the next request
    /// (the responder reads them while it writes the message and its completion).
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    pub m_empty: Signal<Out, Bit>,
    pub m_dma_err: Signal<Out, Bit>,
    pub m_wr_id: Signal<Out, Bits<64>>,
    pub m_index: Signal<Out, Bits<16>>,
    pub m_addr0: Signal<Out, Bits<64>>,
    pub m_len0: Signal<Out, Bits<32>>,
    pub m_addr1: Signal<Out, Bits<64>>,
    pub m_len1: Signal<Out, Bits<32>>,
    pub m_addr2: Signal<Out, Bits<64>>,
    pub m_len2: Signal<Out, Bits<32>>,
    pub m_ok: Signal<Out, Bit>,
    pub m_total: Signal<Out, Bits<34>>,

    slot: SlotRead<Q>,
    chk: SgeCheck<A>,
    // 0 IDLE, 1 READ, 2 ENTRY (its lookup), 3 CHECK (three clocks, the entry's answer in the
    // last), 4 OUT.
    st: DFF<Bits<3>>,
    pd: DFF<Bits<16>>,
    empty: DFF<Bit>,
    derr: DFF<Bit>,
    /// The request's beats, shifted in (beat 0 ends in `w0`).
    w0: DFF<Bits<64>>,
    w1: DFF<Bits<64>>,
    w2: DFF<Bits<64>>,
    w3: DFF<Bits<64>>,
    w4: DFF<Bits<64>>,
    w5: DFF<Bits<64>>,
    w6: DFF<Bits<64>>,
    w7: DFF<Bits<64>>,
    /// Entries still to check (3, 2, 1); the current entry is always in `w2`/`w3` (they
    /// shift down by two beats per entry); the results shift in from the top.
    left: DFF<Bits<2>>,
    nsge: DFF<Bits<8>>,
    r_addr0: DFF<Bits<64>>,
    r_addr1: DFF<Bits<64>>,
    r_addr2: DFF<Bits<64>>,
    r_len0: DFF<Bits<32>>,
    r_len1: DFF<Bits<32>>,
    r_len2: DFF<Bits<32>>,
    ok: DFF<Bit>,
    total: DFF<Bits<34>>,

    e_len: Signal<Local, Bits<32>>,
    used: Signal<Local, Bit>,
    k_one2: Constant<Bits<2>>,
    k_three2: Constant<Bits<2>>,
    k_three8: Constant<Bits<8>>,
    k_zero64: Constant<Bits<64>>,
}

impl<const A: usize, const Q: usize> Default for RecvWqe<A, Q> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_req_valid: Default::default(),
            s_req_ready: Default::default(),
            s_req_ring: Default::default(),
            s_req_pd: Default::default(),
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
            mr_look_valid: Default::default(),
            mr_look_ready: Default::default(),
            mr_look_row: Default::default(),
            mr_got_data: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_empty: Default::default(),
            m_dma_err: Default::default(),
            m_wr_id: Default::default(),
            m_index: Default::default(),
            m_addr0: Default::default(),
            m_len0: Default::default(),
            m_addr1: Default::default(),
            m_len1: Default::default(),
            m_addr2: Default::default(),
            m_len2: Default::default(),
            m_ok: Default::default(),
            m_total: Default::default(),
            slot: SlotRead::new(WQE_BYTES),
            chk: Default::default(),
            st: Default::default(),
            pd: Default::default(),
            empty: Default::default(),
            derr: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
            w2: Default::default(),
            w3: Default::default(),
            w4: Default::default(),
            w5: Default::default(),
            w6: Default::default(),
            w7: Default::default(),
            left: Default::default(),
            nsge: Default::default(),
            r_addr0: Default::default(),
            r_addr1: Default::default(),
            r_addr2: Default::default(),
            r_len0: Default::default(),
            r_len1: Default::default(),
            r_len2: Default::default(),
            ok: Default::default(),
            total: Default::default(),
            e_len: Default::default(),
            used: Default::default(),
            k_one2: Constant::new(bits::<2>(1)),
            k_three2: Constant::new(bits::<2>(3)),
            k_three8: Constant::new(bits::<8>(3)),
            k_zero64: Constant::new(bits::<64>(0)),
        }
    }
}

impl<const A: usize, const Q: usize> Logic for RecvWqe<A, Q> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, pd, empty, derr, w0, w1, w2, w3, w4, w5, w6, w7, left, nsge, r_addr0,
            r_addr1, r_addr2, r_len0, r_len1, r_len2, ok, total
        );
        self.slot.clock.next = self.clock.val();
        self.slot.reset.next = self.reset.val();
        self.chk.clock.next = self.clock.val();
        self.chk.reset.next = self.reset.val();

        // The ring's slot at its consumer.
        self.slot.s_valid.next = false;
        self.slot.s_ring.next = self.s_req_ring.val();
        self.slot.s_index.next = 0.into();
        self.slot.s_at_cons.next = true;
        self.look_valid.next = self.slot.look_valid.val();
        self.slot.look_ready.next = self.look_ready.val();
        self.look_queue.next = self.slot.look_queue.val();
        self.slot.got_valid.next = self.got_valid.val();
        self.slot.got_base.next = self.got_base.val();
        self.slot.got_size.next = self.got_size.val();
        self.slot.got_prod.next = self.got_prod.val();
        self.slot.got_cons.next = self.got_cons.val();
        self.m_dma_rd_req_valid.next = self.slot.m_dma_rd_req_valid.val();
        self.slot.m_dma_rd_req_ready.next = self.m_dma_rd_req_ready.val();
        self.m_dma_rd_req_addr.next = self.slot.m_dma_rd_req_addr.val();
        self.m_dma_rd_req_len.next = self.slot.m_dma_rd_req_len.val();
        self.slot.m_dma_rd_data_valid.next = self.m_dma_rd_data_valid.val();
        self.m_dma_rd_data_ready.next = self.slot.m_dma_rd_data_ready.val();
        self.slot.m_dma_rd_data.next = self.m_dma_rd_data.val();
        self.slot.m_dma_rd_data_last.next = self.m_dma_rd_data_last.val();
        self.slot.m_dma_rd_data_err.next = self.m_dma_rd_data_err.val();

        self.s_req_ready.next = false;
        self.m_valid.next = false;
        self.m_empty.next = self.empty.q.val();
        self.m_dma_err.next = self.derr.q.val();
        self.m_wr_id.next = self.w0.q.val();
        self.m_index.next = self.slot.m_index.val();
        self.m_addr0.next = self.r_addr0.q.val();
        self.m_len0.next = self.r_len0.q.val();
        self.m_addr1.next = self.r_addr1.q.val();
        self.m_len1.next = self.r_len1.q.val();
        self.m_addr2.next = self.r_addr2.q.val();
        self.m_len2.next = self.r_len2.q.val();
        self.m_ok.next = self.ok.q.val();
        self.m_total.next = self.total.q.val();

        // The current entry (recv_wqe: ADDR at +0, LENGTH at +8, LKEY at +12).
        self.e_len.next = self.w3.q.val().get_bits::<32>(0);
        self.chk.s_valid.next = false;
        self.chk.s_addr.next = self.w2.q.val();
        self.chk.s_len.next = self.e_len.val();
        self.chk.s_key.next = self.w3.q.val().get_bits::<32>(32);
        self.chk.s_pd.next = self.pd.q.val();
        self.chk.s_write.next = true;
        self.mr_look_valid.next = self.chk.mr_look_valid.val();
        self.chk.mr_look_ready.next = self.mr_look_ready.val();
        self.mr_look_row.next = self.chk.mr_look_row.val();
        self.chk.mr_got_data.next = self.mr_got_data.val();

        if self.st.q.val() == 0 {
            self.s_req_ready.next = self.slot.s_ready.val();
            self.slot.s_valid.next = self.s_req_valid.val();
            if self.s_req_valid.val() & self.slot.s_ready.val() {
                self.pd.d.next = self.s_req_pd.val();
                self.empty.d.next = false;
                self.derr.d.next = false;
                self.ok.d.next = true;
                self.total.d.next = 0.into();
                self.st.d.next = 1.into();
            }
        }
        if self.st.q.val() == 1 {
            if self.slot.m_beat_valid.val() {
                self.w7.d.next = self.slot.m_beat.val();
                self.w6.d.next = self.w7.q.val();
                self.w5.d.next = self.w6.q.val();
                self.w4.d.next = self.w5.q.val();
                self.w3.d.next = self.w4.q.val();
                self.w2.d.next = self.w3.q.val();
                self.w1.d.next = self.w2.q.val();
                self.w0.d.next = self.w1.q.val();
                if self.slot.m_beat_err.val() {
                    self.derr.d.next = true;
                }
            }
            if self.slot.m_done.val() {
                self.left.d.next = self.k_three2.val();
                self.st.d.next = 2.into();
                if self.slot.m_empty.val() {
                    self.empty.d.next = true;
                    self.st.d.next = 4.into();
                }
            }
        }
        // The entries: NUM_SGE is beat 1's low byte (captured once the beats are in).
        if self.st.q.val() == 2 {
            if self.left.q.val() == 3 {
                self.nsge.d.next = self.w1.q.val().get_bits::<8>(0);
                if self.w1.q.val().get_bits::<8>(0) > self.k_three8.val() {
                    self.ok.d.next = false;
                }
            }
            if self.derr.q.val() {
                self.st.d.next = 4.into();
            } else {
                self.chk.s_valid.next = true;
                if self.chk.s_ready.val() {
                    self.st.d.next = 3.into();
                }
            }
        }
        // Entry 3 - left (0, 1, 2) is used when it is below NUM_SGE.
        self.used.next = ((self.left.q.val() == 3) & self.nsge.q.val().any())
            | ((self.left.q.val() == 2) & (self.nsge.q.val() > 1))
            | ((self.left.q.val() == 1) & (self.nsge.q.val() > 2));
        if (self.st.q.val() == 3) & self.chk.m_valid.val() {
            // The results shift in from the top; the beats shift down one entry.
            self.r_addr0.d.next = self.r_addr1.q.val();
            self.r_addr1.d.next = self.r_addr2.q.val();
            self.r_len0.d.next = self.r_len1.q.val();
            self.r_len1.d.next = self.r_len2.q.val();
            self.r_addr2.d.next = self.k_zero64.val();
            self.r_len2.d.next = 0.into();
            if self.used.val() {
                self.r_addr2.d.next = self.chk.m_dev_addr.val();
                self.r_len2.d.next = self.e_len.val();
                self.total.d.next = self.total.q.val() + bit_cast::<34, 32>(self.e_len.val());
                if !self.chk.m_pass.val() {
                    self.ok.d.next = false;
                }
            }
            self.w2.d.next = self.w4.q.val();
            self.w3.d.next = self.w5.q.val();
            self.w4.d.next = self.w6.q.val();
            self.w5.d.next = self.w7.q.val();
            self.left.d.next = self.left.q.val() - self.k_one2.val();
            self.st.d.next = 2.into();
            if self.left.q.val() == 1 {
                self.st.d.next = 4.into();
            }
        }
        if self.st.q.val() == 4 {
            self.m_valid.next = true;
            if self.m_ready.val() {
                self.st.d.next = 0.into();
            }
        }
        if self.reset.val() {
            self.st.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use rnic_regmap::desc::{RECV_WQE, SGE};

    /// The beats the engine reads its fields from are the descriptor's: WR_ID in beat 0,
    /// NUM_SGE in beat 1's low byte, entry k's ADDR in beat 2 + 2k and its LENGTH and LKEY in
    /// the low and high halves of beat 3 + 2k.
    #[test]
    fn beats_follow_the_descriptor() {
        assert!(super::WQE_BYTES.is_power_of_two());
        let at = |f: &[rnic_regmap::desc::DescField], n: &str| {
            let f = f.iter().find(|f| f.name == n).unwrap();
            (f.byte, f.bits)
        };
        assert_eq!(at(RECV_WQE.fields, "WR_ID"), (0, 64));
        assert_eq!(at(RECV_WQE.fields, "NUM_SGE"), (8, 8));
        assert_eq!(RECV_WQE.sge, Some((16, 3)));
        assert_eq!(SGE.size, 16);
        assert_eq!(at(SGE.fields, "ADDR"), (0, 64));
        assert_eq!(at(SGE.fields, "LENGTH"), (8, 32));
        assert_eq!(at(SGE.fields, "LKEY"), (12, 32));
    }
}
