//! One fuzz case (parameters, key, tweaks, messages), made by `arbitrary` from the fuzzer's
//! bytes.
//!
//! Every byte string decodes to some case (reads past the end give zeros). Choices are biased
//! to small, cheap values and to SPEC's boundaries through edge-value tables (element widths at
//! 256 and 65 536, 256 digits at width 1, `bytes_per_value` 0, 8 and 48, bad key lengths); huge
//! radices, digit counts and `bytes_per_value` are decoded too, and [`Case::within_budget`]
//! says when only construction may be tried, so that no input makes a check slow.

use std::fmt::Write as _;

use arbitrary::{Arbitrary, Unstructured};
use riffpe::{AnyFpe, Domain, MessageError, Riffpe, RiffpeX, Selection, SetupError};

/// Digits of a message at most (a cipher with more digits is only constructed).
pub const MAX_MESSAGE_DIGITS: usize = 300;
/// Radices of a RiffpeX case at most: enough to cross 65 536 digits at width 2.
pub const MAX_RADICES: usize = 65_545;
/// Messages of a case at most (more than any backend's lanes, so lockstep runs several groups).
pub const MAX_MESSAGES: usize = 80;
/// Work (AES blocks plus values sorted) one direction over all messages may cost in the
/// fuzzer: a few milliseconds under coverage instrumentation, for a dozen directions a case.
pub const FUZZ_BUDGET: u64 = 1 << 13;
/// The budget of the hand-picked cases of the tests, which reach width 4 (radix 65 536 and
/// more) with one byte per value.
pub const TEST_BUDGET: u64 = 1 << 18;
/// Key comparisons the O(n²) constant-time selection may cost, per unit of budget.
pub const CONSTANT_TIME_OPS_PER_WORK: u64 = 1 << 4;

/// `Ok(())`, or the first property a check found false, in words.
pub type Outcome = Result<(), String>;

/// What `arbitrary` decodes with.
pub type Input<'a, 'b> = &'a mut Unstructured<'b>;

/// The next value of type `T` (zeros past the end of the input).
pub fn next<'b, T: Arbitrary<'b>>(u: Input<'_, 'b>) -> arbitrary::Result<T> {
    u.arbitrary()
}

/// `len` bytes, zero-filled past the end.
pub fn bytes(u: Input<'_, '_>, len: usize) -> arbitrary::Result<Vec<u8>> {
    let mut out = u.bytes(len.min(u.len()))?.to_vec();
    out.resize(len, 0);
    Ok(out)
}

/// Eight bytes as a `usize`, saturating on 32-bit targets.
fn any_usize(u: Input<'_, '_>) -> arbitrary::Result<usize> {
    Ok(usize::try_from(next::<u64>(u)?).unwrap_or(usize::MAX))
}

/// A radix: mostly below 128, often near a width boundary, sometimes any `u32`.
pub fn radix(u: Input<'_, '_>) -> arbitrary::Result<u32> {
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
    Ok(match next::<u8>(u)? {
        s @ 0..128 => u32::from(s),
        128..160 => 128 + u32::from(next::<u8>(u)?),
        s @ 160..192 => {
            let delta = i64::from(next::<u8>(u)? % 5) - 2;
            let edge = i64::from(EDGES[usize::from(s & 15)]) + delta;
            u32::try_from(edge.clamp(0, i64::from(u32::MAX))).unwrap_or(u32::MAX)
        }
        192..224 => u32::from(next::<u16>(u)?),
        224..=255 => next::<u32>(u)?,
    })
}

/// A digit count: mostly below 16, sometimes up to 300, sometimes a boundary or any `u64`.
pub fn digits(u: Input<'_, '_>) -> arbitrary::Result<usize> {
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
    Ok(match next::<u8>(u)? {
        s @ 0..128 => usize::from(s & 15),
        s @ 128..192 => usize::from(s & 63),
        192..240 => usize::from(next::<u16>(u)?) % (MAX_MESSAGE_DIGITS + 1),
        s @ 240..255 => usize::try_from(EDGES[usize::from(s & 15)]).unwrap_or(usize::MAX),
        255 => any_usize(u)?,
    })
}

/// `bytes_per_value`: mostly the default 16, often small or a boundary, rarely huge.
pub fn bytes_per_value(u: Input<'_, '_>) -> arbitrary::Result<usize> {
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
    Ok(match next::<u8>(u)? {
        0..128 => 16,
        s @ 128..192 => usize::from(s & 63),
        s @ 192..248 => EDGES[usize::from(s) % EDGES.len()],
        s @ 248..255 => usize::try_from(HUGE[usize::from(s - 248)]).unwrap_or(usize::MAX),
        255 => any_usize(u)?,
    })
}

/// A key length: mostly 16, 24 or 32, sometimes anything up to 255.
fn key_len(u: Input<'_, '_>) -> arbitrary::Result<usize> {
    Ok(match next::<u8>(u)? {
        0..96 => 16,
        96..160 => 24,
        160..224 => 32,
        s @ 224..255 => usize::from(s) % 65,
        255 => usize::from(next::<u8>(u)?),
    })
}

/// A tweak: often empty, mostly short, sometimes 100 bytes or up to 65 535.
fn tweak(u: Input<'_, '_>) -> arbitrary::Result<Vec<u8>> {
    let len = match next::<u8>(u)? {
        0..64 => 0,
        s @ 64..192 => usize::from(s & 31),
        192..224 => 100,
        224..255 => usize::from(next::<u8>(u)?),
        255 => usize::from(next::<u16>(u)?),
    };
    bytes(u, len)
}

/// How many of a radix in a RiffpeX run: mostly 1 to 8, sometimes up to 300 or a boundary.
fn run_length(u: Input<'_, '_>) -> arbitrary::Result<usize> {
    const EDGES: [usize; 8] = [255, 256, 257, 65_535, 65_536, 65_537, 64, 65];
    Ok(match next::<u8>(u)? {
        s @ 0..192 => 1 + usize::from(s & 7),
        192..240 => usize::from(next::<u16>(u)?) % (MAX_MESSAGE_DIGITS + 1),
        s @ 240..255 => EDGES[usize::from(s & 7)],
        255 => any_usize(u)?,
    })
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

impl Params {
    /// Riffpe (`mixed` false) or RiffpeX parameters from the fuzzer's bytes.
    pub fn arbitrary_with(u: Input<'_, '_>, mixed: bool) -> arbitrary::Result<Params> {
        if !mixed {
            return Ok(Params::Riffpe {
                radix: radix(u)?,
                digits: digits(u)?,
            });
        }
        let runs = match next::<u8>(u)? {
            0 => 0,
            255 => usize::from(next::<u8>(u)?),
            s => 1 + usize::from(s & 3),
        };
        let mut radices = Vec::new();
        for _ in 0..runs {
            let radix = radix(u)?;
            let count = run_length(u)?.min(MAX_RADICES.saturating_sub(radices.len()));
            radices.resize(radices.len() + count, radix);
        }
        Ok(Params::RiffpeX { radices })
    }

    /// The domain, as the core names it.
    pub fn domain(&self) -> Domain<'_> {
        match self {
            Params::Riffpe { radix, digits } => Domain::Uniform {
                radix: *radix,
                digits: *digits,
            },
            Params::RiffpeX { radices } => Domain::Mixed(radices),
        }
    }

    /// The error a call on the single `message` must return, if any: the length first, then
    /// the first digit not below its radix.
    pub fn message_error(&self, message: &[u32]) -> Option<MessageError> {
        let digits = self.digits();
        if message.len() != digits {
            return Some(MessageError::MessageLength {
                expected: digits,
                actual: message.len(),
            });
        }
        message.iter().enumerate().find_map(|(position, &digit)| {
            let radix = self.radix(position);
            (digit >= radix).then_some(MessageError::DigitOutOfRange {
                message: 0,
                position,
                radix,
            })
        })
    }

    /// The error a call on `digits` as messages back to back (`encrypt_with`) must return, if
    /// any: a length that is not a whole number of messages, else the first digit not below
    /// its radix. Zero messages are fine.
    pub fn many_error(&self, digits: &[u32]) -> Option<MessageError> {
        let l = self.digits();
        if l == 0 || !digits.len().is_multiple_of(l) {
            return Some(MessageError::MessageLength {
                expected: l,
                actual: digits.len(),
            });
        }
        digits.iter().enumerate().find_map(|(index, &digit)| {
            let radix = self.radix(index % l);
            (digit >= radix).then_some(MessageError::DigitOutOfRange {
                message: index / l,
                position: index % l,
                radix,
            })
        })
    }

    /// The cipher these parameters describe, through the public builders, as [`AnyFpe`].
    pub fn build(
        &self,
        key: &[u8],
        tweak: &[u8],
        bytes_per_value: usize,
        selection: Selection,
    ) -> Result<AnyFpe, SetupError> {
        Ok(match self {
            Params::Riffpe { radix, digits } => Riffpe::builder(*radix, *digits)
                .bytes_per_value(bytes_per_value)
                .selection(selection)
                .tweak(tweak)
                .build(key)?
                .into(),
            Params::RiffpeX { radices } => RiffpeX::builder(radices.clone())
                .bytes_per_value(bytes_per_value)
                .selection(selection)
                .tweak(tweak)
                .build(key)?
                .into(),
        })
    }
}

/// One decoded fuzz case: a cipher's parameters and the messages to run through it.
///
/// Build one by hand in a test, or with `arbitrary` from a fuzzer's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// The scheme and domain.
    pub params: Params,
    /// The AES key (any length: bad lengths must be refused).
    pub key: Vec<u8>,
    /// The fixed tweak given at construction.
    pub tweak: Vec<u8>,
    /// Keystream bytes per value.
    pub bytes_per_value: usize,
    /// The tweak of [`Tweak::Bytes`](riffpe::Tweak::Bytes) calls.
    pub call_tweak: Vec<u8>,
    /// The messages; at most one is invalid (a digit out of range or a length off by one).
    pub messages: Vec<Vec<u32>>,
    /// One tweak per message, for [`Tweak::PerMessage`](riffpe::Tweak::PerMessage) calls.
    pub message_tweaks: Vec<Vec<u8>>,
    /// Lanes of the smaller lockstep scratch (1 to 8).
    pub scratch_lanes: usize,
}

/// How the flags change one message, to reach the error paths.
const MUTATE_DIGIT: u8 = 6;
const MUTATE_LENGTH: u8 = 7;

impl<'a> Arbitrary<'a> for Case {
    /// Flags, key, bytes_per_value, domain, tweak, call tweak, message count, message digits,
    /// the mutation's details, then each message's tweak. Messages beyond [`FUZZ_BUDGET`] are
    /// dropped (one is always kept).
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Case> {
        let flags = next::<u8>(u)?;
        let key_len = key_len(u)?;
        let key = bytes(u, key_len)?;
        let bytes_per_value = bytes_per_value(u)?;
        let params = Params::arbitrary_with(u, flags & 1 != 0)?;
        let tweak = tweak(u)?;
        let call_tweak = if flags & 2 == 0 {
            tweak.clone()
        } else {
            self::tweak(u)?
        };
        let count = match next::<u8>(u)? {
            s @ 0..224 => 1 + usize::from(s % 3),
            s @ 224..255 => 1 + usize::from(s) % MAX_MESSAGES,
            255 => usize::from(next::<u8>(u)?).clamp(1, MAX_MESSAGES),
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
            let mut message = Vec::with_capacity(len);
            for i in 0..len {
                let radix = params.radix(i);
                let raw = match radix {
                    0..=0x100 => u32::from(next::<u8>(u)?),
                    0x101..=0x1_0000 => u32::from(next::<u16>(u)?),
                    _ => next::<u32>(u)?,
                };
                message.push(raw % radix.max(1));
            }
            messages.push(message);
        }
        match (flags >> 2) & 7 {
            MUTATE_DIGIT => {
                let m = usize::from(next::<u8>(u)?) % count;
                if len > 0 {
                    let position = usize::from(next::<u16>(u)?) % len;
                    let radix = params.radix(position);
                    messages[m][position] = match next::<u8>(u)? {
                        255 => u32::MAX,
                        k => radix.saturating_add(u32::from(k % 3)),
                    };
                }
            }
            MUTATE_LENGTH => {
                let m = usize::from(next::<u8>(u)?) % count;
                if next::<u8>(u)? & 1 == 0 && !messages[m].is_empty() {
                    messages[m].pop();
                } else {
                    messages[m].push(0);
                }
            }
            _ => {}
        }
        let mut message_tweaks = Vec::with_capacity(count);
        for _ in 0..count {
            message_tweaks.push(match next::<u8>(u)? {
                0..128 => tweak.clone(),
                128..192 => call_tweak.clone(),
                _ => self::tweak(u)?,
            });
        }
        Ok(Case {
            params,
            key,
            tweak,
            bytes_per_value,
            call_tweak,
            messages,
            message_tweaks,
            scratch_lanes: 1 + usize::from(flags >> 5),
        })
    }
}

impl Case {
    /// The cipher the case describes, with its key, fixed tweak and `bytes_per_value`.
    pub fn build(&self, selection: Selection) -> Result<AnyFpe, SetupError> {
        self.params
            .build(&self.key, &self.tweak, self.bytes_per_value, selection)
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

    /// A `#[test]` that rebuilds this case and runs `check` (e.g. `check::roundtrip`) on it.
    pub fn reproducer(&self, check: &str) -> String {
        let mut s = String::new();
        let name = check.replace("::", "_");
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
        let hexes = |list: &[Vec<u8>]| -> String {
            let items: Vec<String> = list
                .iter()
                .map(|t| format!("hex(\"{}\")", to_hex(t)))
                .collect();
            items.join(", ")
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
        let _ = writeln!(
            s,
            "        message_tweaks: vec![{}],",
            hexes(&self.message_tweaks)
        );
        let _ = writeln!(s, "        scratch_lanes: {},", self.scratch_lanes);
        let _ = writeln!(s, "    }};");
        let _ = writeln!(s, "    assert_eq!({check}(&case), Ok(()));");
        let _ = writeln!(s, "}}");
        s
    }

    /// The constructor call this case makes, as a user would write it.
    pub fn constructor(&self) -> String {
        let (key, tweak, b) = (to_hex(&self.key), to_hex(&self.tweak), self.bytes_per_value);
        let builder = match &self.params {
            Params::Riffpe { radix, digits } => format!("Riffpe::builder({radix}, {digits})"),
            Params::RiffpeX { radices } if radices.len() <= 16 => {
                format!("RiffpeX::builder(vec!{radices:?})")
            }
            Params::RiffpeX { radices } => {
                format!("RiffpeX::builder(/* {} radices */)", radices.len())
            }
        };
        format!("{builder}.bytes_per_value({b}).tweak(&hex(\"{tweak}\")).build(&hex(\"{key}\"))")
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
