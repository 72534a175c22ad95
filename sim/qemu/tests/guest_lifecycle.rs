//! QEMU guests are always reaped: on a timeout, and when the `Guest` is dropped while the
//! guest still runs; a script's exit status reaches the host. Needs qemu-system-x86,
//! linux-image-amd64, busybox-static and kmod; without them the test fails naming apt-get.

use std::path::Path;
use std::time::{Duration, Instant};

use rnic_qemu::image::{self, ImageSpec};
use rnic_qemu::runner::{Guest, GuestConfig};

fn image() -> image::GuestImage {
    let spec = ImageSpec {
        name: "plain".into(),
        modules: vec![],
        binaries: vec![],
        files: vec![],
        extra: vec![],
    };
    image::build(&spec, &image::default_cache_dir()).unwrap_or_else(|e| panic!("{e:#}"))
}

fn cfg(name: &str, script: &str) -> GuestConfig {
    GuestConfig {
        name: name.into(),
        memory_mb: 128,
        script: script.into(),
        cmdline: vec![],
        args: vec![],
    }
}

/// Whether a process with this pid exists (and is not a zombie of ours).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

fn qemu_pid(dir: &Path, name: &str) -> u32 {
    // The guest writes its console; QEMU is the only process holding that file open.
    let console = dir.join(format!("{name}.console.log"));
    let t0 = Instant::now();
    loop {
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                continue;
            };
            let needle = format!("file:{}", console.display());
            if cmd.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                return pid;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "QEMU for {name} not found"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn exit_status_timeout_and_drop() {
    let img = image();
    let dir = image::default_cache_dir().join("runs/lifecycle");

    let mut g = Guest::start(&img, &cfg("status", "echo hello; exit 7"), &dir).unwrap();
    let o = g.wait(Instant::now() + Duration::from_secs(120)).unwrap();
    assert_eq!(o.script_status, Some(7));
    assert!(!o.timed_out);
    assert!(o.boot.is_some());
    eprintln!(
        "plain guest: boot {:.2} s, start to poweroff {:.2} s",
        o.boot.unwrap().as_secs_f64(),
        o.elapsed.as_secs_f64()
    );

    let mut g = Guest::start(&img, &cfg("timeout", "sleep 600"), &dir).unwrap();
    let pid = qemu_pid(&dir, "timeout");
    let o = g.wait(Instant::now() + Duration::from_secs(3)).unwrap();
    assert!(o.timed_out);
    assert_eq!(o.script_status, None);
    assert!(!alive(pid), "QEMU {pid} still running after the timeout");

    let g = Guest::start(&img, &cfg("dropped", "sleep 600"), &dir).unwrap();
    let pid = qemu_pid(&dir, "dropped");
    assert!(alive(pid));
    drop(g);
    assert!(!alive(pid), "QEMU {pid} still running after Drop");
}
