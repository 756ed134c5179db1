//! The permutations of one digit step for a whole group of lanes at once (lockstep with
//! [`Selection::Fast`](crate::Selection::Fast), radices up to [`MAX_RADIX`]).
//!
//! The keystream stays in the order the AES backend makes it, block by block: block `j` of
//! every lane side by side ([`Blocks`]). The key of value `k` is made for every lane at once
//! (a row), and every loop runs over the lanes innermost. Each lane's counters are independent
//! of the other lanes' and of the key before, so no loop carries a chain of dependent
//! operations and the loops vectorize. The engine uses this on x86-64 CPUs found at run time
//! to have AVX-512 ([`pays`]), where the same functions run from a build compiled for it (8
//! lanes to a register); the build for the target's baseline features is what that build
//! compiles, and is tested everywhere.
//!
//! - Inverse (decryption): one pass counts, per lane, the keys below the lane's pivot.
//! - Forward (encryption): one pass makes the rows and counts each lane's keys in 16 buckets of
//!   their leading 4 bits (byte counters, packed eight to a word); a second marks the keys of
//!   the bucket holding each lane's x-th key; then each lane's marked keys (a few) are
//!   gathered into 16 slots, and eight lanes at a time are sorted by a sorting network.
//!
//! Keys and ties are those of [`KeyLayout`]: a key orders as its value unless two values share
//! their leading bits, and then the values are compared in full (a cold path).

use core::cmp::Ordering;

use crate::select::KeyLayout;

/// Largest radix handled here: bucket counts are bytes, and a lane's marks are 4 words of 64.
pub(crate) const MAX_RADIX: u32 = 255;

/// Most lanes in a group: the widest AES backend (VAES-512) runs 64 blocks at once.
pub(crate) const MAX_LANES: usize = 64;

/// Words of scratch per lane besides its row entries: marks, bucket counts (2), the bucket
/// of the x-th key, its rank in the bucket and the bucket's size, and the bucket's keys.
pub(crate) const LANE_WORDS: usize = MARK_WORDS + 5 + SMALL_BUCKET;

/// Words in a lane's set of marked values (one bit per value, radix ≤ 256).
const MARK_WORDS: usize = 4;

/// Buckets of leading bits, 16 byte counters in two words per lane.
const BUCKET_SHIFT: u32 = 60;

/// Keys of a bucket sorted branch-free in slots; larger buckets are gathered and selected
/// from by [`pick_large`]. The x-th key's bucket holds 1 + Binomial(n − 1, 1/16) keys: more than 16
/// about once in 2 400 steps at radix 100, once in 5 at 200, every other step at 255.
const SMALL_BUCKET: usize = 16;

/// One digit step's keystream for a group of lanes, block by block: block `j` of lane `l` is
/// `bytes[(j·lanes + l)·16 ..][..16]`. One block row of slack follows the last block, so that
/// every value's 8 leading bytes can be read.
pub(crate) struct Blocks<'a> {
    bytes: &'a [u8],
    lanes: usize,
    layout: KeyLayout,
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
        }
    }

    /// Bytes of one block row: block `j` of every lane.
    #[inline(always)]
    fn block_row(&self, j: usize) -> &'a [u8] {
        let width = self.lanes * 16;
        &self.bytes[j * width..][..width]
    }

    /// The keys of value `k` of every lane, into `row[..lanes]`.
    ///
    /// A lane's keystream read as big-endian words: the value's 8 leading bytes start in word
    /// `k·b / 8`, at byte `k·b mod 8`, so they are that word shifted left and topped up from
    /// the next. Word and shift are the same for every lane, so each case is a plain loop over
    /// the lanes' blocks.
    #[inline(always)]
    pub fn row(&self, k: usize, row: &mut [u64]) {
        let offset = k * self.layout.bytes_per_value();
        let (block, shift) = (offset / 16, 8 * (offset % 8) as u32);
        let (blocks, _) = self.block_row(block).as_chunks::<16>();
        let row = &mut row[..self.lanes];
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
                let (next, _) = self.block_row(block + 1).as_chunks::<16>();
                for (out, (block, next)) in row.iter_mut().zip(blocks.iter().zip(next)) {
                    let lead = halves(block).1 << shift | halves(next).0 >> (64 - shift);
                    *out = key(lead);
                }
            }
        }
    }

    /// The key of value `k` of one lane (as [`Blocks::row`] makes it).
    #[inline(always)]
    fn key(&self, lane: usize, k: usize) -> u64 {
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
    fn word(&self, lane: usize, i: usize) -> u64 {
        let at = ((i / 2) * self.lanes + lane) * 16 + (i % 2) * 8;
        self.bytes
            .get(at..)
            .and_then(<[u8]>::first_chunk::<8>)
            .map_or(0, |word| u64::from_be_bytes(*word))
    }

    /// Bytes of lane `lane`'s keystream from `offset` on.
    fn read(&self, lane: usize, offset: usize, out: &mut [u8]) {
        for (at, byte) in (offset..).zip(out) {
            *byte = self.block_row(at / 16)[lane * 16 + at % 16];
        }
    }

    /// Pairs `(value, index)` of one lane compared in full, for keys whose leading bits tie.
    #[cold]
    fn cmp_pairs(&self, lane: usize, a: u64, b: u64) -> Ordering {
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
    fn cmp(&self, lane: usize, a: u64, b: u64) -> Ordering {
        if self.layout.exact() || !self.layout.same_lead(a, b) {
            a.cmp(&b)
        } else {
            self.cmp_pairs(lane, a, b)
        }
    }
}

/// A keystream block's two halves as big-endian words.
#[inline(always)]
fn halves(block: &[u8; 16]) -> (u64, u64) {
    let (mut high, mut low) = ([0u8; 8], [0u8; 8]);
    high.copy_from_slice(&block[..8]);
    low.copy_from_slice(&block[8..]);
    (u64::from_be_bytes(high), u64::from_be_bytes(low))
}

/// Per-lane working memory for [`forward`] and [`inverse`], carved from the key scratch.
pub(crate) struct Work<'w> {
    /// `n` rows of `lanes` keys.
    rows: &'w mut [u64],
    /// [`LANE_WORDS`] columns of `lanes` words.
    columns: &'w mut [u64],
}

impl<'w> Work<'w> {
    /// Working memory for `lanes` lanes and radix `n` from `keys`, which must hold
    /// [`Work::words`] of them.
    #[inline]
    pub fn new(keys: &'w mut [u64], lanes: usize, n: u32) -> Self {
        let (rows, rest) = keys.split_at_mut(n as usize * lanes);
        Work {
            rows,
            columns: &mut rest[..LANE_WORDS * lanes],
        }
    }

    /// Words of key scratch for `lanes` lanes and radix `n`.
    #[inline]
    pub fn words(lanes: usize, n: u32) -> usize {
        (n as usize + LANE_WORDS) * lanes
    }
}

/// Whether selecting for the whole group beats selecting lane by lane on this CPU: with
/// AVX-512. The portable build lost to the lane-by-lane path in paired runs on an AVX-512 CPU
/// (lockstep encryption 1.06× the time for Riffpe(100, 8), 2.0× for Riffpe(10, 16) and
/// (10, 6); decryption 0.87× for (100, 8) but 1.08–1.10× for radix 10), so elsewhere lockstep
/// selects lane by lane. The portable build stays: it is the code the AVX-512 build compiles,
/// tested on every target.
#[inline]
pub(crate) fn pays() -> bool {
    #[cfg(target_arch = "x86_64")]
    if simd::avx512() {
        return true;
    }
    false
}

/// π(x) for every lane: `digits[l]` is lane `l`'s x, replaced by its π(x).
pub(crate) fn forward(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    if simd::avx512() {
        // SAFETY: the CPU has the features `forward_avx512` is compiled with.
        return unsafe { simd::forward_avx512(blocks, work, digits) };
    }
    forward_any(blocks, work, digits)
}

/// π⁻¹(k) for every lane: `digits[l]` is lane `l`'s k, replaced by its rank.
pub(crate) fn inverse(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    if simd::avx512() {
        // SAFETY: the CPU has the features `inverse_avx512` is compiled with.
        return unsafe { simd::inverse_avx512(blocks, work, digits) };
    }
    inverse_any(blocks, work, digits)
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use core::arch::x86_64::*;

    use super::{Blocks, Picked, SMALL_BUCKET, Work, mask_below, pick_large, sort16};
    use crate::select::KeyLayout;

    cpufeatures::new!(avx512_cpu, "avx512f", "avx512bw", "avx512vl");

    pub(super) fn avx512() -> bool {
        avx512_cpu::get()
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) fn forward_avx512(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        if blocks.layout.n as usize <= SMALL_RADIX {
            forward_small(blocks, work, digits)
        } else {
            let picked = super::bucket_keys(blocks, work, digits);
            rank_slots(blocks, &picked, digits)
        }
    }

    /// Radices up to this rank every key against every other, eight lanes to a vector: n²
    /// compares beat counting, choosing a bucket and sorting it when n is this small
    /// (lockstep Riffpe(10, 16) and (10, 6) encryption in 0.59× and 0.58× the bucket path's
    /// time, paired runs).
    const SMALL_RADIX: usize = 16;

    /// π(x) for every lane by ranking all keys: key k is the answer where exactly x keys lie
    /// below it.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    fn forward_small(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        let lanes = blocks.lanes;
        let layout = &blocks.layout;
        let n = layout.n as usize;
        let rows = &mut work.rows[..n * lanes];
        for (k, row) in rows.chunks_exact_mut(lanes).enumerate() {
            blocks.row(k, row);
        }
        for (chunk, digits) in digits[..lanes].chunks_mut(8).enumerate() {
            let first = chunk * 8;
            let mut keys = [_mm512_setzero_si512(); SMALL_RADIX];
            for (key, row) in keys.iter_mut().zip(rows.chunks_exact(lanes)) {
                *key = vector(&row[first..first + digits.len()]);
            }
            let keys = &keys[..n];
            let x: [u64; 8] = core::array::from_fn(|l| digits.get(l).map_or(0, |&d| u64::from(d)));
            let x = vector(&x);
            let (found, ties) = select8(keys, x, layout);
            let found = array(found);
            let x = array(x);
            for (l, digit) in digits.iter_mut().enumerate() {
                *digit = if ties & (1 << l) == 0 {
                    layout.index(found[l]) as u32
                } else {
                    let all = core::array::from_fn(|w| mask_below(n, w));
                    pick_large(blocks, rows, first + l, all, x[l])
                };
            }
        }
    }

    /// [`super::rank_slots`], ranking eight lanes to a vector.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    fn rank_slots(blocks: &Blocks<'_>, picked: &Picked<'_>, digits: &mut [u32]) {
        let lanes = blocks.lanes;
        for (chunk, digits) in digits[..lanes].chunks_mut(8).enumerate() {
            let first = chunk * 8;
            let mut keys = [_mm512_setzero_si512(); SMALL_BUCKET];
            for (s, key) in keys.iter_mut().enumerate() {
                *key = vector(&picked.slots[s * lanes + first..][..digits.len()]);
            }
            let x = vector(&picked.ranks[first..][..digits.len()]);
            let (found, ties) = select16(keys, x, &blocks.layout);
            let found = array(found);
            for (l, digit) in digits.iter_mut().enumerate() {
                let lane = first + l;
                *digit = if !picked.small(lane) || ties & (1 << l) != 0 {
                    picked.large(blocks, lane)
                } else {
                    blocks.layout.index(found[l]) as u32
                };
            }
        }
    }

    /// For eight lanes (lane `l` in word `l` of each vector): the key of rank `x` among 16
    /// `keys` (by the sorting network [`SORT16`]), and the lanes where another key shares
    /// that key's leading bits, so that key order may not be pair order there.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn select16(mut keys: [__m512i; 16], x: __m512i, layout: &KeyLayout) -> (__m512i, __mmask8) {
        sort16(&mut keys, |a, b| {
            (_mm512_min_epu64(a, b), _mm512_max_epu64(a, b))
        });
        let mut found = _mm512_setzero_si512();
        for (rank, &key) in keys.iter().enumerate() {
            let here = _mm512_cmpeq_epu64_mask(x, _mm512_set1_epi64(rank as i64));
            found = _mm512_mask_mov_epi64(found, here, key);
        }
        (found, ties(&keys, found, layout))
    }

    /// For eight lanes (lane `l` in word `l` of each vector): the key with exactly `x` of
    /// `keys` below it, and the lanes where another key shares that key's leading bits, so
    /// that key order may not be pair order there.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn select8(keys: &[__m512i], x: __m512i, layout: &KeyLayout) -> (__m512i, __mmask8) {
        let one = _mm512_set1_epi64(1);
        let mut found = _mm512_setzero_si512();
        for &pivot in keys {
            let mut below = _mm512_setzero_si512();
            for &other in keys {
                let less = _mm512_cmplt_epu64_mask(other, pivot);
                below = _mm512_mask_add_epi64(below, less, below, one);
            }
            found = _mm512_mask_mov_epi64(found, _mm512_cmpeq_epu64_mask(below, x), pivot);
        }
        (found, ties(keys, found, layout))
    }

    /// The lanes where a key other than `found` shares its leading bits (none if keys hold
    /// whole values).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn ties(keys: &[__m512i], found: __m512i, layout: &KeyLayout) -> __mmask8 {
        if layout.exact() {
            return 0;
        }
        let one = _mm512_set1_epi64(1);
        let value_mask = _mm512_set1_epi64(layout.value_mask() as i64);
        let mut same = _mm512_setzero_si512();
        for &other in keys {
            let equal = _mm512_testn_epi64_mask(_mm512_xor_si512(other, found), value_mask);
            same = _mm512_mask_add_epi64(same, equal, same, one);
        }
        _mm512_cmpneq_epu64_mask(same, one)
    }

    /// Up to 8 words as a vector, zeros after them.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn vector(words: &[u64]) -> __m512i {
        let w = |i: usize| words.get(i).map_or(0, |&w| w as i64);
        _mm512_set_epi64(w(7), w(6), w(5), w(4), w(3), w(2), w(1), w(0))
    }

    /// A vector's 8 words.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn array(v: __m512i) -> [u64; 8] {
        let halves = [_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64::<1>(v)];
        core::array::from_fn(|i| {
            let half = halves[i / 4];
            (match i % 4 {
                0 => _mm256_extract_epi64::<0>(half),
                1 => _mm256_extract_epi64::<1>(half),
                2 => _mm256_extract_epi64::<2>(half),
                _ => _mm256_extract_epi64::<3>(half),
            }) as u64
        })
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) fn inverse_avx512(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        super::inverse_any(blocks, work, digits)
    }
}

/// Word `w` of the set of values `0..n`.
#[inline(always)]
fn mask_below(n: usize, w: usize) -> u64 {
    match n.saturating_sub(64 * w) {
        0 => 0,
        bits @ 1..64 => (1 << bits) - 1,
        _ => u64::MAX,
    }
}

/// π(x) for every lane by buckets of leading bits (the module doc's "Forward").
#[inline(always)]
fn forward_any(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    let picked = bucket_keys(blocks, work, digits);
    rank_slots(blocks, &picked, digits);
}

/// Each lane's bucket of the x-th key, found from counts of all keys by leading bits; its keys
/// gathered into the lane's slots.
#[inline(always)]
fn bucket_keys<'w>(blocks: &Blocks<'_>, work: Work<'w>, digits: &[u32]) -> Picked<'w> {
    let lanes = blocks.lanes;
    let n = blocks.layout.n as usize;
    let Work { rows, columns } = work;
    let (marks, columns) = columns.split_at_mut(MARK_WORDS * lanes);
    let (low, columns) = columns.split_at_mut(lanes);
    let (high, columns) = columns.split_at_mut(lanes);
    let (buckets, columns) = columns.split_at_mut(lanes);
    let (ranks, columns) = columns.split_at_mut(lanes);
    let (sizes, columns) = columns.split_at_mut(lanes);
    let slots = &mut columns[..SMALL_BUCKET * lanes];
    let digits = &digits[..lanes];

    // Rows, and each lane's keys counted by bucket: byte `c mod 8` of word `c / 8`.
    low.fill(0);
    high.fill(0);
    for k in 0..n {
        let row = &mut rows[k * lanes..][..lanes];
        blocks.row(k, row);
        for ((&key, low), high) in row.iter().zip(low.iter_mut()).zip(high.iter_mut()) {
            let one = 1u64 << ((key >> (BUCKET_SHIFT - 3)) & 0x38);
            let upper = key >> 63;
            *low += one & upper.wrapping_sub(1);
            *high += one & upper.wrapping_neg();
        }
    }

    // Each lane's bucket of the x-th key, the x-th key's rank inside it and the bucket's size,
    // from the counts' running sums (bytes too: they reach at most n).
    for (lane, &x) in digits.iter().enumerate() {
        (buckets[lane], ranks[lane], sizes[lane]) = find_bucket(low[lane], high[lane], x.into());
    }

    // Marks: bit k of a lane's set when value k's key lies in the lane's bucket.
    marks.fill(0);
    for k in 0..n {
        let row = &rows[k * lanes..][..lanes];
        let bit = 1u64 << (k % 64);
        let marks = &mut marks[(k / 64) * lanes..][..lanes];
        for ((mark, &key), &bucket) in marks.iter_mut().zip(row).zip(buckets.iter()) {
            *mark |= bit & u64::from(key >> BUCKET_SHIFT == bucket).wrapping_neg();
        }
    }

    gather(rows, marks, sizes, n, slots);
    Picked {
        rows,
        marks,
        ranks,
        sizes,
        slots,
    }
}

/// The bucket holding the x-th key, the x-th key's rank inside it and the bucket's size, from
/// 16 bucket counts in bytes (`low`: buckets 0–7, `high`: 8–15). Multiplying by `0x0101…01`
/// turns the counts into running sums, which never pass n ≤ 255 and so never carry into the
/// next byte; the bucket is the number of running sums at or below x, found by a branch-free
/// binary search.
#[inline(always)]
fn find_bucket(low: u64, high: u64, x: u64) -> (u64, u64, u64) {
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

/// Each lane's marked keys, in slots: slot `s` of lane `l` is `slots[s·lanes + l]`, and slots
/// past a lane's keys hold `u64::MAX`. Lanes whose bucket holds more than [`SMALL_BUCKET`]
/// keys are left to [`pick_large`].
#[inline(always)]
fn gather(rows: &[u64], marks: &[u64], sizes: &[u64], n: usize, slots: &mut [u64]) {
    let lanes = sizes.len();
    slots.fill(u64::MAX);
    for (lane, &size) in sizes.iter().enumerate() {
        if size as usize > SMALL_BUCKET {
            continue;
        }
        let mut slot = lane;
        for w in 0..n.div_ceil(64) {
            let mut word = marks[w * lanes + lane];
            while word != 0 {
                let k = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                slots[slot] = rows[k * lanes + lane];
                slot += lanes;
            }
        }
    }
}

/// Each lane's bucket of keys, for picking the key of a rank from it.
struct Picked<'a> {
    rows: &'a [u64],
    /// Per lane: the bucket's values (one bit each), then the rank of the key to pick, then
    /// the bucket's size.
    marks: &'a [u64],
    ranks: &'a [u64],
    sizes: &'a [u64],
    /// The keys of buckets up to [`SMALL_BUCKET`] (see [`gather`]).
    slots: &'a [u64],
}

impl Picked<'_> {
    /// Whether lane `lane`'s bucket was gathered into its slots.
    #[inline(always)]
    fn small(&self, lane: usize) -> bool {
        self.sizes[lane] as usize <= SMALL_BUCKET
    }

    /// Lane `lane`'s value by [`pick_large`].
    fn large(&self, blocks: &Blocks<'_>, lane: usize) -> u32 {
        let lanes = blocks.lanes;
        let set = core::array::from_fn(|w| self.marks[w * lanes + lane]);
        pick_large(blocks, self.rows, lane, set, self.ranks[lane])
    }
}

/// Each lane's key of rank `ranks[l]` among its slots, as its value: eight lanes at a time,
/// the slots sorted by [`SORT16`], branch-free. A slot past the bucket holds u64::MAX, above
/// every key (or equal to one, and then the same answer). Sorted after all lanes are
/// gathered, so that the slots are not read as vectors right after their narrow stores (when
/// each lane was ranked straight after its gathering, those wide loads were the ranking's
/// hottest instructions in the profile).
#[inline(always)]
fn rank_slots(blocks: &Blocks<'_>, picked: &Picked<'_>, digits: &mut [u32]) {
    let (lanes, slots) = (blocks.lanes, picked.slots);
    let layout = &blocks.layout;
    for (chunk, digits) in digits[..lanes].chunks_mut(8).enumerate() {
        let first = chunk * 8;
        let mut keys: [[u64; 8]; SMALL_BUCKET] =
            core::array::from_fn(|s| eight(&slots[s * lanes + first..][..digits.len()]));
        sort16(&mut keys, |a, b| {
            let min = core::array::from_fn(|l| a[l].min(b[l]));
            let max = core::array::from_fn(|l| a[l].max(b[l]));
            (min, max)
        });
        for (l, digit) in digits.iter_mut().enumerate() {
            let lane = first + l;
            let found = keys[(picked.ranks[lane] as usize).min(SMALL_BUCKET - 1)][l];
            // Key order is pair order unless another key shares the found key's leading bits
            // (such keys share its bucket).
            let tied = !layout.exact()
                && keys
                    .iter()
                    .filter(|k| layout.same_lead(k[l], found))
                    .count()
                    != 1;
            *digit = if !picked.small(lane) || tied {
                picked.large(blocks, lane)
            } else {
                layout.index(found) as u32
            };
        }
    }
}

/// A sorting network for 16 keys: after compare-exchanging each pair `(a, b)` in turn
/// (smaller to `a`), the keys are in order. Batcher's odd–even merge sort, 63 pairs.
const SORT16: [(u8, u8); 63] = odd_even_merge_sort();

/// Sorts 16 items by [`SORT16`], `exchange(a, b)` giving the smaller and the larger.
/// Unrolled, so that the items stay in registers (as a loop over the pairs they went through
/// memory: lockstep Riffpe(100, 8) encryption 10 % slower).
#[inline(always)]
fn sort16<T: Copy>(items: &mut [T; 16], exchange: impl Fn(T, T) -> (T, T)) {
    macro_rules! steps {
        ($($i:literal)*) => {$(
            let (a, b) = (SORT16[$i].0 as usize, SORT16[$i].1 as usize);
            (items[a], items[b]) = exchange(items[a], items[b]);
        )*};
    }
    steps!(
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
        32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
        61 62
    );
}

/// The pairs of Batcher's odd–even merge sort of 16 items, layer by layer.
const fn odd_even_merge_sort() -> [(u8, u8); 63] {
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

/// Up to 8 words, u64::MAX after them.
#[inline(always)]
fn eight(words: &[u64]) -> [u64; 8] {
    match words.first_chunk::<8>() {
        Some(&all) => all,
        None => core::array::from_fn(|i| words.get(i).copied().unwrap_or(u64::MAX)),
    }
}

/// The pick for a bucket of more than [`SMALL_BUCKET`] keys or with tied leading bits: the
/// marked keys gathered and the one of rank `rank` selected in expected linear time, keys
/// compared in full where their leading bits tie. Not cold: above radix 128 buckets this
/// large are common (see [`SMALL_BUCKET`]).
#[inline(never)]
fn pick_large(
    blocks: &Blocks<'_>,
    rows: &[u64],
    lane: usize,
    set: [u64; MARK_WORDS],
    rank: u64,
) -> u32 {
    let mut keys = [0u64; MAX_RADIX as usize];
    let mut len = 0;
    for (key, k) in keys.iter_mut().zip(Marked(set)) {
        *key = rows[k * blocks.lanes + lane];
        len += 1;
    }
    let keys = &mut keys[..len];
    if rank as usize >= keys.len() {
        return unreachable_rank();
    }
    let (_, nth, _) = keys.select_nth_unstable_by(rank as usize, |&a, &b| blocks.cmp(lane, a, b));
    blocks.layout.index(*nth) as u32
}

#[inline(always)]
fn inverse_any(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    let lanes = blocks.lanes;
    let layout = &blocks.layout;
    let Work { rows, columns } = work;
    let row = &mut rows[..lanes];
    let (pivots, columns) = columns.split_at_mut(lanes);
    let (below, columns) = columns.split_at_mut(lanes);
    let same = &mut columns[..lanes];
    let digits = &mut digits[..lanes];

    for (lane, (pivot, &k)) in pivots.iter_mut().zip(digits.iter()).enumerate() {
        *pivot = blocks.key(lane, k as usize);
    }
    below.fill(0);
    same.fill(0);
    for k in 0..layout.n as usize {
        blocks.row(k, row);
        let counters = below.iter_mut().zip(same.iter_mut());
        for ((&key, &pivot), (below, same)) in row.iter().zip(pivots.iter()).zip(counters) {
            *below += u64::from(key < pivot);
            *same += u64::from(layout.same_lead(key, pivot));
        }
    }
    for (lane, digit) in digits.iter_mut().enumerate() {
        *digit = if layout.exact() || same[lane] == 1 {
            below[lane] as u32
        } else {
            rank_exact(blocks, lane, pivots[lane])
        };
    }
}

/// The rank of `pivot` among lane `lane`'s keys, compared in full where leading bits tie.
#[cold]
#[inline(never)]
fn rank_exact(blocks: &Blocks<'_>, lane: usize, pivot: u64) -> u32 {
    (0..blocks.layout.n as usize)
        .filter(|&k| blocks.cmp(lane, blocks.key(lane, k), pivot) == Ordering::Less)
        .count() as u32
}

/// A rank outside the bucket cannot happen: the bucket was chosen to hold it.
#[cold]
fn unreachable_rank() -> u32 {
    0
}

/// The indices marked in a lane's set, in increasing order.
struct Marked([u64; MARK_WORDS]);

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

#[cfg(test)]
mod tests {
    //! Every path against a plain sort of each lane's pairs, on keystreams drawn from tiny
    //! alphabets so that leading bits tie often (real AES output would tie about 2^-44 per step).

    extern crate std;

    use super::*;
    use crate::select::tests::plain_permutation;
    use proptest::prelude::*;
    use std::vec::Vec;

    /// `(lanes, n, b, block-major keystream, one digit per lane)`.
    fn group() -> impl Strategy<Value = (usize, usize, usize, Vec<u8>, Vec<u32>)> {
        (
            prop_oneof![1usize..=20, Just(MAX_LANES)],
            prop_oneof![2usize..=20, 2usize..=MAX_RADIX as usize],
            1usize..=20,
            prop_oneof![Just(1u16), Just(2), Just(3), Just(256)],
        )
            .prop_flat_map(|(lanes, n, b, alphabet)| {
                let blocks = (n * b).div_ceil(16) + 1;
                let byte = (0..alphabet).prop_map(|x| x as u8);
                let digits = proptest::collection::vec(0..n as u32, lanes);
                let bytes = proptest::collection::vec(byte, blocks * lanes * 16);
                (Just(lanes), Just(n), Just(b), bytes, digits)
            })
    }

    /// Lane `lane`'s keystream, contiguous.
    fn lane_stream(bytes: &[u8], lanes: usize, lane: usize) -> Vec<u8> {
        bytes
            .chunks_exact(lanes * 16)
            .flat_map(|row| &row[lane * 16..][..16])
            .copied()
            .collect()
    }

    type Select = fn(&Blocks<'_>, Work<'_>, &mut [u32]);

    fn check(
        (lanes, n, b, bytes, digits): &(usize, usize, usize, Vec<u8>, Vec<u32>),
        paths: &[(&str, Select, bool)],
    ) -> Result<(), TestCaseError> {
        let layout = KeyLayout::new(*n as u32, *b);
        let blocks = Blocks::new(bytes, *lanes, layout);
        let mut keys = std::vec![0u64; Work::words(*lanes, *n as u32)];
        for &(name, select, forward) in paths {
            // As the engine calls them: one digit per lane at the front of a column of
            // MAX_LANES, the rest left alone.
            let mut out = digits.clone();
            out.resize(MAX_LANES, u32::MAX);
            select(&blocks, Work::new(&mut keys, *lanes, *n as u32), &mut out);
            prop_assert!(out[*lanes..].iter().all(|&d| d == u32::MAX));
            for lane in 0..*lanes {
                let pi = plain_permutation(&lane_stream(bytes, *lanes, lane), *n, *b);
                let x = digits[lane];
                let expected = if forward {
                    pi[x as usize]
                } else {
                    pi.iter().position(|&k| k == x).unwrap_or(usize::MAX) as u32
                };
                prop_assert_eq!(
                    out[lane],
                    expected,
                    "{} lane {} of {}, n {}, b {}",
                    name,
                    lane,
                    lanes,
                    n,
                    b
                );
            }
        }
        Ok(())
    }

    #[test]
    fn sort16_sorts_every_input_of_zeros_and_ones() {
        // A network that sorts every input of zeros and ones sorts every input (Knuth's 0-1
        // principle).
        for bits in 0u32..1 << 16 {
            let mut items: [u8; 16] = core::array::from_fn(|i| (bits >> i & 1) as u8);
            sort16(&mut items, |a, b| (a.min(b), a.max(b)));
            assert!(items.is_sorted(), "{bits:016b}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn every_path_matches_a_plain_sort(case in group()) {
            // On a CPU with AVX-512, `forward` and `inverse` run its build (and radices up to
            // 16 the all-pairs ranking); `*_any` always run the portable one.
            let paths: [(&str, Select, bool); 4] = [
                ("forward", forward, true),
                ("inverse", inverse, false),
                ("portable forward", forward_any, true),
                ("portable inverse", inverse_any, false),
            ];
            check(&case, &paths)?;
        }
    }
}
