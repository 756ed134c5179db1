//! Alphabets: the characters one position may hold, in the order that gives each its digit.

use alloc::vec::Vec;
use core::fmt;

use crate::Error;

/// The largest alphabet: 65 536 characters (radix 2^16).
pub const MAX_ALPHABET: usize = 1 << 16;

/// The built-in alphabets, each in code point order. The discriminant is the id encoded in
/// the tweak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Builtin {
    Digits = 1,
    Hex = 2,
    UpperHex = 3,
    Lower = 4,
    Upper = 5,
    Alnum = 6,
    Printable = 7,
}

impl Builtin {
    const ALL: [Builtin; 7] = [
        Builtin::Digits,
        Builtin::Hex,
        Builtin::UpperHex,
        Builtin::Lower,
        Builtin::Upper,
        Builtin::Alnum,
        Builtin::Printable,
    ];

    fn name(self) -> &'static str {
        match self {
            Builtin::Digits => "digits",
            Builtin::Hex => "hex",
            Builtin::UpperHex => "HEX",
            Builtin::Lower => "lower",
            Builtin::Upper => "upper",
            Builtin::Alnum => "alnum",
            Builtin::Printable => "printable",
        }
    }

    fn by_name(name: &str) -> Option<Builtin> {
        Some(match name {
            "digits" => Builtin::Digits,
            "hex" => Builtin::Hex,
            "HEX" | "upper-hex" => Builtin::UpperHex,
            "lower" => Builtin::Lower,
            "upper" => Builtin::Upper,
            "alnum" => Builtin::Alnum,
            "printable" => Builtin::Printable,
            _ => return None,
        })
    }

    fn chars(self) -> Vec<char> {
        let ranges: &[(char, char)] = match self {
            Builtin::Digits => &[('0', '9')],
            Builtin::Hex => &[('0', '9'), ('a', 'f')],
            Builtin::UpperHex => &[('0', '9'), ('A', 'F')],
            Builtin::Lower => &[('a', 'z')],
            Builtin::Upper => &[('A', 'Z')],
            Builtin::Alnum => &[('0', '9'), ('A', 'Z'), ('a', 'z')],
            Builtin::Printable => &[('!', '~')],
        };
        ranges.iter().flat_map(|&(lo, hi)| lo..=hi).collect()
    }
}

/// An ordered set of 2 to 65 536 distinct characters; a character's digit is its position.
///
/// Built-in alphabets, each in code point order:
///
/// | name | characters | radix |
/// | --- | --- | ---: |
/// | `digits` | `0-9` | 10 |
/// | `hex` | `0-9a-f` | 16 |
/// | `HEX` (also `upper-hex`) | `0-9A-F` | 16 |
/// | `lower` | `a-z` | 26 |
/// | `upper` | `A-Z` | 26 |
/// | `alnum` | `0-9A-Za-z` | 62 |
/// | `printable` | `!` (0x21) to `~` (0x7E) | 94 |
///
/// A custom alphabet whose characters, in order, are a built-in's is that built-in, so one
/// set of characters has one encoding in the tweak.
///
/// ```
/// use riffpe_format::Alphabet;
///
/// let vowels = Alphabet::new("aeiou")?;
/// assert_eq!((vowels.radix(), vowels.index_of('i')), (5, Some(2)));
/// assert_eq!(Alphabet::new("0123456789")?, Alphabet::digits());
/// assert!(Alphabet::new("abca").is_err()); // a duplicate is an error
/// # Ok::<(), riffpe_format::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Alphabet {
    chars: Vec<char>,
    /// `(char, digit)` sorted by char, for lookup.
    sorted: Vec<(char, u32)>,
    ascii: AsciiDigits,
    builtin: Option<Builtin>,
}

/// Each ASCII character's digit ([`AsciiDigits::ABSENT`] if not in the alphabet): the characters
/// most values are made of, looked up without a search and its unpredictable branches.
#[derive(Clone, PartialEq, Eq, Hash)]
struct AsciiDigits([u32; 128]);

impl AsciiDigits {
    const ABSENT: u32 = u32::MAX;

    fn new(chars: &[char]) -> Self {
        let mut table = [Self::ABSENT; 128];
        for (&c, d) in chars.iter().zip(0u32..) {
            if let Some(slot) = table.get_mut(c as usize) {
                *slot = d;
            }
        }
        AsciiDigits(table)
    }
}

impl fmt::Debug for AsciiDigits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AsciiDigits(..)")
    }
}

impl Alphabet {
    fn builtin(builtin: Builtin) -> Self {
        let chars = builtin.chars();
        let sorted = chars.iter().zip(0u32..).map(|(&c, i)| (c, i)).collect();
        Alphabet {
            ascii: AsciiDigits::new(&chars),
            chars,
            sorted,
            builtin: Some(builtin),
        }
    }

    /// `0-9`.
    pub fn digits() -> Self {
        Self::builtin(Builtin::Digits)
    }
    /// `0-9a-f`.
    pub fn hex() -> Self {
        Self::builtin(Builtin::Hex)
    }
    /// `0-9A-F`.
    pub fn upper_hex() -> Self {
        Self::builtin(Builtin::UpperHex)
    }
    /// `a-z`.
    pub fn lower() -> Self {
        Self::builtin(Builtin::Lower)
    }
    /// `A-Z`.
    pub fn upper() -> Self {
        Self::builtin(Builtin::Upper)
    }
    /// `0-9A-Za-z`.
    pub fn alnum() -> Self {
        Self::builtin(Builtin::Alnum)
    }
    /// The 94 printable ASCII characters but space, `!` (0x21) to `~` (0x7E).
    pub fn printable() -> Self {
        Self::builtin(Builtin::Printable)
    }

    /// A built-in alphabet by name (`digits`, `hex`, `HEX`, `upper-hex`, `lower`, `upper`,
    /// `alnum`, `printable`).
    pub fn by_name(name: &str) -> Option<Self> {
        Builtin::by_name(name).map(Self::builtin)
    }

    /// The names of the built-in alphabets.
    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        Builtin::ALL.iter().map(|b| b.name())
    }

    /// A custom alphabet: the characters of `chars` in the order given.
    pub fn new(chars: &str) -> Result<Self, Error> {
        Self::from_chars(chars.chars())
    }

    /// A custom alphabet from characters in digit order.
    pub fn from_chars(chars: impl IntoIterator<Item = char>) -> Result<Self, Error> {
        let mut list = Vec::new();
        for c in chars {
            // Checked while collecting so that a huge iterator is not gathered first.
            if list.len() == MAX_ALPHABET {
                return Err(Error::AlphabetSize {
                    size: MAX_ALPHABET + 1,
                });
            }
            list.push(c);
        }
        Self::from_vec(list).map_err(|e| match e {
            DefinitionError::Size(size) => Error::AlphabetSize { size },
            DefinitionError::Duplicate(position) => Error::DuplicateChar { position },
        })
    }

    pub(crate) fn from_vec(chars: Vec<char>) -> Result<Self, DefinitionError> {
        if !(2..=MAX_ALPHABET).contains(&chars.len()) {
            return Err(DefinitionError::Size(chars.len()));
        }
        let mut sorted: Vec<(char, u32)> = chars.iter().zip(0u32..).map(|(&c, i)| (c, i)).collect();
        sorted.sort_unstable();
        if let Some(pair) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
            let position = pair[0].1.max(pair[1].1) as usize;
            return Err(DefinitionError::Duplicate(position));
        }
        let builtin = Builtin::ALL.into_iter().find(|b| b.chars() == chars);
        Ok(Alphabet {
            ascii: AsciiDigits::new(&chars),
            chars,
            sorted,
            builtin,
        })
    }

    /// The number of characters: the radix of a position of this alphabet.
    pub fn radix(&self) -> u32 {
        // At most 65 536, checked at construction.
        self.chars.len() as u32
    }

    /// The characters in digit order.
    pub fn chars(&self) -> &[char] {
        &self.chars
    }

    /// The built-in name, if this is a built-in alphabet.
    pub fn name(&self) -> Option<&'static str> {
        self.builtin.map(Builtin::name)
    }

    /// The digit of `c`, if it is in the alphabet.
    pub fn index_of(&self, c: char) -> Option<u32> {
        if let Some(&d) = self.ascii.0.get(c as usize) {
            return (d != AsciiDigits::ABSENT).then_some(d);
        }
        self.sorted
            .binary_search_by_key(&c, |&(k, _)| k)
            .ok()
            .map(|i| self.sorted[i].1)
    }

    /// The most bytes a character of the alphabet takes in UTF-8 (its largest code point's).
    pub(crate) fn max_utf8(&self) -> usize {
        self.sorted.last().map_or(1, |&(c, _)| c.len_utf8())
    }

    /// The character of digit `d`.
    pub(crate) fn char_at(&self, d: u32) -> char {
        // Digits come from `index_of` or from RiffpeX below this radix.
        self.chars.get(d as usize).copied().unwrap_or('\u{fffd}')
    }

    pub(crate) fn is_digits(&self) -> bool {
        self.builtin == Some(Builtin::Digits)
    }

    /// Canonical encoding: `0x01 id` for a built-in, `0x02 LE32(n) LE32(code point)…` else.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        match self.builtin {
            Some(b) => {
                out.push(0x01);
                out.push(b as u8);
            }
            None => {
                out.push(0x02);
                out.extend_from_slice(&(self.chars.len() as u32).to_le_bytes());
                for &c in &self.chars {
                    out.extend_from_slice(&u32::from(c).to_le_bytes());
                }
            }
        }
    }
}

/// A refused alphabet definition, turned into the caller's error with its position.
pub(crate) enum DefinitionError {
    Size(usize),
    Duplicate(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ASCII table and the search agree: every character gives its position, every other
    /// character below U+0100 and a few above give none.
    #[test]
    fn index_of_finds_each_character_and_nothing_else() {
        let alphabets = [
            Alphabet::digits(),
            Alphabet::alnum(),
            Alphabet::new("zyx\u{7f}\u{0}é€😀 ").unwrap(),
        ];
        for alphabet in alphabets {
            for (d, &c) in alphabet.chars.iter().enumerate() {
                assert_eq!(alphabet.index_of(c), Some(d as u32), "{c:?}");
            }
            let others = (0..0x100u32).chain([0x20ac, 0x1f600, 0x1f601]);
            for c in others.filter_map(char::from_u32) {
                if !alphabet.chars.contains(&c) {
                    assert_eq!(alphabet.index_of(c), None, "{c:?}");
                }
            }
        }
    }
}
