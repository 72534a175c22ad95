//! The VFIO transport against the real kernel: a QEMU guest (TCG, emulated Intel IOMMU) runs
//! `rnic-vfio-check` against ivshmem-plain and QEMU's edu device. Needs qemu-system-x86,
//! linux-image-amd64, busybox-static and kmod; without them the test fails naming the apt-get
//! command.

use std::path::Path;
use std::time::Duration;

use rnic_driver::pattern;

#[test]
fn vfio_transport_in_a_guest_with_an_iommu() {
    let bin = Path::new(env!("CARGO_BIN_EXE_rnic-vfio-check"));
    let seed = 0x5eed;
    let host = pattern::bytes(seed, 4096);
    let out = rnic_qemu::image::default_cache_dir().join("runs/vfio-test");
    let run = rnic_qemu::vfio::run(bin, seed, &host, &out, Duration::from_secs(240))
        .unwrap_or_else(|e| panic!("cannot run the VFIO guest: {e:#}"));
    let tail: String = run
        .console
        .lines()
        .rev()
        .take(40)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        !run.outcome.timed_out,
        "the guest timed out; console:\n{tail}"
    );
    assert_eq!(run.outcome.script_status, Some(0), "console:\n{tail}");
    // The guest read the host's pattern and wrote its own, which the host now reads.
    assert_eq!(
        run.shm_after,
        pattern::bytes(seed + 1, 4096),
        "guest pattern in the host file"
    );
    for what in [
        "ivshmem: the host's pattern",
        "edu: identification and liveness",
        "edu: bus mastering enabled",
        "edu: DMA to the device and back",
        "edu: a DMA to an unmapped IOVA did not reach memory",
    ] {
        assert!(
            run.passes.iter().any(|p| p.starts_with(what)),
            "missing PASS {what}; console:\n{tail}"
        );
    }
    assert!(
        run.dmar_fault,
        "the guest kernel reported no DMAR fault for the unmapped DMA; console:\n{tail}"
    );
    eprintln!(
        "VFIO guest: boot {:.1} s, total {:.1} s, kernel {}",
        run.outcome.boot.map_or(f64::NAN, |b| b.as_secs_f64()),
        run.outcome.elapsed.as_secs_f64(),
        run.image.kernel_version
    );
}
