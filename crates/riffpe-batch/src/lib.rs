//! Riffpe over large arrays: integers (`u64`, `u128`) or flat digit arrays, in lockstep on one
//! core or on every core, with one tweak for all or one per message; both modes give identical
//! results.
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
//! # Ok::<(), riffpe::Error>(())
//! ```
//!
//! # When parallel pays
//!
//! [`Mode::Parallel`] splits the array into chunks of at least one lockstep group
//! ([`riffpe::Fpe::lanes`]: 64 messages with VAES-512, 16 with VAES-256, 8 with AES-NI or ARMv8)
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
use riffpe::integer::{Converter, DigitOrder, Integer, max_value};
use riffpe::{Fpe, MessageError, Radices, ScratchBuf, Tweak};

/// How a batch is spread over cores. Both modes give the same output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Several messages advance together so their AES chains fill the pipeline (one core).
    #[default]
    Lockstep,
    /// Lockstep inside chunks spread over rayon's thread pool.
    Parallel,
}

/// Messages per chunk: the unit of work of a thread, and of the sequential mode's buffers.
/// Large enough to amortise scheduling and fill every lane, small enough to balance.
const CHUNK: usize = 1024;

/// The most lockstep scratch per thread for the lanes' keystreams and keys (the group kernel's
/// rows come on top); radices large enough to exceed it get fewer lanes.
const MAX_LANE_SCRATCH: usize = 32 << 20;

/// Batch operations over one cipher object.
///
/// Errors are [`MessageError`]s whose message index counts from the start of the batch; on
/// error nothing in the batch has changed.
pub struct Batch<'f, 't, D, C> {
    fpe: &'f Fpe<D, C>,
    order: DigitOrder,
    mode: Mode,
    tweak: Tweak<'t>,
}

impl<D: Radices, C> fmt::Debug for Batch<'_, '_, D, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("fpe", self.fpe)
            .field("order", &self.order)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl<D, C> Clone for Batch<'_, '_, D, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<D, C> Copy for Batch<'_, '_, D, C> {}

/// One thread's working memory: digits of a chunk and the cipher's scratch. Reused across
/// chunks, so nothing is allocated per message.
struct Workspace {
    digits: Vec<u32>,
    scratch: ScratchBuf,
}

impl<'f, 't, D, C> Batch<'f, 't, D, C>
where
    D: Radices + Sync,
    C: BlockCipherEncrypt<BlockSize = U16> + Sync,
{
    /// Little-endian integers, [`Mode::Lockstep`], the cipher's fixed tweak.
    pub fn new(fpe: &'f Fpe<D, C>) -> Self {
        Batch {
            fpe,
            order: DigitOrder::LittleEndian,
            mode: Mode::default(),
            tweak: Tweak::Fixed,
        }
    }

    /// How integers map to digits (SPEC's `-B` is [`DigitOrder::BigEndian`]).
    pub fn order(mut self, order: DigitOrder) -> Self {
        self.order = order;
        self
    }

    /// How the batch is spread over cores.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// The tweak: [`Tweak::PerMessage`] takes one per message of the batch.
    ///
    /// ```
    /// use riffpe::{Riffpe, Tweak};
    /// use riffpe_batch::{Batch, Mode};
    ///
    /// let fpe = Riffpe::new(10, 9, &[0x2b; 16], b"")?;
    /// let mut ssns: Vec<u64> = vec![123_45_6789, 123_45_6789];
    /// let customers: [&[u8]; 2] = [b"customer 17", b"customer 18"];
    /// let batch = Batch::new(&fpe).tweak(Tweak::PerMessage(&customers)).mode(Mode::Parallel);
    /// batch.encrypt_ints(&mut ssns)?;
    /// assert_ne!(ssns[0], ssns[1]); // same number, another tweak
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn tweak<'u>(self, tweak: Tweak<'u>) -> Batch<'f, 'u, D, C> {
        Batch {
            fpe: self.fpe,
            order: self.order,
            mode: self.mode,
            tweak,
        }
    }

    /// Encrypts every integer in place.
    ///
    /// Errors, before changing anything, if the domain's size does not fit `T` (a ciphertext
    /// might not) or an integer is not below it.
    pub fn encrypt_ints<T: Integer + Send>(&self, values: &mut [T]) -> Result<(), MessageError> {
        self.ints(values, true)
    }

    /// Decrypts every integer in place (errors as [`Batch::encrypt_ints`]).
    pub fn decrypt_ints<T: Integer + Send>(&self, values: &mut [T]) -> Result<(), MessageError> {
        self.ints(values, false)
    }

    /// Encrypts a flat array of messages, [`Fpe::digits`] digits each.
    pub fn encrypt_digits(&self, digits: &mut [u32]) -> Result<(), MessageError> {
        self.digits(digits, true)
    }

    /// Decrypts a flat array of messages, [`Fpe::digits`] digits each.
    pub fn decrypt_digits(&self, digits: &mut [u32]) -> Result<(), MessageError> {
        self.digits(digits, false)
    }

    /// Messages per chunk in [`Mode::Parallel`]: [`CHUNK`], or for a small array its share per
    /// thread, so that every core gets work, but never fewer than one lockstep group's lanes.
    fn parallel_chunk(&self, messages: usize) -> usize {
        let share = messages.div_ceil(rayon::current_num_threads());
        share.max(self.fpe.lanes()).clamp(1, CHUNK)
    }

    /// Scratch for chunks of up to `messages` messages: as many lanes as the backend runs,
    /// within [`MAX_LANE_SCRATCH`], even for fewer messages than that (from three, where the
    /// core may run a short group padded to the backend's lanes, which costs less), else no
    /// more than there are messages.
    fn scratch(&self, messages: usize) -> ScratchBuf {
        let one = self.fpe.scratch_size();
        let per_lane = one.keystream_bytes + 8 * one.keys;
        let at_most = if messages >= 3 { usize::MAX } else { messages };
        let lanes = self
            .fpe
            .lanes()
            .min(MAX_LANE_SCRATCH / per_lane)
            .min(at_most)
            .max(1);
        ScratchBuf::with_size(self.fpe.scratch_size_for_lanes(lanes))
    }

    /// The number of messages, after checking that the tweaks match it.
    fn count(&self, messages: usize) -> Result<usize, MessageError> {
        match self.tweak {
            Tweak::PerMessage(tweaks) if tweaks.len() != messages => {
                Err(MessageError::TweakCount {
                    messages,
                    tweaks: tweaks.len(),
                })
            }
            _ => Ok(messages),
        }
    }

    /// Encrypts or decrypts `digits` (whole messages, the first of them message `first` of
    /// the batch) on one thread.
    fn run_chunk(
        &self,
        first: usize,
        digits: &mut [u32],
        scratch: &mut ScratchBuf,
        encrypt: bool,
    ) -> Result<(), MessageError> {
        let tweak = self
            .tweak
            .slice(first..first + digits.len() / self.fpe.digits());
        let result = if encrypt {
            self.fpe.encrypt_with(tweak, digits, &mut scratch.scratch())
        } else {
            self.fpe.decrypt_with(tweak, digits, &mut scratch.scratch())
        };
        result.map_err(|e| e.offset(first))
    }

    fn ints<T: Integer + Send>(&self, values: &mut [T], encrypt: bool) -> Result<(), MessageError> {
        let domain = self.fpe.domain();
        let l = domain.digits();
        let count = self.count(values.len())?;
        // Check everything first, so an error leaves the batch untouched.
        let max: T = max_value(domain)?;
        if let Some(message) = values.iter().position(|&v| v > max) {
            return Err(MessageError::ValueOutOfDomain { message });
        }
        let order = self.order;
        let converter = Converter::new(domain, order);
        let chunk = match self.mode {
            Mode::Lockstep => CHUNK,
            Mode::Parallel => self.parallel_chunk(count),
        };
        let run = |work: &mut Workspace, (c, values): (usize, &mut [T])| {
            let first = c * chunk;
            let digits = &mut work.digits[..values.len() * l];
            converter
                .to_digits_many(values, digits)
                .map_err(|e| e.offset(first))?;
            self.run_chunk(first, digits, &mut work.scratch, encrypt)?;
            converter
                .from_digits_many(digits, values)
                .map_err(|e| e.offset(first))
        };
        let workspace = || Workspace {
            digits: vec![0; chunk.min(count) * l],
            scratch: self.scratch(chunk.min(count)),
        };
        match self.mode {
            Mode::Lockstep => {
                let mut work = workspace();
                values
                    .chunks_mut(chunk)
                    .enumerate()
                    .try_for_each(|item| run(&mut work, item))
            }
            Mode::Parallel => values
                .par_chunks_mut(chunk)
                .enumerate()
                .try_for_each_init(workspace, run),
        }
    }

    fn digits(&self, digits: &mut [u32], encrypt: bool) -> Result<(), MessageError> {
        let l = self.fpe.digits();
        // The core's checks over the whole batch first, so an error leaves it untouched.
        self.fpe.check(digits)?;
        let count = self.count(digits.len() / l)?;
        let chunk = match self.mode {
            Mode::Lockstep => CHUNK,
            Mode::Parallel => self.parallel_chunk(count),
        };
        let run = |scratch: &mut ScratchBuf, (c, digits): (usize, &mut [u32])| {
            self.run_chunk(c * chunk, digits, scratch, encrypt)
        };
        let scratch = || self.scratch(chunk.min(count));
        match self.mode {
            Mode::Lockstep => {
                let mut buf = scratch();
                digits
                    .chunks_mut(chunk * l)
                    .enumerate()
                    .try_for_each(|item| run(&mut buf, item))
            }
            Mode::Parallel => digits
                .par_chunks_mut(chunk * l)
                .enumerate()
                .try_for_each_init(scratch, run),
        }
    }
}
