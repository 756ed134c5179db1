//! `cargo xtask cross-test`: the tests of the crates with target-specific code on 64-bit ARM
//! Linux, under qemu-user emulating a Cortex-A72 (Raspberry Pi 4, AWS Graviton1) when the host
//! is not aarch64 itself.

use std::env;
use std::process::Command;

use crate::shell::{self, Result, TestCounts, cargo, run, run_tee};

const TARGET: &str = "aarch64-unknown-linux-gnu";

/// The reference ARM core of the project's reports.
const CPU: &str = "cortex-a72";

/// Debian's cross linker, and qemu-user's sysroot for the dynamic loader and glibc.
const LINKER: &str = "aarch64-linux-gnu-gcc";
const SYSROOT: &str = "/usr/aarch64-linux-gnu";

const LINKER_VAR: &str = "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER";
const RUNNER_VAR: &str = "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER";

/// The packages whose tests run on aarch64.
const CROSS_PACKAGES: [&str; 4] = [
    "riffpe",
    "riffpe-batch",
    "riffpe-format",
    "riffpe-reference",
];

/// Tests left out under emulation: the exhaustive bijection check on every domain up to 10 000
/// messages (pure permutation logic, the same on every target, and 100 to 200 s under qemu;
/// the host runs it). The vectors and the comparison with the reference still run.
const EMULATED_SKIPPED_TESTS: [&str; 1] = ["exhaustive_bijection_on_small_domains"];

/// Cases each property runs under emulation (`PROPTEST_CASES`; on the host each property's own
/// count, 48 to 256, where the random parameters are the point): the emulated run holds the
/// target's kernels and backend to the portable paths and the reference, which the fixed tests
/// and a few random cases cover; the host's counts cost minutes of emulation.
pub const EMULATED_PROPTEST_CASES: &str = "24";

/// The Debian packages of the cross linker and the glibc it links against.
const LINKER_PACKAGES: [&str; 2] = ["gcc-aarch64-linux-gnu", "libc6-dev-arm64-cross"];

/// Cargo for the aarch64 target: linker and runner set unless the caller set them already
/// (e.g. `CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -cpu neoverse-n1 …"`).
struct Cross {
    native: bool,
}

impl Cross {
    fn cargo(&self, args: &[&str]) -> Command {
        let mut command = cargo();
        command.args(args).args(["--target", TARGET]);
        if !self.native {
            if env::var_os(LINKER_VAR).is_none() {
                command.env(LINKER_VAR, LINKER);
            }
            if env::var_os(RUNNER_VAR).is_none() {
                command.env(RUNNER_VAR, format!("qemu-aarch64 -cpu {CPU} -L {SYSROOT}"));
            }
        }
        command
    }

    fn runner(&self) -> String {
        match env::var(RUNNER_VAR) {
            Ok(runner) => runner,
            Err(_) if self.native => "none: native aarch64 host".to_owned(),
            Err(_) => format!("qemu-aarch64 -cpu {CPU} -L {SYSROOT}"),
        }
    }
}

/// The cross linker and qemu-user, when missing.
fn install_tools() -> Result {
    if !shell::have(LINKER) {
        shell::apt_install(&LINKER_PACKAGES, None)?;
    }
    if !shell::have(LINKER) {
        return Err(format!("`{LINKER}` is still missing after installing").into());
    }
    install_qemu("qemu-aarch64")
}

/// qemu-user, which holds `program` (`qemu-aarch64`, `qemu-x86_64`), when missing. On Debian 12
/// it comes from bookworm-backports (10.x): from 8.1 qemu runs the guest's AES instructions on
/// the host's AES-NI, which halves the emulated tests' time, and from 8.2 it shows the emulated
/// CPU in `/proc/cpuinfo` (7.2 shows the host's).
pub fn install_qemu(program: &str) -> Result {
    if !shell::have(program) {
        let backports = shell::os_codename()
            .filter(|codename| codename == "bookworm")
            .is_some()
            && shell::add_apt_source(
                "bookworm-backports",
                "deb http://deb.debian.org/debian bookworm-backports main",
            )?;
        shell::apt_install(&["qemu-user"], backports.then_some("bookworm-backports"))?;
    }
    if !shell::have(program) {
        return Err(format!("`{program}` is still missing after installing").into());
    }
    Ok(())
}

pub fn cross_test() -> Result {
    let cross = Cross {
        native: cfg!(all(target_arch = "aarch64", target_os = "linux")),
    };
    shell::ensure_targets(&[TARGET])?;
    if !cross.native {
        install_tools()?;
        let version = shell::read(Command::new("qemu-aarch64").arg("--version"))?;
        println!("qemu:   {}", version.lines().next().unwrap_or("?"));
    }
    println!("runner: {}", cross.runner());

    // First what the tests will run on: the CPU, its features and the AES backend the `aes`
    // crate selects there. The emulated Cortex-A72 has the crypto extensions, so the software
    // fallback fails the run there; a native host reports what it has (a Raspberry Pi 4 has
    // none).
    let mut probe = cross.cargo(&[
        "run",
        "--quiet",
        "--package",
        "riffpe-examples",
        "--example",
        "aes_backend",
    ]);
    if !cross.native {
        probe.args(["--", "--require-hardware"]);
    }
    run(&mut probe)?;

    // The tests of the crates whose code or results depend on the target: the core (AES
    // backends, selection kernels, lockstep), the batch crate (lanes per backend, threads),
    // the formats and the plain reference, vectors included. The CLI, the benches and the
    // examples hold no target-specific code; the host runs them.
    let mut tests = cross.cargo(&["test"]);
    for package in CROSS_PACKAGES {
        tests.args(["--package", package]);
    }
    if !cross.native {
        tests
            .env("PROPTEST_CASES", EMULATED_PROPTEST_CASES)
            .arg("--");
        for test in EMULATED_SKIPPED_TESTS {
            tests.args(["--skip", test]);
        }
    }
    let output = run_tee(&mut tests)?;
    println!(
        "{TARGET} ({}): {}",
        cross.runner(),
        TestCounts::parse(&output)
    );
    Ok(())
}
