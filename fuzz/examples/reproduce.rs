//! Prints the reproducer of fuzz inputs and runs their checks, timed, without nightly or
//! libFuzzer: `cargo run --release --manifest-path fuzz/Cargo.toml --example reproduce --
//! TARGET FILE…` (TARGET is `roundtrip`, `differential` or `cli_records`).

use std::time::Instant;

use riffpe_fuzz::{Check, Reproduce, case::Case, decode};

fn show<'a, T: Reproduce + arbitrary::Arbitrary<'a>>(data: &'a [u8], checks: &[Check<T>]) {
    let case: T = decode(data);
    for &(name, check) in checks {
        // The reproducer first: the check may panic.
        println!("{}", case.reproducer(name));
        let start = Instant::now();
        let outcome = check(&case);
        println!("// {name}: {outcome:?} in {:?}\n", start.elapsed());
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let target = args.next().unwrap_or_default();
    for path in args {
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        println!("// {path}");
        match target.as_str() {
            "roundtrip" => show::<Case>(&data, riffpe_fuzz::ROUNDTRIP),
            "differential" => show::<Case>(&data, riffpe_fuzz::DIFFERENTIAL),
            #[cfg(feature = "cli")]
            "cli_records" => show::<riffpe_fuzz::cli::CliCase>(&data, riffpe_fuzz::CLI_RECORDS),
            #[cfg(feature = "cli")]
            "formats" => show::<riffpe_fuzz::formats::FormatsCase>(&data, riffpe_fuzz::FORMATS),
            other => {
                panic!("unknown target {other:?}: roundtrip, differential, cli_records or formats")
            }
        }
    }
}
