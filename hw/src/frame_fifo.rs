//! A store-and-forward frame FIFO that drops bad frames: beats are written as they come, but a
//! frame becomes readable only when its last beat arrives good; a frame marked bad on its last
//! beat (`s_tuser`), or one that did not fit, is rolled back and counted on `dropped`.
//!
//! One clock. The input cannot stall (it comes from the MAC). The memory is a block RAM of
//! 2^`A` entries of {last, keep, data} (73 bits) read through the block RAM's own output
//! register ([`Bram73`]), so the read is a two-stage pipeline inside the block RAM: stage 1
//! holds the address (`rd_a`, valid `v1`), stage 2 the word (`read_data`, valid `v2`, which is
//! `m_tvalid`). Both stages advance together (`adv`) whenever the output is empty or taken,
//! so a frame leaves at one beat per clock; a fetch (`rd` advances) happens on an advance
//! with a committed entry at `rd`. A committed frame is shown one cycle after its commit, so
//! an entry was written at least two edges before its address is latched. The full check
//! counts from `rd_a` (which equals `rd` when stage 1 is empty), so the entry whose address
//! is latched is never overwritten before its word reaches the output register.

use rust_hdl::prelude::*;

/// Simple dual-port block RAM of 2^`A` x 73 bits (`A` <= 9), one clock, with the block RAM's
/// output register in use: three ECP5 `DP16KD` cells in their 512 x 36 pseudo-dual-port mode
/// with `REGMODE_B = "OUTREG"`, instantiated by name (yosys' inference leaves the output
/// register unused, and without it the block RAM's clock-to-output, about 5.8 ns on speed
/// grade 6, left under 2.2 ns of routing for the 125 MHz receive clock).
///
/// A read takes two edges, both gated by `read_enable`: an edge with `read_enable` high latches
/// `read_address`; the next edge with `read_enable` high loads the word at that address into
/// the output register, `read_data`. With `read_enable` low both stages hold. The design must
/// not write the address held in the first stage before it moves on (the frame FIFO's full
/// check counts it as used). Unwritten words read as zero in both simulations.
#[derive(LogicBlock, Default)]
pub struct Bram73<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub read_address: Signal<In, Bits<A>>,
    pub read_enable: Signal<In, Bit>,
    pub read_data: Signal<Out, Bits<73>>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, Bits<73>>,
    pub write_enable: Signal<In, Bit>,
    _mem: std::collections::BTreeMap<Bits<A>, Bits<73>>,
    _addr: Bits<A>,
}

impl<const A: usize> Logic for Bram73<A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.read_enable.val() {
                self.read_data.next = self._mem.get(&self._addr).copied().unwrap_or_default();
                self._addr = self.read_address.val();
            }
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
        Verilog::Custom(dp16kd_outreg_verilog(A))
    }
}

/// The Verilog body of [`Bram73`]: three `DP16KD` cells, 36 bits each, in the mapping yosys'
/// own `$__ECP5_PDPW16KD_` uses (write data on `DIA`/`DIB`, byte enables on `ADA3:0`, the word
/// address on `AD*13:5`, read data on `DOA`/`DOB`). In this mode the read word leaves on both
/// ports' output pins, so both ports' output registers are on (`REGMODE_A` too: nextpnr times
/// `DOA` by it) and both output clock enables follow `read_enable`.
fn dp16kd_outreg_verilog(abits: usize) -> String {
    assert!(abits <= 9, "Bram73: a DP16KD holds 512 words of 36 bits");
    let mut v = String::new();
    v.push_str("wire [107:0] wdata = {35'b0, write_data};\nwire [107:0] rdata;\n");
    v.push_str(&format!(
        "wire [8:0] waddr = {{{pad}write_address}};\nwire [8:0] raddr = {{{pad}read_address}};\n",
        pad = if abits == 9 {
            String::new()
        } else {
            format!("{}'b0, ", 9 - abits)
        }
    ));
    v.push_str("always @(*) read_data = rdata[72:0];\n");
    for k in 0..3 {
        v.push_str(&format!(
            "DP16KD #(.DATA_WIDTH_A(36), .DATA_WIDTH_B(36), .REGMODE_A(\"OUTREG\"), \
             .REGMODE_B(\"OUTREG\"), .RESETMODE(\"SYNC\"), .ASYNC_RESET_RELEASE(\"SYNC\"), \
             .CSDECODE_A(\"0b000\"), .CSDECODE_B(\"0b000\"), .WRITEMODE_A(\"NORMAL\"), \
             .WRITEMODE_B(\"NORMAL\"), .GSR(\"DISABLED\")) bram{k} (\n  \
             .CLKA(clock), .CEA(1'b1), .OCEA(read_enable), .WEA(1'b1), .RSTA(1'b0), \
             .CSA0(1'b0), .CSA1(1'b0), .CSA2(1'b0),\n  \
             .CLKB(clock), .CEB(read_enable), .OCEB(read_enable), .WEB(1'b0), .RSTB(1'b0), \
             .CSB0(1'b0), .CSB1(1'b0), .CSB2(1'b0),\n"
        ));
        let mut pins = Vec::new();
        for b in 0..4 {
            pins.push(format!(".ADA{b}(write_enable)"));
        }
        pins.push(".ADA4(1'b0)".to_string());
        for b in 0..5 {
            pins.push(format!(".ADB{b}(1'b0)"));
        }
        for b in 0..9 {
            pins.push(format!(".ADA{}(waddr[{b}])", b + 5));
            pins.push(format!(".ADB{}(raddr[{b}])", b + 5));
        }
        for b in 0..18 {
            pins.push(format!(".DIA{b}(wdata[{}])", 36 * k + b));
            pins.push(format!(".DIB{b}(wdata[{}])", 36 * k + 18 + b));
            pins.push(format!(".DOA{b}(rdata[{}])", 36 * k + b));
            pins.push(format!(".DOB{b}(rdata[{}])", 36 * k + 18 + b));
        }
        for chunk in pins.chunks(6) {
            v.push_str("  ");
            v.push_str(&chunk.join(", "));
            v.push_str(",\n");
        }
        // The last comma closes nothing: drop it.
        v.truncate(v.len() - 2);
        v.push_str("\n);\n");
    }
    v
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
    /// Stage 1 of the read: the address latched in the block RAM (`rd_a`) is a committed entry.
    v1: DFF<Bit>,
    /// Stage 2: the block RAM's output register holds a committed entry (`m_tvalid`).
    v2: DFF<Bit>,
    /// The address latched in the block RAM at the last advance.
    rd_a: DFF<Bits<A>>,
    /// Registered, conservative full: one or two free entries left a cycle ago.
    near_full: DFF<Bit>,
    wr_next: Signal<Local, Bits<A>>,
    full: Signal<Local, Bit>,
    adv: Signal<Local, Bit>,
    fetch: Signal<Local, Bit>,
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
            v1: Default::default(),
            v2: Default::default(),
            rd_a: Default::default(),
            near_full: Default::default(),
            wr_next: Default::default(),
            full: Default::default(),
            adv: Default::default(),
            fetch: Default::default(),
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
            self, clock, wr, cw, cw_seen, rd, ovf, o_dropped, o_overflow, v1, v2, rd_a, near_full
        );
        self.ram.clock.next = self.clock.val();

        // ---- Write side.
        self.wr_next.next = self.wr.q.val() + self.k_one.val();
        // The fill grows by at most one entry per cycle, so a flag registered when one or two
        // entries were free is a safe full for this cycle (and keeps the adder and compare
        // off the block RAM's write enable). It costs at most one entry of capacity. The
        // oldest entry still needed in the memory is `rd_a` (latched, not yet in the output
        // register), which only moves forward, so a stale flag stays safe.
        self.near_full.d.next = (self.wr_next.val() == self.rd_a.q.val())
            | ((self.wr.q.val() + self.k_two.val()) == self.rd_a.q.val());
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

        // ---- Read side: a two-stage pipeline in the block RAM, advanced as one.
        self.avail.next = self.rd.q.val() != self.cw_seen.q.val();
        self.adv.next = !self.v2.q.val() | self.m_tready.val();
        self.fetch.next = self.adv.val() & self.avail.val();
        self.ram.read_enable.next = self.adv.val();
        self.ram.read_address.next = self.rd.q.val();
        if self.adv.val() {
            self.v1.d.next = self.fetch.val();
            self.v2.d.next = self.v1.q.val();
            self.rd_a.d.next = self.rd.q.val();
        }
        if self.fetch.val() {
            self.rd.d.next = self.rd.q.val() + self.k_one.val();
        }

        if self.reset.val() {
            self.wr.d.next = self.k_zero.val();
            self.cw.d.next = self.k_zero.val();
            self.cw_seen.d.next = self.k_zero.val();
            self.rd.d.next = self.k_zero.val();
            self.ovf.d.next = false;
            self.o_dropped.d.next = false;
            self.o_overflow.d.next = false;
            self.v1.d.next = false;
            self.v2.d.next = false;
            self.rd_a.d.next = self.k_zero.val();
            self.near_full.d.next = false;
        }

        self.m_tvalid.next = self.v2.q.val();
        self.m_tdata.next = self.ram.read_data.val().get_bits::<64>(0);
        self.m_tkeep.next = self.ram.read_data.val().get_bits::<8>(64);
        self.m_tlast.next = self.ram.read_data.val().get_bit(72);
        self.dropped.next = self.o_dropped.q.val();
        self.overflow.next = self.o_overflow.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_ram_uses_its_output_registers() {
        let v = dp16kd_outreg_verilog(9);
        assert_eq!(v.matches("DP16KD #(").count(), 3, "three 36-bit slices");
        assert_eq!(v.matches(".REGMODE_A(\"OUTREG\")").count(), 3);
        assert_eq!(v.matches(".REGMODE_B(\"OUTREG\")").count(), 3);
        assert_eq!(v.matches(".OCEA(read_enable)").count(), 3);
        assert_eq!(v.matches(".OCEB(read_enable)").count(), 3);
        assert_eq!(v.matches(".CEB(read_enable)").count(), 3);
        // Every data bit of every slice is connected once, in and out.
        for k in 0..108 {
            assert_eq!(v.matches(&format!("(wdata[{k}])")).count(), 1, "wdata[{k}]");
            assert_eq!(v.matches(&format!("(rdata[{k}])")).count(), 1, "rdata[{k}]");
        }
        // A narrower FIFO pads the word address.
        assert!(dp16kd_outreg_verilog(7).contains("{2'b0, read_address}"));
    }
}
