//! Times `riffpe-batch` on a file of little-endian `u64` numbers, for the Python benchmark report.
//!
//!     riffpe-batch-rate NUMBERS RADIX DIGITS BYTES_PER_VALUE MODE
//!
//! MODE is `lockstep` (one thread) or `parallel` (rayon, every core). Prints the seconds one
//! `encrypt_ints` call over the whole file took, after one untimed call.

use std::time::Instant;

use riffpe::Riffpe;
use riffpe::integer::DigitOrder;
use riffpe_batch::{Batch, Mode};

/// The key and tweak the Python side uses (the package's test key, an empty tweak).
const KEY: [u8; 16] = [
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, radix, digits, bytes_per_value, mode] = args.as_slice() else {
        return Err("usage: riffpe-batch-rate NUMBERS RADIX DIGITS BYTES_PER_VALUE MODE".into());
    };
    let numbers: Vec<u64> = std::fs::read(path)?
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
        .collect();
    let fpe = Riffpe::builder(radix.parse()?, digits.parse()?)
        .bytes_per_value(bytes_per_value.parse()?)
        .tweak(b"")
        .build(&KEY)?;
    let mode = match mode.as_str() {
        "lockstep" => Mode::Lockstep,
        "parallel" => Mode::Parallel,
        other => return Err(format!("unknown mode {other}").into()),
    };
    // Little-endian digits, as the Python package's default order.
    let batch = Batch::new(&fpe).order(DigitOrder::LittleEndian).mode(mode);
    let mut warm = numbers[..numbers.len().min(4096)].to_vec();
    batch.encrypt_ints(&mut warm)?;
    let mut work = numbers.clone();
    let start = Instant::now();
    batch.encrypt_ints(&mut work)?;
    let seconds = start.elapsed().as_secs_f64();
    println!("{seconds}");
    Ok(())
}
