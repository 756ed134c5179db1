//! Every call into the core `riffpe` crate: the one file to change when its API changes.

use alloc::vec::Vec;

use riffpe::{Aes, RiffpeX, ScratchBuf};

use crate::Error;
use crate::format::Direction;

/// The expanded AES key: built once per cipher, cloned into each RiffpeX object (the core
/// wipes each copy on drop with its `zeroize` feature).
pub(crate) struct Key(Aes);

impl Key {
    pub(crate) fn new(key: &[u8]) -> Result<Self, Error> {
        Aes::new_from_slice(key).map(Key).map_err(core_error)
    }

    /// RiffpeX over `radices`, its per-value tweaks given per call.
    pub(crate) fn permutations(
        &self,
        radices: &[u32],
        bytes_per_value: usize,
    ) -> Result<Permutations, Error> {
        RiffpeX::from_cipher(self.0.clone(), radices.to_vec(), b"", bytes_per_value)
            .map(Permutations)
            .map_err(core_error)
    }
}

/// One RiffpeX object: the permutations of one radix vector.
pub(crate) struct Permutations(RiffpeX<Vec<u32>>);

/// Reusable lockstep scratch.
#[derive(Default)]
pub(crate) struct Scratch(ScratchBuf);

impl Permutations {
    /// Encrypts or decrypts one message under `tweak`.
    pub(crate) fn apply(
        &self,
        tweak: &[u8],
        digits: &mut [u32],
        direction: Direction,
    ) -> Result<(), Error> {
        match direction {
            Direction::Encrypt => self.0.encrypt_tweaked(tweak, digits),
            Direction::Decrypt => self.0.decrypt_tweaked(tweak, digits),
        }
        .map_err(core_error)
    }

    /// Encrypts or decrypts messages stored back to back, all under `tweak`, in lockstep.
    pub(crate) fn apply_many(
        &self,
        tweak: &[u8],
        messages: &mut [u32],
        direction: Direction,
        scratch: &mut Scratch,
    ) -> Result<(), Error> {
        // The lockstep call takes only the fixed tweak: an object with this one as fixed.
        let radices: Vec<u32> = self.0.domain().radices().collect();
        let fpe = RiffpeX::from_cipher(
            self.0.cipher().clone(),
            radices,
            tweak,
            self.0.bytes_per_value(),
        )
        .map_err(core_error)?;
        let size = fpe.lockstep_scratch_size();
        let mut scratch = scratch.0.scratch(size);
        match direction {
            Direction::Encrypt => fpe.encrypt_many_with(messages, &mut scratch),
            Direction::Decrypt => fpe.decrypt_many_with(messages, &mut scratch),
        }
        .map_err(core_error)
    }
}

/// The core's errors, less any that would carry a digit of a value.
fn core_error(e: riffpe::Error) -> Error {
    match e {
        riffpe::Error::InvalidKeyLength { len } => Error::InvalidKeyLength { len },
        riffpe::Error::DigitOutOfRange { .. } | riffpe::Error::ValueOutOfDomain => {
            Error::Parameters(riffpe::Error::ValueOutOfDomain)
        }
        other => Error::Parameters(other),
    }
}
