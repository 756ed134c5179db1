//! What the fuzz targets share: the cases `arbitrary` makes of the fuzzer's bytes, the checks,
//! and a harness that prints a copy-pasteable reproducer when a check fails or anything
//! panics. The libFuzzer targets (`fuzz_targets/`) are thin wrappers over [`run`]; the tests
//! replay every input kept in `regressions/` through [`replay`] on stable.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

use arbitrary::{Arbitrary, Unstructured};

pub mod batch;
pub mod case;
pub mod check;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod formats;

use case::{Case, Outcome};

/// A fuzz case that can print itself back as a Rust test.
pub trait Reproduce: Send {
    /// The test file the reproducer is written for (it imports what the reproducer names).
    fn file(&self) -> &'static str;
    /// A `#[test]` that rebuilds this case and runs `check` on it.
    fn reproducer(&self, check: &str) -> String;
}

impl Reproduce for Case {
    fn file(&self) -> &'static str {
        "fuzz/tests/cases.rs"
    }
    fn reproducer(&self, check: &str) -> String {
        Case::reproducer(self, check)
    }
}

#[cfg(feature = "cli")]
impl Reproduce for cli::CliCase {
    fn file(&self) -> &'static str {
        "fuzz/tests/cli_cases.rs"
    }
    fn reproducer(&self, check: &str) -> String {
        cli::CliCase::reproducer(self, check)
    }
}

#[cfg(feature = "cli")]
impl Reproduce for formats::FormatsCase {
    fn file(&self) -> &'static str {
        "fuzz/tests/format_cases.rs"
    }
    fn reproducer(&self, check: &str) -> String {
        formats::FormatsCase::reproducer(self, check)
    }
}

/// A named check of a case: `("check::roundtrip", check::roundtrip)`.
pub type Check<T> = (&'static str, fn(&T) -> Outcome);

/// The checks of the `roundtrip` target.
pub const ROUNDTRIP: &[Check<Case>] = &[("check::roundtrip", check::roundtrip)];
/// The checks of the `differential` target.
pub const DIFFERENTIAL: &[Check<Case>] = &[
    ("check::differential", check::differential),
    ("batch::modes", batch::modes),
];
/// The checks of the `cli_records` target.
#[cfg(feature = "cli")]
pub const CLI_RECORDS: &[Check<cli::CliCase>] = &[("cli::records", cli::records)];
/// The checks of the `formats` target.
#[cfg(feature = "cli")]
pub const FORMATS: &[Check<formats::FormatsCase>] = &[("formats::check", formats::check)];

/// Decodes `data` as libFuzzer's `fuzz_target!` does.
pub fn decode<'a, T: Arbitrary<'a>>(data: &'a [u8]) -> T {
    // Every decoder here reads zeros past the end, so no input is refused.
    T::arbitrary_take_rest(Unstructured::new(data)).expect("every input decodes")
}

/// Runs every check of `target` on the input `data`: the first failure, with its reproducer.
/// Inputs of `roundtrip` and `differential` go through the checks of both.
pub fn replay(target: &str, data: &[u8]) -> Outcome {
    match target {
        "roundtrip" | "differential" => checked(&decode::<Case>(data), &[ROUNDTRIP, DIFFERENTIAL]),
        #[cfg(feature = "cli")]
        "cli_records" => checked(&decode::<cli::CliCase>(data), &[CLI_RECORDS]),
        #[cfg(feature = "cli")]
        "formats" => checked(&decode::<formats::FormatsCase>(data), &[FORMATS]),
        other => Err(format!("no fuzz target {other:?}")),
    }
}

fn checked<T: Reproduce>(case: &T, lists: &[&[Check<T>]]) -> Outcome {
    for &(name, check) in lists.iter().copied().flatten() {
        check(case).map_err(|failure| {
            format!(
                "{name}: {failure}\n\n// Paste into {}:\n{}",
                case.file(),
                case.reproducer(name)
            )
        })?;
    }
    Ok(())
}

/// The inputs kept for `target` in `fuzz/regressions/<target>/`, sorted; notes (`.md`) and
/// hidden files are not inputs.
pub fn kept_inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("regressions")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("regression folder entry").path())
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            path.is_file() && !name.starts_with('.') && !name.ends_with(".md")
        })
        .collect();
    files.sort();
    files
}

/// The case being checked, for the panic hook.
struct Current {
    target: &'static str,
    check: &'static str,
    case: Box<dyn Reproduce>,
}

static CURRENT: Mutex<Option<Current>> = Mutex::new(None);

/// Wraps the panic hook (libFuzzer's, which aborts) so that any panic while a check runs, an
/// assertion here or a bug in the code under test, on any thread, first prints the
/// reproducer of the case being checked.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Ok(current) = CURRENT.try_lock()
                && let Some(c) = current.as_ref()
            {
                eprintln!(
                    "\n==== riffpe-fuzz: `{}` failed in target `{}` ====\n\n\
                     // Paste into {}:\n{}\n\
                     Or keep the input: copy the crash file libFuzzer names below \
                     (fuzz/artifacts/{}/crash-…) to fuzz/regressions/{}/; \
                     `cargo test --manifest-path fuzz/Cargo.toml` replays every file there.\n",
                    c.check,
                    c.target,
                    c.case.file(),
                    c.case.reproducer(c.check),
                    c.target,
                    c.target,
                );
            }
            previous(info);
        }));
    });
}

/// Runs `checks` on `case`; a failed check panics, after the reproducer.
pub fn run<T: Reproduce + Clone + 'static>(target: &'static str, case: &T, checks: &[Check<T>]) {
    install_hook();
    let set = |current: Option<Current>| {
        *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = current;
    };
    for &(name, check) in checks {
        set(Some(Current {
            target,
            check: name,
            case: Box::new(case.clone()),
        }));
        if let Err(failure) = check(case) {
            panic!("{name}: {failure}");
        }
    }
    set(None);
}
