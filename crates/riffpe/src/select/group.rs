//! The permutations of one digit step for a whole group of lanes at once (lockstep with
//! [`Selection::Fast`](crate::Selection::Fast), radices up to [`MAX_RADIX`]).
//!
//! The keystream stays in the order the AES backend makes it, block by block: block `j` of
//! every lane side by side ([`Blocks`]). Lanes are selected for in chunks of [`CHUNK`] (eight,
//! one AVX-512 vector of keys or two AVX2 ones): the key of value `k` is made for the chunk's
//! lanes at once (a row), every pass reads only the chunk's `n` rows (small enough for L1), and
//! every pass runs over the lanes innermost, so no loop carries a chain of dependent
//! operations. The AES loop can make every value's key as it writes the block rows
//! ([`make_row_keys`]: where each value starts a block, or with VBMI for any `bytes_per_value`,
//! a key that straddles two rows from both), and the rows are then read from those keys
//! ([`Blocks::with_keys`]), or, for AVX2's passes above radix 16,
//! only their two leading octets ([`Planes`], [`Blocks::with_planes`]), which are made for any
//! `bytes_per_value` from 16 on ([`planes_in_loop`]). The engine uses this
//! on x86-64 CPUs found at run time to have AVX-512 or AVX2 (`Kernel::detect`); the passes the
//! compiler vectorized badly are written with their intrinsics (`avx512`, `avx2`). The portable
//! passes in the tests are the reference those are tested against; the shared code here
//! handles a group's last chunk of fewer than eight lanes.
//!
//! - Inverse (decryption): the rows, then one pass counts, per lane, the keys below the lane's
//!   pivot.
//! - Forward (encryption): the rows, then one pass counts each lane's keys in 16 buckets of
//!   their leading 4 bits (byte counters, packed eight to a word); a second marks the keys of
//!   the bucket holding each lane's x-th key; then each lane's marked keys (a few) are
//!   gathered into 16 slots, and the chunk's slots are sorted by a sorting network. (AVX2 has
//!   its own forward: a network over all keys up to radix 16, a search of the keys' leading
//!   octets above.)
//!
//! Keys and ties are those of [`KeyLayout`]: a key orders as its value unless two values share
//! their leading bits, and then the values are compared in full (a cold path).

use core::cmp::Ordering;

use crate::select::KeyLayout;

/// Largest radix handled here: bucket counts are bytes, and a lane's marks are 4 words of 64.
pub(crate) const MAX_RADIX: u32 = 255;

/// Largest radix of the constant-time passes: counts (up to n) and digits are signed 16-bit
/// there, and a key's index lies in its lowest 16 bits.
pub(crate) const CONSTANT_TIME_MAX_RADIX: u32 = i16::MAX as u32;

/// Most lanes in a group: the widest AES backend (VAES-512) runs 64 blocks at once.
pub(crate) const MAX_LANES: usize = 64;

/// Radices up to this select from all of a lane's keys at once (AVX2: sorted by a network of
/// fixed pairs; AVX-512: every key ranked against every other), which beats counting, choosing
/// a bucket and sorting it when n is this small.
pub(super) const SMALL_RADIX: usize = 16;

/// Lanes selected together: eight keys, one AVX-512 vector.
pub(super) const CHUNK: usize = 8;

/// Words in a lane's set of marked values (one bit per value, radix ≤ 256).
pub(super) const MARK_WORDS: usize = 4;

/// Buckets of leading bits, 16 byte counters in two words per lane.
pub(super) const BUCKET_SHIFT: u32 = 60;

/// Keys of a bucket sorted branch-free in slots; larger buckets are gathered and selected
/// from by [`pick_large`]. The x-th key's bucket holds 1 + Binomial(n − 1, 1/16) keys: more than 16
/// about once in 2 400 steps at radix 100, once in 5 at 200, every other step at 255.
pub(super) const SMALL_BUCKET: usize = 16;

/// Lanes whose leading octets lie side by side in [`Planes`]: one byte a lane of an AVX2 vector.
pub(crate) const PLANE_LANES: usize = 32;

/// Where byte `p` of a plane vector lies in its [`PLANE_LANES`] lanes: the order AVX2's
/// unpacking leaves them in (even lanes, then odd ones), which every maker of [`Planes`] keeps.
pub(super) const fn plane_lane(p: usize) -> usize {
    if p < 16 { 2 * p } else { 2 * (p - 16) + 1 }
}

/// Keys of a lane that the constant-time search over [`Planes`] gathers up to radix 64: those
/// that share the two octets it found. More of a lane's keys share two octets with probability
/// below C(n, 5)·2^-64 per step (2^-41 at radix 64).
pub(super) const PLANE_GATHERED: usize = 4;

/// [`PLANE_GATHERED`] above radix 64: more than five of a lane's keys share two octets with
/// probability below C(n, 6)·2^-80 per step (2^-41 at radix 255).
pub(super) const PLANE_GATHERED_WIDE: usize = 5;

/// What the constant-time search over [`Planes`] found for one lane: how many keys share the
/// two octets of its key of rank x, and that key's rank among them.
#[derive(Clone, Copy, Default)]
pub(super) struct Gathered {
    pub(super) rank: u8,
    pub(super) count: u8,
}

/// Radices up to this one have their keys made as the AES loop writes the keystream
/// ([`made_in_loop`]).
pub(crate) const MADE_KEYS_MAX_RADIX: u32 = 256;

/// One digit step's keystream for a group of lanes, block by block: block `j` of lane `l` is
/// `bytes[(j·lanes + l)·16 ..][..16]`. One block row of slack follows the last block, so that
/// every value's 8 leading bytes can be read.
pub(crate) struct Blocks<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) lanes: usize,
    pub(super) layout: KeyLayout,
    /// Every value's key, if made as the keystream was ([`make_row_keys`]): key `k` of lane
    /// `l` at `k·lanes + l`.
    pub(super) keys: Option<&'a [u64]>,
    /// Every value's two leading octets, if made as the keystream was ([`Planes`]).
    pub(super) planes: Option<&'a [u64]>,
    /// Every value's octets 2 to 5, if made as the keystream was ([`Middles`]).
    pub(super) middles: Option<&'a [u64]>,
}

impl<'a> Blocks<'a> {
    /// The keystream of `lanes` lanes in `bytes`, which holds the step's blocks and a row of
    /// slack.
    #[inline(always)]
    pub fn new(bytes: &'a [u8], lanes: usize, layout: KeyLayout) -> Self {
        Blocks {
            bytes,
            lanes,
            layout,
            keys: None,
            planes: None,
            middles: None,
        }
    }

    /// The same keystream with every value's two leading octets made into `planes` by
    /// [`Planes::make`], which AVX2's passes then search first.
    #[inline(always)]
    pub fn with_planes(self, planes: &'a [u64]) -> Self {
        debug_assert!(planes.len() >= Planes::words(self.layout.n, self.lanes));
        Blocks {
            planes: Some(planes),
            ..self
        }
    }

    /// The same keystream with every value's octets 2 to 5 made into `middles` by
    /// [`Middles::make`], which AVX-512's ranking after the search of the planes then reads.
    #[inline(always)]
    pub fn with_middles(self, middles: &'a [u64]) -> Self {
        debug_assert!(middles.len() >= Middles::words(self.layout.n, self.lanes));
        Blocks {
            middles: Some(middles),
            ..self
        }
    }

    /// The same keystream with every value's key already made ([`make_row_keys`]), which the
    /// rows are then read from.
    #[inline(always)]
    pub fn with_keys(self, keys: &'a [u64]) -> Self {
        debug_assert!(keys.len() >= self.layout.n as usize * self.lanes);
        Blocks {
            keys: Some(keys),
            ..self
        }
    }

    /// Bytes of one block row: block `j` of every lane.
    #[inline(always)]
    pub(super) fn block_row(&self, j: usize) -> &'a [u8] {
        let width = self.lanes * 16;
        &self.bytes[j * width..][..width]
    }

    /// The keys of value `k` of the [`CHUNK`] lanes from `first` on, `count` of which exist;
    /// the others get `u64::MAX`.
    #[inline(always)]
    pub(super) fn chunk_row(&self, k: usize, first: usize, count: usize, row: &mut [u64; CHUNK]) {
        if count == CHUNK {
            self.row_of(k, first, row);
        } else {
            *row = [u64::MAX; CHUNK];
            self.row_of(k, first, &mut row[..count]);
        }
    }

    /// The keys of value `k` of lanes `first..first + row.len()`, into `row`.
    ///
    /// A lane's keystream read as big-endian words: the value's 8 leading bytes start in word
    /// `k·b / 8`, at byte `k·b mod 8`, so they are that word shifted left and topped up from
    /// the next. Word and shift are the same for every lane, so each case is a plain loop over
    /// the lanes' blocks.
    #[inline(always)]
    pub(super) fn row_of(&self, k: usize, first: usize, row: &mut [u64]) {
        if let Some(keys) = self.keys {
            row.copy_from_slice(&keys[k * self.lanes + first..][..row.len()]);
            return;
        }
        let offset = k * self.layout.bytes_per_value();
        let (block, shift) = (offset / 16, 8 * (offset % 8) as u32);
        let lanes = |j| &self.block_row(j)[first * 16..][..row.len() * 16];
        let (blocks, _) = lanes(block).as_chunks::<16>();
        let key = |lead| self.layout.key_from_lead(lead, k);
        match (shift, offset % 16 < 8) {
            (0, true) => {
                for (out, block) in row.iter_mut().zip(blocks) {
                    *out = key(halves(block).0);
                }
            }
            (0, false) => {
                for (out, block) in row.iter_mut().zip(blocks) {
                    *out = key(halves(block).1);
                }
            }
            (_, true) => {
                for (out, block) in row.iter_mut().zip(blocks) {
                    let (high, low) = halves(block);
                    *out = key(high << shift | low >> (64 - shift));
                }
            }
            (_, false) => {
                let (next, _) = lanes(block + 1).as_chunks::<16>();
                for (out, (block, next)) in row.iter_mut().zip(blocks.iter().zip(next)) {
                    let lead = halves(block).1 << shift | halves(next).0 >> (64 - shift);
                    *out = key(lead);
                }
            }
        }
    }

    /// The key of value `k` of one lane (as [`Blocks::chunk_row`] makes it).
    #[inline(always)]
    pub(super) fn key(&self, lane: usize, k: usize) -> u64 {
        let offset = k * self.layout.bytes_per_value();
        let (i, shift) = (offset / 8, 8 * (offset % 8) as u32);
        let lead = if shift == 0 {
            self.word(lane, i)
        } else {
            self.word(lane, i) << shift | self.word(lane, i + 1) >> (64 - shift)
        };
        self.layout.key_from_lead(lead, k)
    }

    /// Big-endian word `i` of one lane's keystream: half `i mod 2` of its block `i / 2`. Loaded
    /// directly: going through the block's halves cost a store and a reload per word (a sixth
    /// of lockstep Riffpe(10, 16) decryption).
    #[inline(always)]
    pub(super) fn word(&self, lane: usize, i: usize) -> u64 {
        let at = ((i / 2) * self.lanes + lane) * 16 + (i % 2) * 8;
        self.bytes
            .get(at..)
            .and_then(<[u8]>::first_chunk::<8>)
            .map_or(0, |word| u64::from_be_bytes(*word))
    }

    /// Bytes of lane `lane`'s keystream from `offset` on.
    pub(super) fn read(&self, lane: usize, offset: usize, out: &mut [u8]) {
        for (at, byte) in (offset..).zip(out) {
            *byte = self.block_row(at / 16)[lane * 16 + at % 16];
        }
    }

    /// Pairs `(value, index)` of one lane compared in full, for keys whose leading bits tie.
    #[cold]
    pub(super) fn cmp_pairs(&self, lane: usize, a: u64, b: u64) -> Ordering {
        let b_len = self.layout.bytes_per_value();
        let (ia, ib) = (self.layout.index(a), self.layout.index(b));
        let (mut x, mut y) = ([0u8; 16], [0u8; 16]);
        let mut done = 0;
        while done < b_len {
            let len = (b_len - done).min(16);
            self.read(lane, ia * b_len + done, &mut x[..len]);
            self.read(lane, ib * b_len + done, &mut y[..len]);
            match x[..len].cmp(&y[..len]) {
                Ordering::Equal => done += len,
                order => return order,
            }
        }
        ia.cmp(&ib)
    }

    /// Key order, made exact where two keys' leading bits tie.
    #[inline]
    pub(super) fn cmp(&self, lane: usize, a: u64, b: u64) -> Ordering {
        if self.layout.exact() || !self.layout.same_lead(a, b) {
            a.cmp(&b)
        } else {
            self.cmp_pairs(lane, a, b)
        }
    }
}

/// Whether a step of `layout` has its keys made as the AES loop writes the keystream by any
/// maker: each value's 8 leading bytes start a block (`bytes_per_value` a multiple of 16), so
/// that one block holds them, and the radix is at most [`MADE_KEYS_MAX_RADIX`]. VBMI's maker
/// takes any `bytes_per_value` ([`MadeKeys::covers`]).
#[inline]
pub(crate) fn made_in_loop(layout: &KeyLayout) -> bool {
    layout.bytes_per_value().is_multiple_of(16) && layout.n <= MADE_KEYS_MAX_RADIX
}

/// Whether a step of `layout` has its keys' two leading octets made as planes as the AES loop
/// writes the keystream ([`Planes`]): wherever a value starts, its octets lie in one block row
/// or, from a block's last byte, in two; so any `bytes_per_value` of at least 16 (at most one
/// value starts a row), and the radix at most [`MADE_KEYS_MAX_RADIX`].
#[inline]
pub(crate) fn planes_in_loop(layout: &KeyLayout) -> bool {
    layout.bytes_per_value() >= 16 && layout.n <= MADE_KEYS_MAX_RADIX
}

/// Makes what block row `j` (one block a lane, in `row`) holds of the values' keys, into `keys`
/// laid out as [`Blocks::with_keys`] reads them: the bytes it holds of each value's 8 leading
/// bytes ([`leads_in_row`]), the others kept, so that a key whose bytes straddle two rows is
/// whole after both. Portable: the reference of [`MadeKeys`]' makers, and what it runs without
/// VBMI.
#[inline(always)]
pub(crate) fn make_row_keys(layout: &KeyLayout, j: usize, row: &[[u8; 16]], keys: &mut [u64]) {
    for (k, at) in leads_in_row(layout, j) {
        let keys = &mut keys[k * row.len()..][..row.len()];
        if at == 0 {
            // The value starts the block, as wherever `made_in_loop`: its leading half, a load
            // a lane (AVX2's maker is this code).
            for (key, block) in keys.iter_mut().zip(row) {
                *key = layout.key_from_lead(halves(block).0, k);
            }
            continue;
        }
        for (key, block) in keys.iter_mut().zip(row) {
            let mut lead = key.to_be_bytes();
            for (o, byte) in lead.iter_mut().enumerate() {
                let held = usize::try_from(at + o as isize).ok();
                if let Some(&held) = held.and_then(|at| block.get(at)) {
                    *byte = held;
                }
            }
            *key = layout.key_from_lead(u64::from_be_bytes(lead), k);
        }
    }
}

/// The values of which block row `j` holds any of the bytes their keys are made from (the
/// value's first `min(b, 8)`), each with the byte of the row's blocks where its first lies:
/// from -7 (its eighth the row's first byte) to 15.
#[inline(always)]
pub(super) fn leads_in_row(layout: &KeyLayout, j: usize) -> impl Iterator<Item = (usize, isize)> {
    let (b, n) = (layout.bytes_per_value(), layout.n as usize);
    let lead = b.min(8);
    let first = (16 * j + 1).saturating_sub(lead).div_ceil(b);
    let last = ((16 * j + 15) / b).min(n - 1);
    (first..=last).map(move |k| (k, (k * b) as isize - 16 * j as isize))
}

/// Where value `k` starts in the keystream's block rows: its row, and its byte in each lane's
/// block there (from byte 9 on, its 8 leading bytes run into the next row's block).
#[inline(always)]
pub(super) fn lead_at(layout: &KeyLayout, k: usize) -> (usize, usize) {
    let start = k * layout.bytes_per_value();
    (start / 16, start % 16)
}

/// The instruction set that makes what the AES loop lays out besides the keystream
/// ([`Planes`], [`MadeKeys`]): AVX-512 VBMI's byte permutes where the CPU has them, else AVX2's
/// shuffles (the compiler's code for keys).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LoopIsa {
    Vbmi(super::avx512::Vbmi),
    Avx2(super::avx2::Avx2),
}
#[cfg(not(target_arch = "x86_64"))]
pub(super) type LoopIsa = core::convert::Infallible;

#[cfg(target_arch = "x86_64")]
impl LoopIsa {
    /// On a CPU with AVX2: VBMI where it has that too.
    pub(super) fn detect(avx2: super::avx2::Avx2) -> LoopIsa {
        match super::avx512::Vbmi::detect() {
            Some(vbmi) => LoopIsa::Vbmi(vbmi),
            None => LoopIsa::Avx2(avx2),
        }
    }

    /// Every one this CPU runs, widest first (the tests check they agree).
    #[cfg(test)]
    pub(super) fn available() -> [Option<LoopIsa>; 2] {
        [
            super::avx512::Vbmi::detect().map(LoopIsa::Vbmi),
            super::avx2::Avx2::detect().map(LoopIsa::Avx2),
        ]
    }
}

/// Proof that a step's passes read every value's key made by the AES loop from the blocks it
/// writes (`Kernel::made_keys`), laid out as [`Blocks::with_keys`] reads them, and what makes
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MadeKeys(pub(super) LoopIsa);

impl MadeKeys {
    /// [`make_row_keys`], eight lanes to a byte permute with VBMI; for steps it
    /// [`covers`](MadeKeys::covers).
    #[inline(always)]
    pub(crate) fn make(self, layout: &KeyLayout, j: usize, row: &[[u8; 16]], keys: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        if let LoopIsa::Vbmi(vbmi) = self.0
            && row.len().is_multiple_of(CHUNK)
        {
            for (k, at) in leads_in_row(layout, j) {
                vbmi.make_row_keys(layout, k, at, row, keys);
            }
            return;
        }
        make_row_keys(layout, j, row, keys);
    }

    /// Whether this maker makes the keys of a step of `layout`: VBMI's byte permutes pick a
    /// key's bytes from wherever its value starts, the others only where [`made_in_loop`].
    #[inline(always)]
    pub(crate) fn covers(self, layout: &KeyLayout) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let LoopIsa::Vbmi(_) = self.0 {
            return layout.n <= MADE_KEYS_MAX_RADIX;
        }
        made_in_loop(layout)
    }
}

/// Proof that a step's passes search the keys' two leading octets laid out as planes,
/// which the AES loop makes from the blocks it writes (`Kernel::planes`): octet `o` (top bit
/// flipped) of value `k` of the lanes from `32c` on, [`PLANE_LANES`] to a vector, at vector
/// `(2c + o)·n + k`, lane `32c + plane_lane(p)` at byte `p`. A lane's byte there is an eighth
/// of the key [`make_row_keys`] writes, so the planes of 64 lanes stay in L1 where their keys
/// would not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Planes(pub(super) LoopIsa);

impl Planes {
    /// Words of the planes of radix `n` and `lanes` lanes.
    pub(crate) fn words(n: u32, lanes: usize) -> usize {
        2 * n as usize * lanes / 8
    }

    /// Makes what block row `j` (one block a lane, `row.len()` a multiple of [`PLANE_LANES`])
    /// holds of the planes: the octets of the value that starts in it, if one does, and the
    /// second octet of a value that started on the row before's last byte; for steps
    /// [`planes_in_loop`]. And if `middles` asks, what it holds of those ([`Middles::make`]):
    /// for a value whose six leading octets all lie in the row, from the same byte permutes.
    #[inline(always)]
    pub(crate) fn make(
        self,
        layout: &KeyLayout,
        j: usize,
        row: &[[u8; 16]],
        planes: &mut [u64],
        mut middles: Option<(Middles, &mut [u64])>,
    ) {
        let (b, n) = (layout.bytes_per_value(), layout.n as usize);
        // Value k starts at byte k·b of the lane's keystream, octet 0 of its planes.
        let start = (16 * j).div_ceil(b);
        let at = start * b - 16 * j;
        let whole = (at + 6 <= 16 && start < n).then_some(start);
        if at < 16 && start < n {
            let beside = middles.as_mut().filter(|_| whole.is_some());
            let beside = beside.map(|(_, words)| &mut **words);
            self.make_octets(row, start, n, OctetsAt::starting(at), planes, beside);
        }
        if j > 0 && (16 * j - 1).is_multiple_of(b) && (16 * j - 1) / b < n {
            self.make_octets(
                row,
                (16 * j - 1) / b,
                n,
                OctetsAt::SECOND_FIRST,
                planes,
                None,
            );
        }
        if let Some((maker, words)) = middles {
            maker.make(layout, j, row, words, whole);
        }
    }

    /// The planes of value `k` that `place` says `row` holds, and its [`Middles`] into
    /// `middles` if given (only where VBMI makes them, and all of them lie in the row).
    #[inline(always)]
    fn make_octets(
        self,
        row: &[[u8; 16]],
        k: usize,
        n: usize,
        place: OctetsAt,
        planes: &mut [u64],
        middles: Option<&mut [u64]>,
    ) {
        #[cfg(target_arch = "x86_64")]
        match self.0 {
            LoopIsa::Vbmi(vbmi) => vbmi.make_planes(row, k, n, place, planes, middles),
            LoopIsa::Avx2(avx2) => {
                debug_assert!(middles.is_none());
                avx2.make_planes(row, k, n, place, planes)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        match (self.0, row, planes, k, n, place, middles) {}
    }
}

/// Proof that constant-time π ranks the keys that share two octets by their next four octets,
/// which the AES loop makes from the blocks it writes (`Kernel::middles`), beside the
/// [`Planes`], and what makes them: octets 2 to 5 of value `k` as a big-endian `u32`, for the
/// lanes from `32c` on at `u32` `32·(c·n + k) + 8q + w`, lane `32c + 8q + ORDER[w]` (ORDER: 0,
/// 2, 4, 6, 1, 3, 5, 7, the order of the bits `plane_gather` marks a chunk's lanes by). Read
/// from there, a value of 32 lanes is two vectors, where the blocks it is picked from are eight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Middles(pub(super) MiddlesIsa);

/// What makes [`Middles`]: AVX-512 VBMI's byte permutes.
#[cfg(target_arch = "x86_64")]
pub(super) type MiddlesIsa = super::avx512::Vbmi;
#[cfg(not(target_arch = "x86_64"))]
pub(super) type MiddlesIsa = core::convert::Infallible;

impl Middles {
    /// Words of the middles of radix `n` and `lanes` lanes: four bytes a key.
    pub(crate) fn words(n: u32, lanes: usize) -> usize {
        n as usize * lanes / 2
    }

    /// Makes what block row `j` (one block a lane, `row.len()` a multiple of [`PLANE_LANES`])
    /// holds of the middles: octets 2 to 5 of the values (at most two, as `bytes_per_value` is
    /// at least 16) that have any of them in it, but value `made`, whose middles
    /// [`Planes::make`] made already; for steps [`planes_in_loop`].
    #[inline(always)]
    pub(crate) fn make(
        self,
        layout: &KeyLayout,
        j: usize,
        row: &[[u8; 16]],
        middles: &mut [u64],
        made: Option<usize>,
    ) {
        let (b, n) = (layout.bytes_per_value(), layout.n as usize);
        // Octets 2 to 5 of value k are bytes kb + 2 to kb + 5 of the lane's keystream; the
        // row's are 16j to 16j + 15.
        let first = (16 * j).saturating_sub(5).div_ceil(b);
        let last = ((16 * j + 13) / b).min(n.saturating_sub(1));
        for k in (first..=last).filter(|&k| Some(k) != made) {
            // Where octet 2 lies in the row's blocks: from byte -3 (octet 5 the row's first
            // byte) to 15.
            let at = (k * b + 2) as isize - 16 * j as isize;
            self.make_value(row, k, n, at, middles);
        }
    }

    /// The middles of value `k`, whose octet 2 lies at byte `at` of the row's blocks.
    #[inline(always)]
    fn make_value(self, row: &[[u8; 16]], k: usize, n: usize, at: isize, middles: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        self.0.make_middles(row, k, n, at, middles);
        #[cfg(not(target_arch = "x86_64"))]
        match (self.0, row, k, n, at, middles) {}
    }
}

/// Where a plane maker finds a value's octets in a block row: bytes `at` and `at + 1` of each
/// lane's block are the value's octets `from` and `from + 1`, of which it writes those that are
/// octet 0 or 1 ([`OctetsAt::plane`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct OctetsAt {
    pub(super) at: usize,
    from: isize,
}

impl OctetsAt {
    /// The second octet of a value that started on the row before's last byte: this row's first.
    const SECOND_FIRST: OctetsAt = OctetsAt { at: 0, from: 1 };

    /// The octets of a value that starts at byte `at` of the row's blocks: both, or from the last
    /// byte only the first.
    fn starting(at: usize) -> OctetsAt {
        match at {
            15 => OctetsAt { at: 14, from: -1 },
            _ => OctetsAt { at, from: 0 },
        }
    }

    /// The plane (0 or 1) of the byte `at + byte` of each block, if the maker writes it.
    #[inline(always)]
    pub(super) fn plane(self, byte: usize) -> Option<usize> {
        usize::try_from(self.from + byte as isize)
            .ok()
            .filter(|&o| o < 2)
    }
}

/// A keystream block's two halves as big-endian words.
#[inline(always)]
pub(super) fn halves(block: &[u8; 16]) -> (u64, u64) {
    let (mut high, mut low) = ([0u8; 8], [0u8; 8]);
    high.copy_from_slice(&block[..8]);
    low.copy_from_slice(&block[8..]);
    (u64::from_be_bytes(high), u64::from_be_bytes(low))
}

/// Working memory for the group kernels' passes, carved from the key scratch: the rows of
/// one [`CHUNK`] of lanes, whatever the group's size.
pub(crate) struct Work<'w> {
    /// [`Work::words`] words.
    words: &'w mut [u64],
    n: usize,
}

impl<'w> Work<'w> {
    /// Working memory for radix `n` from `keys`, which must hold [`Work::words`] of them.
    #[inline]
    pub fn new(keys: &'w mut [u64], n: u32) -> Self {
        Work {
            words: &mut keys[..Self::words(n)],
            n: n as usize,
        }
    }

    /// Words of key scratch for radix `n`: `n` rows of [`CHUNK`] keys, rounded up to fours.
    #[inline]
    pub fn words(n: u32) -> usize {
        (n as usize).next_multiple_of(4) * CHUNK
    }

    /// `n` rows of [`CHUNK`] keys.
    #[inline(always)]
    pub(super) fn rows(self) -> &'w mut [[u64; CHUNK]] {
        let (rows, _) = self.words.as_chunks_mut::<CHUNK>();
        &mut rows[..self.n]
    }

    /// The rows two by two, `n / 2` rounded up.
    #[inline(always)]
    pub(super) fn pairs(self) -> &'w mut [[u64; 2 * CHUNK]] {
        let (pairs, _) = self.words.as_chunks_mut::<{ 2 * CHUNK }>();
        &mut pairs[..self.n.div_ceil(2)]
    }

    /// The rows four by four, `n / 4` rounded up.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(super) fn quads(self) -> &'w mut [[u64; 4 * CHUNK]] {
        let (quads, _) = self.words.as_chunks_mut::<{ 4 * CHUNK }>();
        &mut quads[..self.n.div_ceil(4)]
    }
}

/// Per-lane counts of keys in 16 buckets of leading bits: byte `c mod 8` of word `c / 8` of
/// `low` (buckets 0–7) and `high` (8–15).
pub(super) type Counts = ([u64; CHUNK], [u64; CHUNK]);

/// Per-lane sets of values, one bit each.
pub(super) type Marks = [[u64; CHUNK]; MARK_WORDS];

/// The steps of one chunk's selection that the AVX-512 build writes with intrinsics, where
/// the compiler's own vectorization of the portable ones went wrong (it vectorized across
/// values, gathering one key per row).
pub(super) struct Passes<C, M, R> {
    /// Makes the rows of the [`CHUNK`] lanes from lane `first` on, `count` of which exist,
    /// and counts their keys by bucket.
    pub(super) count: C,
    /// Marks each lane's keys in its bucket.
    pub(super) mark: M,
    /// Each lane's key of its rank in its bucket, as its value.
    pub(super) rank: R,
}

/// Selects for each [`CHUNK`] of lanes in turn, every pass over that chunk's rows: 6.4 KB for
/// radix 100, which fit in L1, where the rows of all 64 lanes of VAES-512 (51 KB) did not.
#[inline(always)]
pub(super) fn by_chunks<C, M, R>(
    blocks: &Blocks<'_>,
    work: Work<'_>,
    digits: &mut [u32],
    passes: Passes<C, M, R>,
) where
    C: Fn(&Blocks<'_>, usize, usize, &mut [[u64; CHUNK]]) -> Counts,
    M: Fn(&[[u64; CHUNK]], &[u64; CHUNK]) -> Marks,
    R: Fn(&Blocks<'_>, &Picked<'_>, &mut [u32]),
{
    let rows = work.rows();
    for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
        let first = chunk * CHUNK;
        let (low, high) = (passes.count)(blocks, first, digits.len(), rows);

        // Each lane's bucket of the x-th key, the x-th key's rank inside it and the bucket's
        // size, from the counts' running sums (bytes too: they reach at most n).
        let (mut buckets, mut ranks, mut sizes) = ([0; CHUNK], [0; CHUNK], [0; CHUNK]);
        for l in 0..CHUNK {
            let x = digits.get(l).map_or(0, |&x| x.into());
            (buckets[l], ranks[l], sizes[l]) = find_bucket(low[l], high[l], x);
        }

        let marks = (passes.mark)(rows, &buckets);
        let slots = gather(rows, &marks, &sizes, digits.len());
        let picked = Picked {
            rows,
            first,
            marks,
            ranks,
            sizes,
            slots,
        };
        (passes.rank)(blocks, &picked, digits);
    }
}

/// The bucket holding the x-th key, the x-th key's rank inside it and the bucket's size, from
/// 16 bucket counts in bytes (`low`: buckets 0–7, `high`: 8–15). Multiplying by `0x0101…01`
/// turns the counts into running sums, which never pass n ≤ 255 and so never carry into the
/// next byte; the bucket is the number of running sums at or below x, found by a branch-free
/// binary search.
#[inline(always)]
pub(super) fn find_bucket(low: u64, high: u64, x: u64) -> (u64, u64, u64) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let low = low.wrapping_mul(ONES);
    let high = high
        .wrapping_mul(ONES)
        .wrapping_add((low >> 56).wrapping_mul(ONES));
    let sums = u128::from(high) << 64 | u128::from(low);
    let sum = |bucket: u64| (sums >> (8 * bucket)) as u64 & 0xff;
    let mut bucket = 0;
    for step in [8, 4, 2, 1] {
        bucket += step & u64::from(sum(bucket + step - 1) <= x).wrapping_neg();
    }
    let below = if bucket == 0 { 0 } else { sum(bucket - 1) };
    (bucket, x - below, sum(bucket) - below)
}

/// The marked keys of the first `count` lanes, in slots: slot `s` of lane `l` is
/// `slots[s][l]`, and slots past a lane's keys hold `u64::MAX`. Lanes whose bucket holds more
/// than [`SMALL_BUCKET`] keys are left to [`pick_large`].
#[inline(always)]
pub(super) fn gather(
    rows: &[[u64; CHUNK]],
    marks: &[[u64; CHUNK]; MARK_WORDS],
    sizes: &[u64; CHUNK],
    count: usize,
) -> [[u64; CHUNK]; SMALL_BUCKET] {
    let mut slots = [[u64::MAX; CHUNK]; SMALL_BUCKET];
    for (l, &size) in sizes.iter().enumerate().take(count) {
        if size as usize > SMALL_BUCKET {
            continue;
        }
        // Not by `Marked`: its per-item word scan is slower than this loop over the words.
        let mut slot = 0;
        for (w, marks) in marks.iter().enumerate().take(rows.len().div_ceil(64)) {
            let mut word = marks[l];
            while word != 0 {
                let k = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                if let (Some(slot), Some(row)) = (slots.get_mut(slot), rows.get(k)) {
                    slot[l] = row[l];
                }
                slot += 1;
            }
        }
    }
    slots
}

/// One chunk's buckets of keys, for picking the key of a rank from each.
pub(super) struct Picked<'a> {
    /// The chunk's rows, and its first lane.
    pub(super) rows: &'a [[u64; CHUNK]],
    pub(super) first: usize,
    /// Per lane: the bucket's values (one bit each), the rank of the key to pick and the
    /// bucket's size.
    pub(super) marks: [[u64; CHUNK]; MARK_WORDS],
    pub(super) ranks: [u64; CHUNK],
    pub(super) sizes: [u64; CHUNK],
    /// The keys of buckets up to [`SMALL_BUCKET`] (see [`gather`]).
    pub(super) slots: [[u64; CHUNK]; SMALL_BUCKET],
}

impl Picked<'_> {
    /// Whether lane `l`'s bucket was gathered into its slots.
    #[inline(always)]
    pub(super) fn small(&self, l: usize) -> bool {
        self.sizes[l] as usize <= SMALL_BUCKET
    }

    /// Each lane's value from `found`, its key of its rank among its slots, unless its bucket
    /// was not gathered or bit `l` of `ties` is set (leading bits tie): then by [`pick_large`].
    #[inline(always)]
    pub(super) fn digits(
        &self,
        blocks: &Blocks<'_>,
        (found, ties): ([u64; CHUNK], u32),
        digits: &mut [u32],
    ) {
        for (l, digit) in digits.iter_mut().enumerate() {
            *digit = if !self.small(l) || ties & (1 << l) != 0 {
                self.large(blocks, l)
            } else {
                blocks.layout.index(found[l]) as u32
            };
        }
    }

    /// Lane `l`'s value by [`pick_large`].
    pub(super) fn large(&self, blocks: &Blocks<'_>, l: usize) -> u32 {
        let set = core::array::from_fn(|w| self.marks[w][l]);
        pick_large(blocks, self.rows, self.first, l, set, self.ranks[l])
    }
}

/// A sorting network for 16 keys: after compare-exchanging each pair `(a, b)` in turn
/// (smaller to `a`), the keys are in order. Batcher's odd–even merge sort, 63 pairs.
pub(super) const SORT16: [(u8, u8); 63] = odd_even_merge_sort();

/// Sorts 16 items (`&mut [T; 16]`) by [`SORT16`]: `sort16!(items, |a, b| exchange)`, the
/// exchange giving the smaller and the larger of `a` and `b`; `sort16!(items, below n, |a, b|
/// exchange)` sorts the first `n` only, by the pairs of the first `n` (where the others held the
/// largest items, the pairs that touch them would leave them in place). Unrolled, so that the
/// items stay in registers (a loop over the pairs goes through memory), and a macro, so that the
/// exchange is inlined at all 63 places (a closure may stay a call, its vectors passed through
/// memory); with `n` a constant, the pairs past it compile to nothing.
macro_rules! sort16 {
    ($items:expr, |$a:ident, $b:ident| $exchange:expr) => {
        $crate::select::group::sort16!($items, below 16, |$a, $b| $exchange)
    };
    ($items:expr, below $n:expr, |$a:ident, $b:ident| $exchange:expr) => {
        $crate::select::group::sort16!(
            @steps $items, $n, $a, $b, $exchange,
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
            61 62
        )
    };
    (@steps $items:expr, $n:expr, $a:ident, $b:ident, $exchange:expr, $($i:literal)*) => {{
        let items: &mut [_; 16] = $items;
        $(
            let pair = $crate::select::group::SORT16[$i];
            if (pair.1 as usize) < $n {
                let ($a, $b) = (items[pair.0 as usize], items[pair.1 as usize]);
                (items[pair.0 as usize], items[pair.1 as usize]) = $exchange;
            }
        )*
    }};
}
pub(crate) use sort16;

/// `pass::<N>(blocks, work, digits)` of the step's radix `N`, up to [`SMALL_RADIX`]: each
/// radix its own build, so that its network (pruned to it) inlines into the pass rather than
/// being a call per chunk with its keys passed through memory.
macro_rules! by_radix {
    ($pass:ident($blocks:expr, $work:expr, $digits:expr)) => {
        $crate::select::group::by_radix!(
            @radices $pass, $blocks, $work, $digits, 2 3 4 5 6 7 8 9 10 11 12 13 14 15
        )
    };
    (@radices $pass:ident, $blocks:expr, $work:expr, $digits:expr, $($n:literal)*) => {
        match $blocks.layout.n {
            $($n => $pass::<$n>($blocks, $work, $digits),)*
            _ => $pass::<{ $crate::select::group::SMALL_RADIX }>($blocks, $work, $digits),
        }
    };
}
pub(crate) use by_radix;

/// The pairs of Batcher's odd–even merge sort of 16 items, layer by layer.
pub(super) const fn odd_even_merge_sort() -> [(u8, u8); 63] {
    const N: usize = 16;
    let mut pairs = [(0, 0); 63];
    let mut len = 0;
    let mut p = 1;
    while p < N {
        let mut k = p;
        while k >= 1 {
            let mut j = k % p;
            while j + k < N {
                let mut i = 0;
                while i < k && i + j + k < N {
                    if (i + j) / (2 * p) == (i + j + k) / (2 * p) {
                        pairs[len] = ((i + j) as u8, (i + j + k) as u8);
                        len += 1;
                    }
                    i += 1;
                }
                j += 2 * k;
            }
            k /= 2;
        }
        p *= 2;
    }
    assert!(len == pairs.len());
    pairs
}

/// The pick for a bucket of more than [`SMALL_BUCKET`] keys or with tied leading bits: the
/// marked keys of lane `l` of the chunk from lane `first` on gathered, and the one of rank
/// `rank` selected in expected linear time, keys compared in full where their leading bits
/// tie. Not cold: above radix 128 buckets this large are common (see [`SMALL_BUCKET`]).
#[inline(never)]
pub(super) fn pick_large(
    blocks: &Blocks<'_>,
    rows: &[[u64; CHUNK]],
    first: usize,
    l: usize,
    set: [u64; MARK_WORDS],
    rank: u64,
) -> u32 {
    let mut keys = [0u64; MAX_RADIX as usize];
    let mut len = 0;
    for (key, k) in keys.iter_mut().zip(Marked(set)) {
        *key = rows[k][l];
        len += 1;
    }
    nth_exact(blocks, first + l, &mut keys[..len], rank)
}

/// The index carried by the key of rank `rank` among `keys`, keys of lane `lane` compared in
/// full where their leading bits tie.
#[inline(always)]
fn nth_exact(blocks: &Blocks<'_>, lane: usize, keys: &mut [u64], rank: u64) -> u32 {
    if rank as usize >= keys.len() {
        return unreachable_rank();
    }
    let (_, nth, _) = keys.select_nth_unstable_by(rank as usize, |&a, &b| blocks.cmp(lane, a, b));
    blocks.layout.index(*nth) as u32
}

/// Each lane's π(x) from `found`, its key of rank x among all `n` keys, unless bit `l` of `ties`
/// is set: then its leading bits tie another key's, and the pick is made again with whole
/// values compared, the lane's keys made anew from its keystream into `spare` (at least `n`
/// words, free by then).
#[inline(always)]
pub(super) fn found_digits(
    blocks: &Blocks<'_>,
    first: usize,
    (found, ties): ([u64; CHUNK], u32),
    spare: &mut [u64],
    digits: &mut [u32],
) {
    for (l, digit) in digits.iter_mut().enumerate() {
        *digit = if ties & (1 << l) == 0 {
            blocks.layout.index(found[l]) as u32
        } else {
            pick_exact(blocks, first + l, spare, *digit)
        };
    }
}

/// Each lane's π⁻¹(k) from `below`, its count of keys below its pivot (key k), unless bit `l`
/// of `ties` is set: then another key shares the pivot's leading bits, and the lane is ranked
/// again with whole values compared.
#[inline(always)]
pub(super) fn counted_digits(
    blocks: &Blocks<'_>,
    first: usize,
    (below, ties): (&[u32; CHUNK], u32),
    digits: &mut [u32],
) {
    for (l, digit) in digits.iter_mut().enumerate() {
        *digit = if ties & (1 << l) == 0 {
            below[l]
        } else {
            let lane = first + l;
            rank_exact(blocks, lane, blocks.key(lane, *digit as usize))
        };
    }
}

/// π(x) of lane `lane` where the key of rank x is among the values `among` (those whose keys
/// share its leading octet), which lie side by side in key order after `below` keys: their keys
/// made into `spare` and compared in full where leading bits tie.
#[cold]
#[inline(never)]
pub(super) fn pick_among(
    blocks: &Blocks<'_>,
    lane: usize,
    among: impl Iterator<Item = usize>,
    below: u32,
    spare: &mut [u64],
    x: u32,
) -> u32 {
    let mut len = 0;
    for (key, k) in spare.iter_mut().zip(among) {
        *key = blocks.key(lane, k);
        len += 1;
    }
    match x.checked_sub(below) {
        Some(rank) => nth_exact(blocks, lane, &mut spare[..len], rank.into()),
        None => unreachable_rank(),
    }
}

/// π(x) of lane `lane`: [`pick_among`] all of its keys.
#[cold]
#[inline(never)]
pub(super) fn pick_exact(blocks: &Blocks<'_>, lane: usize, spare: &mut [u64], x: u32) -> u32 {
    pick_among(blocks, lane, 0..blocks.layout.n as usize, 0, spare, x)
}

/// Each lane's rank, from the count of keys below its pivot, unless another key shares the
/// pivot's leading bits (`same` counts the pivot too): then counted again, keys compared in full.
#[inline(always)]
pub(super) fn rank_digits(
    blocks: &Blocks<'_>,
    first: usize,
    pivots: &[u64; CHUNK],
    below: [u64; CHUNK],
    same: [u64; CHUNK],
    digits: &mut [u32],
) {
    for (l, digit) in digits.iter_mut().enumerate() {
        *digit = if blocks.layout.exact() || same[l] == 1 {
            below[l] as u32
        } else {
            rank_exact(blocks, first + l, pivots[l])
        };
    }
}

/// The rank of `pivot` among lane `lane`'s keys where `below` of them lie below the values
/// `among` (those whose keys share the pivot's leading octets), the rest above: `below` plus the
/// keys of `among` below it, compared in full where leading bits tie.
#[cold]
#[inline(never)]
pub(super) fn rank_among(
    blocks: &Blocks<'_>,
    lane: usize,
    among: impl Iterator<Item = usize>,
    below: u32,
    pivot: u64,
) -> u32 {
    let less = |&k: &usize| blocks.cmp(lane, blocks.key(lane, k), pivot) == Ordering::Less;
    below + among.filter(less).count() as u32
}

/// The rank of `pivot` among lane `lane`'s keys: [`rank_among`] all of them.
#[cold]
#[inline(never)]
pub(super) fn rank_exact(blocks: &Blocks<'_>, lane: usize, pivot: u64) -> u32 {
    rank_among(blocks, lane, 0..blocks.layout.n as usize, 0, pivot)
}

/// A rank outside the bucket cannot happen: the bucket was chosen to hold it.
#[cold]
pub(super) fn unreachable_rank() -> u32 {
    0
}

/// The indices marked in a lane's set, in increasing order.
pub(super) struct Marked(pub(super) [u64; MARK_WORDS]);

impl Iterator for Marked {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        for (w, word) in self.0.iter_mut().enumerate() {
            if *word != 0 {
                let bit = word.trailing_zeros() as usize;
                *word &= *word - 1;
                return Some(w * 64 + bit);
            }
        }
        None
    }
}
