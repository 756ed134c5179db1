//! Riffpe over large arrays: integers (`u64`, `u128`) or flat digit arrays, in three modes that
//! give identical results.
//!
//! ```
//! use riffpe::{Riffpe, integer::DigitOrder};
//! use riffpe_batch::{Batch, Mode};
//!
//! let fpe = Riffpe::new(100, 8, &[0x2b; 16], b"cards")?;
//! let mut cards: Vec<u64> = (0..1000).map(|i| 4111_1111_0000_0000 + i).collect();
//! let original = cards.clone();
//!
//! let batch = Batch::new(&fpe).order(DigitOrder::BigEndian).mode(Mode::Parallel);
//! batch.encrypt_ints(&mut cards)?;
//! assert!(cards.iter().all(|&c| c < 10_000_000_000_000_000));
//! batch.decrypt_ints(&mut cards)?;
//! assert_eq!(cards, original);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use core::fmt;

use cipher::BlockCipherEncrypt;
use cipher::consts::U16;
use rayon::prelude::*;
use riffpe::integer::{DigitOrder, Integer, from_digits, to_digits};
use riffpe::{Fpe, Radices, ScratchBuf};

/// How a batch is processed. Every mode gives the same output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// One message after another: the baseline, bound by AES latency.
    Single,
    /// Several messages advance together so their AES chains fill the pipeline (one core).
    #[default]
    Lockstep,
    /// Lockstep inside chunks spread over rayon's thread pool.
    Parallel,
}

/// A message of a batch was refused: nothing in the batch was changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchError {
    /// Position of the offending message in the batch.
    pub index: usize,
    /// Why it was refused.
    pub error: riffpe::Error,
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "message {}: {}", self.index, self.error)
    }
}

impl std::error::Error for BatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Messages per parallel chunk: large enough to amortise scheduling, small enough to balance.
const CHUNK: usize = 512;

/// Batch operations over one cipher object.
pub struct Batch<'f, D, C> {
    fpe: &'f Fpe<D, C>,
    order: DigitOrder,
    mode: Mode,
}

impl<D: Radices, C> fmt::Debug for Batch<'_, D, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("fpe", self.fpe)
            .field("order", &self.order)
            .field("mode", &self.mode)
            .finish()
    }
}

impl<D, C> Clone for Batch<'_, D, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<D, C> Copy for Batch<'_, D, C> {}

impl<'f, D, C> Batch<'f, D, C>
where
    D: Radices + Sync,
    C: BlockCipherEncrypt<BlockSize = U16> + Sync,
{
    /// Little-endian integers, [`Mode::Lockstep`].
    pub fn new(fpe: &'f Fpe<D, C>) -> Self {
        Batch {
            fpe,
            order: DigitOrder::LittleEndian,
            mode: Mode::default(),
        }
    }

    /// How integers map to digits (SPEC's `-B` is [`DigitOrder::BigEndian`]).
    pub fn order(mut self, order: DigitOrder) -> Self {
        self.order = order;
        self
    }

    /// How the batch is processed.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Encrypts every integer in place.
    pub fn encrypt_ints<T: Integer + Send>(&self, values: &mut [T]) -> Result<(), BatchError> {
        self.ints(values, true)
    }

    /// Decrypts every integer in place.
    pub fn decrypt_ints<T: Integer + Send>(&self, values: &mut [T]) -> Result<(), BatchError> {
        self.ints(values, false)
    }

    /// Encrypts a flat array of messages, `digits()` digits each.
    pub fn encrypt_digits(&self, digits: &mut [u32]) -> Result<(), BatchError> {
        self.digits(digits, true)
    }

    /// Decrypts a flat array of messages, `digits()` digits each.
    pub fn decrypt_digits(&self, digits: &mut [u32]) -> Result<(), BatchError> {
        self.digits(digits, false)
    }

    fn ints<T: Integer + Send>(&self, values: &mut [T], encrypt: bool) -> Result<(), BatchError> {
        let domain = self.fpe.domain();
        let l = domain.digits();
        let mut digits = vec![0u32; l];
        // Check everything first, so an error leaves the batch untouched.
        for (index, &v) in values.iter().enumerate() {
            to_digits(v, domain, self.order, &mut digits)
                .map_err(|error| BatchError { index, error })?;
        }
        let run = |chunk: &mut [T], first: usize| -> Result<(), BatchError> {
            let mut scratch = ScratchBuf::with_size(self.fpe.scratch_size());
            let mut digits = vec![0u32; l];
            for (i, v) in chunk.iter_mut().enumerate() {
                let err = |error| BatchError {
                    index: first + i,
                    error,
                };
                to_digits(*v, domain, self.order, &mut digits).map_err(err)?;
                let mut s = scratch.scratch(self.fpe.scratch_size());
                if encrypt {
                    self.fpe.encrypt_with(&mut digits, &mut s).map_err(err)?;
                } else {
                    self.fpe.decrypt_with(&mut digits, &mut s).map_err(err)?;
                }
                *v = from_digits(&digits, domain, self.order).map_err(err)?;
            }
            Ok(())
        };
        match self.mode {
            Mode::Single | Mode::Lockstep => run(values, 0),
            Mode::Parallel => values
                .par_chunks_mut(CHUNK)
                .enumerate()
                .try_for_each(|(c, chunk)| run(chunk, c * CHUNK)),
        }
    }

    fn digits(&self, digits: &mut [u32], encrypt: bool) -> Result<(), BatchError> {
        let l = self.fpe.digits();
        if digits.len() % l != 0 {
            return Err(BatchError {
                index: digits.len() / l,
                error: riffpe::Error::MessageLength {
                    expected: l,
                    actual: digits.len() % l,
                },
            });
        }
        let run = |chunk: &mut [u32], first: usize| -> Result<(), BatchError> {
            let mut scratch = ScratchBuf::with_size(self.fpe.scratch_size());
            for (i, m) in chunk.chunks_exact_mut(l).enumerate() {
                let err = |error| BatchError {
                    index: first + i,
                    error,
                };
                let mut s = scratch.scratch(self.fpe.scratch_size());
                if encrypt {
                    self.fpe.encrypt_with(m, &mut s).map_err(err)?;
                } else {
                    self.fpe.decrypt_with(m, &mut s).map_err(err)?;
                }
            }
            Ok(())
        };
        // Check everything first, so an error leaves the batch untouched.
        let domain = self.fpe.domain();
        for (index, m) in digits.chunks_exact(l).enumerate() {
            for (position, (&digit, radix)) in m.iter().zip(domain.radices()).enumerate() {
                if digit >= radix {
                    return Err(BatchError {
                        index,
                        error: riffpe::Error::DigitOutOfRange {
                            index: position,
                            digit,
                            radix,
                        },
                    });
                }
            }
        }
        match self.mode {
            Mode::Single | Mode::Lockstep => run(digits, 0),
            Mode::Parallel => digits
                .par_chunks_mut(CHUNK * l)
                .enumerate()
                .try_for_each(|(c, chunk)| run(chunk, c * CHUNK)),
        }
    }
}
