//! A VFIO guest: q35 with an emulated Intel IOMMU, an `ivshmem-plain` device whose BAR2 is a
//! host file in /dev/shm, and QEMU's `edu` device; the guest binds both to vfio-pci and runs a
//! test binary (the driver's `rnic-vfio-check`) against each.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::image::{self, GuestImage};
use crate::runner::{Guest, GuestConfig, Outcome};

/// Size of the shared file (ivshmem needs a power of two).
pub const SHM_SIZE: usize = 1 << 20;

/// What a VFIO guest run produced.
#[derive(Debug)]
pub struct VfioRun {
    pub outcome: Outcome,
    pub console: String,
    /// Bytes 4096..8192 of the shared file after the guest ran (what it wrote via BAR2).
    pub shm_after: Vec<u8>,
    /// `PASS ...` lines of the test binary.
    pub passes: Vec<String>,
    /// Whether the guest kernel reported an IOMMU (DMAR) fault.
    pub dmar_fault: bool,
    pub image: GuestImage,
}

/// Removes the shared file however the run ends.
struct ShmFile(PathBuf);

impl Drop for ShmFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// The guest script: find the two devices by vendor:device, bind them to vfio-pci, run the
/// checks.
pub fn script(binary: &Path, seed: u64) -> String {
    let bin = binary.display();
    format!(
        r#"set -u
IV=""; EDU=""
for d in /sys/bus/pci/devices/*; do
  case "$(cat $d/vendor):$(cat $d/device)" in
    0x1af4:0x1110) IV=${{d##*/}} ;;
    0x1234:0x11e8) EDU=${{d##*/}} ;;
  esac
done
echo "RNIC-DEVICES ivshmem=$IV edu=$EDU"
[ -n "$IV" ] && [ -n "$EDU" ] || exit 20
for b in $IV $EDU; do
  echo vfio-pci > /sys/bus/pci/devices/$b/driver_override
  echo $b > /sys/bus/pci/drivers_probe
done
ls /dev/vfio
rc=0
{bin} ivshmem $IV {seed} || rc=1
{bin} edu $EDU || rc=$((rc+2))
dmesg | grep -i "dmar" | grep -i "fault" | head -3 | sed 's/^/RNIC-DMESG /'
exit $rc
"#
    )
}

/// Boots the VFIO guest with `binary` inside; the shared file starts with `host_pattern`.
pub fn run(
    binary: &Path,
    seed: u64,
    host_pattern: &[u8],
    out: &Path,
    timeout: Duration,
) -> Result<VfioRun> {
    image::require_packages(&[
        "qemu-system-x86",
        "linux-image-amd64",
        "busybox-static",
        "kmod",
    ])?;
    if host_pattern.len() > 4096 {
        bail!("the host pattern must fit in the first 4096 bytes");
    }
    let img = image::build(&image::vfio_spec(binary), &image::default_cache_dir())?;
    fs::create_dir_all(out)?;
    let shm = ShmFile(PathBuf::from(format!(
        "/dev/shm/rnic-ivshmem-{}-{}",
        std::process::id(),
        seed
    )));
    let mut init = vec![0u8; SHM_SIZE];
    init[..host_pattern.len()].copy_from_slice(host_pattern);
    fs::write(&shm.0, &init).with_context(|| format!("creating {}", shm.0.display()))?;
    let cfg = GuestConfig {
        name: "vfio".into(),
        memory_mb: 256,
        script: script(binary, seed),
        cmdline: vec!["intel_iommu=on".into(), "iommu=pt".into()],
        args: vec![
            "-machine".into(),
            "q35,kernel-irqchip=split".into(),
            "-device".into(),
            "intel-iommu,intremap=on,caching-mode=on".into(),
            "-object".into(),
            format!(
                "memory-backend-file,id=shm0,share=on,mem-path={},size={}",
                shm.0.display(),
                SHM_SIZE
            ),
            "-device".into(),
            "ivshmem-plain,memdev=shm0".into(),
            "-device".into(),
            "edu".into(),
        ],
    };
    let mut g = Guest::start(&img, &cfg, out)?;
    let outcome = g.wait(Instant::now() + timeout)?;
    drop(g);
    let console = fs::read_to_string(&outcome.console).unwrap_or_default();
    let after = fs::read(&shm.0).with_context(|| format!("reading {}", shm.0.display()))?;
    Ok(VfioRun {
        passes: console
            .lines()
            .filter_map(|l| l.trim().strip_prefix("PASS ").map(String::from))
            .collect(),
        dmar_fault: console.lines().any(|l| l.contains("RNIC-DMESG")),
        shm_after: after[4096..8192].to_vec(),
        outcome,
        console,
        image: img,
    })
}
