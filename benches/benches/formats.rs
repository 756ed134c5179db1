//! 1 M card numbers with separators (`4111 1111 1111 1111`, `5500-0000-0000-0004`) through the
//! command's formatted-value pipeline (the function the binary runs, over an in-memory file),
//! against the library's parallel rate for the same values: `FormatCipher::encrypt_many_in` over
//! chunks spread on every core, a `BulkScratch` per task. The ratio of the two is the command's
//! overhead. `encrypt_many` on the same chunks takes fresh buffers for each: what keeping them
//! saves. Then one card a call through `FormatCipher::encrypt` and `decrypt`. All select with
//! `Selection::Fast` (as the other groups do, and the command with `--selection fast`) and count
//! their allocations per run (see `riffpe_benches::AllocationLog`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use riffpe_benches::{AllocationLog, CountingAllocator, KEY};
use riffpe_cli::bulk::Source;
use riffpe_cli::engine::Direction;
use riffpe_cli::formatted::{FormatLayout, FormatPipeline};
use riffpe_cli::progress::Progress;
use riffpe_format::{BulkScratch, Format, FormatCipher, Selection};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const CARDS: usize = 1 << 20;
/// Values per call on the library side: the pipeline's chunk size.
const CHUNK: usize = 1 << 11;

/// Luhn-valid-looking 16-digit numbers, half with spaces and half with dashes.
fn cards() -> Vec<String> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..CARDS)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = format!("{:016}", x % 10_000_000_000_000_000);
            let sep = if i % 2 == 0 { ' ' } else { '-' };
            let groups: Vec<&str> = (0..4).map(|g| &digits[4 * g..4 * g + 4]).collect();
            groups.join(&sep.to_string())
        })
        .collect()
}

/// The bytes a chunk's tokens take, as a writer consumes them: each chunk's are dropped before
/// the next, as the command's are.
fn written(tokens: Vec<String>) -> usize {
    tokens.iter().map(|t| black_box(t.len()) + 1).sum()
}

fn card_cipher() -> FormatCipher {
    let card = Format::named("card").expect("card");
    FormatCipher::with_selection(&KEY, card, Selection::Fast).expect("cipher")
}

fn formats(c: &mut Criterion) {
    let values = cards();
    let mut text = Vec::with_capacity(values.len() * 20);
    for v in &values {
        text.extend_from_slice(v.as_bytes());
        text.push(b'\n');
    }
    let cipher = card_cipher();
    let pipeline = FormatPipeline {
        layout: FormatLayout::Lines(Box::new(card_cipher())),
        header: false,
        direction: Direction::Encrypt,
        tweak: b"",
        block_records: riffpe_cli::formatted::BLOCK_RECORDS,
    };
    let group_name = "formats: 1M cards with separators";
    let mut group = c.benchmark_group(group_name);
    let log = AllocationLog::new(env!("CARGO_TARGET_TMPDIR"), group_name);
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(CARDS as u64));
    log.bench(
        &mut group,
        "library encrypt_many, parallel",
        None,
        |b, count| {
            count.iter(b, || {
                let bytes: usize = values
                    .par_chunks(CHUNK)
                    .map(|chunk| written(cipher.encrypt_many(chunk).expect("cards")))
                    .sum();
                black_box(bytes)
            })
        },
    );
    log.bench(
        &mut group,
        "library encrypt_many_in, parallel",
        None,
        |b, count| {
            count.iter(b, || {
                let bytes: usize = values
                    .par_chunks(CHUNK)
                    .map_init(BulkScratch::default, |scratch, chunk| {
                        written(cipher.encrypt_many_in(chunk, scratch).expect("cards"))
                    })
                    .sum();
                black_box(bytes)
            })
        },
    );
    log.bench(
        &mut group,
        "command pipeline, in memory",
        None,
        |b, count| {
            let mut out = Vec::with_capacity(text.len());
            count.iter(b, || {
                out.clear();
                let source = Source::Arguments;
                pipeline
                    .run(&text[..], &source, &mut out, "memory", &Progress::none())
                    .expect("cards");
                black_box(out.len())
            })
        },
    );
    group.finish();

    // One value a call, as a caller without batches runs: the core's one-message path, the
    // format's parsing and rendering, and their allocations.
    let group_name = "formats: one card a call";
    let mut group = c.benchmark_group(group_name);
    let log = AllocationLog::new(env!("CARGO_TARGET_TMPDIR"), group_name);
    group.throughput(Throughput::Elements(1));
    for (label, direction) in [
        ("encrypt", Direction::Encrypt),
        ("decrypt", Direction::Decrypt),
    ] {
        log.bench(&mut group, label, None, |b, count| {
            let mut next = values.iter().cycle();
            count.iter(b, || {
                let value = next.next().expect("cycles");
                match direction {
                    Direction::Encrypt => cipher.encrypt(value),
                    Direction::Decrypt => cipher.decrypt(value),
                }
                .expect("card")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, formats);
criterion_main!(benches);
