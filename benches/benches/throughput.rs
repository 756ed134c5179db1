//! Arrays of numbers (u64): the single-message loop, lockstep lanes on one core, and lockstep
//! lanes over all cores. 16-digit numbers through Riffpe(100, 8) with 16 bytes per value and
//! Riffpe(10, 16) with 18, and 6-digit numbers through Riffpe(10, 6) with 18.
//!
//! 1 MiB of input by default; `RIFFPE_BENCH_FULL=1` adds 16, 32 and 64 MiB for Riffpe(100, 8),
//! lockstep and parallel. Every group selects with `Selection::Fast` (the default above radix
//! 256) but two, which run lockstep with constant-time selection (the default up to radix 256)
//! beside the fast one: encryption for radices 10 to 1000, decryption for radices 10 and 100.
//! Each benchmark also counts its allocations per call (see `riffpe_benches::AllocationLog`).

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use riffpe::integer::{Converter, DigitOrder, domain_size};
use riffpe::{MessageError, Riffpe, ScratchBuf, Selection, Tweak};
use riffpe_batch::{Batch, Mode};
use riffpe_benches::{AllocationLog, CountingAllocator, KEY, TWEAK, fixed_random};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const MIB: usize = 1 << 20;

fn sizes() -> Vec<usize> {
    if std::env::var_os("RIFFPE_BENCH_FULL").is_some_and(|v| v == "1") {
        vec![MIB, 16 * MIB, 32 * MIB, 64 * MIB]
    } else {
        vec![MIB]
    }
}

/// `(label, radix, digits, bytes_per_value)`; the first is also run at the full sizes.
const CONFIGS: [(&str, u32, usize, usize); 3] = [
    ("Riffpe(100,8) b=16", 100, 8, 16),
    ("Riffpe(10,16) b=18", 10, 16, 18),
    ("Riffpe(10,6) b=18", 10, 6, 18),
];

/// How an array is encrypted: one message at a time with the core (the baseline), or a batch.
#[derive(Clone, Copy, Debug)]
enum Way {
    Single,
    Batch(Mode),
}

const ALL_WAYS: [(&str, Way); 3] = [
    ("single", Way::Single),
    ("lockstep", Way::Batch(Mode::Lockstep)),
    ("parallel", Way::Batch(Mode::Parallel)),
];

/// The batch modes alone.
fn batch_ways() -> Vec<(&'static str, Way)> {
    ALL_WAYS
        .into_iter()
        .filter(|(_, way)| matches!(way, Way::Batch(_)))
        .collect()
}

/// The baseline: each number to digits, through `encrypt_with` alone, and back, with one
/// scratch for all, as the batch does per chunk.
fn one_at_a_time(
    fpe: &Riffpe,
    scratch: &mut ScratchBuf,
    values: &mut [u64],
    encrypt: bool,
) -> Result<(), MessageError> {
    let converter = Converter::new(fpe.domain(), DigitOrder::BigEndian);
    let mut digits = vec![0; fpe.digits()];
    for value in values {
        converter.to_digits(*value, &mut digits)?;
        if encrypt {
            fpe.encrypt_with(Tweak::Fixed, &mut digits, &mut scratch.scratch())?;
        } else {
            fpe.decrypt_with(Tweak::Fixed, &mut digits, &mut scratch.scratch())?;
        }
        *value = converter.from_digits(&digits)?;
    }
    Ok(())
}

/// Benches `count` fixed random numbers of `fpe`'s domain in each of `ways`, as `input`.
fn bench_ways(
    group: &mut BenchmarkGroup<'_, WallTime>,
    log: &AllocationLog,
    fpe: &Riffpe,
    count: usize,
    input: &str,
    ways: &[(&str, Way)],
    encrypt: bool,
) {
    let size: u64 = domain_size(fpe.domain()).expect("the domain fits u64");
    let numbers: Vec<u64> = fixed_random(1, count).iter().map(|x| x % size).collect();
    group.throughput(Throughput::ElementsAndBytes {
        elements: count as u64,
        bytes: (count * size_of::<u64>()) as u64,
    });
    for &(name, way) in ways {
        let mut work = numbers.clone();
        match way {
            Way::Single => {
                let mut scratch = ScratchBuf::for_message(fpe);
                log.bench(group, name, Some(input), |b, allocations| {
                    allocations.iter(b, || {
                        one_at_a_time(fpe, &mut scratch, black_box(&mut work), encrypt)
                    })
                });
            }
            Way::Batch(mode) => {
                let batch = Batch::new(fpe).order(DigitOrder::BigEndian).mode(mode);
                log.bench(group, name, Some(input), |b, allocations| {
                    allocations.iter(b, || {
                        if encrypt {
                            batch.encrypt_ints(black_box(&mut work))
                        } else {
                            batch.decrypt_ints(black_box(&mut work))
                        }
                    })
                });
            }
        }
    }
}

/// A group of ten samples of `seconds` each, with its allocation log.
fn group<'c>(
    c: &'c mut Criterion,
    name: &str,
    seconds: u64,
) -> (BenchmarkGroup<'c, WallTime>, AllocationLog) {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(seconds));
    (group, AllocationLog::new(env!("CARGO_TARGET_TMPDIR"), name))
}

fn throughput(c: &mut Criterion) {
    for (group_name, encrypt) in [("throughput-encrypt", true), ("throughput-decrypt", false)] {
        let (mut group, log) = group(c, group_name, 8);
        for (index, (label, radix, digits, bytes_per_value)) in CONFIGS.into_iter().enumerate() {
            let fpe = Riffpe::builder(radix, digits)
                .bytes_per_value(bytes_per_value)
                .selection(Selection::Fast)
                .tweak(&TWEAK)
                .build(&KEY)
                .expect("valid configuration");
            let sizes = if index == 0 { sizes() } else { vec![MIB] };
            for bytes in sizes {
                let input = format!("{label} {}MiB", bytes / MIB);
                let count = bytes / size_of::<u64>();
                // One message at a time costs the same per number at any size (minutes an
                // iteration at 64 MiB), so the larger sizes compare the batch modes only.
                let ways = if bytes == MIB {
                    ALL_WAYS.to_vec()
                } else {
                    batch_ways()
                };
                bench_ways(&mut group, &log, &fpe, count, &input, &ways, encrypt);
            }
        }
        group.finish();
    }
}

/// Small arrays, lockstep vs parallel: where spreading over cores starts to pay.
fn small_arrays(c: &mut Criterion) {
    let fpe = Riffpe::builder(100, 8)
        .selection(Selection::Fast)
        .tweak(&TWEAK)
        .build(&KEY)
        .expect("valid configuration");
    let (mut group, log) = group(c, "throughput-encrypt-small", 3);
    // Counts that fill the lanes, and counts whose last group is short.
    for count in [20, 32, 50, 100, 128, 512, 2048] {
        let input = format!("Riffpe(100,8) b=16 {count} numbers");
        bench_ways(&mut group, &log, &fpe, count, &input, &batch_ways(), true);
    }
    group.finish();
}

/// Lockstep encryption with constant-time selection beside the fast one, 1 MiB, radices 10
/// to 1000.
fn constant_time(c: &mut Criterion) {
    let configs = [
        ("Riffpe(10,16) b=18", 10, 16, 18),
        ("Riffpe(36,8) b=16", 36, 8, 16),
        ("Riffpe(100,8) b=16", 100, 8, 16),
        // The reference's 128-bit setting for radix 100: values do not start blocks.
        ("Riffpe(100,8) b=18", 100, 8, 18),
        ("Riffpe(200,4) b=16", 200, 4, 16),
        ("Riffpe(256,4) b=16", 256, 4, 16),
        ("Riffpe(1000,3) b=19", 1000, 3, 19),
    ];
    side_by_side(c, "throughput-encrypt-constant-time", &configs, true);
}

/// The same for decryption, radices 10 and 100.
fn constant_time_decrypt(c: &mut Criterion) {
    let configs = [
        ("Riffpe(10,16) b=18", 10, 16, 18),
        ("Riffpe(100,8) b=16", 100, 8, 16),
        ("Riffpe(100,8) b=18", 100, 8, 18),
    ];
    side_by_side(c, "throughput-decrypt-constant-time", &configs, false);
}

/// Lockstep with both selections for each of `configs` (label, radix, digits, b), 1 MiB.
fn side_by_side(
    c: &mut Criterion,
    group_name: &str,
    configs: &[(&str, u32, usize, usize)],
    encrypt: bool,
) {
    let (mut group, log) = group(c, group_name, 4);
    let lockstep = Way::Batch(Mode::Lockstep);
    let count = MIB / size_of::<u64>();
    for &(label, radix, digits, bytes_per_value) in configs {
        let input = format!("{label} 1MiB");
        for (name, selection) in [
            ("lockstep", Selection::Fast),
            ("lockstep constant-time", Selection::ConstantTime),
        ] {
            let fpe = Riffpe::builder(radix, digits)
                .bytes_per_value(bytes_per_value)
                .selection(selection)
                .tweak(&TWEAK)
                .build(&KEY)
                .expect("valid configuration");
            bench_ways(
                &mut group,
                &log,
                &fpe,
                count,
                &input,
                &[(name, lockstep)],
                encrypt,
            );
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    throughput,
    small_arrays,
    constant_time,
    constant_time_decrypt
);
criterion_main!(benches);
