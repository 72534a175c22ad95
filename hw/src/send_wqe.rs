//! A send request read in place, for the requester: the send ring looked up in its queue
//! manager, the `send_wqe` at the caller's index read over the DMA port (the requester keeps
//! its own index between the ring's consumer, which the completer commits, and its producer,
//! so that go-back-N reads a request again), and each of its scatter/gather entries checked in
//! the memory region table ([`crate::sge_check`]) as the transport model's requester checks a
//! request before sending it (`check_local`: the key's index and tag, the QP's PD, the bounds,
//! and LOCAL_WRITE for a READ's or an atomic's destination) and translated to a device
//! address.
//!
//! A request (`s_req_*`: the ring, the index, the QP's PD) is answered on `m_*`: `empty` when
//! the ring is disabled or the index has reached its producer; `dma_err` when the host refused
//! the read; else the request's fixed part as read (`m_wqe`, the bytes before the entries, for
//! [`crate::req_segment`]), per entry the device address and length (zero for entries past
//! `NUM_SGE`, as [`crate::payload_gather`] takes them), `ok` when every used entry passes (a
//! request with more than four entries never does), and the entries' total length (the
//! message's). The answer's fields hold until the next request.
//!
//! The request is read by [`crate::slot_read`]; its sixteen beats land in registers as they
//! come (the fixed part shifts into `wqe`, the entries into `e0`-`e7`). UD requests are not
//! read here (their destination fields are ignored).

use rust_hdl::prelude::*;

use crate::req_segment::{SWQE_BITS, swqe_offset_of};
use crate::row_table::MR_BITS;
use crate::sge_check::SgeCheck;
use crate::slot_read::SlotRead;

/// Bytes of a send request.
pub const WQE_BYTES: u64 = rnic_regmap::desc::SEND_WQE.size as u64;
/// Scatter/gather entries of a send request.
pub const SGES: usize = rnic_regmap::desc::SEND_WQE.sge.unwrap().1 as usize;

crate::field_split!(
    /// The fields of the fixed part this engine reads.
    SendWqeFields, SWQE_BITS, swqe_offset_of, {
        op: 8 => "OPCODE",
        nsge: 8 => "NUM_SGE",
    }
);

#[derive(LogicBlock)]
pub struct SendWqe<const A: usize, const Q: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_req_valid: Signal<In, Bit>,
    pub s_req_ready: Signal<Out, Bit>,
    pub s_req_ring: Signal<In, Bits<Q>>,
    pub s_req_index: Signal<In, Bits<16>>,
    pub s_req_pd: Signal<In, Bits<16>>,
    /// The send rings' queue manager ([`crate::queue_mgr`], engine side).
    pub look_valid: Signal<Out, Bit>,
    pub look_ready: Signal<In, Bit>,
    pub look_queue: Signal<Out, Bits<Q>>,
    pub got_valid: Signal<In, Bit>,
    pub got_base: Signal<In, Bits<64>>,
    pub got_size: Signal<In, Bits<32>>,
    pub got_prod: Signal<In, Bits<16>>,
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
    /// The answer, held until taken; its fields hold until the next request.
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    pub m_empty: Signal<Out, Bit>,
    pub m_dma_err: Signal<Out, Bit>,
    pub m_index: Signal<Out, Bits<16>>,
    pub m_wqe: Signal<Out, Bits<SWQE_BITS>>,
    pub m_addr0: Signal<Out, Bits<64>>,
    pub m_len0: Signal<Out, Bits<32>>,
    pub m_addr1: Signal<Out, Bits<64>>,
    pub m_len1: Signal<Out, Bits<32>>,
    pub m_addr2: Signal<Out, Bits<64>>,
    pub m_len2: Signal<Out, Bits<32>>,
    pub m_addr3: Signal<Out, Bits<64>>,
    pub m_len3: Signal<Out, Bits<32>>,
    pub m_ok: Signal<Out, Bit>,
    pub m_total: Signal<Out, Bits<34>>,

    fields: SendWqeFields,
    slot: SlotRead<Q>,
    chk: SgeCheck<A>,
    // 0 IDLE, 1 READ, 2 ENTRY (its lookup), 3 CHECK (three clocks, the entry's answer in the
    // last), 4 OUT.
    st: DFF<Bits<3>>,
    pd: DFF<Bits<16>>,
    empty: DFF<Bit>,
    derr: DFF<Bit>,
    /// Beats read so far (0-7 the fixed part, 8-15 the entries).
    beat: DFF<Bits<4>>,
    /// The fixed part, shifted in from the top (beat 0 ends at bit 0).
    wqe: DFF<Bits<SWQE_BITS>>,
    /// The entries' beats, shifted in from the top; the current entry is always in `e0`/`e1`
    /// (they shift down by two beats per entry).
    e0: DFF<Bits<64>>,
    e1: DFF<Bits<64>>,
    e2: DFF<Bits<64>>,
    e3: DFF<Bits<64>>,
    e4: DFF<Bits<64>>,
    e5: DFF<Bits<64>>,
    e6: DFF<Bits<64>>,
    e7: DFF<Bits<64>>,
    /// Entries still to check (4, 3, 2, 1); the results shift in from the top.
    left: DFF<Bits<3>>,
    r_addr0: DFF<Bits<64>>,
    r_addr1: DFF<Bits<64>>,
    r_addr2: DFF<Bits<64>>,
    r_addr3: DFF<Bits<64>>,
    r_len0: DFF<Bits<32>>,
    r_len1: DFF<Bits<32>>,
    r_len2: DFF<Bits<32>>,
    r_len3: DFF<Bits<32>>,
    ok: DFF<Bit>,
    total: DFF<Bits<34>>,

    used: Signal<Local, Bit>,
    k_one4: Constant<Bits<4>>,
    k_one3: Constant<Bits<3>>,
    k_four3: Constant<Bits<3>>,
    k_four8: Constant<Bits<8>>,
    k_zero64: Constant<Bits<64>>,
}

impl<const A: usize, const Q: usize> Default for SendWqe<A, Q> {
    fn default() -> Self {
        assert_eq!(SGES, 4, "the engine checks four entries");
        assert_eq!(SWQE_BITS, 512, "the fixed part is eight beats");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_req_valid: Default::default(),
            s_req_ready: Default::default(),
            s_req_ring: Default::default(),
            s_req_index: Default::default(),
            s_req_pd: Default::default(),
            look_valid: Default::default(),
            look_ready: Default::default(),
            look_queue: Default::default(),
            got_valid: Default::default(),
            got_base: Default::default(),
            got_size: Default::default(),
            got_prod: Default::default(),
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
            m_index: Default::default(),
            m_wqe: Default::default(),
            m_addr0: Default::default(),
            m_len0: Default::default(),
            m_addr1: Default::default(),
            m_len1: Default::default(),
            m_addr2: Default::default(),
            m_len2: Default::default(),
            m_addr3: Default::default(),
            m_len3: Default::default(),
            m_ok: Default::default(),
            m_total: Default::default(),
            fields: Default::default(),
            slot: SlotRead::new(WQE_BYTES),
            chk: Default::default(),
            st: Default::default(),
            pd: Default::default(),
            empty: Default::default(),
            derr: Default::default(),
            beat: Default::default(),
            wqe: Default::default(),
            e0: Default::default(),
            e1: Default::default(),
            e2: Default::default(),
            e3: Default::default(),
            e4: Default::default(),
            e5: Default::default(),
            e6: Default::default(),
            e7: Default::default(),
            left: Default::default(),
            r_addr0: Default::default(),
            r_addr1: Default::default(),
            r_addr2: Default::default(),
            r_addr3: Default::default(),
            r_len0: Default::default(),
            r_len1: Default::default(),
            r_len2: Default::default(),
            r_len3: Default::default(),
            ok: Default::default(),
            total: Default::default(),
            used: Default::default(),
            k_one4: Constant::new(bits::<4>(1)),
            k_one3: Constant::new(bits::<3>(1)),
            k_four3: Constant::new(bits::<3>(4)),
            k_four8: Constant::new(bits::<8>(4)),
            k_zero64: Constant::new(bits::<64>(0)),
        }
    }
}

impl<const A: usize, const Q: usize> Logic for SendWqe<A, Q> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, pd, empty, derr, beat, wqe, e0, e1, e2, e3, e4, e5, e6, e7, left,
            r_addr0, r_addr1, r_addr2, r_addr3, r_len0, r_len1, r_len2, r_len3, ok, total
        );
        self.slot.clock.next = self.clock.val();
        self.slot.reset.next = self.reset.val();
        self.chk.clock.next = self.clock.val();
        self.chk.reset.next = self.reset.val();
        self.fields.word.next = self.wqe.q.val();

        // The ring's slot at the requester's index.
        self.slot.s_valid.next = false;
        self.slot.s_ring.next = self.s_req_ring.val();
        self.slot.s_index.next = self.s_req_index.val();
        self.slot.s_at_cons.next = false;
        self.look_valid.next = self.slot.look_valid.val();
        self.slot.look_ready.next = self.look_ready.val();
        self.look_queue.next = self.slot.look_queue.val();
        self.slot.got_valid.next = self.got_valid.val();
        self.slot.got_base.next = self.got_base.val();
        self.slot.got_size.next = self.got_size.val();
        self.slot.got_prod.next = self.got_prod.val();
        self.slot.got_cons.next = 0.into();
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
        self.m_index.next = self.slot.m_index.val();
        self.m_wqe.next = self.wqe.q.val();
        self.m_addr0.next = self.r_addr0.q.val();
        self.m_len0.next = self.r_len0.q.val();
        self.m_addr1.next = self.r_addr1.q.val();
        self.m_len1.next = self.r_len1.q.val();
        self.m_addr2.next = self.r_addr2.q.val();
        self.m_len2.next = self.r_len2.q.val();
        self.m_addr3.next = self.r_addr3.q.val();
        self.m_len3.next = self.r_len3.q.val();
        self.m_ok.next = self.ok.q.val();
        self.m_total.next = self.total.q.val();

        // The current entry (sge: ADDR at +0, LENGTH at +8, LKEY at +12); a READ's or an
        // atomic's entries are written (ibv_wr_opcode 4, 5, 6).
        self.chk.s_valid.next = false;
        self.chk.s_addr.next = self.e0.q.val();
        self.chk.s_len.next = self.e1.q.val().get_bits::<32>(0);
        self.chk.s_key.next = self.e1.q.val().get_bits::<32>(32);
        self.chk.s_pd.next = self.pd.q.val();
        self.chk.s_write.next =
            (self.fields.op.val() == 4) | (self.fields.op.val() == 5) | (self.fields.op.val() == 6);
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
                self.beat.d.next = 0.into();
                self.st.d.next = 1.into();
            }
        }
        if (self.st.q.val() == 1) & self.slot.m_beat_valid.val() {
            self.beat.d.next = self.beat.q.val() + self.k_one4.val();
            if self.beat.q.val().get_bit(3) {
                self.e7.d.next = self.slot.m_beat.val();
                self.e6.d.next = self.e7.q.val();
                self.e5.d.next = self.e6.q.val();
                self.e4.d.next = self.e5.q.val();
                self.e3.d.next = self.e4.q.val();
                self.e2.d.next = self.e3.q.val();
                self.e1.d.next = self.e2.q.val();
                self.e0.d.next = self.e1.q.val();
            } else {
                self.wqe.d.next = (self.wqe.q.val() >> 64)
                    | (bit_cast::<SWQE_BITS, 64>(self.slot.m_beat.val()) << 448);
            }
            if self.slot.m_beat_err.val() {
                self.derr.d.next = true;
            }
        }
        if (self.st.q.val() == 1) & self.slot.m_done.val() {
            self.left.d.next = self.k_four3.val();
            self.st.d.next = 2.into();
            if self.slot.m_empty.val() {
                self.empty.d.next = true;
                self.st.d.next = 4.into();
            }
        }
        if self.st.q.val() == 2 {
            if self.fields.nsge.val() > self.k_four8.val() {
                self.ok.d.next = false;
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
        // Entry 4 - left (0 to 3) is used when it is below NUM_SGE.
        self.used.next = ((self.left.q.val() == 4) & self.fields.nsge.val().any())
            | ((self.left.q.val() == 3) & (self.fields.nsge.val() > 1))
            | ((self.left.q.val() == 2) & (self.fields.nsge.val() > 2))
            | ((self.left.q.val() == 1) & (self.fields.nsge.val() > 3));
        if (self.st.q.val() == 3) & self.chk.m_valid.val() {
            self.r_addr0.d.next = self.r_addr1.q.val();
            self.r_addr1.d.next = self.r_addr2.q.val();
            self.r_addr2.d.next = self.r_addr3.q.val();
            self.r_len0.d.next = self.r_len1.q.val();
            self.r_len1.d.next = self.r_len2.q.val();
            self.r_len2.d.next = self.r_len3.q.val();
            self.r_addr3.d.next = self.k_zero64.val();
            self.r_len3.d.next = 0.into();
            if self.used.val() {
                self.r_addr3.d.next = self.chk.m_dev_addr.val();
                self.r_len3.d.next = self.e1.q.val().get_bits::<32>(0);
                self.total.d.next =
                    self.total.q.val() + bit_cast::<34, 32>(self.e1.q.val().get_bits::<32>(0));
                if !self.chk.m_pass.val() {
                    self.ok.d.next = false;
                }
            }
            self.e0.d.next = self.e2.q.val();
            self.e1.d.next = self.e3.q.val();
            self.e2.d.next = self.e4.q.val();
            self.e3.d.next = self.e5.q.val();
            self.e4.d.next = self.e6.q.val();
            self.e5.d.next = self.e7.q.val();
            self.left.d.next = self.left.q.val() - self.k_one3.val();
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
    use rnic_regmap::desc::{SEND_WQE, SGE};

    /// The beats the engine reads follow the descriptor: the fixed part is beats 0-7, entry
    /// k's ADDR is beat 8 + 2k, its LENGTH and LKEY the low and high halves of beat 9 + 2k.
    #[test]
    fn beats_follow_the_descriptor() {
        assert!(super::WQE_BYTES.is_power_of_two());
        assert_eq!(SEND_WQE.sge, Some((64, 4)));
        assert_eq!(super::SWQE_BITS, 64 * 8);
        let at = |n: &str| {
            let f = SGE.fields.iter().find(|f| f.name == n).unwrap();
            (f.byte, f.bits)
        };
        assert_eq!(SGE.size, 16);
        assert_eq!(at("ADDR"), (0, 64));
        assert_eq!(at("LENGTH"), (8, 32));
        assert_eq!(at("LKEY"), (12, 32));
    }
}
