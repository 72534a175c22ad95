//! Timed event lists for one reaction point (`rnic sim dcqcn --events FILE`): apply CNP
//! arrivals, bytes sent and the passing of time, and print the state after each event as CSV,
//! for debugging and for comparing with other implementations.
//!
//! File format: one event per line, `TIME EVENT [VALUE]`, blank lines and `#` comments
//! ignored. TIME is a number with an optional unit `ns` (default), `us`, `ms` or `s`, and must
//! not decrease. EVENT is one of:
//! - `cnp`: a CNP arrives;
//! - `sent BYTES`: BYTES were sent (the byte counter advances);
//! - `tick`: time passes to TIME (timer events due fire);
//! - `inc`, `byte`, `decay`: one increase-timer, byte-counter or alpha-timer event fired
//!   directly, whatever the time (for comparing state machines event by event).

use super::rp_fixed::RpFixed;
use super::rp_float::RpFloat;
use super::{DcqcnParams, RateControl, RpState};

/// One parsed event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpEvent {
    Cnp,
    Sent(u64),
    Tick,
    Inc,
    Byte,
    Decay,
}

/// An event with its time and source line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedEvent {
    pub line: usize,
    pub t_ns: u64,
    pub event: RpEvent,
}

/// Parses a time such as `10`, `10ns`, `2.5us`, `1ms`, `0.1s` into nanoseconds.
pub fn parse_time(s: &str) -> Result<u64, String> {
    let (num, scale) = if let Some(n) = s.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e9)
    } else {
        (s, 1.0)
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("bad time {s:?} (a number with ns, us, ms or s)"))?;
    if !v.is_finite() || v < 0.0 || v * scale > 1e18 {
        return Err(format!("time {s:?} out of range"));
    }
    Ok((v * scale).round() as u64)
}

/// Parses an events file; errors name the line.
pub fn parse_events(text: &str) -> Result<Vec<TimedEvent>, String> {
    let mut out = Vec::new();
    let mut last = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let fields: Vec<&str> = content.split_whitespace().collect();
        let err = |m: String| format!("line {line}: {m}: {raw:?}");
        let t_ns = parse_time(fields[0]).map_err(err)?;
        if t_ns < last {
            return Err(err(format!(
                "time goes backwards (previous event at {last} ns)"
            )));
        }
        last = t_ns;
        let Some(&name) = fields.get(1) else {
            return Err(err(
                "missing event (cnp, sent BYTES, tick, inc, byte, decay)".into(),
            ));
        };
        let want_args = usize::from(name == "sent");
        if fields.len() != 2 + want_args {
            return Err(err(format!("{name} takes {want_args} argument(s)")));
        }
        let event = match name {
            "cnp" => RpEvent::Cnp,
            "tick" => RpEvent::Tick,
            "inc" => RpEvent::Inc,
            "byte" => RpEvent::Byte,
            "decay" => RpEvent::Decay,
            "sent" => RpEvent::Sent(
                fields[2]
                    .parse()
                    .map_err(|_| err(format!("bad byte count {:?}", fields[2])))?,
            ),
            other => {
                return Err(err(format!(
                    "unknown event {other:?} (cnp, sent BYTES, tick, inc, byte, decay)"
                )));
            }
        };
        out.push(TimedEvent { line, t_ns, event });
    }
    Ok(out)
}

/// Either reaction point, with direct access to its state-machine events.
pub enum AnyRp {
    Fixed(RpFixed),
    Float(RpFloat),
}

impl AnyRp {
    /// A fixed- or floating-point reaction point for `p`.
    pub fn new(p: &DcqcnParams, float: bool) -> Self {
        if float {
            AnyRp::Float(RpFloat::new(p))
        } else {
            AnyRp::Fixed(RpFixed::new(p))
        }
    }

    fn rc(&mut self) -> &mut dyn RateControl {
        match self {
            AnyRp::Fixed(r) => r,
            AnyRp::Float(r) => r,
        }
    }

    /// Applies one event at its time.
    pub fn apply(&mut self, e: &TimedEvent) {
        match e.event {
            RpEvent::Cnp => self.rc().on_cnp(e.t_ns),
            RpEvent::Sent(b) => self.rc().on_sent(b, e.t_ns),
            RpEvent::Tick => self.rc().advance(e.t_ns),
            RpEvent::Inc => match self {
                AnyRp::Fixed(r) => drop(r.timer_event()),
                AnyRp::Float(r) => drop(r.timer_event()),
            },
            RpEvent::Byte => match self {
                AnyRp::Fixed(r) => drop(r.byte_event()),
                AnyRp::Float(r) => drop(r.byte_event()),
            },
            RpEvent::Decay => match self {
                AnyRp::Fixed(r) => r.alpha_event(),
                AnyRp::Float(r) => r.alpha_event(),
            },
        }
    }

    /// The state now.
    pub fn state(&mut self) -> RpState {
        self.rc().state()
    }
}

/// Applies `events` and returns the CSV: a header and one row per event.
pub fn run_events(p: &DcqcnParams, float: bool, events: &[TimedEvent]) -> String {
    let mut rp = AnyRp::new(p, float);
    let mut s = format!("line,t_ns,event,{}\n", RpState::CSV_HEADER);
    for e in events {
        rp.apply(e);
        let name = match e.event {
            RpEvent::Cnp => "cnp".to_string(),
            RpEvent::Sent(b) => format!("sent {b}"),
            RpEvent::Tick => "tick".into(),
            RpEvent::Inc => "inc".into(),
            RpEvent::Byte => "byte".into(),
            RpEvent::Decay => "decay".into(),
        };
        s.push_str(&format!(
            "{},{},{name},{}\n",
            e.line,
            e.t_ns,
            rp.state().csv_row()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_comments_and_names_bad_lines() {
        let ev = parse_events("# x\n0 cnp\n1.5us sent 1000 # y\n\n2ms tick\n").unwrap();
        assert_eq!(
            ev,
            vec![
                TimedEvent {
                    line: 2,
                    t_ns: 0,
                    event: RpEvent::Cnp
                },
                TimedEvent {
                    line: 3,
                    t_ns: 1500,
                    event: RpEvent::Sent(1000)
                },
                TimedEvent {
                    line: 5,
                    t_ns: 2_000_000,
                    event: RpEvent::Tick
                },
            ]
        );
        let e = parse_events("0 cnp\n5 jump\n").unwrap_err();
        assert!(e.starts_with("line 2:") && e.contains("jump"), "{e}");
        let e = parse_events("10 cnp\n5 cnp\n").unwrap_err();
        assert!(e.starts_with("line 2:") && e.contains("backwards"), "{e}");
        let e = parse_events("1 sent\n").unwrap_err();
        assert!(e.starts_with("line 1:"), "{e}");
        let e = parse_events("1xs cnp\n").unwrap_err();
        assert!(e.starts_with("line 1:") && e.contains("bad time"), "{e}");
    }
}
