//! Prints the reproducer of fuzz inputs and runs their checks, timed, without nightly or
//! libFuzzer: `cargo run --release --manifest-path fuzz/Cargo.toml --example reproduce --
//! TARGET FILE…` (TARGET is `roundtrip`, `differential` or `cli_records`).

use std::time::Instant;

use riffpe_fuzz::case::Case;
use riffpe_fuzz::check::Outcome;
use riffpe_fuzz::cli::CliCase;
use riffpe_fuzz::{Check, FuzzCase, batch, check, cli, regression_file};

fn show<T: FuzzCase>(data: &[u8], checks: &[Check<T>]) {
    let case = T::decode(data);
    for &(name, check) in checks {
        // The reproducer first: the check may panic.
        println!("{}", case.reproducer(name, regression_file(name)));
        let start = Instant::now();
        let outcome: Outcome = check(&case);
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
            "roundtrip" => show::<Case>(&data, &[("check::roundtrip", check::roundtrip)]),
            "differential" => show::<Case>(
                &data,
                &[
                    ("check::differential", check::differential),
                    ("batch::modes", batch::modes),
                ],
            ),
            "cli_records" => show::<CliCase>(&data, &[("cli::records", cli::records)]),
            other => panic!("unknown target {other:?}: roundtrip, differential or cli_records"),
        }
    }
}
