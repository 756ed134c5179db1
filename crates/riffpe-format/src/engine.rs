//! Every call into the core `riffpe` crate: the one file to change when its API changes.

use alloc::vec::Vec;

use riffpe::{Aes, RiffpeX, ScratchBuf, Selection, Tweak};

use crate::Error;
use crate::format::Direction;

/// The expanded AES key: built once per cipher, cloned into each RiffpeX object (the core
/// wipes each copy on drop).
pub(crate) struct Key(Aes);

impl Key {
    pub(crate) fn new(key: &[u8]) -> Result<Self, Error> {
        Aes::new_from_slice(key)
            .map(Key)
            .map_err(|e| core_error(e.into()))
    }

    /// RiffpeX over `radices`, its per-value tweaks given per call; `selection` if given,
    /// else the core's default for these radices.
    pub(crate) fn permutations(
        &self,
        radices: &[u32],
        bytes_per_value: usize,
        selection: Option<Selection>,
    ) -> Result<Permutations, Error> {
        RiffpeX::builder(radices.to_vec())
            .bytes_per_value(bytes_per_value)
            .selection(selection)
            .build_with_aes(self.0.clone())
            .map(Permutations)
            .map_err(|e| core_error(e.into()))
    }
}

/// One RiffpeX object: the permutations of one radix vector.
pub(crate) struct Permutations(RiffpeX<Vec<u32>>);

/// The tweaks of a lockstep call's messages.
#[derive(Clone, Copy)]
pub(crate) enum Tweaks<'a> {
    /// One for every message.
    Shared(&'a [u8]),
    /// One per message, in message order.
    Each(&'a [&'a [u8]]),
}

/// Reusable lockstep scratch.
#[derive(Default)]
pub(crate) struct Scratch(ScratchBuf);

impl Permutations {
    /// Encrypts or decrypts one message under `tweak`, on the core's stack scratch where the
    /// domain fits it (see `riffpe::Fpe::encrypt`), else on a heap buffer for this call.
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
        .map_err(|e| core_error(e.into()))
    }

    /// How many messages a lockstep call advances together on this CPU.
    pub(crate) fn lanes(&self) -> usize {
        self.0.lanes()
    }

    /// Encrypts or decrypts messages stored back to back, in lockstep: under one tweak, set up
    /// once, or each under its own.
    pub(crate) fn apply_many(
        &self,
        tweaks: Tweaks<'_>,
        messages: &mut [u32],
        direction: Direction,
        scratch: &mut Scratch,
    ) -> Result<(), Error> {
        scratch.0.reserve(self.0.lockstep_scratch_size());
        let tweak = match tweaks {
            Tweaks::Shared(tweak) => Tweak::Bytes(tweak),
            Tweaks::Each(tweaks) => Tweak::PerMessage(tweaks),
        };
        let scratch = &mut scratch.0.scratch();
        match direction {
            Direction::Encrypt => self.0.encrypt_with(tweak, messages, scratch),
            Direction::Decrypt => self.0.decrypt_with(tweak, messages, scratch),
        }
        .map_err(|e| core_error(e.into()))
    }
}

/// The core's errors (which never carry a digit's value) as this crate's.
fn core_error(e: riffpe::Error) -> Error {
    match e {
        riffpe::Error::Setup(riffpe::SetupError::InvalidKeyLength { len }) => {
            Error::InvalidKeyLength { len }
        }
        other => Error::Parameters(other),
    }
}
