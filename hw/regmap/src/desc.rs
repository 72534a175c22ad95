//! Descriptor and completion formats in host memory: little-endian fields at byte offsets
//! (bits within the bytes for sub-byte fields), one table per format, read and written by
//! [`Format::get`] and [`Format::set`]. The numeric codes are ibverbs' own: `ibv_wr_opcode`,
//! `ibv_send_flags`, `ibv_wc_status`, `ibv_wc_opcode`, `ibv_wc_flags`.

use serde::Serialize;

/// A field of a descriptor: `bits` wide, starting at bit `bit` of byte `byte`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DescField {
    pub name: &'static str,
    pub byte: u16,
    pub bit: u8,
    pub bits: u8,
    pub doc: &'static str,
}

const fn f(name: &'static str, byte: u16, bits: u8, doc: &'static str) -> DescField {
    DescField {
        name,
        byte,
        bit: 0,
        bits,
        doc,
    }
}

/// A descriptor or completion layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Format {
    pub name: &'static str,
    /// Bytes per entry (rings hold entries of this size).
    pub size: u16,
    pub fields: &'static [DescField],
    /// Repeated scatter/gather entries after the fixed part: (first byte, count, entry layout).
    pub sge: Option<(u16, u8)>,
    pub doc: &'static str,
}

/// A scatter/gather entry (16 bytes), repeated in work and receive requests.
pub const SGE: Format = Format {
    name: "sge",
    size: 16,
    fields: &[
        f("ADDR", 0, 64, "virtual address in the MR"),
        f("LENGTH", 8, 32, "bytes"),
        f("LKEY", 12, 32, "local key of the MR"),
    ],
    sge: None,
    doc: "one scatter/gather entry (ibv_sge)",
};

pub const SEND_WQE: Format = Format {
    name: "send_wqe",
    size: 128,
    fields: &[
        f("WR_ID", 0x00, 64, "returned in the completion"),
        f(
            "OPCODE",
            0x08,
            8,
            "ibv_wr_opcode: 0 RDMA_WRITE, 1 RDMA_WRITE_WITH_IMM, 2 SEND, 3 SEND_WITH_IMM, 4 RDMA_READ, 5 ATOMIC_CMP_AND_SWP, 6 ATOMIC_FETCH_AND_ADD",
        ),
        f(
            "FLAGS",
            0x09,
            8,
            "ibv_send_flags: 1 FENCE, 2 SIGNALED, 4 SOLICITED",
        ),
        f(
            "NUM_SGE",
            0x0A,
            8,
            "scatter/gather entries used (at most 4)",
        ),
        f("IMM", 0x0C, 32, "immediate data (the *_WITH_IMM opcodes)"),
        f(
            "REMOTE_ADDR",
            0x10,
            64,
            "RDMA and atomics: remote virtual address",
        ),
        f("RKEY", 0x18, 32, "RDMA and atomics: remote key"),
        f("UD_REMOTE_QPN", 0x1C, 24, "UD: destination QP"),
        f(
            "COMPARE_ADD",
            0x20,
            64,
            "atomics: compare value (CMP_AND_SWP) or addend (FETCH_AND_ADD)",
        ),
        f("SWAP", 0x28, 64, "atomics: swap value"),
        f("UD_REMOTE_QKEY", 0x30, 32, "UD: destination Q_Key"),
        f(
            "UD_AV_INDEX",
            0x34,
            16,
            "UD: address vector table entry of the destination",
        ),
    ],
    sge: Some((0x40, 4)),
    doc: "a send work request (ibv_send_wr): 64 bytes, then up to 4 scatter/gather entries",
};

pub const RECV_WQE: Format = Format {
    name: "recv_wqe",
    size: 64,
    fields: &[
        f("WR_ID", 0x00, 64, "returned in the completion"),
        f(
            "NUM_SGE",
            0x08,
            8,
            "scatter/gather entries used (at most 3)",
        ),
    ],
    sge: Some((0x10, 3)),
    doc: "a receive work request (ibv_recv_wr): 16 bytes, then up to 3 scatter/gather entries",
};

pub const CQE: Format = Format {
    name: "cqe",
    size: 32,
    fields: &[
        f("WR_ID", 0x00, 64, "the work request's wr_id"),
        f(
            "BYTE_LEN",
            0x08,
            32,
            "bytes received (receives, READ, atomics)",
        ),
        f("IMM", 0x0C, 32, "immediate data when FLAGS has WITH_IMM"),
        f("QPN", 0x10, 24, "the QP the work request was posted to"),
        f("SRC_QP", 0x14, 24, "UD receives: the sender's QPN"),
        f(
            "STATUS",
            0x18,
            8,
            "ibv_wc_status (0 SUCCESS ... 13 RNR_RETRY_EXC_ERR)",
        ),
        f(
            "OPCODE",
            0x19,
            8,
            "ibv_wc_opcode (0 SEND ... 4 FETCH_ADD, 128 RECV, 129 RECV_RDMA_WITH_IMM)",
        ),
        f("FLAGS", 0x1A, 8, "ibv_wc_flags: 1 GRH, 2 WITH_IMM"),
        f(
            "WQE_INDEX",
            0x1C,
            16,
            "index of the work request in its ring",
        ),
        DescField {
            name: "PHASE",
            byte: 0x1F,
            bit: 7,
            bits: 1,
            doc: "flips on every pass of the ring: an entry is new when it differs from the last pass's",
        },
    ],
    sge: None,
    doc: "a completion (ibv_wc); written after the payload writes it reports are done",
};

pub const RAW_TX_DESC: Format = Format {
    name: "raw_tx_desc",
    size: 16,
    fields: &[
        f(
            "ADDR",
            0x00,
            64,
            "device address of the frame (without FCS), 8-byte aligned",
        ),
        f("LEN", 0x08, 16, "frame length, 14..=9216 bytes"),
        f("FLAGS", 0x0A, 16, "reserved, 0"),
    ],
    sge: None,
    doc: "a frame for the raw transmit ring; the NIC advances the ring's CONS once the frame is in its transmit FIFO (and raises RAW_TX when the ring is empty)",
};

pub const RAW_RX_DESC: Format = Format {
    name: "raw_rx_desc",
    size: 16,
    fields: &[
        f(
            "ADDR",
            0x00,
            64,
            "device address of a receive buffer, 8-byte aligned",
        ),
        f("BUF_LEN", 0x08, 16, "buffer size in bytes, at least 1"),
    ],
    sge: None,
    doc: "a receive buffer for the raw receive ring",
};

pub const RAW_CQE: Format = Format {
    name: "raw_cqe",
    size: 16,
    fields: &[
        f("LEN", 0x00, 16, "frame length written to the buffer"),
        f(
            "STATUS",
            0x02,
            8,
            "0 ok, 1 the frame was longer than the buffer (cut), 2 the host refused the write",
        ),
        f(
            "RING_INDEX",
            0x04,
            16,
            "index of the descriptor it completes",
        ),
        DescField {
            name: "PHASE",
            byte: 0x0F,
            bit: 7,
            bits: 1,
            doc: "flips on every pass of the ring",
        },
    ],
    sge: None,
    doc: "a raw ring completion (the frame received or sent)",
};

/// Every format.
/// Fields packed one after another from bit 0, in order: what a table row in block RAM holds
/// (its register window shows the row's bits in order, word 0 first).
const fn packed<const N: usize>(spec: [(&'static str, u8, &'static str); N]) -> [DescField; N] {
    let mut out = [DescField {
        name: "",
        byte: 0,
        bit: 0,
        bits: 0,
        doc: "",
    }; N];
    let mut at = 0usize;
    let mut i = 0;
    while i < N {
        out[i] = DescField {
            name: spec[i].0,
            byte: (at / 8) as u16,
            bit: (at % 8) as u8,
            bits: spec[i].1,
            doc: spec[i].2,
        };
        at += spec[i].1 as usize;
        i += 1;
    }
    out
}

/// Bits a packed format's fields fill.
pub const fn packed_bits(fields: &[DescField]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < fields.len() {
        n += fields[i].bits as usize;
        i += 1;
    }
    n
}

const AV_FIELDS: [DescField; 9] = packed([
    ("DMAC", 48, "the peer's MAC"),
    (
        "DGID_LO",
        64,
        "the peer's GID, bytes 8-15 as a big-endian number (IPv4: 0xFFFF << 32 | address)",
    ),
    (
        "DGID_HI",
        64,
        "the peer's GID, bytes 0-7 as a big-endian number (IPv4: 0)",
    ),
    (
        "SGID_INDEX",
        4,
        "our address: an entry of the NIC's GID table",
    ),
    (
        "UDP_SPORT",
        16,
        "UDP source port (rxe: 0xC000 | hash of the QPN; the driver resolves it)",
    ),
    (
        "TRAFFIC_CLASS",
        8,
        "IP TOS / traffic class byte: DSCP << 2 | ECN",
    ),
    ("HOP_LIMIT", 8, "IPv6 hop limit (IPv4 sends the NIC's TTL)"),
    ("FLOW_LABEL", 20, "IPv6 flow label"),
    ("V6", 1, "the path is IPv6"),
]);

/// A row of the address vector table: where a QP's packets go (the transport model's
/// `AddressVector`, our IP as a GID table index).
pub const ADDR_VECTOR: Format = Format {
    name: "addr_vector",
    size: 32,
    fields: &AV_FIELDS,
    sge: None,
    doc: "a row of the address vector table (233 bits, packed from bit 0), written through the address_vectors block",
};

const MR_FIELDS: [DescField; 7] = packed([
    ("VALID", 1, "the row is a registered region"),
    (
        "KEY_TAG",
        8,
        "the key's low byte: a key names this row when key >> 8 is its index and key & 0xFF this tag",
    ),
    ("PD", 16, "protection domain"),
    (
        "ACCESS",
        4,
        "ibv_access_flags: 1 LOCAL_WRITE, 2 REMOTE_WRITE, 4 REMOTE_READ, 8 REMOTE_ATOMIC",
    ),
    ("VA", 64, "the region's first virtual address"),
    ("LENGTH", 64, "bytes"),
    (
        "DMA_BASE",
        64,
        "the device address of VA (the region is contiguous in device space)",
    ),
]);

/// A row of the memory region table.
pub const MR_ENTRY: Format = Format {
    name: "mr_entry",
    size: 32,
    fields: &MR_FIELDS,
    sge: None,
    doc: "a row of the memory region table (221 bits, packed from bit 0), written through the memory_regions block",
};

const QP_FIELDS: [DescField; 19] = packed([
    (
        "STATE",
        3,
        "ibv_qp_state: 0 RESET, 1 INIT, 2 RTR, 3 RTS, 4 SQD, 5 SQE, 6 ERR",
    ),
    ("TYPE", 1, "0 RC, 1 UD"),
    (
        "ACCESS",
        4,
        "remote access the responder allows (ibv_access_flags, as MR_ENTRY.ACCESS)",
    ),
    ("PD", 16, "protection domain"),
    ("PATH_MTU", 3, "ibv_mtu: 1 256 ... 5 4096"),
    (
        "TIMEOUT",
        5,
        "local ACK timeout: 4.096 us x 2^TIMEOUT; 0 disables",
    ),
    (
        "RETRY_CNT",
        3,
        "retries after a timeout or sequence NAK (7: forever)",
    ),
    ("RNR_RETRY", 3, "retries after an RNR NAK (7: forever)"),
    ("MIN_RNR_TIMER", 5, "the RNR NAK's timer code"),
    (
        "MAX_RD_ATOMIC",
        5,
        "READ/atomic requests this QP may have outstanding",
    ),
    (
        "MAX_DEST_RD_ATOMIC",
        5,
        "READ/atomic requests it accepts outstanding",
    ),
    ("DEST_QPN", 24, "the peer's QPN (RC)"),
    ("SQ_PSN", 24, "the first PSN to send"),
    ("RQ_PSN", 24, "the first PSN expected"),
    ("QKEY", 32, "UD: the Q_Key"),
    ("PKEY", 16, "the P_Key sent and required"),
    ("SEND_CQ", 16, "the completion queue of the send ring"),
    ("RECV_CQ", 16, "the completion queue of the receive ring"),
    (
        "SIG_ALL",
        1,
        "every send request completes (else only those signalled)",
    ),
]);

/// A row of the QP attribute table.
pub const QP_ATTR: Format = Format {
    name: "qp_attr",
    size: 32,
    fields: &QP_FIELDS,
    sge: None,
    doc: "a row of the QP attribute table (206 bits, packed from bit 0): the driver's part of a QP's context, written through the qp_attributes block",
};

const RESP_FIELDS: [DescField; 10] = packed([
    ("EPSN", 24, "the PSN expected next"),
    ("MSN", 24, "messages completed, carried in every ACK's AETH"),
    (
        "SENT_NAK",
        1,
        "the sequence-error NAK of the current gap has been sent",
    ),
    (
        "OPEN",
        2,
        "the message in progress: 0 none, 1 SEND, 2 WRITE",
    ),
    (
        "WR_ADDR",
        64,
        "an open WRITE: the device address its next packet writes to",
    ),
    ("WR_RESID", 32, "an open WRITE: bytes still to come"),
    (
        "WR_LEN",
        32,
        "an open WRITE: its whole length (a WRITE with immediate completes with it); an open SEND: the bytes its packets have written so far",
    ),
    (
        "ERROR",
        1,
        "the responder met a fatal error: the QP is in ERR and requests are dropped",
    ),
    (
        "RES_COUNT",
        5,
        "how many READs and atomics the QP keeps for duplicates (0 to its slots): slot numbers RES_HEAD - RES_COUNT to RES_HEAD - 1 (mod 16), number n in the QP's resp_resource row n mod slots",
    ),
    (
        "RES_HEAD",
        4,
        "the slot number the next READ or atomic takes (mod 16)",
    ),
]);

/// A row of the responder state table.
pub const RESP_STATE: Format = Format {
    name: "resp_state",
    size: 32,
    fields: &RESP_FIELDS,
    sge: None,
    doc: "a row of the responder state table (189 bits, packed from bit 0): the receive engine's part of a QP's context, written by the responder",
};

const RESOURCE_FIELDS: [DescField; 6] = packed([
    ("KIND", 1, "0 a READ, 1 an atomic"),
    (
        "FIRST_PSN",
        24,
        "the request's PSN (a READ: its first response's)",
    ),
    (
        "LAST_PSN",
        24,
        "a READ: its last response's PSN; an atomic: its PSN",
    ),
    (
        "VA",
        64,
        "a READ: the VA its responses start at (a replay moves it); an atomic: the original value",
    ),
    ("LEN", 32, "a READ: its DMA length"),
    ("RKEY", 32, "a READ: its R_Key"),
]);

/// A READ or atomic the responder executed, kept for duplicates.
pub const RESP_RESOURCE: Format = Format {
    name: "resp_resource",
    size: 32,
    fields: &RESOURCE_FIELDS,
    sge: None,
    doc: "a slot of the responder's resource table (177 bits, packed from bit 0): 1 to 16 per QP by the responder's size (the `responder` top 16, `responder_1k` 4), the newest min(MAX_DEST_RD_ATOMIC, slots) READs and atomics executed, so that a duplicate READ is answered again from host memory and a duplicate atomic with its saved original value",
};

const COMP_FIELDS: [DescField; 4] = packed([
    (
        "OLDEST_PSN",
        24,
        "the oldest PSN sent and not yet acknowledged",
    ),
    (
        "RETRY_CNT",
        3,
        "retries left after a timeout or sequence NAK (7: forever); progress restores QP_ATTR.RETRY_CNT",
    ),
    (
        "RNR_RETRY",
        3,
        "retries left after an RNR NAK (7: forever); progress restores QP_ATTR.RNR_RETRY",
    ),
    (
        "STARTED_RETRY",
        1,
        "a retry started by a NAK or an implied NAK is under way: another such retry waits for progress or a timeout",
    ),
]);

/// A row of the completer state table.
pub const COMP_STATE: Format = Format {
    name: "comp_state",
    size: 8,
    fields: &COMP_FIELDS,
    sge: None,
    doc: "a row of the completer state table (31 bits, packed from bit 0): the ACK path's part of a QP's context, written by the completer as it decides each response (`comp_check`)",
};

const REQ_FIELDS: [DescField; 9] = packed([
    ("NEXT_PSN", 24, "the PSN the next request started takes"),
    (
        "NSTART",
        16,
        "the send ring index of the next request to start: those before it (from the consumer) have their PSNs",
    ),
    ("CUR", 16, "the send ring index of the request being sent"),
    (
        "CUR_FIRST",
        24,
        "the first PSN of the request at CUR once started",
    ),
    ("PKT", 24, "the packet of the request at CUR to send next"),
    ("NOACK", 8, "packets sent since the last with AckReq"),
    (
        "PASSED",
        4,
        "READs and atomics CUR has moved past (mod 16): less the completer's count, those outstanding",
    ),
    (
        "SEEN_REWINDS",
        4,
        "the completer's rewind count (mod 16) this row has followed",
    ),
    (
        "SENT_UPTO",
        24,
        "one past the highest PSN sent: a packet below it is a retransmission",
    ),
]);

/// A row of the requester state table.
pub const REQ_STATE: Format = Format {
    name: "req_state",
    size: 32,
    fields: &REQ_FIELDS,
    sge: None,
    doc: "a row of the requester state table (144 bits, packed from bit 0): the send engine's part of a QP's context, written by the requester",
};

const VIEW_FIELDS: [DescField; 6] = packed([
    (
        "CONS",
        16,
        "the send ring's consumer: the oldest request not yet completed",
    ),
    (
        "FRONT_PSN",
        24,
        "the first PSN of the request at CONS (once the requester has started it)",
    ),
    ("RD_DONE", 4, "READs and atomics completed (mod 16)"),
    (
        "REWINDS",
        4,
        "go-back-N rewinds asked of the requester (mod 16): NAKs, implied NAKs, timeouts, ends of RNR waits",
    ),
    ("RNR_WAIT", 1, "an RNR wait is under way: nothing is sent"),
    (
        "ERR",
        1,
        "a request failed: the send ring was flushed, the QP is in error",
    ),
]);

/// A row of the completer's view table.
pub const COMP_VIEW: Format = Format {
    name: "comp_view",
    size: 8,
    fields: &VIEW_FIELDS,
    sge: None,
    doc: "a row of the completer's view table (50 bits, packed from bit 0): what the completer has done with a QP's send ring, written by the completer and read by the requester at each turn",
};

pub const FORMATS: &[Format] = &[
    SGE,
    SEND_WQE,
    RECV_WQE,
    CQE,
    RAW_TX_DESC,
    RAW_RX_DESC,
    RAW_CQE,
    ADDR_VECTOR,
    MR_ENTRY,
    QP_ATTR,
    RESP_STATE,
    RESP_RESOURCE,
    COMP_STATE,
    COMP_VIEW,
    REQ_STATE,
];

impl Format {
    pub fn field(&self, name: &str) -> Option<&'static DescField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The value of field `name` in `buf` (an entry of this format).
    pub fn get(&self, buf: &[u8], name: &str) -> Option<u64> {
        let d = self.field(name)?;
        Some(get(buf, d))
    }

    /// Sets field `name` in `buf`; false when the value does not fit or there is no such field.
    pub fn set(&self, buf: &mut [u8], name: &str, v: u64) -> bool {
        match self.field(name) {
            Some(d) if d.bits == 64 || v >> d.bits == 0 => {
                set(buf, d, v);
                true
            }
            _ => false,
        }
    }
}

/// Reads a little-endian field.
pub fn get(buf: &[u8], d: &DescField) -> u64 {
    let nbytes = (usize::from(d.bit) + usize::from(d.bits)).div_ceil(8);
    let mut raw = [0u8; 16];
    raw[..nbytes].copy_from_slice(&buf[usize::from(d.byte)..usize::from(d.byte) + nbytes]);
    let all = u128::from_le_bytes(raw);
    let mask = if d.bits == 64 {
        u64::MAX
    } else {
        (1u64 << d.bits) - 1
    };
    ((all >> d.bit) as u64) & mask
}

/// Writes a little-endian field, leaving the other bits of its bytes as they were.
pub fn set(buf: &mut [u8], d: &DescField, v: u64) {
    let nbytes = (usize::from(d.bit) + usize::from(d.bits)).div_ceil(8);
    let at = usize::from(d.byte);
    let mut raw = [0u8; 16];
    raw[..nbytes].copy_from_slice(&buf[at..at + nbytes]);
    let mut all = u128::from_le_bytes(raw);
    let mask = if d.bits == 64 {
        u128::from(u64::MAX)
    } else {
        (1u128 << d.bits) - 1
    };
    all &= !(mask << d.bit);
    all |= (u128::from(v) & mask) << d.bit;
    buf[at..at + nbytes].copy_from_slice(&all.to_le_bytes()[..nbytes]);
}
