//! The cipher the command runs: one [`AnyFpe`] (Riffpe or RiffpeX), one direction, through one
//! batch of the batch crate.

use riffpe::integer::DigitOrder;
use riffpe::{Aes, AnyDomain, AnyFpe, MessageError, Tweak};
use riffpe_batch::{Batch, Mode};

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
///
/// A [`MessageError`]'s message index counts from the start of the slice given. `tweak` is
/// [`Tweak::Fixed`] (the cipher's own) or one per message ([`Tweak::PerMessage`]).
pub trait Transform: Sync {
    /// Transforms integers whose domain fits `u64`.
    fn ints_u64(&self, values: &mut [u64], tweak: Tweak<'_>) -> Result<(), MessageError>;
    /// Transforms integers whose domain fits `u128`.
    fn ints_u128(&self, values: &mut [u128], tweak: Tweak<'_>) -> Result<(), MessageError>;
    /// Transforms a flat array of messages, one digit per element.
    fn digits(&self, digits: &mut [u32], tweak: Tweak<'_>) -> Result<(), MessageError>;
}

/// What a message is stored as in a block: `u64`, `u128` (whole integers) or `u32` (digits).
pub trait Element: Copy + Default + Send + Sync + 'static {
    /// Hands a block of these to the matching method of `transform`.
    fn apply<X: Transform + ?Sized>(
        transform: &X,
        values: &mut [Self],
        tweak: Tweak<'_>,
    ) -> Result<(), MessageError>;
}

impl Element for u64 {
    fn apply<X: Transform + ?Sized>(
        transform: &X,
        values: &mut [Self],
        tweak: Tweak<'_>,
    ) -> Result<(), MessageError> {
        transform.ints_u64(values, tweak)
    }
}

impl Element for u128 {
    fn apply<X: Transform + ?Sized>(
        transform: &X,
        values: &mut [Self],
        tweak: Tweak<'_>,
    ) -> Result<(), MessageError> {
        transform.ints_u128(values, tweak)
    }
}

impl Element for u32 {
    fn apply<X: Transform + ?Sized>(
        transform: &X,
        values: &mut [Self],
        tweak: Tweak<'_>,
    ) -> Result<(), MessageError> {
        transform.digits(values, tweak)
    }
}

/// A batch over one cipher and a direction: everything a block needs.
#[derive(Clone, Copy, Debug)]
pub struct Engine<'f> {
    batch: Batch<'f, 'static, AnyDomain<Vec<u32>>, Aes>,
    direction: Direction,
}

impl<'f> Engine<'f> {
    /// `fpe` in `direction`, integers read in `order`, spread over cores as `mode` says
    /// ([`Mode::Parallel`] uses the current rayon pool).
    pub fn new(fpe: &'f AnyFpe, direction: Direction, order: DigitOrder, mode: Mode) -> Self {
        Engine {
            batch: Batch::new(fpe).order(order).mode(mode),
            direction,
        }
    }

    /// Which way the engine runs.
    pub fn direction(&self) -> Direction {
        self.direction
    }
}

impl Transform for Engine<'_> {
    fn ints_u64(&self, values: &mut [u64], tweak: Tweak<'_>) -> Result<(), MessageError> {
        let batch = self.batch.tweak(tweak);
        match self.direction {
            Direction::Encrypt => batch.encrypt_ints(values),
            Direction::Decrypt => batch.decrypt_ints(values),
        }
    }

    fn ints_u128(&self, values: &mut [u128], tweak: Tweak<'_>) -> Result<(), MessageError> {
        let batch = self.batch.tweak(tweak);
        match self.direction {
            Direction::Encrypt => batch.encrypt_ints(values),
            Direction::Decrypt => batch.decrypt_ints(values),
        }
    }

    fn digits(&self, digits: &mut [u32], tweak: Tweak<'_>) -> Result<(), MessageError> {
        let batch = self.batch.tweak(tweak);
        match self.direction {
            Direction::Encrypt => batch.encrypt_digits(digits),
            Direction::Decrypt => batch.decrypt_digits(digits),
        }
    }
}
