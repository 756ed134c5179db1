//! The permutations of one digit step for a whole group of lanes at once (lockstep with
//! [`Selection::Fast`](crate::Selection::Fast), radices up to [`MAX_RADIX`]).
//!
//! The keystream stays in the order the AES backend makes it, block by block: block `j` of
//! every lane side by side ([`Blocks`]). Lanes are selected for in chunks of [`CHUNK`] (eight,
//! one AVX-512 vector of keys): the key of value `k` is made for the chunk's lanes at once (a
//! row), every pass reads only the chunk's `n` rows (small enough for L1), and every pass runs
//! over the lanes innermost, so no loop carries a chain of dependent operations. The engine uses this
//! on x86-64 CPUs found at run time to have AVX-512 ([`pays`]); there the passes that the
//! compiler vectorized badly are written with intrinsics (`simd`). The portable code is the
//! reference they are tested against, on every target, and handles a group's last chunk of
//! fewer than eight lanes.
//!
//! - Inverse (decryption): the rows, then one pass counts, per lane, the keys below the lane's
//!   pivot.
//! - Forward (encryption): the rows, then one pass counts each lane's keys in 16 buckets of
//!   their leading 4 bits (byte counters, packed eight to a word); a second marks the keys of
//!   the bucket holding each lane's x-th key; then each lane's marked keys (a few) are
//!   gathered into 16 slots, and the chunk's slots are sorted by a sorting network.
//!
//! Keys and ties are those of [`KeyLayout`]: a key orders as its value unless two values share
//! their leading bits, and then the values are compared in full (a cold path).

use core::cmp::Ordering;

use crate::select::KeyLayout;

/// Largest radix handled here: bucket counts are bytes, and a lane's marks are 4 words of 64.
pub(crate) const MAX_RADIX: u32 = 255;

/// Most lanes in a group: the widest AES backend (VAES-512) runs 64 blocks at once.
pub(crate) const MAX_LANES: usize = 64;

/// Lanes selected together: eight keys, one AVX-512 vector.
const CHUNK: usize = 8;

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

    /// The keys of value `k` of the [`CHUNK`] lanes from `first` on, `count` of which exist;
    /// the others get `u64::MAX`.
    #[inline(always)]
    fn chunk_row(&self, k: usize, first: usize, count: usize, row: &mut [u64; CHUNK]) {
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
    fn row_of(&self, k: usize, first: usize, row: &mut [u64]) {
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

/// Working memory for [`forward`] and [`inverse`], carved from the key scratch: the rows of
/// one [`CHUNK`] of lanes, whatever the group's size.
pub(crate) struct Work<'w> {
    /// `n` rows of [`CHUNK`] keys.
    rows: &'w mut [[u64; CHUNK]],
}

impl<'w> Work<'w> {
    /// Working memory for radix `n` from `keys`, which must hold [`Work::words`] of them.
    #[inline]
    pub fn new(keys: &'w mut [u64], n: u32) -> Self {
        let (rows, _) = keys[..Self::words(n)].as_chunks_mut::<CHUNK>();
        Work { rows }
    }

    /// Words of key scratch for radix `n`.
    #[inline]
    pub fn words(n: u32) -> usize {
        n as usize * CHUNK
    }
}

/// Whether selecting for the whole group beats selecting lane by lane on this CPU: with
/// AVX-512. The portable code, run in place of the AVX-512 code on an AVX-512 CPU, took 0.99×
/// the lane-by-lane path's time for lockstep Riffpe(100, 8) encryption but 1.87× and 1.84× for
/// Riffpe(10, 16) and (10, 6), and 0.87–0.98× for decryption (paired runs), so elsewhere
/// lockstep selects lane by lane.
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

    use super::{
        BUCKET_SHIFT, Blocks, CHUNK, Counts, Kernel, MARK_WORDS, Marks, Picked, Work, pick_large,
        pivots, rank_digits, sort16,
    };
    use crate::select::KeyLayout;

    cpufeatures::new!(avx512_cpu, "avx512f", "avx512bw", "avx512vl");

    pub(super) fn avx512() -> bool {
        avx512_cpu::get()
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) fn forward_avx512(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        if blocks.layout.n as usize <= SMALL_RADIX {
            forward_small(blocks, digits)
        } else {
            // Closures, not the functions: a `#[target_feature]` function does not implement
            // the `Fn` traits.
            let kernel = Kernel {
                count: |b: &Blocks<'_>, first, count, rows: &mut [[u64; CHUNK]]| {
                    count_rows(b, first, count, rows)
                },
                mark: |rows: &[[u64; CHUNK]], buckets: &[u64; CHUNK]| mark_rows(rows, buckets),
                rank: |b: &Blocks<'_>, p: &Picked<'_>, d: &mut [u32]| rank_slots(b, p, d),
            };
            super::by_chunks(blocks, work, digits, kernel)
        }
    }

    /// Radices up to this rank every key against every other, eight lanes to a vector: n²
    /// compares beat counting, choosing a bucket and sorting it when n is this small
    /// (lockstep Riffpe(10, 16) and (10, 6) encryption both in 0.65× the bucket path's time,
    /// paired runs).
    const SMALL_RADIX: usize = 16;

    /// π(x) for every lane by ranking all keys: key k is the answer where exactly x keys lie
    /// below it.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    fn forward_small(blocks: &Blocks<'_>, digits: &mut [u32]) {
        let layout = &blocks.layout;
        let n = layout.n as usize;
        for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
            let first = chunk * CHUNK;
            let mut rows = [[0u64; CHUNK]; SMALL_RADIX];
            let rows = &mut rows[..n];
            make_rows(blocks, first, digits.len(), rows);
            let keys: [__m512i; SMALL_RADIX] =
                core::array::from_fn(|k| rows.get(k).map_or(_mm512_setzero_si512(), |r| load(r)));
            let x = core::array::from_fn(|l| digits.get(l).map_or(0, |&d| u64::from(d)));
            let (found, ties) = select8(&keys[..n], load(&x), layout);
            let found = array(found);
            for (l, digit) in digits.iter_mut().enumerate() {
                *digit = if ties & (1 << l) == 0 {
                    layout.index(found[l]) as u32
                } else {
                    let all = core::array::from_fn(|w| mask_below(n, w));
                    pick_large(blocks, rows, first, l, all, x[l])
                };
            }
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

    /// [`super::count_rows`], a row of keys made and counted as one vector.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    fn count_rows(
        blocks: &Blocks<'_>,
        first: usize,
        count: usize,
        rows: &mut [[u64; CHUNK]],
    ) -> Counts {
        make_rows(blocks, first, count, rows);
        let (one, byte) = (_mm512_set1_epi64(1), _mm512_set1_epi64(0x38));
        let (mut low, mut high) = (_mm512_setzero_si512(), _mm512_setzero_si512());
        for row in rows.iter() {
            let keys = load(row);
            let at = _mm512_and_si512(_mm512_srli_epi64::<{ BUCKET_SHIFT - 3 }>(keys), byte);
            let counter = _mm512_sllv_epi64(one, at);
            let upper = _mm512_cmplt_epi64_mask(keys, _mm512_setzero_si512());
            low = _mm512_mask_add_epi64(low, !upper, low, counter);
            high = _mm512_mask_add_epi64(high, upper, high, counter);
        }
        (array(low), array(high))
    }

    /// The rows of the [`CHUNK`] lanes from `first` on, `count` of which exist (a chunk of
    /// fewer lanes than [`CHUNK`] by the portable code).
    ///
    /// Keys as [`Blocks::chunk_row`] makes them, a row at a time: the lanes' 16 words of the value's
    /// block row (and of the next, if the value starts in a block's second half) loaded as
    /// two vectors, their first and second halves picked into one vector each and
    /// byte-swapped to big-endian, then shifted together. (As a function of its own this was
    /// not inlined, and each row went through the stack.)
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    fn make_rows(blocks: &Blocks<'_>, first: usize, count: usize, rows: &mut [[u64; CHUNK]]) {
        if count < CHUNK {
            for (k, row) in rows.iter_mut().enumerate() {
                blocks.chunk_row(k, first, count, row);
            }
            return;
        }
        let swap = _mm512_set_epi64(
            0x0809_0a0b_0c0d_0e0f,
            0x0001_0203_0405_0607,
            0x0809_0a0b_0c0d_0e0f,
            0x0001_0203_0405_0607,
            0x0809_0a0b_0c0d_0e0f,
            0x0001_0203_0405_0607,
            0x0809_0a0b_0c0d_0e0f,
            0x0001_0203_0405_0607,
        );
        let firsts = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
        let seconds = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
        let value_mask = _mm512_set1_epi64(blocks.layout.value_mask() as i64);
        let lines = |j: usize| {
            let (lines, _) = blocks.block_row(j)[first * 16..][..128].as_chunks::<64>();
            (load_bytes(&lines[0]), load_bytes(&lines[1]))
        };
        let half = |(a, b): (__m512i, __m512i), which| {
            _mm512_shuffle_epi8(_mm512_permutex2var_epi64(a, which, b), swap)
        };
        for (k, row) in rows.iter_mut().enumerate() {
            let offset = k * blocks.layout.bytes_per_value();
            let (block, byte) = (offset / 16, offset % 16);
            let lead = match byte {
                0 => half(lines(block), firsts),
                8 => half(lines(block), seconds),
                _ => {
                    let (high, low) = if byte < 8 {
                        let words = lines(block);
                        (half(words, firsts), half(words, seconds))
                    } else {
                        (half(lines(block), seconds), half(lines(block + 1), firsts))
                    };
                    let shift = 8 * (byte % 8) as i64;
                    _mm512_or_si512(
                        _mm512_sll_epi64(high, _mm_cvtsi64_si128(shift)),
                        _mm512_srl_epi64(low, _mm_cvtsi64_si128(64 - shift)),
                    )
                }
            };
            let key = _mm512_and_si512(lead, value_mask);
            store(row, _mm512_or_si512(key, _mm512_set1_epi64(k as i64)));
        }
    }

    /// [`super::mark_rows`], a row's keys compared with the lanes' buckets as one vector.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    fn mark_rows(rows: &[[u64; CHUNK]], buckets: &[u64; CHUNK]) -> Marks {
        let buckets = load(buckets);
        let mut marks = [[0u64; CHUNK]; MARK_WORDS];
        for (mark, rows) in marks.iter_mut().zip(rows.chunks(64)) {
            let mut set = _mm512_setzero_si512();
            for (bit, row) in rows.iter().enumerate() {
                let bucket = _mm512_srli_epi64::<BUCKET_SHIFT>(load(row));
                let hit = _mm512_cmpeq_epi64_mask(bucket, buckets);
                set = _mm512_mask_or_epi64(set, hit, set, _mm512_set1_epi64(1 << bit));
            }
            *mark = array(set);
        }
        marks
    }

    /// [`super::rank_slots`], the eight lanes in one vector.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    fn rank_slots(blocks: &Blocks<'_>, picked: &Picked<'_>, digits: &mut [u32]) {
        let keys = picked.slots.each_ref().map(|s| load(s));
        let (found, ties) = select16(keys, load(&picked.ranks), &blocks.layout);
        let found = array(found);
        for (l, digit) in digits.iter_mut().enumerate() {
            *digit = if !picked.small(l) || ties & (1 << l) != 0 {
                picked.large(blocks, l)
            } else {
                blocks.layout.index(found[l]) as u32
            };
        }
    }

    /// For eight lanes (lane `l` in word `l` of each vector): the key of rank `x` among 16
    /// `keys` (by the sorting network [`SORT16`](super::SORT16)), and the lanes where another key shares
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

    /// Eight words as a vector.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load(words: &[u64; CHUNK]) -> __m512i {
        // SAFETY: `words` is 64 readable bytes; the load is unaligned.
        unsafe { _mm512_loadu_si512(words.as_ptr().cast()) }
    }

    /// 64 bytes as a vector.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load_bytes(bytes: &[u8; 64]) -> __m512i {
        // SAFETY: `bytes` is 64 readable bytes; the load is unaligned.
        unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
    }

    /// A vector into eight words.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn store(words: &mut [u64; CHUNK], v: __m512i) {
        // SAFETY: `words` is 64 writable bytes; the store is unaligned.
        unsafe { _mm512_storeu_si512(words.as_mut_ptr().cast(), v) }
    }

    /// A vector's eight words.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn array(v: __m512i) -> [u64; CHUNK] {
        let mut words = [0; CHUNK];
        store(&mut words, v);
        words
    }

    /// [`super::inverse_any`] a chunk at a time: the chunk's rows made as vectors, then each
    /// compared with the lanes' pivots as one vector.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) fn inverse_avx512(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        let rows = work.rows;
        let one = _mm512_set1_epi64(1);
        let value_mask = _mm512_set1_epi64(blocks.layout.value_mask() as i64);
        for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
            let first = chunk * CHUNK;
            make_rows(blocks, first, digits.len(), rows);
            let pivots = pivots(rows, digits);
            let pivot = load(&pivots);
            let (mut below, mut same) = (_mm512_setzero_si512(), _mm512_setzero_si512());
            for row in rows.iter() {
                let key = load(row);
                let less = _mm512_cmplt_epu64_mask(key, pivot);
                below = _mm512_mask_add_epi64(below, less, below, one);
                let tied = _mm512_testn_epi64_mask(_mm512_xor_si512(key, pivot), value_mask);
                same = _mm512_mask_add_epi64(same, tied, same, one);
            }
            rank_digits(blocks, first, &pivots, array(below), array(same), digits);
        }
    }
}

/// π(x) for every lane by buckets of leading bits (the module doc's "Forward").
#[inline(always)]
fn forward_any(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    let kernel = Kernel {
        count: count_rows,
        mark: mark_rows,
        rank: rank_slots,
    };
    by_chunks(blocks, work, digits, kernel);
}

/// Per-lane counts of keys in 16 buckets of leading bits: byte `c mod 8` of word `c / 8` of
/// `low` (buckets 0–7) and `high` (8–15).
type Counts = ([u64; CHUNK], [u64; CHUNK]);

/// Per-lane sets of values, one bit each.
type Marks = [[u64; CHUNK]; MARK_WORDS];

/// The steps of one chunk's selection that the AVX-512 build writes with intrinsics, where
/// the compiler's own vectorization of the portable ones went wrong (it vectorized across
/// values, gathering one key per row).
struct Kernel<C, M, R> {
    /// Makes the rows of the [`CHUNK`] lanes from lane `first` on, `count` of which exist,
    /// and counts their keys by bucket.
    count: C,
    /// Marks each lane's keys in its bucket.
    mark: M,
    /// Each lane's key of its rank in its bucket, as its value.
    rank: R,
}

/// Selects for each [`CHUNK`] of lanes in turn, every pass over that chunk's rows: 6.4 KB for
/// radix 100, which fit in L1, where the rows of all 64 lanes of VAES-512 (51 KB) did not.
#[inline(always)]
fn by_chunks<C, M, R>(
    blocks: &Blocks<'_>,
    work: Work<'_>,
    digits: &mut [u32],
    kernel: Kernel<C, M, R>,
) where
    C: Fn(&Blocks<'_>, usize, usize, &mut [[u64; CHUNK]]) -> Counts,
    M: Fn(&[[u64; CHUNK]], &[u64; CHUNK]) -> Marks,
    R: Fn(&Blocks<'_>, &Picked<'_>, &mut [u32]),
{
    let rows = work.rows;
    for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
        let first = chunk * CHUNK;
        let (low, high) = (kernel.count)(blocks, first, digits.len(), rows);

        // Each lane's bucket of the x-th key, the x-th key's rank inside it and the bucket's
        // size, from the counts' running sums (bytes too: they reach at most n).
        let (mut buckets, mut ranks, mut sizes) = ([0; CHUNK], [0; CHUNK], [0; CHUNK]);
        for l in 0..CHUNK {
            let x = digits.get(l).map_or(0, |&x| x.into());
            (buckets[l], ranks[l], sizes[l]) = find_bucket(low[l], high[l], x);
        }

        let marks = (kernel.mark)(rows, &buckets);
        let slots = gather(rows, &marks, &sizes, digits.len());
        let picked = Picked {
            rows,
            first,
            marks,
            ranks,
            sizes,
            slots,
        };
        (kernel.rank)(blocks, &picked, digits);
    }
}

/// [`Kernel::count`]: the keys made one lane at a time, then counted a row at a time (in two
/// passes: a row read as one vector straight after its narrow stores waits for them).
#[inline(always)]
fn count_rows(
    blocks: &Blocks<'_>,
    first: usize,
    count: usize,
    rows: &mut [[u64; CHUNK]],
) -> Counts {
    for (k, row) in rows.iter_mut().enumerate() {
        blocks.chunk_row(k, first, count, row);
    }
    let (mut low, mut high) = ([0u64; CHUNK], [0u64; CHUNK]);
    for row in rows.iter() {
        for l in 0..CHUNK {
            let one = 1u64 << ((row[l] >> (BUCKET_SHIFT - 3)) & 0x38);
            let upper = row[l] >> 63;
            low[l] += one & upper.wrapping_sub(1);
            high[l] += one & upper.wrapping_neg();
        }
    }
    (low, high)
}

/// [`Kernel::mark`]: bit k of a lane's set when value k's key lies in the lane's bucket.
#[inline(always)]
fn mark_rows(rows: &[[u64; CHUNK]], buckets: &[u64; CHUNK]) -> Marks {
    let mut marks = [[0u64; CHUNK]; MARK_WORDS];
    for (mark, rows) in marks.iter_mut().zip(rows.chunks(64)) {
        for (bit, row) in rows.iter().enumerate() {
            let bit = 1u64 << bit;
            for l in 0..CHUNK {
                mark[l] |= bit & u64::from(row[l] >> BUCKET_SHIFT == buckets[l]).wrapping_neg();
            }
        }
    }
    marks
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

/// The marked keys of the first `count` lanes, in slots: slot `s` of lane `l` is
/// `slots[s][l]`, and slots past a lane's keys hold `u64::MAX`. Lanes whose bucket holds more
/// than [`SMALL_BUCKET`] keys are left to [`pick_large`].
#[inline(always)]
fn gather(
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
        // Not by `Marked`: gathering with it made lockstep Riffpe(100, 8) encryption 7.5 %
        // slower (paired runs).
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
struct Picked<'a> {
    /// The chunk's rows, and its first lane.
    rows: &'a [[u64; CHUNK]],
    first: usize,
    /// Per lane: the bucket's values (one bit each), the rank of the key to pick and the
    /// bucket's size.
    marks: [[u64; CHUNK]; MARK_WORDS],
    ranks: [u64; CHUNK],
    sizes: [u64; CHUNK],
    /// The keys of buckets up to [`SMALL_BUCKET`] (see [`gather`]).
    slots: [[u64; CHUNK]; SMALL_BUCKET],
}

impl Picked<'_> {
    /// Whether lane `l`'s bucket was gathered into its slots.
    #[inline(always)]
    fn small(&self, l: usize) -> bool {
        self.sizes[l] as usize <= SMALL_BUCKET
    }

    /// Lane `l`'s value by [`pick_large`].
    fn large(&self, blocks: &Blocks<'_>, l: usize) -> u32 {
        let set = core::array::from_fn(|w| self.marks[w][l]);
        pick_large(blocks, self.rows, self.first, l, set, self.ranks[l])
    }
}

/// Each lane's key of rank `ranks[l]` among its slots, as its value, the slots sorted by
/// [`SORT16`], branch-free. A slot past the bucket holds u64::MAX, above every key (or equal
/// to one, and then the same answer).
#[inline(always)]
fn rank_slots(blocks: &Blocks<'_>, picked: &Picked<'_>, digits: &mut [u32]) {
    let layout = &blocks.layout;
    let mut keys = picked.slots;
    sort16(&mut keys, |a, b| {
        let min = core::array::from_fn(|l| a[l].min(b[l]));
        let max = core::array::from_fn(|l| a[l].max(b[l]));
        (min, max)
    });
    for (l, digit) in digits.iter_mut().enumerate() {
        let found = keys[(picked.ranks[l] as usize).min(SMALL_BUCKET - 1)][l];
        // Key order is pair order unless another key shares the found key's leading bits
        // (such keys share its bucket).
        let tied = !layout.exact()
            && keys
                .iter()
                .filter(|k| layout.same_lead(k[l], found))
                .count()
                != 1;
        *digit = if !picked.small(l) || tied {
            picked.large(blocks, l)
        } else {
            layout.index(found) as u32
        };
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

/// The pick for a bucket of more than [`SMALL_BUCKET`] keys or with tied leading bits: the
/// marked keys of lane `l` of the chunk from lane `first` on gathered, and the one of rank
/// `rank` selected in expected linear time, keys compared in full where their leading bits
/// tie. Not cold: above radix 128 buckets this large are common (see [`SMALL_BUCKET`]).
#[inline(never)]
fn pick_large(
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
    let keys = &mut keys[..len];
    if rank as usize >= keys.len() {
        return unreachable_rank();
    }
    let lane = first + l;
    let (_, nth, _) = keys.select_nth_unstable_by(rank as usize, |&a, &b| blocks.cmp(lane, a, b));
    blocks.layout.index(*nth) as u32
}

/// π⁻¹(k) for every lane by counting, a [`CHUNK`] of lanes at a time, the keys below each
/// lane's pivot.
#[inline(always)]
fn inverse_any(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    let rows = work.rows;
    for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
        let first = chunk * CHUNK;
        for (k, row) in rows.iter_mut().enumerate() {
            blocks.chunk_row(k, first, digits.len(), row);
        }
        let pivots = pivots(rows, digits);
        let (mut below, mut same) = ([0u64; CHUNK], [0u64; CHUNK]);
        for row in rows.iter() {
            for l in 0..CHUNK {
                below[l] += u64::from(row[l] < pivots[l]);
                same[l] += u64::from(blocks.layout.same_lead(row[l], pivots[l]));
            }
        }
        rank_digits(blocks, first, &pivots, below, same, digits);
    }
}

/// Each lane's pivot: the key of its value k, which is in row k.
#[inline(always)]
fn pivots(rows: &[[u64; CHUNK]], digits: &[u32]) -> [u64; CHUNK] {
    core::array::from_fn(|l| {
        let row = digits.get(l).and_then(|&k| rows.get(k as usize));
        row.map_or(0, |row| row[l])
    })
}

/// Each lane's rank, from the count of keys below its pivot, unless another key shares the
/// pivot's leading bits (`same` counts the pivot too): then counted again, keys compared in full.
#[inline(always)]
fn rank_digits(
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
        let mut keys = std::vec![0u64; Work::words(*n as u32)];
        for &(name, select, forward) in paths {
            // As the engine calls them: one digit per lane at the front of a column of
            // MAX_LANES, the rest left alone.
            let mut out = digits.clone();
            out.resize(MAX_LANES, u32::MAX);
            select(&blocks, Work::new(&mut keys, *n as u32), &mut out);
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
