//! The fast path, the lockstep path, the constant-time selection and the batch crate's modes
//! agree with the plain reference implementation on any input. See
//! `riffpe_fuzz::check::differential` and `riffpe_fuzz::batch::modes`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use riffpe_fuzz::case::Case;
use riffpe_fuzz::{batch, check, run};

fuzz_target!(|data: &[u8]| {
    run::<Case>(
        "differential",
        data,
        &[
            ("check::differential", check::differential),
            ("batch::modes", batch::modes),
        ],
    );
});
