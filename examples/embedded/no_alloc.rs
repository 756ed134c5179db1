//! Riffpe on a microcontroller: no allocator, scratch in a static-sized buffer on the stack.
//!
//! On the host: `cargo run --example no_alloc`.
//! For a Cortex-M4F: `cargo build -p riffpe-example-embedded --example no_alloc --target thumbv7em-none-eabihf`
//! (there the firmware would call `tokenize` from its own entry point).
#![no_std]
#![cfg_attr(target_os = "none", no_main)]

use riffpe::integer::{DigitOrder, from_digits, to_digits};
use riffpe::{Error, Riffpe, Scratch, Tweak};

/// Radix 100, 3 digits: a 6-digit account number. Keystream scratch: 100 values of 18 bytes in
/// whole AES blocks, one block of slack, and the CBC-MAC input (three one-byte digits and the
/// position, padded to a block): what `fpe.scratch_size()` reports, 1840.
const KEYSTREAM_BYTES: usize = (100 * 18_usize).div_ceil(16) * 16 + 16 + 16;
/// Key scratch: one 64-bit sort key per value plus 16 bucket counters (116).
const KEYS: usize = 100 + 16;

/// Encrypts a 6-digit number under `key`; nothing here allocates.
pub fn tokenize(key: &[u8; 16], account: u64) -> Result<u64, Error> {
    let fpe = Riffpe::builder(100, 3)
        .bytes_per_value(18)
        .tweak(b"accounts")
        .build(key)?;
    let (mut keystream, mut keys) = ([0u8; KEYSTREAM_BYTES], [0u64; KEYS]);
    let mut scratch = Scratch::new(&mut keystream, &mut keys);
    let mut digits = [0u32; 3];
    to_digits(account, fpe.domain(), DigitOrder::BigEndian, &mut digits)?;
    fpe.encrypt_with(Tweak::Fixed, &mut digits, &mut scratch)?;
    Ok(from_digits(&digits, fpe.domain(), DigitOrder::BigEndian)?)
}

#[cfg(target_os = "none")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}

#[cfg(not(target_os = "none"))]
extern crate std;

#[cfg(not(target_os = "none"))]
fn main() -> Result<(), Error> {
    let key = *b"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff";
    for account in [0, 123_456, 999_999] {
        std::println!("{account:06} -> {:06}", tokenize(&key, account)?);
    }
    Ok(())
}
