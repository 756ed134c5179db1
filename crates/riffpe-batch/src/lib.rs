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
//!
//! # When parallel pays
//!
//! [`Mode::Parallel`] splits the array into chunks of at least one lockstep group
//! ([`riffpe::Fpe::lanes`]: 64 messages with VAES-512, 30 with VAES-256, 8 with AES-NI or ARMv8)
//! and at most 1024 messages. An array of at most one group is one chunk, run on one thread: no
//! faster than [`Mode::Lockstep`], so up to that size parallel does not pay. Measured with the
//! `throughput-encrypt-small` bench (Riffpe(100, 8), 2 cores, VAES-512, in the workspace's
//! `BENCHMARKS.md`): 32 numbers take about the same time in both modes (0.98× lockstep's rate,
//! within the noise); 128 to 2048 numbers run 1.82× to 2.01× lockstep's rate, 1 MiB of numbers
//! 2.15×.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use core::fmt;

use cipher::BlockCipherEncrypt;
use cipher::consts::U16;
use rayon::prelude::*;
use riffpe::integer::{DigitOrder, Integer, from_digits, max_value, to_digits};
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

/// Messages per chunk: the unit of work of a thread, and of the sequential modes' buffers.
/// Large enough to amortise scheduling and fill every lane, small enough to balance.
const CHUNK: usize = 1024;

/// The most lockstep scratch per thread; radices large enough to exceed it get fewer lanes.
const MAX_LANE_SCRATCH: usize = 32 << 20;

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

/// One thread's working memory: digits of a chunk and the cipher's scratch. Reused across
/// chunks, so nothing is allocated per message.
struct Workspace {
    digits: Vec<u32>,
    scratch: ScratchBuf,
}

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
    ///
    /// Errors, before changing anything, if the domain's size does not fit `T` (a ciphertext
    /// might not) or an integer is not below it.
    pub fn encrypt_ints<T: Integer + Send>(&self, values: &mut [T]) -> Result<(), BatchError> {
        self.ints(values, true)
    }

    /// Decrypts every integer in place (errors as [`Batch::encrypt_ints`]).
    pub fn decrypt_ints<T: Integer + Send>(&self, values: &mut [T]) -> Result<(), BatchError> {
        self.ints(values, false)
    }

    /// Encrypts a flat array of messages, [`Fpe::digits`] digits each.
    pub fn encrypt_digits(&self, digits: &mut [u32]) -> Result<(), BatchError> {
        self.digits(digits, true)
    }

    /// Decrypts a flat array of messages, [`Fpe::digits`] digits each.
    pub fn decrypt_digits(&self, digits: &mut [u32]) -> Result<(), BatchError> {
        self.digits(digits, false)
    }

    /// Messages per chunk in [`Mode::Parallel`]: [`CHUNK`], or for a small array its share per
    /// thread, so that every core gets work, but never fewer than one lockstep group's lanes.
    fn parallel_chunk(&self, messages: usize) -> usize {
        let share = messages.div_ceil(rayon::current_num_threads());
        share.max(self.fpe.lanes()).clamp(1, CHUNK)
    }

    /// Scratch for `messages` messages: as many lanes as the backend runs, but no more than
    /// there are messages and within [`MAX_LANE_SCRATCH`].
    fn scratch_size(&self, messages: usize) -> riffpe::ScratchSize {
        let one = self.fpe.scratch_size();
        if self.mode == Mode::Single {
            return one;
        }
        let per_lane = one.keystream_bytes + 8 * one.keys;
        let lanes = self
            .fpe
            .lanes()
            .min(MAX_LANE_SCRATCH / per_lane)
            .min(messages)
            .max(1);
        riffpe::ScratchSize {
            keystream_bytes: one.keystream_bytes * lanes,
            keys: one.keys * lanes,
        }
    }

    /// Buffers for chunks of up to `messages` messages.
    fn workspace(&self, messages: usize) -> Workspace {
        let messages = messages.min(CHUNK);
        Workspace {
            digits: vec![0; messages * self.fpe.digits()],
            scratch: ScratchBuf::with_size(self.scratch_size(messages)),
        }
    }

    /// Encrypts or decrypts `digits` (whole messages) with the batch's mode on one thread.
    fn run_chunk(
        &self,
        digits: &mut [u32],
        scratch: &mut ScratchBuf,
        encrypt: bool,
    ) -> Result<(), riffpe::Error> {
        let mut scratch = scratch.scratch(self.scratch_size(digits.len() / self.fpe.digits()));
        match (self.mode, encrypt) {
            (Mode::Single, true) => digits
                .chunks_exact_mut(self.fpe.digits())
                .try_for_each(|m| self.fpe.encrypt_with(m, &mut scratch)),
            (Mode::Single, false) => digits
                .chunks_exact_mut(self.fpe.digits())
                .try_for_each(|m| self.fpe.decrypt_with(m, &mut scratch)),
            (_, true) => self.fpe.encrypt_many_with(digits, &mut scratch),
            (_, false) => self.fpe.decrypt_many_with(digits, &mut scratch),
        }
    }

    fn ints<T: Integer + Send>(&self, values: &mut [T], encrypt: bool) -> Result<(), BatchError> {
        let domain = self.fpe.domain();
        let l = domain.digits();
        // Check everything first, so an error leaves the batch untouched.
        let max: T = max_value(domain).map_err(|error| BatchError { index: 0, error })?;
        if let Some(index) = values.iter().position(|&v| v > max) {
            return Err(BatchError {
                index,
                error: riffpe::Error::ValueOutOfDomain,
            });
        }
        let order = self.order;
        let count = values.len();
        let run = |work: &mut Workspace, chunk: &mut [T]| -> Result<(), riffpe::Error> {
            let digits = &mut work.digits[..chunk.len() * l];
            for (v, m) in chunk.iter().zip(digits.chunks_exact_mut(l)) {
                to_digits(*v, domain, order, m)?;
            }
            self.run_chunk(digits, &mut work.scratch, encrypt)?;
            for (v, m) in chunk.iter_mut().zip(digits.chunks_exact(l)) {
                *v = from_digits(m, domain, order)?;
            }
            Ok(())
        };
        let unexpected = |error| BatchError { index: 0, error };
        match self.mode {
            Mode::Single | Mode::Lockstep => {
                let mut work = self.workspace(values.len());
                values
                    .chunks_mut(CHUNK)
                    .try_for_each(|chunk| run(&mut work, chunk))
                    .map_err(unexpected)
            }
            Mode::Parallel => {
                let chunk = self.parallel_chunk(count);
                values
                    .par_chunks_mut(chunk)
                    .try_for_each_init(|| self.workspace(chunk), run)
                    .map_err(unexpected)
            }
        }
    }

    fn digits(&self, digits: &mut [u32], encrypt: bool) -> Result<(), BatchError> {
        let l = self.fpe.digits();
        if !digits.len().is_multiple_of(l) {
            return Err(BatchError {
                index: digits.len() / l,
                error: riffpe::Error::MessageLength {
                    expected: l,
                    actual: digits.len() % l,
                },
            });
        }
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
        let run =
            |scratch: &mut ScratchBuf, chunk: &mut [u32]| self.run_chunk(chunk, scratch, encrypt);
        let unexpected = |error| BatchError { index: 0, error };
        match self.mode {
            Mode::Single | Mode::Lockstep => {
                let mut scratch = ScratchBuf::with_size(self.scratch_size(digits.len() / l));
                digits
                    .chunks_mut(CHUNK * l)
                    .try_for_each(|chunk| run(&mut scratch, chunk))
                    .map_err(unexpected)
            }
            Mode::Parallel => {
                let chunk = self.parallel_chunk(digits.len() / l);
                digits
                    .par_chunks_mut(chunk * l)
                    .try_for_each_init(|| ScratchBuf::with_size(self.scratch_size(chunk)), run)
                    .map_err(unexpected)
            }
        }
    }
}
