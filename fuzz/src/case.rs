//! One fuzz case (parameters, key, tweaks, messages) decoded by hand from the fuzzer's bytes.
//!
//! Std only, no `arbitrary` and no libfuzzer: the ordinary regression tests include this file
//! with `#[path]`, so a crash file decodes to the same case in `cargo test` as in the fuzzer.
//!
//! Every byte string decodes to some case (reads past the end give zeros). Choices are biased
//! to small, cheap values and to SPEC's boundaries (element widths at 256 and 65 536, 256 digits
//! at width 1, `bytes_per_value` 0, 8 and 48, bad key lengths); huge radices, digit counts and
//! `bytes_per_value` are decoded too, and [`Case::within_budget`] says when only construction
//! may be tried, so that no input makes a check slow.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Digits of a message at most (a cipher with more digits is only constructed).
pub const MAX_MESSAGE_DIGITS: usize = 300;
/// Radices of a RiffpeX case at most: enough to cross 65 536 digits at width 2.
pub const MAX_RADICES: usize = 65_545;
/// Messages of a case at most (more than any backend's lanes, so lockstep runs several groups).
pub const MAX_MESSAGES: usize = 80;
/// Work (AES blocks plus values sorted) one direction over all messages may cost in the
/// fuzzer: a few milliseconds under coverage instrumentation, for a dozen directions a case.
pub const FUZZ_BUDGET: u64 = 1 << 13;
/// The budget of the hand-picked cases of the regression tests, which reach width 4
/// (radix 65 536 and more) with one byte per value.
pub const TEST_BUDGET: u64 = 1 << 18;
/// Key comparisons the O(n²) constant-time selection may cost, per unit of budget.
pub const CONSTANT_TIME_OPS_PER_WORK: u64 = 1 << 4;

/// `Ok(())`, or the first property a check found false, in words.
pub type Outcome = Result<(), String>;

/// Reads values off the fuzzer's bytes; past the end every read gives zeros.
#[derive(Clone, Debug)]
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// A reader at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    /// The next `N` bytes, zero-filled past the end.
    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let n = N.min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        out
    }

    /// One byte.
    pub fn u8(&mut self) -> u8 {
        self.array::<1>()[0]
    }

    /// Two bytes, little-endian.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.array())
    }

    /// Four bytes, little-endian.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    /// Eight bytes, little-endian.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }

    /// Eight bytes as a `usize`, saturating on 32-bit targets.
    pub fn usize(&mut self) -> usize {
        usize::try_from(self.u64()).unwrap_or(usize::MAX)
    }

    /// `len` bytes, zero-filled past the end.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let n = len.min(self.data.len());
        let mut out = self.data[..n].to_vec();
        out.resize(len, 0);
        self.data = &self.data[n..];
        out
    }

    /// Everything not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }

    /// A radix: mostly below 128, often near a width boundary, sometimes any `u32`.
    pub fn radix(&mut self) -> u32 {
        const EDGES: [u32; 16] = [
            2,
            3,
            10,
            16,
            100,
            255,
            256,
            257,
            1000,
            4096,
            65_535,
            65_536,
            65_537,
            1 << 24,
            4_000_000_000,
            u32::MAX,
        ];
        match self.u8() {
            s @ 0..128 => u32::from(s),
            128..160 => 128 + u32::from(self.u8()),
            s @ 160..192 => {
                let delta = i64::from(self.u8() % 5) - 2;
                let edge = i64::from(EDGES[usize::from(s & 15)]) + delta;
                u32::try_from(edge.clamp(0, i64::from(u32::MAX))).unwrap_or(u32::MAX)
            }
            192..224 => u32::from(self.u16()),
            224..=255 => self.u32(),
        }
    }

    /// A digit count: mostly below 16, sometimes up to 300, sometimes a boundary or any `u64`.
    pub fn digits(&mut self) -> usize {
        const EDGES: [u64; 16] = [
            0,
            1,
            64,
            65,
            255,
            256,
            257,
            300,
            65_535,
            65_536,
            65_537,
            0xffff_fffe,
            0xffff_ffff,
            0x1_0000_0000,
            0x1_0000_0001,
            u64::MAX,
        ];
        match self.u8() {
            s @ 0..128 => usize::from(s & 15),
            s @ 128..192 => usize::from(s & 63),
            192..240 => usize::from(self.u16()) % (MAX_MESSAGE_DIGITS + 1),
            s @ 240..255 => usize::try_from(EDGES[usize::from(s & 15)]).unwrap_or(usize::MAX),
            255 => self.usize(),
        }
    }

    /// `bytes_per_value`: mostly the default 16, often small or a boundary, rarely huge.
    pub fn bytes_per_value(&mut self) -> usize {
        const EDGES: [usize; 20] = [
            1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 18, 19, 20, 24, 32, 33, 47, 48, 49,
        ];
        const HUGE: [u64; 7] = [
            64,
            4096,
            65_536,
            1 << 30,
            1 << 40,
            u32::MAX as u64,
            u64::MAX,
        ];
        match self.u8() {
            0..128 => 16,
            s @ 128..192 => usize::from(s & 63),
            s @ 192..248 => EDGES[usize::from(s) % EDGES.len()],
            s @ 248..255 => usize::try_from(HUGE[usize::from(s - 248)]).unwrap_or(usize::MAX),
            255 => self.usize(),
        }
    }

    /// A key length: mostly 16, 24 or 32, sometimes anything up to 255.
    fn key_len(&mut self) -> usize {
        match self.u8() {
            0..96 => 16,
            96..160 => 24,
            160..224 => 32,
            s @ 224..255 => usize::from(s) % 65,
            255 => usize::from(self.u8()),
        }
    }

    /// A tweak length: often empty, mostly short, sometimes 100 or up to 65 535.
    fn tweak_len(&mut self) -> usize {
        match self.u8() {
            0..64 => 0,
            s @ 64..192 => usize::from(s & 31),
            192..224 => 100,
            224..255 => usize::from(self.u8()),
            255 => usize::from(self.u16()),
        }
    }

    /// How many of a radix in a RiffpeX run: mostly 1 to 8, sometimes up to 300 or a boundary.
    fn run_length(&mut self) -> usize {
        const EDGES: [usize; 8] = [255, 256, 257, 65_535, 65_536, 65_537, 64, 65];
        match self.u8() {
            s @ 0..192 => 1 + usize::from(s & 7),
            192..240 => usize::from(self.u16()) % (MAX_MESSAGE_DIGITS + 1),
            s @ 240..255 => EDGES[usize::from(s & 7)],
            255 => self.usize(),
        }
    }
}

/// The scheme and its domain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Params {
    /// Riffpe: `digits` digits below `radix`.
    Riffpe {
        /// Radix of every digit.
        radix: u32,
        /// Digits of a message.
        digits: usize,
    },
    /// RiffpeX: digit `i` below `radices[i]`.
    RiffpeX {
        /// One radix per digit.
        radices: Vec<u32>,
    },
}

impl Params {
    /// Digits of a message.
    pub fn digits(&self) -> usize {
        match self {
            Params::Riffpe { digits, .. } => *digits,
            Params::RiffpeX { radices } => radices.len(),
        }
    }

    /// Radix of digit `index` (`index < digits()`).
    pub fn radix(&self, index: usize) -> u32 {
        match self {
            Params::Riffpe { radix, .. } => *radix,
            Params::RiffpeX { radices } => radices[index],
        }
    }

    /// The largest radix (0 without digits).
    pub fn max_radix(&self) -> u32 {
        match self {
            Params::Riffpe { radix, digits } => {
                if *digits == 0 {
                    0
                } else {
                    *radix
                }
            }
            Params::RiffpeX { radices } => radices.iter().copied().max().unwrap_or(0),
        }
    }

    /// SPEC's element width `w`: 1, 2 or 4 bytes.
    pub fn width(&self) -> usize {
        match self.max_radix() {
            0..=0xff => 1,
            0x100..=0xffff => 2,
            _ => 4,
        }
    }

    /// The work of one message in one direction, saturating: over both passes and every
    /// step, the AES blocks of the step's CBC-MAC and keystream, plus its values (each is
    /// made into a key, selected among, and sorted by the reference).
    pub fn work_per_message(&self, bytes_per_value: usize) -> u64 {
        let l = to_u64(self.digits());
        let mac_blocks = l.saturating_add(1).saturating_mul(to_u64(self.width())) / 16 + 1;
        let step = |radix: u32| {
            let keystream = u64::from(radix)
                .saturating_mul(to_u64(bytes_per_value))
                .div_ceil(16);
            mac_blocks
                .saturating_add(keystream)
                .saturating_add(u64::from(radix))
        };
        let pass = match self {
            Params::Riffpe { radix, digits } => step(*radix).saturating_mul(to_u64(*digits)),
            Params::RiffpeX { radices } => radices
                .iter()
                .fold(0u64, |sum, &radix| sum.saturating_add(step(radix))),
        };
        pass.saturating_mul(2)
    }

    /// Key comparisons of the constant-time selection for one message in one direction.
    pub fn constant_time_ops(&self) -> u64 {
        let square = |radix: u32| u64::from(radix).saturating_mul(u64::from(radix));
        let pass = match self {
            Params::Riffpe { radix, digits } => square(*radix).saturating_mul(to_u64(*digits)),
            Params::RiffpeX { radices } => radices
                .iter()
                .fold(0u64, |sum, &radix| sum.saturating_add(square(radix))),
        };
        pass.saturating_mul(2)
    }
}

fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// One decoded fuzz case: a cipher's parameters and the messages to run through it.
///
/// Build one by hand in a test, or with [`Case::decode`] from a fuzzer's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// Scheme and domain.
    pub params: Params,
    /// The AES key (any length: only 16, 24 and 32 are valid).
    pub key: Vec<u8>,
    /// The fixed tweak given at construction.
    pub tweak: Vec<u8>,
    /// Keystream bytes per value.
    pub bytes_per_value: usize,
    /// The tweak of the `*_tweaked` calls.
    pub call_tweak: Vec<u8>,
    /// Messages, usually valid; some have a digit not below its radix or a wrong length.
    pub messages: Vec<Vec<u32>>,
    /// Lanes the lockstep scratch holds (the engine runs at most that many together).
    pub scratch_lanes: usize,
}

/// How the last byte of the flags changes one message, to reach the error paths.
const MUTATE_DIGIT: u8 = 6;
const MUTATE_LENGTH: u8 = 7;

impl Case {
    /// Decodes a case from any bytes.
    ///
    /// Layout: flags, key, bytes_per_value, domain, tweak, call tweak, message count, message
    /// digits, then the mutation's details. Messages beyond [`FUZZ_BUDGET`] are dropped (one
    /// is always kept).
    pub fn decode(data: &[u8]) -> Case {
        let mut input = Input::new(data);
        let flags = input.u8();
        let key_len = input.key_len();
        let key = input.bytes(key_len);
        let bytes_per_value = input.bytes_per_value();
        let params = if flags & 1 == 0 {
            let radix = input.radix();
            let digits = input.digits();
            Params::Riffpe { radix, digits }
        } else {
            let runs = match input.u8() {
                0 => 0,
                255 => usize::from(input.u8()),
                s => 1 + usize::from(s & 3),
            };
            let mut radices = Vec::new();
            for _ in 0..runs {
                let radix = input.radix();
                let count = input
                    .run_length()
                    .min(MAX_RADICES.saturating_sub(radices.len()));
                radices.resize(radices.len() + count, radix);
            }
            Params::RiffpeX { radices }
        };
        let tweak_len = input.tweak_len();
        let tweak = input.bytes(tweak_len);
        let call_tweak = if flags & 2 == 0 {
            tweak.clone()
        } else {
            let len = input.tweak_len();
            input.bytes(len)
        };
        let count = match input.u8() {
            s @ 0..224 => 1 + usize::from(s % 3),
            s @ 224..255 => 1 + usize::from(s) % MAX_MESSAGES,
            255 => usize::from(input.u8()).clamp(1, MAX_MESSAGES),
        };
        let per_message = params.work_per_message(bytes_per_value).max(1);
        let count = count.min(
            usize::try_from(FUZZ_BUDGET / per_message)
                .unwrap_or(usize::MAX)
                .max(1),
        );
        let len = params.digits().min(MAX_MESSAGE_DIGITS);
        let mut messages = Vec::with_capacity(count);
        for _ in 0..count {
            let message: Vec<u32> = (0..len)
                .map(|i| {
                    let radix = params.radix(i);
                    let raw = match radix {
                        0..=0x100 => u32::from(input.u8()),
                        0x101..=0x1_0000 => u32::from(input.u16()),
                        _ => input.u32(),
                    };
                    raw % radix.max(1)
                })
                .collect();
            messages.push(message);
        }
        match (flags >> 2) & 7 {
            MUTATE_DIGIT => {
                let m = usize::from(input.u8()) % count;
                if len > 0 {
                    let position = usize::from(input.u16()) % len;
                    let radix = params.radix(position);
                    messages[m][position] = match input.u8() {
                        255 => u32::MAX,
                        k => radix.saturating_add(u32::from(k % 3)),
                    };
                }
            }
            MUTATE_LENGTH => {
                let m = usize::from(input.u8()) % count;
                if input.u8() & 1 == 0 && !messages[m].is_empty() {
                    messages[m].pop();
                } else {
                    messages[m].push(0);
                }
            }
            _ => {}
        }
        Case {
            params,
            key,
            tweak,
            bytes_per_value,
            call_tweak,
            messages,
            scratch_lanes: 1 + usize::from(flags >> 5),
        }
    }

    /// Bytes that [`Case::decode`] turns back into this case, if the decoding can produce it
    /// (used to prove hand-picked cases are in the fuzzer's reach, and to seed its corpus).
    pub fn encode(&self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mixed = matches!(self.params, Params::RiffpeX { .. });
        let separate_call_tweak = self.call_tweak != self.tweak;
        let len = self.params.digits().min(MAX_MESSAGE_DIGITS);
        // Every message but at most one must be valid, and that one one mutation away.
        let valid = |m: &[u32]| {
            m.len() == len
                && m.iter()
                    .enumerate()
                    .all(|(i, &d)| d < self.params.radix(i).max(1))
        };
        let invalid: Vec<usize> = (0..self.messages.len())
            .filter(|&m| !valid(&self.messages[m]))
            .collect();
        if invalid.len() > 1 || self.messages.is_empty() || !(1..=8).contains(&self.scratch_lanes) {
            return None;
        }
        let mut plain = self.messages.clone();
        let mut mutation = Vec::new();
        let mut kind = 0u8;
        if let Some(&m) = invalid.first() {
            let message = &self.messages[m];
            let m8 = u8::try_from(m).ok()?;
            if message.len() == len {
                let position = (0..len).find(|&i| message[i] >= self.params.radix(i))?;
                let radix = self.params.radix(position);
                let k = match message[position] {
                    u32::MAX => 255,
                    d => u8::try_from(d - radix).ok().filter(|&k| k < 3)?,
                };
                if !(0..len).all(|i| i == position || message[i] < self.params.radix(i)) {
                    return None;
                }
                kind = MUTATE_DIGIT;
                plain[m][position] = 0;
                mutation.push(m8);
                mutation.extend(u16::try_from(position).ok()?.to_le_bytes());
                mutation.push(k);
            } else if message.len() + 1 == len && len > 0 {
                kind = MUTATE_LENGTH;
                plain[m].push(0);
                mutation.extend([m8, 0]);
            } else if message.len() == len + 1 && message[len] == 0 {
                kind = MUTATE_LENGTH;
                plain[m].pop();
                mutation.extend([m8, 1]);
            } else {
                return None;
            }
            if !valid(&plain[m]) {
                return None;
            }
        }
        let lanes = u8::try_from(self.scratch_lanes - 1).ok()?;
        out.push(u8::from(mixed) | u8::from(separate_call_tweak) << 1 | kind << 2 | lanes << 5);
        out.push(255);
        out.push(u8::try_from(self.key.len()).ok()?);
        out.extend(&self.key);
        out.push(255);
        out.extend(to_u64(self.bytes_per_value).to_le_bytes());
        match &self.params {
            Params::Riffpe { radix, digits } => {
                out.push(255);
                out.extend(radix.to_le_bytes());
                out.push(255);
                out.extend(to_u64(*digits).to_le_bytes());
            }
            Params::RiffpeX { radices } => {
                let runs = runs_of(radices);
                out.push(255);
                out.push(u8::try_from(runs.len()).ok()?);
                for (radix, count) in runs {
                    out.push(255);
                    out.extend(radix.to_le_bytes());
                    out.push(255);
                    out.extend(to_u64(count).to_le_bytes());
                }
            }
        }
        for tweak in [
            Some(&self.tweak),
            separate_call_tweak.then_some(&self.call_tweak),
        ]
        .into_iter()
        .flatten()
        {
            out.push(255);
            out.extend(u16::try_from(tweak.len()).ok()?.to_le_bytes());
            out.extend(tweak);
        }
        out.push(255);
        out.push(u8::try_from(self.messages.len()).ok()?);
        for message in &plain {
            for (i, &digit) in message.iter().enumerate() {
                match self.params.radix(i) {
                    0..=0x100 => out.push(u8::try_from(digit).ok()?),
                    0x101..=0x1_0000 => out.extend(u16::try_from(digit).ok()?.to_le_bytes()),
                    _ => out.extend(digit.to_le_bytes()),
                }
            }
        }
        out.extend(mutation);
        (Case::decode(&out) == *self).then_some(out)
    }

    /// Whether messages may be encrypted: every message, in one direction, within `budget`
    /// ([`FUZZ_BUDGET`] in the fuzzer). Otherwise only construction and the checks that come
    /// before any work are tried.
    pub fn within_budget(&self, budget: u64) -> bool {
        self.params.digits() <= MAX_MESSAGE_DIGITS
            && self
                .params
                .work_per_message(self.bytes_per_value)
                .saturating_mul(to_u64(self.messages.len()))
                <= budget
    }

    /// Whether the O(n²) constant-time selection may run on every message too.
    pub fn constant_time_within_budget(&self, budget: u64) -> bool {
        self.within_budget(budget)
            && self
                .params
                .constant_time_ops()
                .saturating_mul(to_u64(self.messages.len()))
                <= budget.saturating_mul(CONSTANT_TIME_OPS_PER_WORK)
    }

    /// A Rust test to paste into the regression test file named by `file`: it rebuilds this
    /// case and runs `check` (e.g. `check::roundtrip`) on it.
    pub fn reproducer(&self, check: &str, file: &str) -> String {
        let mut s = String::new();
        let name = check.replace("::", "_");
        let _ = writeln!(s, "// Paste into {file}:");
        let _ = writeln!(s, "#[test]");
        let _ = writeln!(
            s,
            "fn {name}_{:08x}() {{",
            fnv1a(format!("{self:?}").as_bytes())
        );
        let _ = writeln!(s, "    // {}", self.constructor());
        let _ = writeln!(s, "    let case = Case {{");
        let params = match &self.params {
            Params::Riffpe { radix, digits } => {
                format!("Params::Riffpe {{ radix: {radix}, digits: {digits} }}")
            }
            Params::RiffpeX { radices } => {
                let runs: Vec<String> = runs_of(radices)
                    .iter()
                    .map(|(radix, count)| format!("({radix}, {count})"))
                    .collect();
                format!(
                    "Params::RiffpeX {{ radices: runs(&[{}]) }}",
                    runs.join(", ")
                )
            }
        };
        let _ = writeln!(s, "        params: {params},");
        let _ = writeln!(s, "        key: hex(\"{}\"),", to_hex(&self.key));
        let _ = writeln!(s, "        tweak: hex(\"{}\"),", to_hex(&self.tweak));
        let _ = writeln!(s, "        bytes_per_value: {},", self.bytes_per_value);
        let _ = writeln!(
            s,
            "        call_tweak: hex(\"{}\"),",
            to_hex(&self.call_tweak)
        );
        let messages: Vec<String> = self
            .messages
            .iter()
            .map(|m| match m.as_slice() {
                [first, rest @ ..] if m.len() > 8 && rest.iter().all(|d| d == first) => {
                    format!("vec![{first}; {}]", m.len())
                }
                _ => format!("vec!{m:?}"),
            })
            .collect();
        let _ = writeln!(s, "        messages: vec![{}],", messages.join(", "));
        let _ = writeln!(s, "        scratch_lanes: {},", self.scratch_lanes);
        let _ = writeln!(s, "    }};");
        let _ = writeln!(s, "    assert_eq!({check}(&case), Ok(()));");
        let _ = writeln!(s, "}}");
        s
    }

    /// The constructor call this case makes, as a user would write it.
    pub fn constructor(&self) -> String {
        let (key, tweak, b) = (to_hex(&self.key), to_hex(&self.tweak), self.bytes_per_value);
        match &self.params {
            Params::Riffpe { radix, digits } => format!(
                "riffpe::Riffpe::with_bytes_per_value({radix}, {digits}, &hex(\"{key}\"), &hex(\"{tweak}\"), {b})"
            ),
            Params::RiffpeX { radices } => {
                let list = if radices.len() <= 16 {
                    format!("{radices:?}")
                } else {
                    format!("{} radices", radices.len())
                };
                format!(
                    "riffpe::RiffpeX::with_bytes_per_value({list}, &hex(\"{key}\"), &hex(\"{tweak}\"), {b})"
                )
            }
        }
    }
}

/// `radices` as runs of equal values: `[(radix, count), …]`.
fn runs_of(radices: &[u32]) -> Vec<(u32, usize)> {
    let mut runs: Vec<(u32, usize)> = Vec::new();
    for &radix in radices {
        match runs.last_mut() {
            Some((last, count)) if *last == radix => *count += 1,
            _ => runs.push((radix, 1)),
        }
    }
    runs
}

/// The fuzz inputs kept in `dir` (one of `fuzz/regressions/<target>/`), sorted; notes (`.md`)
/// and hidden files are not inputs. None if the folder does not exist.
pub fn kept_inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("regression folder entry").path())
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            path.is_file() && !name.starts_with('.') && !name.ends_with(".md")
        })
        .collect();
    files.sort();
    files
}

/// Expands runs `[(radix, count), …]` into a radix list (for reproducers).
pub fn runs(runs: &[(u32, usize)]) -> Vec<u32> {
    runs.iter()
        .flat_map(|&(radix, count)| std::iter::repeat_n(radix, count))
        .collect()
}

/// Decodes lowercase or uppercase hex (for reproducers); panics on anything else.
pub fn hex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "odd-length hex {text:?}");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit"))
        .collect()
}

/// Lowercase hex.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A short stable name for a case (FNV-1a).
pub fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}
