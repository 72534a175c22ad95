//! Errors of the wire model. Every parse error names the layer and the byte offset (from the
//! start of the frame) where the problem was found.

use std::fmt;

/// The protocol layer an error belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layer {
    Ethernet,
    Vlan,
    Ipv4,
    Ipv6,
    Udp,
    Bth,
    Reth,
    Aeth,
    ImmDt,
    Ieth,
    AtomicEth,
    AtomicAckEth,
    Deth,
    Cnp,
    Payload,
    Icrc,
}

impl Layer {
    /// The name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Ethernet => "Ethernet header",
            Layer::Vlan => "802.1Q tag",
            Layer::Ipv4 => "IPv4 header",
            Layer::Ipv6 => "IPv6 header",
            Layer::Udp => "UDP header",
            Layer::Bth => "BTH",
            Layer::Reth => "RETH",
            Layer::Aeth => "AETH",
            Layer::ImmDt => "ImmDt",
            Layer::Ieth => "IETH",
            Layer::AtomicEth => "AtomicETH",
            Layer::AtomicAckEth => "AtomicAckETH",
            Layer::Deth => "DETH",
            Layer::Cnp => "CNP body",
            Layer::Payload => "payload",
            Layer::Icrc => "ICRC",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Fewer bytes than the header or the stated length needs.
    Truncated { need: usize, have: usize },
    /// Valid on the wire but outside what RoCEv2 (or this model) handles.
    Unsupported(String),
    /// A field holds a value that is not allowed.
    BadField { field: &'static str, value: u64 },
    /// Two length fields disagree.
    LengthMismatch(String),
    /// An opcode that no transport defines.
    UnknownOpcode(u8),
}

/// A parse error: layer, byte offset from the start of the frame, and what went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub layer: Layer,
    pub offset: usize,
    pub kind: ErrorKind,
}

impl Error {
    pub fn new(layer: Layer, offset: usize, kind: ErrorKind) -> Self {
        Error {
            layer,
            offset,
            kind,
        }
    }

    pub fn truncated(layer: Layer, offset: usize, need: usize, have: usize) -> Self {
        Error::new(layer, offset, ErrorKind::Truncated { need, have })
    }

    pub fn unsupported(layer: Layer, offset: usize, what: impl Into<String>) -> Self {
        Error::new(layer, offset, ErrorKind::Unsupported(what.into()))
    }

    /// A short machine-friendly reason, for counting drops by kind.
    pub fn reason(&self) -> &'static str {
        match self.kind {
            ErrorKind::Truncated { .. } => "truncated",
            ErrorKind::Unsupported(_) => "unsupported",
            ErrorKind::BadField { .. } => "bad_field",
            ErrorKind::LengthMismatch(_) => "length_mismatch",
            ErrorKind::UnknownOpcode(_) => "unknown_opcode",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (layer, off) = (self.layer, self.offset);
        match &self.kind {
            ErrorKind::Truncated { need, have } => write!(
                f,
                "{layer} truncated at offset {off} (needs {need} bytes, {have} present)"
            ),
            ErrorKind::Unsupported(what) => {
                write!(f, "{layer} at offset {off}: unsupported: {what}")
            }
            ErrorKind::BadField { field, value } => {
                write!(f, "{layer} at offset {off}: bad {field} {value:#x}")
            }
            ErrorKind::LengthMismatch(what) => {
                write!(f, "{layer} at offset {off}: length mismatch: {what}")
            }
            ErrorKind::UnknownOpcode(op) => {
                write!(f, "{layer} at offset {off}: unknown opcode {op:#04x}")
            }
        }
    }
}

impl std::error::Error for Error {}

/// A frame description the builder cannot turn into a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// A value does not fit its field.
    OutOfRange {
        field: &'static str,
        value: u64,
        max: u64,
    },
    /// The opcode is not in the table.
    UnknownOpcode(u8),
    /// The opcode needs a header the description lacks.
    MissingHeader { opcode: u8, header: Layer },
    /// The description carries a header the opcode does not have.
    ExtraHeader { opcode: u8, header: Layer },
    /// The opcode carries no payload but the description has one.
    UnexpectedPayload { opcode: u8, len: usize },
    /// The packet does not fit the IP length field.
    TooLong { len: usize },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::OutOfRange { field, value, max } => {
                write!(f, "{field} = {value:#x} does not fit (max {max:#x})")
            }
            BuildError::UnknownOpcode(op) => write!(f, "unknown opcode {op:#04x}"),
            BuildError::MissingHeader { opcode, header } => {
                write!(f, "opcode {opcode:#04x} needs a {header}")
            }
            BuildError::ExtraHeader { opcode, header } => {
                write!(f, "opcode {opcode:#04x} does not carry a {header}")
            }
            BuildError::UnexpectedPayload { opcode, len } => {
                write!(
                    f,
                    "opcode {opcode:#04x} carries no payload ({len} bytes given)"
                )
            }
            BuildError::TooLong { len } => {
                write!(
                    f,
                    "IP packet of {len} bytes does not fit the 16-bit IP length"
                )
            }
        }
    }
}

impl std::error::Error for BuildError {}
