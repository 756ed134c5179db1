//! What the fuzz targets share: the decoded cases, the checks, and a harness that prints a
//! copy-pasteable reproducer when a check fails or anything panics.
//!
//! The modules other than this one are plain Rust on top of the project's crates, so the
//! regression tests include them with `#[path]`: `case`, `cipher` and `check` from
//! `crates/riffpe/tests/fuzz_regressions.rs`; `case`, `cipher`, `batch` and `cli` from
//! `crates/riffpe-cli/tests/fuzz_regressions.rs`.

use std::sync::{Mutex, Once};

pub mod batch;
pub mod case;
pub mod check;
pub mod cipher;
pub mod cli;
/// The plain reference implementation, the one copy the core's tests use.
#[allow(missing_docs, missing_debug_implementations, clippy::all)]
#[path = "../../crates/riffpe/tests/common/reference.rs"]
pub mod reference;

use case::Case;
use check::Outcome;
use cli::CliCase;

/// A fuzz case: decoded from the fuzzer's bytes, printed back as a Rust test.
pub trait FuzzCase: Sized {
    /// Decodes any bytes.
    fn decode(data: &[u8]) -> Self;
    /// A `#[test]` running `check` on this case, to paste into `file`.
    fn reproducer(&self, check: &str, file: &str) -> String;
}

impl FuzzCase for Case {
    fn decode(data: &[u8]) -> Self {
        Case::decode(data)
    }
    fn reproducer(&self, check: &str, file: &str) -> String {
        Case::reproducer(self, check, file)
    }
}

impl FuzzCase for CliCase {
    fn decode(data: &[u8]) -> Self {
        CliCase::decode(data)
    }
    fn reproducer(&self, check: &str, file: &str) -> String {
        CliCase::reproducer(self, check, file)
    }
}

/// A named check of a case: `("check::roundtrip", check::roundtrip)`.
pub type Check<T> = (&'static str, fn(&T) -> Outcome);

/// The regression test file that includes the module of `check`.
pub fn regression_file(check: &str) -> &'static str {
    if check.starts_with("check::") {
        "crates/riffpe/tests/fuzz_regressions.rs"
    } else {
        "crates/riffpe-cli/tests/fuzz_regressions.rs"
    }
}

/// The input being checked, for the panic hook.
struct Current {
    target: &'static str,
    check: &'static str,
    input: Vec<u8>,
    show: fn(&[u8], &str, &str) -> String,
}

static CURRENT: Mutex<Option<Current>> = Mutex::new(None);

fn show<T: FuzzCase>(input: &[u8], check: &str, file: &str) -> String {
    T::decode(input).reproducer(check, file)
}

/// Wraps the panic hook (libfuzzer's, which aborts) so that any panic while a check runs,
/// an assertion here or a bug in the code under test, on any thread, first prints the
/// reproducer of the input being checked.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Ok(current) = CURRENT.try_lock()
                && let Some(c) = current.as_ref()
            {
                let file = regression_file(c.check);
                eprintln!(
                    "\n==== riffpe-fuzz: `{}` failed in target `{}` ====\n\n{}\n\
                         Or keep the input as a file: copy the crash file libFuzzer names below \
                         (fuzz/artifacts/{}/crash-…) to fuzz/regressions/{}/ — \
                         the regression tests run every file there.\n",
                    c.check,
                    c.target,
                    (c.show)(&c.input, c.check, file),
                    c.target,
                    c.target,
                );
            }
            previous(info);
        }));
    });
}

/// Decodes `data` and runs `checks` on it; a failed check panics, after the reproducer.
pub fn run<T: FuzzCase>(target: &'static str, data: &[u8], checks: &[Check<T>]) {
    install_hook();
    let case = T::decode(data);
    let set = |check: Option<&'static str>| {
        let mut current = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
        match (check, current.as_mut()) {
            (None, _) => *current = None,
            (Some(check), Some(c)) => c.check = check,
            (Some(check), None) => {
                *current = Some(Current {
                    target,
                    check,
                    input: data.to_vec(),
                    show: show::<T>,
                })
            }
        }
    };
    set(None);
    for &(name, check) in checks {
        set(Some(name));
        if let Err(failure) = check(&case) {
            panic!("{name}: {failure}");
        }
    }
    set(None);
}
