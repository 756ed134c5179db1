//! The batch crate's three modes against the core's one-message path (part of `differential`),
//! shared with `crates/riffpe-cli/tests/fuzz_regressions.rs` (which includes this file).

use riffpe::integer::{DigitOrder, Integer, domain_size, from_digits};
use riffpe::{Error, Fpe, Radices};
use riffpe_batch::{Batch, BatchError, Mode};

use crate::case::Outcome;
use crate::case::{Case, FUZZ_BUDGET};
use crate::cipher::message_error;
use crate::cipher::{Cipher, with_fpe};

const MODES: [Mode; 3] = [Mode::Single, Mode::Lockstep, Mode::Parallel];

/// `Batch::{encrypt,decrypt}_{digits,ints}` in every mode give what `Fpe::{encrypt,decrypt}`
/// give one message at a time (the core's paths are checked against the reference by
/// `check::differential`); an invalid message refuses the whole batch, naming the message and
/// leaving everything unchanged.
pub fn modes(case: &Case) -> Outcome {
    modes_within(case, FUZZ_BUDGET)
}

/// [`modes`] with another work budget (see [`Case::within_budget`]).
pub fn modes_within(case: &Case, budget: u64) -> Outcome {
    match Cipher::build(case) {
        Ok(cipher) if case.within_budget(budget) => with_fpe!(&cipher, |fpe| modes_with(case, fpe)),
        _ => Ok(()),
    }
}

macro_rules! ensure {
    ($condition:expr, $($message:tt)+) => {
        if !$condition {
            return Err(format!($($message)+));
        }
    };
}

fn modes_with<D: Radices + Sync>(case: &Case, fpe: &Fpe<D>) -> Outcome {
    let params = &case.params;
    let valid: Vec<&[u32]> = case
        .messages
        .iter()
        .filter(|m| message_error(params, m).is_none())
        .map(Vec::as_slice)
        .collect();
    let (mut encrypted, mut decrypted) = (Vec::new(), Vec::new());
    for &message in &valid {
        let mut m = message.to_vec();
        fpe.encrypt(&mut m)
            .map_err(|e| format!("encrypt of {message:?}: {e:?}"))?;
        encrypted.push(m);
        let mut m = message.to_vec();
        fpe.decrypt(&mut m)
            .map_err(|e| format!("decrypt of {message:?}: {e:?}"))?;
        decrypted.push(m);
    }
    let flat = valid.concat();
    let first_invalid = case
        .messages
        .iter()
        .enumerate()
        .find_map(|(index, m)| message_error(params, m).map(|error| (index, error)));

    for mode in MODES {
        let batch = Batch::new(fpe).mode(mode);
        let mut got = flat.clone();
        let result = batch.encrypt_digits(&mut got);
        ensure!(
            result.is_ok() && got == encrypted.concat(),
            "{mode:?} encrypt_digits of {valid:?}: {result:?} {got:?}, expected {encrypted:?}"
        );
        let mut got = flat.clone();
        let result = batch.decrypt_digits(&mut got);
        ensure!(
            result.is_ok() && got == decrypted.concat(),
            "{mode:?} decrypt_digits of {valid:?}: {result:?} {got:?}, expected {decrypted:?}"
        );

        // Messages of the right length, one with a digit out of range: refused, unchanged.
        if let Some((index, error @ Error::DigitOutOfRange { .. })) = first_invalid {
            let lengths = case.messages.iter().all(|m| m.len() == params.digits());
            if lengths {
                let all = case.messages.concat();
                let mut got = all.clone();
                let result = batch.encrypt_digits(&mut got);
                ensure!(
                    result == Err(BatchError { index, error }) && got == all,
                    "{mode:?} encrypt_digits of {:?}: {result:?}, expected message {index}: {error:?}",
                    case.messages
                );
            }
        }

        // Integers are converted outside the mode: one order per mode covers both.
        let order = match mode {
            Mode::Lockstep => DigitOrder::LittleEndian,
            _ => DigitOrder::BigEndian,
        };
        if domain_size::<u64>(fpe.domain()).is_ok() {
            integers::<u64, D>(fpe, mode, order, &valid, &encrypted, &decrypted)?;
        } else if domain_size::<u128>(fpe.domain()).is_ok() {
            integers::<u128, D>(fpe, mode, order, &valid, &encrypted, &decrypted)?;
        }
    }
    Ok(())
}

/// The messages as integers in `order`, through `encrypt_ints` and `decrypt_ints`; then a value
/// not below the domain size, which must be refused.
fn integers<T: Integer + Send, D: Radices + Sync>(
    fpe: &Fpe<D>,
    mode: Mode,
    order: DigitOrder,
    valid: &[&[u32]],
    encrypted: &[Vec<u32>],
    decrypted: &[Vec<u32>],
) -> Outcome {
    let domain = fpe.domain();
    let to_ints = |messages: &mut dyn Iterator<Item = &[u32]>| -> Result<Vec<T>, String> {
        messages
            .map(|m| from_digits::<T>(m, domain, order).map_err(|e| format!("from_digits: {e:?}")))
            .collect()
    };
    let plain = to_ints(&mut valid.iter().copied())?;
    let expected_encrypted = to_ints(&mut encrypted.iter().map(Vec::as_slice))?;
    let expected_decrypted = to_ints(&mut decrypted.iter().map(Vec::as_slice))?;
    let batch = Batch::new(fpe).mode(mode).order(order);

    let mut got = plain.clone();
    let result = batch.encrypt_ints(&mut got);
    ensure!(
        result.is_ok() && got == expected_encrypted,
        "{mode:?} {order:?} encrypt_ints of {plain:?}: {result:?} {got:?}, expected {expected_encrypted:?}"
    );
    let mut got = plain.clone();
    let result = batch.decrypt_ints(&mut got);
    ensure!(
        result.is_ok() && got == expected_decrypted,
        "{mode:?} {order:?} decrypt_ints of {plain:?}: {result:?} {got:?}, expected {expected_decrypted:?}"
    );

    let size: T = domain_size(domain).map_err(|e| format!("domain_size: {e:?}"))?;
    let mut with_size = plain.clone();
    with_size.push(size);
    let before = with_size.clone();
    let result = batch.encrypt_ints(&mut with_size);
    let expected = Err(BatchError {
        index: plain.len(),
        error: Error::ValueOutOfDomain,
    });
    ensure!(
        result == expected && with_size == before,
        "{mode:?} encrypt_ints of {before:?} (last = domain size): {result:?}, expected {expected:?}"
    );
    Ok(())
}
