//! `rnic qemu interop --nic model`: the real `ibv_rc_pingpong`, `ibv_ud_pingpong` and
//! perftest's `ib_{send,write,read,atomic}_bw` in a soft-RoCE guest against our NIC (the
//! transport model) on the host link, in both roles, clean and (RC) with drops, duplicates,
//! reordering and corruption. Every
//! run must complete on both sides and pass the RC trace analysis; its capture must pass
//! `rnic trace check` and replay with zero mismatches (rxe's responses and ours against the
//! model); no QEMU process may outlive a run. Needs the Debian packages of
//! `rnic_qemu::image::PACKAGES`; without them the test fails naming them.

mod common;

use common::rnic_text;

use std::path::Path;

use serde_json::Value;

/// QEMU processes whose command line names `dir` (each run's console log lives there).
fn qemu_processes_in(dir: &Path) -> usize {
    let needle = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("qemu-system") && c.contains(&needle))
        .count()
}

fn run(scenario: &str, role: &str, extra: &[&str], out: &Path) -> Value {
    let _ = std::fs::remove_dir_all(out);
    let mut args = vec![
        "qemu",
        "interop",
        "--nic",
        "model",
        "--scenario",
        scenario,
        "--guest-role",
        role,
        "--timeout",
        "150",
    ];
    args.extend_from_slice(extra);
    if !extra.contains(&"--iters") {
        args.extend_from_slice(&["--iters", "20"]);
    }
    args.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let (ok, text) = rnic_text(&args);
    eprintln!("{text}");
    let last = text
        .lines()
        .rfind(|l| l.starts_with("scenario="))
        .unwrap_or_default();
    // Checked first: a run that failed must not leave QEMU behind either.
    assert_eq!(qemu_processes_in(out), 0, "QEMU outlived the run:\n{text}");
    assert!(ok, "rnic {} failed:\n{text}", args.join(" "));
    assert!(
        last.starts_with(&format!(
            "scenario={scenario} nic=model guest={role} completed=yes frames="
        )) && last.ends_with(" check=ok"),
        "{last}"
    );
    let cap = out.join("capture.pcap");
    let (ok, check) = rnic_text(&["trace", "check", cap.to_str().unwrap()]);
    assert!(ok, "trace check:\n{check}");
    if scenario != "ud_pingpong" {
        let faults = out.join("faults.json");
        let (ok, replay) = rnic_text(&[
            "trace",
            "replay",
            cap.to_str().unwrap(),
            "--faults",
            faults.to_str().unwrap(),
        ]);
        assert!(ok, "replay of {}:\n{replay}", cap.display());
        let qps = if scenario == "rc_pingpong" { 2 } else { 1 };
        assert!(replay.contains(&format!("qps={qps} ")), "{replay}");
    }
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn the_real_pingpong_tools_complete_against_the_model_nic() {
    let base = rnic_qemu::image::default_cache_dir().join("interop/test");
    for scenario in ["rc_pingpong", "ud_pingpong"] {
        for role in ["server", "client"] {
            let s = run(
                scenario,
                role,
                &[],
                &base.join(format!("{scenario}-{role}")),
            );
            assert_eq!(s["completed"], true);
            assert_eq!(s["summary"]["dropped_by_link"], 0);
            // Our NIC resolved the guest's MAC by ARP (and the guest learnt ours from it).
            let ours = s["ours"]["Ok"].as_str().unwrap_or_default();
            assert!(ours.contains("GID ::ffff:10.0.0.1"), "{ours}");
        }
    }
    let faults = [
        "--drop-prob",
        "0.05",
        "--duplicate-every",
        "11",
        "--reorder-every",
        "13",
        "--corrupt-every",
        "17",
    ];
    for seed in ["3", "11"] {
        for role in ["server", "client"] {
            let mut extra = faults.to_vec();
            extra.extend(["--seed", seed]);
            let s = run(
                "rc_pingpong",
                role,
                &extra,
                &base.join(format!("lossy-{role}-{seed}")),
            );
            assert!(s["link"]["faults"].as_array().unwrap().len() > 10);
            assert!(s["summary"]["retransmissions"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn the_real_perftest_tools_complete_against_the_model_nic() {
    let base = rnic_qemu::image::default_cache_dir().join("interop/test-perftest");
    let faults = [
        "--drop-prob",
        "0.03",
        "--duplicate-every",
        "11",
        "--reorder-every",
        "13",
        // Random, not every Nth: a retransmission round of a multiple of N frames would put
        // the same PSN under every Nth corruption for ever (seen with N = 17, 68-frame rounds).
        "--corrupt-prob",
        "0.05",
    ];
    for scenario in ["send_bw", "write_bw", "read_bw", "atomic_bw"] {
        for role in ["server", "client"] {
            let s = run(
                scenario,
                role,
                &[],
                &base.join(format!("{scenario}-{role}")),
            );
            assert_eq!(s["summary"]["dropped_by_link"], 0);
            let ours = s["ours"]["Ok"].as_str().unwrap_or_default();
            assert!(ours.contains("#bytes"), "{ours}");
            for seed in ["4", "9"] {
                let mut extra = faults.to_vec();
                extra.extend(["--seed", seed]);
                // An atomic is one small frame each way: enough of them that the random
                // faults surely hit some.
                if scenario == "atomic_bw" {
                    extra.extend(["--iters", "80"]);
                }
                let s = run(
                    scenario,
                    role,
                    &extra,
                    &base.join(format!("{scenario}-{role}-lossy-{seed}")),
                );
                assert!(s["summary"]["dropped_by_link"].as_u64().unwrap() > 0);
                assert!(s["summary"]["retransmissions"].as_u64().unwrap() > 0);
            }
        }
    }
}

#[test]
fn bad_interop_arguments_are_refused() {
    for (args, needle) in [
        (
            vec![
                "--scenario",
                "ud_pingpong",
                "--guest-role",
                "server",
                "--drop-every",
                "5",
            ],
            "does not recover from loss",
        ),
        (
            vec![
                "--scenario",
                "write_bw",
                "--guest-role",
                "server",
                "--iters",
                "3",
            ],
            "at least 5 iterations",
        ),
        (
            vec!["--scenario", "rc_pingpong", "--guest-role", "both"],
            "guest-role",
        ),
    ] {
        let mut a = vec!["qemu", "interop"];
        a.extend(args.iter());
        let (ok, text) = rnic_text(&a);
        assert!(!ok, "{a:?}");
        assert!(text.contains(needle), "{a:?}: {text}");
    }
}

/// A run whose guest cannot come up in time (1 s under TCG) does not complete: it says why,
/// ends with the last line saying `completed=no`, exits 1 (not 2: the arguments were good),
/// and leaves no QEMU behind.
#[test]
fn a_run_that_cannot_finish_ends_with_completed_no() {
    let out = std::env::temp_dir().join(format!("rnic-interop-short-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = common::rnic(&[
        "qemu",
        "interop",
        "--scenario",
        "rc_pingpong",
        "--guest-role",
        "server",
        "--timeout",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(qemu_processes_in(&out), 0, "QEMU outlived the run");
    let last = text.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("scenario=rc_pingpong nic=model guest=server completed=no frames="),
        "{text}"
    );
    // The reason: the harness's error, or the guest's tool timing out.
    assert!(
        text.contains("error: ") || text.contains("timed out"),
        "no reason given:\n{text}"
    );
    let _ = std::fs::remove_dir_all(&out);
}
