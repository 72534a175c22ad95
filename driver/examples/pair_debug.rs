use rnic_driver::rc_nic_sim::RcNicSim;
use rnic_driver::rc_pair::{PairConfig, run_pair};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ops = match args.get(1).map(|s| s.as_str()) {
        Some("w") => [true, false, false],
        Some("r") => [false, true, false],
        Some("s") => [false, false, true],
        _ => [true; 3],
    };
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(8);
    let cfg = PairConfig {
        seed: 1,
        messages: n,
        ops,
        limit: 300_000,
        ..Default::default()
    };
    let nics = [
        RcNicSim::verilated(1, 0.0).unwrap(),
        RcNicSim::verilated(2, 0.0).unwrap(),
    ];
    let r = run_pair(nics, &cfg, |_| {}).unwrap();
    println!(
        "cycles {} delivered {} intact {} errors {:?}",
        r.cycles, r.delivered, r.intact, &r.errors
    );
    println!("counters {:?}", r.counters);
    for (h, w) in r.work.iter().enumerate() {
        for (k, m) in w.iter().enumerate() {
            println!(
                "host {h} msg {k}: {:?} {} posted {:?} completed {:?}",
                m.opcode, m.len, m.posted, m.completed
            );
        }
    }
    println!("frames {:?}", r.frames);
    let skip = r.wire.len().saturating_sub(
        std::env::var("TAIL")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60),
    );
    for (at, h, f) in r.wire.iter().skip(skip) {
        let p = rnic_wire::RocePacket::parse(f).map(|p| p.repr());
        match p {
            Ok(p) => println!(
                "{at} from {h}: op {:#x} psn {} len {} qp {}",
                p.bth.opcode,
                p.bth.psn,
                p.payload.len(),
                p.bth.dest_qp
            ),
            Err(e) => println!("{at} from {h}: {e}"),
        }
    }
}
