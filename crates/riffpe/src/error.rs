//! The crate's errors: [`SetupError`] when a cipher is built, [`MessageError`] when a call is
//! refused, and [`Error`], either of the two, for code that does both behind one `?`.

use core::fmt;

/// Why a cipher could not be built from these parameters or this key.
///
/// Every variant carries the values that caused it, so the message says what to change.
/// Nothing here ever contains key material.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SetupError {
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
    /// [`find_best_bases`](crate::find_best_bases) was given a size below the threshold, a
    /// threshold below 2, or a size with a prime factor of 2^32 or more.
    NoBases {
        /// The size to factor.
        size: u64,
        /// The smallest base allowed.
        threshold: u64,
    },
}

/// Why a call refused its messages, tweaks or scratch. Nothing was changed.
///
/// Positions are given, digit values never: a digit is part of the plaintext.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MessageError {
    /// Digits that do not make whole messages: one message must have exactly the cipher's
    /// digit count, many messages a multiple of it.
    MessageLength {
        /// Digits per message.
        expected: usize,
        /// Digits given.
        actual: usize,
    },
    /// A digit not below the radix of its position.
    DigitOutOfRange {
        /// Index of the message in the call (0 for a single message).
        message: usize,
        /// Position of the digit in its message.
        position: usize,
        /// The radix of that position.
        radix: u32,
    },
    /// An integer that is not below the size of the domain.
    ValueOutOfDomain {
        /// Index of the value in the call (0 for a single value).
        message: usize,
    },
    /// A domain whose size does not fit the integer type asked for (`u64` or `u128`).
    DomainTooLarge {
        /// Bits of the integer type.
        bits: u32,
    },
    /// [`Tweak::PerMessage`](crate::Tweak::PerMessage) with a tweak count other than the
    /// message count.
    TweakCount {
        /// Messages in the call.
        messages: usize,
        /// Tweaks given.
        tweaks: usize,
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
}

impl MessageError {
    /// The same error with its message index moved by `first` (for a call on a sub-slice
    /// that starts at message `first`).
    pub fn offset(self, first: usize) -> Self {
        match self {
            MessageError::DigitOutOfRange {
                message,
                position,
                radix,
            } => MessageError::DigitOutOfRange {
                message: message + first,
                position,
                radix,
            },
            MessageError::ValueOutOfDomain { message } => MessageError::ValueOutOfDomain {
                message: message + first,
            },
            other => other,
        }
    }

    /// The index of the message the error is about, if it is about one.
    pub fn message(&self) -> Option<usize> {
        match *self {
            MessageError::DigitOutOfRange { message, .. }
            | MessageError::ValueOutOfDomain { message } => Some(message),
            _ => None,
        }
    }
}

/// Either error: for code that builds ciphers and calls them behind one `?`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Error {
    /// The cipher could not be built.
    Setup(SetupError),
    /// A call was refused.
    Message(MessageError),
}

impl From<SetupError> for Error {
    fn from(error: SetupError) -> Self {
        Error::Setup(error)
    }
}

impl From<MessageError> for Error {
    fn from(error: MessageError) -> Self {
        Error::Message(error)
    }
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SetupError::InvalidRadix { index, radix } => {
                write!(f, "radix {radix} at position {index} is below 2")
            }
            SetupError::NoDigits => f.write_str("a message must have at least one digit"),
            SetupError::TooManyDigits { digits, max } => {
                write!(
                    f,
                    "{digits} digits is more than the {max} this radix allows"
                )
            }
            SetupError::InvalidBytesPerValue { bytes_per_value } => {
                write!(f, "bytes_per_value {bytes_per_value} is not at least 1")
            }
            SetupError::ScratchTooLarge { needed, max } => write!(
                f,
                "one digit step would need {needed} bytes of keystream and scratch, over the cap of {max}"
            ),
            SetupError::InvalidKeyLength { len } => {
                write!(f, "a {len}-byte key is not an AES key (16, 24 or 32 bytes)")
            }
            SetupError::NoBases { size, threshold } => write!(
                f,
                "{size} cannot be split into bases of at least {threshold} below 2^32"
            ),
        }
    }
}

impl fmt::Display for MessageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MessageError::MessageLength { expected, actual } => write!(
                f,
                "{actual} digits given, not a whole number of {expected}-digit messages"
            ),
            MessageError::DigitOutOfRange {
                message,
                position,
                radix,
            } => write!(
                f,
                "message {message}: the digit at position {position} is not below radix {radix}"
            ),
            MessageError::ValueOutOfDomain { message } => write!(
                f,
                "message {message}: the value is not below the size of the domain"
            ),
            MessageError::DomainTooLarge { bits } => {
                write!(f, "the domain does not fit a {bits}-bit integer")
            }
            MessageError::TweakCount { messages, tweaks } => {
                write!(f, "{tweaks} tweaks given for {messages} messages")
            }
            MessageError::ScratchTooSmall {
                keystream_needed,
                keystream_given,
                keys_needed,
                keys_given,
            } => write!(
                f,
                "scratch too small: keystream {keystream_given} of {keystream_needed} bytes, keys {keys_given} of {keys_needed}"
            ),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Setup(error) => error.fmt(f),
            Error::Message(error) => error.fmt(f),
        }
    }
}

impl core::error::Error for SetupError {}
impl core::error::Error for MessageError {}

impl core::error::Error for Error {}
