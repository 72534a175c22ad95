//! The verbs vocabulary: QP types and states, attributes and their masks, access flags, work
//! requests and work completions, with the names and numeric values ibverbs users know
//! (`ibv_qp_attr_mask`, `ibv_access_flags`, `ibv_wc_status`, `ibv_wc_opcode`). Defined once
//! here and shared by the model, the driver's verbs API and (later) the hardware backend.

use std::fmt;
use std::net::IpAddr;

use rnic_wire::MacAddr;
use serde::{Deserialize, Serialize};

/// Declares a set of bit flags over an integer, with named constants and set operations.
macro_rules! flags {
    ($(#[$m:meta])* $name:ident: $t:ty { $($(#[$fm:meta])* $flag:ident = $v:expr, $text:literal;)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
        pub struct $name(pub $t);
        impl $name {
            $($(#[$fm])* pub const $flag: $name = $name($v);)*
            pub const NONE: $name = $name(0);
            const NAMES: &'static [($t, &'static str)] = &[$(($v, $text)),*];
            pub fn contains(self, other: $name) -> bool {
                self.0 & other.0 == other.0
            }
            pub fn intersects(self, other: $name) -> bool {
                self.0 & other.0 != 0
            }
            pub fn bits(self) -> $t {
                self.0
            }
        }
        impl std::ops::BitOr for $name {
            type Output = $name;
            fn bitor(self, o: $name) -> $name {
                $name(self.0 | o.0)
            }
        }
        impl std::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, o: $name) {
                self.0 |= o.0;
            }
        }
        impl std::ops::BitAnd for $name {
            type Output = $name;
            fn bitand(self, o: $name) -> $name {
                $name(self.0 & o.0)
            }
        }
        impl std::ops::Not for $name {
            type Output = $name;
            fn not(self) -> $name {
                $name(!self.0)
            }
        }
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut first = true;
                let mut rest = self.0;
                for &(v, n) in Self::NAMES {
                    if self.0 & v == v && v != 0 {
                        if !first {
                            f.write_str("|")?;
                        }
                        f.write_str(n)?;
                        first = false;
                        rest &= !v;
                    }
                }
                if rest != 0 {
                    if !first {
                        f.write_str("|")?;
                    }
                    write!(f, "{rest:#x}")?;
                } else if first {
                    f.write_str("0")?;
                }
                Ok(())
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(self, f)
            }
        }
    };
}

flags! {
    /// Memory and QP access rights (`ibv_access_flags` values).
    Access: u32 {
        LOCAL_WRITE = 1, "LOCAL_WRITE";
        REMOTE_WRITE = 2, "REMOTE_WRITE";
        REMOTE_READ = 4, "REMOTE_READ";
        REMOTE_ATOMIC = 8, "REMOTE_ATOMIC";
    }
}

flags! {
    /// Which attributes a `modify_qp` call sets (`ibv_qp_attr_mask` values).
    AttrMask: u32 {
        STATE = 1 << 0, "STATE";
        CUR_STATE = 1 << 1, "CUR_STATE";
        ACCESS_FLAGS = 1 << 3, "ACCESS_FLAGS";
        PKEY_INDEX = 1 << 4, "PKEY_INDEX";
        PORT = 1 << 5, "PORT";
        QKEY = 1 << 6, "QKEY";
        AV = 1 << 7, "AV";
        PATH_MTU = 1 << 8, "PATH_MTU";
        TIMEOUT = 1 << 9, "TIMEOUT";
        RETRY_CNT = 1 << 10, "RETRY_CNT";
        RNR_RETRY = 1 << 11, "RNR_RETRY";
        RQ_PSN = 1 << 12, "RQ_PSN";
        MAX_QP_RD_ATOMIC = 1 << 13, "MAX_QP_RD_ATOMIC";
        MIN_RNR_TIMER = 1 << 15, "MIN_RNR_TIMER";
        SQ_PSN = 1 << 16, "SQ_PSN";
        MAX_DEST_RD_ATOMIC = 1 << 17, "MAX_DEST_RD_ATOMIC";
        DEST_QPN = 1 << 20, "DEST_QPN";
    }
}

impl AttrMask {
    /// What each RC transition requires (`ibv_modify_qp`, the kernel's `qp_state_table`),
    /// besides STATE.
    pub const RC_INIT: AttrMask =
        AttrMask(AttrMask::PKEY_INDEX.0 | AttrMask::PORT.0 | AttrMask::ACCESS_FLAGS.0);
    pub const RC_RTR: AttrMask = AttrMask(
        AttrMask::AV.0
            | AttrMask::PATH_MTU.0
            | AttrMask::DEST_QPN.0
            | AttrMask::RQ_PSN.0
            | AttrMask::MAX_DEST_RD_ATOMIC.0
            | AttrMask::MIN_RNR_TIMER.0,
    );
    pub const RC_RTS: AttrMask = AttrMask(
        AttrMask::SQ_PSN.0
            | AttrMask::TIMEOUT.0
            | AttrMask::RETRY_CNT.0
            | AttrMask::RNR_RETRY.0
            | AttrMask::MAX_QP_RD_ATOMIC.0,
    );
    /// What the UD RESET -> INIT transition requires.
    pub const UD_INIT: AttrMask =
        AttrMask(AttrMask::PKEY_INDEX.0 | AttrMask::PORT.0 | AttrMask::QKEY.0);
}

flags! {
    /// Send work request flags (`ibv_send_flags` values).
    SendFlags: u32 {
        FENCE = 1, "FENCE";
        SIGNALED = 2, "SIGNALED";
        SOLICITED = 4, "SOLICITED";
        INLINE = 8, "INLINE";
    }
}

flags! {
    /// Work completion flags (`ibv_wc_flags` values).
    WcFlags: u32 {
        GRH = 1, "GRH";
        WITH_IMM = 2, "WITH_IMM";
    }
}

/// Transport service of a QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum QpType {
    Rc,
    Ud,
}

/// QP states (`ibv_qp_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum QpState {
    Reset,
    Init,
    Rtr,
    Rts,
    Sqd,
    Sqe,
    Err,
}

impl QpState {
    pub fn name(self) -> &'static str {
        match self {
            QpState::Reset => "RESET",
            QpState::Init => "INIT",
            QpState::Rtr => "RTR",
            QpState::Rts => "RTS",
            QpState::Sqd => "SQD",
            QpState::Sqe => "SQE",
            QpState::Err => "ERR",
        }
    }
}

impl fmt::Display for QpState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Path MTU (`ibv_mtu`: 1 = 256 ... 5 = 4096).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Mtu {
    M256 = 1,
    M512 = 2,
    M1024 = 3,
    M2048 = 4,
    M4096 = 5,
}

impl Mtu {
    pub fn bytes(self) -> usize {
        128 << (self as usize)
    }

    /// The enum for a size in bytes, if it is one of the five.
    pub fn from_bytes(n: usize) -> Option<Mtu> {
        [Mtu::M256, Mtu::M512, Mtu::M1024, Mtu::M2048, Mtu::M4096]
            .into_iter()
            .find(|m| m.bytes() == n)
    }

    /// The enum for its `ibv_mtu` value.
    pub fn from_ibv(v: u8) -> Option<Mtu> {
        [Mtu::M256, Mtu::M512, Mtu::M1024, Mtu::M2048, Mtu::M4096]
            .into_iter()
            .find(|m| *m as u8 == v)
    }
}

/// Where a QP's packets go and how they are addressed: the RoCEv2 address vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressVector {
    /// The peer's MAC (resolved before RTR, as rxe does through the neighbour table).
    pub dmac: MacAddr,
    /// Our address (the source GID's IP) and the peer's; both IPv4 or both IPv6.
    pub sip: IpAddr,
    pub dip: IpAddr,
    /// UDP source port; 0 lets the NIC choose one from the QPN, as rxe does.
    pub udp_sport: u16,
    /// The IP TOS / traffic class byte, verbatim (DSCP << 2 | ECN).
    pub traffic_class: u8,
    /// IPv6 hop limit (IPv4 frames use the NIC's TTL).
    pub hop_limit: u8,
    pub flow_label: u32,
}

impl AddressVector {
    /// An address vector to `dip` at `dmac` from `sip`, with defaults for the rest.
    pub fn new(dmac: MacAddr, sip: IpAddr, dip: IpAddr) -> AddressVector {
        AddressVector {
            dmac,
            sip,
            dip,
            udp_sport: 0,
            traffic_class: 0,
            hop_limit: 64,
            flow_label: 0,
        }
    }
}

/// QP attributes (`ibv_qp_attr`, the fields RoCE users set). Only the fields named by the mask
/// of a `modify_qp` call are read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QpAttr {
    pub state: QpState,
    pub cur_state: QpState,
    pub access: Access,
    pub pkey_index: u16,
    pub port: u8,
    pub qkey: u32,
    pub av: Option<AddressVector>,
    pub path_mtu: Mtu,
    /// Local ACK timeout: 4.096 us x 2^timeout; 0 disables the timer.
    pub timeout: u8,
    /// 0..=7; rxe treats 7 as infinite.
    pub retry_cnt: u8,
    /// 0..=7; 7 means retry forever.
    pub rnr_retry: u8,
    pub rq_psn: u32,
    pub sq_psn: u32,
    pub max_rd_atomic: u8,
    pub max_dest_rd_atomic: u8,
    /// Index into the RNR timer table (0..=31).
    pub min_rnr_timer: u8,
    pub dest_qpn: u32,
}

impl Default for QpAttr {
    /// The values rdma-core's own tests use where they set one (rc-transport.md).
    fn default() -> Self {
        QpAttr {
            state: QpState::Reset,
            cur_state: QpState::Reset,
            access: Access::NONE,
            pkey_index: 0,
            port: 1,
            qkey: 0,
            av: None,
            path_mtu: Mtu::M1024,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            rq_psn: 0,
            sq_psn: 0,
            max_rd_atomic: 1,
            max_dest_rd_atomic: 1,
            min_rnr_timer: 12,
            dest_qpn: 0,
        }
    }
}

/// Queue sizes and limits asked for at QP creation (`ibv_qp_cap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QpCap {
    pub max_send_wr: u32,
    pub max_recv_wr: u32,
    pub max_send_sge: u32,
    pub max_recv_sge: u32,
    pub max_inline_data: u32,
}

impl Default for QpCap {
    fn default() -> Self {
        QpCap {
            max_send_wr: 256,
            max_recv_wr: 512,
            max_send_sge: 4,
            max_recv_sge: 4,
            max_inline_data: 0,
        }
    }
}

/// One scatter/gather entry (`ibv_sge`): `length` bytes at `addr` in the MR of `lkey`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sge {
    pub addr: u64,
    pub length: u32,
    pub lkey: u32,
}

/// Send work request opcodes (`ibv_wr_opcode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WrOpcode {
    RdmaWrite,
    RdmaWriteWithImm,
    Send,
    SendWithImm,
    RdmaRead,
    AtomicCmpAndSwp,
    AtomicFetchAndAdd,
}

impl WrOpcode {
    pub fn is_read_or_atomic(self) -> bool {
        matches!(
            self,
            WrOpcode::RdmaRead | WrOpcode::AtomicCmpAndSwp | WrOpcode::AtomicFetchAndAdd
        )
    }

    pub fn is_atomic(self) -> bool {
        matches!(
            self,
            WrOpcode::AtomicCmpAndSwp | WrOpcode::AtomicFetchAndAdd
        )
    }

    pub fn is_send(self) -> bool {
        matches!(self, WrOpcode::Send | WrOpcode::SendWithImm)
    }

    pub fn is_write(self) -> bool {
        matches!(self, WrOpcode::RdmaWrite | WrOpcode::RdmaWriteWithImm)
    }

    /// The `ibv_wr_opcode` number (the `send_wqe` format's OPCODE).
    pub fn code(self) -> u32 {
        match self {
            WrOpcode::RdmaWrite => 0,
            WrOpcode::RdmaWriteWithImm => 1,
            WrOpcode::Send => 2,
            WrOpcode::SendWithImm => 3,
            WrOpcode::RdmaRead => 4,
            WrOpcode::AtomicCmpAndSwp => 5,
            WrOpcode::AtomicFetchAndAdd => 6,
        }
    }

    /// The completion opcode of a send WQE of this kind.
    pub fn wc_opcode(self) -> WcOpcode {
        match self {
            WrOpcode::Send | WrOpcode::SendWithImm => WcOpcode::Send,
            WrOpcode::RdmaWrite | WrOpcode::RdmaWriteWithImm => WcOpcode::RdmaWrite,
            WrOpcode::RdmaRead => WcOpcode::RdmaRead,
            WrOpcode::AtomicCmpAndSwp => WcOpcode::CompSwap,
            WrOpcode::AtomicFetchAndAdd => WcOpcode::FetchAdd,
        }
    }
}

/// The destination of a UD send (`wr.ud`: address handle, remote QPN, remote Q_Key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UdDest {
    pub av: AddressVector,
    pub remote_qpn: u32,
    pub remote_qkey: u32,
}

/// A send work request (`ibv_send_wr`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendWr {
    pub wr_id: u64,
    pub opcode: WrOpcode,
    pub flags: SendFlags,
    pub sg_list: Vec<Sge>,
    /// Immediate data (network order as a number) for the `*WithImm` opcodes.
    pub imm: u32,
    /// RDMA and atomic operations: remote address and key.
    pub remote_addr: u64,
    pub rkey: u32,
    /// Atomics: compare value (CMP_AND_SWP) or addend (FETCH_AND_ADD).
    pub compare_add: u64,
    /// Atomics: swap value (CMP_AND_SWP).
    pub swap: u64,
    /// UD only.
    pub ud: Option<UdDest>,
}

impl SendWr {
    /// A signaled work request with no scatter/gather entries yet.
    pub fn new(wr_id: u64, opcode: WrOpcode) -> SendWr {
        SendWr {
            wr_id,
            opcode,
            flags: SendFlags::SIGNALED,
            sg_list: Vec::new(),
            imm: 0,
            remote_addr: 0,
            rkey: 0,
            compare_add: 0,
            swap: 0,
            ud: None,
        }
    }

    pub fn sge(mut self, addr: u64, length: u32, lkey: u32) -> SendWr {
        self.sg_list.push(Sge { addr, length, lkey });
        self
    }

    pub fn remote(mut self, remote_addr: u64, rkey: u32) -> SendWr {
        self.remote_addr = remote_addr;
        self.rkey = rkey;
        self
    }

    pub fn flags(mut self, flags: SendFlags) -> SendWr {
        self.flags = flags;
        self
    }

    pub fn imm(mut self, imm: u32) -> SendWr {
        self.imm = imm;
        self
    }

    pub fn atomic(mut self, compare_add: u64, swap: u64) -> SendWr {
        self.compare_add = compare_add;
        self.swap = swap;
        self
    }

    pub fn ud(mut self, dest: UdDest) -> SendWr {
        self.ud = Some(dest);
        self
    }

    /// Total bytes of the scatter/gather list.
    pub fn total_len(&self) -> u64 {
        self.sg_list.iter().map(|s| u64::from(s.length)).sum()
    }
}

/// A receive work request (`ibv_recv_wr`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecvWr {
    pub wr_id: u64,
    pub sg_list: Vec<Sge>,
}

impl RecvWr {
    pub fn new(wr_id: u64) -> RecvWr {
        RecvWr {
            wr_id,
            sg_list: Vec::new(),
        }
    }

    pub fn sge(mut self, addr: u64, length: u32, lkey: u32) -> RecvWr {
        self.sg_list.push(Sge { addr, length, lkey });
        self
    }
}

/// Work completion status (`ibv_wc_status`, in its numeric order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WcStatus {
    Success,
    LocLenErr,
    LocQpOpErr,
    LocEecOpErr,
    LocProtErr,
    WrFlushErr,
    MwBindErr,
    BadRespErr,
    LocAccessErr,
    RemInvReqErr,
    RemAccessErr,
    RemOpErr,
    RetryExcErr,
    RnrRetryExcErr,
}

impl WcStatus {
    /// The ibverbs name, e.g. `IBV_WC_RETRY_EXC_ERR`.
    pub fn name(self) -> &'static str {
        match self {
            WcStatus::Success => "IBV_WC_SUCCESS",
            WcStatus::LocLenErr => "IBV_WC_LOC_LEN_ERR",
            WcStatus::LocQpOpErr => "IBV_WC_LOC_QP_OP_ERR",
            WcStatus::LocEecOpErr => "IBV_WC_LOC_EEC_OP_ERR",
            WcStatus::LocProtErr => "IBV_WC_LOC_PROT_ERR",
            WcStatus::WrFlushErr => "IBV_WC_WR_FLUSH_ERR",
            WcStatus::MwBindErr => "IBV_WC_MW_BIND_ERR",
            WcStatus::BadRespErr => "IBV_WC_BAD_RESP_ERR",
            WcStatus::LocAccessErr => "IBV_WC_LOC_ACCESS_ERR",
            WcStatus::RemInvReqErr => "IBV_WC_REM_INV_REQ_ERR",
            WcStatus::RemAccessErr => "IBV_WC_REM_ACCESS_ERR",
            WcStatus::RemOpErr => "IBV_WC_REM_OP_ERR",
            WcStatus::RetryExcErr => "IBV_WC_RETRY_EXC_ERR",
            WcStatus::RnrRetryExcErr => "IBV_WC_RNR_RETRY_EXC_ERR",
        }
    }

    /// Every status, in numeric order.
    pub const ALL: [WcStatus; 14] = [
        WcStatus::Success,
        WcStatus::LocLenErr,
        WcStatus::LocQpOpErr,
        WcStatus::LocEecOpErr,
        WcStatus::LocProtErr,
        WcStatus::WrFlushErr,
        WcStatus::MwBindErr,
        WcStatus::BadRespErr,
        WcStatus::LocAccessErr,
        WcStatus::RemInvReqErr,
        WcStatus::RemAccessErr,
        WcStatus::RemOpErr,
        WcStatus::RetryExcErr,
        WcStatus::RnrRetryExcErr,
    ];

    /// The `ibv_wc_status` number.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The status of an `ibv_wc_status` number, if it is one of these.
    pub fn from_code(code: u32) -> Option<WcStatus> {
        WcStatus::ALL.into_iter().find(|s| s.code() == code)
    }
}

impl fmt::Display for WcStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Work completion opcode (`ibv_wc_opcode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WcOpcode {
    Send,
    RdmaWrite,
    RdmaRead,
    CompSwap,
    FetchAdd,
    Recv,
    RecvRdmaWithImm,
}

impl WcOpcode {
    pub fn name(self) -> &'static str {
        match self {
            WcOpcode::Send => "IBV_WC_SEND",
            WcOpcode::RdmaWrite => "IBV_WC_RDMA_WRITE",
            WcOpcode::RdmaRead => "IBV_WC_RDMA_READ",
            WcOpcode::CompSwap => "IBV_WC_COMP_SWAP",
            WcOpcode::FetchAdd => "IBV_WC_FETCH_ADD",
            WcOpcode::Recv => "IBV_WC_RECV",
            WcOpcode::RecvRdmaWithImm => "IBV_WC_RECV_RDMA_WITH_IMM",
        }
    }

    /// Every opcode.
    pub const ALL: [WcOpcode; 7] = [
        WcOpcode::Send,
        WcOpcode::RdmaWrite,
        WcOpcode::RdmaRead,
        WcOpcode::CompSwap,
        WcOpcode::FetchAdd,
        WcOpcode::Recv,
        WcOpcode::RecvRdmaWithImm,
    ];

    /// The opcode of an `ibv_wc_opcode` number, if it is one of these.
    pub fn from_code(code: u32) -> Option<WcOpcode> {
        WcOpcode::ALL.into_iter().find(|o| o.code() == code)
    }

    /// The `ibv_wc_opcode` number (receive opcodes start at 128).
    pub fn code(self) -> u32 {
        match self {
            WcOpcode::Send => 0,
            WcOpcode::RdmaWrite => 1,
            WcOpcode::RdmaRead => 2,
            WcOpcode::CompSwap => 3,
            WcOpcode::FetchAdd => 4,
            WcOpcode::Recv => 128,
            WcOpcode::RecvRdmaWithImm => 129,
        }
    }
}

impl fmt::Display for WcOpcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A work completion (`ibv_wc`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkCompletion {
    pub wr_id: u64,
    pub status: WcStatus,
    pub opcode: WcOpcode,
    pub byte_len: u32,
    /// Immediate data, when `flags` has WITH_IMM.
    pub imm: u32,
    pub qp_num: u32,
    /// UD receives: the sender's QPN.
    pub src_qp: u32,
    pub flags: WcFlags,
}
