//! The NIC's tables in block RAM, written through their register windows (`regs::ROW`: eight
//! words per row, word 7 last, which commits the row): the address vector table
//! (`desc::ADDR_VECTOR`, one row per QP), the memory region table (`desc::MR_ENTRY`, one row
//! per key index) and the QP attribute table (`desc::QP_ATTR`). Rows are encoded here from the
//! verbs API's own types, so a QP's path, a region and a QP's attributes are each defined once
//! from the verbs call to the hardware.

use std::net::IpAddr;

use rnic_regmap::desc::{ADDR_VECTOR, Format, MR_ENTRY, QP_ATTR};
use rnic_transport::mr::MrInfo;
use rnic_transport::nic::rxe_source_port;
use rnic_transport::verbs::{AddressVector, QpAttr, QpType};

use crate::registers::off;
use crate::transport::{Result, Transport, TransportError};

/// A table row as its eight register words.
pub type Row = [u32; 8];

/// The row of `av` for QP `qpn`, our address being entry `sgid_index` of the GID table. A UDP
/// source port of 0 becomes rxe's port for the QPN, as the model sends it.
pub fn encode_av(av: &AddressVector, sgid_index: u8, qpn: u32) -> Result<Row> {
    let (v6, dgid) = match (av.sip, av.dip) {
        (IpAddr::V4(_), IpAddr::V4(d)) => (false, d.to_ipv6_mapped()),
        (IpAddr::V6(_), IpAddr::V6(d)) => (true, d),
        _ => {
            return Err(TransportError(format!(
                "address vector from {} to {}: both addresses must be IPv4 or both IPv6",
                av.sip, av.dip
            )));
        }
    };
    if sgid_index >= 16 || av.flow_label > 0xF_FFFF {
        return Err(TransportError(format!(
            "address vector: GID index {sgid_index} (0..16), flow label {:#x} (20 bits)",
            av.flow_label
        )));
    }
    let g = dgid.octets();
    let sport = if av.udp_sport != 0 {
        av.udp_sport
    } else {
        rxe_source_port(qpn)
    };
    row_of(
        &ADDR_VECTOR,
        &[
            ("DMAC", av.dmac.to_u64()),
            ("DGID_LO", u64::from_be_bytes(g[8..].try_into().unwrap())),
            ("DGID_HI", u64::from_be_bytes(g[..8].try_into().unwrap())),
            ("SGID_INDEX", u64::from(sgid_index)),
            ("UDP_SPORT", u64::from(sport)),
            ("TRAFFIC_CLASS", u64::from(av.traffic_class)),
            ("HOP_LIMIT", u64::from(av.hop_limit)),
            ("FLOW_LABEL", u64::from(av.flow_label)),
            ("V6", u64::from(v6)),
        ],
    )
}

/// A row of `fmt` from field values; a value too wide for its field is refused, naming it.
fn row_of(fmt: &Format, fields: &[(&str, u64)]) -> Result<Row> {
    let mut bytes = [0u8; 32];
    for &(name, v) in fields {
        if !fmt.set(&mut bytes, name, v) {
            return Err(TransportError(format!(
                "{}.{name}: {v:#x} does not fit its field",
                fmt.name
            )));
        }
    }
    let mut row = [0u32; 8];
    for (k, w) in row.iter_mut().enumerate() {
        *w = u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().unwrap());
    }
    Ok(row)
}

/// The row of a registered region (its key index is `lkey >> 8`), at device address
/// `dma_base`.
pub fn encode_mr(mr: &MrInfo, dma_base: u64) -> Result<Row> {
    row_of(
        &MR_ENTRY,
        &[
            ("VALID", 1),
            ("KEY_TAG", u64::from(mr.lkey & 0xFF)),
            ("PD", u64::from(mr.pd.0)),
            ("ACCESS", u64::from(mr.access.bits())),
            ("VA", mr.va),
            ("LENGTH", mr.len),
            ("DMA_BASE", dma_base),
        ],
    )
}

/// What a QP's attribute row holds besides its `QpAttr`.
#[derive(Clone, Copy, Debug)]
pub struct QpContext {
    pub qp_type: QpType,
    pub pd: u32,
    pub pkey: u16,
    pub send_cq: u32,
    pub recv_cq: u32,
    pub sig_all: bool,
}

/// The attribute row of a QP.
pub fn encode_qp(a: &QpAttr, c: &QpContext) -> Result<Row> {
    row_of(
        &QP_ATTR,
        &[
            ("STATE", a.state as u64),
            ("TYPE", u64::from(c.qp_type == QpType::Ud)),
            ("ACCESS", u64::from(a.access.bits())),
            ("PD", u64::from(c.pd)),
            ("PATH_MTU", a.path_mtu as u64),
            ("TIMEOUT", u64::from(a.timeout)),
            ("RETRY_CNT", u64::from(a.retry_cnt)),
            ("RNR_RETRY", u64::from(a.rnr_retry)),
            ("MIN_RNR_TIMER", u64::from(a.min_rnr_timer)),
            ("MAX_RD_ATOMIC", u64::from(a.max_rd_atomic)),
            ("MAX_DEST_RD_ATOMIC", u64::from(a.max_dest_rd_atomic)),
            ("DEST_QPN", u64::from(a.dest_qpn)),
            ("SQ_PSN", u64::from(a.sq_psn)),
            ("RQ_PSN", u64::from(a.rq_psn)),
            ("QKEY", u64::from(a.qkey)),
            ("PKEY", u64::from(c.pkey)),
            ("SEND_CQ", u64::from(c.send_cq)),
            ("RECV_CQ", u64::from(c.recv_cq)),
            ("SIG_ALL", u64::from(c.sig_all)),
        ],
    )
}

/// The tables' register blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    AddressVectors,
    MemoryRegions,
    QpAttributes,
}

impl Table {
    pub fn block(self) -> &'static str {
        match self {
            Table::AddressVectors => "address_vectors",
            Table::MemoryRegions => "memory_regions",
            Table::QpAttributes => "qp_attributes",
        }
    }
}

/// Writes row `row` of `table` (word 7 last: it commits the row).
pub fn write_row(
    t: &mut (impl Transport + ?Sized),
    table: Table,
    row: u32,
    words: &Row,
) -> Result<()> {
    for (k, w) in words.iter().enumerate() {
        t.write32(off(table.block(), &format!("WORD{k}"), Some(row)), *w)?;
    }
    Ok(())
}

/// Reads row `row` of `table` back.
pub fn read_row(t: &mut (impl Transport + ?Sized), table: Table, row: u32) -> Result<Row> {
    let mut out = [0u32; 8];
    for (k, w) in out.iter_mut().enumerate() {
        *w = t.read32(off(table.block(), &format!("WORD{k}"), Some(row)))?;
    }
    Ok(out)
}
