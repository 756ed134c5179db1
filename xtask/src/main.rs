//! `cargo xtask …`: the project's chores, CI's included, as one program (`cargo xtask help`).

mod bench_report;
mod bochs;
mod ci;
mod codegen;
mod cross;
mod fuzz;
mod machine;
mod shell;
mod workspace;
mod x86_cpus;

use std::collections::BTreeSet;
use std::env;
use std::path::PathBuf;
use std::process::ExitCode;

use shell::Result;

const HELP: &str = "\
cargo xtask: the chores of the riffpe workspace

USAGE: cargo xtask <COMMAND> [OPTIONS]

COMMANDS:
  ci             everything CI runs, in order: fmt, clippy, doc, test, benches (in test
                 mode), examples, codegen, python (python/ci.sh: wheel, ruff, pytest), no-std,
                 cross-test, x86-cpus, fuzz-test (the fuzz crate's fmt, clippy and tests,
                 which replay fuzz/regressions/), fuzz-smoke
                   --skip STEP          leave out a step (repeatable)
                   --keep-going         run the other steps after a failure (still fails)
                   --fuzz-seconds N     seconds per fuzz target (default 5, no sanitizer,
                                        16 codegen units)
  cross-test     the tests of the core, batch, format and reference crates and an AES backend
                 probe for aarch64-unknown-linux-gnu under `qemu-aarch64 -cpu cortex-a72`
                 (natively on an aarch64 host), installing the target, linker and qemu when
                 missing
  x86-cpus       the core's tests under `qemu-x86_64 -cpu MODEL` for x86-64 CPUs the host is
                 not: Westmere (AES-NI, no AVX), Haswell (AVX2, no VAES) and qemu's max
                 (VAES-256, no AVX-512); and, in two Linux guests under Bochs, on a Tiger Lake
                 (AVX-512 kernels, VAES-512); each skipped where the host runs its backend and
                 kernels itself, checking the AES backend each one gets
                   --model NAME         only this model (repeatable): Westmere,
                                        Haswell-noTSX, max, tigerlake
  codegen        the CLI's release build, with one codegen unit and with 16, checked for
                 intrinsics left as calls (a missed inline), with objdump; x86-64 only
  no-std         builds the core without default features for thumbv7em-none-eabihf and
                 aarch64-unknown-none, and the no-alloc example for thumbv7em-none-eabihf
  bench-report   runs `cargo bench -p riffpe-benches` and writes BENCHMARKS.md
                   --output FILE        where to write (default BENCHMARKS.md)
                   --report-only        no bench run: report the results already there
                   -- ARGS              passed to criterion, e.g. `-- --quick` or a filter
  fuzz-smoke     every cargo-fuzz target in fuzz/ for a short while (skipped while there are
                 none), installing nightly and cargo-fuzz when missing
                   --seconds N          per target (default 60)
                   --sanitizer NAME     cargo fuzz's sanitizer (default address; ci: none)
  help           this text

Every step prints `== step` and each command before running it; the first failure stops the
run and shows the failing command.
";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    // Commands run from the workspace root, wherever `cargo xtask` was started.
    if let Err(error) = env::set_current_dir(workspace::root()) {
        eprintln!("xtask: cannot enter the workspace root: {error}");
        return ExitCode::FAILURE;
    }
    match dispatch(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("\nxtask: error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(args: &[String]) -> Result {
    let (command, rest) = match args.split_first() {
        Some((command, rest)) => (command.as_str(), rest),
        None => ("help", &[][..]),
    };
    let mut options = Args::new(rest);
    match command {
        "ci" => {
            let mut ci = ci::Options {
                skip: BTreeSet::new(),
                fuzz_seconds: ci::FUZZ_SECONDS,
                keep_going: false,
            };
            while let Some(arg) = options.next() {
                match arg {
                    "--skip" => {
                        let step = options.value("--skip")?;
                        if !ci::STEPS.contains(&step) {
                            return Err(format!(
                                "unknown step `{step}`; the steps are {}",
                                ci::STEPS.join(", ")
                            )
                            .into());
                        }
                        ci.skip.insert(step.to_owned());
                    }
                    "--fuzz-seconds" => ci.fuzz_seconds = options.number("--fuzz-seconds")?,
                    "--keep-going" => ci.keep_going = true,
                    other => return Err(unexpected(other)),
                }
            }
            ci::ci(&ci)
        }
        "cross-test" => {
            options.none()?;
            shell::step("cross-test");
            cross::cross_test()
        }
        "x86-cpus" => {
            let mut only = Vec::new();
            while let Some(arg) = options.next() {
                match arg {
                    "--model" => only.push(options.value("--model")?.to_owned()),
                    other => return Err(unexpected(other)),
                }
            }
            shell::step("x86-cpus");
            x86_cpus::x86_cpus(&only)
        }
        "codegen" => {
            options.none()?;
            shell::step("codegen");
            codegen::codegen()
        }
        "no-std" => {
            options.none()?;
            shell::step("no-std");
            ci::no_std()
        }
        "bench-report" => {
            let mut report = bench_report::Options {
                run: true,
                output: PathBuf::from("BENCHMARKS.md"),
                bench_args: Vec::new(),
            };
            while let Some(arg) = options.next() {
                match arg {
                    "--output" => report.output = PathBuf::from(options.value("--output")?),
                    "--report-only" => report.run = false,
                    "--" => report.bench_args = options.remaining(),
                    other => return Err(unexpected(other)),
                }
            }
            shell::step("bench-report");
            bench_report::bench_report(&report)
        }
        "fuzz-smoke" => {
            let (mut seconds, mut sanitizer) = (fuzz::DEFAULT_SECONDS, fuzz::DEFAULT_SANITIZER);
            while let Some(arg) = options.next() {
                match arg {
                    "--seconds" => seconds = options.number("--seconds")?,
                    "--sanitizer" => sanitizer = options.value("--sanitizer")?,
                    other => return Err(unexpected(other)),
                }
            }
            shell::step("fuzz-smoke");
            fuzz::fuzz_smoke(seconds, sanitizer, None)
        }
        "help" | "-h" | "--help" => {
            print!("{HELP}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`; see `cargo xtask help`").into()),
    }
}

fn unexpected(arg: &str) -> Box<dyn std::error::Error> {
    format!("unexpected argument `{arg}`; see `cargo xtask help`").into()
}

/// The arguments after the command, read one at a time.
struct Args<'a> {
    rest: std::slice::Iter<'a, String>,
}

impl<'a> Args<'a> {
    fn new(args: &'a [String]) -> Self {
        Args { rest: args.iter() }
    }

    fn next(&mut self) -> Option<&'a str> {
        self.rest.next().map(String::as_str)
    }

    fn value(&mut self, option: &str) -> Result<&'a str> {
        self.next()
            .ok_or_else(|| format!("{option} needs a value").into())
    }

    fn number(&mut self, option: &str) -> Result<u64> {
        let value = self.value(option)?;
        value
            .parse()
            .map_err(|_| format!("{option}: `{value}` is not a number").into())
    }

    fn remaining(&mut self) -> Vec<String> {
        self.rest.by_ref().cloned().collect()
    }

    fn none(&mut self) -> Result {
        match self.next() {
            Some(arg) => Err(unexpected(arg)),
            None => Ok(()),
        }
    }
}
