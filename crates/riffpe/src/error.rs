//! The one error type of the crate: every invalid parameter or input of SPEC, with the offending value.

use core::fmt;

/// Why a parameter, key, scratch buffer or message was refused.
///
/// Every variant carries the values that caused it, so the message says what to change.
/// Nothing here ever contains key material.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// A radix below 2 (a digit must have at least two values).
    InvalidRadix {
        /// Position of the radix in the list (0 for [`Riffpe`](crate::Riffpe)).
        index: usize,
        /// The radix given.
        radix: u32,
    },
    /// A message of zero digits.
    NoDigits,
    /// More digits than the scheme can encode: a digit index must fit the element width
    /// (255 for radices below 256, 65 535 below 65 536) and the digit count must fit 32 bits.
    TooManyDigits {
        /// Number of digits asked for.
        digits: usize,
        /// The largest number of digits allowed for this radix.
        max: usize,
    },
    /// `bytes_per_value` of 0.
    InvalidBytesPerValue {
        /// The value given.
        bytes_per_value: usize,
    },
    /// The keystream and selection scratch of one digit step would exceed [`MAX_SCRATCH_BYTES`](crate::MAX_SCRATCH_BYTES).
    ScratchTooLarge {
        /// Bytes one digit step would need.
        needed: u64,
        /// The cap.
        max: u64,
    },
    /// An AES key that is not 16, 24 or 32 bytes (or not the length the chosen cipher takes).
    InvalidKeyLength {
        /// Length of the key given, in bytes.
        len: usize,
    },
    /// A message whose digit count differs from the cipher's.
    MessageLength {
        /// Digits the cipher was built for.
        expected: usize,
        /// Digits given.
        actual: usize,
    },
    /// A digit not below the radix of its position.
    DigitOutOfRange {
        /// Position of the digit in the message.
        index: usize,
        /// The digit.
        digit: u32,
        /// The radix of that position.
        radix: u32,
    },
    /// Caller-provided scratch smaller than one digit step needs.
    ScratchTooSmall {
        /// Keystream bytes needed.
        keystream_needed: usize,
        /// Keystream bytes given.
        keystream_given: usize,
        /// Selection keys needed.
        keys_needed: usize,
        /// Selection keys given.
        keys_given: usize,
    },
    /// An integer that is not below the size of the domain.
    ValueOutOfDomain,
    /// A domain whose size does not fit the integer type asked for (`u64` or `u128`).
    DomainTooLarge {
        /// Bits of the integer type.
        bits: u32,
    },
    /// `find_best_bases` was given a size below the threshold, or a threshold below 2.
    NoBases {
        /// The size to factor.
        size: u64,
        /// The smallest base allowed.
        threshold: u64,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::InvalidRadix { index, radix } => {
                write!(f, "radix {radix} at position {index} is below 2")
            }
            Error::NoDigits => f.write_str("a message must have at least one digit"),
            Error::TooManyDigits { digits, max } => {
                write!(
                    f,
                    "{digits} digits is more than the {max} this radix allows"
                )
            }
            Error::InvalidBytesPerValue { bytes_per_value } => {
                write!(f, "bytes_per_value {bytes_per_value} is not at least 1")
            }
            Error::ScratchTooLarge { needed, max } => write!(
                f,
                "one digit step would need {needed} bytes of keystream and scratch, over the cap of {max}"
            ),
            Error::InvalidKeyLength { len } => {
                write!(f, "a {len}-byte key is not an AES key (16, 24 or 32 bytes)")
            }
            Error::MessageLength { expected, actual } => {
                write!(
                    f,
                    "message has {actual} digits, the cipher takes {expected}"
                )
            }
            Error::DigitOutOfRange {
                index,
                digit,
                radix,
            } => write!(
                f,
                "digit {digit} at position {index} is not below radix {radix}"
            ),
            Error::ScratchTooSmall {
                keystream_needed,
                keystream_given,
                keys_needed,
                keys_given,
            } => write!(
                f,
                "scratch too small: keystream {keystream_given} of {keystream_needed} bytes, keys {keys_given} of {keys_needed}"
            ),
            Error::ValueOutOfDomain => f.write_str("value is not below the size of the domain"),
            Error::DomainTooLarge { bits } => {
                write!(f, "the domain does not fit a {bits}-bit integer")
            }
            Error::NoBases { size, threshold } => write!(
                f,
                "{size} cannot be split into bases of at least {threshold}"
            ),
        }
    }
}

impl core::error::Error for Error {}
