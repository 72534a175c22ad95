//! The register map: 32-bit registers in self-describing blocks. Every block starts with a
//! header word (type << 16 | version) and the offset of the next block (0 at the end), so a
//! driver finds the blocks it knows by walking the chain from the ID block at 0, as Corundum's
//! does. Queue registers repeat per queue at a fixed stride.

use serde::Serialize;

/// How software may access a register or field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Read only (status, constants, counters).
    Ro,
    /// Read and write.
    Rw,
    /// Write only; reads return 0 (doorbells).
    Wo,
    /// Write 1 to clear.
    W1c,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::Ro => "RO",
            Access::Rw => "RW",
            Access::Wo => "WO",
            Access::W1c => "W1C",
        }
    }
}

/// A bit field of a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Field {
    pub name: &'static str,
    pub lsb: u8,
    pub width: u8,
    pub doc: &'static str,
}

impl Field {
    pub const fn new(name: &'static str, lsb: u8, width: u8, doc: &'static str) -> Field {
        Field {
            name,
            lsb,
            width,
            doc,
        }
    }

    pub fn mask(&self) -> u32 {
        (((1u64 << self.width) - 1) << self.lsb) as u32
    }
}

/// One 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Register {
    pub name: &'static str,
    /// Byte offset inside its block (or inside one queue's registers).
    pub offset: u32,
    pub access: Access,
    /// Value after reset; for constants of a build, the value of the default build.
    pub reset: u32,
    pub fields: &'static [Field],
    pub doc: &'static str,
}

impl Register {
    pub const fn new(
        name: &'static str,
        offset: u32,
        access: Access,
        reset: u32,
        doc: &'static str,
    ) -> Register {
        Register {
            name,
            offset,
            access,
            reset,
            fields: &[],
            doc,
        }
    }

    pub const fn fields(mut self, fields: &'static [Field]) -> Register {
        self.fields = fields;
        self
    }

    /// Its field `name`.
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The bits that exist: those of its fields, or the whole word if it has none.
    pub fn mask(&self) -> u32 {
        if self.fields.is_empty() {
            !0
        } else {
            self.fields.iter().fold(0, |m, f| m | f.mask())
        }
    }
}

/// A register's name as the driver, the dump and the documents spell it: `block.NAME`, or
/// `block[queue].NAME` for a queue's register.
pub fn qualified_name(block: &str, queue: Option<u32>, reg: &str) -> String {
    match queue {
        Some(q) => format!("{block}[{q}].{reg}"),
        None => format!("{block}.{reg}"),
    }
}

/// An interrupt cause (`CQ`, `RAW_RX`, ...): its bit in IRQ_ENABLE and IRQ_STATUS.
pub fn irq_cause(name: &str) -> Option<&'static Field> {
    IRQ_FIELDS.iter().find(|f| f.name == name)
}

/// A ring register (of every queue block) by name.
pub fn ring_register(name: &str) -> Option<&'static Register> {
    RING.iter().find(|r| r.name == name)
}

/// Registers that repeat once per queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Repeat {
    /// Which count of the ID block says how many there are.
    pub count: &'static str,
    /// Offset of queue 0's registers inside the block.
    pub first: u32,
    pub stride: u32,
}

/// A block of the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Block {
    pub name: &'static str,
    pub type_id: u16,
    pub version: u16,
    /// Byte offset of the block in the CSR window.
    pub base: u32,
    /// Bytes the block spans (the next block starts at or after base + span).
    pub span: u32,
    /// The header (type/version, next) and the block's own registers.
    pub registers: &'static [Register],
    /// Registers per queue, if the block holds queues.
    pub per_queue: Option<(Repeat, &'static [Register])>,
    pub doc: &'static str,
}

/// Offset of the header word and of the next-block pointer in every block.
pub const HDR: u32 = 0x00;
pub const NEXT: u32 = 0x04;

const fn hdr(type_id: u16, version: u16) -> Register {
    Register::new(
        "BLOCK_HDR",
        HDR,
        Access::Ro,
        (type_id as u32) << 16 | version as u32,
        "type << 16 | version of this block",
    )
    .fields(HDR_FIELDS)
}

const HDR_FIELDS: &[Field] = &[
    Field::new("VERSION", 0, 16, "block version"),
    Field::new("TYPE", 16, 16, "block type"),
];

const fn next(to: u32) -> Register {
    Register::new(
        "BLOCK_NEXT",
        NEXT,
        Access::Ro,
        to,
        "byte offset of the next block, 0 at the end of the chain",
    )
}

/// "RNIC" in ASCII.
pub const MAGIC: u32 = 0x524E_4943;
/// Version of this map; bumped when a block changes incompatibly.
pub const MAP_VERSION: u32 = 0x0001_0000;

/// Defaults of the full build (LFE5UM5G-85F).
pub const DEFAULT_QPS: u32 = 1024;
pub const DEFAULT_MRS: u32 = 1024;
pub const DEFAULT_CQS: u32 = 1024;

pub const FEATURE_RC: u32 = 1 << 0;
pub const FEATURE_UD: u32 = 1 << 1;
pub const FEATURE_RAW_QUEUES: u32 = 1 << 2;
pub const FEATURE_DCQCN: u32 = 1 << 3;
pub const FEATURE_PFC: u32 = 1 << 4;

/// Interrupt causes (IRQ_STATUS / IRQ_ENABLE bits).
pub const IRQ_FIELDS: &[Field] = &[
    Field::new(
        "CQ",
        0,
        1,
        "a completion queue armed for events has a new entry",
    ),
    Field::new("RAW_RX", 1, 1, "a frame arrived on the raw receive ring"),
    Field::new(
        "RAW_TX",
        2,
        1,
        "the raw transmit ring drained below its threshold",
    ),
    Field::new("LINK", 3, 1, "the link went up or down"),
    Field::new("ERROR", 4, 1, "a DMA error or a QP entered ERR"),
];

/// A ring index: free running, 16 bits; entry `INDEX mod 2^LOG_SIZE`; a ring is full when
/// the producer is `2^LOG_SIZE` ahead of the consumer. The NIC writes the index it owns only
/// while the ring is enabled; the host sets both while it is not.
pub const INDEX: &[Field] = &[Field::new(
    "INDEX",
    0,
    16,
    "free-running index (the entry is INDEX mod 2^LOG_SIZE)",
)];

/// Ring registers: one set per queue (work, receive, completion and raw rings alike).
pub const RING: &[Register] = &[
    Register::new(
        "BASE_LO",
        0x00,
        Access::Rw,
        0,
        "ring base device address, low 32 bits (4 KiB aligned)",
    )
    .fields(&[Field::new(
        "ADDR",
        12,
        20,
        "address bits 31:12 (bits 11:0 are 0)",
    )]),
    Register::new(
        "BASE_HI",
        0x04,
        Access::Rw,
        0,
        "ring base device address, high 32 bits",
    ),
    Register::new(
        "SIZE",
        0x08,
        Access::Rw,
        0,
        "log2 of the entries, enable and the CQ it reports to",
    )
    .fields(&[
        Field::new(
            "LOG_SIZE",
            0,
            5,
            "log2 of the number of entries (0: ring unused)",
        ),
        Field::new("ENABLE", 8, 1, "the engine serves this ring"),
        Field::new(
            "ARM",
            9,
            1,
            "completion rings: raise an interrupt on the next entry (cleared when it fires)",
        ),
        Field::new(
            "CQ",
            16,
            16,
            "work and receive rings: the completion queue they report to",
        ),
    ]),
    Register::new(
        "PROD",
        0x0C,
        Access::Rw,
        0,
        "producer index (written by the host for work rings, by the NIC for completion rings)",
    )
    .fields(INDEX),
    Register::new(
        "CONS",
        0x10,
        Access::Rw,
        0,
        "consumer index (written by the NIC for work rings, by the host for completion rings)",
    )
    .fields(INDEX),
    Register::new(
        "DOORBELL",
        0x14,
        Access::Wo,
        0,
        "write the index the host owns (work rings: producer; completion rings: consumer); the engine wakes for this ring",
    )
    .fields(INDEX),
];

/// Counter names of the receive parser, in the order of its counter ports.
pub const RX_COUNTERS: [&str; 12] = [
    "RX_FRAMES",
    "RX_ACCEPTED",
    "RX_BYPASS",
    "RX_DROP_OVERSIZE",
    "RX_DROP_TRUNCATED",
    "RX_DROP_FRAGMENT",
    "RX_DROP_CHECKSUM",
    "RX_DROP_LENGTH",
    "RX_DROP_TVER",
    "RX_DROP_OPCODE",
    "RX_DROP_PADCNT",
    "RX_DROP_ICRC",
];

const fn ro(name: &'static str, offset: u32, doc: &'static str) -> Register {
    Register::new(name, offset, Access::Ro, 0, doc)
}

const ID: Block = Block {
    name: "id",
    type_id: 0x0001,
    version: 1,
    base: 0x0000,
    span: 0x100,
    registers: &[
        hdr(0x0001, 1),
        next(0x0100),
        Register::new("MAGIC", 0x08, Access::Ro, MAGIC, "\"RNIC\" in ASCII"),
        Register::new(
            "MAP_VERSION",
            0x0C,
            Access::Ro,
            MAP_VERSION,
            "version of the register map (major << 16 | minor)",
        ),
        ro(
            "GIT_HASH",
            0x10,
            "first 32 bits of the git commit the bitstream was built from",
        ),
        ro("BUILD_DATE", 0x14, "build date as BCD YYYYMMDD"),
        Register::new(
            "FEATURES",
            0x18,
            Access::Ro,
            FEATURE_RC | FEATURE_UD | FEATURE_RAW_QUEUES,
            "what this build has",
        )
        .fields(&[
            Field::new("RC", 0, 1, "reliable connection"),
            Field::new("UD", 1, 1, "unreliable datagram"),
            Field::new("RAW_QUEUES", 2, 1, "raw Ethernet rings"),
            Field::new(
                "DCQCN",
                3,
                1,
                "per-QP reaction point and notification point",
            ),
            Field::new("PFC", 4, 1, "priority flow control"),
        ]),
        Register::new(
            "NUM_QPS",
            0x1C,
            Access::Ro,
            DEFAULT_QPS,
            "queue pairs (and send and receive rings) of this build",
        ),
        Register::new("NUM_MRS", 0x20, Access::Ro, DEFAULT_MRS, "memory regions"),
        Register::new(
            "NUM_CQS",
            0x24,
            Access::Ro,
            DEFAULT_CQS,
            "completion queues",
        ),
        Register::new("DATA_WIDTH", 0x28, Access::Ro, 64, "datapath width in bits"),
        Register::new("CLOCK_KHZ", 0x2C, Access::Ro, 125_000, "core clock in kHz"),
    ],
    per_queue: None,
    doc: "identity and size of the build; always at offset 0",
};

const CTRL: Block = Block {
    name: "ctrl",
    type_id: 0x0002,
    version: 1,
    base: 0x0100,
    span: 0x100,
    registers: &[
        hdr(0x0002, 1),
        next(0x0200),
        Register::new("CTRL", 0x08, Access::Rw, 0, "reset and enable").fields(&[
            Field::new(
                "RESET",
                0,
                1,
                "write 1: reset the transport engines and rings (self-clearing)",
            ),
            Field::new("ENABLE", 1, 1, "the NIC sends and receives"),
        ]),
        ro("STATUS", 0x0C, "link and reset state").fields(&[
            Field::new("LINK_UP", 0, 1, "the MAC has a link"),
            Field::new("RESET_DONE", 1, 1, "the last reset has finished"),
        ]),
        Register::new(
            "IRQ_ENABLE",
            0x10,
            Access::Rw,
            0,
            "interrupt causes that raise the interrupt",
        )
        .fields(IRQ_FIELDS),
        Register::new(
            "IRQ_STATUS",
            0x14,
            Access::W1c,
            0,
            "pending interrupt causes; write 1 to clear",
        )
        .fields(IRQ_FIELDS),
        Register::new(
            "MAC_LO",
            0x18,
            Access::Rw,
            0,
            "the port's MAC address, low 32 bits",
        ),
        Register::new(
            "MAC_HI",
            0x1C,
            Access::Rw,
            0,
            "the port's MAC address, high 16 bits",
        )
        .fields(&[Field::new("MAC", 0, 16, "bytes 0-1 of the MAC")]),
        Register::new(
            "IPV4",
            0x20,
            Access::Rw,
            0,
            "the port's IPv4 address (its GID ::ffff:a.b.c.d)",
        ),
    ],
    per_queue: None,
    doc: "control, status and interrupts",
};

const COUNTERS: Block = Block {
    name: "counters",
    type_id: 0x0003,
    version: 1,
    base: 0x0200,
    span: 0x100,
    registers: &[
        hdr(0x0003, 1),
        next(0x0300),
        ro("RX_FRAMES", 0x08, "frames received"),
        ro(
            "RX_ACCEPTED",
            0x0C,
            "RoCEv2 frames accepted by the receive parser",
        ),
        ro(
            "RX_BYPASS",
            0x10,
            "frames that are not RoCEv2, to the raw receive ring",
        ),
        ro("RX_DROP_OVERSIZE", 0x14, "dropped: longer than 9216 bytes"),
        ro(
            "RX_DROP_TRUNCATED",
            0x18,
            "dropped: shorter than their headers say",
        ),
        ro(
            "RX_DROP_FRAGMENT",
            0x1C,
            "dropped: IPv4 fragments or options",
        ),
        ro(
            "RX_DROP_CHECKSUM",
            0x20,
            "dropped: bad IPv4 header checksum",
        ),
        ro(
            "RX_DROP_LENGTH",
            0x24,
            "dropped: IP and UDP lengths disagree with the frame",
        ),
        ro("RX_DROP_TVER", 0x28, "dropped: BTH TVer other than 0"),
        ro(
            "RX_DROP_OPCODE",
            0x2C,
            "dropped: opcode no transport defines",
        ),
        ro(
            "RX_DROP_PADCNT",
            0x30,
            "dropped: PadCnt larger than the payload",
        ),
        ro("RX_DROP_ICRC", 0x34, "dropped: bad ICRC"),
        ro("TX_FRAMES", 0x38, "frames sent"),
        ro("DMA_READ_ERRORS", 0x3C, "DMA reads the host bus refused"),
        ro("DMA_WRITE_ERRORS", 0x40, "DMA writes the host bus refused"),
        ro(
            "RING_ERRORS",
            0x44,
            "ring entries refused: a producer index more than the ring ahead of the consumer, or a descriptor with a bad length",
        ),
        ro(
            "RAW_RX_DROPS",
            0x48,
            "frames for the raw receive ring dropped: no buffer posted while its FIFO was full, or marked bad by the MAC",
        ),
        ro(
            "RAW_TX_FRAMES",
            0x4C,
            "frames sent from the raw transmit ring",
        ),
        ro(
            "RAW_RX_FRAMES",
            0x50,
            "frames written to the raw receive ring",
        ),
        ro(
            "WQE_FETCHED",
            0x54,
            "work requests read from the send and receive rings",
        ),
        ro(
            "CQE_WRITTEN",
            0x58,
            "completions written to completion rings",
        ),
        ro(
            "CQ_OVERFLOWS",
            0x5C,
            "completions refused: their completion ring was disabled or full",
        ),
    ],
    per_queue: None,
    doc: "event and drop counters (32 bits, wrapping); the receive drops in the parser's check order",
};

const RAW: Block = Block {
    name: "raw",
    type_id: 0x0004,
    version: 1,
    base: 0x0300,
    span: 0x100,
    registers: &[hdr(0x0004, 1), next(0x1000)],
    per_queue: Some((
        Repeat {
            count: "RAW_RINGS",
            first: 0x20,
            stride: 0x20,
        },
        RING,
    )),
    doc: "raw Ethernet rings: ring 0 transmits frames into the MAC's stream, ring 1 receives the parser's bypass (ARP, IP, ...), ring 2 is ring 1's completion ring",
};

const SQ: Block = Block {
    name: "send_queues",
    type_id: 0x0010,
    version: 1,
    base: 0x1000,
    span: 0x10_0000,
    registers: &[hdr(0x0010, 1), next(0x10_1000)],
    per_queue: Some((
        Repeat {
            count: "NUM_QPS",
            first: 0x1000,
            stride: 0x20,
        },
        RING,
    )),
    doc: "one send ring per QP (queue i at base + 0x1000 + 0x20 * i)",
};

const RQ: Block = Block {
    name: "receive_queues",
    type_id: 0x0011,
    version: 1,
    base: 0x10_1000,
    span: 0x10_0000,
    registers: &[hdr(0x0011, 1), next(0x20_1000)],
    per_queue: Some((
        Repeat {
            count: "NUM_QPS",
            first: 0x1000,
            stride: 0x20,
        },
        RING,
    )),
    doc: "one receive ring per QP",
};

const CQ: Block = Block {
    name: "completion_queues",
    type_id: 0x0012,
    version: 1,
    base: 0x20_1000,
    span: 0x10_0000,
    registers: &[hdr(0x0012, 1), next(0x30_1000)],
    per_queue: Some((
        Repeat {
            count: "NUM_CQS",
            first: 0x1000,
            stride: 0x20,
        },
        RING,
    )),
    doc: "completion rings; entries carry a phase bit that flips on every wrap, so the host polls memory and zeroes nothing",
};

/// The words of a table row's register window: word `k` holds row bits `32k..32k+31`.
pub const ROW: &[Register] = &[
    Register::new("WORD0", 0x00, Access::Rw, 0, "row bits 31:0"),
    Register::new("WORD1", 0x04, Access::Rw, 0, "row bits 63:32"),
    Register::new("WORD2", 0x08, Access::Rw, 0, "row bits 95:64"),
    Register::new("WORD3", 0x0C, Access::Rw, 0, "row bits 127:96"),
    Register::new("WORD4", 0x10, Access::Rw, 0, "row bits 159:128"),
    Register::new("WORD5", 0x14, Access::Rw, 0, "row bits 191:160"),
    Register::new("WORD6", 0x18, Access::Rw, 0, "row bits 223:192"),
    Register::new(
        "WORD7",
        0x1C,
        Access::Rw,
        0,
        "row bits 255:224; writing it commits the row (words 0-6 as last written, to any row)",
    ),
];

const AV: Block = Block {
    name: "address_vectors",
    type_id: 0x0020,
    version: 1,
    base: 0x30_1000,
    span: 0x10_0000,
    registers: &[hdr(0x0020, 1), next(0x40_1000)],
    per_queue: Some((
        Repeat {
            count: "NUM_QPS",
            first: 0x1000,
            stride: 0x20,
        },
        ROW,
    )),
    doc: "the address vector table (desc::ADDR_VECTOR), one row per QP: write WORD0..WORD6, then WORD7, which commits the whole row at once, so an engine never sees half a row; reads return the committed row",
};

const MR: Block = Block {
    name: "memory_regions",
    type_id: 0x0021,
    version: 1,
    base: 0x40_1000,
    span: 0x10_0000,
    registers: &[hdr(0x0021, 1), next(0x50_1000)],
    per_queue: Some((
        Repeat {
            count: "NUM_MRS",
            first: 0x1000,
            stride: 0x20,
        },
        ROW,
    )),
    doc: "the memory region table (desc::MR_ENTRY), one row per key index (key >> 8): write WORD0..WORD6, then WORD7, which commits the row",
};

const QP: Block = Block {
    name: "qp_attributes",
    type_id: 0x0022,
    version: 1,
    base: 0x50_1000,
    span: 0x10_0000,
    registers: &[hdr(0x0022, 1), next(0)],
    per_queue: Some((
        Repeat {
            count: "NUM_QPS",
            first: 0x1000,
            stride: 0x20,
        },
        ROW,
    )),
    doc: "the QP attribute table (desc::QP_ATTR), the driver's part of each QP's context: write WORD0..WORD6, then WORD7, which commits the row",
};

/// Raw rings of every build.
pub const RAW_RINGS: u32 = 3;

/// Every block, in chain order.
pub const BLOCKS: &[Block] = &[ID, CTRL, COUNTERS, RAW, SQ, RQ, CQ, AV, MR, QP];

/// How many times a block's queue registers repeat in the default build.
pub fn repeat_count(r: &Repeat) -> u32 {
    Build::DEFAULT.count(r)
}

/// What one build of the NIC has: the values of the ID block that differ between builds, and
/// how often the queue registers repeat. The register map's own reset values are those of
/// [`Build::DEFAULT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Build {
    pub features: u32,
    pub qps: u32,
    pub mrs: u32,
    pub cqs: u32,
    pub clock_khz: u32,
    pub git_hash: u32,
    /// BCD YYYYMMDD.
    pub build_date: u32,
}

impl Build {
    /// The full build (LFE5UM5G-85F).
    pub const DEFAULT: Build = Build {
        features: FEATURE_RC | FEATURE_UD | FEATURE_RAW_QUEUES,
        qps: DEFAULT_QPS,
        mrs: DEFAULT_MRS,
        cqs: DEFAULT_CQS,
        clock_khz: 125_000,
        git_hash: 0,
        build_date: 0,
    };

    /// How many times `r` repeats in this build.
    pub fn count(&self, r: &Repeat) -> u32 {
        match r.count {
            "NUM_QPS" => self.qps,
            "NUM_CQS" => self.cqs,
            "NUM_MRS" => self.mrs,
            "RAW_RINGS" => RAW_RINGS,
            other => panic!("unknown count {other}"),
        }
    }

    /// The value of `reg` of `block` after reset in this build.
    pub fn reset(&self, block: &Block, reg: &Register) -> u32 {
        if block.name != "id" {
            return reg.reset;
        }
        match reg.name {
            "FEATURES" => self.features,
            "NUM_QPS" => self.qps,
            "NUM_MRS" => self.mrs,
            "NUM_CQS" => self.cqs,
            "CLOCK_KHZ" => self.clock_khz,
            "GIT_HASH" => self.git_hash,
            "BUILD_DATE" => self.build_date,
            _ => reg.reset,
        }
    }

    /// Every register of this build in address order: (byte offset, block, queue, register).
    pub fn registers(&self) -> Vec<(u32, &'static Block, Option<u32>, &'static Register)> {
        let mut out = Vec::new();
        for b in BLOCKS {
            for r in b.registers {
                out.push((b.base + r.offset, b, None, r));
            }
            if let Some((rep, regs)) = &b.per_queue {
                for q in 0..self.count(rep) {
                    for r in *regs {
                        out.push((
                            b.base + rep.first + rep.stride * q + r.offset,
                            b,
                            Some(q),
                            r,
                        ));
                    }
                }
            }
        }
        out.sort_by_key(|x| x.0);
        out
    }
}

/// A register by `block` and name; for queue registers, of queue `queue`. Returns its byte
/// offset in the CSR window.
pub fn offset(block: &str, name: &str, queue: Option<u32>) -> Option<u32> {
    let b = BLOCKS.iter().find(|b| b.name == block)?;
    match queue {
        None => b
            .registers
            .iter()
            .find(|r| r.name == name)
            .map(|r| b.base + r.offset),
        Some(q) => {
            let (rep, regs) = b.per_queue?;
            let r = regs.iter().find(|r| r.name == name)?;
            (q < repeat_count(&rep)).then(|| b.base + rep.first + rep.stride * q + r.offset)
        }
    }
}
