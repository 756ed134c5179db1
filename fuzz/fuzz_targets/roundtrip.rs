//! Any key, radix or radices, digit count, `bytes_per_value`, tweaks and messages: construction
//! fails with an error SPEC names, or every message round-trips inside its domain (Riffpe and
//! RiffpeX, fixed and per-call tweak). See `riffpe_fuzz::check::roundtrip`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use riffpe_fuzz::case::Case;

fuzz_target!(|case: Case| riffpe_fuzz::run("roundtrip", &case, riffpe_fuzz::ROUNDTRIP));
