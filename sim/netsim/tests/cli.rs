//! The CLI surface: clear errors for bad input, and the events runner end to end.

use clap::Parser;
use rnic_netsim::cli::{DcqcnArgs, NetArgs, run_dcqcn, run_net};

#[derive(Parser)]
struct Net {
    #[command(flatten)]
    a: NetArgs,
}

#[derive(Parser)]
struct Dc {
    #[command(flatten)]
    a: DcqcnArgs,
}

#[test]
fn unknown_scenario_profile_and_param_are_named() {
    let a = Net::try_parse_from(["x", "--scenario", "nope"]).unwrap().a;
    let e = run_net(&a).unwrap_err().to_string();
    assert!(
        e.contains("\"nope\"") && e.contains("two-flow") && e.contains("red-vs-cutoff"),
        "{e}"
    );
    let e = Net::try_parse_from(["x", "--scenario", "incast", "--profile", "cisco"])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("cisco") && e.contains("paper") && e.contains("nvidia"),
        "{e}"
    );
    let a = Net::try_parse_from(["x", "--scenario", "incast", "--param", "kmn_kb=3"])
        .unwrap()
        .a;
    let e = run_net(&a).unwrap_err().to_string();
    assert!(
        e.contains("kmn_kb") && e.contains("kmin_kb") && e.contains("g,"),
        "{e}"
    );
}

#[test]
fn events_file_errors_name_the_line_and_good_files_run() {
    let dir = std::env::temp_dir().join(format!("rnic-netsim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.events");
    std::fs::write(&bad, "0 cnp\n10us sent 100\n20us explode\n").unwrap();
    let a = Dc::try_parse_from(["x", "--events", bad.to_str().unwrap()])
        .unwrap()
        .a;
    let e = run_dcqcn(&a).unwrap_err().to_string();
    assert!(
        e.contains("line 3") && e.contains("explode") && e.contains("bad.events"),
        "{e}"
    );
    let missing = dir.join("missing.events");
    let a = Dc::try_parse_from(["x", "--events", missing.to_str().unwrap()])
        .unwrap()
        .a;
    let e = format!("{:#}", run_dcqcn(&a).unwrap_err());
    assert!(e.contains("missing.events"), "{e}");
    let good = dir.join("good.events");
    std::fs::write(&good, "0 cnp\n55us tick\n").unwrap();
    let a = Dc::try_parse_from(["x", "--events", good.to_str().unwrap()])
        .unwrap()
        .a;
    run_dcqcn(&a).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

/// The CSV of the events runner for the doc's sequence (line 100 Gb/s, timer events).
#[test]
fn events_csv_shows_the_doc_sequence() {
    let p = rnic_netsim::dcqcn::DcqcnParams::profile(rnic_netsim::dcqcn::Profile::Paper, 100.0);
    let ev = rnic_netsim::dcqcn::events::parse_events(
        "0 cnp\n0 inc\n0 inc\n0 inc\n0 inc\n0 inc\n0 inc\n",
    )
    .unwrap();
    let csv = rnic_netsim::dcqcn::events::run_events(&p, false, &ev);
    let rc: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(3).unwrap())
        .collect();
    assert_eq!(
        rc,
        [
            "50000.000000",
            "75000.000000",
            "87500.000000",
            "93750.000000",
            "96875.000000",
            "98437.500000",
            "99218.750000"
        ]
    );
}
