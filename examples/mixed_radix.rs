//! RiffpeX over mixed-radix domains. IDs of the form `[a-z][0-9]{7}` (26 · 10^7 values) encrypt
//! to IDs of the same form, one radix per character. A domain whose size is not a product of
//! its format's radices, such as 227 840 000 values, is split by `find_best_bases` into radices
//! whose product is exactly that size, and integers below it encrypt to integers below it.
//!
//! `cargo run --example mixed_radix [-- ID…]`

use std::error::Error;

use riffpe::integer::{DigitOrder, domain_size};
use riffpe::{RiffpeX, find_best_bases};

/// `[a-z][0-9]{7}`: a letter, then seven decimal digits (digit 0 is the letter).
const ID_RADICES: [u32; 8] = [26, 10, 10, 10, 10, 10, 10, 10];

/// A domain size that is no power of anything: 40^4 · 89.
const SIZE: u64 = 227_840_000;

/// The smallest radix `find_best_bases` may choose.
const THRESHOLD: u64 = 24;

fn main() -> Result<(), Box<dyn Error>> {
    let key = hex::decode("00112233445566778899aabbccddeeff")?;

    let ids = RiffpeX::new(ID_RADICES, &key, b"employee ids")?;
    let given: Vec<String> = std::env::args().skip(1).collect();
    let examples = ["a0000000", "k1234567", "z9999999"].map(String::from);
    println!("[a-z][0-9]{{7}}: radices {ID_RADICES:?}");
    for id in if given.is_empty() {
        &examples[..]
    } else {
        &given
    } {
        let mut digits = parse_id(id)?;
        ids.encrypt(&mut digits)?;
        let token = format_id(&digits);
        ids.decrypt(&mut digits)?;
        assert_eq!(&format_id(&digits), id, "decryption restores the ID");
        println!("  {id} -> {token}");
    }

    let bases = find_best_bases(SIZE, THRESHOLD)?;
    println!("\nfind_best_bases({SIZE}, {THRESHOLD}) = {bases:?}");
    let sized = RiffpeX::new(bases, &key, b"")?;
    assert_eq!(domain_size::<u64>(sized.domain())?, SIZE);
    for value in [0, 1, 123_456_789, SIZE - 1] {
        let encrypted = sized.encrypt_int(value, DigitOrder::BigEndian)?;
        let decrypted = sized.decrypt_int(encrypted, DigitOrder::BigEndian)?;
        assert!(encrypted < SIZE && decrypted == value);
        println!("  {value:>9} -> {encrypted:>9}");
    }
    Ok(())
}

/// `k1234567` → `[10, 1, 2, 3, 4, 5, 6, 7]`.
fn parse_id(id: &str) -> Result<Vec<u32>, String> {
    let bytes = id.as_bytes();
    let valid = bytes.len() == ID_RADICES.len()
        && bytes[0].is_ascii_lowercase()
        && bytes[1..].iter().all(u8::is_ascii_digit);
    if !valid {
        return Err(format!("`{id}` is not of the form [a-z][0-9]{{7}}"));
    }
    let letter = u32::from(bytes[0] - b'a');
    Ok(std::iter::once(letter)
        .chain(bytes[1..].iter().map(|&b| u32::from(b - b'0')))
        .collect())
}

/// The inverse of [`parse_id`].
fn format_id(digits: &[u32]) -> String {
    let (letter, rest) = digits.split_first().expect("an ID has 8 digits");
    std::iter::once(char::from(b'a' + *letter as u8))
        .chain(rest.iter().map(|&d| char::from(b'0' + d as u8)))
        .collect()
}
