//! The crate's errors: a format definition, a value or a key that was refused.

use core::fmt;

/// What is wrong with a template, reported with its position by [`Error::Template`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template has no character positions.
    Empty,
    /// A `[` without its `]`.
    UnclosedClass,
    /// A `{` without its `}`.
    UnclosedBrace,
    /// A `\` at the end of the template (or of a class).
    DanglingEscape,
    /// A range `c-d` in a class with `d` before `c`.
    ReversedRange,
    /// A class or custom alphabet with fewer than 2 or more than 65 536 characters.
    ClassSize,
    /// A character that appears twice in one class.
    DuplicateInClass,
    /// `{name}` with a name that is neither built in nor given with the template.
    UnknownAlphabet,
    /// `{n}` at the start of the template or right after another repeat.
    RepeatWithoutItem,
    /// `{n}` with `n` of 0 or a count that takes the template past the maximum length.
    BadRepeat,
    /// The expanded template is longer than [`MAX_CHARS`](crate::MAX_CHARS).
    TooLong,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TemplateError::Empty => "the template has no positions",
            TemplateError::UnclosedClass => "`[` is never closed by `]`",
            TemplateError::UnclosedBrace => "`{` is never closed by `}`",
            TemplateError::DanglingEscape => "`\\` escapes nothing",
            TemplateError::ReversedRange => "the range ends before it starts",
            TemplateError::ClassSize => "a class needs 2 to 65536 characters",
            TemplateError::DuplicateInClass => "the class has this character twice",
            TemplateError::UnknownAlphabet => "no alphabet has this name",
            TemplateError::RepeatWithoutItem => "`{n}` repeats nothing",
            TemplateError::BadRepeat => "the repeat count is 0 or too large",
            TemplateError::TooLong => "the expanded template is longer than the maximum",
        })
    }
}

/// Why a format, a key or a value was refused.
///
/// Positions count `char`s from 0 (a template error also gives the byte offset); messages name
/// them as ordinals ("the 1st character"), which read the same to a programmer indexing from 0
/// and to someone counting from 1. No variant holds a character of a value, a digit, or key
/// material: messages are safe to log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// A custom alphabet with fewer than 2 or more than 65 536 characters.
    AlphabetSize {
        /// Characters given.
        size: usize,
    },
    /// A custom alphabet that has a character twice.
    DuplicateChar {
        /// Position (in characters) of the second occurrence in the alphabet's definition.
        position: usize,
    },
    /// A template that does not parse.
    Template {
        /// Position of the offending item, in characters from the start of the template.
        position: usize,
        /// The same position in bytes.
        byte: usize,
        /// What is wrong.
        reason: TemplateError,
    },
    /// [`Format::named`](crate::Format::named) knows no format of this name.
    UnknownFormat,
    /// A free-form passthrough character that is also in the alphabet.
    PassthroughInAlphabet {
        /// Position (in characters) in the passthrough set as given.
        position: usize,
    },
    /// Luhn was asked of a format whose positions are not all decimal digits.
    LuhnNeedsDigits,
    /// Case folding was asked of a format with letters of both cases.
    CaseFoldAmbiguous,
    /// Optional literals were asked of a format that is not a template (free-form formats
    /// have passthrough characters instead).
    LiteralsOptionalNeedsTemplate,
    /// A value longer than [`MAX_CHARS`](crate::MAX_CHARS).
    TooLong {
        /// Characters in the value.
        chars: usize,
        /// The maximum.
        max: usize,
    },
    /// A value whose length differs from the template's.
    LengthMismatch {
        /// Characters the template has.
        expected: usize,
        /// Characters in the value.
        actual: usize,
        /// Where a value may lack every literal ([`Format::literals_optional`](crate::Format::literals_optional)):
        /// the characters it has then.
        without_literals: Option<usize>,
    },
    /// A character that is neither in its position's alphabet nor a passthrough character.
    InvalidChar {
        /// Position of the character in the value.
        position: usize,
    },
    /// A case-folding format got a value with letters of both cases.
    MixedCase {
        /// Position of the first letter whose case differs from the value's first letter.
        position: usize,
    },
    /// Nothing is left to encrypt once the kept characters (and the Luhn digit) are set aside.
    NothingToEncrypt {
        /// Alphabet characters in the value (or the template).
        chars: usize,
        /// Characters kept or set by Luhn.
        reserved: usize,
    },
    /// The encrypted positions give fewer values than NIST SP 800-38G Rev. 1 requires.
    DomainTooSmall {
        /// How many values the encrypted positions can take (saturating).
        values: u128,
        /// The minimum, [`MIN_DOMAIN`](crate::MIN_DOMAIN).
        min: u128,
    },
    /// More encrypted positions than RiffpeX can index for this radix.
    TooManyPositions {
        /// Encrypted positions.
        positions: usize,
        /// The most RiffpeX takes: 256 when every radix is below 256, 65 536 below 65 536.
        max: usize,
    },
    /// `Luhn::Invalid` encrypts only numbers that pass the Luhn check.
    LuhnCheckFailed,
    /// `Luhn::Invalid` decrypts only tokens it made: this value passes the Luhn check or has
    /// another residue.
    NotALuhnToken,
    /// A key that is not 16, 24 or 32 bytes.
    InvalidKeyLength {
        /// Bytes given.
        len: usize,
    },
    /// The core refused the parameters (an alphabet too large for the scratch cap, say).
    Parameters(riffpe::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::AlphabetSize { size } => {
                write!(f, "an alphabet needs 2 to 65536 characters, not {size}")
            }
            Error::DuplicateChar { position } => write!(
                f,
                "the alphabet's {} character repeats an earlier one: characters must be distinct",
                Ordinal(position)
            ),
            Error::Template {
                position, reason, ..
            } => write!(
                f,
                "template error at its {} character: {reason}",
                Ordinal(position)
            ),
            Error::UnknownFormat => {
                f.write_str("no named format has this name (`riffpe formats` lists them)")
            }
            Error::PassthroughInAlphabet { position } => write!(
                f,
                "the {} passthrough character is also in the alphabet",
                Ordinal(position)
            ),
            Error::LuhnNeedsDigits => f.write_str(
                "Luhn applies only to formats whose encrypted positions are decimal digits",
            ),
            Error::CaseFoldAmbiguous => {
                f.write_str("case folding needs a format whose letters are all of one case")
            }
            Error::LiteralsOptionalNeedsTemplate => f.write_str(
                "optional literals need a template (a free-form format has passthrough characters)",
            ),
            Error::TooLong { chars, max } => {
                write!(
                    f,
                    "the value has {chars} characters, more than the {max} allowed"
                )
            }
            Error::LengthMismatch {
                expected,
                actual,
                without_literals,
            } => {
                write!(
                    f,
                    "the value has {actual} characters, the template {expected}"
                )?;
                match without_literals {
                    Some(n) => write!(f, " ({n} without its literals)"),
                    None => Ok(()),
                }
            }
            Error::InvalidChar { position } => write!(
                f,
                "the {} character is not in the format's alphabet for that position, nor a passthrough character",
                Ordinal(position)
            ),
            Error::MixedCase { position } => write!(
                f,
                "the {} character is a letter of the other case: the value must be all lower or all upper case",
                Ordinal(position)
            ),
            Error::NothingToEncrypt { chars, reserved } => write!(
                f,
                "nothing to encrypt: {reserved} of the {chars} alphabet characters are kept or set by Luhn; keep fewer"
            ),
            Error::DomainTooSmall { values, min } => write!(
                f,
                "the encrypted positions give {values} values, fewer than the {min} NIST SP 800-38G Rev. 1 requires: \
                 encrypt more characters (keep fewer, use a longer value or a larger alphabet), \
                 or opt in with allow_small_domain"
            ),
            Error::TooManyPositions { positions, max } => write!(
                f,
                "{positions} encrypted positions, more than the {max} RiffpeX indexes for these radices"
            ),
            Error::LuhnCheckFailed => {
                f.write_str("this format encrypts only numbers that pass the Luhn check")
            }
            Error::NotALuhnToken => f.write_str(
                "not a token of this format: its Luhn residue is not the one tokens have",
            ),
            Error::InvalidKeyLength { len } => {
                write!(f, "a {len}-byte key is not an AES key (16, 24 or 32 bytes)")
            }
            Error::Parameters(e) => write!(f, "parameters refused: {e}"),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Parameters(e) => Some(e),
            _ => None,
        }
    }
}

/// A value of a bulk call was refused; no output was produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BulkError {
    /// Position of the value in the input slice.
    pub index: usize,
    /// Why it was refused (positions inside it count characters of that value).
    pub error: Error,
}

impl fmt::Display for BulkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "value {}: {}", self.index, self.error)
    }
}

impl core::error::Error for BulkError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// A 0-based position as an English ordinal: 0 is "1st", 11 is "12th", 21 is "22nd".
struct Ordinal(usize);

impl fmt::Display for Ordinal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0 + 1;
        let suffix = match (n % 10, n % 100) {
            (_, 11..=13) => "th",
            (1, _) => "st",
            (2, _) => "nd",
            (3, _) => "rd",
            _ => "th",
        };
        write!(f, "{n}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn ordinals() {
        let cases = [
            (0, "1st"),
            (1, "2nd"),
            (2, "3rd"),
            (3, "4th"),
            (10, "11th"),
            (11, "12th"),
            (12, "13th"),
            (20, "21st"),
            (21, "22nd"),
            (22, "23rd"),
            (100, "101st"),
            (110, "111th"),
            (111, "112th"),
        ];
        for (position, expected) in cases {
            assert_eq!(Ordinal(position).to_string(), expected, "{position}");
        }
    }
}
