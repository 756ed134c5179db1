//! `cargo xtask cross-test`: the workspace's tests on 64-bit ARM Linux, under qemu-user emulating
//! a Cortex-A72 (Raspberry Pi 4, AWS Graviton1) when the host is not aarch64 itself.

use std::env;
use std::process::Command;

use crate::shell::{self, Result, TestCounts, cargo, run, run_tee};
use crate::workspace::Metadata;

const TARGET: &str = "aarch64-unknown-linux-gnu";

/// The reference ARM core of the project's reports.
const CPU: &str = "cortex-a72";

/// Debian's cross linker, and qemu-user's sysroot for the dynamic loader and glibc.
const LINKER: &str = "aarch64-linux-gnu-gcc";
const SYSROOT: &str = "/usr/aarch64-linux-gnu";

const LINKER_VAR: &str = "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER";
const RUNNER_VAR: &str = "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER";

const BENCH_PACKAGE: &str = "riffpe-benches";

/// Tests left out under emulation: the exhaustive bijection check on every domain up to 10 000
/// messages (pure permutation logic, the same on every target, and 100 to 200 s under qemu;
/// the host runs it). The vectors and the comparison with the reference still run.
const EMULATED_SKIPPED_TESTS: [&str; 1] = ["exhaustive_bijection_on_small_domains"];

/// Bench targets that run only in part under emulation, with the criterion filter they get.
const EMULATED_BENCH_FILTERS: [(&str, &str); 1] = [("throughput", "^throughput-encrypt/parallel/")];

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

/// The cross linker and qemu-user, when missing. On Debian 12 qemu comes from
/// bookworm-backports (10.x): from 8.1 qemu runs the guest's AES instructions on the host's
/// AES-NI, which halves the emulated tests' time, and from 8.2 it shows the emulated CPU in
/// `/proc/cpuinfo` (7.2 shows the host's).
fn install_tools() -> Result {
    if !shell::have(LINKER) {
        shell::apt_install(&LINKER_PACKAGES, None)?;
    }
    if !shell::have("qemu-aarch64") {
        let backports = shell::os_codename()
            .filter(|codename| codename == "bookworm")
            .is_some()
            && shell::add_apt_source(
                "bookworm-backports",
                "deb http://deb.debian.org/debian bookworm-backports main",
            )?;
        shell::apt_install(&["qemu-user"], backports.then_some("bookworm-backports"))?;
    }
    for program in [LINKER, "qemu-aarch64"] {
        if !shell::have(program) {
            return Err(format!("`{program}` is still missing after installing").into());
        }
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

    // Every test of the workspace, vectors included. The CLI's end-to-end tests start the
    // `riffpe` binary as a child process, which the host kernel cannot execute without a
    // binfmt_misc registration for qemu, so under emulation only the CLI's unit tests run.
    let metadata = Metadata::load()?;
    let mut workspace = cross.cargo(&[
        "test",
        "--workspace",
        "--exclude",
        "xtask",
        "--exclude",
        "riffpe-cli",
    ]);
    if !cross.native {
        workspace.arg("--");
        for test in EMULATED_SKIPPED_TESTS {
            workspace.args(["--skip", test]);
        }
    }
    let mut output = run_tee(&mut workspace)?;
    let mut cli = cross.cargo(&["test", "--package", "riffpe-cli"]);
    if !cross.native {
        cli.arg("--bins");
        if !metadata.targets("riffpe-cli", "lib").is_empty() {
            cli.arg("--lib");
        }
    }
    output += &run_tee(&mut cli)?;

    // The criterion benches in test mode (each benchmark runs once): they build and work.
    // Emulated, the throughput bench's 1 MiB input costs 45 to 90 s per mode and direction, so
    // there only parallel encryption runs, which goes through lockstep lanes and rayon (the
    // batch crate's tests compare every mode).
    let benches = metadata.targets(BENCH_PACKAGE, "bench");
    if benches.is_empty() {
        println!("benches: {BENCH_PACKAGE} has no bench targets yet, nothing to run");
    }
    let (filtered, whole): (Vec<&String>, Vec<&String>) = benches
        .iter()
        .partition(|bench| !cross.native && EMULATED_BENCH_FILTERS.iter().any(|(b, _)| b == bench));
    if !whole.is_empty() {
        let mut command = cross.cargo(&["test", "--package", BENCH_PACKAGE]);
        for bench in whole {
            command.args(["--bench", bench]);
        }
        output += &run_tee(&mut command)?;
    }
    for bench in filtered {
        let filter = EMULATED_BENCH_FILTERS
            .iter()
            .find_map(|(b, filter)| (b == bench).then_some(*filter))
            .unwrap_or_default();
        output += &run_tee(
            cross
                .cargo(&["test", "--package", BENCH_PACKAGE, "--bench", bench])
                .args(["--", filter]),
        )?;
    }
    println!(
        "{TARGET} ({}): {}",
        cross.runner(),
        TestCounts::parse(&output)
    );
    Ok(())
}
