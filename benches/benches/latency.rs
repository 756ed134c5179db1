//! Per-message latency: Riffpe and RiffpeX in the reference's configurations, FF1 on the same
//! numbers, the chained-AES floor, and integers to digits and back, all in one run. Each
//! benchmark also counts its allocations per message (see `riffpe_benches::AllocationLog`).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use fpe::ff1::{FF1, FlexibleNumeralString};
use std::time::Duration;

use riffpe::integer::{Converter, DigitOrder};
use riffpe::{Domain, Riffpe, RiffpeX, ScratchBuf, Selection, Tweak};
use riffpe_benches::{
    AllocationLog, Config, CountingAllocator, KEY, Passes, ROWS, TWEAK, aes_chain, aes_lanes,
    aes_lanes_with_passes, fixed_random,
};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn message(radices: &[u32], seed: u64) -> Vec<u32> {
    let r = fixed_random(seed, radices.len());
    r.iter()
        .zip(radices)
        .map(|(&x, &n)| (x % u64::from(n)) as u32)
        .collect()
}

fn riffpe_latency(c: &mut Criterion) {
    for (group_name, encrypt) in [("latency-encrypt", true), ("latency-decrypt", false)] {
        let mut group = c.benchmark_group(group_name);
        let log = AllocationLog::new(env!("CARGO_TARGET_TMPDIR"), group_name);
        group
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(2));
        let rows = ROWS
            .iter()
            .map(|row| (row, Selection::Fast))
            .chain(ROWS.iter().map(|row| (row, Selection::ConstantTime)));
        for (row, selection) in rows {
            for &(decimal, config) in row.configs {
                let label = match selection {
                    Selection::Fast => row.label.to_string(),
                    _ => format!("{} constant-time", row.label),
                };
                let value = decimal.to_string();
                macro_rules! bench {
                    ($builder:expr, $radices:expr) => {{
                        let fpe = $builder
                            .selection(selection)
                            .tweak(&TWEAK)
                            .build(&KEY)
                            .expect("valid configuration");
                        let mut m = message($radices, u64::from(decimal));
                        let mut scratch = ScratchBuf::for_message(&fpe);
                        let mut s = scratch.scratch();
                        log.bench(&mut group, &label, Some(&value), |b, count| {
                            if encrypt {
                                count.iter(b, || {
                                    fpe.encrypt_with(Tweak::Fixed, black_box(&mut m), &mut s)
                                })
                            } else {
                                count.iter(b, || {
                                    fpe.decrypt_with(Tweak::Fixed, black_box(&mut m), &mut s)
                                })
                            }
                        });
                    }};
                }
                match config {
                    Config::Riffpe(n, l, bpv) => {
                        bench!(Riffpe::builder(n, l).bytes_per_value(bpv), &vec![n; l])
                    }
                    Config::RiffpeX(radices) => {
                        bench!(RiffpeX::builder(radices).bytes_per_value(16), radices)
                    }
                }
            }
        }
        // FF1 (NIST SP 800-38G, AES-128) on the same decimal numbers: the established peer.
        let ff1 = FF1::<aes::Aes128>::new(&KEY, 10).expect("radix 10");
        for decimal in [6u32, 9, 16] {
            let digits: Vec<u16> = message(&vec![10; decimal as usize], 99)
                .into_iter()
                .map(|d| d as u16)
                .collect();
            let plain = FlexibleNumeralString::from(digits);
            let cipher = ff1.encrypt(&TWEAK, &plain).expect("valid numeral string");
            let value = decimal.to_string();
            log.bench(&mut group, "FF1 radix 10", Some(&value), |b, count| {
                if encrypt {
                    count.iter(b, || ff1.encrypt(&TWEAK, black_box(&plain)))
                } else {
                    count.iter(b, || ff1.decrypt(&TWEAK, black_box(&cipher)))
                }
            });
        }
        group.finish();
    }
}

/// The floor for Riffpe(100, 8) with 16 bytes per value: 2 passes x 8 digits x (1 CBC-MAC
/// block + 100 keystream blocks) = 1616 chained blocks, one message or one lane group.
fn aes_chain_floor(c: &mut Criterion) {
    let mut group = c.benchmark_group("aes-chain");
    let log = AllocationLog::new(env!("CARGO_TARGET_TMPDIR"), "aes-chain");
    let aes = riffpe::Aes::new_from_slice(&KEY).expect("16-byte key");
    let mut block = [7u8; 16];
    log.bench(&mut group, "aes_chain 1616 blocks", None, |b, count| {
        count.iter(b, || aes_chain(&aes, 1616, black_box(&mut block)))
    });
    // The same chains, as many at once as the backend encrypts in parallel: what lockstep
    // could reach if selection cost nothing.
    let lanes = Riffpe::new(100, 8, &KEY, &TWEAK)
        .expect("valid configuration")
        .lanes();
    let label = format!("aes_lanes 1616 blocks x{lanes}");
    log.bench(&mut group, &label, None, |b, count| {
        count.iter(b, || aes_lanes(&aes, 1616, black_box(&mut block)))
    });
    // The same chains with selection-like passes (18 a step, as the group kernel's search over
    // Riffpe(100, 8)'s planes runs) after each step's rows or spread between them: whether
    // selection's vector work can hide behind the AES rounds on this CPU.
    for (at, name) in [(Passes::After, "after"), (Passes::Between, "between")] {
        let label = format!("18 passes a step {name} aes_lanes 1616 blocks x{lanes}");
        log.bench(&mut group, &label, None, |b, count| {
            let shape = (16, 101, 18);
            count.iter(b, || {
                aes_lanes_with_passes(&aes, shape, at, black_box(&mut block))
            })
        });
    }
    // What the AES units themselves sustain with VAES-256 and 16 or 30 blocks in flight, next
    // to what the backend reaches: the `aes` crate's VAES-256 backend runs 30 at once.
    #[cfg(target_arch = "x86_64")]
    if riffpe_benches::vaes256_supported() {
        use riffpe_benches::vaes256_rounds;
        log.bench(
            &mut group,
            "vaes256_rounds 1616 blocks x16",
            None,
            |b, count| count.iter(b, || vaes256_rounds::<8>(1616, black_box(7))),
        );
        log.bench(
            &mut group,
            "vaes256_rounds 1616 blocks x30",
            None,
            |b, count| count.iter(b, || vaes256_rounds::<15>(1616, black_box(7))),
        );
    }
    group.finish();
}

/// A number to its digits and back, as the batch crate converts `u64` messages: per number,
/// over numbers that vary (each domain's own, from the benches' fixed generator).
fn integer_conversion(c: &mut Criterion) {
    let mut group = c.benchmark_group("integer-conversion");
    let log = AllocationLog::new(env!("CARGO_TARGET_TMPDIR"), "integer-conversion");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    for (radix, digits) in [(10, 16), (10, 6), (100, 8), (256, 8)] {
        let domain = Domain::Uniform { radix, digits };
        let converter = Converter::new(domain, DigitOrder::LittleEndian);
        // Radix 256 with 8 digits takes every u64.
        let size = u64::from(radix).checked_pow(digits as u32);
        let numbers: Vec<u64> = fixed_random(7, 1024)
            .into_iter()
            .map(|x| size.map_or(x, |size| x % size))
            .collect();
        let mut digit_rows = vec![0u32; numbers.len() * digits];
        for (&x, out) in numbers.iter().zip(digit_rows.chunks_exact_mut(digits)) {
            converter.to_digits(x, out).expect("in the domain");
        }
        let value = format!("Riffpe({radix},{digits})");
        let mut out = vec![0u32; digits];
        let mut at = 0;
        log.bench(&mut group, "to_digits", Some(&value), |b, count| {
            count.iter(b, || {
                at = (at + 1) % numbers.len();
                converter.to_digits(black_box(numbers[at]), &mut out)
            })
        });
        log.bench(&mut group, "from_digits", Some(&value), |b, count| {
            count.iter(b, || {
                at = (at + 1) % numbers.len();
                let row = &digit_rows[at * digits..][..digits];
                converter.from_digits::<u64>(black_box(row))
            })
        });
        // All the numbers at once, as the batch converts them: per number, divide by 1024.
        let mut many = vec![0u64; numbers.len()];
        log.bench(&mut group, "to_digits_many", Some(&value), |b, count| {
            count.iter(b, || {
                converter.to_digits_many(black_box(&numbers), &mut digit_rows)
            })
        });
        log.bench(&mut group, "from_digits_many", Some(&value), |b, count| {
            count.iter(b, || {
                converter.from_digits_many(black_box(&digit_rows), &mut many)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, aes_chain_floor, riffpe_latency, integer_conversion);
criterion_main!(benches);
