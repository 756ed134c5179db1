//! The CLI's line, CSV-field and integer parsing and formatting never panic, agree with their
//! documented grammar and the big-integer codec, and the streaming pipeline round-trips. See
//! `riffpe_fuzz::cli::records`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use riffpe_fuzz::cli::CliCase;
use riffpe_fuzz::{cli, run};

fuzz_target!(|data: &[u8]| {
    run::<CliCase>("cli_records", data, &[("cli::records", cli::records)]);
});
