//! Shared by the integration tests: the vector format, cipher makers over both schemes and a
//! seeded generator.
#![allow(dead_code)]

use cipher::BlockCipherEncrypt;
use cipher::consts::U16;
use proptest::test_runner::Config as ProptestConfig;
use riffpe::{AnyFpe, Riffpe, RiffpeX, Selection};
use riffpe_reference::{Reference, Scheme};
use serde_json::Value;

/// One line of a vector file (`shared/vectors/*.jsonl` format).
#[derive(Clone, Debug)]
pub struct Vector {
    pub line: usize,
    /// `None` for Riffpe, the radices for RiffpeX.
    pub radices: Option<Vec<u32>>,
    pub radix: u32,
    pub digits: usize,
    pub bytes_per_value: usize,
    pub key: Vec<u8>,
    pub tweak: Vec<u8>,
    pub plaintext: Vec<u32>,
    pub ciphertext: Vec<u32>,
}

fn digits_of(v: &Value, field: &str, line: usize) -> Vec<u32> {
    v[field]
        .as_array()
        .unwrap_or_else(|| panic!("line {line}: no {field}"))
        .iter()
        .map(|d| d.as_u64().expect("digit") as u32)
        .collect()
}

pub fn parse_vectors(text: &str) -> Vec<Vector> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let line = i + 1;
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("line {line}: {e}"));
            let scheme = v["scheme"].as_str().expect("scheme");
            let radices = match scheme {
                "riffpe" => None,
                "riffpex" => Some(digits_of(&v, "radices", line)),
                other => panic!("line {line}: unknown scheme {other}"),
            };
            Vector {
                line,
                radix: v["radix"].as_u64().unwrap_or(0) as u32,
                digits: v["digits"].as_u64().expect("digits") as usize,
                bytes_per_value: v["bytes_per_value"].as_u64().expect("bytes_per_value") as usize,
                key: hex::decode(v["key"].as_str().expect("key")).expect("key hex"),
                tweak: hex::decode(v["tweak"].as_str().expect("tweak")).expect("tweak hex"),
                plaintext: digits_of(&v, "plaintext", line),
                ciphertext: digits_of(&v, "ciphertext", line),
                radices,
            }
        })
        .collect()
}

pub fn public_vectors() -> Vec<Vector> {
    parse_vectors(include_str!("../data/public.jsonl"))
}

/// Parameters of a cipher over either scheme: RiffpeX if `mixed`, else Riffpe over
/// `radices.len()` digits of `radices[0]`.
#[derive(Clone, Copy, Debug)]
pub struct Params<'a> {
    pub mixed: bool,
    pub radices: &'a [u32],
    pub key: &'a [u8],
    pub bytes_per_value: usize,
}

/// `$finish(builder)` on the builder of `$params`'s scheme with fixed tweak `$tweak` and
/// `$selection`, as an [`AnyFpe`]: the two schemes' builders are different types.
macro_rules! either_scheme {
    ($params:expr, $tweak:expr, $selection:expr, |$builder:ident| $finish:expr) => {{
        let params = $params;
        let built = if params.mixed {
            let $builder = RiffpeX::builder(params.radices.to_vec())
                .bytes_per_value(params.bytes_per_value)
                .selection($selection)
                .tweak($tweak);
            $finish.map(AnyFpe::from)
        } else {
            let $builder = Riffpe::builder(params.radices[0], params.radices.len())
                .bytes_per_value(params.bytes_per_value)
                .selection($selection)
                .tweak($tweak);
            $finish.map(AnyFpe::from)
        };
        built.unwrap_or_else(|e| panic!("{params:?}: {e}"))
    }};
}

impl Params<'_> {
    /// The cipher with fixed tweak `tweak` and `selection`.
    pub fn fpe_with(&self, tweak: &[u8], selection: Selection) -> AnyFpe {
        either_scheme!(self, tweak, selection, |builder| builder.build(self.key))
    }

    /// The cipher with fixed tweak `tweak` and `selection` on `cipher` instead of the key.
    pub fn fpe_on<C: BlockCipherEncrypt<BlockSize = U16>>(
        &self,
        tweak: &[u8],
        selection: Selection,
        cipher: C,
    ) -> AnyFpe<Vec<u32>, C> {
        either_scheme!(self, tweak, selection, |builder| builder
            .build_with_cipher(cipher))
    }

    /// The fast cipher with fixed tweak `tweak`.
    pub fn fpe(&self, tweak: &[u8]) -> AnyFpe {
        self.fpe_with(tweak, Selection::Fast)
    }

    /// The plain implementation with tweak `tweak`.
    pub fn reference(&self, tweak: &[u8]) -> Reference {
        let scheme = if self.mixed {
            Scheme::RiffpeX(self.radices)
        } else {
            Scheme::Riffpe {
                radix: self.radices[0],
                digits: self.radices.len(),
            }
        };
        Reference::new(scheme, self.key, tweak, self.bytes_per_value)
    }
}

/// A small deterministic generator for tests that must not depend on a seed file.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
    /// `count` random messages of `radices`, back to back.
    pub fn messages(&mut self, radices: &[u32], count: usize) -> Vec<u32> {
        let l = radices.len();
        (0..count * l)
            .map(|j| self.below(u64::from(radices[j % l])) as u32)
            .collect()
    }
}

/// A property's config: `cases` cases, unless `PROPTEST_CASES` gives the number (CI's runs
/// under CPU emulation give fewer).
pub fn cases(cases: u32) -> ProptestConfig {
    match std::env::var_os("PROPTEST_CASES") {
        Some(_) => ProptestConfig::default(),
        None => ProptestConfig::with_cases(cases),
    }
}

/// The message counts a lockstep test takes at `radices` with a radix of 1000 or more, where
/// the keystream (a key for each value of each digit) is most of its work: one message, and
/// one fewer and one more than the backend's `lanes`. Groups form alike at any radix, so the
/// test's full set of counts runs at its smaller radices; under CPU emulation, where a group is
/// eight or sixteen lanes, this is a few dozen messages instead of hundreds. `None` below.
pub fn counts_at_large_radices(radices: &[u32], lanes: usize) -> Option<Vec<usize>> {
    let large = radices.iter().any(|&radix| radix >= 1000);
    large.then(|| vec![1, lanes - 1, lanes + 1])
}
