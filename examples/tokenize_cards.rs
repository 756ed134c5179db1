//! Tokenize card numbers as payment systems do: keep the first 6 digits (the issuer) and the
//! last 4, encrypt the middle 6. The clear digits are the tweak, so equal middles of different
//! cards encrypt differently.
//!
//! `cargo run --example tokenize_cards -- examples/data/cards.txt examples/data/demo.key`

use std::error::Error;
use std::{env, fs};

use riffpe::{MessageError, Riffpe, ScratchBuf, Tweak};

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = env::args().skip(1);
    let cards = args
        .next()
        .unwrap_or_else(|| "examples/data/cards.txt".into());
    let key_file = args
        .next()
        .unwrap_or_else(|| "examples/data/demo.key".into());
    let key = hex::decode(fs::read_to_string(&key_file)?.trim())
        .map_err(|e| format!("{key_file}: not a hex key: {e}"))?;
    // Radix 10, 6 digits, 18 bytes per value (the reference's 128-bit setting for radix 10).
    let fpe = Riffpe::builder(10, 6).bytes_per_value(18).build(&key)?;
    let mut scratch = ScratchBuf::for_message(&fpe);

    for (line_no, line) in fs::read_to_string(&cards)?.lines().enumerate() {
        let card = line.trim();
        if card.len() != 16 || !card.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("{cards}:{}: not a 16-digit card number", line_no + 1).into());
        }
        let token = tokenize(&fpe, &mut scratch, card, true)?;
        assert_eq!(
            tokenize(&fpe, &mut scratch, &token, false)?,
            card,
            "decryption restores the card"
        );
        println!("{card} -> {token}");
    }
    Ok(())
}

/// Encrypts (or decrypts) digits 6..12 of a 16-digit card, tweaked by the other ten.
fn tokenize(
    fpe: &Riffpe,
    scratch: &mut ScratchBuf,
    card: &str,
    encrypt: bool,
) -> Result<String, MessageError> {
    let (issuer, rest) = card.split_at(6);
    let (middle, last4) = rest.split_at(6);
    let tweak = [issuer.as_bytes(), last4.as_bytes()].concat();
    let mut digits: Vec<u32> = middle.bytes().map(|b| u32::from(b - b'0')).collect();
    let tweak = Tweak::Bytes(&tweak);
    if encrypt {
        fpe.encrypt_with(tweak, &mut digits, &mut scratch.scratch())?;
    } else {
        fpe.decrypt_with(tweak, &mut digits, &mut scratch.scratch())?;
    }
    let middle: String = digits.iter().map(|&d| char::from(b'0' + d as u8)).collect();
    Ok(format!("{issuer}{middle}{last4}"))
}
