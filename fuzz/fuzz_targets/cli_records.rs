//! The CLI's line, CSV-field and integer parsing and formatting never panic, agree with their
//! documented grammar and the big-integer codec, and the streaming pipeline round-trips. See
//! `riffpe_fuzz::cli::records`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use riffpe_fuzz::cli::CliCase;

fuzz_target!(|case: CliCase| riffpe_fuzz::run("cli_records", &case, riffpe_fuzz::CLI_RECORDS));
