//! The scheme itself: set-up CBC-MAC, digit steps and the two passes (SPEC: "Set-up" to
//! "Encrypt and decrypt"), for one message or for several in lockstep.
//!
//! Inside one message every AES call waits for the one before, so a message is bound by AES
//! latency. Messages in lockstep ("lanes") advance digit step by digit step together, and at
//! each keystream block all their chains go through the AES pipeline in one
//! `encrypt_par_blocks` call. One message is one lane, whose steps take a path of their own
//! (`one_mac`, `one_pick`) that keeps its chain's way from one step's digit to the next step's
//! first block short. Everything runs inside one `encrypt_with_backend` closure per call, so
//! the backend is chosen once.

use core::iter;

use cipher::consts::U16;
use cipher::typenum::Unsigned;
use cipher::{
    Array, Block, BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser,
    ParBlocks,
};

use crate::aes_backend::lockstep::{
    EachRow, LockstepBackend, LockstepClosure, OnAnyBackend, xor_blocks,
};
use crate::domain::{CACHE_LINE, Domain, Layout};
use crate::select::group::{self, Blocks, MadeKeys, Middles, Planes, Work};
use crate::select::{
    self, Arrivals, ConstantTimeGroup, Histogram, Kept, Kernel, KeyLayout, Selection, Slotted,
};
use crate::{Aes, MessageError, Scratch, Tweak};

/// One AES block.
pub(crate) type AesBlock = Block<aes::Aes128>;

/// Which way the digits move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Encrypt,
    Decrypt,
}

/// CBC-MAC over a byte stream fed piecewise (for the set-up prefix, whose tweak may be long).
struct CbcMac {
    state: AesBlock,
    filled: usize,
}

impl CbcMac {
    fn new(iv: &AesBlock) -> Self {
        CbcMac {
            state: *iv,
            filled: 0,
        }
    }

    fn absorb<B: BlockCipherEncBackend<BlockSize = U16>>(&mut self, backend: &B, bytes: &[u8]) {
        for &byte in bytes {
            self.state[self.filled] ^= byte;
            self.filled += 1;
            if self.filled == 16 {
                backend.encrypt_block_inplace(&mut self.state);
                self.filled = 0;
            }
        }
    }

    /// SPEC `pkcs7`: pads with 1..=16 bytes, which always completes a final block.
    fn finish_pkcs7<B: BlockCipherEncBackend<BlockSize = U16>>(mut self, backend: &B) -> AesBlock {
        let pad = 16 - self.filled;
        for _ in 0..pad {
            self.absorb(backend, &[pad as u8]);
        }
        self.state
    }
}

/// SPEC "Set-up": `IV0 = cbcmac(0^16, pkcs7(prefix))`.
fn setup_iv<B: BlockCipherEncBackend<BlockSize = U16>>(
    backend: &B,
    domain: Domain<'_>,
    tweak: &[u8],
) -> AesBlock {
    let mut mac = shared_prefix(backend, domain);
    let (head, head_len) = own_prefix(domain, tweak);
    mac.absorb(backend, &head[..head_len]);
    mac.absorb(backend, tweak);
    mac.finish_pkcs7(backend)
}

/// The CBC-MAC of the part of the set-up prefix that is the same whatever the tweak: RiffpeX's
/// `LE32(r_0) || ':' || … || LE32(r_{l-1}) || '^'`; none of Riffpe's, which holds the tweak's
/// length.
fn shared_prefix<B: BlockCipherEncBackend<BlockSize = U16>>(
    backend: &B,
    domain: Domain<'_>,
) -> CbcMac {
    let mut mac = CbcMac::new(&AesBlock::default());
    if let Domain::Mixed(radices) = domain {
        for (i, radix) in radices.iter().enumerate() {
            if i > 0 {
                mac.absorb(backend, b":");
            }
            mac.absorb(backend, &radix.to_le_bytes());
        }
        mac.absorb(backend, b"^");
    }
    mac
}

/// The rest of the set-up prefix before the tweak (its first `len` bytes): Riffpe's
/// `LE32(n) || LE32(l) || LE64(len(T))`, nothing for RiffpeX.
fn own_prefix(domain: Domain<'_>, tweak: &[u8]) -> ([u8; 16], usize) {
    let mut head = [0u8; 16];
    match domain {
        Domain::Uniform { radix, digits } => {
            head[..4].copy_from_slice(&radix.to_le_bytes());
            head[4..8].copy_from_slice(&(digits as u32).to_le_bytes());
            head[8..].copy_from_slice(&(tweak.len() as u64).to_le_bytes());
            (head, 16)
        }
        Domain::Mixed(_) => (head, 0),
    }
}

/// Copies into `block`, which holds input bytes `from..from + 16`, what it holds of `part`,
/// which lies from input byte `at` on.
fn copy_part(block: &mut [u8; 16], from: usize, part: &[u8], at: usize) {
    let (start, stop) = (from.max(at), (from + 16).min(at + part.len()));
    if start < stop {
        block[start - from..stop - from].copy_from_slice(&part[start - at..stop - at]);
    }
}

/// Computes IV0 for `domain` and `tweak`.
pub(crate) fn setup<C: BlockCipherEncrypt<BlockSize = U16>>(
    cipher: &C,
    domain: Domain<'_>,
    tweak: &[u8],
) -> AesBlock {
    struct Setup<'a> {
        domain: Domain<'a>,
        tweak: &'a [u8],
        out: &'a mut AesBlock,
    }
    impl BlockSizeUser for Setup<'_> {
        type BlockSize = U16;
    }
    impl BlockCipherEncClosure for Setup<'_> {
        fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
            *self.out = setup_iv(backend, self.domain, self.tweak);
        }
    }
    let mut iv = AesBlock::default();
    cipher.encrypt_with_backend(Setup {
        domain,
        tweak,
        out: &mut iv,
    });
    iv
}

/// How many blocks the cipher's backend encrypts at once on this CPU (with [`crate::Aes`]: 64
/// for VAES-512 and for AES-NI, 16 for VAES-256 without AVX-512, 8 for ARMv8): the number of lanes worth running
/// together (more lanes, in several backend calls per block, only add scratch).
pub(crate) fn backend_lanes<C: BlockCipherEncrypt<BlockSize = U16>>(cipher: &C) -> usize {
    struct Lanes<'a>(&'a mut usize);
    impl BlockSizeUser for Lanes<'_> {
        type BlockSize = U16;
    }
    impl BlockCipherEncClosure for Lanes<'_> {
        fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, _: &B) {
            *self.0 = B::ParBlocksSize::USIZE;
        }
    }
    let mut lanes = 1;
    cipher.encrypt_with_backend(Lanes(&mut lanes));
    lanes
}

/// Runs the engine's closure on a cipher's AES backend. The engine is monomorphised once per
/// backend of the cipher, which is most of what building a crate on this one costs, so callers
/// hold this as a function pointer: [`on_backend`] for any cipher, and [`on_aes_backend`] for
/// [`Aes`], compiled once in this crate rather than again in each crate that uses the
/// default cipher.
pub(crate) type Runner<C> = fn(&C, Lockstep<'_>);

/// The [`Runner`] of any cipher, compiled where the cipher type is chosen.
pub(crate) fn on_backend<C: BlockCipherEncrypt<BlockSize = U16>>(cipher: &C, job: Lockstep<'_>) {
    cipher.encrypt_with_backend(OnAnyBackend(job));
}

/// The [`Runner`] of [`Aes`]: not generic and never inlined, so it is compiled here only.
#[inline(never)]
pub(crate) fn on_aes_backend(cipher: &Aes, job: Lockstep<'_>) {
    cipher.encrypt_with_lockstep_backend(job);
}

/// A keyed cipher over a domain: what every call needs besides the messages.
pub(crate) struct Keyed<'a, C> {
    pub cipher: &'a C,
    pub runner: Runner<C>,
    pub domain: Domain<'a>,
    pub layout: &'a Layout,
    /// IV0 of the tweak fixed at construction.
    pub iv: &'a AesBlock,
}

/// Checks the messages (`l` digits each, back to back), their tweaks and the scratch, then
/// encrypts or decrypts them in place, up to the backend's lanes at a time. Nothing is
/// modified unless every check passes.
pub(crate) fn run<C: BlockCipherEncrypt<BlockSize = U16>>(
    keyed: Keyed<'_, C>,
    tweak: Tweak<'_>,
    messages: &mut [u32],
    scratch: &mut Scratch<'_>,
    direction: Direction,
) -> Result<(), MessageError> {
    let Keyed {
        cipher,
        runner,
        domain,
        layout,
        iv,
    } = keyed;
    let count = check(domain, messages)?;
    if let Tweak::PerMessage(tweaks) = tweak
        && tweaks.len() != count
    {
        return Err(MessageError::TweakCount {
            messages: count,
            tweaks: tweaks.len(),
        });
    }
    // As many lanes as the backend runs at once, the messages need and the scratch holds.
    let one = layout.lane_least();
    let fit = scratch.keystream.len() / one.keystream_bytes;
    if fit == 0 || scratch.keys.len() < one.keys {
        return Err(MessageError::ScratchTooSmall {
            keystream_needed: one.keystream_bytes,
            keystream_given: scratch.keystream.len(),
            keys_needed: one.keys,
            keys_given: scratch.keys.len(),
        });
    }
    if count == 0 {
        return Ok(());
    }
    let full = backend_lanes(cipher).min(group::MAX_LANES).min(fit);
    // Rows of blocks and of keys start on a cache line where the scratch has room for that
    // (as sized by `Layout::scratch_size`), so that no vector load or store straddles two.
    let need = layout.lanes_need(full);
    let job = Lockstep {
        domain,
        layout,
        fixed: iv,
        tweak,
        messages,
        lanes: full,
        keystream: from_cache_line(scratch.keystream, need.keystream_bytes),
        keys: from_cache_line(scratch.keys, need.keys),
        direction,
        padded: None,
    };
    if count % full > 1 && layout.reshapes_short_group() && full * layout.digits <= PADDED_DIGITS {
        with_padding(runner, cipher, job);
    } else {
        runner(cipher, job);
    }
    Ok(())
}

/// Digits of a padded group: it fits on the stack up to this many.
const PADDED_DIGITS: usize = group::MAX_LANES * 32;

/// Where a group shorter than the backend's lanes runs padded to more
/// ([`LockstepBackend::group_lanes`]): its messages, then messages of zeros whose results are
/// dropped, and the tweaks of each (the padding's empty). Only a call's last group is short, so
/// the buffer is used once and what follows that group's messages stays as it was made.
struct Padded<'a> {
    messages: &'a mut [u32; PADDED_DIGITS],
    tweaks: &'a mut [&'a [u8]; group::MAX_LANES],
}

/// Runs `job` on `runner` with a stack buffer for its short group, wiped after.
#[inline(never)]
fn with_padding<C>(runner: Runner<C>, cipher: &C, job: Lockstep<'_>) {
    let mut messages = [0u32; PADDED_DIGITS];
    let mut tweaks: [&[u8]; group::MAX_LANES] = [&[]; group::MAX_LANES];
    let padded = Padded {
        messages: &mut messages,
        tweaks: &mut tweaks,
    };
    runner(
        cipher,
        Lockstep {
            padded: Some(padded),
            ..job
        },
    );
    crate::scratch::wipe(&mut messages);
}

/// `buffer` from its first cache line on, if at least `need` elements remain there; else whole.
fn from_cache_line<T>(buffer: &mut [T], need: usize) -> &mut [T] {
    let skip = buffer.as_ptr().align_offset(CACHE_LINE);
    // `align_offset` is in elements, and `usize::MAX` where no offset aligns.
    let fits = skip < CACHE_LINE && buffer.len().saturating_sub(skip) >= need;
    &mut buffer[if fits { skip } else { 0 }..]
}

/// Checks that `messages` are whole messages of `domain`, each digit below its radix, and
/// returns how many there are.
pub(crate) fn check(domain: Domain<'_>, messages: &[u32]) -> Result<usize, MessageError> {
    let digits = domain.digits();
    if !messages.len().is_multiple_of(digits) {
        return Err(MessageError::MessageLength {
            expected: digits,
            actual: messages.len(),
        });
    }
    // One pass with no branch per digit for a batch in range; the loop below names a bad digit.
    let in_range = match domain {
        Domain::Uniform { radix, .. } => messages.iter().fold(0, |max, &d| max.max(d)) < radix,
        Domain::Mixed(radices) => messages.chunks_exact(digits).all(|message| {
            let below = message.iter().zip(radices).map(|(&d, &r)| d < r);
            below.fold(true, |all, below| all & below)
        }),
    };
    if in_range {
        return Ok(messages.len() / digits);
    }
    for (m, message) in messages.chunks_exact(digits).enumerate() {
        domain.check_message(message).map_err(|e| e.offset(m))?;
    }
    Ok(messages.len() / digits)
}

/// Messages in groups of `lanes`, as a closure over the AES backend.
pub(crate) struct Lockstep<'a> {
    domain: Domain<'a>,
    layout: &'a Layout,
    fixed: &'a AesBlock,
    tweak: Tweak<'a>,
    messages: &'a mut [u32],
    lanes: usize,
    keystream: &'a mut [u8],
    keys: &'a mut [u64],
    direction: Direction,
    /// Where a short group runs padded, if the call's short group may run as the backend runs
    /// it for less (padded, or in parts); `None` runs every group as it is.
    padded: Option<Padded<'a>>,
}

impl LockstepClosure for Lockstep<'_> {
    #[inline(always)]
    fn call<B: LockstepBackend>(self, backend: &B) {
        // IV0 of every lane: shared by all of them unless each message has its own tweak.
        let shared = match self.tweak {
            Tweak::Fixed => *self.fixed,
            Tweak::Bytes(tweak) => setup_iv(backend, self.domain, tweak),
            Tweak::PerMessage(_) => AesBlock::default(),
        };
        let digits = self.domain.digits();
        // The last group, where it is short, runs as the backend runs it for less if the call
        // may reshape it: padded to more lanes, or in parts of fewer.
        let short = self.messages.len() / digits % self.lanes;
        let short_runs_as = match self.padded {
            Some(_) if short > 0 => B::group_lanes(short).min(self.lanes),
            _ => short,
        };
        // Constant-time π of one message keeps its keys as they arrive (ranked, or for a
        // search after the chain), wherever a group of one runs; what that takes lives here,
        // set up once per call, not once per step.
        let keeps = (self.lanes == 1 || short_runs_as == 1)
            && self.direction == Direction::Encrypt
            && self.layout.selection == Selection::ConstantTime;
        let radices = (0..digits).map(|i| self.domain.radix(i).unwrap_or(2));
        // Made here and borrowed: moving it into the group would copy its kilobytes.
        let mut kept = keeps.then(|| Kept::for_radices(radices, self.layout.one_message));
        // A group's digits, held digit by digit while it runs, where they fit. Decided by
        // the backend's lanes, known when this is compiled, so that a portable backend's
        // two or four lanes (a microcontroller's small stack) do without the buffer.
        let mut storage;
        let columns: &mut [u32] = match B::ParBlocksSize::USIZE >= COLUMN_LANES && self.lanes > 1 {
            true => {
                storage = [0u32; COLUMN_DIGITS];
                &mut storage
            }
            false => &mut [],
        };
        let mut group = Group {
            backend,
            ivs: ParBlocks::<B>::default(),
            columns,
            layout: self.layout,
            macs: self.lanes * self.layout.keystream_stride(),
            encoded: None,
            keystream: self.keystream,
            keys: self.keys,
            kept: kept.as_mut(),
        };
        group.ivs.fill(shared);
        // With a tweak per message, the part of the set-up every message shares, once a call.
        let per_message = match self.tweak {
            Tweak::PerMessage(tweaks) => Some((tweaks, shared_prefix(backend, self.domain))),
            Tweak::Fixed | Tweak::Bytes(_) => None,
        };
        let mut padded = self.padded;
        // Whole groups, then the short one: whole, or in parts of `short_runs_as` where the
        // backend runs fewer lanes for less.
        let part = short_runs_as.min(short).max(1);
        let (whole, last) = self
            .messages
            .split_at_mut(self.messages.len() - short * digits);
        let groups = whole
            .chunks_mut(self.lanes * digits)
            .chain(last.chunks_mut(part * digits));
        let mut first = 0;
        for messages in groups {
            let lanes = messages.len() / digits;
            let prefix = per_message.as_ref().map(|(tweaks, prefix)| {
                let tweaks: &[&[u8]] = &tweaks[first..][..lanes];
                (tweaks, prefix)
            });
            first += lanes;
            // Only the short group runs as more lanes than it has: padded.
            let pads = short_runs_as > lanes;
            // One call site, so that the group's code is inlined once.
            let (work, work_lanes, work_prefix) = match padded.as_mut().filter(|_| pads) {
                Some(padded) => {
                    padded.messages[..messages.len()].copy_from_slice(messages);
                    let prefix = prefix.map(|(tweaks, prefix)| {
                        padded.tweaks[..lanes].copy_from_slice(tweaks);
                        (&padded.tweaks[..short_runs_as], prefix)
                    });
                    (
                        &mut padded.messages[..short_runs_as * digits],
                        short_runs_as,
                        prefix,
                    )
                }
                None => (&mut *messages, lanes, prefix),
            };
            group.run(self.domain, work, work_lanes, work_prefix, self.direction);
            if let Some(padded) = padded.as_ref().filter(|_| pads) {
                messages.copy_from_slice(&padded.messages[..messages.len()]);
            }
        }
        // Only what held digits: a call of a few messages wipes a few.
        let used = (self.lanes * digits).min(group.columns.len());
        crate::scratch::wipe(&mut group.columns[..used]);
    }
}

/// Digits of a group that it holds digit by digit while it runs: up to this many.
const COLUMN_DIGITS: usize = group::MAX_LANES * 32;

/// The fewest lanes of a backend whose groups run digit by digit.
const COLUMN_LANES: usize = 8;

/// Where digit `i` of lane `l` lies in a group's messages: lane by lane at `l·digits + i`,
/// or digit by digit, every lane's digit `i` side by side, at `i·lanes + l`. A step reads and
/// writes one digit of every lane, so the group runs digit by digit where it has room.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arranged {
    ByLane,
    ByDigit,
}

impl Arranged {
    /// Where digit `i` of lane `lane` lies, of `lanes` messages of `digits` digits.
    #[inline(always)]
    fn at(self, lane: usize, i: usize, lanes: usize, digits: usize) -> usize {
        match self {
            Arranged::ByLane => lane * digits + i,
            Arranged::ByDigit => i * lanes + lane,
        }
    }

    /// Digit `i` of each of the `column.len()` messages of `messages` into `column`. Lane by
    /// lane, walked message by message: no multiplication a lane.
    #[inline(always)]
    fn gather(self, messages: &[u32], i: usize, column: &mut [u32]) {
        let lanes = column.len();
        match self {
            Arranged::ByDigit => column.copy_from_slice(&messages[i * lanes..][..lanes]),
            Arranged::ByLane => {
                let digits = messages.len() / lanes;
                for (digit, message) in column.iter_mut().zip(messages.chunks_exact(digits)) {
                    *digit = message[i];
                }
            }
        }
    }

    /// [`Arranged::gather`] the other way: `column` into digit `i` of each message.
    #[inline(always)]
    fn scatter(self, column: &[u32], i: usize, messages: &mut [u32]) {
        let lanes = column.len();
        match self {
            Arranged::ByDigit => messages[i * lanes..][..lanes].copy_from_slice(column),
            Arranged::ByLane => {
                let digits = messages.len() / lanes;
                for (&digit, message) in column.iter().zip(messages.chunks_exact_mut(digits)) {
                    message[i] = digit;
                }
            }
        }
    }
}

/// `to[c·rows + r] = from[r·cols + c]`: a `rows` × `cols` matrix, row by row, turned. Each
/// row of `to` is written whole, from a column of `from`.
#[inline(always)]
fn transpose(from: &[u32], to: &mut [u32], rows: usize, cols: usize) {
    for (c, column) in to.chunks_exact_mut(rows).take(cols).enumerate() {
        for (x, row) in column.iter_mut().zip(from.chunks_exact(cols)) {
            *x = row[c];
        }
    }
}

/// The working state of one group of lanes.
struct Group<'a, B: LockstepBackend> {
    backend: &'a B,
    /// IV0 of each lane's message.
    ivs: ParBlocks<B>,
    layout: &'a Layout,
    /// Where the lanes' CBC-MAC inputs start in `keystream` (`layout.mac_len()` bytes a lane),
    /// after a keystream buffer per lane (`layout.keystream_stride()` bytes).
    macs: usize,
    /// The position whose step the CBC-MAC inputs were last written for, if any in this group.
    encoded: Option<usize>,
    keystream: &'a mut [u8],
    /// The keys of one lane's values, then its bucket counts (`layout.keys_stride()` entries).
    keys: &'a mut [u64],
    /// For constant-time π of one message: what it keeps of its keys as they arrive.
    kept: Option<&'a mut Kept>,
    /// Room for the messages digit by digit ([`Arranged::ByDigit`]); empty for one lane.
    columns: &'a mut [u32],
}

impl<B: LockstepBackend> Group<'_, B> {
    /// Encrypts or decrypts the group's `lanes` messages, their IVs set up from `tweaks` after
    /// the shared `prefix` if each has its own.
    #[inline(always)]
    fn run(
        &mut self,
        domain: Domain<'_>,
        messages: &mut [u32],
        lanes: usize,
        tweaks: Option<(&[&[u8]], &CbcMac)>,
        direction: Direction,
    ) {
        let digits = domain.digits();
        self.encoded = None;
        if let Some((tweaks, prefix)) = tweaks {
            self.set_up_ivs(domain, prefix, tweaks);
        }
        let columns = core::mem::take(&mut self.columns);
        let count = messages.len();
        let arranged = match lanes > 1 && columns.len() >= count {
            true => Arranged::ByDigit,
            false => Arranged::ByLane,
        };
        let work = match arranged {
            Arranged::ByDigit => {
                transpose(messages, &mut columns[..count], lanes, digits);
                &mut columns[..count]
            }
            Arranged::ByLane => &mut *messages,
        };
        // SPEC: encrypt f = 0, 1 with i ascending; decrypt f = 1, 0 with i descending.
        match direction {
            Direction::Encrypt => {
                for phase in 0..2 {
                    for i in 0..digits {
                        self.step(domain, work, arranged, lanes, i, phase, direction);
                    }
                }
            }
            Direction::Decrypt => {
                for phase in (0..2).rev() {
                    for i in (0..digits).rev() {
                        self.step(domain, work, arranged, lanes, i, phase, direction);
                    }
                }
            }
        }
        if arranged == Arranged::ByDigit {
            transpose(&columns[..count], messages, digits, lanes);
        }
        self.columns = columns;
    }

    /// [`setup_iv`] of each lane's own tweak (one a lane) into `ivs`, from `prefix`, the
    /// set-up they share: the chains side by side, each backend call encrypting a block of
    /// every one, where one chain at a time would wait on each block.
    #[inline(always)]
    fn set_up_ivs(&mut self, domain: Domain<'_>, prefix: &CbcMac, tweaks: &[&[u8]]) {
        let (filled, lanes) = (prefix.filled, tweaks.len());
        // The rest of the prefix before a tweak is as long whatever the tweak.
        let head_len = own_prefix(domain, &[]).1;
        // A lane's input goes on from byte `filled` of the first block and ends (with its
        // padding) in block `last`.
        let end = |tweak: &[u8]| filled + head_len + tweak.len();
        let last = |tweak: &[u8]| end(tweak) / 16;
        let rows = tweaks.iter().map(|t| last(t) + 1).max().unwrap_or(0);
        let mut states = ParBlocks::<B>::default();
        states[..lanes].fill(prefix.state);
        for row in 0..rows {
            for (state, tweak) in states.iter_mut().zip(tweaks) {
                if row > last(tweak) {
                    continue;
                }
                // Bytes 16·row to 16·row + 16 of the lane's padded input, with those the
                // shared prefix absorbed already zero.
                let mut block = [(16 - end(tweak) % 16) as u8; 16];
                if row == 0 {
                    block[..filled].fill(0);
                }
                let (head, _) = own_prefix(domain, tweak);
                copy_part(&mut block, 16 * row, &head[..head_len], filled);
                copy_part(&mut block, 16 * row, tweak, filled + head_len);
                xor_blocks(core::slice::from_mut(state), &block);
            }
            encrypt_states(self.backend, &mut states, lanes);
            for ((iv, state), tweak) in self.ivs.iter_mut().zip(&states).zip(tweaks) {
                if row == last(tweak) {
                    *iv = *state;
                }
            }
        }
    }

    /// SPEC "One digit step" at position `i`, phase `f`, for each lane.
    ///
    /// Inlined all the way into the backend's closure call: only there is the code compiled
    /// with the AES target features, so that AES rounds inline and a chain's state stays in a
    /// register instead of a store-to-load round trip per block.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        domain: Domain<'_>,
        messages: &mut [u32],
        arranged: Arranged,
        lanes: usize,
        i: usize,
        phase: u32,
        direction: Direction,
    ) {
        let digits = domain.digits();
        let width = self.layout.width;
        let ks_stride = self.layout.keystream_stride();
        let keys_stride = self.layout.keys_stride();
        let n = domain.radix(i).unwrap_or(2);
        let keyed = KeyLayout::new(n, self.layout.bytes_per_value);

        // S_0 = cbcmac(IV0, pkcs7(LEw(m_0) … LEw(m_{l-1}) || LEw(i))), slot i holding LEw(f).
        // Written whole at a group's first step; after that, a step changes three slots.
        let mac_len = self.layout.mac_len();
        let previous = self.encoded.replace(i);
        let forward = direction == Direction::Encrypt;
        if lanes == 1 {
            let messages = &mut messages[..digits];
            let chain = match width {
                1 => self.one_mac::<1>(messages, previous, i, phase),
                2 => self.one_mac::<2>(messages, previous, i, phase),
                _ => self.one_mac::<4>(messages, previous, i, phase),
            };
            return self.one_pick(messages, chain, keyed, i, forward);
        }
        let inputs = MacInputs {
            macs: &mut self.keystream[self.macs..][..lanes * mac_len],
            lanes,
            messages: &messages[..lanes * digits],
            arranged,
        };
        match (width, previous) {
            (1, None) => encode::<1>(inputs, i, phase),
            (2, None) => encode::<2>(inputs, i, phase),
            (_, None) => encode::<4>(inputs, i, phase),
            (1, Some(previous)) => update::<1>(inputs, previous, i, phase),
            (2, Some(previous)) => update::<2>(inputs, previous, i, phase),
            (_, Some(previous)) => update::<4>(inputs, previous, i, phase),
        }
        // Keystream S_1 || S_2 || …, then m_i = π(m_i) or π⁻¹(m_i).
        let selection = self.layout.selection;
        // Only fast selection looks at the histogram, and only forward.
        let count = forward && selection == Selection::Fast;
        let blocks = keyed.keystream_blocks();
        if let Some(kernel) = group_kernel(self.layout.kernel)
            && self.keys.len() >= Work::words(n)
        {
            // Many chains are bound by AES throughput: the keystream is stored block row by
            // block row (S_1, S_2, …, every lane's block side by side) while the chains stay in
            // registers, and selection runs for all lanes at once, lanes innermost (see
            // `select::group`).
            let row_bytes = lanes * 16;
            let (keystream, macs) = self.keystream.split_at_mut(self.macs);
            let macs = &macs[..lanes * mac_len];
            let (rows, _) = Array::slice_as_chunks_mut(&mut keystream[..(blocks + 1) * row_bytes]);
            // Where the kernel reads them, keys are made from the blocks still in registers, so
            // that the selection loads rows of keys instead of building them from the stored
            // keystream (kept for ties).
            let whole = lanes == B::ParBlocksSize::USIZE;
            let room = |words: usize| self.keys.len() >= words + Work::words(n);
            // Or, above radix 16 where AVX2 runs, only their two leading octets.
            let planes = match whole && group::planes_in_loop(&keyed) {
                true => self.layout.kernel.planes(n, lanes, forward),
                false => None,
            }
            .filter(|_| room(Planes::words(n, lanes)));
            // And for constant-time π, the next four octets of every key beside them.
            let middles = planes
                .and_then(|_| self.layout.kernel.middles(forward))
                .filter(|_| room(Planes::words(n, lanes) + Middles::words(n, lanes)));
            let made = match whole && planes.is_none() {
                true => self.layout.kernel.made_keys(forward, &keyed),
                false => None,
            }
            .filter(|_| room(n as usize * lanes));
            let (made_keys, work_keys) = self.keys.split_at_mut(match (made, planes) {
                (Some(_), _) => n as usize * lanes,
                (None, Some(_)) => {
                    Planes::words(n, lanes) + middles.map_or(0, |_| Middles::words(n, lanes))
                }
                (None, None) => 0,
            });
            if lanes == B::ParBlocksSize::USIZE && planes.is_none() && lanes <= REGISTER_LANES {
                // A fresh local, used only whole, stays in registers from row to row, so no
                // block waits on a store and a load; `states`, XORed block by block, would not.
                let mut chains = mac_chains(self.backend, &self.ivs, macs, lanes);
                for (j, row) in rows.chunks_exact_mut(lanes).take(blocks).enumerate() {
                    self.backend.encrypt_par_blocks_inplace(&mut chains);
                    row.copy_from_slice(&chains);
                    if let Some(made) = made {
                        let (blocks, _) = chains.as_flattened().as_chunks::<16>();
                        made.make(&keyed, j, blocks, made_keys);
                    }
                }
            } else {
                // The backend's own row loop: Riffpe's VAES-512 keeps the chains in registers
                // there; through the trait, each row is encrypted from the one before in memory
                // (with more chains than `REGISTER_LANES`, a local would cost a copy of each row).
                let rows = &mut rows[..blocks * lanes];
                let each = MadeFromRows {
                    layout: &keyed,
                    planes,
                    middles,
                    made,
                    words: made_keys,
                };
                self.backend
                    .encrypt_rows(&self.ivs[..lanes], macs, rows, each);
            }
            let blocks = Blocks::new(&self.keystream[..(blocks + 1) * row_bytes], lanes, keyed);
            let blocks = match (made, planes) {
                (Some(_), _) => blocks.with_keys(made_keys),
                (None, Some(_)) => {
                    let (octets, after) = made_keys.split_at(Planes::words(n, lanes));
                    match middles {
                        Some(_) => blocks.with_planes(octets).with_middles(after),
                        None => blocks.with_planes(octets),
                    }
                }
                (None, None) => blocks,
            };
            let work = Work::new(work_keys, n);
            let mut column = [0u32; group::MAX_LANES];
            arranged.gather(messages, i, &mut column[..lanes]);
            match kernel {
                GroupKernel::Fast(kernel) if forward => kernel.forward(&blocks, work, &mut column),
                GroupKernel::Fast(kernel) => kernel.inverse(&blocks, work, &mut column),
                GroupKernel::ConstantTime(kernel) => {
                    kernel.select(&blocks, work, &mut column, forward)
                }
            }
            arranged.scatter(&column[..lanes], i, messages);
        } else {
            // Many chains are bound by AES throughput: keep the block loop lean, then make each
            // lane's keys from its keystream, contiguous and cache-friendly.
            let macs = &self.keystream[self.macs..][..lanes * mac_len];
            let mut states = mac_chains(self.backend, &self.ivs, macs, lanes);
            for block in 0..blocks {
                encrypt_states(self.backend, &mut states, lanes);
                let at = block * 16;
                let lane_keystreams = self.keystream.chunks_exact_mut(ks_stride);
                for (keystream, state) in lane_keystreams.zip(&states[..lanes]) {
                    keystream[at..at + 16].copy_from_slice(state);
                }
            }
            let (keys, counts) =
                self.keys[..keys_stride].split_at_mut(self.layout.max_radix as usize);
            for lane in 0..lanes {
                let keystream = &self.keystream[lane * ks_stride..][..ks_stride];
                let digit = &mut messages[arranged.at(lane, i, lanes, digits)];
                *digit = if !forward && selection == Selection::Fast {
                    // Ranking needs no stored keys: one pass over the keystream.
                    keyed.inverse_from_keystream(keystream, *digit)
                } else {
                    // Counted, not filed: filing costs more than the gathering pass it spares here.
                    let mut histogram = keyed.histogram(counts, false);
                    keyed.make_keys(keystream, keys, &mut histogram, count);
                    keyed.select_with(selection, keystream, keys, &histogram, forward, *digit)
                };
            }
        }
    }

    /// One message's chain through the CBC-MAC of its step at position `i`, phase `phase`
    /// (`previous`: the position of the step before, if any in this call), its slots `W` bytes
    /// wide.
    ///
    /// The chain waits on each block, and its input's first change is the digit the last step
    /// picked: that is patched into each block in a register on the way, not stored narrow
    /// and loaded wide.
    #[inline(always)]
    fn one_mac<const W: usize>(
        &mut self,
        message: &[u32],
        previous: Option<usize>,
        i: usize,
        phase: u32,
    ) -> AesBlock {
        let macs = &mut self.keystream[self.macs..][..self.layout.mac_len()];
        let mut chain = self.ivs[0];
        let slots = match previous {
            Some(previous) => [
                (previous, message[previous]),
                (i, phase),
                (message.len(), i as u32),
            ],
            None => {
                let inputs = MacInputs {
                    macs: &mut *macs,
                    lanes: 1,
                    messages: message,
                    arranged: Arranged::ByLane,
                };
                encode::<W>(inputs, i, phase);
                // Written already: patching the step's own slots again changes nothing.
                [(i, phase); 3]
            }
        };
        absorb_patched::<B, W>(self.backend, &mut chain, macs, slots);
        chain
    }

    /// One message's keystream from `chain`, its keys made and kept while the chain runs,
    /// then `message[i] = π(message[i])` if `forward`, else π⁻¹.
    #[inline(always)]
    fn one_pick(
        &mut self,
        message: &mut [u32],
        chain: AesBlock,
        keyed: KeyLayout,
        i: usize,
        forward: bool,
    ) {
        let selection = self.layout.selection;
        let blocks = keyed.keystream_blocks();
        // Only fast selection looks at the histogram, and only forward.
        let count = forward && selection == Selection::Fast;
        // The chain is bound by AES latency: keys are made while the next block is in flight,
        // and filed by bucket, which spares selection a pass over all keys.
        let keystream = &mut self.keystream[..self.layout.keystream_stride()];
        let (lane_keys, beside) = self.keys.split_at_mut(self.layout.keys_stride());
        let (keys, counts) = lane_keys.split_at_mut(self.layout.max_radix as usize);
        // Up to a radix, they are filed into slots by bucket instead, where the scratch has
        // them (`Layout::lanes_need`).
        let mut slotted = match count && keyed.slotted() {
            true => beside.first_chunk_mut().map(Slotted::new),
            false => None,
        };
        let mut histogram = keyed.histogram(counts, count && slotted.is_none());
        // Constant-time π ranks the keys as they come, in the shadow of the chain, or keeps
        // them for a search after it.
        let mut arrivals = self.kept.as_mut().and_then(|kept| kept.step(keyed.n));
        let sink = KeySink {
            keys,
            histogram: &mut histogram,
            arrivals: arrivals.as_mut().map(Arrivals::reborrow),
            slotted: slotted.as_mut(),
        };
        single_chain(self.backend, chain, blocks, &keyed, keystream, sink);
        let digit = &mut message[i];
        *digit = match (&mut arrivals, &slotted) {
            (Some(arrivals), _) => keyed.pick_arrived(keystream, keys, arrivals, *digit),
            (None, Some(slotted)) => {
                keyed.forward_slotted(keystream, slotted, keys, &mut histogram, *digit)
            }
            (None, None) => {
                keyed.select_with(selection, keystream, keys, &histogram, forward, *digit)
            }
        };
    }
}

/// A group kernel that selects for all lanes of a step at once.
#[derive(Clone, Copy)]
enum GroupKernel {
    Fast(select::Group),
    ConstantTime(ConstantTimeGroup),
}

/// The group kernel of a lockstep step, if `kernel` is one (else lanes select one by one).
#[inline(always)]
fn group_kernel(kernel: Kernel) -> Option<GroupKernel> {
    match kernel {
        Kernel::Group(group) => Some(GroupKernel::Fast(group)),
        Kernel::ConstantTimeGroup(group) => Some(GroupKernel::ConstantTime(group)),
        Kernel::PerLane | Kernel::ConstantTime => None,
    }
}

/// The chains of the first `lanes` lanes from `ivs` through their CBC-MACs, whose inputs
/// `macs` lie row by row.
#[inline(always)]
fn mac_chains<B: LockstepBackend>(
    backend: &B,
    ivs: &ParBlocks<B>,
    macs: &[u8],
    lanes: usize,
) -> ParBlocks<B> {
    let mut chains = ivs.clone();
    for row in macs.chunks_exact(lanes * 16) {
        // Whole vectors of chains XORed at once when every lane runs: lane by lane, the
        // backend's wide loads would wait on narrower stores.
        if lanes == B::ParBlocksSize::USIZE {
            xor_blocks(&mut chains, row);
        } else {
            xor_blocks(&mut chains[..lanes], row);
        }
        encrypt_states(backend, &mut chains, lanes);
    }
    chains
}

/// Encrypts the chains of the first `lanes` lanes, all in one backend call.
#[inline(always)]
fn encrypt_states<B: LockstepBackend>(backend: &B, states: &mut ParBlocks<B>, lanes: usize) {
    if lanes == B::ParBlocksSize::USIZE {
        backend.encrypt_par_blocks_inplace(states);
    } else if lanes == 1 {
        backend.encrypt_block_inplace(&mut states[0]);
    } else {
        backend.encrypt_tail_blocks_inplace(&mut states[..lanes]);
    }
}

/// The most lockstep chains kept in a local from row to row (16 blocks are eight VAES-256
/// registers). With more (64 on VAES-512) the local lives in memory, and copying each row out
/// of it is a pass of its own: there a backend's `encrypt_rows` runs the rows.
const REGISTER_LANES: usize = 16;

/// What the AES loop makes from each row of a step's keystream: the two leading octets of
/// every value as planes, else its keys, if either.
struct MadeFromRows<'a> {
    layout: &'a KeyLayout,
    planes: Option<Planes>,
    /// Made after the planes, if they are.
    middles: Option<Middles>,
    made: Option<MadeKeys>,
    /// Where they go.
    words: &'a mut [u64],
}

impl EachRow for MadeFromRows<'_> {
    #[inline(always)]
    fn row(&mut self, j: usize, row: &[AesBlock]) {
        let (row, _) = Array::slice_as_flattened(row).as_chunks::<16>();
        if let Some(planes) = self.planes {
            let (octets, after) = self
                .words
                .split_at_mut(Planes::words(self.layout.n, row.len()));
            let middles = self.middles.map(|middles| (middles, after));
            planes.make(self.layout, j, row, octets, middles);
        } else if let Some(made) = self.made {
            made.make(self.layout, j, row, self.words);
        }
    }
}

/// Where one chain's keys go as they are made.
struct KeySink<'k, 'c> {
    keys: &'k mut [u64],
    histogram: &'k mut Histogram<'c>,
    arrivals: Option<Arrivals<'k>>,
    slotted: Option<&'k mut Slotted<'c>>,
}

/// The keystream of one lane and its keys, generated block by block; the keys are filed into
/// `slotted` if given, else into the histogram if it files keys, else stored in order (and
/// kept as `arrivals` ask, if any).
#[inline(always)]
fn single_chain<B: BlockCipherEncBackend<BlockSize = U16>>(
    backend: &B,
    mut state: AesBlock,
    blocks: usize,
    keyed: &KeyLayout,
    keystream: &mut [u8],
    sink: KeySink<'_, '_>,
) {
    let KeySink {
        keys,
        histogram,
        mut arrivals,
        mut slotted,
    } = sink;
    let n = keyed.n as usize;
    let file = histogram.files();
    let mut next = 0;
    backend.encrypt_block_inplace(&mut state);
    for block in 0..blocks {
        keystream[block * 16..][..16].copy_from_slice(&state);
        // The next block goes in flight before this one's keys are made, so that making them
        // runs beside it, not after it.
        if block + 1 < blocks {
            backend.encrypt_block_inplace(&mut state);
        }
        let produced = (block + 1) * 16;
        while next < n && keyed.ready_at(next) <= produced {
            let key = keyed.key(keystream, next);
            if let Some(slotted) = &mut slotted {
                slotted.file(keyed, key);
            } else if file {
                keyed.file(keys, histogram, key);
            } else {
                keys[next] = key;
                if let Some(arrivals) = &mut arrivals {
                    keyed.arrive(key, next, arrivals);
                }
            }
            next += 1;
        }
    }
}

/// One chain through the CBC-MAC of `macs`, one lane's input, after writing `LEw(value)` into
/// each of `slots` in order: each block is loaded whole, patched in a register, stored back
/// and XORed into the chain.
#[inline(always)]
fn absorb_patched<B: BlockCipherEncBackend<BlockSize = U16>, const W: usize>(
    backend: &B,
    chain: &mut AesBlock,
    macs: &mut [u8],
    slots: [(usize, u32); 3],
) {
    let (rows, _) = macs.as_chunks_mut::<16>();
    for (r, row) in rows.iter_mut().enumerate() {
        let mut word = u128::from_le_bytes(*row);
        for (slot, value) in slots {
            if slot * W / 16 == r {
                let shift = 8 * (slot * W % 16);
                let mask = (u128::MAX >> (128 - 8 * W)) << shift;
                word = (word & !mask) | ((u128::from(value) << shift) & mask);
            }
        }
        *row = word.to_le_bytes();
        let sum = u128::from_le_bytes((*chain).into()) ^ word;
        *chain = sum.to_le_bytes().into();
        backend.encrypt_block_inplace(chain);
    }
}

/// The lanes' CBC-MAC inputs, which lie block by block (block `j` of lane `l` at byte
/// `(j·lanes + l)·16`), so that each block of every chain's input is one row; and the lanes'
/// messages they encode.
struct MacInputs<'a> {
    macs: &'a mut [u8],
    lanes: usize,
    messages: &'a [u32],
    arranged: Arranged,
}

impl MacInputs<'_> {
    /// Writes `LEw(value)` of each of `values` (one a lane) into slot `slot` of the lanes'
    /// inputs (a slot never straddles a block: W divides 16), lane by lane at a fixed stride.
    #[inline(always)]
    fn put<const W: usize>(&mut self, slot: usize, values: impl Iterator<Item = u32>) {
        let (block, offset) = (slot * W / 16, slot * W % 16);
        let row = &mut self.macs[block * self.lanes * 16..][..self.lanes * 16];
        let (blocks, _) = row.as_chunks_mut::<16>();
        for (bytes, value) in blocks.iter_mut().zip(values) {
            bytes[offset..offset + W].copy_from_slice(&value.to_le_bytes()[..W]);
        }
    }

    /// Digits in a message.
    #[inline(always)]
    fn digits(&self) -> usize {
        self.messages.len() / self.lanes
    }

    /// Slot `slot` of every lane's input holds its message's digit `slot`.
    #[inline(always)]
    fn put_digits<const W: usize>(&mut self, slot: usize, digits: usize) {
        let messages = self.messages;
        match self.arranged {
            Arranged::ByDigit => {
                let column = &messages[slot * self.lanes..][..self.lanes];
                self.put::<W>(slot, column.iter().copied());
            }
            // Walked message by message, not indexed by lane: no multiplication a lane, and
            // the loop's state stays in registers (a stepped iterator's was reloaded every lane).
            Arranged::ByLane => {
                let column = messages.chunks_exact(digits).map(|message| message[slot]);
                self.put::<W>(slot, column);
            }
        }
    }
}

/// Turns what [`encode`] wrote for the step at position `previous` into what it writes for
/// `(i, phase)`: slot `previous` gets back its digit (changed by that step), slot `i` holds
/// `LEw(phase)` and the last slot `LEw(i)`.
#[inline(always)]
fn update<const W: usize>(mut inputs: MacInputs<'_>, previous: usize, i: usize, phase: u32) {
    let digits = inputs.digits();
    inputs.put_digits::<W>(previous, digits);
    inputs.put::<W>(i, iter::repeat(phase));
    inputs.put::<W>(digits, iter::repeat(i as u32));
}

/// Writes `pkcs7(LEw(m_0) … LEw(m_{l-1}) || LEw(i))` with slot `i` holding `LEw(phase)`, for
/// every lane.
#[inline(always)]
fn encode<const W: usize>(mut inputs: MacInputs<'_>, i: usize, phase: u32) {
    let (lanes, digits) = (inputs.lanes, inputs.digits());
    // The padding (1 to 16 bytes) lies in the last block: fill that block row first and let
    // the digits overwrite its front.
    let len = inputs.macs.len() / lanes;
    let pad = len - (digits + 1) * W;
    let last = (len / 16 - 1) * lanes * 16;
    inputs.macs[last..].fill(pad as u8);
    for slot in 0..digits {
        inputs.put_digits::<W>(slot, digits);
    }
    inputs.put::<W>(i, iter::repeat(phase));
    inputs.put::<W>(digits, iter::repeat(i as u32));
}

#[cfg(test)]
mod tests {
    use super::{CACHE_LINE, from_cache_line};

    #[test]
    fn from_cache_line_starts_on_one_where_enough_remains() {
        let mut bytes = [0u8; 3 * CACHE_LINE];
        for at in 0..CACHE_LINE {
            let buffer = &mut bytes[at..][..CACHE_LINE + 8];
            let (start, len) = (buffer.as_ptr() as usize, buffer.len());
            let skip = start.next_multiple_of(CACHE_LINE) - start;
            assert_eq!(
                from_cache_line(buffer, len - skip).as_ptr() as usize,
                start + skip
            );
            // One element more than remains after the skip: the whole buffer.
            let buffer = &mut bytes[at..][..CACHE_LINE + 8];
            assert_eq!(
                from_cache_line(buffer, len - skip + 1).as_ptr() as usize,
                start
            );
        }
        let mut words = [0u64; 3 * CACHE_LINE / 8];
        for at in 0..CACHE_LINE / 8 {
            let start = from_cache_line(&mut words[at..][..16], 8).as_ptr() as usize;
            assert_eq!(start % CACHE_LINE, 0, "word {at}");
        }
    }
}
