//! Runs inside a QEMU guest with an emulated IOMMU and exercises the VFIO transport:
//!
//! - `ivshmem BDF SEED`: BAR2 is a host file; its first 4 KiB must hold the host's pattern
//!   for SEED, and the pattern for SEED + 1 is written to the next 4 KiB for the host to read.
//! - `edu BDF`: QEMU's edu device: identification and liveness registers, DMA both ways
//!   through the IOMMU with an MSI after each transfer, and a DMA to an address that is no
//!   longer mapped, which must not reach memory.
//!
//! Prints `PASS name` / `FAIL name: why` lines; exits 0 only when all passed.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use rnic_driver::{Bar, Device, DmaBuffer, pattern};

type R<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let r = match args.get(1).map(String::as_str) {
        Some("ivshmem") if args.len() == 4 => match args[3].parse() {
            Ok(seed) => ivshmem(&args[2], seed),
            Err(e) => Err(format!("SEED {:?}: {e}", args[3]).into()),
        },
        Some("edu") if args.len() == 3 => edu(&args[2]),
        _ => Err("usage: rnic-vfio-check ivshmem BDF SEED | edu BDF".into()),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            println!("FAIL {e}");
            ExitCode::from(1)
        }
    }
}

fn pass(what: &str) {
    println!("PASS {what}");
}

fn ivshmem(bdf: &str, seed: u64) -> R<()> {
    let dev = Device::open(bdf)?;
    for i in 0..3 {
        let r = dev.region(i);
        println!(
            "region {i}: offset {:#x} size {:#x} flags {:#x}",
            r.offset, r.size, r.flags
        );
    }
    let bar = dev.map_bar(2)?;
    if bar.len() < 8192 {
        return Err(format!("ivshmem BAR2 is {} bytes, need 8192", bar.len()).into());
    }
    let want = pattern::bytes(seed, 4096);
    let got: Vec<u8> = (0..4096).map(|i| bar.read8(i)).collect::<Result<_, _>>()?;
    if got != want {
        let at = (0..4096).find(|&i| got[i] != want[i]).unwrap_or(0);
        return Err(format!(
            "ivshmem: host pattern differs at byte {at}: {:#04x} != {:#04x}",
            got[at], want[at]
        )
        .into());
    }
    pass("ivshmem: the host's pattern is read through the BAR2 mapping");
    for (i, w) in pattern::bytes(seed + 1, 4096).chunks(4).enumerate() {
        bar.write32(4096 + 4 * i, u32::from_le_bytes([w[0], w[1], w[2], w[3]]))?;
    }
    pass("ivshmem: guest pattern written through BAR2 (the host checks the file)");
    Ok(())
}

// edu registers (QEMU docs/specs/edu.rst).
const EDU_ID: usize = 0x00;
const EDU_LIVENESS: usize = 0x04;
const EDU_IRQ_STATUS: usize = 0x24;
const EDU_IRQ_ACK: usize = 0x64;
const EDU_DMA_SRC: usize = 0x80;
const EDU_DMA_DST: usize = 0x88;
const EDU_DMA_COUNT: usize = 0x90;
const EDU_DMA_CMD: usize = 0x98;
const DMA_START: u64 = 1;
const DMA_TO_RAM: u64 = 2;
const DMA_IRQ: u64 = 4;
const EDU_BUFFER: u64 = 0x40000;
const DMA_IRQ_STATUS: u32 = 0x100;
/// QEMU 7.2's edu rejects a whole 4096-byte transfer (off by one); 2048 is safe.
const LEN: usize = 2048;

fn dma(bar: &Bar, src: u64, dst: u64, cmd: u64) -> R<()> {
    bar.write64(EDU_DMA_SRC, src)?;
    bar.write64(EDU_DMA_DST, dst)?;
    bar.write64(EDU_DMA_COUNT, LEN as u64)?;
    bar.write64(EDU_DMA_CMD, cmd | DMA_START | DMA_IRQ)?;
    let t0 = Instant::now();
    while bar.read64(EDU_DMA_CMD)? & DMA_START != 0 {
        if t0.elapsed() > Duration::from_secs(10) {
            return Err("edu: DMA did not finish in 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

fn edu(bdf: &str) -> R<()> {
    let dev = Device::open(bdf)?;
    let bar = dev.map_bar(0)?;
    let id = bar.read32(EDU_ID)?;
    if id & 0xFF != 0xED {
        return Err(format!("edu: identification register reads {id:#x}, expected 0x..ed").into());
    }
    bar.write32(EDU_LIVENESS, 0x1234_5678)?;
    let live = bar.read32(EDU_LIVENESS)?;
    if live != !0x1234_5678u32 {
        return Err(format!(
            "edu: liveness register reads {live:#x}, expected {:#x}",
            !0x1234_5678u32
        )
        .into());
    }
    pass("edu: identification and liveness registers through the BAR0 mapping");
    dev.enable_bus_master()?;
    pass("edu: bus mastering enabled through the config region");
    let irq = dev.enable_msi()?;

    let buf = DmaBuffer::new(3 * 4096)?;
    let pat = pattern::bytes(0xED, LEN);
    buf.write(0, &pat);
    let iova: u64 = 0x10_0000; // below edu's 28-bit DMA limit
    // SAFETY: buf is a live anonymous mapping owned here, page aligned; it stays mapped until
    // the unmap below, and it is only accessed through volatile copies.
    unsafe { dev.dma_map(iova, buf.as_ptr(), buf.len())? };

    dma(&bar, iova, EDU_BUFFER, 0)?;
    expect_irq(&bar, &irq, "RAM to device")?;
    dma(&bar, EDU_BUFFER, iova + 4096, DMA_TO_RAM)?;
    expect_irq(&bar, &irq, "device to RAM")?;
    if buf.read(4096, LEN) != pat {
        return Err(
            "edu: the bytes that came back through the IOMMU differ from those sent".into(),
        );
    }
    pass("edu: DMA to the device and back through the IOMMU, an MSI after each transfer");

    // Unmapped: the device's write must not reach the buffer.
    let before = buf.read(8192, LEN);
    dev.dma_unmap(iova, buf.len())?;
    dma(&bar, EDU_BUFFER, iova + 8192, DMA_TO_RAM)?;
    let _ = irq.wait(Duration::from_millis(500))?;
    bar.write32(EDU_IRQ_ACK, DMA_IRQ_STATUS)?;
    if buf.read(8192, LEN) != before {
        return Err("edu: a DMA to an unmapped IOVA reached memory".into());
    }
    pass("edu: a DMA to an unmapped IOVA did not reach memory");
    dev.disable_msi()?;
    Ok(())
}

fn expect_irq(bar: &Bar, irq: &rnic_driver::Interrupt, what: &str) -> R<()> {
    let n = irq.wait(Duration::from_secs(5))?;
    let status = bar.read32(EDU_IRQ_STATUS)?;
    if n == 0 {
        return Err(format!("edu: no MSI after the {what} DMA (status {status:#x})").into());
    }
    if status & DMA_IRQ_STATUS == 0 {
        return Err(format!("edu: MSI after the {what} DMA but status {status:#x}").into());
    }
    bar.write32(EDU_IRQ_ACK, DMA_IRQ_STATUS)?;
    Ok(())
}
