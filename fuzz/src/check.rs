//! The properties the `roundtrip` and `differential` targets check, one function per target.
//!
//! Each returns `Err` with a description of the first property that failed, so the caller can
//! print a reproducer before it panics.

use riffpe::{
    AnyFpe, MAX_SCRATCH_BYTES, MessageError, Scratch, ScratchBuf, ScratchSize, Selection,
    SetupError, Tweak,
};
use riffpe_reference::{Reference, Scheme};

pub use crate::case::Outcome;
use crate::case::{Case, FUZZ_BUDGET, Params, to_hex};

macro_rules! ensure {
    ($condition:expr, $($message:tt)+) => {
        if !$condition {
            return Err(format!($($message)+));
        }
    };
}
pub(crate) use ensure;

/// `roundtrip`: construction fails with an error SPEC names for these parameters or succeeds
/// within the scratch cap; then, for each message, with the fixed tweak and a per-call tweak:
/// decrypt(encrypt(m)) = m and encrypt(decrypt(m)) = m with every digit below its radix, the
/// caller-scratch and explicit-tweak variants agree, and an invalid message is refused with
/// the error that names it, unchanged. Parameters beyond the fuzzer's budget are only
/// constructed and given messages that must be refused before any work.
pub fn roundtrip(case: &Case) -> Outcome {
    roundtrip_within(case, FUZZ_BUDGET)
}

/// [`roundtrip`] with another work budget (see [`Case::within_budget`]).
pub fn roundtrip_within(case: &Case, budget: u64) -> Outcome {
    let built = case.build(Selection::Fast);
    construction(case, &built)?;
    let Ok(fpe) = &built else {
        return Ok(());
    };
    if case.within_budget(budget) {
        roundtrip_with(case, fpe)
    } else {
        refused_before_any_work(case, fpe)
    }
}

/// `differential`: the one-message path (fast and constant-time selection), the lockstep path
/// (a shared tweak with scratch for a few lanes and for all of them, and a tweak per message)
/// and the plain reference implementation give the same ciphertexts and plaintexts.
pub fn differential(case: &Case) -> Outcome {
    differential_within(case, FUZZ_BUDGET)
}

/// [`differential`] with another work budget (see [`Case::within_budget`]).
pub fn differential_within(case: &Case, budget: u64) -> Outcome {
    let built = case.build(Selection::Fast);
    construction(case, &built)?;
    match &built {
        Ok(fpe) if case.within_budget(budget) => differential_with(case, fpe, budget),
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
/// keystream `⌈n·b/16⌉·16`; at most that plus a block of slack, the padded digit buffer (the
/// CBC-MAC input, kept beside the keystream) and an 8-byte key per value plus 256 bucket
/// counters.
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
        .saturating_add(16)
        .saturating_add(mac)
        .saturating_add(n.saturating_add(256).saturating_mul(8));
    (keystream, upper)
}

/// The constructor's answer against SPEC's "Invalid parameters and inputs": an error must name
/// a parameter that is invalid, with its value; success needs valid parameters, and scratch
/// sizes that hold a step's keystream and a key per value within [`MAX_SCRATCH_BYTES`].
pub fn construction(case: &Case, built: &Result<AnyFpe, SetupError>) -> Outcome {
    let params = &case.params;
    let digits = params.digits();
    let b = case.bytes_per_value;
    let width = params.width();
    let mut invalid = Vec::new();
    if digits == 0 {
        invalid.push(SetupError::NoDigits);
    }
    if let Some((index, radix)) = bad_radix(params) {
        invalid.push(SetupError::InvalidRadix { index, radix });
    }
    if b == 0 {
        invalid.push(SetupError::InvalidBytesPerValue { bytes_per_value: b });
    }
    if digits > max_digits(width) {
        invalid.push(SetupError::TooManyDigits {
            digits,
            max: max_digits(width),
        });
    }
    if ![16, 24, 32].contains(&case.key.len()) {
        invalid.push(SetupError::InvalidKeyLength {
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
        Ok(fpe) => {
            ensure!(
                invalid.is_empty() && !scratch_must_fail,
                "constructed although SPEC refuses it: {invalid:?}{}",
                if scratch_must_fail {
                    format!(" and a keystream of {keystream} bytes")
                } else {
                    String::new()
                }
            );
            ensure!(
                fpe.domain() == params.domain(),
                "domain {:?}, built from {:?}",
                fpe.domain(),
                params.domain()
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
        }
        Err(
            error @ SetupError::ScratchTooLarge {
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
    op: impl FnOnce(&mut [u32]) -> Result<(), MessageError>,
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
    let error = params.message_error(message);
    ensure!(
        error.is_none(),
        "{what} left the domain: {message:?} ({error:?})"
    );
    Ok(())
}

/// A single-message operation, for the table below.
type Op = fn(&AnyFpe, &Case, &mut [u32], &mut Scratch<'_>) -> Result<(), MessageError>;

/// Every single-message entry point; those without a scratch argument ignore it.
const SINGLE_MESSAGE_OPS: [(&str, Op); 6] = [
    ("encrypt", |f, _, m, _| f.encrypt(m)),
    ("decrypt", |f, _, m, _| f.decrypt(m)),
    ("encrypt_with(Fixed)", |f, _, m, s| {
        f.encrypt_with(Tweak::Fixed, m, s)
    }),
    ("decrypt_with(Fixed)", |f, _, m, s| {
        f.decrypt_with(Tweak::Fixed, m, s)
    }),
    ("encrypt_with(Bytes)", |f, c, m, s| {
        f.encrypt_with(Tweak::Bytes(&c.call_tweak), m, s)
    }),
    ("decrypt_with(Bytes)", |f, c, m, s| {
        f.decrypt_with(Tweak::Bytes(&c.call_tweak), m, s)
    }),
];

/// The error op `index` of [`SINGLE_MESSAGE_OPS`] must give for `message`: `encrypt` and
/// `decrypt` take one message, the `*_with` ones any number back to back.
fn expected_error(params: &Params, index: usize, message: &[u32]) -> Option<MessageError> {
    match index {
        0 | 1 => params.message_error(message),
        _ => params.many_error(message),
    }
}

fn roundtrip_with(case: &Case, fpe: &AnyFpe) -> Outcome {
    let params = &case.params;
    let mut buf = ScratchBuf::for_message(fpe);
    let fixed = Tweak::Fixed;
    let call = Tweak::Bytes(&case.call_tweak);
    for message in &case.messages {
        if params.message_error(message).is_some() {
            for (i, (name, op)) in SINGLE_MESSAGE_OPS.into_iter().enumerate() {
                let mut copy = message.clone();
                let result = op(fpe, case, &mut copy, &mut buf.scratch());
                ensure!(
                    result.err() == expected_error(params, i, message),
                    "{name} of {message:?}: {result:?}, expected {:?}",
                    expected_error(params, i, message)
                );
                if result.is_err() {
                    same(&format!("{name} refused, message"), &copy, message)?;
                }
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
        let with = apply("encrypt_with(Fixed)", message, |m| {
            fpe.encrypt_with(fixed, m, &mut buf.scratch())
        })?;
        same("encrypt_with(Fixed)", &with, &ciphertext)?;
        let with = apply("decrypt_with(Fixed)", &ciphertext, |m| {
            fpe.decrypt_with(fixed, m, &mut buf.scratch())
        })?;
        same("decrypt_with(Fixed)(encrypt(m))", &with, message)?;
        let bytes = apply("encrypt_with(Bytes(fixed tweak))", message, |m| {
            fpe.encrypt_with(Tweak::Bytes(&case.tweak), m, &mut buf.scratch())
        })?;
        same("encrypt_with(Bytes(fixed tweak))", &bytes, &ciphertext)?;
        // Decryption is a permutation too.
        let preimage = apply("decrypt", message, |m| fpe.decrypt(m))?;
        in_domain("decrypt", params, &preimage)?;
        let image = apply("encrypt", &preimage, |m| fpe.encrypt(m))?;
        same("encrypt(decrypt(m))", &image, message)?;

        // Per-call tweak.
        let tweaked = apply("encrypt_with(Bytes)", message, |m| {
            fpe.encrypt_with(call, m, &mut buf.scratch())
        })?;
        in_domain("encrypt_with(Bytes)", params, &tweaked)?;
        let back = apply("decrypt_with(Bytes)", &tweaked, |m| {
            fpe.decrypt_with(call, m, &mut buf.scratch())
        })?;
        same(
            "decrypt_with(Bytes)(encrypt_with(Bytes)(m))",
            &back,
            message,
        )?;
        let one: [&[u8]; 1] = [&case.call_tweak];
        let per_message = apply("encrypt_with(PerMessage)", message, |m| {
            fpe.encrypt_with(Tweak::PerMessage(&one), m, &mut buf.scratch())
        })?;
        same(
            "encrypt_with(PerMessage) of one message",
            &per_message,
            &tweaked,
        )?;
    }
    Ok(())
}

/// Beyond the budget: with no scratch at all, every call must stop at its checks, naming the
/// message's fault if it has one, else the scratch; the message is left unchanged.
fn refused_before_any_work(case: &Case, fpe: &AnyFpe) -> Outcome {
    for message in &case.messages {
        let expected = case.params.many_error(message);
        // The self-scratched calls would allocate the whole scratch: only the `*_with` ones.
        for (name, op) in &SINGLE_MESSAGE_OPS[2..] {
            let mut copy = message.clone();
            let result = op(fpe, case, &mut copy, &mut Scratch::new(&mut [], &mut []));
            let fine = match (expected, result) {
                (Some(expected), result) => result == Err(expected),
                (None, Err(MessageError::ScratchTooSmall { .. })) => true,
                // Zero messages need no scratch.
                (None, Ok(())) => message.is_empty(),
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

/// The plain implementation of the case's scheme under `tweak`.
fn reference(case: &Case, tweak: &[u8]) -> Reference {
    let scheme = match &case.params {
        Params::Riffpe { radix, digits } => Scheme::Riffpe {
            radix: *radix,
            digits: *digits,
        },
        Params::RiffpeX { radices } => Scheme::RiffpeX(radices),
    };
    Reference::new(scheme, &case.key, tweak, case.bytes_per_value)
}

/// The reference's encryption and decryption of `message`.
fn reference_both(reference: &Reference, message: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let (mut encrypted, mut decrypted) = (message.to_vec(), message.to_vec());
    reference.encrypt(&mut encrypted);
    reference.decrypt(&mut decrypted);
    (encrypted, decrypted)
}

/// Lockstep over `flat` (whole messages) with scratch for `lanes`: both directions against
/// the expected digits.
fn lockstep(
    fpe: &AnyFpe,
    what: &str,
    tweak: Tweak<'_>,
    lanes: usize,
    flat: &[u32],
    expected: (&[u32], &[u32]),
) -> Outcome {
    let one = fpe.scratch_size();
    let size = ScratchSize {
        keystream_bytes: one.keystream_bytes * lanes,
        keys: one.keys * lanes,
    };
    let mut buf = ScratchBuf::with_size(size);
    let got = apply("encrypt_with", flat, |m| {
        fpe.encrypt_with(tweak, m, &mut buf.scratch())
    })?;
    same(
        &format!("encrypt_with({what}), {lanes} lanes, vs the reference"),
        &got,
        expected.0,
    )?;
    let got = apply("decrypt_with", flat, |m| {
        fpe.decrypt_with(tweak, m, &mut buf.scratch())
    })?;
    same(
        &format!("decrypt_with({what}), {lanes} lanes, vs the reference"),
        &got,
        expected.1,
    )
}

fn differential_with(case: &Case, fpe: &AnyFpe, budget: u64) -> Outcome {
    let params = &case.params;
    let fixed = reference(case, &case.tweak);
    let call = reference(case, &case.call_tweak);
    let constant_time = match case.constant_time_within_budget(budget) {
        true => Some(
            case.build(Selection::ConstantTime)
                .map_err(|e| format!("constant-time build: {e:?}"))?,
        ),
        false => None,
    };
    let mut buf = ScratchBuf::for_message(fpe);

    let valid: Vec<usize> = (0..case.messages.len())
        .filter(|&m| params.message_error(&case.messages[m]).is_none())
        .collect();
    let (mut encrypted, mut decrypted) = (Vec::new(), Vec::new());
    let (mut per_message_encrypted, mut per_message_decrypted) = (Vec::new(), Vec::new());
    for &index in &valid {
        let message = case.messages[index].as_slice();
        // Any message is also a ciphertext: both directions of each.
        let (expected_encrypted, expected_decrypted) = reference_both(&fixed, message);
        let got = apply("encrypt", message, |m| fpe.encrypt(m))?;
        same("encrypt vs the reference", &got, &expected_encrypted)?;
        let got = apply("decrypt", message, |m| fpe.decrypt(m))?;
        same("decrypt vs the reference", &got, &expected_decrypted)?;

        let (tweaked, untweaked) = reference_both(&call, message);
        let got = apply("encrypt_with(Bytes)", message, |m| {
            fpe.encrypt_with(Tweak::Bytes(&case.call_tweak), m, &mut buf.scratch())
        })?;
        same("encrypt_with(Bytes) vs the reference", &got, &tweaked)?;
        let got = apply("decrypt_with(Bytes)", message, |m| {
            fpe.decrypt_with(Tweak::Bytes(&case.call_tweak), m, &mut buf.scratch())
        })?;
        same("decrypt_with(Bytes) vs the reference", &got, &untweaked)?;

        if let Some(ct) = &constant_time {
            let got = apply("constant-time encrypt", message, |m| ct.encrypt(m))?;
            same(
                "constant-time encrypt vs the reference",
                &got,
                &expected_encrypted,
            )?;
            let got = apply("constant-time decrypt", message, |m| ct.decrypt(m))?;
            same(
                "constant-time decrypt vs the reference",
                &got,
                &expected_decrypted,
            )?;
            let got = apply("constant-time encrypt_with(Bytes)", message, |m| {
                ct.encrypt_with(Tweak::Bytes(&case.call_tweak), m, &mut buf.scratch())
            })?;
            same(
                "constant-time encrypt_with(Bytes) vs the reference",
                &got,
                &tweaked,
            )?;
        }
        encrypted.extend_from_slice(&expected_encrypted);
        decrypted.extend_from_slice(&expected_decrypted);

        let own = reference(case, &case.message_tweaks[index]);
        let (e, d) = reference_both(&own, message);
        per_message_encrypted.extend_from_slice(&e);
        per_message_decrypted.extend_from_slice(&d);
    }

    // Lockstep: all valid messages back to back, with scratch for the case's few lanes, then
    // for as many as the backend runs at once; under the fixed tweak, then a tweak each.
    let flat: Vec<u32> = valid
        .iter()
        .flat_map(|&m| case.messages[m].iter().copied())
        .collect();
    let tweaks: Vec<&[u8]> = valid
        .iter()
        .map(|&m| case.message_tweaks[m].as_slice())
        .collect();
    for lanes in [case.scratch_lanes, fpe.lanes()] {
        let expected = (encrypted.as_slice(), decrypted.as_slice());
        lockstep(fpe, "Fixed", Tweak::Fixed, lanes, &flat, expected)?;
        let expected = (
            per_message_encrypted.as_slice(),
            per_message_decrypted.as_slice(),
        );
        let per_message = Tweak::PerMessage(&tweaks);
        lockstep(fpe, "PerMessage", per_message, lanes, &flat, expected)?;
    }

    // A tweak too many or too few refuses the call, and changes nothing.
    let size = fpe.lockstep_scratch_size();
    let mut buf = ScratchBuf::with_size(size);
    let mut more = tweaks.clone();
    more.push(b"");
    let fewer = tweaks.split_last().map(|(_, fewer)| fewer);
    for tweaks in fewer.into_iter().chain([&more[..]]) {
        let mut copy = flat.clone();
        let result = fpe.encrypt_with(Tweak::PerMessage(tweaks), &mut copy, &mut buf.scratch());
        let expected = Err(MessageError::TweakCount {
            messages: valid.len(),
            tweaks: tweaks.len(),
        });
        ensure!(
            result == expected && copy == flat,
            "encrypt_with(PerMessage) of {} messages, {} tweaks: {result:?}, expected {expected:?}",
            valid.len(),
            tweaks.len()
        );
    }

    // An invalid message anywhere refuses the whole lockstep call, and changes nothing.
    if valid.len() < case.messages.len() {
        let all: Vec<u32> = case.messages.concat();
        // Seen flat, the digits may regroup into messages of the right length.
        let Some(expected) = params.many_error(&all) else {
            return Ok(());
        };
        for decrypt in [false, true] {
            let mut copy = all.clone();
            let result = if decrypt {
                fpe.decrypt_with(Tweak::Fixed, &mut copy, &mut buf.scratch())
            } else {
                fpe.encrypt_with(Tweak::Fixed, &mut copy, &mut buf.scratch())
            };
            ensure!(
                result == Err(expected),
                "*_with of {:?}: {result:?}, expected {expected:?}",
                case.messages
            );
            same("*_with refused, messages", &copy, &all)?;
        }
    }
    Ok(())
}
