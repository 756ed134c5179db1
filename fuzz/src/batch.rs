//! The batch crate's modes against the core's one-message path (part of `differential`).

use riffpe::integer::{DigitOrder, Integer, domain_size, from_digits};
use riffpe::{AnyFpe, MessageError, ScratchBuf, Selection, Tweak};
use riffpe_batch::{Batch, Mode};

use crate::case::{Case, FUZZ_BUDGET, Outcome};
use crate::check::ensure;

const MODES: [Mode; 2] = [Mode::Lockstep, Mode::Parallel];

/// `Batch::{encrypt,decrypt}_{digits,ints}` in every mode give what `Fpe::{encrypt,decrypt}`
/// give one message at a time, and with a tweak per message what the core gives each message
/// under its own tweak (the core's paths are checked against the reference by
/// `check::differential`); an invalid message refuses the whole batch, naming the message and
/// leaving everything unchanged.
pub fn modes(case: &Case) -> Outcome {
    modes_within(case, FUZZ_BUDGET)
}

/// [`modes`] with another work budget (see [`Case::within_budget`]).
pub fn modes_within(case: &Case, budget: u64) -> Outcome {
    match case.build(Selection::Fast) {
        Ok(fpe) if case.within_budget(budget) => modes_with(case, &fpe),
        _ => Ok(()),
    }
}

fn modes_with(case: &Case, fpe: &AnyFpe) -> Outcome {
    let params = &case.params;
    let valid_index: Vec<usize> = (0..case.messages.len())
        .filter(|&m| params.message_error(&case.messages[m]).is_none())
        .collect();
    let valid: Vec<&[u32]> = valid_index
        .iter()
        .map(|&m| case.messages[m].as_slice())
        .collect();
    let tweaks: Vec<&[u8]> = valid_index
        .iter()
        .map(|&m| case.message_tweaks[m].as_slice())
        .collect();
    let mut buf = ScratchBuf::for_message(fpe);
    let mut per_message = Vec::new();
    for (&message, &tweak) in valid.iter().zip(&tweaks) {
        let mut m = message.to_vec();
        fpe.encrypt_with(Tweak::Bytes(tweak), &mut m, &mut buf.scratch())
            .map_err(|e| format!("encrypt_with(Bytes) of {message:?}: {e:?}"))?;
        per_message.extend(m);
    }
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
        .find_map(|(index, m)| params.message_error(m).map(|error| (index, error)));

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

        let mut got = flat.clone();
        let result = batch
            .tweak(Tweak::PerMessage(&tweaks))
            .encrypt_digits(&mut got);
        ensure!(
            result.is_ok() && got == per_message,
            "{mode:?} encrypt_digits of {valid:?} under {tweaks:?}: {result:?} {got:?}, expected {per_message:?}"
        );

        // Messages of the right length, one with a digit out of range: refused, unchanged.
        if let Some((
            index,
            MessageError::DigitOutOfRange {
                position, radix, ..
            },
        )) = first_invalid
        {
            let lengths = case.messages.iter().all(|m| m.len() == params.digits());
            if lengths {
                let all = case.messages.concat();
                let mut got = all.clone();
                let result = batch.encrypt_digits(&mut got);
                let expected = MessageError::DigitOutOfRange {
                    message: index,
                    position,
                    radix,
                };
                ensure!(
                    result == Err(expected) && got == all,
                    "{mode:?} encrypt_digits of {:?}: {result:?}, expected {expected:?}",
                    case.messages
                );
            }
        }

        // Integers are converted outside the mode: one order per mode covers both.
        let order = match mode {
            Mode::Lockstep => DigitOrder::LittleEndian,
            Mode::Parallel => DigitOrder::BigEndian,
        };
        if domain_size::<u64>(fpe.domain()).is_ok() {
            integers::<u64>(fpe, mode, order, &valid, &encrypted, &decrypted)?;
        } else if domain_size::<u128>(fpe.domain()).is_ok() {
            integers::<u128>(fpe, mode, order, &valid, &encrypted, &decrypted)?;
        }
    }
    Ok(())
}

/// The messages as integers in `order`, through `encrypt_ints` and `decrypt_ints`; then a value
/// not below the domain size, which must be refused.
fn integers<T: Integer + Send>(
    fpe: &AnyFpe,
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
    let expected = Err(MessageError::ValueOutOfDomain {
        message: plain.len(),
    });
    ensure!(
        result == expected && with_size == before,
        "{mode:?} encrypt_ints of {before:?} (last = domain size): {result:?}, expected {expected:?}"
    );
    Ok(())
}
