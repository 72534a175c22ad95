//! Counters of one NIC: every receive drop by reason, in the order of the receive checks, and
//! the transport's events (NAKs sent and received, retransmissions, timeouts). The names are
//! the ones the register map will give the hardware's counters.

use serde::Serialize;

macro_rules! counters {
    ($($(#[$m:meta])* $name:ident,)*) => {
        /// Event and drop counters.
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
        pub struct Counters {
            $($(#[$m])* pub $name: u64,)*
        }

        impl Counters {
            /// Every counter with its name, in declaration order.
            pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> {
                [$((stringify!($name), self.$name)),*].into_iter()
            }
        }
    };
}

counters! {
    /// Frames received.
    rx_frames,
    /// Not RoCEv2 (UDP port other than 4791, not IP): handed to the raw receive queue.
    rx_raw,
    /// ARP requests for one of our addresses, answered.
    arp_replies,
    /// The wire model rejected the frame (truncated, lengths disagree, unknown opcode...).
    drop_malformed,
    /// BTH TVer other than 0.
    drop_bad_tver,
    /// Destination IP is not one of ours.
    drop_not_our_ip,
    /// DestQP 0 (no SMI on RoCE).
    drop_qp0,
    /// No QP with that number.
    drop_no_qp,
    /// Opcode of another transport than the QP's (an RC opcode on a UD QP...).
    drop_wrong_transport,
    /// The QP's state does not accept the packet (a request before RTR, a response before RTS).
    drop_bad_state,
    /// RC: source or destination IP differ from the QP's address vector.
    drop_address_mismatch,
    drop_bad_pkey,
    /// UD: Q_Key differs from the QP's.
    drop_bad_qkey,
    drop_bad_icrc,
    /// CNPs (counted; the reaction point comes with the DCQCN hardware).
    rx_cnp,
    /// Responder: requests executed.
    resp_executed,
    /// Responder: requests behind ePSN (duplicates), re-ACKed or replayed.
    resp_duplicate,
    /// Responder: duplicates dropped (a READ or atomic outside every saved resource).
    resp_duplicate_dropped,
    /// Responder: requests ahead of ePSN.
    resp_out_of_sequence,
    /// Responder: out-of-sequence requests dropped after the one NAK.
    resp_out_of_sequence_dropped,
    nak_seq_sent,
    nak_rnr_sent,
    nak_inv_req_sent,
    nak_rem_access_sent,
    nak_rem_op_sent,
    /// UD: a SEND without a posted receive, or larger than it, dropped.
    ud_dropped,
    acks_sent,
    read_responses_sent,
    atomic_acks_sent,
    /// Requester: packets sent for the first time.
    req_packets,
    /// Requester: packets sent again (go-back-N).
    req_retransmitted,
    /// Completer: ACKs and responses received.
    comp_acks,
    comp_read_responses,
    comp_atomic_acks,
    nak_seq_received,
    nak_rnr_received,
    nak_error_received,
    /// Completer: responses that matched nothing outstanding (late duplicates).
    comp_stale,
    /// Completer: a response ahead of the expected one (a lost response), or an ACK beyond a
    /// READ or atomic that has no response yet: retried.
    comp_implied_nak,
    /// Completer: ACK timer expiries that started a retry.
    comp_timeouts,
    /// Completer: retries not started because one was under way for the same PSN.
    comp_retry_suppressed,
    /// Completions with an error status.
    wc_errors,
    /// Completion queue full: completions lost.
    cq_overflow,
}
