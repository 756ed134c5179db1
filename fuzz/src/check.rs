//! The properties the `roundtrip` and `differential` targets check, one function per target,
//! shared with `crates/riffpe/tests/fuzz_regressions.rs` (which includes this file).
//!
//! Each returns `Err` with a description of the first property that failed, so the caller can
//! print a reproducer before it panics.

use riffpe::{
    Domain, Error, Fpe, MAX_SCRATCH_BYTES, Radices, Scratch, ScratchBuf, ScratchSize, Selection,
};

pub use crate::case::Outcome;
use crate::case::{Case, FUZZ_BUDGET, Params, to_hex};
pub use crate::cipher::message_error;
use crate::cipher::{Cipher, with_fpe};
use crate::reference::Reference;

macro_rules! ensure {
    ($condition:expr, $($message:tt)+) => {
        if !$condition {
            return Err(format!($($message)+));
        }
    };
}

/// `roundtrip`: construction fails with an error SPEC names for these parameters or succeeds
/// within the scratch cap; then, for each message, with the fixed tweak and a per-call tweak:
/// decrypt(encrypt(m)) = m and encrypt(decrypt(m)) = m with every digit below its radix, the
/// caller-scratch and tweaked-with-the-fixed-tweak variants agree, and an invalid message is
/// refused with the error that names it, unchanged. Parameters beyond the fuzzer's budget are
/// only constructed and given messages that must be refused before any work.
pub fn roundtrip(case: &Case) -> Outcome {
    roundtrip_within(case, FUZZ_BUDGET)
}

/// [`roundtrip`] with another work budget (see [`Case::within_budget`]).
pub fn roundtrip_within(case: &Case, budget: u64) -> Outcome {
    let built = Cipher::build(case);
    construction(case, &built)?;
    let Ok(cipher) = &built else {
        return Ok(());
    };
    with_fpe!(cipher, |fpe| {
        if case.within_budget(budget) {
            roundtrip_with(case, fpe)
        } else {
            refused_before_any_work(case, fpe)
        }
    })
}

/// `differential`: the fast path (one message, fast and constant-time selection), the
/// lockstep path (`*_many_with`, with scratch for a few lanes and for all of them) and the
/// plain reference implementation give the same ciphertexts and plaintexts.
pub fn differential(case: &Case) -> Outcome {
    differential_within(case, FUZZ_BUDGET)
}

/// [`differential`] with another work budget (see [`Case::within_budget`]).
pub fn differential_within(case: &Case, budget: u64) -> Outcome {
    let built = Cipher::build(case);
    construction(case, &built)?;
    match &built {
        Ok(cipher) if case.within_budget(budget) => {
            with_fpe!(cipher, |fpe| differential_with(case, fpe, budget))
        }
        _ => Ok(()),
    }
}

/// SPEC's limit on the digit count for element width `width`: the digit index must fit `w`
/// bytes, and the count itself LE32.
fn max_digits(width: usize) -> usize {
    match width {
        1 => 0x100,
        2 => 0x1_0000,
        _ => usize::try_from(u32::MAX).unwrap_or(usize::MAX),
    }
}

/// The first radix below 2, as `(index, radix)`.
fn bad_radix(params: &Params) -> Option<(usize, u32)> {
    match params {
        Params::Riffpe { radix, digits } => (*digits > 0 && *radix < 2).then_some((0, *radix)),
        Params::RiffpeX { radices } => radices
            .iter()
            .position(|&radix| radix < 2)
            .map(|index| (index, radices[index])),
    }
}

fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Bounds on the bytes of one digit step's scratch for the largest radix `n`: at least the
/// keystream `⌈n·b/16⌉·16`; at most that (or the padded digit buffer) plus a block of slack
/// and an 8-byte key per value plus 256 bucket counters.
fn scratch_bounds(case: &Case) -> (u64, u64) {
    let params = &case.params;
    let n = u64::from(params.max_radix());
    let keystream = n
        .saturating_mul(to_u64(case.bytes_per_value))
        .div_ceil(16)
        .saturating_mul(16);
    let mac = (to_u64(params.digits())
        .saturating_add(1)
        .saturating_mul(to_u64(params.width()))
        / 16)
        .saturating_add(1)
        .saturating_mul(16);
    let upper = keystream
        .max(mac)
        .saturating_add(16)
        .saturating_add(n.saturating_add(256).saturating_mul(8));
    (keystream, upper)
}

/// The constructor's answer against SPEC's "Invalid parameters and inputs": an error must name
/// a parameter that is invalid, with its value; success needs valid parameters, and scratch
/// sizes that hold a step's keystream and a key per value within [`MAX_SCRATCH_BYTES`].
pub fn construction(case: &Case, built: &Result<Cipher, Error>) -> Outcome {
    let params = &case.params;
    let digits = params.digits();
    let b = case.bytes_per_value;
    let width = params.width();
    let mut invalid = Vec::new();
    if digits == 0 {
        invalid.push(Error::NoDigits);
    }
    if let Some((index, radix)) = bad_radix(params) {
        invalid.push(Error::InvalidRadix { index, radix });
    }
    if b == 0 {
        invalid.push(Error::InvalidBytesPerValue { bytes_per_value: b });
    }
    if digits > max_digits(width) {
        invalid.push(Error::TooManyDigits {
            digits,
            max: max_digits(width),
        });
    }
    if ![16, 24, 32].contains(&case.key.len()) {
        invalid.push(Error::InvalidKeyLength {
            len: case.key.len(),
        });
    }
    let (keystream, upper) = scratch_bounds(case);
    // Only meaningful once the domain is: a radix of 0 or 1 or no digits stop earlier.
    let domain_ok = digits > 0 && bad_radix(params).is_none() && b > 0;
    let scratch_must_fail = domain_ok && keystream > MAX_SCRATCH_BYTES;
    let scratch_may_fail = domain_ok && upper > MAX_SCRATCH_BYTES;
    let key_hex = to_hex(&case.key);

    match built {
        Ok(cipher) => {
            ensure!(
                invalid.is_empty() && !scratch_must_fail,
                "constructed although SPEC refuses it: {invalid:?}{}",
                if scratch_must_fail {
                    format!(" and a keystream of {keystream} bytes")
                } else {
                    String::new()
                }
            );
            with_fpe!(cipher, |fpe| {
                let expected = match params {
                    Params::Riffpe { radix, digits } => Domain::Uniform {
                        radix: *radix,
                        digits: *digits,
                    },
                    Params::RiffpeX { radices } => Domain::Mixed(radices),
                };
                ensure!(
                    fpe.domain() == expected,
                    "domain {:?}, built from {expected:?}",
                    fpe.domain()
                );
                ensure!(fpe.digits() == digits, "digits() {}", fpe.digits());
                ensure!(
                    fpe.bytes_per_value() == b,
                    "bytes_per_value() {}",
                    fpe.bytes_per_value()
                );
                let one = fpe.scratch_size();
                let one_bytes =
                    to_u64(one.keystream_bytes).saturating_add(to_u64(one.keys).saturating_mul(8));
                ensure!(
                    to_u64(one.keystream_bytes) >= keystream
                        && to_u64(one.keys) >= u64::from(params.max_radix())
                        && one_bytes <= MAX_SCRATCH_BYTES,
                    "scratch_size() {one:?} for a keystream of {keystream} bytes, cap {MAX_SCRATCH_BYTES}"
                );
                let lockstep = fpe.lockstep_scratch_size();
                ensure!(
                    lockstep.keystream_bytes >= one.keystream_bytes && lockstep.keys >= one.keys,
                    "lockstep_scratch_size() {lockstep:?} below scratch_size() {one:?}"
                );
                ensure!(fpe.lanes() >= 1, "lanes() is 0");
                let debug = format!("{fpe:?}");
                ensure!(
                    case.key.len() < 8 || !debug.to_lowercase().contains(&key_hex),
                    "Debug shows the key: {debug}"
                );
                Ok(())
            })
        }
        Err(
            error @ Error::ScratchTooLarge {
                needed: got,
                max: cap,
            },
        ) => {
            ensure!(
                scratch_may_fail
                    && *cap == MAX_SCRATCH_BYTES
                    && *got > MAX_SCRATCH_BYTES
                    && (keystream..=upper).contains(got),
                "{error:?}, but one step needs {keystream} to {upper} bytes (cap {MAX_SCRATCH_BYTES})"
            );
            Ok(())
        }
        Err(error) => {
            ensure!(
                invalid.contains(error),
                "refused with {error:?}; SPEC refuses only {invalid:?}"
            );
            let shown = format!("{error} {error:?}");
            ensure!(
                case.key.len() < 8 || !shown.contains(&key_hex),
                "error shows the key: {shown}"
            );
            Ok(())
        }
    }
}

/// `message` after `op`, or the error `op` returned.
fn apply(
    what: &str,
    message: &[u32],
    op: impl FnOnce(&mut [u32]) -> Result<(), Error>,
) -> Result<Vec<u32>, String> {
    let mut out = message.to_vec();
    op(&mut out).map_err(|e| format!("{what} of {message:?}: unexpected {e:?}"))?;
    Ok(out)
}

fn same(what: &str, got: &[u32], expected: &[u32]) -> Outcome {
    ensure!(got == expected, "{what}: {got:?}, expected {expected:?}");
    Ok(())
}

/// Every digit below its radix.
fn in_domain(what: &str, params: &Params, message: &[u32]) -> Outcome {
    ensure!(
        message_error(params, message).is_none(),
        "{what} left the domain: {message:?} ({:?})",
        message_error(params, message)
    );
    Ok(())
}

/// A single-message operation, for the tables below.
type Op<D> = fn(&Fpe<D>, &Case, &mut [u32], &mut Scratch<'_>) -> Result<(), Error>;

/// Every single-message entry point; those without a scratch argument ignore it.
fn single_message_ops<D: Radices>() -> [(&'static str, Op<D>); 8] {
    [
        ("encrypt", |f, _, m, _| f.encrypt(m)),
        ("decrypt", |f, _, m, _| f.decrypt(m)),
        ("encrypt_tweaked", |f, c, m, _| {
            f.encrypt_tweaked(&c.call_tweak, m)
        }),
        ("decrypt_tweaked", |f, c, m, _| {
            f.decrypt_tweaked(&c.call_tweak, m)
        }),
        ("encrypt_with", |f, _, m, s| f.encrypt_with(m, s)),
        ("decrypt_with", |f, _, m, s| f.decrypt_with(m, s)),
        ("encrypt_tweaked_with", |f, c, m, s| {
            f.encrypt_tweaked_with(&c.call_tweak, m, s)
        }),
        ("decrypt_tweaked_with", |f, c, m, s| {
            f.decrypt_tweaked_with(&c.call_tweak, m, s)
        }),
    ]
}

fn roundtrip_with<D: Radices>(case: &Case, fpe: &Fpe<D>) -> Outcome {
    let params = &case.params;
    let size = fpe.scratch_size();
    let mut buf = ScratchBuf::with_size(size);
    for message in &case.messages {
        if let Some(expected) = message_error(params, message) {
            for (name, op) in single_message_ops::<D>() {
                let mut copy = message.clone();
                let result = op(fpe, case, &mut copy, &mut buf.scratch(size));
                ensure!(
                    result == Err(expected),
                    "{name} of {message:?}: {result:?}, expected Err({expected:?})"
                );
                same(&format!("{name} refused, message"), &copy, message)?;
            }
            continue;
        }
        // Fixed tweak.
        let ciphertext = apply("encrypt", message, |m| fpe.encrypt(m))?;
        in_domain("encrypt", params, &ciphertext)?;
        let plaintext = apply("decrypt", &ciphertext, |m| fpe.decrypt(m))?;
        same("decrypt(encrypt(m))", &plaintext, message)?;
        let again = apply("encrypt", message, |m| fpe.encrypt(m))?;
        same("encrypt, a second time", &again, &ciphertext)?;
        let with = apply("encrypt_with", message, |m| {
            fpe.encrypt_with(m, &mut buf.scratch(size))
        })?;
        same("encrypt_with", &with, &ciphertext)?;
        let with = apply("decrypt_with", &ciphertext, |m| {
            fpe.decrypt_with(m, &mut buf.scratch(size))
        })?;
        same("decrypt_with(encrypt(m))", &with, message)?;
        let fixed = apply("encrypt_tweaked", message, |m| {
            fpe.encrypt_tweaked(&case.tweak, m)
        })?;
        same("encrypt_tweaked with the fixed tweak", &fixed, &ciphertext)?;
        // Decryption is a permutation too.
        let preimage = apply("decrypt", message, |m| fpe.decrypt(m))?;
        in_domain("decrypt", params, &preimage)?;
        let image = apply("encrypt", &preimage, |m| fpe.encrypt(m))?;
        same("encrypt(decrypt(m))", &image, message)?;

        // Per-call tweak.
        let tweaked = apply("encrypt_tweaked", message, |m| {
            fpe.encrypt_tweaked(&case.call_tweak, m)
        })?;
        in_domain("encrypt_tweaked", params, &tweaked)?;
        let back = apply("decrypt_tweaked", &tweaked, |m| {
            fpe.decrypt_tweaked(&case.call_tweak, m)
        })?;
        same("decrypt_tweaked(encrypt_tweaked(m))", &back, message)?;
        let with = apply("encrypt_tweaked_with", message, |m| {
            fpe.encrypt_tweaked_with(&case.call_tweak, m, &mut buf.scratch(size))
        })?;
        same("encrypt_tweaked_with", &with, &tweaked)?;
        let with = apply("decrypt_tweaked_with", &tweaked, |m| {
            fpe.decrypt_tweaked_with(&case.call_tweak, m, &mut buf.scratch(size))
        })?;
        same("decrypt_tweaked_with(encrypt_tweaked(m))", &with, message)?;
    }
    Ok(())
}

/// Beyond the budget: with no scratch at all, every call must stop at its checks, naming the
/// message's fault if it has one, else the scratch; the message is left unchanged.
fn refused_before_any_work<D: Radices>(case: &Case, fpe: &Fpe<D>) -> Outcome {
    let ops = single_message_ops::<D>();
    for message in &case.messages {
        let expected = message_error(&case.params, message);
        // The self-scratched calls would allocate the whole scratch: only the `*_with` ones.
        for (name, op) in &ops[4..] {
            let mut copy = message.clone();
            let result = op(fpe, case, &mut copy, &mut Scratch::new(&mut [], &mut []));
            let fine = match (expected, result) {
                (Some(expected), result) => result == Err(expected),
                (None, Err(Error::ScratchTooSmall { .. })) => true,
                (None, _) => false,
            };
            ensure!(
                fine,
                "{name} of {message:?} with empty scratch: {result:?}, expected {:?}",
                expected.map_or("ScratchTooSmall".to_string(), |e| format!("{e:?}"))
            );
            same(&format!("{name} refused, message"), &copy, message)?;
        }
    }
    Ok(())
}

fn differential_with<D: Radices + Clone>(case: &Case, fpe: &Fpe<D>, budget: u64) -> Outcome {
    let params = &case.params;
    let radices: Vec<u32> = (0..params.digits()).map(|i| params.radix(i)).collect();
    let mixed = matches!(params, Params::RiffpeX { .. });
    let b = case.bytes_per_value;
    let reference = Reference::new(&radices, mixed, &case.key, &case.tweak, b);
    let reference_tweaked = Reference::new(&radices, mixed, &case.key, &case.call_tweak, b);
    let constant_time = case
        .constant_time_within_budget(budget)
        .then(|| fpe.clone().with_selection(Selection::ConstantTime));

    let valid: Vec<&[u32]> = case
        .messages
        .iter()
        .filter(|m| message_error(params, m).is_none())
        .map(Vec::as_slice)
        .collect();
    let (mut encrypted, mut decrypted) = (Vec::new(), Vec::new());
    for &message in &valid {
        let mut expected = message.to_vec();
        reference.encrypt(&mut expected);
        let got = apply("encrypt", message, |m| fpe.encrypt(m))?;
        same("encrypt vs the reference", &got, &expected)?;
        encrypted.extend_from_slice(&expected);

        // Any message is also a ciphertext.
        let mut expected = message.to_vec();
        reference.decrypt(&mut expected);
        let got = apply("decrypt", message, |m| fpe.decrypt(m))?;
        same("decrypt vs the reference", &got, &expected)?;
        decrypted.extend_from_slice(&expected);

        let mut tweaked = message.to_vec();
        reference_tweaked.encrypt(&mut tweaked);
        let got = apply("encrypt_tweaked", message, |m| {
            fpe.encrypt_tweaked(&case.call_tweak, m)
        })?;
        same("encrypt_tweaked vs the reference", &got, &tweaked)?;
        let mut untweaked = message.to_vec();
        reference_tweaked.decrypt(&mut untweaked);
        let got = apply("decrypt_tweaked", message, |m| {
            fpe.decrypt_tweaked(&case.call_tweak, m)
        })?;
        same("decrypt_tweaked vs the reference", &got, &untweaked)?;

        if let Some(ct) = &constant_time {
            let n = encrypted.len() - message.len();
            let got = apply("constant-time encrypt", message, |m| ct.encrypt(m))?;
            same(
                "constant-time encrypt vs the reference",
                &got,
                &encrypted[n..],
            )?;
            let got = apply("constant-time decrypt", message, |m| ct.decrypt(m))?;
            same(
                "constant-time decrypt vs the reference",
                &got,
                &decrypted[n..],
            )?;
            let got = apply("constant-time encrypt_tweaked", message, |m| {
                ct.encrypt_tweaked(&case.call_tweak, m)
            })?;
            same(
                "constant-time encrypt_tweaked vs the reference",
                &got,
                &tweaked,
            )?;
        }
    }

    // Lockstep: all valid messages back to back, with scratch for the case's few lanes, then
    // for as many as the backend runs at once.
    let flat: Vec<u32> = valid.concat();
    let one = fpe.scratch_size();
    for lanes in [case.scratch_lanes, fpe.lanes()] {
        let size = ScratchSize {
            keystream_bytes: one.keystream_bytes * lanes,
            keys: one.keys,
        };
        let mut buf = ScratchBuf::with_size(size);
        let got = apply("encrypt_many_with", &flat, |m| {
            fpe.encrypt_many_with(m, &mut buf.scratch(size))
        })?;
        same(
            &format!("encrypt_many_with ({lanes} lanes) vs the reference"),
            &got,
            &encrypted,
        )?;
        let got = apply("decrypt_many_with", &flat, |m| {
            fpe.decrypt_many_with(m, &mut buf.scratch(size))
        })?;
        same(
            &format!("decrypt_many_with ({lanes} lanes) vs the reference"),
            &got,
            &decrypted,
        )?;
    }

    // An invalid message anywhere refuses the whole lockstep call, and changes nothing.
    if valid.len() < case.messages.len() {
        let all: Vec<u32> = case.messages.concat();
        let size = fpe.lockstep_scratch_size();
        let mut buf = ScratchBuf::with_size(size);
        // Seen flat, the digits regroup into messages of the right length: expect the first
        // digit not below its position's radix, or a length error if they do not regroup.
        let digits = params.digits();
        let expected = if !all.len().is_multiple_of(digits) {
            None
        } else {
            let first_bad = all.iter().enumerate().find_map(|(index, &digit)| {
                let radix = params.radix(index % digits);
                (digit >= radix).then_some(Error::DigitOutOfRange {
                    index,
                    digit,
                    radix,
                })
            });
            match first_bad {
                Some(error) => Some(error),
                None => return Ok(()),
            }
        };
        for decrypt in [false, true] {
            let mut copy = all.clone();
            let mut scratch = buf.scratch(size);
            let result = if decrypt {
                fpe.decrypt_many_with(&mut copy, &mut scratch)
            } else {
                fpe.encrypt_many_with(&mut copy, &mut scratch)
            };
            let fine = match expected {
                Some(expected) => result == Err(expected),
                None => result.is_err(),
            };
            ensure!(
                fine,
                "*_many_with of {:?}: {result:?}, expected {expected:?}",
                case.messages
            );
            same("*_many_with refused, messages", &copy, &all)?;
        }
    }
    Ok(())
}
