//! 1 M card numbers with separators (`4111 1111 1111 1111`, `5500-0000-0000-0004`) through the
//! command's formatted-value pipeline (the function the binary runs, over an in-memory file),
//! against the library's parallel rate for the same values: `FormatCipher::encrypt_many` over
//! chunks spread on every core. The ratio of the two is the command's overhead.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use riffpe_benches::KEY;
use riffpe_cli::bulk::Source;
use riffpe_cli::engine::Direction;
use riffpe_cli::formatted::{FormatLayout, FormatPipeline};
use riffpe_cli::progress::Progress;
use riffpe_format::{Format, FormatCipher};

const CARDS: usize = 1 << 20;
/// Values per `encrypt_many` call on the library side: the pipeline's chunk size.
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

fn card_cipher() -> FormatCipher {
    FormatCipher::new(&KEY, Format::named("card").expect("card")).expect("cipher")
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
    let mut group = c.benchmark_group("formats: 1M cards with separators");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(CARDS as u64));
    group.bench_function("library encrypt_many, parallel", |b| {
        b.iter(|| {
            let tokens: Vec<Vec<String>> = values
                .par_chunks(CHUNK)
                .map(|chunk| cipher.encrypt_many(chunk).expect("cards"))
                .collect();
            black_box(tokens)
        })
    });
    group.bench_function("command pipeline, in memory", |b| {
        let mut out = Vec::with_capacity(text.len());
        b.iter(|| {
            out.clear();
            let source = Source::Arguments;
            pipeline
                .run(&text[..], &source, &mut out, "memory", &Progress::none())
                .expect("cards");
            black_box(out.len())
        })
    });
    group.finish();
}

criterion_group!(benches, formats);
criterion_main!(benches);
