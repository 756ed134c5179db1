//! Template parsing, format round trips and the CLI's RFC 4180 reader and formatted-column
//! pipeline never panic, and decrypt inverts encrypt. See `riffpe_fuzz::formats`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use riffpe_fuzz::formats::FormatsCase;

fuzz_target!(|case: FormatsCase| riffpe_fuzz::run("formats", &case, riffpe_fuzz::FORMATS));
