//! The demultiplexer by opcode class: transport headers ([`crate::transport_header`]) and the
//! payload stream in; to the responder (requests, with their payloads), the completer
//! (responses and ACKs, with READ response payloads) and the congestion logic (CNPs, no
//! payload). A header of class `Other` (UC) has no engine: it and its payload are dropped and
//! counted.
//!
//! The two input streams are in step: the parser presents a header once its payload is
//! committed, so the payload stream's next packet is that header's (none when `payload_len` is
//! 0). After passing a header with a payload the demultiplexer routes payload beats to the same
//! engine until `tlast`. It passes on one header more meanwhile, keeping where its payload
//! goes (so an engine can look up the next request's tables while the current payload goes to
//! memory), and looks at the header after that once the current payload has ended. An engine
//! takes a header, then `payload_len` bytes from its own payload port: its payloads come in the
//! order of its headers.

use rust_hdl::prelude::*;

use crate::transport_header::TH_BITS;

#[derive(LogicBlock)]
pub struct OpcodeDemux {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Transport headers (from the header FIFO).
    pub s_hdr_data: Signal<In, Bits<TH_BITS>>,
    pub s_hdr_valid: Signal<In, Bit>,
    pub s_hdr_ready: Signal<Out, Bit>,
    /// The payload stream (from the parser).
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// Requests to the responder.
    pub m_req_hdr_data: Signal<Out, Bits<TH_BITS>>,
    pub m_req_hdr_valid: Signal<Out, Bit>,
    pub m_req_hdr_ready: Signal<In, Bit>,
    pub m_req_axis_tdata: Signal<Out, Bits<64>>,
    pub m_req_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_req_axis_tlast: Signal<Out, Bit>,
    pub m_req_axis_tvalid: Signal<Out, Bit>,
    pub m_req_axis_tready: Signal<In, Bit>,
    /// Responses and ACKs to the completer.
    pub m_resp_hdr_data: Signal<Out, Bits<TH_BITS>>,
    pub m_resp_hdr_valid: Signal<Out, Bit>,
    pub m_resp_hdr_ready: Signal<In, Bit>,
    pub m_resp_axis_tdata: Signal<Out, Bits<64>>,
    pub m_resp_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_resp_axis_tlast: Signal<Out, Bit>,
    pub m_resp_axis_tvalid: Signal<Out, Bit>,
    pub m_resp_axis_tready: Signal<In, Bit>,
    /// CNPs to the congestion logic.
    pub m_cnp_hdr_data: Signal<Out, Bits<TH_BITS>>,
    pub m_cnp_hdr_valid: Signal<Out, Bit>,
    pub m_cnp_hdr_ready: Signal<In, Bit>,
    /// Headers of class `Other`, dropped (wraps at 2^32).
    pub cnt_drop_class: Signal<Out, Bits<32>>,

    /// Routing a payload, and to whom (the class).
    busy: DFF<Bit>,
    dest: DFF<Bits<2>>,
    /// The next payload's route, for a header passed on while `busy`.
    nbusy: DFF<Bit>,
    ndest: DFF<Bits<2>>,
    fin: Signal<Local, Bit>,
    drops: DFF<Bits<32>>,
    cls: Signal<Local, Bits<2>>,
    go: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    has_payload: Signal<Local, Bit>,
    k_one32: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
}

impl Default for OpcodeDemux {
    fn default() -> Self {
        OpcodeDemux {
            clock: Default::default(),
            reset: Default::default(),
            s_hdr_data: Default::default(),
            s_hdr_valid: Default::default(),
            s_hdr_ready: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            m_req_hdr_data: Default::default(),
            m_req_hdr_valid: Default::default(),
            m_req_hdr_ready: Default::default(),
            m_req_axis_tdata: Default::default(),
            m_req_axis_tkeep: Default::default(),
            m_req_axis_tlast: Default::default(),
            m_req_axis_tvalid: Default::default(),
            m_req_axis_tready: Default::default(),
            m_resp_hdr_data: Default::default(),
            m_resp_hdr_valid: Default::default(),
            m_resp_hdr_ready: Default::default(),
            m_resp_axis_tdata: Default::default(),
            m_resp_axis_tkeep: Default::default(),
            m_resp_axis_tlast: Default::default(),
            m_resp_axis_tvalid: Default::default(),
            m_resp_axis_tready: Default::default(),
            m_cnp_hdr_data: Default::default(),
            m_cnp_hdr_valid: Default::default(),
            m_cnp_hdr_ready: Default::default(),
            cnt_drop_class: Default::default(),
            busy: Default::default(),
            dest: Default::default(),
            nbusy: Default::default(),
            ndest: Default::default(),
            fin: Default::default(),
            drops: Default::default(),
            cls: Default::default(),
            go: Default::default(),
            take: Default::default(),
            has_payload: Default::default(),
            k_one32: Constant::new(bits::<32>(1)),
            k_zero32: Constant::new(bits::<32>(0)),
        }
    }
}

impl Logic for OpcodeDemux {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, dest, nbusy, ndest, drops);
        // The class is the transport header's lowest entry; `payload_len` follows it (bits
        // 17:2): both registered in the FIFO's output register.
        self.cls.next = self.s_hdr_data.val().get_bits::<2>(0);
        self.has_payload.next = self.s_hdr_data.val().get_bits::<16>(2).any();
        self.go.next = self.s_hdr_valid.val() & !self.nbusy.q.val();

        // ---- Headers: every port sees the word; valid only at the class's own.
        self.m_req_hdr_data.next = self.s_hdr_data.val();
        self.m_resp_hdr_data.next = self.s_hdr_data.val();
        self.m_cnp_hdr_data.next = self.s_hdr_data.val();
        self.m_req_hdr_valid.next = self.go.val() & (self.cls.val() == 0);
        self.m_resp_hdr_valid.next = self.go.val() & (self.cls.val() == 1);
        self.m_cnp_hdr_valid.next = self.go.val() & (self.cls.val() == 2);
        self.s_hdr_ready.next = !self.nbusy.q.val();
        if self.cls.val() == 0 {
            self.s_hdr_ready.next = !self.nbusy.q.val() & self.m_req_hdr_ready.val();
        }
        if self.cls.val() == 1 {
            self.s_hdr_ready.next = !self.nbusy.q.val() & self.m_resp_hdr_ready.val();
        }
        if self.cls.val() == 2 {
            self.s_hdr_ready.next = !self.nbusy.q.val() & self.m_cnp_hdr_ready.val();
        }
        self.take.next = self.go.val() & self.s_hdr_ready.val();

        // ---- Payload: to the engine that took the header; class 2 and 3 payloads sink.
        self.m_req_axis_tdata.next = self.s_axis_tdata.val();
        self.m_req_axis_tkeep.next = self.s_axis_tkeep.val();
        self.m_req_axis_tlast.next = self.s_axis_tlast.val();
        self.m_resp_axis_tdata.next = self.s_axis_tdata.val();
        self.m_resp_axis_tkeep.next = self.s_axis_tkeep.val();
        self.m_resp_axis_tlast.next = self.s_axis_tlast.val();
        self.m_req_axis_tvalid.next =
            self.busy.q.val() & (self.dest.q.val() == 0) & self.s_axis_tvalid.val();
        self.m_resp_axis_tvalid.next =
            self.busy.q.val() & (self.dest.q.val() == 1) & self.s_axis_tvalid.val();
        self.s_axis_tready.next = self.busy.q.val();
        if self.dest.q.val() == 0 {
            self.s_axis_tready.next = self.busy.q.val() & self.m_req_axis_tready.val();
        }
        if self.dest.q.val() == 1 {
            self.s_axis_tready.next = self.busy.q.val() & self.m_resp_axis_tready.val();
        }

        // `nbusy` only ever with `busy`: the next route moves up as the current payload ends;
        // a header taken becomes the current route when none is left, else the next.
        self.fin.next = self.busy.q.val()
            & self.s_axis_tvalid.val()
            & self.s_axis_tready.val()
            & self.s_axis_tlast.val();
        if self.fin.val() {
            self.busy.d.next = self.nbusy.q.val();
            self.dest.d.next = self.ndest.q.val();
            self.nbusy.d.next = false;
        }
        if self.take.val() & self.has_payload.val() {
            if self.busy.q.val() & !self.fin.val() {
                self.nbusy.d.next = true;
                self.ndest.d.next = self.cls.val();
            } else {
                self.busy.d.next = true;
                self.dest.d.next = self.cls.val();
            }
        }
        self.drops.d.next = self.drops.q.val();
        if self.take.val() & (self.cls.val() == 3) {
            self.drops.d.next = self.drops.q.val() + self.k_one32.val();
        }
        self.cnt_drop_class.next = self.drops.q.val();

        if self.reset.val() {
            self.busy.d.next = false;
            self.nbusy.d.next = false;
            self.drops.d.next = self.k_zero32.val();
        }
    }
}
