//! A format: which characters of a string are encrypted in which alphabet, which pass through
//! and which are kept, and the per-value mapping to RiffpeX digits.

use alloc::string::String;
use alloc::vec::Vec;

use crate::alphabet::Alphabet;
use crate::luhn::{self, Luhn};
use crate::template::{self, Item};
use crate::tweak;
use crate::{Error, MAX_CHARS, MIN_DOMAIN};

/// The keystream bytes per value: the reference's tables for 128- or 256-bit security.
///
/// | largest radix | `Bits128` | `Bits256` |
/// | ---: | ---: | ---: |
/// | up to 100 | 18 | 34 |
/// | up to 1 000 | 19 | 34 |
/// | up to 10 000 | 20 | 35 |
/// | above (up to 65 536) | 21 | 37 |
///
/// The last row is this crate's choice, one byte above the table's last entry, as the tables
/// grow by about one byte per factor of ten in the radix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Security {
    /// The reference's 128-bit security settings (the default).
    #[default]
    Bits128,
    /// The reference's 256-bit security settings.
    Bits256,
}

impl Security {
    /// Bytes per value for a format whose largest radix is `max_radix`.
    pub fn bytes_per_value(self, max_radix: u32) -> usize {
        let row = match max_radix {
            0..=100 => 0,
            101..=1_000 => 1,
            1_001..=10_000 => 2,
            _ => 3,
        };
        match self {
            Security::Bits128 => [18, 19, 20, 21][row],
            Security::Bits256 => [34, 34, 35, 37][row],
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Shape {
    Template(Vec<Item>),
    /// One alphabet (index 0); these characters pass through, sorted.
    Free(Vec<char>),
    /// Digits (alphabet 0), lower case (1) and upper case (2) letters keep their class.
    Auto,
}

/// How strings of one kind map to RiffpeX digits: built from a template, a free-form
/// alphabet, the class-preserving `auto`, or a name ([`Format::named`]); then adjusted with
/// the by-value setters.
///
/// ```
/// use riffpe_format::{Format, Luhn};
///
/// let id = Format::template("A9{6}")?;                  // a letter and six digits
/// let card = Format::named("digits")?.luhn(Luhn::Preserve).keep_suffix(4);
/// assert_eq!(id.domain_for(7)?, 26 * 1_000_000);
/// assert_eq!(card.domain_for(16)?, 100_000_000_000);       // 16 − 4 kept − 1 Luhn digit
/// # Ok::<(), riffpe_format::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    shape: Shape,
    alphabets: Vec<Alphabet>,
    keep_prefix: usize,
    keep_suffix: usize,
    luhn: Luhn,
    fold_case: bool,
    /// A template's value may lack all its literals (not part of the encoding: such a value
    /// maps as the value with them does).
    literals_optional: bool,
    allow_small_domain: bool,
    security: Security,
}

/// One alphabet character of a value.
#[derive(Clone, Copy, Debug, Default)]
struct Symbol {
    /// Its position in the value, in characters.
    position: usize,
    alphabet: u16,
    digit: u32,
}

#[cfg(feature = "zeroize")]
impl zeroize::DefaultIsZeroes for Symbol {}

/// Which way a value goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Encrypt,
    Decrypt,
}

/// One value taken apart: what RiffpeX gets and how to put the result back together, borrowed
/// from the [`Plans`] that hold it.
#[derive(Debug)]
pub(crate) struct Plan<'a> {
    chars: &'a [char],
    symbols: &'a [Symbol],
    /// Symbols `encrypted.start..encrypted.end` go through RiffpeX.
    encrypted: core::ops::Range<usize>,
    /// The symbol set by Luhn, and the residue the output must have.
    luhn: Option<(usize, u8)>,
    /// The value lacked its template's literals: `chars` has them, the output does not.
    bare: bool,
    /// With case folding: `Some(true)` for an upper-case value, `Some(false)` lower case.
    case: Option<bool>,
    /// The value's length in bytes.
    bytes: usize,
    pub(crate) radices: &'a [u32],
    pub(crate) digits: &'a [u32],
    pub(crate) tweak: &'a [u8],
}

/// Values taken apart ([`Format::plan`]), back to back in buffers shared by all of them, so
/// that taking apart many values allocates a few times in all rather than a few times each.
#[derive(Debug, Default)]
pub(crate) struct Plans {
    chars: Vec<char>,
    symbols: Vec<Symbol>,
    radices: Vec<u32>,
    digits: Vec<u32>,
    tweaks: Vec<u8>,
    spans: Vec<Span>,
    /// The last few distinct tweaks, most recently used first: `(id, where it lies)`, the
    /// first `recent_len` of them.
    recent: [(usize, core::ops::Range<usize>); Plans::RECENT],
    recent_len: usize,
    /// Distinct tweaks kept so far: the next one's id.
    distinct_tweaks: usize,
}

/// Where one value's parts lie in the buffers of [`Plans`].
#[derive(Debug)]
struct Span {
    chars: core::ops::Range<usize>,
    symbols: core::ops::Range<usize>,
    radices: core::ops::Range<usize>,
    digits: core::ops::Range<usize>,
    tweak: core::ops::Range<usize>,
    /// Values of one id have one tweak ([`Plans::share_tweak`]).
    tweak_id: usize,
    encrypted: core::ops::Range<usize>,
    luhn: Option<(usize, u8)>,
    bare: bool,
    case: Option<bool>,
    bytes: usize,
}

impl Plans {
    /// The most characters [`Plans::reserve`] makes room for, and the most that the buffers
    /// keep room for between calls ([`Plans::clear`]).
    pub(crate) const ROOM: usize = 1 << 20;
    /// The most values whose places the buffers keep room for between calls.
    pub(crate) const ROOM_VALUES: usize = 1 << 14;

    /// Room for `values` values of about `chars` characters each.
    pub(crate) fn with_capacity(values: usize, chars: usize) -> Self {
        let mut plans = Plans::default();
        plans.reserve(values, chars);
        plans
    }

    /// Room for `values` more values of about `chars` characters each (at most [`MAX_CHARS`]
    /// each and [`Plans::ROOM`] in all; the buffers grow past it): an overlong value must not
    /// make the call reserve more than values of the longest allowed length need.
    pub(crate) fn reserve(&mut self, values: usize, chars: usize) {
        let chars = values.saturating_mul(chars.min(MAX_CHARS)).min(Self::ROOM);
        self.chars.reserve(chars);
        self.symbols.reserve(chars);
        self.radices.reserve(chars);
        self.digits.reserve(chars);
        self.spans.reserve(values);
    }

    /// Forgets every value, their characters and digits wiped first (with the `zeroize`
    /// feature) since the buffers outlive the call; room beyond [`Plans::ROOM`] characters
    /// and [`Plans::ROOM_VALUES`] values is given back, so that a call of very long values
    /// does not leave its peak held until the buffers are dropped.
    pub(crate) fn clear(&mut self) {
        wipe(&mut self.chars);
        wipe(&mut self.symbols);
        wipe(&mut self.digits);
        // A tweak holds the kept characters.
        wipe(&mut self.tweaks);
        self.radices.clear();
        self.spans.clear();
        self.recent_len = 0;
        self.distinct_tweaks = 0;
        trim(&mut self.chars, Self::ROOM);
        trim(&mut self.symbols, Self::ROOM);
        trim(&mut self.digits, Self::ROOM);
        trim(&mut self.tweaks, Self::ROOM);
        trim(&mut self.radices, Self::ROOM);
        trim(&mut self.spans, Self::ROOM_VALUES);
    }

    /// The room the buffers hold: the most elements of a per-character buffer, and values.
    #[cfg(test)]
    pub(crate) fn room(&self) -> (usize, usize) {
        let chars = [
            self.chars.capacity(),
            self.symbols.capacity(),
            self.digits.capacity(),
            self.tweaks.capacity(),
            self.radices.capacity(),
        ];
        (chars.into_iter().max().unwrap_or(0), self.spans.capacity())
    }

    /// How many distinct tweaks [`Plans::share_tweak`] remembers: a column's few shapes.
    const RECENT: usize = 4;

    /// The id of the tweak just built from `start`, and where it lies: those of a recent
    /// distinct tweak with the same bytes (the new copy wiped), else a new id and where it was
    /// built. Values of one id share one tweak, and may share its set-up.
    fn share_tweak(&mut self, start: usize) -> (usize, core::ops::Range<usize>) {
        let tweaks = &self.tweaks;
        let built = &tweaks[start..];
        let recent = &mut self.recent[..self.recent_len];
        let hit = recent.iter().position(|(_, r)| tweaks[r.clone()] == *built);
        match hit {
            Some(k) => {
                recent[..=k].rotate_right(1);
                wipe_from(&mut self.tweaks, start);
            }
            None => {
                // The least recent is forgotten when all places are taken.
                self.recent_len = (self.recent_len + 1).min(Self::RECENT);
                self.recent[..self.recent_len].rotate_right(1);
                self.recent[0] = (self.distinct_tweaks, start..self.tweaks.len());
                self.distinct_tweaks += 1;
            }
        }
        self.recent[0].clone()
    }

    /// How many distinct tweak ids the values have: ids are below it.
    pub(crate) fn distinct_tweaks(&self) -> usize {
        self.distinct_tweaks
    }

    /// The id of value `i`'s tweak: values of one id have one tweak.
    pub(crate) fn tweak_id(&self, i: usize) -> usize {
        self.spans[i].tweak_id
    }

    /// Values taken apart so far.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// Value `i`.
    pub(crate) fn get(&self, i: usize) -> Plan<'_> {
        let span = &self.spans[i];
        Plan {
            chars: &self.chars[span.chars.clone()],
            symbols: &self.symbols[span.symbols.clone()],
            encrypted: span.encrypted.clone(),
            luhn: span.luhn,
            bare: span.bare,
            case: span.case,
            bytes: span.bytes,
            radices: &self.radices[span.radices.clone()],
            digits: &self.digits[span.digits.clone()],
            tweak: &self.tweaks[span.tweak.clone()],
        }
    }

    /// Every value's digits, back to back: value `i`'s at [`Plans::digits_of`]`(i)`.
    pub(crate) fn all_digits(&self) -> &[u32] {
        &self.digits
    }

    /// Where value `i`'s digits lie in [`Plans::all_digits`].
    pub(crate) fn digits_of(&self, i: usize) -> core::ops::Range<usize> {
        self.spans[i].digits.clone()
    }
}

/// What a value maps to: the RiffpeX radices, the digits of its encrypted positions (leftmost
/// first) and the tweak, as [`Format::map`] computes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// One radix per encrypted position.
    pub radices: Vec<u32>,
    /// The digit of each encrypted position.
    pub digits: Vec<u32>,
    /// The RiffpeX tweak of this value (layout in the crate docs).
    pub tweak: Vec<u8>,
}

impl Format {
    fn with_shape(shape: Shape, alphabets: Vec<Alphabet>) -> Self {
        Format {
            shape,
            alphabets,
            keep_prefix: 0,
            keep_suffix: 0,
            luhn: Luhn::Off,
            fold_case: false,
            literals_optional: false,
            allow_small_domain: false,
            security: Security::Bits128,
        }
    }

    /// A format from a template (syntax in the crate docs): `999-99-9999`, `A9{7}`,
    /// `[a-f0-9]{8}`, `{printable}{12}`.
    pub fn template(template: &str) -> Result<Self, Error> {
        Self::template_with(template, &[])
    }

    /// A template whose `{name}` may also name one of `alphabets` (looked up before the
    /// built-in names).
    pub fn template_with(template: &str, alphabets: &[(&str, &Alphabet)]) -> Result<Self, Error> {
        let mut list = Vec::new();
        let items = template::parse(template, alphabets, &mut list)?;
        Ok(Self::with_shape(Shape::Template(items), list))
    }

    /// Free form: every character of `alphabet` is encrypted, characters of `passthrough`
    /// stay where they are, any other character is an error.
    pub fn free_form(alphabet: Alphabet, passthrough: &str) -> Result<Self, Error> {
        let mut pass: Vec<char> = Vec::new();
        for (position, c) in passthrough.chars().enumerate() {
            if alphabet.index_of(c).is_some() {
                return Err(Error::PassthroughInAlphabet { position });
            }
            pass.push(c);
        }
        pass.sort_unstable();
        pass.dedup();
        Ok(Self::with_shape(Shape::Free(pass), alloc::vec![alphabet]))
    }

    /// Class-preserving: a digit stays a digit (radix 10), a lower-case ASCII letter lower
    /// case (26), an upper-case one upper case (26); any other character passes through.
    pub fn auto() -> Self {
        Self::with_shape(
            Shape::Auto,
            alloc::vec![Alphabet::digits(), Alphabet::lower(), Alphabet::upper()],
        )
    }

    /// Keeps the first `n` alphabet characters (separators are not counted) unencrypted.
    pub fn keep_prefix(mut self, n: usize) -> Self {
        self.keep_prefix = n;
        self
    }

    /// Keeps the last `n` alphabet characters unencrypted.
    pub fn keep_suffix(mut self, n: usize) -> Self {
        self.keep_suffix = n;
        self
    }

    /// How the Luhn check digit is treated (digit formats only).
    pub fn luhn(mut self, luhn: Luhn) -> Self {
        self.luhn = luhn;
        self
    }

    /// Accepts letters of either case and keeps the value's case (for formats whose letters
    /// are all of one case, like `hex`; not `auto` or `alnum`); a value must not mix cases.
    pub fn fold_case(mut self, fold: bool) -> Self {
        self.fold_case = fold;
        self
    }

    /// With a template: also accepts a value without any of its literals (`123456789` for
    /// `999-99-9999`), which encrypts as the value with them does and comes back without them.
    /// Refused on other shapes ([`Error::LiteralsOptionalNeedsTemplate`]).
    ///
    /// ```
    /// use riffpe_format::{Format, FormatCipher};
    ///
    /// let ssn = Format::template("999-99-9999")?.literals_optional(true);
    /// let cipher = FormatCipher::new(&[0x2b; 16], ssn)?;
    /// let dashed = cipher.encrypt("123-45-6789")?;
    /// assert_eq!(cipher.encrypt("123456789")?, dashed.replace('-', ""));
    /// assert_eq!(cipher.decrypt(&dashed.replace('-', ""))?, "123456789");
    /// # Ok::<(), riffpe_format::Error>(())
    /// ```
    pub fn literals_optional(mut self, optional: bool) -> Self {
        self.literals_optional = optional;
        self
    }

    /// Lifts the minimum of [`MIN_DOMAIN`] values. Small domains can be tabulated by anyone
    /// who sees enough pairs; opt in only when that is acceptable.
    pub fn allow_small_domain(mut self, allow: bool) -> Self {
        self.allow_small_domain = allow;
        self
    }

    /// The security level, which sets the bytes per value.
    pub fn security(mut self, security: Security) -> Self {
        self.security = security;
        self
    }

    /// The largest radix of the format's alphabets.
    pub fn max_radix(&self) -> u32 {
        self.alphabets
            .iter()
            .map(Alphabet::radix)
            .max()
            .unwrap_or(2)
    }

    /// Keystream bytes per value: [`Security::bytes_per_value`] of [`Format::max_radix`].
    pub fn bytes_per_value(&self) -> usize {
        self.security.bytes_per_value(self.max_radix())
    }

    /// Checks the format as a whole: Luhn only on digits, case folding only on single-case
    /// alphabets, optional literals only on a template, and, for a template (whose shape is
    /// fixed), that something is encrypted and that the domain is large enough.
    /// [`FormatCipher::new`](crate::FormatCipher::new) calls it.
    pub fn check(&self) -> Result<(), Error> {
        if self.luhn != Luhn::Off
            && (matches!(self.shape, Shape::Auto)
                || !self.alphabets.iter().all(Alphabet::is_digits))
        {
            return Err(Error::LuhnNeedsDigits);
        }
        if self.fold_case {
            // One case for every letter of every alphabet: the value's case is read against it.
            let letters = self.alphabets.iter().flat_map(|a| a.chars().iter());
            let (lower, upper) = letters.fold((false, false), |(l, u), c| {
                (l || c.is_ascii_lowercase(), u || c.is_ascii_uppercase())
            });
            if lower && upper {
                return Err(Error::CaseFoldAmbiguous);
            }
            if let Shape::Free(pass) = &self.shape
                && pass.iter().any(|&c| self.lookup(0, c).is_some())
            {
                return Err(Error::CaseFoldAmbiguous);
            }
        }
        if self.literals_optional && !matches!(self.shape, Shape::Template(_)) {
            return Err(Error::LiteralsOptionalNeedsTemplate);
        }
        if let Shape::Template(items) = &self.shape {
            let radices: Vec<u32> = items
                .iter()
                .filter_map(|item| match *item {
                    Item::Class(a) => Some(self.alphabets[usize::from(a)].radix()),
                    Item::Literal(_) => None,
                })
                .collect();
            let encrypted = self.encrypted_range(radices.len())?;
            self.check_domain(&radices[encrypted])?;
        }
        Ok(())
    }

    /// The radices of every value, when the shape is fixed (a template).
    pub(crate) fn fixed_radices(&self) -> Option<Vec<u32>> {
        let Shape::Template(items) = &self.shape else {
            return None;
        };
        let classes: Vec<u32> = items
            .iter()
            .filter_map(|item| match *item {
                Item::Class(a) => Some(self.alphabets[usize::from(a)].radix()),
                Item::Literal(_) => None,
            })
            .collect();
        let encrypted = self.encrypted_range(classes.len()).ok()?;
        Some(classes[encrypted].to_vec())
    }

    /// The number of values the encrypted positions of a value with `chars` alphabet
    /// characters (separators not counted) can take, saturating at `u128::MAX`. For `auto`
    /// it is the smallest, that of an all-digit value. Errors if the length does not fit the
    /// format or nothing is left to encrypt; a small domain is returned, not refused.
    pub fn domain_for(&self, chars: usize) -> Result<u128, Error> {
        let radices: Vec<u32> = match &self.shape {
            Shape::Template(items) => {
                let classes: Vec<u32> = items
                    .iter()
                    .filter_map(|item| match *item {
                        Item::Class(a) => Some(self.alphabets[usize::from(a)].radix()),
                        Item::Literal(_) => None,
                    })
                    .collect();
                if classes.len() != chars {
                    return Err(Error::LengthMismatch {
                        expected: classes.len(),
                        actual: chars,
                        without_literals: None,
                    });
                }
                classes
            }
            Shape::Free(_) | Shape::Auto => {
                if chars > MAX_CHARS {
                    return Err(Error::TooLong {
                        chars,
                        max: MAX_CHARS,
                    });
                }
                alloc::vec![self.alphabets[0].radix(); chars]
            }
        };
        let encrypted = self.encrypted_range(radices.len())?;
        Ok(domain_size(&radices[encrypted]))
    }

    /// The canonical encoding of this format's definition, the first field of every tweak
    /// (layout in the crate docs).
    pub fn encoding(&self) -> Vec<u8> {
        let mut out = Vec::new();
        tweak::field(&mut out, tweak::FORMAT_ALPHABETS, |body| {
            body.extend_from_slice(&(self.alphabets.len() as u16).to_le_bytes());
            for a in &self.alphabets {
                a.encode(body);
            }
        });
        tweak::field(&mut out, tweak::FORMAT_SHAPE, |body| match &self.shape {
            Shape::Template(items) => {
                body.push(0x01);
                let mut i = 0;
                while i < items.len() {
                    match items[i] {
                        Item::Class(a) => {
                            let run = items[i..].iter().take_while(|&&x| x == items[i]).count();
                            body.push(b'C');
                            body.extend_from_slice(&a.to_le_bytes());
                            body.extend_from_slice(&(run as u32).to_le_bytes());
                            i += run;
                        }
                        Item::Literal(c) => {
                            body.push(b'L');
                            body.extend_from_slice(&u32::from(c).to_le_bytes());
                            i += 1;
                        }
                    }
                }
            }
            Shape::Free(pass) => {
                body.push(0x02);
                body.extend_from_slice(&(pass.len() as u32).to_le_bytes());
                for &c in pass {
                    body.extend_from_slice(&u32::from(c).to_le_bytes());
                }
            }
            Shape::Auto => body.push(0x03),
        });
        tweak::field(&mut out, tweak::FORMAT_KEEP, |body| {
            body.extend_from_slice(&(self.keep_prefix as u32).to_le_bytes());
            body.extend_from_slice(&(self.keep_suffix as u32).to_le_bytes());
        });
        let luhn = match self.luhn {
            Luhn::Off => 0,
            Luhn::Preserve => 1,
            Luhn::Invalid => 2,
        };
        tweak::field(&mut out, tweak::FORMAT_LUHN, |body| body.push(luhn));
        tweak::field(&mut out, tweak::FORMAT_CASE, |body| {
            body.push(u8::from(self.fold_case));
        });
        out
    }

    /// Maps `value` (a plaintext or a token) as [`FormatCipher`](crate::FormatCipher) does
    /// under the caller's `context`: RiffpeX radices, digits and tweak. Errors as encryption
    /// does, except that the Luhn residue is not checked.
    pub fn map(&self, value: &str, context: &[u8]) -> Result<Mapping, Error> {
        self.check()?;
        let plans = self.plan_one(value, &self.encoding(), context, None)?;
        let plan = plans.get(0);
        Ok(Mapping {
            radices: plan.radices.to_vec(),
            digits: plan.digits.to_vec(),
            tweak: plan.tweak.to_vec(),
        })
    }

    /// The symbols `keep_prefix .. n − keep_suffix`, less the Luhn digit.
    fn encrypted_range(&self, n: usize) -> Result<core::ops::Range<usize>, Error> {
        let luhn = usize::from(self.luhn != Luhn::Off);
        let reserved = self
            .keep_prefix
            .saturating_add(self.keep_suffix)
            .saturating_add(luhn);
        if reserved >= n {
            return Err(Error::NothingToEncrypt { chars: n, reserved });
        }
        Ok(self.keep_prefix..n - self.keep_suffix - luhn)
    }

    fn check_domain(&self, radices: &[u32]) -> Result<(), Error> {
        if !self.allow_small_domain {
            // Only a product below the minimum is needed (a card's reaches it in six digits),
            // and one below it times a radix fits 64 bits.
            let mut values = 1u64;
            for &r in radices {
                values *= u64::from(r);
                if u128::from(values) >= MIN_DOMAIN {
                    break;
                }
            }
            if u128::from(values) < MIN_DOMAIN {
                return Err(Error::DomainTooSmall {
                    values: values.into(),
                    min: MIN_DOMAIN,
                });
            }
        }
        // The core encodes a digit index in one byte below radix 256, two below 65 536.
        let max_radix = radices.iter().copied().max().unwrap_or(0);
        let max = match max_radix {
            0..=0xff => 0x100,
            0x100..=0xffff => 0x1_0000,
            _ => usize::MAX,
        };
        if radices.len() > max {
            return Err(Error::TooManyPositions {
                positions: radices.len(),
                max,
            });
        }
        Ok(())
    }

    /// The digit of `c` in alphabet `a`, and with case folding whether `c` is an upper-case
    /// (`Some(true)`) or lower-case letter.
    #[inline(always)]
    fn lookup(&self, a: u16, c: char) -> Option<(u32, Option<bool>)> {
        let alphabet = &self.alphabets[usize::from(a)];
        let case = c
            .is_ascii_alphabetic()
            .then(|| c.is_ascii_uppercase())
            .filter(|_| self.fold_case);
        if let Some(d) = alphabet.index_of(c) {
            return Some((d, case));
        }
        if !self.fold_case {
            return None;
        }
        let other = if c.is_ascii_uppercase() {
            c.to_ascii_lowercase()
        } else {
            c.to_ascii_uppercase()
        };
        if other == c {
            return None;
        }
        alphabet.index_of(other).map(|d| (d, case))
    }

    /// `value` alone taken apart ([`Format::plan`]): [`Plans`] of one value.
    pub(crate) fn plan_one(
        &self,
        value: &str,
        encoding: &[u8],
        context: &[u8],
        direction: Option<Direction>,
    ) -> Result<Plans, Error> {
        let mut plans = Plans::with_capacity(1, value.len());
        self.plan(&mut plans, value, encoding, context, direction)?;
        Ok(plans)
    }

    /// Takes `value` apart into `plans`, as its last value. A refused value adds none (it may
    /// leave unused parts in the buffers, which no later value reads). `direction` only matters
    /// for Luhn, whose residue rules differ; without one, the residue is not checked (to read a
    /// value or a token's tweak).
    pub(crate) fn plan(
        &self,
        plans: &mut Plans,
        value: &str,
        encoding: &[u8],
        context: &[u8],
        direction: Option<Direction>,
    ) -> Result<(), Error> {
        // Most values are ASCII: one byte a character, checked a word at a time.
        let ascii = value.is_ascii();
        let count = match ascii {
            true => value.len(),
            false => value.chars().take(MAX_CHARS + 1).count(),
        };
        if count > MAX_CHARS {
            return Err(Error::TooLong {
                chars: value.chars().count(),
                max: MAX_CHARS,
            });
        }
        let start = plans.chars.len();
        let mut bare = false;
        match &self.shape {
            Shape::Template(items) if items.len() != count => {
                let classes = items.iter().filter(|i| matches!(i, Item::Class(_)));
                let without_literals =
                    Some(classes.count()).filter(|&n| self.literals_optional && n != items.len());
                if without_literals != Some(count) {
                    return Err(Error::LengthMismatch {
                        expected: items.len(),
                        actual: count,
                        without_literals,
                    });
                }
                // The value as if its literals were there: its tweak and digits are theirs.
                bare = true;
                let mut given = value.chars();
                plans.chars.extend(items.iter().map(|item| match item {
                    Item::Literal(l) => *l,
                    Item::Class(_) => given.next().unwrap_or_default(),
                }));
            }
            _ if ascii => plans.chars.extend(value.bytes().map(char::from)),
            _ => plans.chars.extend(value.chars()),
        }
        let chars = &plans.chars[start..];
        // Errors name positions in the value as given.
        let given = |position: usize| match &self.shape {
            Shape::Template(items) if bare => items[..position]
                .iter()
                .filter(|i| matches!(i, Item::Class(_)))
                .count(),
            _ => position,
        };
        let symbols_start = plans.symbols.len();
        let mut case: Option<bool> = None;
        for (position, &c) in chars.iter().enumerate() {
            // The alphabet of an encrypted character, and its digit there if it has one.
            let class = |a: u16| Some((a, self.lookup(a, c)));
            let found = match &self.shape {
                Shape::Template(items) => match items[position] {
                    Item::Class(a) => class(a),
                    Item::Literal(l) if l == c => None,
                    Item::Literal(_) => {
                        return Err(Error::InvalidChar {
                            position: given(position),
                        });
                    }
                },
                Shape::Free(pass) => match self.lookup(0, c) {
                    Some(digit) => Some((0, Some(digit))),
                    None if pass.binary_search(&c).is_ok() => None,
                    None => return Err(Error::InvalidChar { position }),
                },
                Shape::Auto => match c {
                    '0'..='9' => class(0),
                    'a'..='z' => class(1),
                    'A'..='Z' => class(2),
                    _ => None,
                },
            };
            let Some((alphabet, digit)) = found else {
                continue;
            };
            let (digit, letter_case) = digit.ok_or_else(|| Error::InvalidChar {
                position: given(position),
            })?;
            if let Some(upper) = letter_case {
                match case {
                    None => case = Some(upper),
                    Some(seen) if seen != upper => {
                        return Err(Error::MixedCase {
                            position: given(position),
                        });
                    }
                    Some(_) => {}
                }
            }
            plans.symbols.push(Symbol {
                position,
                alphabet,
                digit,
            });
        }
        let symbols = &plans.symbols[symbols_start..];
        let encrypted = self.encrypted_range(symbols.len())?;
        let radices_start = plans.radices.len();
        let radix = |s: &Symbol| self.alphabets[usize::from(s.alphabet)].radix();
        plans
            .radices
            .extend(symbols[encrypted.clone()].iter().map(radix));
        self.check_domain(&plans.radices[radices_start..])?;
        let digits_start = plans.digits.len();
        plans
            .digits
            .extend(symbols[encrypted.clone()].iter().map(|s| s.digit));
        let luhn = match (self.luhn, direction) {
            (Luhn::Off, _) => None,
            (mode, direction) => {
                let r = luhn::residue(symbols.iter().map(|s| s.digit));
                let target = match (mode, direction) {
                    (Luhn::Invalid, Some(Direction::Encrypt)) if r != 0 => {
                        return Err(Error::LuhnCheckFailed);
                    }
                    (Luhn::Invalid, Some(Direction::Encrypt)) => luhn::INVALID_RESIDUE,
                    (Luhn::Invalid, Some(Direction::Decrypt)) if r != luhn::INVALID_RESIDUE => {
                        return Err(Error::NotALuhnToken);
                    }
                    (Luhn::Invalid, Some(Direction::Decrypt)) => 0,
                    _ => r,
                };
                Some((encrypted.end, target))
            }
        };
        let tweak_start = plans.tweaks.len();
        self.tweak(
            &mut plans.tweaks,
            chars,
            symbols,
            encrypted.clone(),
            encoding,
            context,
        );
        let (tweak_id, tweak) = plans.share_tweak(tweak_start);
        plans.spans.push(Span {
            chars: start..plans.chars.len(),
            symbols: symbols_start..plans.symbols.len(),
            radices: radices_start..plans.radices.len(),
            digits: digits_start..plans.digits.len(),
            tweak,
            tweak_id,
            encrypted,
            luhn,
            bare,
            case,
            bytes: value.len(),
        });
        Ok(())
    }

    /// The per-value tweak: the format, the value's shape and the kept characters.
    fn tweak(
        &self,
        out: &mut Vec<u8>,
        chars: &[char],
        symbols: &[Symbol],
        encrypted: core::ops::Range<usize>,
        encoding: &[u8],
        context: &[u8],
    ) {
        let shape = |shape: &mut Vec<u8>| {
            let mut next = symbols.iter().peekable();
            let mut position = 0;
            while position < chars.len() {
                match next.peek() {
                    Some(s) if s.position == position => {
                        let alphabet = s.alphabet;
                        let mut run = 0u32;
                        while let Some(s) = next.peek() {
                            if s.position != position || s.alphabet != alphabet {
                                break;
                            }
                            next.next();
                            position += 1;
                            run += 1;
                        }
                        shape.push(b'C');
                        shape.extend_from_slice(&alphabet.to_le_bytes());
                        shape.extend_from_slice(&run.to_le_bytes());
                    }
                    _ => {
                        shape.push(b'P');
                        shape.extend_from_slice(&u32::from(chars[position]).to_le_bytes());
                        position += 1;
                    }
                }
            }
        };
        // Kept characters in the alphabet's own case (UTF-8), so that folding case changes
        // nothing.
        let kept = |range: &[Symbol], out: &mut Vec<u8>| {
            for sym in range {
                let c = self.alphabets[usize::from(sym.alphabet)].char_at(sym.digit);
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
        };
        let suffix_start = encrypted.end + usize::from(self.luhn != Luhn::Off);
        tweak::build(
            out,
            encoding,
            // A character takes at most 9 bytes of shape (a run of one) and 4 kept.
            13 * chars.len(),
            shape,
            |out| kept(&symbols[..encrypted.start], out),
            |out| kept(&symbols[suffix_start..], out),
            context,
        )
    }

    /// Whether a folded-case value in the non-natural case needs a walk: its natural-case
    /// alphabet letters (kept or not) must include a letter so that its case can be read back.
    pub(crate) fn needs_letter(&self, plan: &Plan<'_>) -> bool {
        match plan.case {
            Some(upper) if self.fold_case => {
                let natural_upper = self
                    .alphabets
                    .iter()
                    .any(|a| a.chars().iter().any(char::is_ascii_uppercase));
                upper != natural_upper
            }
            _ => false,
        }
    }

    /// Whether `digits` (for the encrypted positions of `plan`) render with at least one letter.
    pub(crate) fn has_letter(&self, plan: &Plan<'_>, digits: &[u32]) -> bool {
        let letter = |s: &Symbol, d: u32| {
            self.alphabets[usize::from(s.alphabet)]
                .char_at(d)
                .is_ascii_alphabetic()
        };
        plan.symbols
            .iter()
            .enumerate()
            .any(|(i, s)| match i.checked_sub(plan.encrypted.start) {
                Some(j) if i < plan.encrypted.end => letter(s, digits[j]),
                _ => letter(s, s.digit),
            })
    }

    /// Puts the value back together with `digits` at the encrypted positions.
    pub(crate) fn render(&self, plan: &Plan<'_>, digits: &[u32]) -> String {
        let encrypted = plan.encrypted.clone();
        // The Luhn digit, set from all the others (its slot follows the encrypted ones).
        let check = plan.luhn.map(|(slot, target)| {
            let digit = |s: &Symbol| s.digit;
            let others = plan.symbols[..encrypted.start]
                .iter()
                .map(digit)
                .chain(digits.iter().copied())
                .chain(core::iter::once(0))
                .chain(plan.symbols[slot + 1..].iter().map(digit));
            let others = luhn::residue(others);
            (
                slot,
                luhn::solve(others, plan.symbols.len() - 1 - slot, target),
            )
        });
        let mut symbols = plan.symbols.iter().enumerate().peekable();
        // Each character of the value kept or in a character of at most `widest` bytes.
        let widest = self
            .alphabets
            .iter()
            .map(Alphabet::max_utf8)
            .max()
            .unwrap_or(1);
        let mut out = String::with_capacity(plan.bytes + plan.symbols.len() * (widest - 1));
        for (position, &c) in plan.chars.iter().enumerate() {
            let c = match symbols.next_if(|(_, s)| s.position == position) {
                Some((i, s)) => {
                    let d = match check {
                        Some((slot, d)) if slot == i => d,
                        _ if encrypted.contains(&i) => digits[i - encrypted.start],
                        _ => s.digit,
                    };
                    let c = self.alphabets[usize::from(s.alphabet)].char_at(d);
                    match plan.case {
                        Some(true) => c.to_ascii_uppercase(),
                        Some(false) => c.to_ascii_lowercase(),
                        None => c,
                    }
                }
                // A literal the value did not have.
                None if plan.bare => continue,
                None => c,
            };
            out.push(c);
        }
        out
    }
}

/// Empties `buffer`, whose elements are wiped first with the `zeroize` feature.
#[cfg(feature = "zeroize")]
pub(crate) fn wipe<T: zeroize::DefaultIsZeroes>(buffer: &mut Vec<T>) {
    use zeroize::Zeroize;
    buffer.as_mut_slice().zeroize();
    buffer.clear();
}

/// Empties `buffer` (not wiped without the `zeroize` feature).
#[cfg(not(feature = "zeroize"))]
pub(crate) fn wipe<T>(buffer: &mut Vec<T>) {
    buffer.clear();
}

/// Shortens `buffer` to `len` elements, those after wiped first with the `zeroize` feature.
#[cfg(feature = "zeroize")]
fn wipe_from<T: zeroize::DefaultIsZeroes>(buffer: &mut Vec<T>, len: usize) {
    use zeroize::Zeroize;
    buffer[len..].zeroize();
    buffer.truncate(len);
}

/// Shortens `buffer` to `len` elements (not wiped without the `zeroize` feature).
#[cfg(not(feature = "zeroize"))]
fn wipe_from<T>(buffer: &mut Vec<T>, len: usize) {
    buffer.truncate(len);
}

/// Gives back an empty `buffer`'s room beyond `most` elements.
pub(crate) fn trim<T>(buffer: &mut Vec<T>, most: usize) {
    if buffer.capacity() > most {
        buffer.shrink_to(most);
    }
}

/// `values` taken apart for encryption under no context, in one [`Plans`].
#[cfg(test)]
pub(crate) fn planned(format: &Format, values: &[&str]) -> Plans {
    let encoding = format.encoding();
    let mut plans = Plans::default();
    for v in values {
        let direction = Some(Direction::Encrypt);
        format
            .plan(&mut plans, v, &encoding, b"", direction)
            .unwrap();
    }
    plans
}

/// The product of `radices`, saturating.
pub(crate) fn domain_size(radices: &[u32]) -> u128 {
    radices
        .iter()
        .fold(1u128, |acc, &r| acc.saturating_mul(u128::from(r)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value whose tweak equals one of the last four distinct tweaks takes its id and points
    /// at its bytes, its own copy dropped; any other gets a new id and keeps its own, and the
    /// least recent of five is forgotten.
    #[test]
    fn a_repeated_tweak_is_kept_once() {
        let format = Format::named("phone").unwrap();
        let encoding = format.encoding();
        let values = [
            "555-010-0000",
            "(555) 010-1111",
            "555-010-2222",
            "555.010.3333",
            "+1 555 010 4444",
            "555-010-5555",
            "555 010 6666",
            "(555) 010-7777",
        ];
        let plans = planned(&format, &values);
        let ids: Vec<usize> = (0..values.len()).map(|i| plans.tweak_id(i)).collect();
        assert_eq!(ids, [0, 1, 0, 2, 3, 0, 4, 5]);
        assert_eq!(plans.len() - plans.distinct_tweaks(), 2);
        assert_eq!(plans.distinct_tweaks(), 6);
        let alone = |v| {
            let plans = format.plan_one(v, &encoding, b"", Some(Direction::Encrypt));
            plans.unwrap().get(0).tweak.to_vec()
        };
        for (i, v) in values.iter().enumerate() {
            assert_eq!(plans.get(i).tweak, alone(v));
        }
        let kept = [0, 1, 3, 4, 6, 7].map(|i| alone(values[i]).len());
        assert_eq!(plans.tweaks.len(), kept.iter().sum::<usize>());
    }

    /// A value refused halfway through (its radices kept, then a domain too small) adds no
    /// value, and the next value's parts come out as if planned alone.
    #[test]
    fn a_refused_value_leaves_the_next_one_as_if_alone() {
        let format = Format::auto();
        let encoding = format.encoding();
        let plan = |plans: &mut Plans, value: &str| {
            format.plan(plans, value, &encoding, b"ctx", Some(Direction::Encrypt))
        };
        let mut plans = Plans::default();
        plan(&mut plans, "1234-5678").unwrap();
        // Radices 26, 26 and 10: below the smallest domain.
        assert!(matches!(
            plan(&mut plans, "ab-1"),
            Err(Error::DomainTooSmall { .. })
        ));
        plan(&mut plans, "9876-5432").unwrap();
        let mut alone = Plans::default();
        plan(&mut alone, "9876-5432").unwrap();
        assert_eq!(plans.len(), 2);
        let (kept, fresh) = (plans.get(1), alone.get(0));
        assert_eq!(kept.chars, fresh.chars);
        assert_eq!(kept.radices, fresh.radices);
        assert_eq!(kept.digits, fresh.digits);
        assert_eq!(kept.tweak, fresh.tweak);
        assert_eq!(format.render(&kept, kept.digits), "9876-5432");
    }
}
