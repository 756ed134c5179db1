//! The fuzz crate in CI: `fuzz-test` lints it and replays its kept inputs and hand-picked
//! cases on stable; `cargo xtask fuzz-smoke` runs every cargo-fuzz target of `fuzz/` for a
//! short while, so a target that no longer builds or crashes at once is caught (long campaigns
//! run elsewhere).

use std::path::Path;
use std::process::Command;

use crate::shell::{self, Result, cargo, run};

const MANIFEST: &str = "fuzz/Cargo.toml";

/// The fuzz crate is its own workspace: the workspace-wide fmt, clippy and test steps miss it.
pub fn fuzz_test() -> Result {
    if !Path::new(MANIFEST).is_file() {
        println!("skipped: there is no fuzz crate (fuzz/Cargo.toml) yet");
        return Ok(());
    }
    run(cargo().args(["fmt", "--manifest-path", MANIFEST, "--", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--manifest-path",
        MANIFEST,
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    run(cargo().args(["test", "--manifest-path", MANIFEST]))
}

/// Seconds each target runs when none are given.
pub const DEFAULT_SECONDS: u64 = 60;

/// The sanitizer `cargo xtask fuzz-smoke` builds with unless told otherwise.
pub const DEFAULT_SANITIZER: &str = "address";

/// The sanitizer of the short run in `ci`: none. The core's unsafe loads and stores all go
/// through references whose length safe code fixed or checked, so AddressSanitizer finds
/// little in a run this short, while it slows the build; longer runs keep it.
pub const CI_SANITIZER: &str = "none";

/// Codegen units of the short run in `ci`: cargo-fuzz builds with one unless told, which makes
/// its optimised, instrumented build the slowest of CI's builds, and a run that only catches
/// targets that no longer build or crash at once needs no tighter code. Longer runs keep one.
pub const CI_CODEGEN_UNITS: u32 = 16;

/// `cargo +nightly …` through rustup, whatever toolchain runs the xtask.
fn nightly_cargo() -> Command {
    let mut command = Command::new("cargo");
    command.arg("+nightly").env_remove("RUSTUP_TOOLCHAIN");
    command
}

/// Builds every target with `sanitizer` (a `cargo fuzz --sanitizer` value) and `codegen_units`
/// (cargo-fuzz's default of one if none) and runs each for `seconds`.
pub fn fuzz_smoke(seconds: u64, sanitizer: &str, codegen_units: Option<u32>) -> Result {
    if !Path::new("fuzz/Cargo.toml").is_file() {
        println!("skipped: there is no fuzz crate (fuzz/Cargo.toml) yet");
        return Ok(());
    }
    let toolchains = shell::read(Command::new("rustup").args(["toolchain", "list"]))?;
    if !toolchains.lines().any(|line| line.starts_with("nightly")) {
        run(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))?;
    }
    if !shell::have("cargo-fuzz") {
        // A debug build: cargo-fuzz only drives cargo, so a quicker build costs nothing later.
        run(Command::new("cargo").args(["install", "cargo-fuzz", "--locked", "--debug"]))?;
    }
    let list = shell::read(nightly_cargo().args(["fuzz", "list"]))?;
    let targets: Vec<&str> = list.split_whitespace().collect();
    if targets.is_empty() {
        println!("skipped: `cargo fuzz list` shows no fuzz targets in fuzz/ yet");
        return Ok(());
    }
    println!(
        "{} targets, {seconds} s each, sanitizer {sanitizer}: {}",
        targets.len(),
        targets.join(", ")
    );
    // `run` takes the same options as `build`, else it builds the targets again.
    let units = codegen_units.map(|units| units.to_string());
    let mut options = vec!["--sanitizer", sanitizer];
    if let Some(units) = &units {
        options.extend(["--codegen-units", units]);
    }
    run(nightly_cargo().args(["fuzz", "build"]).args(&options))?;
    for target in targets {
        run(nightly_cargo()
            .args(["fuzz", "run"])
            .args(&options)
            .args([target, "--"])
            .arg(format!("-max_total_time={seconds}")))?;
    }
    Ok(())
}
