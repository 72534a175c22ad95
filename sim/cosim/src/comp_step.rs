//! The completer's step (`rnic_hw::comp_check`) driven with the transport model's own types:
//! a `StepInput` onto its ports (rows packed by the register map's layouts) and its outputs
//! read back as a `Step`, so a test compares the hardware's decision with
//! `rnic_transport::comp_check::step` by equality.

use rnic_hw::row_table::{CS_BITS, QP_BITS, cs_offset_of, qp_offset_of};
use rnic_hw::transport_header::{TH_BITS, th_offset_of};
use rnic_transport::comp_check::{CompRow, Front, Kind, Step, StepInput, Timer, Verdict};
use rnic_transport::verbs::WcStatus;

use crate::axis::Rng;
use crate::ports::{PortDut, field, set_field};

fn at(f: fn(&str) -> Option<(usize, usize)>, name: &str) -> (usize, usize) {
    f(name).unwrap_or_else(|| panic!("no field {name}"))
}

/// Drives a step's inputs (not `s_valid`): the header, the QP row and the oldest request's
/// fields the step does not read are `noise`'s random bits, and so is an absent request's
/// every field (the step must not look at them).
pub fn set_step<D: PortDut>(d: &mut D, i: &StepInput, noise: &mut Rng) {
    let mut hdr = noise.words(TH_BITS);
    // The AETH's syndrome is the top byte of `ext_key` (the MSN below it).
    let key = at(th_offset_of, "ext_key");
    for (f, v) in [
        (at(th_offset_of, "OpCode"), u64::from(i.opcode)),
        (at(th_offset_of, "PSN"), i.psn.into()),
        (at(th_offset_of, "payload_len"), i.payload_len.into()),
        ((key.0 + 24, 8), i.syndrome.into()),
    ] {
        set_field(&mut hdr, f, v);
    }
    d.set_words(d.input("s_hdr"), &hdr);

    let mut qp = noise.words(QP_BITS);
    for (name, v) in [
        ("PATH_MTU", i.mtu.trailing_zeros().saturating_sub(7)),
        ("RETRY_CNT", i.attr_retry_cnt.into()),
        ("RNR_RETRY", i.attr_rnr_retry.into()),
    ] {
        set_field(&mut qp, at(qp_offset_of, name), v.into());
    }
    d.set_words(d.input("s_qp"), &qp);

    let mut row = vec![0u64; CS_BITS.div_ceil(64)];
    for (name, v) in [
        ("OLDEST_PSN", i.row.psn),
        ("RETRY_CNT", i.row.retry_cnt.into()),
        ("RNR_RETRY", i.row.rnr_retry.into()),
        ("STARTED_RETRY", i.row.started_retry.into()),
    ] {
        set_field(&mut row, at(cs_offset_of, name), v.into());
    }
    d.set_words(d.input("s_state"), &row);
    d.set(d.input("s_sent_upto"), i.sent_upto.into());

    let f = i.front.unwrap_or_else(|| Front {
        kind: [Kind::SendWrite, Kind::Read, Kind::Atomic][noise.below(3) as usize],
        first_psn: noise.below(1 << 24) as u32,
        npkts: noise.below(1 << 24) as u32,
        len: noise.below(1 << 32) as u32,
    });
    d.set(d.input("s_front_valid"), u64::from(i.front.is_some()));
    d.set(d.input("s_front_kind"), f.kind as u64);
    d.set(d.input("s_front_first"), f.first_psn.into());
    d.set(d.input("s_front_npkts"), f.npkts.into());
    d.set(d.input("s_front_len"), f.len.into());
    d.set(d.input("s_completed"), u64::from(i.completed));
}

/// The decision on the outputs (read while `m_valid`), as the model's `Step`. The offset is
/// the model's only for READ data (elsewhere the model says 0 and the port is don't-care).
pub fn read_step<D: PortDut>(d: &D) -> Result<Step, String> {
    let code = d.get(d.output("m_verdict"));
    let verdict = Verdict::from_code(code as u8).ok_or(format!("verdict code {code}"))?;
    let state = d.get_words(d.output("m_state"));
    let row = CompRow {
        psn: field(&state, at(cs_offset_of, "OLDEST_PSN")) as u32,
        retry_cnt: field(&state, at(cs_offset_of, "RETRY_CNT")) as u8,
        rnr_retry: field(&state, at(cs_offset_of, "RNR_RETRY")) as u8,
        started_retry: field(&state, at(cs_offset_of, "STARTED_RETRY")) == 1,
    };
    let fail = if d.get(d.output("m_fail")) == 1 {
        let s = d.get(d.output("m_status"));
        Some(WcStatus::from_code(s as u32).ok_or(format!("status code {s}"))?)
    } else {
        None
    };
    let timer = match d.get(d.output("m_timer")) {
        0 => Timer::Keep,
        1 => Timer::Arm,
        2 => Timer::Stop,
        t => return Err(format!("timer code {t}")),
    };
    let bit = |n: &str| d.get(d.output(n)) == 1;
    Ok(Step {
        verdict,
        row,
        complete: bit("m_complete"),
        fail,
        rewind: bit("m_rewind"),
        suppressed: bit("m_suppressed"),
        rnr_wait: bit("m_rnr_wait"),
        timer,
        offset: if verdict == Verdict::ReadData {
            d.get(d.output("m_offset")) as u32
        } else {
            0
        },
    })
}

/// Runs one step through the hardware with every handshake ready and returns its decision.
pub fn step_once<D: PortDut>(d: &mut D, i: &StepInput, noise: &mut Rng) -> Result<Step, String> {
    set_step(d, i, noise);
    let (valid, ready) = (d.input("s_valid"), d.input("m_ready"));
    let (s_ready, m_valid) = (d.output("s_ready"), d.output("m_valid"));
    d.set(valid, 1);
    d.set(ready, 0);
    for _ in 0..16 {
        d.settle().map_err(|m| m.to_string())?;
        if d.get(s_ready) == 1 {
            d.tick();
            d.set(valid, 0);
            for _ in 0..16 {
                d.settle().map_err(|m| m.to_string())?;
                if d.get(m_valid) == 1 {
                    let s = read_step(d)?;
                    d.set(ready, 1);
                    d.settle().map_err(|m| m.to_string())?;
                    d.tick();
                    d.set(ready, 0);
                    return Ok(s);
                }
                d.tick();
            }
            return Err("no decision 16 clocks after the step was taken".into());
        }
        d.tick();
    }
    Err("the step was not taken in 16 clocks".into())
}
