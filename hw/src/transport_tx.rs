//! The transmit side of the transport's packet path: a send descriptor (a transport header)
//! with the QP's address vector in, expanded to a header word ([`crate::header_expand`]) and
//! built into a frame with its payload by the transmit builder. ACKs, NAKs, READ responses and
//! (next) requests leave this way; no engine handles a full header word.
//!
//! The descriptor, the vector, our GID, MAC and TTL form one channel (`s_desc_*`): they must
//! hold while `s_desc_valid` is high and until `s_desc_ready`, as the builder's header channel
//! requires.

use rust_hdl::prelude::*;

use crate::address_vector::AV_BITS;
use crate::header_expand::HeaderExpand;
use crate::transport_header::TH_BITS;
use crate::tx_builder::TxBuilder;

#[derive(LogicBlock, Default)]
pub struct TransportTx {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The send descriptor and where it goes.
    pub s_desc_data: Signal<In, Bits<TH_BITS>>,
    pub s_desc_av: Signal<In, Bits<AV_BITS>>,
    pub s_desc_sgid: Signal<In, Bits<128>>,
    pub s_desc_valid: Signal<In, Bit>,
    pub s_desc_ready: Signal<Out, Bit>,
    /// Our MAC and the IPv4 TTL (configuration).
    pub src_mac: Signal<In, Bits<48>>,
    pub ttl: Signal<In, Bits<8>>,
    /// The payload stream: `payload_len` bytes per descriptor; `tuser` on any beat (data a
    /// DMA read could not get) sends the frame marked bad.
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// Frames to the MAC.
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// The builder's counters ([`crate::tx_builder::TX_COUNTERS`]).
    pub cnt_frames: Signal<Out, Bits<32>>,
    pub cnt_len_err: Signal<Out, Bits<32>>,
    expand: HeaderExpand,
    tx: TxBuilder,
}

impl Logic for TransportTx {
    #[hdl_gen]
    fn update(&mut self) {
        self.tx.clock.next = self.clock.val();
        self.tx.reset.next = self.reset.val();
        self.expand.desc.next = self.s_desc_data.val();
        self.expand.av.next = self.s_desc_av.val();
        self.expand.sgid.next = self.s_desc_sgid.val();
        self.expand.src_mac.next = self.src_mac.val();
        self.expand.ttl.next = self.ttl.val();
        self.tx.s_hdr_data.next = self.expand.rec.val();
        self.tx.s_hdr_valid.next = self.s_desc_valid.val();
        self.s_desc_ready.next = self.tx.s_hdr_ready.val();
        self.tx.s_axis_tdata.next = self.s_axis_tdata.val();
        self.tx.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.tx.s_axis_tlast.next = self.s_axis_tlast.val();
        self.tx.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.tx.s_axis_tuser.next = self.s_axis_tuser.val();
        self.s_axis_tready.next = self.tx.s_axis_tready.val();
        self.m_axis_tdata.next = self.tx.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.tx.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.tx.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.tx.m_axis_tvalid.val();
        self.m_axis_tuser.next = self.tx.m_axis_tuser.val();
        self.tx.m_axis_tready.next = self.m_axis_tready.val();
        self.cnt_frames.next = self.tx.cnt_frames.val();
        self.cnt_len_err.next = self.tx.cnt_len_err.val();
    }
}
