//! The one-message path, the lockstep path (a shared tweak and a tweak per message), the
//! constant-time selection and the batch crate's modes agree with the plain reference
//! implementation on any input. See `riffpe_fuzz::check::differential` and
//! `riffpe_fuzz::batch::modes`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use riffpe_fuzz::case::Case;

fuzz_target!(|case: Case| riffpe_fuzz::run("differential", &case, riffpe_fuzz::DIFFERENTIAL));
