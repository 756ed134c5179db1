//! Encrypting a large array of 16-digit numbers: one message after another with the core
//! (`encrypt_int`), several messages in lockstep on one core with `riffpe_batch`
//! (`Mode::Lockstep`), and lockstep on every core (`Mode::Parallel`). All three give the same
//! ciphertexts; the times show what batching buys. A demonstration, not a benchmark
//! (`cargo bench` measures).
//!
//! `cargo run --release --example batch_array [-- COUNT]`: 100 000 numbers by default, a few
//! seconds per mode; `-- 1000000` for a million (the debug build is much slower).

use std::error::Error;
use std::time::{Duration, Instant};

use riffpe::Riffpe;
use riffpe::integer::DigitOrder;
use riffpe_batch::{Batch, Mode};

const DEFAULT_COUNT: usize = 100_000;

/// Numbers below 10^16: 16 decimal digits, 8 digits of base 100.
const MODULUS: u64 = 10_000_000_000_000_000;

fn main() -> Result<(), Box<dyn Error>> {
    let count = match std::env::args().nth(1) {
        Some(count) => count
            .parse()
            .map_err(|_| format!("`{count}` is not a count"))?,
        None => DEFAULT_COUNT,
    };
    let key = hex::decode("00112233445566778899aabbccddeeff")?;
    let fpe = Riffpe::new(100, 8, &key, b"batch demo")?;
    let plaintexts = sample_numbers(count);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    println!("{count} numbers of 16 digits, Riffpe(100, 8), {threads} threads available");

    let mut runs: Vec<(String, Duration, Vec<u64>)> = Vec::new();
    let start = Instant::now();
    let values = plaintexts
        .iter()
        .map(|&x| fpe.encrypt_int(x, DigitOrder::BigEndian))
        .collect::<Result<Vec<u64>, _>>()?;
    runs.push(("Single".into(), start.elapsed(), values));
    for mode in [Mode::Lockstep, Mode::Parallel] {
        let batch = Batch::new(&fpe).order(DigitOrder::BigEndian).mode(mode);
        let mut values = plaintexts.clone();
        let start = Instant::now();
        batch.encrypt_ints(&mut values)?;
        runs.push((format!("{mode:?}"), start.elapsed(), values));
    }

    let (_, single_time, ciphertexts) = &runs[0];
    for (mode, _, values) in &runs[1..] {
        if values != ciphertexts {
            return Err(format!("{mode} gave other ciphertexts than one at a time").into());
        }
    }
    println!("\nmode        time    numbers/s   vs Single");
    for (mode, time, _) in &runs {
        println!(
            "{mode:<9} {:>7.3}s {:>11.0}   {:>5.2}x",
            time.as_secs_f64(),
            count as f64 / time.as_secs_f64(),
            single_time.as_secs_f64() / time.as_secs_f64()
        );
    }
    println!("all three ways gave the same {count} ciphertexts");

    let mut decrypted = ciphertexts.clone();
    Batch::new(&fpe)
        .order(DigitOrder::BigEndian)
        .mode(Mode::Parallel)
        .decrypt_ints(&mut decrypted)?;
    if decrypted != plaintexts {
        return Err("decryption did not give the plaintexts back".into());
    }
    println!("decrypted back (Mode::Parallel): all {count} equal to the plaintexts\n");
    for (plain, cipher) in plaintexts.iter().zip(ciphertexts).take(3) {
        println!("{plain:016} -> {cipher:016}");
    }
    Ok(())
}

/// `count` numbers spread over the 16-digit range (SplitMix64: reproducible, no dependency).
fn sample_numbers(count: usize) -> Vec<u64> {
    let mut state = 0x5eed_u64;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % MODULUS
        })
        .collect()
}
