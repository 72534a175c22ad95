//! Guest images built from the host's installed Debian packages: the uncompressed kernel
//! (`vmlinux`, which QEMU boots directly and faster than the bzImage) and a busybox initramfs
//! holding the kernel modules (in dependency order), the tools with every library `ldd` lists,
//! and an `/init` that loads the modules and runs a script handed over on the kernel command
//! line. Nothing is downloaded; images are cached under the cache directory (target/qemu/).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};

use crate::cpio::CpioWriter;

/// The Debian packages the QEMU harness needs on the host.
pub const PACKAGES: &[&str] = &[
    "qemu-system-x86",
    "linux-image-amd64",
    "busybox-static",
    "cpio",
    "kmod",
    "rdma-core",
    "ibverbs-providers",
    "ibverbs-utils",
    "perftest",
    "rdmacm-utils",
    "iproute2",
];

/// The apt-get command that installs `pkgs`.
pub fn apt_command(pkgs: &[&str]) -> String {
    format!("apt-get install -y {}", pkgs.join(" "))
}

/// Errors unless every package of `pkgs` is installed, naming the apt-get command that fixes it.
pub fn require_packages(pkgs: &[&str]) -> Result<()> {
    let mut missing = Vec::new();
    for &p in pkgs {
        let out = Command::new("dpkg-query")
            .args(["-W", "-f=${Status}", p])
            .output();
        let ok = match out {
            Ok(o) => {
                o.status.success() && String::from_utf8_lossy(&o.stdout).contains(" installed")
            }
            Err(_) => false,
        };
        if !ok {
            missing.push(p);
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        bail!(
            "Debian packages missing for the QEMU harness: {}; install them with: {}",
            missing.join(", "),
            apt_command(&missing)
        )
    }
}

/// The cache directory for images and run output: `$RNIC_QEMU_CACHE`, else the workspace's
/// `target/qemu`.
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("RNIC_QEMU_CACHE") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(d).join("qemu");
    }
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    ws.canonicalize().unwrap_or(ws).join("target/qemu")
}

/// What goes into an initramfs.
#[derive(Clone, Debug, Hash)]
pub struct ImageSpec {
    /// Used in the cached file's name.
    pub name: String,
    /// Kernel modules by name (`-` and `_` are the same); their dependencies come along.
    pub modules: Vec<String>,
    /// Host executables copied to the same path, with the libraries `ldd` lists.
    pub binaries: Vec<PathBuf>,
    /// Host files or directories (copied recursively) put at the same path; shared objects
    /// among them bring their libraries too.
    pub files: Vec<PathBuf>,
    /// Extra files: guest path, contents, permissions.
    pub extra: Vec<(String, Vec<u8>, u32)>,
}

/// The image for soft-RoCE peers: virtio-net, rdma_rxe, the verbs tools and perftest.
pub fn rxe_spec() -> ImageSpec {
    let bins = [
        "/usr/bin/ibv_rc_pingpong",
        "/usr/bin/ibv_ud_pingpong",
        "/usr/bin/ibv_devinfo",
        "/usr/bin/ib_send_bw",
        "/usr/bin/ib_write_bw",
        "/usr/bin/ib_read_bw",
        "/usr/bin/ib_atomic_bw",
        "/usr/bin/rping",
        "/usr/bin/rdma",
    ];
    ImageSpec {
        name: "rxe".into(),
        modules: [
            "virtio_net",
            "virtio_pci",
            "crc32_generic",
            "rdma_rxe",
            "ib_uverbs",
            "rdma_ucm",
            "ib_umad",
        ]
        .map(String::from)
        .to_vec(),
        binaries: bins.map(PathBuf::from).to_vec(),
        files: ["/etc/libibverbs.d", "/usr/lib/x86_64-linux-gnu/libibverbs"]
            .map(PathBuf::from)
            .to_vec(),
        extra: Vec::new(),
    }
}

/// The image for VFIO tests: the VFIO modules and a test binary (static), run as the script.
pub fn vfio_spec(test_binary: &Path) -> ImageSpec {
    ImageSpec {
        name: "vfio".into(),
        modules: ["vfio_pci", "vfio_iommu_type1"].map(String::from).to_vec(),
        binaries: vec![test_binary.to_owned()],
        files: Vec::new(),
        extra: Vec::new(),
    }
}

/// A built guest image.
#[derive(Clone, Debug)]
pub struct GuestImage {
    pub kernel_version: String,
    /// The uncompressed kernel (ELF).
    pub vmlinux: PathBuf,
    /// The initramfs (uncompressed newc cpio).
    pub initrd: PathBuf,
    /// Modules in the order `/init` loads them.
    pub modules: Vec<String>,
}

/// The installed kernel to use: `$RNIC_QEMU_KERNEL` if set, else the newest version that has
/// both `/boot/vmlinuz-V` and `/lib/modules/V`.
pub fn kernel_version() -> Result<String> {
    if let Ok(v) = std::env::var("RNIC_QEMU_KERNEL") {
        return Ok(v);
    }
    let mut found = Vec::new();
    let dir = fs::read_dir("/lib/modules").with_context(|| {
        format!(
            "no /lib/modules: install a guest kernel with: {}",
            apt_command(&["linux-image-amd64"])
        )
    })?;
    for e in dir.flatten() {
        let v = e.file_name().to_string_lossy().into_owned();
        if Path::new(&format!("/boot/vmlinuz-{v}")).exists()
            && Path::new(&format!("/lib/modules/{v}/modules.dep")).exists()
        {
            found.push(v);
        }
    }
    found.sort_by_key(|v| version_key(v));
    found.pop().ok_or_else(|| {
        anyhow!(
            "no kernel with both /boot/vmlinuz-V and /lib/modules/V/modules.dep: install one with: {}",
            apt_command(&["linux-image-amd64"])
        )
    })
}

fn version_key(v: &str) -> Vec<u64> {
    v.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap_or(0))
        .collect()
}

/// Extracts the ELF kernel from a compressed bzImage: finds each compression magic and feeds
/// the rest of the file to the matching decompressor until one yields an ELF.
pub fn extract_vmlinux(bzimage: &Path) -> Result<Vec<u8>> {
    let data = fs::read(bzimage).with_context(|| format!("reading {}", bzimage.display()))?;
    let formats: [(&[u8], &str); 4] = [
        (&[0x1F, 0x8B, 0x08], "gzip"),
        (&[0xFD, b'7', b'z', b'X', b'Z', 0x00], "xz"),
        (&[0x28, 0xB5, 0x2F, 0xFD], "zstd"),
        (&[0x02, 0x21, 0x4C, 0x18], "lz4"),
    ];
    let mut tried = Vec::new();
    for (magic, tool) in formats {
        let mut from = 0;
        while let Some(pos) = find(&data[from..], magic) {
            let at = from + pos;
            from = at + 1;
            tried.push(format!("{tool}@{at}"));
            if let Some(elf) = decompress(tool, &data[at..]) {
                return Ok(elf);
            }
            if tried.len() > 16 {
                break;
            }
        }
    }
    bail!(
        "{}: no compressed ELF kernel found (tried {})",
        bzimage.display(),
        if tried.is_empty() {
            "no magic matched".into()
        } else {
            tried.join(", ")
        }
    )
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Runs `tool -dc` on `input`; the trailing bytes after the stream make it exit non-zero, so
/// only the output decides (an ELF header).
fn decompress(tool: &str, input: &[u8]) -> Option<Vec<u8>> {
    let mut child = Command::new(tool)
        .arg("-dc")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let owned = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&owned);
    });
    let out = child.wait_with_output().ok()?;
    let _ = writer.join();
    (out.stdout.len() > 1 << 20 && out.stdout.starts_with(b"\x7fELF")).then_some(out.stdout)
}

fn norm(name: &str) -> String {
    name.replace('-', "_")
}

fn module_name(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    norm(file.trim_end_matches(".ko").trim_end_matches(".ko.xz"))
}

/// Resolves module names to `.ko` paths (relative to `/lib/modules/V`) in load order:
/// every module after its dependencies, each once. Built-in modules are left out.
pub fn resolve_modules(
    dep_text: &str,
    builtin_text: &str,
    wanted: &[String],
) -> Result<Vec<String>> {
    let mut deps: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for line in dep_text.lines() {
        let Some((path, rest)) = line.split_once(':') else {
            continue;
        };
        let list = rest.split_whitespace().map(String::from).collect();
        deps.insert(module_name(path), (path.to_string(), list));
    }
    let builtin: BTreeSet<String> = builtin_text.lines().map(module_name).collect();
    let mut order = Vec::new();
    let mut seen = BTreeSet::new();
    fn visit(
        path: &str,
        deps: &BTreeMap<String, (String, Vec<String>)>,
        seen: &mut BTreeSet<String>,
        order: &mut Vec<String>,
    ) {
        if !seen.insert(path.to_string()) {
            return;
        }
        if let Some((_, ds)) = deps.get(&module_name(path)) {
            for d in ds {
                visit(d, deps, seen, order);
            }
        }
        order.push(path.to_string());
    }
    for w in wanted {
        let n = norm(w);
        match deps.get(&n) {
            Some((path, _)) => visit(&path.clone(), &deps, &mut seen, &mut order),
            None if builtin.contains(&n) => {}
            None => bail!("kernel module {w} is neither in modules.dep nor built in"),
        }
    }
    Ok(order)
}

/// Parses `ldd` output into library paths (the loader included). Errors name what was missing.
pub fn parse_ldd(bin: &Path, text: &str) -> Result<Vec<PathBuf>> {
    let mut libs = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.contains("not a dynamic executable") || line.starts_with("statically linked") {
            return Ok(Vec::new());
        }
        if line.contains("=> not found") {
            bail!("{}: ldd cannot find {}", bin.display(), line);
        }
        let path = match line.split_once("=>") {
            Some((_, right)) => right.split_whitespace().next(),
            None => line
                .split_whitespace()
                .next()
                .filter(|p| p.starts_with('/')),
        };
        if let Some(p) = path.filter(|p| p.starts_with('/')) {
            libs.push(PathBuf::from(p));
        }
    }
    Ok(libs)
}

fn ldd(bin: &Path) -> Result<Vec<PathBuf>> {
    let out = Command::new("ldd")
        .arg(bin)
        .output()
        .with_context(|| format!("running ldd on {}", bin.display()))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    parse_ldd(bin, &text)
}

/// The `/init` of every image: mounts, loads the modules, decodes the base64 script from the
/// kernel command line (`rnic_script=`), runs it, prints `RNIC-EXIT <status>` and powers off.
pub const INIT: &str = r#"#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /bin /sbin /usr/bin /usr/sbin /run /var
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "RNIC-BOOTED uptime=$(cut -d' ' -f1 /proc/uptime)"
while read -r m; do
    insmod "/lib/modules/$m" || echo "RNIC-INSMOD-FAILED $m"
done < /etc/rnic/modules
script=""
for a in $(cat /proc/cmdline); do
    case "$a" in rnic_script=*) script="${a#rnic_script=}" ;; esac
done
if [ -n "$script" ]; then
    echo "$script" | base64 -d > /tmp/run.sh
    sh /tmp/run.sh
    rc=$?
else
    echo "RNIC: no rnic_script= on the kernel command line"
    rc=99
fi
echo "RNIC-EXIT $rc"
poweroff -f
"#;

/// Changes whenever the way an initramfs is laid out changes, so cached images are rebuilt.
const LAYOUT_VERSION: u32 = 2;

/// A temporary name beside `path` that no other process or thread building the same image
/// uses at the same time (tests build the image concurrently); renamed into place when done.
fn unique_tmp(path: &Path) -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".tmp.{}.{n}", std::process::id()));
    PathBuf::from(name)
}

/// Builds (or finds in the cache) the kernel and initramfs for `spec`. Safe to call from
/// several processes at once: each writes a temporary file of its own and renames it.
pub fn build(spec: &ImageSpec, cache: &Path) -> Result<GuestImage> {
    require_packages(&["linux-image-amd64", "busybox-static", "kmod"])?;
    let ver = kernel_version()?;
    fs::create_dir_all(cache).with_context(|| format!("creating {}", cache.display()))?;

    let vmlinux = cache.join(format!("vmlinux-{ver}"));
    if !vmlinux.exists() {
        let elf = extract_vmlinux(Path::new(&format!("/boot/vmlinuz-{ver}")))?;
        let tmp = unique_tmp(&vmlinux);
        fs::write(&tmp, elf).with_context(|| format!("writing {}", tmp.display()))?;
        fs::rename(&tmp, &vmlinux)?;
    }

    let moddir = PathBuf::from(format!("/lib/modules/{ver}"));
    let dep = fs::read_to_string(moddir.join("modules.dep"))
        .with_context(|| format!("reading {}/modules.dep", moddir.display()))?;
    let builtin = fs::read_to_string(moddir.join("modules.builtin")).unwrap_or_default();
    let modules =
        resolve_modules(&dep, &builtin, &spec.modules).with_context(|| format!("kernel {ver}"))?;

    // Host files and where they go; libraries of every binary and shared object.
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    let busybox = Path::new("/bin/busybox");
    if !busybox.exists() {
        bail!(
            "/bin/busybox missing: install it with: {}",
            apt_command(&["busybox-static"])
        );
    }
    files.insert("/bin/busybox".into(), busybox.into());
    let mut need_libs: Vec<PathBuf> = Vec::new();
    for b in &spec.binaries {
        if !b.exists() {
            bail!(
                "{} is not installed (see the package list: {})",
                b.display(),
                apt_command(PACKAGES)
            );
        }
        // The guest runs the binary; it never needs its debug information, which is most of a
        // debug build and would not fit the guest's memory once unpacked.
        files.insert(b.to_string_lossy().into_owned(), stripped_copy(b, cache)?);
        need_libs.push(b.clone());
    }
    for f in &spec.files {
        collect(f, &mut files, &mut need_libs)?;
    }
    for gcc in [
        "/lib/x86_64-linux-gnu/libgcc_s.so.1",
        "/usr/lib/x86_64-linux-gnu/libgcc_s.so.1",
    ] {
        if Path::new(gcc).exists() {
            files.insert(gcc.into(), gcc.into());
            break;
        }
    }
    for b in &need_libs {
        for lib in ldd(b)? {
            files.insert(lib.to_string_lossy().into_owned(), lib);
        }
    }
    for m in &modules {
        files.insert(format!("/lib/modules/{m}"), moddir.join(m));
    }

    // Cache key: the spec, the kernel, and every input file's size and modification time.
    let mut h = DefaultHasher::new();
    spec.hash(&mut h);
    ver.hash(&mut h);
    INIT.hash(&mut h);
    LAYOUT_VERSION.hash(&mut h);
    for (g, host) in &files {
        g.hash(&mut h);
        let md = fs::metadata(host).with_context(|| format!("reading {}", host.display()))?;
        md.len().hash(&mut h);
        md.modified().ok().hash(&mut h);
    }
    let initrd = cache.join(format!("initrd-{}-{:016x}.cpio", spec.name, h.finish()));
    if !initrd.exists() {
        write_initrd(&initrd, &files, &modules, spec)?;
        // Older images of the same kind are stale now.
        let prefix = format!("initrd-{}-", spec.name);
        for e in fs::read_dir(cache)?.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with(&prefix) && n.ends_with(".cpio") && e.path() != initrd {
                let _ = fs::remove_file(e.path());
            }
        }
    }
    Ok(GuestImage {
        kernel_version: ver,
        vmlinux,
        initrd,
        modules,
    })
}

/// A copy of `bin` without debug sections, kept in `cache` under a name made from the
/// original's path, size and modification time (so a rebuilt binary gets a fresh copy).
fn stripped_copy(bin: &Path, cache: &Path) -> Result<PathBuf> {
    let md = fs::metadata(bin).with_context(|| format!("reading {}", bin.display()))?;
    let mut h = DefaultHasher::new();
    bin.hash(&mut h);
    md.len().hash(&mut h);
    md.modified().ok().hash(&mut h);
    let name = bin
        .file_name()
        .map_or_else(|| "bin".into(), |n| n.to_string_lossy().into_owned());
    let dir = cache.join("stripped");
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let out = dir.join(format!("{name}-{:016x}", h.finish()));
    if out.exists() {
        return Ok(out);
    }
    let prefix = format!("{name}-");
    for e in fs::read_dir(&dir)?.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        let stale = n
            .strip_prefix(&prefix)
            .is_some_and(|rest| rest.len() == 16 && rest.bytes().all(|c| c.is_ascii_hexdigit()));
        if stale {
            let _ = fs::remove_file(e.path());
        }
    }
    let tmp = unique_tmp(&out);
    let st = Command::new("objcopy")
        .arg("--strip-debug")
        .arg(bin)
        .arg(&tmp)
        .status()
        .with_context(|| {
            format!(
                "running objcopy (install it with: {})",
                apt_command(&["binutils"])
            )
        })?;
    if !st.success() {
        let _ = fs::remove_file(&tmp);
        bail!("objcopy --strip-debug {} failed ({st})", bin.display());
    }
    fs::rename(&tmp, &out)?;
    Ok(out)
}

fn collect(
    path: &Path,
    files: &mut BTreeMap<String, PathBuf>,
    libs: &mut Vec<PathBuf>,
) -> Result<()> {
    let md = fs::metadata(path).with_context(|| {
        format!(
            "{} missing (install the packages: {})",
            path.display(),
            apt_command(PACKAGES)
        )
    })?;
    if md.is_dir() {
        for e in fs::read_dir(path)? {
            collect(&e?.path(), files, libs)?;
        }
    } else {
        if path.to_string_lossy().contains(".so") {
            libs.push(path.to_owned());
        }
        files.insert(path.to_string_lossy().into_owned(), path.to_owned());
    }
    Ok(())
}

fn write_initrd(
    out: &Path,
    files: &BTreeMap<String, PathBuf>,
    modules: &[String],
    spec: &ImageSpec,
) -> Result<()> {
    let mut all: BTreeMap<String, (Vec<u8>, u32)> = BTreeMap::new();
    for (g, host) in files {
        let data = fs::read(host).with_context(|| format!("reading {}", host.display()))?;
        // The host file's permissions (symlinks followed), so executables stay executable.
        let mode = fs::metadata(host)?.permissions().mode() & 0o777;
        all.insert(g.clone(), (data, mode));
    }
    all.insert("/init".into(), (INIT.as_bytes().to_vec(), 0o755));
    let mut list = modules.join("\n");
    list.push('\n');
    all.insert("/etc/rnic/modules".into(), (list.into_bytes(), 0o644));
    for (g, data, perm) in &spec.extra {
        all.insert(g.clone(), (data.clone(), *perm));
    }
    // Every parent directory first.
    let mut dirs = BTreeSet::new();
    for g in all.keys() {
        let mut p = Path::new(g).parent();
        while let Some(d) = p {
            if d != Path::new("/") {
                dirs.insert(d.to_string_lossy().into_owned());
            }
            p = d.parent();
        }
    }
    let tmp = unique_tmp(out);
    let f = fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut w = CpioWriter::new(std::io::BufWriter::new(f));
    for d in &dirs {
        w.dir(d, 0o755)?;
    }
    // /lib64 holds the loader on Debian; /lib and /bin are real directories here.
    for (g, (data, perm)) in &all {
        w.file(g, *perm, data)?;
    }
    w.finish()?;
    fs::rename(&tmp, out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEP: &str = "\
kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko: kernel/net/ipv6/ip6_udp_tunnel.ko kernel/net/ipv4/udp_tunnel.ko kernel/drivers/infiniband/core/ib_uverbs.ko kernel/drivers/infiniband/core/ib_core.ko
kernel/drivers/infiniband/core/ib_uverbs.ko: kernel/drivers/infiniband/core/ib_core.ko
kernel/drivers/infiniband/core/ib_core.ko:
kernel/net/ipv4/udp_tunnel.ko:
kernel/net/ipv6/ip6_udp_tunnel.ko:
kernel/crypto/crc32_generic.ko:
";

    #[test]
    fn modules_come_after_their_dependencies_once() {
        let order = resolve_modules(
            DEP,
            "kernel/drivers/virtio/virtio.ko\n",
            &[
                "rdma-rxe".into(),
                "ib_uverbs".into(),
                "virtio".into(),
                "crc32_generic".into(),
            ],
        )
        .unwrap();
        let pos = |n: &str| order.iter().position(|p| p.ends_with(n)).unwrap();
        assert_eq!(order.len(), 6, "{order:?}");
        assert!(pos("ib_core.ko") < pos("ib_uverbs.ko"));
        assert!(pos("ib_uverbs.ko") < pos("rdma_rxe.ko"));
        assert!(pos("udp_tunnel.ko") < pos("rdma_rxe.ko"));
        assert!(pos("ip6_udp_tunnel.ko") < pos("rdma_rxe.ko"));
        assert!(order.last().unwrap().ends_with("crc32_generic.ko"));
    }

    #[test]
    fn unknown_module_is_an_error_naming_it() {
        let e = resolve_modules(DEP, "", &["no_such_mod".into()]).unwrap_err();
        assert!(e.to_string().contains("no_such_mod"), "{e}");
    }

    #[test]
    fn ldd_output_is_parsed() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibibverbs.so.1 => /lib/x86_64-linux-gnu/libibverbs.so.1 (0x7f)\n\t/lib64/ld-linux-x86-64.so.2 (0x7f)\n";
        let libs = parse_ldd(Path::new("/x"), text).unwrap();
        assert_eq!(
            libs,
            vec![
                PathBuf::from("/lib/x86_64-linux-gnu/libibverbs.so.1"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2")
            ]
        );
        assert!(
            parse_ldd(Path::new("/x"), "\tnot a dynamic executable\n")
                .unwrap()
                .is_empty()
        );
        let e = parse_ldd(Path::new("/x"), "\tlibfoo.so.1 => not found\n").unwrap_err();
        assert!(e.to_string().contains("libfoo"), "{e}");
    }

    #[test]
    fn a_missing_package_is_named_with_the_apt_get_command() {
        let e = require_packages(&["rnic-no-such-package-x"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("install them with: apt-get install -y rnic-no-such-package-x"),
            "{e}"
        );
    }
}
