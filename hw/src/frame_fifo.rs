//! A store-and-forward frame FIFO that drops bad frames: beats are written as they come, but a
//! frame becomes readable only when its last beat arrives good; a frame marked bad on its last
//! beat (`s_tuser`), or one that did not fit, is rolled back and counted on `dropped`.
//!
//! One clock. The input cannot stall (it comes from the MAC). The memory is a `RAM` of
//! 2^`A` entries of {last, keep, data} (73 bits), with a synchronous read: the read address is
//! the next read pointer, so the head entry is always on `read_data`. A committed frame is
//! shown one cycle after its commit, so the entry at the head was written at least two edges
//! before it is read. The head is loaded into an output register (so the block RAM's output
//! drives only flip-flops, for Fmax), and the next entry is fetched in the same cycle, so a
//! frame still leaves at one beat per clock.

use rust_hdl::prelude::*;

/// Simple dual-port block RAM of 2^`A` x 73 bits, one clock, synchronous read. Like rust-hdl's
/// `RAM`, but its Verilog tells yosys (`no_rw_check`) that the design never reads an address
/// in the cycle it is written, so yosys adds no collision bypass around the DP16KD (that
/// bypass, an address comparator and a mux after the block RAM, cost the receive clock ~20 %).
#[derive(LogicBlock, Default)]
pub struct Bram73<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub read_address: Signal<In, Bits<A>>,
    pub read_data: Signal<Out, Bits<73>>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, Bits<73>>,
    pub write_enable: Signal<In, Bit>,
    _mem: std::collections::BTreeMap<Bits<A>, Bits<73>>,
}

impl<const A: usize> Logic for Bram73<A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.read_data.next = self
                ._mem
                .get(&self.read_address.val())
                .copied()
                .unwrap_or_default();
            if self.write_enable.val() {
                self._mem
                    .insert(self.write_address.val(), self.write_data.val());
            }
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "(* no_rw_check *)
reg [72:0] mem[0:{last}];
always @(posedge clock) begin
   read_data <= mem[read_address];
end
always @(posedge clock) begin
   if (write_enable) begin
      mem[write_address] <= write_data;
   end
end
",
            last = (1usize << A) - 1
        ))
    }
}

#[derive(LogicBlock)]
pub struct FrameFifo<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_tdata: Signal<In, Bits<64>>,
    pub s_tkeep: Signal<In, Bits<8>>,
    pub s_tlast: Signal<In, Bit>,
    /// On the last beat: drop this frame.
    pub s_tuser: Signal<In, Bit>,
    pub s_tvalid: Signal<In, Bit>,
    pub m_tdata: Signal<Out, Bits<64>>,
    pub m_tkeep: Signal<Out, Bits<8>>,
    pub m_tlast: Signal<Out, Bit>,
    pub m_tvalid: Signal<Out, Bit>,
    pub m_tready: Signal<In, Bit>,
    /// Pulses once per dropped frame (bad, or no room).
    pub dropped: Signal<Out, Bit>,
    /// Pulses once per frame dropped for want of room.
    pub overflow: Signal<Out, Bit>,
    ram: Bram73<A>,
    wr: DFF<Bits<A>>,
    cw: DFF<Bits<A>>,
    cw_seen: DFF<Bits<A>>,
    rd: DFF<Bits<A>>,
    ovf: DFF<Bit>,
    o_dropped: DFF<Bit>,
    o_overflow: DFF<Bit>,
    out_valid: DFF<Bit>,
    out_data: DFF<Bits<73>>,
    /// Registered, conservative full: one or two free entries left a cycle ago.
    near_full: DFF<Bit>,
    wr_next: Signal<Local, Bits<A>>,
    rd_next: Signal<Local, Bits<A>>,
    full: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    avail: Signal<Local, Bit>,
    word: Signal<Local, Bits<73>>,
    k_one: Constant<Bits<A>>,
    k_two: Constant<Bits<A>>,
    k_zero: Constant<Bits<A>>,
}

impl<const A: usize> Default for FrameFifo<A> {
    fn default() -> Self {
        FrameFifo {
            clock: Default::default(),
            reset: Default::default(),
            s_tdata: Default::default(),
            s_tkeep: Default::default(),
            s_tlast: Default::default(),
            s_tuser: Default::default(),
            s_tvalid: Default::default(),
            m_tdata: Default::default(),
            m_tkeep: Default::default(),
            m_tlast: Default::default(),
            m_tvalid: Default::default(),
            m_tready: Default::default(),
            dropped: Default::default(),
            overflow: Default::default(),
            ram: Default::default(),
            wr: Default::default(),
            cw: Default::default(),
            cw_seen: Default::default(),
            rd: Default::default(),
            ovf: Default::default(),
            o_dropped: Default::default(),
            o_overflow: Default::default(),
            out_valid: Default::default(),
            out_data: Default::default(),
            near_full: Default::default(),
            wr_next: Default::default(),
            rd_next: Default::default(),
            full: Default::default(),
            pop: Default::default(),
            avail: Default::default(),
            word: Default::default(),
            k_one: Constant::new(bits::<A>(1)),
            k_two: Constant::new(bits::<A>(2)),
            k_zero: Constant::new(bits::<A>(0)),
        }
    }
}

impl<const A: usize> Logic for FrameFifo<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, wr, cw, cw_seen, rd, ovf, o_dropped, o_overflow, out_valid, out_data,
            near_full
        );
        self.ram.clock.next = self.clock.val();

        // ---- Write side.
        self.wr_next.next = self.wr.q.val() + self.k_one.val();
        // The fill grows by at most one entry per cycle, so a flag registered when one or two
        // entries were free is a safe full for this cycle (and keeps the adder and compare
        // off the block RAM's write enable). It costs at most one entry of capacity.
        self.near_full.d.next = (self.wr_next.val() == self.rd.q.val())
            | ((self.wr.q.val() + self.k_two.val()) == self.rd.q.val());
        self.full.next = self.near_full.q.val();
        self.word.next =
            bit_cast::<73, 64>(self.s_tdata.val()) | (bit_cast::<73, 8>(self.s_tkeep.val()) << 64);
        self.word.next = self.word.val().replace_bit(72, self.s_tlast.val());
        self.ram.write_address.next = self.wr.q.val();
        self.ram.write_data.next = self.word.val();
        self.ram.write_enable.next = self.s_tvalid.val() & !self.full.val() & !self.ovf.q.val();
        self.o_dropped.d.next = false;
        self.o_overflow.d.next = false;
        if self.s_tvalid.val() {
            if !self.full.val() & !self.ovf.q.val() {
                self.wr.d.next = self.wr_next.val();
            } else {
                self.ovf.d.next = true;
            }
            if self.s_tlast.val() {
                self.ovf.d.next = false;
                if self.s_tuser.val() | self.full.val() | self.ovf.q.val() {
                    self.wr.d.next = self.cw.q.val();
                    self.o_dropped.d.next = true;
                    self.o_overflow.d.next = self.full.val() | self.ovf.q.val();
                } else {
                    self.cw.d.next = self.wr_next.val();
                }
            }
        }
        self.cw_seen.d.next = self.cw.q.val();

        // ---- Read side: `pop` moves the head into the output register.
        self.avail.next = self.rd.q.val() != self.cw_seen.q.val();
        self.pop.next = self.avail.val() & (!self.out_valid.q.val() | self.m_tready.val());
        if self.out_valid.q.val() & self.m_tready.val() {
            self.out_valid.d.next = false;
        }
        if self.pop.val() {
            self.out_valid.d.next = true;
            self.out_data.d.next = self.ram.read_data.val();
        }
        self.rd_next.next = self.rd.q.val();
        if self.pop.val() {
            self.rd_next.next = self.rd.q.val() + self.k_one.val();
        }
        self.rd.d.next = self.rd_next.val();
        self.ram.read_address.next = self.rd_next.val();

        if self.reset.val() {
            self.wr.d.next = self.k_zero.val();
            self.cw.d.next = self.k_zero.val();
            self.cw_seen.d.next = self.k_zero.val();
            self.rd.d.next = self.k_zero.val();
            self.ovf.d.next = false;
            self.o_dropped.d.next = false;
            self.o_overflow.d.next = false;
            self.out_valid.d.next = false;
            self.near_full.d.next = false;
        }

        self.m_tvalid.next = self.out_valid.q.val();
        self.m_tdata.next = self.out_data.q.val().get_bits::<64>(0);
        self.m_tkeep.next = self.out_data.q.val().get_bits::<8>(64);
        self.m_tlast.next = self.out_data.q.val().get_bit(72);
        self.dropped.next = self.o_dropped.q.val();
        self.overflow.next = self.o_overflow.q.val();
    }
}
