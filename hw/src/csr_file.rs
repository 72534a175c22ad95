//! The register file behind the CSR port, generated from a table the way LiteX generates its
//! CSR banks: every decoded address says where its value comes from ([`Source`]): a constant
//! of the build, a status word the hardware drives, or storage the host writes. The
//! simulation and the Verilog are both produced from the same table (the Verilog is a `case`
//! on the address), and the lock-step tests hold the two to each other; the table itself is
//! built from `rnic-regmap` by the top that owns the file, so no offset is typed twice.
//!
//! Storage is one flat register (`store`, [`STORE_SLOTS`] words) so that the engines read
//! their settings as plain wires. Reads are combinational from `rd_addr` (the CSR port
//! registers the address before and the data after); writes take effect at the clock edge.

use rust_hdl::prelude::*;

use crate::axil_slave::ADDR_BITS;

/// Status words the hardware drives (counters, indices the NIC owns, status bits).
pub const STATUS_SLOTS: usize = 24;
/// Words of host-written storage.
pub const STORE_SLOTS: usize = 24;
/// Storage words the hardware may also write (indices the NIC owns).
pub const LOAD_SLOTS: usize = 4;
const STATUS_W: usize = 32 * STATUS_SLOTS;
const STORE_W: usize = 32 * STORE_SLOTS;
const LOAD_W: usize = 32 * LOAD_SLOTS;

/// Where a decoded register's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A constant of the build; writes are ignored.
    Const(u32),
    /// Status word `slot` of the `status` input; writes are ignored.
    Status(usize),
    /// Storage word `slot`, reset to `reset`; only the bits of `mask` exist (others read 0).
    Store { slot: usize, reset: u32, mask: u32 },
    /// Storage word `slot` (reset 0) that the hardware also writes, through load port `load`
    /// (`load_en` bit, `load_data` word); a hardware write wins over a host write in the same
    /// cycle. Indices the NIC owns: the host sets them while the ring is off.
    Shared { slot: usize, mask: u32, load: usize },
    /// Storage word `slot` whose bits are set by `irq_set` and cleared by writing 1.
    W1c { slot: usize, mask: u32 },
    /// Write only: a write lands in storage word `slot` (as a write of its twin register
    /// would), a read returns 0. Doorbells.
    WriteOnly { slot: usize, mask: u32 },
}

/// One decoded register.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Byte address in the CSR window (a multiple of 4).
    pub addr: u32,
    pub name: String,
    pub source: Source,
}

/// The table's checks: addresses aligned, unique and in the window; slots in range; each
/// storage slot with one reset value and mask.
pub fn check(entries: &[Entry]) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut slots: Vec<Option<(u32, u32)>> = vec![None; STORE_SLOTS];
    for e in entries {
        if e.addr % 4 != 0 || e.addr >> ADDR_BITS != 0 {
            return Err(format!(
                "{}: address {:#x} unaligned or outside",
                e.name, e.addr
            ));
        }
        if !seen.insert(e.addr) {
            return Err(format!("{}: address {:#x} decoded twice", e.name, e.addr));
        }
        let store = match e.source {
            Source::Const(_) => None,
            Source::Status(s) if s < STATUS_SLOTS => None,
            Source::Status(s) => return Err(format!("{}: status slot {s} out of range", e.name)),
            Source::Store { slot, reset, mask } => Some((slot, reset & mask, mask)),
            Source::Shared { load, .. } if load >= LOAD_SLOTS => {
                return Err(format!("{}: load port {load} out of range", e.name));
            }
            Source::Shared { slot, mask, .. } => Some((slot, 0, mask)),
            Source::W1c { slot, mask } => Some((slot, 0, mask)),
            Source::WriteOnly { .. } => None,
        };
        if let Some((slot, reset, mask)) = store {
            let Some(s) = slots.get_mut(slot) else {
                return Err(format!("{}: storage slot {slot} out of range", e.name));
            };
            if s.is_some_and(|x| x != (reset, mask)) {
                return Err(format!("{}: storage slot {slot} defined twice", e.name));
            }
            *s = Some((reset, mask));
        }
    }
    for e in entries {
        if let Source::WriteOnly { slot, .. } = e.source {
            if slots.get(slot).copied().flatten().is_none() {
                return Err(format!(
                    "{}: write-only twin slot {slot} has no storage",
                    e.name
                ));
            }
        }
    }
    Ok(())
}

#[derive(LogicBlock)]
pub struct CsrFile {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub wr_en: Signal<In, Bit>,
    pub wr_addr: Signal<In, Bits<ADDR_BITS>>,
    pub wr_data: Signal<In, Bits<32>>,
    /// `wr_addr` is decoded.
    pub wr_hit: Signal<Out, Bit>,
    pub rd_addr: Signal<In, Bits<ADDR_BITS>>,
    pub rd_data: Signal<Out, Bits<32>>,
    pub rd_hit: Signal<Out, Bit>,
    /// Status words, slot `i` in bits `32 i + 31 .. 32 i`.
    pub status: Signal<In, Bits<STATUS_W>>,
    /// Bits to set in the W1C storage word (interrupt causes).
    pub irq_set: Signal<In, Bits<32>>,
    /// Hardware writes of shared storage words: port `i` writes word `i` of `load_data`.
    pub load_en: Signal<In, Bits<LOAD_SLOTS>>,
    pub load_data: Signal<In, Bits<LOAD_W>>,
    /// Storage, slot `i` in bits `32 i + 31 .. 32 i`.
    pub store: Signal<Out, Bits<STORE_W>>,
    regs: DFF<Bits<STORE_W>>,
    _entries: Vec<Entry>,
}

impl CsrFile {
    /// A file decoding `entries`; panics if [`check`] refuses them (a table bug of the top).
    pub fn new(entries: Vec<Entry>) -> Self {
        if let Err(e) = check(&entries) {
            panic!("CSR table: {e}");
        }
        CsrFile {
            clock: Default::default(),
            reset: Default::default(),
            wr_en: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            wr_hit: Default::default(),
            rd_addr: Default::default(),
            rd_data: Default::default(),
            rd_hit: Default::default(),
            status: Default::default(),
            irq_set: Default::default(),
            load_en: Default::default(),
            load_data: Default::default(),
            store: Default::default(),
            regs: Default::default(),
            _entries: entries,
        }
    }

    fn find(&self, addr: u64) -> Option<&Entry> {
        self._entries.iter().find(|e| u64::from(e.addr) == addr)
    }

    /// The storage value after reset.
    fn reset_store(&self) -> Bits<STORE_W> {
        let mut v = Bits::<STORE_W>::default();
        for e in &self._entries {
            if let Source::Store { slot, reset, mask } = e.source {
                v.set_bits::<32>(32 * slot, bits::<32>(u64::from(reset & mask)));
            }
        }
        v
    }

    fn w1c(&self) -> Option<(usize, u32)> {
        self._entries.iter().find_map(|e| match e.source {
            Source::W1c { slot, mask } => Some((slot, mask)),
            _ => None,
        })
    }
}

fn word<const N: usize>(v: &Bits<N>, slot: usize) -> u32 {
    v.get_bits::<32>(32 * slot).to_u64() as u32
}

fn hex(bits: usize, v: u64) -> String {
    format!("{bits}'h{v:x}")
}

fn slice(name: &str, slot: usize) -> String {
    format!("{name}[{}:{}]", 32 * slot + 31, 32 * slot)
}

impl Logic for CsrFile {
    fn update(&mut self) {
        self.regs.clock.next = self.clock.val();
        let q = self.regs.q.val();
        self.store.next = q;

        // Read mux.
        let (mut data, mut hit) = (0u32, false);
        if let Some(e) = self.find(self.rd_addr.val().to_u64()) {
            hit = true;
            data = match e.source {
                Source::Const(v) => v,
                Source::Status(s) => word(&self.status.val(), s),
                Source::Store { slot, mask, .. }
                | Source::Shared { slot, mask, .. }
                | Source::W1c { slot, mask } => word(&q, slot) & mask,
                Source::WriteOnly { .. } => 0,
            };
        }
        self.rd_data.next = bits::<32>(u64::from(data));
        self.rd_hit.next = hit;

        // Writes.
        let wr = self.find(self.wr_addr.val().to_u64()).cloned();
        self.wr_hit.next = wr.is_some();
        let mut d = q;
        if let Some((slot, mask)) = self.w1c() {
            let set = self.irq_set.val().to_u64() as u32;
            let mut v = word(&q, slot);
            if self.wr_en.val()
                && wr
                    .as_ref()
                    .is_some_and(|e| e.source == Source::W1c { slot, mask })
            {
                v &= !(self.wr_data.val().to_u64() as u32);
            }
            v = (v | set) & mask;
            d.set_bits::<32>(32 * slot, bits::<32>(u64::from(v)));
        }
        if let (true, Some(e)) = (self.wr_en.val(), wr) {
            let data = self.wr_data.val().to_u64() as u32;
            match e.source {
                Source::Store { slot, mask, .. }
                | Source::Shared { slot, mask, .. }
                | Source::WriteOnly { slot, mask } => {
                    d.set_bits::<32>(32 * slot, bits::<32>(u64::from(data & mask)));
                }
                _ => {}
            }
        }
        let (en, ld) = (self.load_en.val().to_u64(), self.load_data.val());
        for e in &self._entries {
            if let Source::Shared { slot, mask, load } = e.source {
                if en >> load & 1 == 1 {
                    let v = word(&ld, load) & mask;
                    d.set_bits::<32>(32 * slot, bits::<32>(u64::from(v)));
                }
            }
        }
        if self.reset.val() {
            d = self.reset_store();
        }
        self.regs.d.next = d;
    }

    fn connect(&mut self) {
        self.wr_hit.connect();
        self.rd_data.connect();
        self.rd_hit.connect();
        self.store.connect();
        self.regs.clock.connect();
        self.regs.d.connect();
    }

    fn hdl(&self) -> Verilog {
        let a = |addr: u32| hex(ADDR_BITS, u64::from(addr));
        let mut v =
            String::from("always @(*) begin\n    regs$clock = clock;\n    store = regs$q;\n");
        // Read mux.
        v.push_str("    rd_data = 32'h0;\n    rd_hit = 1'b0;\n    case (rd_addr)\n");
        for e in &self._entries {
            let value = match e.source {
                Source::Const(c) => hex(32, u64::from(c)),
                Source::Status(s) => slice("status", s),
                Source::Store { slot, mask, .. }
                | Source::Shared { slot, mask, .. }
                | Source::W1c { slot, mask } => {
                    format!("({} & {})", slice("regs$q", slot), hex(32, u64::from(mask)))
                }
                Source::WriteOnly { .. } => hex(32, 0),
            };
            v.push_str(&format!(
                "        {}: begin rd_hit = 1'b1; rd_data = {value}; end // {}\n",
                a(e.addr),
                e.name
            ));
        }
        v.push_str("        default: begin rd_hit = 1'b0; rd_data = 32'h0; end\n    endcase\n");
        // Write decode.
        v.push_str("    wr_hit = 1'b0;\n    case (wr_addr)\n");
        for e in &self._entries {
            v.push_str(&format!("        {}: wr_hit = 1'b1;\n", a(e.addr)));
        }
        v.push_str("        default: wr_hit = 1'b0;\n    endcase\n");
        // Next storage.
        v.push_str("    regs$d = regs$q;\n");
        if let Some((slot, mask)) = self.w1c() {
            let addr = self
                ._entries
                .iter()
                .find(|e| matches!(e.source, Source::W1c { .. }))
                .map(|e| e.addr)
                .expect("a W1C entry");
            v.push_str(&format!(
                "    if (wr_en && wr_addr == {}) {s} = ((regs$q[{hi}:{lo}] & ~wr_data) | irq_set) & {m};\n    else {s} = (regs$q[{hi}:{lo}] | irq_set) & {m};\n",
                a(addr),
                s = slice("regs$d", slot),
                hi = 32 * slot + 31,
                lo = 32 * slot,
                m = hex(32, u64::from(mask)),
            ));
        }
        v.push_str("    if (wr_en) begin\n        case (wr_addr)\n");
        for e in &self._entries {
            if let Source::Store { slot, mask, .. }
            | Source::Shared { slot, mask, .. }
            | Source::WriteOnly { slot, mask } = e.source
            {
                v.push_str(&format!(
                    "            {}: {} = wr_data & {};\n",
                    a(e.addr),
                    slice("regs$d", slot),
                    hex(32, u64::from(mask))
                ));
            }
        }
        v.push_str("            default: ;\n        endcase\n    end\n");
        for e in &self._entries {
            if let Source::Shared { slot, mask, load } = e.source {
                v.push_str(&format!(
                    "    if (load_en[{load}]) {} = {} & {};\n",
                    slice("regs$d", slot),
                    slice("load_data", load),
                    hex(32, u64::from(mask))
                ));
            }
        }
        let reset = self.reset_store();
        let mut words = Vec::new();
        for slot in (0..STORE_SLOTS).rev() {
            words.push(format!("{:08x}", word(&reset, slot)));
        }
        v.push_str(&format!(
            "    if (reset) regs$d = {STORE_W}'h{};\nend\n",
            words.join("_")
        ));
        Verilog::Custom(v)
    }
}
