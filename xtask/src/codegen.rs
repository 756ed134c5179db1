//! `cargo xtask codegen`: the `riffpe` CLI's release build, with the workspace's one codegen
//! unit and with Cargo's default of 16 (how a crate that depends on riffpe builds it), checked
//! for the trace a missed inline leaves in the machine code: a call to an intrinsic. Where the
//! code around an intrinsic is not built with the intrinsic's CPU features (a closure that
//! `core`'s generic code calls, or a function built for fewer features), the intrinsic stays a
//! function of its own, called with its vectors passed through memory, as in AES-NI with
//! AVX2's row loop once (BENCHMARKS.md). x86-64 only; `objdump` (binutils) reads the binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::shell::{self, Result, cargo, run};
use crate::workspace::Metadata;

/// The functions that hold code for CPUs they never run on, and the intrinsics' modules
/// (`core::arch::x86_64`'s `avx2`, `avx512bw`, …, by prefix) that may stay calls there.
const NEVER_RUN_THERE: [(&str, &[&str]); 4] = [
    // Built for AES-NI alone (Westmere to Ivy Bridge): no AVX2 and no AVX-512 to reach.
    ("riffpe::aes_backend::ni::run", &["avx"]),
    // AES-NI with AVX2: the AVX-512 code inlined here needs VBMI or VBMI2, whose CPUs all have
    // VAES and run `vaes512`; Cascade Lake (AVX-512 without either) runs here past it.
    ("riffpe::aes_backend::ni::run_avx2", &["avx512"]),
    // VAES-256 runs only where `vaes512`'s AVX-512 is missing.
    ("riffpe::aes_backend::vaes256::run", &["avx512"]),
    // The `aes` crate's software AES, for x86-64 CPUs without AES-NI: its AVX code runs only
    // where such a CPU has AVX, which none we know of does.
    ("riffpe::aes_backend::on_batched", &["avx"]),
];

/// Intrinsics that feature detection calls once: CPUID, and XGETBV for the registers' state.
const ALWAYS_CALLED: [&str; 2] = ["cpuid", "xsave"];

pub fn codegen() -> Result {
    if !cfg!(target_arch = "x86_64") {
        println!("skipped: the check reads x86-64 machine code");
        return Ok(());
    }
    if !shell::have("objdump") {
        shell::apt_install(&["binutils"], None)?;
    }
    let target = Metadata::load()?.target_dir()?;
    let mut failures = Vec::new();
    for units in [None, Some(16)] {
        let binary = build(&target, units)?;
        let calls = intrinsic_calls(&binary)?;
        let what = units.map_or("one codegen unit".to_owned(), |n| {
            format!("{n} codegen units")
        });
        if calls.is_empty() {
            println!("{what}: no intrinsic called");
        } else {
            failures.push(format!("{what}:\n{}", list(&calls)));
        }
    }
    if failures.is_empty() {
        return Ok(());
    }
    Err(format!(
        "intrinsics left as calls (a missed inline: build the code around them with their \
         features, or without closures that `core` calls):\n{}",
        failures.join("\n")
    )
    .into())
}

/// The CLI's release binary, with the workspace's profile or `units` codegen units (in a
/// target directory of its own, so that neither build undoes the other).
fn build(target: &Path, units: Option<u32>) -> Result<PathBuf> {
    let mut build = cargo();
    build.args(["build", "--release", "--package", "riffpe-cli"]);
    let dir = match units {
        None => target.to_path_buf(),
        Some(units) => {
            let dir = target.join(format!("codegen-units-{units}"));
            build
                .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", units.to_string())
                .arg("--target-dir")
                .arg(&dir);
            dir
        }
    };
    run(&mut build)?;
    Ok(dir.join("release").join("riffpe"))
}

/// Every call to an intrinsic not allowed by [`NEVER_RUN_THERE`] or [`ALWAYS_CALLED`]: caller
/// and intrinsic, with how many times.
fn intrinsic_calls(binary: &Path) -> Result<BTreeMap<(String, String), usize>> {
    let listing = shell::read(
        Command::new("objdump")
            .args(["--disassemble", "--demangle", "--no-show-raw-insn"])
            .arg(binary),
    )?;
    let mut calls = BTreeMap::new();
    let mut function = "";
    for line in listing.lines() {
        if let Some(name) = line.strip_suffix(">:").and_then(|l| l.split_once(" <")) {
            function = name.1;
            continue;
        }
        let Some(intrinsic) = called_intrinsic(line) else {
            continue;
        };
        let module = intrinsic.split("::").next().unwrap_or_default();
        let allowed = ALWAYS_CALLED.contains(&module)
            || NEVER_RUN_THERE.iter().any(|(holder, modules)| {
                function == *holder && modules.iter().any(|m| module.starts_with(m))
            });
        if !allowed {
            *calls
                .entry((function.to_owned(), intrinsic.to_owned()))
                .or_default() += 1;
        }
    }
    Ok(calls)
}

/// The intrinsic a disassembled line calls, as `module::name` (`avx2::_mm256_shuffle_epi8`).
fn called_intrinsic(line: &str) -> Option<&str> {
    let (_, operands) = line.split_once("\tcall")?;
    let (_, target) = operands.split_once('<')?;
    let target = target.split(['>', '+']).next()?;
    ["core::core_arch::x86_64::", "core::core_arch::x86::"]
        .iter()
        .find_map(|prefix| target.strip_prefix(prefix))
}

fn list(calls: &BTreeMap<(String, String), usize>) -> String {
    calls
        .iter()
        .map(|((function, intrinsic), count)| format!("  {function} calls {intrinsic} ({count}x)"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_intrinsic_a_line_calls() {
        let direct = "  41a2f0:\tcall   4e1b40 <core::core_arch::x86::avx2::_mm256_shuffle_epi8>";
        assert_eq!(called_intrinsic(direct), Some("avx2::_mm256_shuffle_epi8"));
        let offset = "  41a2f0:\tcall   4e1b40 <core::core_arch::x86_64::cpuid::__cpuid+0x4>";
        assert_eq!(called_intrinsic(offset), Some("cpuid::__cpuid"));
        let other = "  41a2f0:\tcall   4e1b40 <riffpe::select::avx2::forward_avx2>";
        assert_eq!(called_intrinsic(other), None);
        let plt = "  41a2f0:\tcall   *0x33198c(%rip)        # 470538 <memcpy@GLIBC_2.14>";
        assert_eq!(called_intrinsic(plt), None);
        let mov = "  41a2f0:\tmov    0x8(%rsp),%rax";
        assert_eq!(called_intrinsic(mov), None);
    }
}
