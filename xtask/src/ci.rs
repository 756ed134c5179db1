//! `cargo xtask ci` and the steps it is made of, in the order CI runs them.

use std::collections::BTreeSet;
use std::process::Command;

use crate::shell::{self, Result, TestCounts, Timings, cargo, run, run_tee};
use crate::workspace::Metadata;
use crate::{codegen, cross, fuzz, x86_cpus};

/// Bare-metal targets the core must build for: a Cortex-M4F and a 64-bit ARM without an OS.
pub const NO_STD_TARGETS: [&str; 2] = ["thumbv7em-none-eabihf", "aarch64-unknown-none"];

/// Steps of `ci`, by the names `--skip` takes.
pub const STEPS: [&str; 13] = [
    "fmt",
    "clippy",
    "doc",
    "test",
    "benches",
    "examples",
    "codegen",
    "python",
    "no-std",
    "cross-test",
    "x86-cpus",
    "fuzz-test",
    "fuzz-smoke",
];

/// Arguments given to examples when CI runs them (all others run without arguments).
const EXAMPLE_ARGS: &[(&str, &[&str])] = &[
    // The demonstration encrypts 100 000 numbers; in CI's debug build a few thousand do.
    ("batch_array", &["4096"]),
];

/// Seconds per fuzz target in `ci`: enough to catch a target that no longer builds or fails
/// early (longer campaigns: `cargo xtask fuzz-smoke --seconds N` or `cargo fuzz run`), while the
/// whole run stays within 40 minutes.
pub const FUZZ_SECONDS: u64 = 5;

/// The Python package: `python/ci.sh` builds the wheel into a venv, runs ruff and pytest
/// (Spark tests included).
fn python() -> Result {
    run(Command::new("bash").arg("python/ci.sh"))
}

/// Packages whose examples CI builds and runs on the host.
const EXAMPLE_PACKAGES: [&str; 2] = ["riffpe-examples", "riffpe-example-embedded"];

#[derive(Debug)]
pub struct Options {
    pub skip: BTreeSet<String>,
    pub fuzz_seconds: u64,
    /// Run the remaining steps after a failure (the run still fails).
    pub keep_going: bool,
}

/// Everything CI runs; `.ci/run` calls this, so CI and a developer's machine run the same steps.
pub fn ci(options: &Options) -> Result {
    let mut timings = Timings::default();
    let mut failed = Vec::new();
    for name in STEPS {
        if options.skip.contains(name) {
            println!("\n== {name}: skipped (--skip {name})");
            continue;
        }
        let result = timings.step(name, || match name {
            "fmt" => fmt(),
            "clippy" => clippy(),
            "doc" => doc(),
            "test" => test(),
            "benches" => benches(),
            "examples" => examples(),
            "codegen" => codegen::codegen(),
            "python" => python(),
            "no-std" => no_std(),
            "cross-test" => cross::cross_test(),
            "x86-cpus" => x86_cpus::x86_cpus(&[]),
            "fuzz-test" => fuzz::fuzz_test(),
            "fuzz-smoke" => fuzz::fuzz_smoke(
                options.fuzz_seconds,
                fuzz::CI_SANITIZER,
                Some(fuzz::CI_CODEGEN_UNITS),
            ),
            _ => unreachable!("every step is matched"),
        });
        if let Err(error) = result {
            if !options.keep_going {
                timings.print("ci FAILED");
                return Err(error);
            }
            eprintln!("\nxtask: {error}\n(--keep-going: on to the next step)");
            failed.push(name);
        }
    }
    if failed.is_empty() {
        timings.print("ci passed");
        Ok(())
    } else {
        timings.print("ci FAILED");
        Err(format!("failed steps: {}", failed.join(", ")).into())
    }
}

fn fmt() -> Result {
    shell::ensure_component("rustfmt", cargo().args(["fmt", "--version"]))?;
    run(cargo().args(["fmt", "--all", "--", "--check"]))
}

fn clippy() -> Result {
    shell::ensure_component("clippy", cargo().args(["clippy", "--version"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))
}

fn doc() -> Result {
    run(cargo()
        .args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings"))
}

/// The README's test command, `cargo test --workspace`, on the host.
fn test() -> Result {
    let output = run_tee(cargo().args(["test", "--workspace"]))?;
    println!("host: {}", TestCounts::parse(&output));
    Ok(())
}

/// The criterion benches in test mode (each benchmark runs once): they build and work.
fn benches() -> Result {
    // Workspace-wide, as the test step: the same features, so only the bench targets are
    // compiled (with `-p riffpe-benches` feature unification differs and the engine is rebuilt).
    run(cargo().args(["test", "--workspace", "--benches"]))
}

/// Builds every example of the workspace, then runs each as `cargo run --example NAME` would
/// (the binaries just built are run directly: `cargo run -p …` would rebuild the crates with
/// that package's features alone).
fn examples() -> Result {
    run(cargo().args(["build", "--workspace", "--examples"]))?;
    let metadata = Metadata::load()?;
    let built = metadata.target_dir()?.join("debug").join("examples");
    for package in EXAMPLE_PACKAGES {
        for example in metadata.targets(package, "example") {
            let args = EXAMPLE_ARGS
                .iter()
                .find(|(name, _)| *name == example)
                .map_or(&[][..], |(_, args)| args);
            let binary = built.join(format!("{example}{}", std::env::consts::EXE_SUFFIX));
            run(Command::new(binary).args(args))?;
        }
    }
    Ok(())
}

/// The core without the standard library on bare-metal targets, and the no-alloc example.
pub fn no_std() -> Result {
    shell::ensure_targets(&NO_STD_TARGETS)?;
    let targets = NO_STD_TARGETS
        .iter()
        .flat_map(|target| ["--target", target]);
    for features in ["", "zeroize", "alloc,zeroize"] {
        let mut build = cargo();
        build.args(["build", "--package", "riffpe", "--no-default-features"]);
        if !features.is_empty() {
            build.args(["--features", features]);
        }
        run(build.args(targets.clone()))?;
    }
    run(cargo().args([
        "build",
        "--package",
        "riffpe-example-embedded",
        "--example",
        "no_alloc",
        "--target",
        NO_STD_TARGETS[0],
    ]))
}
