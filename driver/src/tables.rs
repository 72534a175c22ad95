//! The NIC's tables in block RAM, written through their register windows (`regs::ROW`: eight
//! words per row, word 7 last, which commits the row): today the address vector table
//! (`desc::ADDR_VECTOR`), one row per QP. Rows are encoded here from the verbs API's own
//! types, so an address vector is defined once from `modify_qp` to the hardware.

use std::net::IpAddr;

use rnic_regmap::desc::ADDR_VECTOR;
use rnic_transport::nic::rxe_source_port;
use rnic_transport::verbs::AddressVector;

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
    let mut bytes = [0u8; 32];
    let fields: [(&str, u64); 9] = [
        ("DMAC", av.dmac.to_u64()),
        ("DGID_LO", u64::from_be_bytes(g[8..].try_into().unwrap())),
        ("DGID_HI", u64::from_be_bytes(g[..8].try_into().unwrap())),
        ("SGID_INDEX", u64::from(sgid_index)),
        ("UDP_SPORT", u64::from(sport)),
        ("TRAFFIC_CLASS", u64::from(av.traffic_class)),
        ("HOP_LIMIT", u64::from(av.hop_limit)),
        ("FLOW_LABEL", u64::from(av.flow_label)),
        ("V6", u64::from(v6)),
    ];
    for (name, v) in fields {
        assert!(ADDR_VECTOR.set(&mut bytes, name, v), "ADDR_VECTOR.{name}");
    }
    let mut row = [0u32; 8];
    for (k, w) in row.iter_mut().enumerate() {
        *w = u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().unwrap());
    }
    Ok(row)
}

/// Writes row `row` of the address vector table (word 7 last: it commits the row).
pub fn write_av(t: &mut (impl Transport + ?Sized), row: u32, words: &Row) -> Result<()> {
    for (k, w) in words.iter().enumerate() {
        t.write32(off("address_vectors", &format!("WORD{k}"), Some(row)), *w)?;
    }
    Ok(())
}

/// Reads row `row` of the address vector table back.
pub fn read_av(t: &mut (impl Transport + ?Sized), row: u32) -> Result<Row> {
    let mut out = [0u32; 8];
    for (k, w) in out.iter_mut().enumerate() {
        *w = t.read32(off("address_vectors", &format!("WORD{k}"), Some(row)))?;
    }
    Ok(out)
}
