//! The cipher the command runs: Riffpe or RiffpeX, one direction, through the batch crate.

use riffpe::integer::DigitOrder;
use riffpe::{Domain, Riffpe, RiffpeX};
use riffpe_batch::{Batch, BatchError, Mode};

/// Encrypt or decrypt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Plaintext to ciphertext.
    Encrypt,
    /// Ciphertext to plaintext.
    Decrypt,
}

/// A whole block of messages changed in place: the seam between the streaming code and the
/// cipher (tests and measurements put an identity here to time the rest alone).
pub trait Transform: Sync {
    /// Transforms integers whose domain fits `u64`.
    fn ints_u64(&self, values: &mut [u64]) -> Result<(), BatchError>;
    /// Transforms integers whose domain fits `u128`.
    fn ints_u128(&self, values: &mut [u128]) -> Result<(), BatchError>;
    /// Transforms a flat array of messages, one digit per element.
    fn digits(&self, digits: &mut [u32]) -> Result<(), BatchError>;
}

/// What a message is stored as in a block: `u64`, `u128` (whole integers) or `u32` (digits).
pub trait Element: Copy + Default + Send + Sync + 'static {
    /// Hands a block of these to the matching method of `transform`.
    fn apply<X: Transform + ?Sized>(transform: &X, values: &mut [Self]) -> Result<(), BatchError>;
}

impl Element for u64 {
    fn apply<X: Transform + ?Sized>(transform: &X, values: &mut [Self]) -> Result<(), BatchError> {
        transform.ints_u64(values)
    }
}

impl Element for u128 {
    fn apply<X: Transform + ?Sized>(transform: &X, values: &mut [Self]) -> Result<(), BatchError> {
        transform.ints_u128(values)
    }
}

impl Element for u32 {
    fn apply<X: Transform + ?Sized>(transform: &X, values: &mut [Self]) -> Result<(), BatchError> {
        transform.digits(values)
    }
}

/// The two cipher objects the command line can build.
#[derive(Debug)]
pub enum Scheme {
    /// `-n RADIX -l DIGITS`.
    Riffpe(Riffpe),
    /// `--radices R0,R1,…`.
    RiffpeX(RiffpeX<Vec<u32>>),
}

impl Scheme {
    /// The domain of the cipher.
    pub fn domain(&self) -> Domain<'_> {
        match self {
            Scheme::Riffpe(fpe) => fpe.domain(),
            Scheme::RiffpeX(fpe) => fpe.domain(),
        }
    }
}

/// A cipher, a direction, a digit order and a batch mode: everything a block needs.
#[derive(Debug)]
pub struct Engine {
    /// The cipher.
    pub scheme: Scheme,
    /// Which way.
    pub direction: Direction,
    /// How integers map to digits.
    pub order: DigitOrder,
    /// How the batch crate spreads the work ([`Mode::Parallel`] uses the current rayon pool).
    pub mode: Mode,
}

/// Runs `$body` with `$batch` bound to a batch over whichever cipher `$engine` holds.
macro_rules! with_batch {
    ($engine:expr, |$batch:ident| $body:expr) => {
        match &$engine.scheme {
            Scheme::Riffpe(fpe) => {
                let $batch = Batch::new(fpe).order($engine.order).mode($engine.mode);
                $body
            }
            Scheme::RiffpeX(fpe) => {
                let $batch = Batch::new(fpe).order($engine.order).mode($engine.mode);
                $body
            }
        }
    };
}

impl Transform for Engine {
    fn ints_u64(&self, values: &mut [u64]) -> Result<(), BatchError> {
        with_batch!(self, |batch| match self.direction {
            Direction::Encrypt => batch.encrypt_ints(values),
            Direction::Decrypt => batch.decrypt_ints(values),
        })
    }

    fn ints_u128(&self, values: &mut [u128]) -> Result<(), BatchError> {
        with_batch!(self, |batch| match self.direction {
            Direction::Encrypt => batch.encrypt_ints(values),
            Direction::Decrypt => batch.decrypt_ints(values),
        })
    }

    fn digits(&self, digits: &mut [u32]) -> Result<(), BatchError> {
        with_batch!(self, |batch| match self.direction {
            Direction::Encrypt => batch.encrypt_digits(digits),
            Direction::Decrypt => batch.decrypt_digits(digits),
        })
    }
}
