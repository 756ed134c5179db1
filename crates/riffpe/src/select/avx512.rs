//! The group kernel's passes in AVX-512 intrinsics (with `avx2`, `sse2` and `neon`, the files of
//! the crate with `unsafe`): π⁻¹, both directions up to radix 16 (32-bit keys sixteen lanes to a
//! vector, [`select_narrow`]), constant-time π there and π⁻¹ (64-bit keys, eight lanes), the
//! ranking after constant-time π's search over planes, and with VBMI the making of planes (and
//! of the middles that ranking reads); and one message's constant-time π after its chain
//! ([`pick_one`]).
//!
//! What runs once a value inside a loop of the AES backend ([`make_planes`], [`make_middles`],
//! [`make_row_keys`]) is an `#[inline(always)]` unsafe function, not a `#[target_feature]` one:
//! LLVM may leave a `#[target_feature]` function a call, even marked `#[inline]`, when the crate is
//! built in several codegen units (as a dependency's is), and such calls once a value slowed
//! lockstep down (BENCHMARKS.md). The loops are built with the features, so the intrinsics inline
//! there.

use core::arch::x86_64::*;

use super::KeyLayout;
use super::constant_time::{LeadRanks, RANKED_RADIX};
use super::group::{
    BUCKET_SHIFT, Blocks, CHUNK, Counts, Gathered, MARK_WORDS, Marks, OctetsAt, PLANE_LANES,
    Passes, Picked, SMALL_RADIX, Work, by_chunks, by_radix, counted_digits, found_digits, lead_at,
    plane_lane, rank_digits, sort16,
};

cpufeatures::new!(avx512_cpu, "avx512f", "avx512bw", "avx512vl");

/// Proof that this CPU has AVX-512 F, BW and VL: only [`Avx512::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Avx512(());

impl Avx512 {
    pub(super) fn detect() -> Option<Avx512> {
        avx512_cpu::get().then_some(Avx512(()))
    }

    #[inline(always)]
    pub(super) fn forward(self, blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        // SAFETY: `self` exists only where the CPU has the features `forward_avx512` is built
        // with.
        unsafe { forward_avx512(blocks, work, digits) }
    }

    #[inline(always)]
    pub(super) fn inverse(self, blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        // SAFETY: as for `forward`.
        unsafe { inverse_avx512::<false>(blocks, work, digits) }
    }

    /// Constant-time π⁻¹: [`inverse_avx512`] with each lane's pivot picked with masks.
    #[inline(always)]
    pub(super) fn inverse_constant_time(
        self,
        blocks: &Blocks<'_>,
        work: Work<'_>,
        digits: &mut [u32],
    ) {
        // SAFETY: as for `forward`.
        unsafe { inverse_avx512::<true>(blocks, work, digits) }
    }

    /// [`forward_small`] of the step's radix (at most [`SMALL_RADIX`]): constant-time π there.
    #[inline(always)]
    pub(super) fn forward_small(self, blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        // SAFETY: as for `forward`.
        unsafe { by_radix!(forward_small(blocks, work, digits)) }
    }

    /// [`rank_planes`] of the plane chunk from lane `first` on.
    #[inline(always)]
    pub(super) fn rank_planes<const S: usize>(
        self,
        blocks: &Blocks<'_>,
        first: usize,
        hits: &[u32],
        lanes: &[Gathered; PLANE_LANES],
    ) -> [([u64; CHUNK], u32); PLANE_LANES / CHUNK] {
        // SAFETY: as for `forward`.
        unsafe { rank_planes::<S>(blocks, first, hits, lanes) }
    }
}

cpufeatures::new!(one_search_cpu, "avx512f", "avx512bw", "avx512vl", "popcnt");

/// Proof that this CPU has AVX-512 F, BW and VL, and POPCNT, which one message's search
/// ([`pick_one`]) runs on: only [`OneSearch::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct OneSearch(());

impl OneSearch {
    pub(super) fn detect() -> Option<OneSearch> {
        one_search_cpu::get().then_some(OneSearch(()))
    }

    /// [`pick_one`]: one message's constant-time π over its keys.
    #[inline(always)]
    pub(super) fn pick_one(self, layout: &KeyLayout, keys: &[u64], x: u32) -> Option<(u64, bool)> {
        // SAFETY: `self` exists only where the CPU has the features `pick_one` is built with.
        unsafe { pick_one(layout, keys, x) }
    }
}

cpufeatures::new!(
    lead_pick_cpu,
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512vbmi2",
    "popcnt"
);

/// Proof that this CPU has AVX-512 F, BW, VL and VBMI2 (its byte compress), and POPCNT, which
/// one message's pick from the leading bits ranked on arrival ([`pick_ranked_lead`]) runs on:
/// only [`LeadPick::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LeadPick(());

impl LeadPick {
    pub(super) fn detect() -> Option<LeadPick> {
        lead_pick_cpu::get().then_some(LeadPick(()))
    }

    /// [`pick_ranked_lead`]: one message's constant-time π from the leading bits ranked on
    /// arrival.
    #[inline(always)]
    pub(super) fn pick_ranked_lead(
        self,
        layout: &KeyLayout,
        keys: &[u64],
        ranked: &LeadRanks,
        x: u32,
    ) -> Option<(u64, bool)> {
        // SAFETY: `self` exists only where the CPU has the features `pick_ranked_lead` is built
        // with.
        unsafe { pick_ranked_lead(layout, keys, ranked, x) }
    }
}

cpufeatures::new!(vbmi_cpu, "avx512f", "avx512bw", "avx512vbmi");

/// Proof that this CPU has AVX-512 F, BW and VBMI (its byte permutes): only [`Vbmi::detect`]
/// makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Vbmi(());

impl Vbmi {
    pub(super) fn detect() -> Option<Vbmi> {
        vbmi_cpu::get().then_some(Vbmi(()))
    }

    /// [`make_row_keys`] of value `k`, whose first byte lies at byte `at` (from -7) of block
    /// row `row`'s blocks (a multiple of [`CHUNK`] lanes).
    #[inline(always)]
    pub(super) fn make_row_keys(
        self,
        layout: &KeyLayout,
        k: usize,
        at: isize,
        row: &[[u8; 16]],
        keys: &mut [u64],
    ) {
        // SAFETY: as for `make_planes`.
        unsafe { make_row_keys(layout, k, at, row, keys) }
    }

    /// [`make_middles`] of value `k`, whose octet 2 lies at byte `at` of block row `row`'s
    /// blocks (from -3 on: the octets that lie in the row).
    #[inline(always)]
    pub(super) fn make_middles(
        self,
        row: &[[u8; 16]],
        k: usize,
        n: usize,
        at: isize,
        middles: &mut [u64],
    ) {
        // SAFETY: as for `make_planes`.
        unsafe { make_middles(row, k, n, at, middles) }
    }

    /// [`make_planes`] of value `k`'s octets that `place` says block row `row` holds, and its
    /// middles if asked (all of them in the row).
    #[inline(always)]
    pub(super) fn make_planes(
        self,
        row: &[[u8; 16]],
        k: usize,
        n: usize,
        place: OctetsAt,
        planes: &mut [u64],
        middles: Option<&mut [u64]>,
    ) {
        // SAFETY: `self` exists only where the CPU has the features `make_planes` is built with.
        unsafe { make_planes(row, k, n, place, planes, middles) }
    }
}

/// AVX2's `make_planes` by byte permutes: the same planes (the octets, top bit flipped, of value
/// `k` that `place` says block row `row` holds; [`PLANE_LANES`] lanes a vector in
/// [`plane_lane`] order) from fewer instructions. Each 32 lanes' two octets are picked from
/// pairs of vectors (eight blocks), the pairs' picks blended into one vector, and that put in
/// plane order. The same picks take octets 2 to 5 as well, which go to `middles` if given
/// ([`make_middles`]' layout; octets 0 to 5 must then lie in the row).
///
/// Inlined into the AES row loop (see the module's docs).
///
/// # Safety
///
/// The CPU must have AVX-512 F, BW and VBMI.
#[inline(always)]
unsafe fn make_planes(
    row: &[[u8; 16]],
    k: usize,
    n: usize,
    place: OctetsAt,
    planes: &mut [u64],
    mut middles: Option<&mut [u64]>,
) {
    // SAFETY: (all intrinsics) the caller's CPU has AVX-512 F, BW and VBMI; the one raw store
    // writes a row of planes, 32 bytes that its slice index bounds.
    unsafe {
        debug_assert!(place.at < 15);
        debug_assert!(middles.is_none() || place.at + 6 <= 16 && place.plane(0) == Some(0));
        // The first of the lanes in plane order and the second, from the picks of pair t in lane t.
        const OCTETS: [u8; 64] = table(true, 0);
        let pairs = pair_picks(place.at as isize);
        let octets = load_bytes(&OCTETS);
        let sign = _mm512_set1_epi8(i8::MIN);
        let (rows, _) = planes.as_chunks_mut::<4>();
        let (chunks, _) = row.as_chunks::<PLANE_LANES>();
        for (c, blocks) in chunks.iter().enumerate() {
            let picks = picked_pairs(blocks, pairs);
            // The middles first, so that the picks are done with once blended: fewer vectors
            // held beside the row loop's states.
            if let Some(middles) = middles.as_deref_mut() {
                let (values, _) = middles.as_chunks_mut::<16>();
                store_middles(picks, &mut values[c * n + k], u64::MAX);
            }
            let low = _mm512_mask_blend_epi64(0x0c, picks[0], picks[1]);
            let high = _mm512_mask_blend_epi64(0xc0, picks[2], picks[3]);
            let quarters = _mm512_mask_blend_epi64(0xf0, low, high);
            let both = _mm512_xor_si512(_mm512_permutexvar_epi8(octets, quarters), sign);
            for (o, octet) in [
                _mm512_castsi512_si256(both),
                _mm512_extracti64x4_epi64::<1>(both),
            ]
            .into_iter()
            .enumerate()
            {
                let Some(o) = place.plane(o) else {
                    continue;
                };
                _mm256_storeu_si256(rows[(2 * c + o) * n + k].as_mut_ptr().cast(), octet);
            }
        }
    }
}

/// The picks' indices for a value from byte `at` of each block: bytes `at` and `at + 1` of the
/// eight blocks of two vectors, block by block, in two 128-bit lanes (pair t's own, t, among
/// them), and octets 2 to 5 of each block, four a lane in [`ORDER`], in the other two.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn pair_picks(at: isize) -> [__m512i; 2] {
    const PAIRS: [[u8; 64]; 2] = [table(false, 2), table(false, 0)];
    let at = _mm512_set1_epi8(at as i8);
    PAIRS.map(|pairs| _mm512_add_epi8(load_bytes(&pairs), at))
}

/// Each chunk's bytes of the 32 `blocks` that [`pair_picks`]' indices `pairs` pick, from the
/// pair of vectors (eight blocks) that holds the chunk.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn picked_pairs(blocks: &[[u8; 16]; PLANE_LANES], pairs: [__m512i; 2]) -> [__m512i; 4] {
    let (vectors, _) = blocks.as_flattened().as_chunks::<64>();
    core::array::from_fn(|t| {
        let (one, two) = (load_bytes(&vectors[2 * t]), load_bytes(&vectors[2 * t + 1]));
        _mm512_permutex2var_epi8(one, pairs[t / 2], two)
    })
}

/// The octets 2 to 5 in [`picked_pairs`]' `picks` (lanes 2 and 3 of pairs 0 and 1, lanes 0
/// and 1 of pairs 2 and 3) into one value's [`Middles`](super::group::Middles) of 32 lanes,
/// the bytes that `kept` marks.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn store_middles(picks: [__m512i; 4], value: &mut [u64; 16], kept: u64) {
    let halves = [
        _mm512_shuffle_i64x2::<0xee>(picks[0], picks[1]),
        _mm512_shuffle_i64x2::<0x44>(picks[2], picks[3]),
    ];
    let (out, _) = value.as_chunks_mut::<CHUNK>();
    for (out, half) in out.iter_mut().zip(halves) {
        // Whole where every byte is kept, so the row loop does not rest on the compiler folding
        // `make_planes`' constant mask.
        // SAFETY: `out` is 64 writable bytes; the stores are unaligned.
        unsafe {
            match kept {
                u64::MAX => _mm512_storeu_si512(out.as_mut_ptr().cast(), half),
                _ => _mm512_mask_storeu_epi8(out.as_mut_ptr().cast(), kept, half),
            }
        }
    }
}

/// The indices of [`make_planes`]' permutes: picking pairs (and from 128-bit lane `middles` on,
/// the two after them of [`make_middles`]), else putting them in plane order.
const fn table(octets: bool, middles: usize) -> [u8; 64] {
    let mut table = [0; 64];
    let mut i = 0;
    while i < 64 {
        let index = if octets {
            let lane = plane_lane(i % PLANE_LANES);
            16 * (lane / 8) + 2 * (lane % 8) + i / PLANE_LANES
        } else if i / 16 == middles || i / 16 == middles + 1 {
            let i = i - 16 * middles;
            16 * ORDER[i / 4] + 2 + 3 - i % 4
        } else {
            16 * (i % 16 / 2) + i % 2
        };
        table[i] = index as u8;
        i += 1;
    }
    table
}

/// Word `w` of chunk `q`'s vectors holds lane `8q + ORDER[w]`: its even lanes, then its odd
/// ones, as the planes' bits come (see [`plane_lane`]).
const ORDER: [usize; CHUNK] = [0, 2, 4, 6, 1, 3, 5, 7];

/// The [`CHUNK`]s of a plane chunk.
const CHUNKS: usize = PLANE_LANES / CHUNK;

/// Octets 2 to 5 of value `k` that block row `row` holds (octet 2 at byte `at` of each block,
/// `at` from -3 to 15), into the [`Middles`](super::group::Middles) of every 32 lanes: picked
/// as [`make_planes`] picks them, and only the octets that lie in the row stored.
///
/// Inlined into the AES row loop (see the module's docs).
///
/// # Safety
///
/// The CPU must have AVX-512 F, BW and VBMI.
#[inline(always)]
unsafe fn make_middles(row: &[[u8; 16]], k: usize, n: usize, at: isize, middles: &mut [u64]) {
    // SAFETY: (all intrinsics) the caller's CPU has AVX-512 F, BW and VBMI.
    unsafe {
        debug_assert!((-3..16).contains(&at));
        // The picks' indices as for a value from byte at - 2.
        let pairs = pair_picks(at - 2);
        // The bytes whose octet lies in the row: octet 2 + m at byte at + m.
        let kept = (0..4)
            .filter(|&m| (0..16).contains(&(at + m)))
            .fold(0u64, |kept, m| kept | 0x1111_1111_1111_1111 << (3 - m));
        let (values, _) = middles.as_chunks_mut::<16>();
        let (chunks, _) = row.as_chunks::<PLANE_LANES>();
        for (c, blocks) in chunks.iter().enumerate() {
            store_middles(picked_pairs(blocks, pairs), &mut values[c * n + k], kept);
        }
    }
}

/// The portable `make_row_keys` of value `k`, whose first byte lies at byte `at` (-7 to 15)
/// of block row `row`'s blocks (a multiple of [`CHUNK`] lanes), by byte permutes: each key's
/// leading eight bytes, big-endian, picked from two vectors (eight blocks), then its index put
/// in their last bits. Stored whole from the row that holds the value's first byte (bytes past
/// the block then come from the next one, and the next row stores them again), else only the
/// bytes this row holds.
///
/// Inlined into the AES row loop (see the module's docs).
///
/// # Safety
///
/// The CPU must have AVX-512 F, BW and VBMI.
#[inline(always)]
unsafe fn make_row_keys(
    layout: &KeyLayout,
    k: usize,
    at: isize,
    row: &[[u8; 16]],
    keys: &mut [u64],
) {
    // SAFETY: (all intrinsics) the caller's CPU has AVX-512 F, BW and VBMI; the one raw store
    // writes a chunk of `keys`, 64 bytes that the chunking bounds.
    unsafe {
        debug_assert!((-7..16).contains(&at));
        // Word l: bytes 7, 6, …, 0 of block l.
        const LEADS: [u8; 64] = {
            let mut table = [0; 64];
            let mut i = 0;
            while i < 64 {
                table[i] = (16 * (i / 8) + 7 - i % 8) as u8;
                i += 1;
            }
            table
        };
        // Byte m of a word is the value's byte 7 - m, which lies at byte at + 7 - m of the block.
        let held = if at >= 0 { 0xff } else { (1u8 << (8 + at)) - 1 };
        let kept = u64::from_ne_bytes([held; 8]);
        let leads = _mm512_add_epi8(load_bytes(&LEADS), _mm512_set1_epi8(at as i8));
        let value = _mm512_set1_epi64(layout.value_mask() as i64);
        let index = _mm512_set1_epi64(k as i64);
        let (rows, _) = keys[k * row.len()..][..row.len()].as_chunks_mut::<CHUNK>();
        let (chunks, _) = row.as_chunks::<CHUNK>();
        for (keys, blocks) in rows.iter_mut().zip(chunks) {
            let (vectors, _) = blocks.as_flattened().as_chunks::<64>();
            let (one, two) = (load_bytes(&vectors[0]), load_bytes(&vectors[1]));
            let lead = _mm512_permutex2var_epi8(one, leads, two);
            let key = _mm512_or_si512(_mm512_and_si512(lead, value), index);
            _mm512_mask_storeu_epi8(keys.as_mut_ptr().cast(), kept, key);
        }
    }
}

/// AVX2's `rank_planes` eight lanes to a vector instead of four: for the [`PLANE_LANES`] lanes
/// from `first` on, each chunk's key that [`Gathered`] describes and the lanes where another of
/// the keys that share its two octets ties its leading bits ([`kept_words`]).
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn rank_planes<const S: usize>(
    blocks: &Blocks<'_>,
    first: usize,
    hits: &[u32],
    lanes: &[Gathered; PLANE_LANES],
) -> [([u64; CHUNK], u32); PLANE_LANES / CHUNK] {
    let layout = &blocks.layout;
    if let Some(middles) = blocks.middles {
        let n = layout.n as usize;
        let (values, _) = middles.as_chunks::<16>();
        return rank_middles::<S>(&values[first / PLANE_LANES * n..][..n], hits, lanes);
    }
    let kept = match layout.bytes_per_value() % 16 {
        0 => kept_words::<S, true>(blocks, first, hits),
        _ => kept_words::<S, false>(blocks, first, hits),
    };
    core::array::from_fn(|q| {
        let lanes = &lanes[q * CHUNK..][..CHUNK];
        let of = |byte: &dyn Fn(&Gathered) -> u8| load(&ORDER.map(|l| u64::from(byte(&lanes[l]))));
        let (rank, count) = (of(&|lane| lane.rank), of(&|lane| lane.count));
        let (found, tied) = rank_kept(layout, &kept[q], rank, count);
        let words = array(found);
        let (mut keys, mut ties) = ([0u64; CHUNK], 0);
        for (w, &l) in ORDER.iter().enumerate() {
            keys[l] = words[w];
            ties |= u32::from(tied >> w & 1) << l;
        }
        (keys, ties)
    })
}

/// [`rank_planes`] from the [`Middles`](super::group::Middles) of a plane chunk's `n` values:
/// the keys that share a lane's two octets ranked by their next four, sixteen lanes to a vector.
/// A lane is marked tied where another of them shares those of the key found, which the
/// search's keys would not always (octets 6 on): that happens with probability below
/// (n - 1)·2^-48 a lane and step. The keys found hold only their index.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn rank_middles<const S: usize>(
    values: &[[u64; 16]],
    hits: &[u32],
    lanes: &[Gathered; PLANE_LANES],
) -> [([u64; CHUNK], u32); CHUNKS] {
    let (kept, indices) = kept_middles::<S>(values, hits);
    let (zero, one) = (_mm512_setzero_si512(), _mm512_set1_epi32(1));
    // Of each lane of chunks 2h and 2h + 1, in [`ORDER`].
    let of = |h: usize, byte: fn(&Gathered) -> u8| {
        let words: [u32; 16] = core::array::from_fn(|i| {
            u32::from(byte(&lanes[(2 * h + i / CHUNK) * CHUNK + ORDER[i % CHUNK]]))
        });
        // SAFETY: `words` is 64 readable bytes; the load is unaligned.
        unsafe { _mm512_loadu_si512(words.as_ptr().cast()) }
    };
    // Bit 8q + w: the lane of chunk q at ORDER[w], as `hits` marks them.
    let (mut chosen, mut tied) = ([0u32; S], 0u32);
    for (h, keys) in kept.iter().enumerate() {
        let (rank, count) = (of(h, |lane| lane.rank), of(h, |lane| lane.count));
        let valid: [__mmask16; S] =
            core::array::from_fn(|s| _mm512_cmpgt_epu32_mask(count, _mm512_set1_epi32(s as i32)));
        // Kept keys ordered by their four octets, and where those tie by slot, the later one
        // lower: slot s starts as if every later kept one lay below it, each compare of a pair
        // corrects both (an empty slot holds zero, which no key lies below), and each rank
        // below the count is one slot's.
        let mut below: [__m512i; S] =
            core::array::from_fn(|s| _mm512_sub_epi32(count, _mm512_set1_epi32(s as i32 + 1)));
        for s in 0..S {
            for t in s + 1..S {
                let less = _mm512_cmplt_epu32_mask(keys[s], keys[t]);
                below[s] = _mm512_mask_sub_epi32(below[s], less, below[s], one);
                below[t] = _mm512_mask_add_epi32(below[t], less, below[t], one);
            }
        }
        let (mut found, mut any) = (zero, 0);
        for (s, chosen) in chosen.iter_mut().enumerate() {
            let hit = _mm512_mask_cmpeq_epi32_mask(valid[s], below[s], rank);
            found = _mm512_mask_mov_epi32(found, hit, keys[s]);
            any |= hit;
            *chosen |= u32::from(hit) << (16 * h);
        }
        let same = keys.iter().zip(valid).fold(zero, |same, (&key, valid)| {
            let equal = _mm512_mask_cmpeq_epi32_mask(valid, key, found);
            _mm512_mask_add_epi32(same, equal, same, one)
        });
        tied |= u32::from(_mm512_cmpgt_epu32_mask(same, one) | !any) << (16 * h);
    }
    let index = (0..S).fold(_mm256_setzero_si256(), |index, s| {
        _mm256_mask_mov_epi8(index, chosen[s], indices[s])
    });
    let mut bytes = [0u8; PLANE_LANES];
    // SAFETY: `bytes` is 32 writable bytes; the store is unaligned.
    unsafe { _mm256_storeu_si256(bytes.as_mut_ptr().cast(), index) };
    core::array::from_fn(|q| {
        let (mut keys, mut ties) = ([0u64; CHUNK], 0);
        for (w, &l) in ORDER.iter().enumerate() {
            keys[l] = u64::from(bytes[q * CHUNK + w]);
            ties |= (tied >> (q * CHUNK + w) & 1) << l;
        }
        (keys, ties)
    })
}

/// The four octets after the two that the planes hold of the keys `hits` marks, at most `S` a
/// lane, for the plane chunk whose [`Middles`](super::group::Middles) are `values`: shifted
/// into a lane's slots where its bit is set (bit `8q + w` for the lane of chunk q at
/// `ORDER[w]`, as the middles lie), in two vectors of sixteen lanes; and their indices, the
/// same way, in one vector of bytes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn kept_middles<const S: usize>(
    values: &[[u64; 16]],
    hits: &[u32],
) -> ([[__m512i; S]; 2], [__m256i; S]) {
    let mut kept = [[_mm512_setzero_si512(); S]; 2];
    let mut indices = [_mm256_setzero_si256(); S];
    let (mut index, one) = (_mm256_setzero_si256(), _mm256_set1_epi8(1));
    for (value, &bits) in values.iter().zip(hits) {
        let (halves, _) = value.as_chunks::<CHUNK>();
        for (h, (slots, half)) in kept.iter_mut().zip(halves).enumerate() {
            let (hit, half) = ((bits >> (16 * h)) as __mmask16, load(half));
            for s in (1..S).rev() {
                slots[s] = _mm512_mask_mov_epi32(slots[s], hit, slots[s - 1]);
            }
            slots[0] = _mm512_mask_mov_epi32(slots[0], hit, half);
        }
        for s in (1..S).rev() {
            indices[s] = _mm256_mask_mov_epi8(indices[s], bits, indices[s - 1]);
        }
        indices[0] = _mm256_mask_mov_epi8(indices[0], bits, index);
        index = _mm256_add_epi8(index, one);
    }
    (kept, indices)
}

/// The leading words of the keys of each chunk of the plane chunk from lane `first` on (lanes in
/// [`ORDER`]) that `hits` marks, at most `S` a lane, each with its index in place of its last
/// bits: shifted into a lane's slots where its bit is set (byte q of `hits` for chunk q, in
/// [`ORDER`]). `ALIGNED`: every value starts a block (`bytes_per_value` a multiple of 16), so
/// that its leading word is the block's first.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn kept_words<const S: usize, const ALIGNED: bool>(
    blocks: &Blocks<'_>,
    first: usize,
    hits: &[u32],
) -> [[__m512i; S]; CHUNKS] {
    let layout = &blocks.layout;
    // Words 0 (or 1) of four lanes' blocks from each of two vectors, in ORDER.
    let pick = _mm512_setr_epi64(0, 4, 8, 12, 2, 6, 10, 14);
    let second = _mm512_setr_epi64(1, 5, 9, 13, 3, 7, 11, 15);
    // Each block's bytes in order, as a byte shuffle.
    let in_order = _mm512_broadcast_i32x4(_mm_setr_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ));
    // A big-endian word's index bits, and the index of value k there (at most 8 bits).
    let index_bits = _mm512_set1_epi64((layout.index_mask() << 56) as i64);
    let index = |k: usize| _mm512_set1_epi64(((k as u64) << 56) as i64);
    // Empty slots all ones, which no key lies above (see `rank_kept`).
    let mut kept = [[_mm512_set1_epi64(-1); S]; CHUNKS];
    let blocks_per_value = layout.bytes_per_value() / 16;
    // The lanes' blocks of row `j`, as lines of four.
    let lines = |j: usize| {
        let start = (j * blocks.lanes + first) * 16;
        let (lines, _) = blocks.bytes[start..][..PLANE_LANES * 16].as_chunks::<64>();
        lines
    };
    let picked = |lines: &[[u8; 64]], q: usize, pick: __m512i| {
        let (one, two) = (load_bytes(&lines[2 * q]), load_bytes(&lines[2 * q + 1]));
        _mm512_permutex2var_epi64(one, pick, two)
    };
    for (k, &bits) in hits.iter().enumerate() {
        // Each chunk's leading words of value k, in keystream byte order (`rank_kept` swaps).
        let (block, byte) = match ALIGNED {
            true => (k * blocks_per_value, 0),
            false => lead_at(layout, k),
        };
        let words: [__m512i; CHUNKS] = match byte {
            0 => {
                let lines = lines(block);
                core::array::from_fn(|q| picked(lines, q, pick))
            }
            // Within the block: each block's bytes from the value's first moved to its front
            // (loads from that byte would cross cache lines).
            1..=8 => {
                let lines = lines(block);
                let from = _mm512_add_epi8(in_order, _mm512_set1_epi8(byte as i8));
                core::array::from_fn(|q| {
                    let line = |i: usize| _mm512_shuffle_epi8(load_bytes(&lines[i]), from);
                    _mm512_permutex2var_epi64(line(2 * q), pick, line(2 * q + 1))
                })
            }
            _ => {
                let shift = 8 * (byte % 8) as i64;
                let (down, up) = (_mm_cvtsi64_si128(shift), _mm_cvtsi64_si128(64 - shift));
                let (this, next) = (lines(block), lines(block + 1));
                core::array::from_fn(|q| {
                    let high = _mm512_srl_epi64(picked(this, q, second), down);
                    _mm512_or_si512(high, _mm512_sll_epi64(picked(next, q, pick), up))
                })
            }
        };
        for (q, (slots, word)) in kept.iter_mut().zip(words).enumerate() {
            // The index's bits from `index(k)`, the rest from the word.
            let word = _mm512_ternarylogic_epi64::<0xca>(index_bits, index(k), word);
            let hit = bits.to_le_bytes()[q];
            for s in (1..S).rev() {
                slots[s] = _mm512_mask_mov_epi64(slots[s], hit, slots[s - 1]);
            }
            slots[0] = _mm512_mask_mov_epi64(slots[0], hit, word);
        }
    }
    kept
}

/// Per word, the key of rank `rank` among the first `count` of the keys in `words` (big-endian,
/// each with its index in place of its last bits; the slots past them all ones), and (bit w)
/// whether another of them ties its leading bits, or no key was found (see below).
///
/// Each pair of slots is compared once, into a mask, which counts toward the rank of both:
/// compares into masks are most of this work, and some cores run one a cycle. Keys are distinct, and no key lies below an empty
/// slot, so every key's count of keys below it is exact unless a key is all ones; that key is
/// then counted above the empty slots too and never found, and a lane where no key is found is
/// marked tied, which picks its digit again from whole values.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn rank_kept<const S: usize>(
    layout: &KeyLayout,
    words: &[__m512i; S],
    rank: __m512i,
    count: __m512i,
) -> (__m512i, __mmask8) {
    let one = _mm512_set1_epi64(1);
    // Keystream words are big-endian.
    let swap = _mm512_broadcast_i32x4(_mm_setr_epi8(
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,
    ));
    let keys = words.map(|word| _mm512_shuffle_epi8(word, swap));
    // Slot s starts as if it lay above each later slot; each compare takes one away where not.
    let mut below: [__m512i; S] = core::array::from_fn(|s| _mm512_set1_epi64((S - 1 - s) as i64));
    for s in 0..S {
        for t in s + 1..S {
            let less = _mm512_cmplt_epu64_mask(keys[s], keys[t]);
            below[s] = _mm512_mask_sub_epi64(below[s], less, below[s], one);
            below[t] = _mm512_mask_add_epi64(below[t], less, below[t], one);
        }
    }
    let mut found = _mm512_setzero_si512();
    let mut any = 0;
    for s in 0..S {
        let valid = _mm512_cmpgt_epu64_mask(count, _mm512_set1_epi64(s as i64));
        let chosen = _mm512_mask_cmpeq_epi64_mask(valid, below[s], rank);
        found = _mm512_mask_mov_epi64(found, chosen, keys[s]);
        any |= chosen;
    }
    // The found key ties itself: another slot (an empty one only if the key is all ones)
    // makes two.
    let value_mask = _mm512_set1_epi64(layout.value_mask() as i64);
    let same = keys.iter().fold(_mm512_setzero_si512(), |same, &key| {
        let equal = _mm512_testn_epi64_mask(_mm512_xor_si512(found, key), value_mask);
        _mm512_mask_add_epi64(same, equal, same, one)
    });
    let tied = _mm512_cmpgt_epu64_mask(same, one);
    (found, tied | !any)
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn forward_avx512(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    if blocks.layout.n as usize <= SMALL_RADIX {
        by_radix!(forward_narrow(blocks, work, digits))
    } else {
        // Closures, not the functions: a `#[target_feature]` function does not implement
        // the `Fn` traits.
        let passes = Passes {
            count: |b: &Blocks<'_>, first, count, rows: &mut [[u64; CHUNK]]| {
                count_rows(b, first, count, rows)
            },
            mark: |rows: &[[u64; CHUNK]], buckets: &[u64; CHUNK]| mark_rows(rows, buckets),
            rank: |b: &Blocks<'_>, p: &Picked<'_>, d: &mut [u32]| rank_slots(b, p, d),
        };
        by_chunks(blocks, work, digits, passes)
    }
}

/// π(x) for every lane from its keys sorted (radix `N`, at most [`SMALL_RADIX`]), eight lanes
/// to a vector: a branch or an address depends only on the radix and `bytes_per_value`, save
/// a tie of leading bits ([`found_digits`]), so constant-time π runs it too.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn forward_small<const N: usize>(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    debug_assert_eq!(N, blocks.layout.n as usize);
    let rows = &mut work.rows()[..N];
    for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
        forward_small_chunk::<N>(blocks, chunk * CHUNK, digits, rows);
    }
}

/// [`forward_small`] of the chunk of lanes from `first` on, `rows` its room for their keys.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn forward_small_chunk<const N: usize>(
    blocks: &Blocks<'_>,
    first: usize,
    digits: &mut [u32],
    rows: &mut [[u64; CHUNK]],
) {
    let made = chunk_rows(blocks, first, digits.len(), rows);
    // Past the N keys nothing is read: the network and the pick stop at N.
    let keys = core::array::from_fn(|k| {
        if k < N {
            made.key(k)
        } else {
            _mm512_setzero_si512()
        }
    });
    let x = core::array::from_fn(|l| digits.get(l).map_or(0, |&d| u64::from(d)));
    let (found, ties) = select_sorted::<N>(keys, load(&x), &blocks.layout);
    found_digits(
        blocks,
        first,
        (array(found), ties.into()),
        rows.as_flattened_mut(),
        digits,
    );
}

/// Lanes in a vector of 32-bit keys ([`select_narrow`]).
const NARROW_LANES: usize = 2 * CHUNK;

/// The four leading bytes of value `k` of the [`NARROW_LANES`] lanes from `first` on,
/// big-endian, one 32-bit word a lane, from the keystream: loaded from the value's first byte
/// where they lie within its block, else both blocks' words shifted together.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn narrow_lead(blocks: &Blocks<'_>, first: usize, k: usize) -> __m512i {
    // Word 0 of each block, the first eight lanes' from `a` and `b`, the next eight's from `c`
    // and `d`.
    let words = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
    let swap = _mm512_set4_epi32(0x0c0d_0e0f, 0x0809_0a0b, 0x0405_0607, 0x0001_0203);
    // From byte `at` of row `j`'s blocks of the lanes on: each lane's bytes `at` to `at + 4`,
    // one word a lane (the last load reads into the next row, at worst the slack row).
    let pack = |j: usize, at: usize| {
        let start = j * blocks.lanes * 16 + first * 16 + at;
        let (lines, _) = blocks.bytes[start..][..256].as_chunks::<64>();
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| load_bytes(&lines[i]));
        _mm512_mask_blend_epi32(
            0xff00,
            _mm512_permutex2var_epi32(a, words, b),
            _mm512_permutex2var_epi32(c, words, d),
        )
    };
    let (block, byte) = lead_at(&blocks.layout, k);
    let lead = if byte <= 12 {
        pack(block, byte)
    } else {
        // Bytes 12 to 16 of the block and 0 to 4 of the next, shifted down to the value's
        // first byte.
        let shift = 8 * (byte as i64 - 12);
        _mm512_or_si512(
            _mm512_srl_epi32(pack(block, 12), _mm_cvtsi64_si128(shift)),
            _mm512_sll_epi32(pack(block + 1, 0), _mm_cvtsi64_si128(32 - shift)),
        )
    };
    _mm512_shuffle_epi8(lead, swap)
}

/// Fast π(x) for every lane if `FORWARD` (as [`forward_small`] finds it), else π⁻¹ (as
/// [`inverse_avx512`]), but with 32-bit keys, sixteen lanes to a vector (as AVX2's fast passes
/// keep eight): a value's 32 leading bits (fewer if `b < 4`) with its index in the low bits. A
/// tie of those fewer bits (about 2⁻²⁵ a lane and step at radix 10) is settled by a compare in
/// full, a branch on the keys; π takes any two keys that may tie for one
/// ([`KeyLayout::narrow_tie_gap`]: below 45·2⁻²⁷ at radix 10). Sixteen lanes without one store
/// their digits as a vector. Lanes past the last sixteen run the 64-bit passes.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn select_narrow<const N: usize, const FORWARD: bool>(
    blocks: &Blocks<'_>,
    work: Work<'_>,
    digits: &mut [u32],
) {
    debug_assert_eq!(N, blocks.layout.n as usize);
    let layout = &blocks.layout;
    let (value_mask, exact) = layout.narrow();
    let tie_gap = _mm512_set1_epi32(layout.narrow_tie_gap() as i32);
    let (value_mask, other_bits) = (
        _mm512_set1_epi32(value_mask as i32),
        _mm512_set1_epi32(!value_mask as i32),
    );
    // The high words of both vectors' eight keys, in lane order.
    let high_words = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    let (one, all_ones) = (_mm512_set1_epi32(1), _mm512_set1_epi32(-1));
    let index_mask = _mm512_set1_epi32(layout.index_mask() as i32);
    let rows = &mut work.rows()[..N];
    let full = blocks.lanes / NARROW_LANES * NARROW_LANES;
    let (whole, rest) = digits[..blocks.lanes].split_at_mut(full);
    for (pair, digits) in whole
        .as_chunks_mut::<NARROW_LANES>()
        .0
        .iter_mut()
        .enumerate()
    {
        let first = pair * NARROW_LANES;
        // A loop, not `array::from_fn`: a closure called from the generic code of `core` may
        // not be inlined into this `#[target_feature]` function.
        let mut keys = [_mm512_setzero_si512(); SMALL_RADIX];
        for (k, key) in keys[..N].iter_mut().enumerate() {
            let lead = match blocks.keys {
                // The high words of the keys the AES loop made hold the value's leading bits.
                Some(keys) => {
                    let made = |first| ChunkRows::made(blocks, keys, first);
                    let (low, high) = (made(first).key(k), made(first + CHUNK).key(k));
                    _mm512_permutex2var_epi32(low, high_words, high)
                }
                None => narrow_lead(blocks, first, k),
            };
            *key = _mm512_or_si512(
                _mm512_and_si512(lead, value_mask),
                _mm512_set1_epi32(k as i32),
            );
        }
        // SAFETY: `digits` is 64 readable bytes; the load is unaligned.
        let x = unsafe { _mm512_loadu_si512(digits.as_ptr().cast()) };
        // Each lane's key found (π) or count of keys below (π⁻¹), its digit if no lane tied,
        // and the lanes that tied.
        let (found, untied, tied) = if FORWARD {
            sort16!(&mut keys, below N, |a, b| (
                _mm512_min_epu32(a, b),
                _mm512_max_epu32(a, b)
            ));
            let found = pick_narrow::<N>(&keys, x);
            let tied = if exact {
                0
            } else {
                // Any two neighbours that may tie (`KeyLayout::narrow_tie_gap`).
                let mut gap = all_ones;
                for pair in keys[..N].windows(2) {
                    gap = _mm512_min_epu32(gap, _mm512_sub_epi32(pair[1], pair[0]));
                }
                _mm512_cmple_epu32_mask(gap, tie_gap)
            };
            (found, _mm512_and_si512(found, index_mask), tied)
        } else {
            let pivot = pick_narrow::<N>(&keys, x);
            // Keys below the least key with the pivot's value bits, and up to the greatest:
            // keys differ in their index bits, so without a tie the pivot is the one between,
            // and those below it are the first count. Exact keys tie only as the values do,
            // which their index bits settle: both bounds are the pivot.
            let (least, greatest) = match exact {
                true => (pivot, pivot),
                false => {
                    let value_bits = _mm512_and_si512(pivot, value_mask);
                    (value_bits, _mm512_or_si512(value_bits, other_bits))
                }
            };
            let (mut below, mut up_to) = (_mm512_setzero_si512(), _mm512_setzero_si512());
            for &key in &keys[..N] {
                let less = _mm512_cmplt_epu32_mask(key, least);
                below = _mm512_mask_add_epi32(below, less, below, one);
                let within = _mm512_cmple_epu32_mask(key, greatest);
                up_to = _mm512_mask_add_epi32(up_to, within, up_to, one);
            }
            let tied = _mm512_cmpneq_epi32_mask(_mm512_sub_epi32(up_to, below), one);
            (below, below, tied)
        };
        if tied == 0 {
            // SAFETY: `digits` is 64 writable bytes; the store is unaligned.
            unsafe { _mm512_storeu_si512(digits.as_mut_ptr().cast(), untied) };
            continue;
        }
        let mut words = [0u32; NARROW_LANES];
        // SAFETY: `words` is 64 writable bytes; the store is unaligned.
        unsafe { _mm512_storeu_si512(words.as_mut_ptr().cast(), found) };
        for (half, digits) in digits.as_chunks_mut::<CHUNK>().0.iter_mut().enumerate() {
            let words = &words.as_chunks::<CHUNK>().0[half];
            let ties = u32::from(tied >> (half * CHUNK)) & 0xff;
            let first = first + half * CHUNK;
            if FORWARD {
                let found = core::array::from_fn(|l| u64::from(words[l]));
                found_digits(
                    blocks,
                    first,
                    (found, ties),
                    rows.as_flattened_mut(),
                    digits,
                );
            } else {
                counted_digits(blocks, first, (words, ties), digits);
            }
        }
    }
    for (chunk, digits) in rest.chunks_mut(CHUNK).enumerate() {
        let first = full + chunk * CHUNK;
        if FORWARD {
            forward_small_chunk::<N>(blocks, first, digits, rows);
        } else {
            inverse_chunk::<false>(blocks, first, digits, rows);
        }
    }
}

/// Each lane's word of `keys[x]`, `x` its word of `at` (below `N`): a tree of blends, one
/// level a bit of `x`, so that only a test a bit compares into a mask.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn pick_narrow<const N: usize>(keys: &[__m512i; SMALL_RADIX], at: __m512i) -> __m512i {
    let (mut level, mut len, mut bit) = (*keys, N, 0);
    while len > 1 {
        let odd = _mm512_test_epi32_mask(at, _mm512_set1_epi32(1 << bit));
        for j in 0..len / 2 {
            level[j] = _mm512_mask_blend_epi32(odd, level[2 * j], level[2 * j + 1]);
        }
        // An odd one out goes up as it is: no lane's index reaches a missing partner.
        if len % 2 == 1 {
            level[len / 2] = level[len - 1];
        }
        (len, bit) = (len.div_ceil(2), bit + 1);
    }
    level[0]
}

/// Fast π up to radix [`SMALL_RADIX`]: [`select_narrow`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn forward_narrow<const N: usize>(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    select_narrow::<N, true>(blocks, work, digits)
}

/// Fast π⁻¹ up to radix [`SMALL_RADIX`]: [`select_narrow`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn inverse_narrow<const N: usize>(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    select_narrow::<N, false>(blocks, work, digits)
}

/// The tests' `count_rows`, a row of keys made and counted as one vector.
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

/// A chunk's rows of keys, as vectors: read where the AES loop made them, else from `rows`.
#[derive(Clone, Copy)]
struct ChunkRows<'r> {
    /// Row k's [`CHUNK`] keys from word `k * stride` on.
    words: &'r [u64],
    stride: usize,
}

impl<'r> ChunkRows<'r> {
    /// The keys the AES loop made (`keys`, as [`Blocks::with_keys`] holds them) of the lanes
    /// from `first` on, in place.
    #[inline(always)]
    fn made(blocks: &Blocks<'r>, keys: &'r [u64], first: usize) -> Self {
        ChunkRows {
            words: &keys[first..],
            stride: blocks.lanes,
        }
    }

    /// Row `k`'s keys.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn key(&self, k: usize) -> __m512i {
        let words = &self.words[k * self.stride..][..CHUNK];
        // SAFETY: `words` is 64 readable bytes; the load is unaligned.
        unsafe { _mm512_loadu_si512(words.as_ptr().cast()) }
    }
}

/// The rows of the [`CHUNK`] lanes from `first` on, `count` of which exist: the keys the AES
/// loop made for a whole chunk, in place; else made into `rows` ([`make_rows`]).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn chunk_rows<'r>(
    blocks: &Blocks<'r>,
    first: usize,
    count: usize,
    rows: &'r mut [[u64; CHUNK]],
) -> ChunkRows<'r> {
    if let (Some(keys), CHUNK) = (blocks.keys, count) {
        return ChunkRows::made(blocks, keys, first);
    }
    make_rows(blocks, first, count, rows);
    ChunkRows {
        words: rows.as_flattened(),
        stride: CHUNK,
    }
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

/// The tests' `mark_rows`, a row's keys compared with the lanes' buckets as one vector.
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

/// The tests' `rank_slots`, the eight lanes in one vector.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn rank_slots(blocks: &Blocks<'_>, picked: &Picked<'_>, digits: &mut [u32]) {
    let mut keys = [_mm512_setzero_si512(); 16];
    for (key, slot) in keys.iter_mut().zip(&picked.slots) {
        *key = load(slot);
    }
    let (found, ties) = select_sorted::<16>(keys, load(&picked.ranks), &blocks.layout);
    picked.digits(blocks, (array(found), ties.into()), digits);
}

/// For eight lanes (lane `l` in word `l` of each vector): the key of rank `x` among the first
/// `N` of 16 `keys` (by the sorting network [`SORT16`](super::group::SORT16) pruned to `N`),
/// and the lanes where another key shares that key's leading bits, so that key order may not
/// be pair order there.
#[inline]
#[target_feature(enable = "avx512f")]
fn select_sorted<const N: usize>(
    mut keys: [__m512i; 16],
    x: __m512i,
    layout: &KeyLayout,
) -> (__m512i, __mmask8) {
    sort16!(&mut keys, below N, |a, b| (
        _mm512_min_epu64(a, b),
        _mm512_max_epu64(a, b)
    ));
    let mut found = _mm512_setzero_si512();
    for (rank, &key) in keys[..N].iter().enumerate() {
        let here = _mm512_cmpeq_epu64_mask(x, _mm512_set1_epi64(rank as i64));
        found = _mm512_mask_mov_epi64(found, here, key);
    }
    (found, ties(&keys[..N], found, layout))
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

/// π⁻¹(k) for every lane, as the portable inverse (the tests' oracle) but a chunk at a time
/// ([`inverse_chunk`]); up to radix [`SMALL_RADIX`] with 32-bit keys ([`select_narrow`]) unless
/// `CONSTANT_TIME`.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn inverse_avx512<const CONSTANT_TIME: bool>(
    blocks: &Blocks<'_>,
    work: Work<'_>,
    digits: &mut [u32],
) {
    if !CONSTANT_TIME && blocks.layout.n as usize <= SMALL_RADIX {
        return by_radix!(inverse_narrow(blocks, work, digits));
    }
    let rows = work.rows();
    for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
        inverse_chunk::<CONSTANT_TIME>(blocks, chunk * CHUNK, digits, rows);
    }
}

/// π⁻¹(k) for the chunk of lanes from `first` on (`rows` room for their keys): each lane's keys
/// below its pivot, key k, counted in one pass over the rows. The pivot is loaded from row k,
/// unless `CONSTANT_TIME`: then it is picked with masks from every row, so that no address
/// depends on a digit (a tie of leading bits is [`rank_digits`]' documented exception).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn inverse_chunk<const CONSTANT_TIME: bool>(
    blocks: &Blocks<'_>,
    first: usize,
    digits: &mut [u32],
    rows: &mut [[u64; CHUNK]],
) {
    let n = blocks.layout.n as usize;
    let one = _mm512_set1_epi64(1);
    let value_mask = _mm512_set1_epi64(blocks.layout.value_mask() as i64);
    let made = chunk_rows(blocks, first, digits.len(), rows);
    let pivot = if CONSTANT_TIME {
        let wanted = core::array::from_fn(|l| digits.get(l).map_or(0, |&k| k.into()));
        let wanted = load(&wanted);
        let mut pivot = _mm512_setzero_si512();
        for k in 0..n {
            let hit = _mm512_cmpeq_epu64_mask(wanted, _mm512_set1_epi64(k as i64));
            pivot = _mm512_mask_mov_epi64(pivot, hit, made.key(k));
        }
        pivot
    } else {
        // Each lane's key of its value k, which is in row k.
        let pivots: [u64; CHUNK] = core::array::from_fn(|l| match digits.get(l) {
            Some(&k) if (k as usize) < n => made.words[k as usize * made.stride + l],
            _ => 0,
        });
        load(&pivots)
    };
    let (mut below, mut same) = (_mm512_setzero_si512(), _mm512_setzero_si512());
    for k in 0..n {
        let key = made.key(k);
        let less = _mm512_cmplt_epu64_mask(key, pivot);
        below = _mm512_mask_add_epi64(below, less, below, one);
        let tied = _mm512_testn_epi64_mask(_mm512_xor_si512(key, pivot), value_mask);
        same = _mm512_mask_add_epi64(same, tied, same, one);
    }
    let (pivot, below, same) = (array(pivot), array(below), array(same));
    rank_digits(blocks, first, &pivot, below, same, digits);
}

/// Slots for one message's keys that share the leading 16 bits of the key of rank x
/// ([`pick_one`], [`pick_ranked_lead`]): a vector of them.
const ONE_SLOTS: u32 = 8;

/// The mask of `count` lanes of eight from lane `from`, those past the eighth cut off.
#[inline(always)]
fn span(from: u32, count: u32) -> u8 {
    (((1u32 << count.min(ONE_SLOTS)) - 1) << from.min(ONE_SLOTS)) as u8
}

/// Keys `8·c` to `8·c + 7` of `keys` and the mask of those present: lanes past the last key are
/// masked off, never read.
#[inline]
#[target_feature(enable = "avx512f")]
fn key_chunk(keys: &[u64], c: usize) -> (__m512i, u8) {
    let keys = &keys[CHUNK * c..];
    let present = span(0, keys.len().min(CHUNK) as u32);
    // SAFETY: a masked load reads only the lanes in `present` (the others cannot fault), and
    // those are keys.
    let words = unsafe { _mm512_maskz_loadu_epi64(present, keys.as_ptr().cast()) };
    (words, present)
}

/// One message's constant-time π over its `keys` (at most 256; those of the step, in order):
/// the key of rank `x` and whether another shares its leading bits (never where keys are
/// exact), or `None` if more than [`ONE_SLOTS`] keys share its leading 16 bits. The leading 16
/// bits of every key, 32 to a vector, are searched two bits a pass, three candidates counted
/// by mask compares; then [`pick_sharing`]. No branch or address depends on the keys or on `x`.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,popcnt")]
fn pick_one(layout: &KeyLayout, keys: &[u64], x: u32) -> Option<(u64, bool)> {
    debug_assert!((1..=256).contains(&keys.len()) && (x as usize) < keys.len());
    let chunks = keys.len().div_ceil(CHUNK);
    // The leading 16 bits of keys 32·v to 32·v + 31 in vector v; `valid` masks those present.
    let mut leads = [_mm512_setzero_si512(); 8];
    let mut valid = [0u32; 8];
    let vectors = keys.len().div_ceil(32);
    let in_use = leads.iter_mut().zip(&mut valid).take(vectors);
    for (v, (leads, valid)) in in_use.enumerate() {
        let part = |p: usize| {
            let c = 4 * v + p;
            if c < chunks {
                _mm512_cvtepi64_epi16(_mm512_srli_epi64::<48>(key_chunk(keys, c).0))
            } else {
                _mm_setzero_si128()
            }
        };
        let low = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(part(0)), part(1));
        let high = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(part(2)), part(3));
        *leads = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low), high);
        let present = keys.len().saturating_sub(32 * v).min(32);
        *valid = ((1u64 << present) - 1) as u32;
    }
    // Keys below each of three candidates.
    let counts = |candidates: [__m512i; 3]| -> [u32; 3] {
        let mut counts = [0u32; 3];
        for v in 0..vectors {
            for (count, &candidate) in counts.iter_mut().zip(&candidates) {
                *count += _mm512_mask_cmplt_epu16_mask(valid[v], leads[v], candidate).count_ones();
            }
        }
        counts
    };
    // The largest lead with at most x keys below it: two bits a pass, whose three candidates'
    // counts are nondecreasing, so those that keep at most x below give the bits.
    let mut lead = _mm512_setzero_si512();
    for shift in (0..16).step_by(2).rev() {
        let candidates = [1u16, 2, 3]
            .map(|step| _mm512_or_si512(lead, _mm512_set1_epi16((step << shift) as i16)));
        let bits: u32 = counts(candidates)
            .iter()
            .map(|&count| u32::from(count <= x))
            .sum();
        lead = _mm512_or_si512(lead, _mm512_set1_epi16((bits << shift) as u16 as i16));
    }
    let below: u32 = (0..vectors)
        .map(|v| _mm512_mask_cmplt_epu16_mask(valid[v], leads[v], lead).count_ones())
        .sum();
    let lead = _mm_cvtsi128_si32(_mm512_castsi512_si128(lead)) as u16;
    pick_sharing(layout, keys, lead, x - below)
}

/// The key of rank `rank` among those of `keys` whose leading 16 bits are `lead`, and whether
/// another shares its leading bits (never where keys are exact), or `None` if more than
/// [`ONE_SLOTS`] share `lead`: those keys are gathered into one vector (compressed from each
/// eight keys, expanded into the next free slots) and ranked against each other, with no
/// branch or address that depends on the keys, `lead` or `rank`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,popcnt")]
fn pick_sharing(layout: &KeyLayout, keys: &[u64], lead: u16, rank: u32) -> Option<(u64, bool)> {
    let chunks = keys.len().div_ceil(CHUNK);
    // The keys that share the lead, in the slots from the first; the others all ones, which
    // lie below no key. Two sets of slots (even and odd chunks) halve the chain of expands,
    // each of which waits on the one before.
    let wanted = _mm512_set1_epi64(i64::from(lead));
    let gather = |c: usize, slots: __m512i, filled: u32| {
        if c >= chunks {
            return (slots, filled);
        }
        let (words, present) = key_chunk(keys, c);
        let shares = _mm512_mask_cmpeq_epu64_mask(present, _mm512_srli_epi64::<48>(words), wanted);
        let count = u32::from(shares).count_ones();
        let compressed = _mm512_maskz_compress_epi64(shares, words);
        let slots = _mm512_mask_expand_epi64(slots, span(filled, count), compressed);
        (slots, filled + count)
    };
    let (mut even, mut odd) = ((_mm512_set1_epi64(-1), 0), (_mm512_set1_epi64(-1), 0));
    for c in (0..chunks).step_by(2) {
        even = gather(c, even.0, even.1);
        odd = gather(c + 1, odd.0, odd.1);
    }
    // The odd chunks' keys after the even ones'.
    let slots = _mm512_mask_expand_epi64(even.0, span(even.1, odd.1), odd.0);
    let shared = even.1 + odd.1;
    if shared > ONE_SLOTS {
        return None;
    }
    Some(pick_slot(layout, slots, shared, rank))
}

/// The key of rank `rank` among the `shared` keys in the first of `slots` (the others all
/// ones), and whether another shares its leading bits (never where keys are exact).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,popcnt")]
fn pick_slot(layout: &KeyLayout, slots: __m512i, shared: u32, rank: u32) -> (u64, bool) {
    // Each slot's rank among the slots: one for every slot below it.
    let mut ranks = _mm512_setzero_si512();
    for s in 0..i64::from(ONE_SLOTS) {
        let slot = _mm512_permutexvar_epi64(_mm512_set1_epi64(s), slots);
        let above = _mm512_cmplt_epu64_mask(slot, slots);
        ranks = _mm512_mask_sub_epi64(ranks, above, ranks, _mm512_set1_epi64(-1));
    }
    let occupied = span(0, shared);
    let picked = _mm512_mask_cmpeq_epu64_mask(occupied, ranks, _mm512_set1_epi64(i64::from(rank)));
    let found = _mm512_castsi512_si128(_mm512_maskz_compress_epi64(picked, slots));
    // Keys that share the found key's leading bits share its leading 16, so are all slots.
    let value_mask = _mm512_set1_epi64(layout.value_mask() as i64);
    let same = _mm512_mask_testn_epi64_mask(
        occupied,
        _mm512_xor_si512(slots, _mm512_broadcastq_epi64(found)),
        value_mask,
    );
    let found = _mm_cvtsi128_si64(found) as u64;
    (found, !layout.exact() && same.count_ones() != 1)
}

/// One message's constant-time π from the ranks `avx2::rank_lead` kept of all its `keys` (at most
/// [`RANKED_RADIX`]): the key of rank `x` as [`pick_one`] gives it. The keys' order by leading
/// bits and index is their own but among keys that share their leading 16 bits, which sit side
/// by side in both orders: so the leading bits of the key of rank `x` are those of the key
/// ranked `x`, found by one compare a vector. The indices of the keys that share them are
/// compressed into the slots, each slot's key permuted from the 16 keys its index lies among,
/// and the slots ranked against each other ([`pick_slot`]). No branch or address depends on the
/// keys or on `x`, but that of the fallback where more than [`ONE_SLOTS`] share the leading
/// bits (`None`).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi2,popcnt")]
fn pick_ranked_lead(
    layout: &KeyLayout,
    keys: &[u64],
    ranked: &LeadRanks,
    x: u32,
) -> Option<(u64, bool)> {
    let n = keys.len();
    debug_assert!((1..=RANKED_RADIX as usize).contains(&n) && (x as usize) < n);
    // Leads and ranks, 32 to a 512-bit vector.
    const LANES: usize = 32;
    const VECTORS: usize = RANKED_RADIX as usize / LANES;
    let vectors = n.div_ceil(LANES).min(VECTORS);
    let present = |v: usize| {
        let count = n.saturating_sub(LANES * v).min(LANES);
        ((1u64 << count) - 1) as u32
    };
    // SAFETY: whole 512-bit vectors of `leads` and `ranks`, which hold `RANKED_RADIX` values,
    // aligned to 64 bytes.
    let vector = |values: &[u16; RANKED_RADIX as usize], v: usize| unsafe {
        _mm512_load_si512(values[LANES * v..].as_ptr().cast())
    };
    // Exactly one key, the one ranked x, has n - 1 - x keys after it, which `ranks` holds as
    // -x: its lead, in lane 0.
    let after = _mm512_set1_epi16(-(x as i16));
    let mut lead = _mm512_setzero_si512();
    for v in 0..vectors {
        let ranked_x = _mm512_mask_cmpeq_epu16_mask(present(v), vector(&ranked.ranks, v), after);
        let own = _mm512_maskz_compress_epi16(ranked_x, vector(&ranked.leads, v));
        lead = _mm512_or_si512(lead, own);
    }
    let lead = _mm512_broadcastw_epi16(_mm512_castsi512_si128(lead));
    // The keys that share the lead (64 to a mask) and those below it.
    let (mut sharing, mut below) = ([0u64; VECTORS / 2], 0);
    for v in 0..vectors {
        let leads = vector(&ranked.leads, v);
        let shares = _mm512_mask_cmpeq_epu16_mask(present(v), leads, lead);
        sharing[v / 2] |= u64::from(shares) << (32 * (v % 2));
        below += _mm512_mask_cmplt_epi16_mask(present(v), leads, lead).count_ones();
    }
    let counts = sharing.map(|quarter| quarter.count_ones());
    let shared: u32 = counts.iter().sum();
    if shared > ONE_SLOTS {
        return None;
    }
    // Their indices in the slots from the first, 64 keys' at a time, each after those before.
    let iota = _mm512_set_epi8(
        63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41,
        40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18,
        17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
    );
    let mut indices = _mm512_maskz_compress_epi8(sharing[0], iota);
    let mut filled = counts[0];
    for q in 1..vectors.div_ceil(2) {
        let from = _mm512_add_epi8(iota, _mm512_set1_epi8((64 * q) as i8));
        let these = _mm512_maskz_compress_epi8(sharing[q], from);
        indices = _mm512_mask_expand_epi8(indices, span(filled, counts[q]).into(), these);
        filled += counts[q];
    }
    let indices = _mm512_cvtepu8_epi64(_mm512_castsi512_si128(indices));
    // Each slot's key, permuted from the 16 keys from 16·p where its index lies among them.
    let sixteens = _mm512_srli_epi64::<4>(indices);
    let chunks = n.div_ceil(CHUNK);
    let mut picks = [_mm512_setzero_si512(); RANKED_RADIX as usize / 16];
    for (p, pick) in picks.iter_mut().enumerate().take(chunks.div_ceil(2)) {
        let low = key_chunk(keys, 2 * p).0;
        let high = match 2 * p + 1 < chunks {
            true => key_chunk(keys, 2 * p + 1).0,
            false => _mm512_setzero_si512(),
        };
        let among = _mm512_cmpeq_epi64_mask(sixteens, _mm512_set1_epi64(p as i64));
        *pick = _mm512_maskz_permutex2var_epi64(among, low, indices, high);
    }
    // Each slot's key lies in one of them, the others' lanes zero: ORed pairwise.
    let mut width = picks.len();
    while width > 1 {
        width /= 2;
        for p in 0..width {
            picks[p] = _mm512_or_si512(picks[p], picks[p + width]);
        }
    }
    // Padding, all ones, lies below no key.
    let slots = _mm512_mask_mov_epi64(_mm512_set1_epi64(-1), span(0, shared), picks[0]);
    Some(pick_slot(layout, slots, shared, x - below))
}
