//! Test programs on an emulated Tiger Lake (AVX-512 with VAES-512) under Bochs, for hosts
//! without AVX-512: qemu's TCG has none, and Intel SDE is not packaged. Bochs emulates a whole
//! PC, so the programs run in a Linux guest booted from a CD image: a Debian cloud kernel and
//! an initramfs of busybox, the programs and the shared libraries they load. Their output
//! comes back through the guest's serial port.
//!
//! Debian 12's own 6.1 kernel hangs early on Bochs 2.7's Tiger Lake and Ice Lake models; the
//! 6.12 kernel of bookworm-backports boots, told to leave out the CPU features whose state
//! Bochs reports inconsistently (protection keys, compacted XSAVE).

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::shell::{self, Result};

/// The Bochs CPU model: AVX-512 (F, BW, VL, …), VAES and VPCLMULQDQ.
pub const MODEL: &str = "tigerlake";

/// The limit only stops a guest that hangs: it leaves room for a busy shared host, where the
/// guests' tests run many times slower.
const TIMEOUT: Duration = Duration::from_secs(45 * 60);

/// `clearcpuid`: protection keys (their XSAVE area has no size in Bochs' CPUID) and XSAVES
/// and XSAVEC (their compacted size does not match the kernel's). Without them the kernel finds
/// the XSAVE layout inconsistent and turns AVX off.
const KERNEL_ARGS: &str = "console=ttyS0 quiet nokaslr rdinit=/init \
     clearcpuid=pku,ospke,xsaves,xsavec";

/// Debian packages: the emulator, its BIOS and its terminal display (installed with it so
/// that apt does not pick the wxWidgets one, with which Debian's Bochs 2.7 aborts while reading
/// its configuration: "buffer overflow detected"), the boot loader, the image and archive
/// tools, and a static busybox for the guest's shell.
const PACKAGES: [(&str, &str); 8] = [
    ("/usr/bin/bochs", "bochs"),
    (
        "/usr/lib/x86_64-linux-gnu/bochs/plugins/libbx_term_gui.so",
        "bochs-term",
    ),
    ("/usr/share/bochs/BIOS-bochs-latest", "bochsbios"),
    (ISOLINUX, "isolinux"),
    (LDLINUX, "syslinux-common"),
    ("/usr/bin/genisoimage", "genisoimage"),
    ("/usr/bin/cpio", "cpio"),
    ("/bin/busybox", "busybox-static"),
];

/// The boot loader, and the library it loads.
const ISOLINUX: &str = "/usr/lib/ISOLINUX/isolinux.bin";
const LDLINUX: &str = "/usr/lib/syslinux/modules/bios/ldlinux.c32";

/// Cases each property runs in a guest, fewer than under qemu: every case runs at Bochs' speed,
/// and the fixed tests the guests run hold each AVX-512 kernel to a plain sort or the reference.
const PROPTEST_CASES: u32 = 8;

/// A program for the guest to run, with its arguments.
pub struct Program {
    pub name: String,
    pub path: PathBuf,
    pub args: Vec<String>,
}

/// Installs what the guests need and returns the kernel image, kept in `cache`.
pub fn prepare(cache: &Path) -> Result<PathBuf> {
    install_tools()?;
    kernel(cache)
}

/// Runs `programs` one after another in a guest on [`MODEL`] booting `kernel`, with `work`
/// (emptied first) for its image and logs; returns what they printed, each line also shown
/// after `label`. An error if one fails or the guest does not finish.
pub fn run(programs: &[Program], kernel: &Path, work: &Path, label: &str) -> Result<String> {
    if work.exists() {
        fs::remove_dir_all(work)?;
    }
    let root = work.join("root");
    let iso = work.join("iso");
    fs::create_dir_all(root.join("bin"))?;
    fs::create_dir_all(iso.join("isolinux"))?;

    initramfs(programs, &root, &iso.join("isolinux/initrd"))?;
    for (from, to) in [
        (kernel, "vmlinuz"),
        (Path::new(ISOLINUX), "isolinux.bin"),
        (Path::new(LDLINUX), "ldlinux.c32"),
    ] {
        fs::copy(from, iso.join("isolinux").join(to))?;
    }
    fs::write(
        iso.join("isolinux/isolinux.cfg"),
        format!(
            "DEFAULT guest\nPROMPT 0\nLABEL guest\n  KERNEL vmlinuz\n  \
             APPEND initrd=initrd {KERNEL_ARGS}\n"
        ),
    )?;
    let image = work.join("boot.iso");
    shell::run(
        Command::new("genisoimage")
            .args(["-quiet", "-o"])
            .arg(&image)
            .args(["-b", "isolinux/isolinux.bin", "-c", "isolinux/boot.cat"])
            .args(["-no-emul-boot", "-boot-load-size", "4", "-boot-info-table"])
            .arg(&iso),
    )?;
    fs::remove_dir_all(&root)?;
    fs::remove_dir_all(&iso)?;

    let serial = work.join("serial.log");
    fs::write(
        work.join("bochsrc"),
        bochsrc(&image, &serial, &work.join("bochs.log")),
    )?;
    // Debian builds Bochs with its debugger, which waits for a command: `c` (continue).
    fs::write(work.join("continue.rc"), "c\n")?;
    let bochs_out = work.join("bochs.out");
    let console = fs::File::create(&bochs_out)?;
    let mut bochs = Command::new("bochs");
    bochs
        .args(["-q", "-f", "bochsrc", "-rc", "continue.rc"])
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(console.try_clone()?)
        .stderr(console);
    let output = watch(&mut bochs, &serial, label)?;

    let mut failed = Vec::new();
    for line in output.lines() {
        if let Some(exit) = line.strip_prefix("== exit ") {
            let (name, code) = exit.rsplit_once(' ').unwrap_or((exit, "?"));
            if code != "0" {
                failed.push(format!("{name} (exit {code})"));
            }
        }
    }
    if !output.lines().any(|line| line == "== done") {
        return Err(format!(
            "the guest stopped before its last program; see {} and Bochs' own output in {}",
            serial.display(),
            bochs_out.display()
        )
        .into());
    }
    if !failed.is_empty() {
        return Err(format!("failed on {MODEL}: {}", failed.join(", ")).into());
    }
    Ok(output)
}

fn install_tools() -> Result {
    let missing: Vec<&str> = PACKAGES
        .iter()
        .filter(|(file, _)| !Path::new(file).exists())
        .map(|&(_, package)| package)
        .collect();
    if !missing.is_empty() {
        shell::apt_install(&missing, None)?;
    }
    Ok(())
}

/// The kernel image, downloaded once into `cache`: the `linux-image-cloud-amd64` of
/// bookworm-backports on Debian 12, of the release itself elsewhere.
fn kernel(cache: &Path) -> Result<PathBuf> {
    let cached = cache.join("vmlinuz");
    if cached.exists() {
        return Ok(cached);
    }
    let suite = match shell::os_codename().as_deref() {
        Some("bookworm") => {
            shell::add_apt_source(
                "bookworm-backports",
                "deb http://deb.debian.org/debian bookworm-backports main",
            )?;
            Some("bookworm-backports")
        }
        _ => None,
    };
    let download = cache.join("download");
    if download.exists() {
        fs::remove_dir_all(&download)?;
    }
    fs::create_dir_all(&download)?;
    shell::run(&mut shell::apt(&["update", "-q"]))?;
    let meta = match suite {
        Some(suite) => format!("linux-image-cloud-amd64/{suite}"),
        None => "linux-image-cloud-amd64".to_owned(),
    };
    // The metapackage names the versioned kernel package it stands for.
    let image = fetch_package(&meta, &download)?;
    let depends = shell::read(
        Command::new("dpkg-deb")
            .args(["-f"])
            .arg(&image)
            .arg("Depends"),
    )?;
    let versioned = depends
        .split(',')
        .map(|item| item.split_whitespace().next().unwrap_or(""))
        .find(|name| name.starts_with("linux-image-"))
        .ok_or_else(|| format!("{meta} depends on no linux-image package: {depends}"))?
        .to_owned();
    let package = fetch_package(&versioned, &download)?;
    let unpacked = download.join("unpacked");
    shell::run(
        Command::new("dpkg-deb")
            .arg("-x")
            .arg(&package)
            .arg(&unpacked),
    )?;
    let vmlinuz = fs::read_dir(unpacked.join("boot"))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .find(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("vmlinuz-"))
        })
        .ok_or_else(|| format!("{versioned} holds no boot/vmlinuz-*"))?;
    println!("kernel: {}", vmlinuz.display());
    fs::copy(&vmlinuz, &cached)?;
    fs::remove_dir_all(&download)?;
    Ok(cached)
}

/// `apt-get download package` into `dir`; the path of the `.deb`.
fn fetch_package(package: &str, dir: &Path) -> Result<PathBuf> {
    let before: Vec<PathBuf> = debs(dir)?;
    shell::run(
        Command::new("apt-get")
            .args(["download", "-q", package])
            .current_dir(dir),
    )?;
    debs(dir)?
        .into_iter()
        .find(|deb| !before.contains(deb))
        .ok_or_else(|| format!("apt-get download {package} left no .deb").into())
}

fn debs(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|extension| extension == "deb"))
        .collect())
}

/// The guest's root file system, as a newc cpio archive at `archive`: busybox, an init that
/// runs the programs, each program in `/bin` and the shared libraries they load at the paths
/// they are loaded from.
///
/// Each property runs [`PROPTEST_CASES`] cases, and a failing one shrinks its case a few times
/// only: every case and every try runs the test again, at Bochs' speed.
fn initramfs(programs: &[Program], root: &Path, archive: &Path) -> Result {
    fs::copy("/bin/busybox", root.join("bin/busybox"))?;
    let mut script = String::from(
        "#!/bin/busybox sh\n\
         /bin/busybox mkdir -p /proc /dev /tmp\n\
         /bin/busybox mount -t proc proc /proc\n\
         /bin/busybox mount -t devtmpfs dev /dev\n\
         exec </dev/null >/dev/ttyS0 2>&1\n\
         cd /\n\
         export PROPTEST_MAX_SHRINK_ITERS=16\n",
    );
    script += &format!("export PROPTEST_CASES={PROPTEST_CASES}\n");
    for program in programs {
        let inside = root.join("bin").join(&program.name);
        fs::copy(&program.path, &inside)?;
        // Symbols stay for backtraces; the debug information would only slow the boot.
        shell::run(Command::new("strip").arg("--strip-debug").arg(&inside))?;
        for library in libraries(&program.path)? {
            let target = root.join(library.strip_prefix("/")?);
            if let Some(dir) = target.parent() {
                fs::create_dir_all(dir)?;
            }
            fs::copy(&library, &target)?;
        }
        script += &format!(
            "echo '== run {name}'\n/bin/{name} {args}\necho \"== exit {name} $?\"\n",
            name = program.name,
            args = program.args.join(" "),
        );
    }
    // The serial port drains before the guest powers off (Bochs then exits).
    script += "echo '== done'\n/bin/busybox sleep 1\n/bin/busybox poweroff -f\n";
    let init = root.join("init");
    fs::write(&init, script)?;
    // `chmod`, not `PermissionsExt`: the xtask builds on every host, Windows included.
    shell::run(Command::new("chmod").arg("755").arg(&init))?;

    let listing = shell::read(Command::new("find").arg(".").current_dir(root))?;
    let mut cpio = Command::new("cpio");
    cpio.args(["-o", "-H", "newc", "--quiet", "-O"])
        .arg(archive)
        .current_dir(root)
        .stdin(Stdio::piped());
    println!("$ {}", shell::display(&cpio));
    let mut child = cpio.spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        std::io::Write::write_all(&mut stdin, listing.as_bytes())?;
    }
    if !child.wait()?.success() {
        return Err("cpio failed".into());
    }
    Ok(())
}

/// The shared libraries `program` loads, dynamic loader included (from `ldd`).
fn libraries(program: &Path) -> Result<Vec<PathBuf>> {
    let listing = shell::read(Command::new("ldd").arg(program))?;
    Ok(listing
        .lines()
        .filter_map(|line| {
            let path = match line.split_once("=>") {
                Some((_, after)) => after.split_whitespace().next()?,
                None => line.split_whitespace().next()?,
            };
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect())
}

fn bochsrc(image: &Path, serial: &Path, log: &Path) -> String {
    format!(
        "megs: 1024\n\
         cpu: model={MODEL}, count=1, ips=400000000\n\
         romimage: file=/usr/share/bochs/BIOS-bochs-latest\n\
         vgaromimage: file=/usr/share/bochs/VGABIOS-lgpl-latest\n\
         ata0-master: type=cdrom, path={image}, status=inserted\n\
         boot: cdrom\n\
         com1: enabled=1, mode=file, dev={serial}\n\
         display_library: rfb, options=\"timeout=0\"\n\
         clock: sync=none\n\
         log: {log}\n\
         panic: action=fatal\n\
         error: action=ignore\n\
         info: action=ignore\n",
        image = image.display(),
        serial = serial.display(),
        log = log.display(),
    )
}

/// Runs `bochs`, echoing the guest's serial output as it comes; returns it all when the guest
/// powers off. Stops the emulator on a kernel panic or after [`TIMEOUT`].
fn watch(bochs: &mut Command, serial: &Path, label: &str) -> Result<String> {
    println!("$ {}", shell::display(bochs));
    let start = Instant::now();
    let mut child = bochs.spawn()?;
    let mut output = String::new();
    let mut read = 0;
    let mut pending = String::new();
    loop {
        let finished = child.try_wait()?;
        if let Ok(mut file) = fs::File::open(serial) {
            file.seek(SeekFrom::Start(read))?;
            let mut bytes = Vec::new();
            read += file.read_to_end(&mut bytes)? as u64;
            pending.push_str(&String::from_utf8_lossy(&bytes));
            while let Some(end) = pending.find('\n') {
                let line: String = pending.drain(..=end).collect();
                let line = line.trim_end_matches(['\r', '\n']);
                if line.starts_with("== exit ") {
                    println!("{label}{line} ({} in)", shell::human(start.elapsed()));
                } else {
                    println!("{label}{line}");
                }
                output.push_str(line);
                output.push('\n');
            }
        }
        if finished.is_some() {
            break;
        }
        let stop = if output.contains("Kernel panic") {
            Some("the guest's kernel panicked")
        } else if start.elapsed() > TIMEOUT {
            Some("the guest did not finish in time")
        } else {
            None
        };
        if let Some(reason) = stop {
            child.kill()?;
            child.wait()?;
            return Err(format!("{reason}; see {}", serial.display()).into());
        }
        thread::sleep(Duration::from_secs(1));
    }
    println!("{label}({})", shell::human(start.elapsed()));
    Ok(output)
}
