//! QEMU guests under TCG: started in their own process group with a parent-death signal, the
//! serial console written to a log file, waited for with a deadline, and always reaped: `Drop`
//! kills the whole group and waits, so no QEMU outlives a success, a failure, a timeout or an
//! interrupted host process.

use std::fs::{self, File};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::image::{GuestImage, apt_command};

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released). For a
/// port the host keeps listening on, bind port 0 and keep the listener instead.
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context("binding 127.0.0.1:0 for a free port")?;
    Ok(l.local_addr()?.port())
}

/// The QEMU binary: `$RNIC_QEMU` or `qemu-system-x86_64`.
pub fn qemu_binary() -> String {
    QEMU_OVERRIDE
        .with(|q| q.borrow().clone())
        .or_else(|| std::env::var("RNIC_QEMU").ok())
        .unwrap_or_else(|| "qemu-system-x86_64".into())
}

/// Base64 (standard alphabet, padded), for the script on the kernel command line.
pub fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= c.len() {
                s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// The kernel command line is at most 2048 bytes on x86; leave room for the rest.
const MAX_SCRIPT_B64: usize = 1700;

/// How to start one guest.
#[derive(Clone, Debug)]
pub struct GuestConfig {
    pub name: String,
    pub memory_mb: u32,
    /// Shell script run by `/init` after the modules are loaded.
    pub script: String,
    /// Extra kernel command-line words.
    pub cmdline: Vec<String>,
    /// Extra QEMU arguments (machine, devices, netdevs).
    pub args: Vec<String>,
}

/// How a guest ended.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub name: String,
    /// The status the script returned (`RNIC-EXIT n` on the console), if it got that far.
    pub script_status: Option<i32>,
    /// QEMU's own exit status (None when it was killed).
    pub qemu_status: Option<i32>,
    pub timed_out: bool,
    /// From start to `/init` running (host clock).
    pub boot: Option<Duration>,
    /// From start to the end of QEMU.
    pub elapsed: Duration,
    pub console: PathBuf,
}

impl Outcome {
    pub fn succeeded(&self) -> bool {
        self.script_status == Some(0) && !self.timed_out
    }
}

/// A running guest. Dropping it kills its process group and reaps it.
pub struct Guest {
    name: String,
    child: Option<Child>,
    started: Instant,
    booted: Option<Duration>,
    console: PathBuf,
    qemu_log: PathBuf,
}

impl Guest {
    /// Starts QEMU (TCG, uncompressed kernel, initramfs) with the console in
    /// `dir/NAME.console.log` and QEMU's own messages in `dir/NAME.qemu.log`.
    pub fn start(image: &GuestImage, cfg: &GuestConfig, dir: &Path) -> Result<Guest> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let console = dir.join(format!("{}.console.log", cfg.name));
        let qemu_log = dir.join(format!("{}.qemu.log", cfg.name));
        let _ = fs::remove_file(&console);
        let script = base64(cfg.script.as_bytes());
        if script.len() > MAX_SCRIPT_B64 {
            bail!(
                "guest {}: script of {} bytes is too long for the kernel command line",
                cfg.name,
                cfg.script.len()
            );
        }
        let mut append = vec![
            "console=ttyS0".to_string(),
            "panic=-1".into(),
            "loglevel=4".into(),
            "rdinit=/init".into(),
        ];
        append.extend(cfg.cmdline.iter().cloned());
        append.push(format!("rnic_script={script}"));
        let qemu = qemu_binary();
        let mut cmd = Command::new(&qemu);
        cmd.args([
            "-accel",
            "tcg",
            "-no-reboot",
            "-nodefaults",
            "-display",
            "none",
        ])
        .args(["-m", &cfg.memory_mb.to_string(), "-smp", "1"])
        .arg("-kernel")
        .arg(&image.vmlinux)
        .arg("-initrd")
        .arg(&image.initrd)
        .args(["-append", &append.join(" ")])
        .arg("-serial")
        .arg(format!("file:{}", console.display()))
        .args(&cfg.args)
        .stdin(Stdio::null())
        .stdout(File::create(&qemu_log)?)
        .stderr(File::create(qemu_log.with_extension("stderr.log"))?)
        .process_group(0);
        // SAFETY: the closure runs in the forked child before exec and only calls prctl, which
        // is async-signal-safe; it touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| {
                // Killed when the host thread that started it dies (Ctrl-C included).
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|e| {
            anyhow::anyhow!(
                "guest {}: cannot start {qemu}: {e} (install it with: {})",
                cfg.name,
                apt_command(&["qemu-system-x86"])
            )
        })?;
        Ok(Guest {
            name: cfg.name.clone(),
            child: Some(child),
            started: Instant::now(),
            booted: None,
            console,
            qemu_log,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn console(&self) -> &Path {
        &self.console
    }

    /// Whether QEMU is still running; records the boot time when the console shows it.
    pub fn poll(&mut self) -> Result<bool> {
        if self.booted.is_none()
            && fs::read(&self.console)
                .map(|b| find(&b, b"RNIC-BOOTED"))
                .unwrap_or(false)
        {
            self.booted = Some(self.started.elapsed());
        }
        match self.child.as_mut() {
            Some(c) => Ok(c.try_wait()?.is_none()),
            None => Ok(false),
        }
    }

    /// Why QEMU stopped early, from its own log (for errors).
    pub fn qemu_messages(&self) -> String {
        let a = fs::read_to_string(&self.qemu_log).unwrap_or_default();
        let b = fs::read_to_string(self.qemu_log.with_extension("stderr.log")).unwrap_or_default();
        format!("{a}{b}").trim().to_string()
    }

    /// Waits for QEMU to end, killing it at `deadline`.
    pub fn wait(&mut self, deadline: Instant) -> Result<Outcome> {
        let mut timed_out = false;
        while self.poll()? {
            if Instant::now() >= deadline {
                timed_out = true;
                self.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let elapsed = self.started.elapsed();
        let status = match self.child.take() {
            Some(mut c) => c.wait()?.code(),
            None => None,
        };
        let text = fs::read_to_string(&self.console).unwrap_or_default();
        Ok(Outcome {
            name: self.name.clone(),
            script_status: script_status(&text),
            qemu_status: if timed_out { None } else { status },
            timed_out,
            boot: self.booted,
            elapsed,
            console: self.console.clone(),
        })
    }

    /// Waits for several guests at once (so each one's boot time is seen when it happens),
    /// killing those still running at `deadline`.
    /// Once one has ended, the others get `grace` more before they count as timed out (a
    /// peer left alone may wait forever for the one that left).
    pub fn wait_all(
        guests: &mut [&mut Guest],
        deadline: Instant,
        grace: Duration,
    ) -> Result<Vec<Outcome>> {
        let mut deadline = deadline;
        let mut first_end: Option<Instant> = None;
        loop {
            let mut running = 0;
            for g in guests.iter_mut() {
                running += usize::from(g.poll()?);
            }
            if running < guests.len() && first_end.is_none() {
                let now = Instant::now();
                first_end = Some(now);
                deadline = deadline.min(now + grace);
            }
            if running == 0 || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        guests.iter_mut().map(|g| g.wait(deadline)).collect()
    }

    /// Kills the process group and reaps QEMU.
    pub fn kill(&mut self) {
        if let Some(c) = self.child.as_mut() {
            if let Ok(None) = c.try_wait() {
                let pid = c.id() as libc::pid_t;
                // SAFETY: kill(2) on our own child's process group (process_group(0) made the
                // child its leader); no memory is involved.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
                let _ = c.kill();
            }
            let _ = c.wait();
        }
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        self.kill();
        self.child = None;
    }
}

fn find(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The status from the last `RNIC-EXIT n` line of a console log.
pub fn script_status(console: &str) -> Option<i32> {
    console
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("RNIC-EXIT ")?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        // RFC 4648, section 10.
        let v = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (i, o) in v {
            assert_eq!(base64(i.as_bytes()), o, "{i}");
        }
    }

    #[test]
    fn exit_status_is_read_from_the_console() {
        assert_eq!(
            script_status("boot\r\nRNIC-EXIT 3\r\n[ 1.0] reboot\n"),
            Some(3)
        );
        assert_eq!(script_status("boot\nkernel panic\n"), None);
    }

    #[test]
    fn free_ports_are_nonzero_and_bindable() {
        // A port found free can be taken by anyone before it is bound again (tests run in
        // parallel, the kernel hands ephemeral ports out again): one of three must bind.
        let mut bound = 0;
        for _ in 0..3 {
            let p = free_port().unwrap();
            assert_ne!(p, 0);
            bound += usize::from(TcpListener::bind(("127.0.0.1", p)).is_ok());
        }
        assert!(bound > 0, "no port free_port found could be bound");
    }

    #[test]
    fn a_missing_qemu_binary_is_an_error_naming_the_package() {
        let image = GuestImage {
            kernel_version: "x".into(),
            vmlinux: "/nonexistent".into(),
            initrd: "/nonexistent".into(),
            modules: vec![],
        };
        let cfg = GuestConfig {
            name: "g".into(),
            memory_mb: 64,
            script: "true".into(),
            cmdline: vec![],
            args: vec![],
        };
        let dir = std::env::temp_dir().join(format!("rnic-qemu-test-{}", std::process::id()));
        let r = with_qemu("/nonexistent/qemu-system-x86_64", || {
            Guest::start(&image, &cfg, &dir).map(|_| ())
        });
        let e = r.unwrap_err().to_string();
        assert!(e.contains("apt-get install -y qemu-system-x86"), "{e}");
        let _ = fs::remove_dir_all(dir);
    }

    fn with_qemu<T>(bin: &str, f: impl FnOnce() -> T) -> T {
        QEMU_OVERRIDE.with(|q| *q.borrow_mut() = Some(bin.to_string()));
        let r = f();
        QEMU_OVERRIDE.with(|q| *q.borrow_mut() = None);
        r
    }
}

thread_local! {
    /// Test hook: a QEMU binary for this thread only (environment changes would race).
    static QEMU_OVERRIDE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}
