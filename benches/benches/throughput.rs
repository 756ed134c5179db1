//! Arrays of 16-digit numbers (u64) through Riffpe(100, 8) with 16 bytes per value: the
//! single-message loop, lockstep lanes on one core, and lockstep lanes over all cores.
//!
//! 1 MiB of input by default; `RIFFPE_BENCH_FULL=1` adds 16, 32 and 64 MiB.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use riffpe::Riffpe;
use riffpe::integer::DigitOrder;
use riffpe_batch::{Batch, Mode};
use riffpe_benches::{KEY, TWEAK, fixed_random};

const MIB: usize = 1 << 20;

fn sizes() -> Vec<usize> {
    if std::env::var_os("RIFFPE_BENCH_FULL").is_some_and(|v| v == "1") {
        vec![MIB, 16 * MIB, 32 * MIB, 64 * MIB]
    } else {
        vec![MIB]
    }
}

fn throughput(c: &mut Criterion) {
    let fpe = Riffpe::new(100, 8, &KEY, &TWEAK).expect("valid configuration");
    for (group_name, encrypt) in [("throughput-encrypt", true), ("throughput-decrypt", false)] {
        let mut group = c.benchmark_group(group_name);
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(8));
        for bytes in sizes() {
            let count = bytes / size_of::<u64>();
            let numbers: Vec<u64> = fixed_random(1, count)
                .into_iter()
                .map(|x| x % 10_000_000_000_000_000)
                .collect();
            group.throughput(Throughput::Bytes(bytes as u64));
            for (name, mode) in [
                ("single", Mode::Single),
                ("lockstep", Mode::Lockstep),
                ("parallel", Mode::Parallel),
            ] {
                let batch = Batch::new(&fpe).order(DigitOrder::BigEndian).mode(mode);
                let mut work = numbers.clone();
                group.bench_function(BenchmarkId::new(name, format!("{}MiB", bytes / MIB)), |b| {
                    b.iter(|| {
                        if encrypt {
                            batch.encrypt_ints(black_box(&mut work))
                        } else {
                            batch.decrypt_ints(black_box(&mut work))
                        }
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, throughput);
criterion_main!(benches);
