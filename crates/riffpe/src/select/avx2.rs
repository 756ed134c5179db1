//! The group kernel's passes in AVX2 intrinsics, for x86-64 without AVX-512 (the `unsafe` of this
//! file is the same kind as `avx512`'s: intrinsics behind a detected CPU feature).
//!
//! The inverse passes are those of `avx512`, a [`CHUNK`] of eight lanes held as two vectors of
//! four keys. AVX2 compares 64-bit words only as signed numbers, so keys that are compared have
//! their top bit flipped first (which turns unsigned order into signed order). Up to radix 16,
//! forward sorts each lane's keys by a network ([`forward_small`]); the fast passes there, both
//! ways, use 32-bit keys, eight lanes to a vector ([`NarrowLayout`]). Above radix 16, forward
//! searches the keys' two leading octets, 32 keys to a compare ([`lead_octets`]), which settles
//! nearly every chunk; the constant-time search over all octets ([`search_octets`]) settles the
//! rest. Where the AES loop made those two octets as planes (a multiple of 32 lanes, one byte a
//! lane: [`make_planes`]), the same search runs over 32 lanes at once, one vector a value, two
//! such chunks side by side up to radix 128 ([`plane_search`]), and a lane where other keys
//! share its key's two octets is picked from the whole keys that share its first octet
//! ([`pick_sharing`]). The constant-time forward ([`search_octets_constant_time`]) searches two
//! or three leading octets, then gathers the keys that share them and ranks them against each
//! other ([`search_gathered`]), unless more share them than are gathered (then it searches all
//! octets too); over planes, it searches their two octets and ranks the keys that share them by
//! their leading words, read in a pass over every value ([`plane_forward_constant_time`]).
//!
//! One message's constant-time π on AMD's Zen cores ranks its keys' leading 16 bits as its AES
//! chain makes them, sixteen to a compare ([`rank_lead`], also where AVX-512 picks from those
//! ranks); after the chain, the keys that share the leading bits of the key ranked x are gathered
//! by their ranks ([`lead_of_rank`], [`gather_ranked`]).

use core::arch::x86_64::*;

use super::KeyLayout;
use super::avx512::Avx512;
use super::constant_time::{GATHERED as ONE_GATHERED, LEAD_LANES, LeadRanks, RANKED_RADIX};
use super::group::{
    Blocks, CHUNK, Gathered, OctetsAt, PLANE_GATHERED, PLANE_GATHERED_WIDE, PLANE_LANES,
    SMALL_RADIX, Work, by_radix, counted_digits, found_digits, lead_at, pick_among, plane_lane,
    rank_among, rank_digits, sort16,
};

/// `chunk_lines!(blocks, first, j, at)`: the 128 bytes from byte `at` of row `j`'s blocks of the
/// chunk of lanes from `first` on, as four vectors of two lanes' blocks each (the last load
/// reads into the next row, at worst the slack row). A macro, not a function: a build with many
/// codegen units may leave a function a call of its own, with its vectors passed through memory.
macro_rules! chunk_lines {
    ($blocks:expr, $first:expr, $j:expr, $at:expr) => {{
        let start = $j * $blocks.lanes * 16 + $first * 16 + $at;
        let (lines, _) = $blocks.bytes[start..][..128].as_chunks::<32>();
        [
            load_bytes(&lines[0]),
            load_bytes(&lines[1]),
            load_bytes(&lines[2]),
            load_bytes(&lines[3]),
        ]
    }};
}

cpufeatures::new!(avx2_cpu, "avx2");

/// Proof that this CPU has AVX2: only [`Avx2::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Avx2(());

impl Avx2 {
    pub(super) fn detect() -> Option<Avx2> {
        avx2_cpu::get().then_some(Avx2(()))
    }

    #[inline(always)]
    pub(super) fn forward(self, blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        // SAFETY: `self` exists only where the CPU has AVX2, which `forward_avx2` is built with.
        unsafe { forward_avx2(blocks, work, digits) }
    }

    /// [`make_planes`] of value `k`'s octets that `place` says block row `row` holds.
    #[inline(always)]
    pub(super) fn make_planes(
        self,
        row: &[[u8; 16]],
        k: usize,
        n: usize,
        place: OctetsAt,
        planes: &mut [u64],
    ) {
        // SAFETY: as for `forward`.
        unsafe { make_planes(row, k, n, place, planes) }
    }

    /// π⁻¹ from the planes of the keys' two leading octets ([`plane_rank`]), for every lane
    /// (a multiple of [`PLANE_LANES`]).
    #[inline(always)]
    pub(super) fn inverse_planes(self, blocks: &Blocks<'_>, planes: &[u64], digits: &mut [u32]) {
        let (chunks, _) = digits[..blocks.lanes].as_chunks_mut::<PLANE_LANES>();
        for (c, digits) in chunks.iter_mut().enumerate() {
            // SAFETY: as for `forward`.
            unsafe { plane_rank(blocks, planes, c, digits) }
        }
    }

    #[inline(always)]
    pub(super) fn inverse(self, blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        // SAFETY: as for `forward`.
        unsafe { inverse_avx2(blocks, work, digits) }
    }

    /// The constant-time search of the chunk of lanes from `first` on: each lane's key of rank
    /// x and the lanes whose key ties another's leading bits.
    #[cfg(test)]
    pub(super) fn search_constant_time(
        self,
        blocks: &Blocks<'_>,
        work: Work<'_>,
        first: usize,
        digits: &[u32],
    ) -> ([u64; CHUNK], u32) {
        // SAFETY: as for `forward`.
        unsafe {
            if blocks.layout.n as usize <= OCTET_MAX_RADIX {
                search_octets_constant_time(blocks, work.quads(), first, digits)
            } else {
                search_chunk(blocks, work.pairs(), first, digits)
            }
        }
    }

    /// [`plane_ranked`] of plane chunk `c`: each [`CHUNK`]'s keys of rank x and ties, `None`
    /// where a lane has more keys that share its two octets than are gathered.
    #[cfg(test)]
    pub(super) fn plane_ranked(
        self,
        blocks: &Blocks<'_>,
        work: Work<'_>,
        c: usize,
        digits: &[u32; PLANE_LANES],
        wide: Option<Avx512>,
    ) -> [Option<([u64; CHUNK], u32)>; PLANE_LANES / CHUNK] {
        let planes = blocks.planes.unwrap_or_default();
        let quads = work.quads();
        let n = blocks.layout.n as usize;
        let digits = &[*digits];
        let (most, [(by_lane, ranked)]) = if n <= GATHER_AFTER_TWO_MAX_RADIX {
            // SAFETY: as for `forward`.
            let ranked = unsafe {
                plane_ranked::<PLANE_GATHERED, 1, 4>(blocks, planes, c, digits, quads, wide)
            };
            (PLANE_GATHERED, ranked)
        } else {
            // SAFETY: as for `forward`.
            let ranked = unsafe {
                plane_ranked::<PLANE_GATHERED_WIDE, 1, 4>(blocks, planes, c, digits, quads, wide)
            };
            (PLANE_GATHERED_WIDE, ranked)
        };
        core::array::from_fn(|chunk| {
            let lanes = &by_lane[chunk * CHUNK..][..CHUNK];
            let gathered = lanes.iter().all(|lane| lane.count as usize <= most);
            gathered.then_some(ranked[chunk])
        })
    }

    /// [`search_gathered`] of the chunk of lanes from `first` on.
    #[cfg(test)]
    pub(super) fn search_gathered(
        self,
        blocks: &Blocks<'_>,
        work: Work<'_>,
        first: usize,
        digits: &[u32],
    ) -> Option<([u64; CHUNK], u32)> {
        // SAFETY: as for `forward`.
        unsafe { search_gathered(blocks, work.quads(), first, digits) }
    }

    /// [`lead_octets`] of the chunk of lanes from `first` on.
    #[cfg(test)]
    pub(super) fn lead_octets(
        self,
        blocks: &Blocks<'_>,
        work: Work<'_>,
        first: usize,
        digits: &[u32],
    ) -> Option<[u32; CHUNK]> {
        // SAFETY: as for `forward`.
        unsafe { lead_octets(blocks, work.quads(), first, digits) }
    }

    /// π when `forward` (up to radix [`SMALL_RADIX`] by [`forward_small`], which sorts every
    /// lane's keys by a network of fixed pairs, or by AVX-512's, eight lanes to a vector, if
    /// `wide`; above it by [`forward_planes_constant_time`] where the AES loop made planes,
    /// with AVX-512's ranking if `wide`, else by [`forward_constant_time_avx2`]), else π⁻¹ by
    /// [`inverse_constant_time_avx2`], or by AVX-512's, eight lanes to a vector, if `wide`: the
    /// constant-time passes.
    #[inline(always)]
    pub(super) fn select_constant_time(
        self,
        blocks: &Blocks<'_>,
        work: Work<'_>,
        digits: &mut [u32],
        forward: bool,
        wide: Option<Avx512>,
    ) {
        let small = blocks.layout.n as usize <= SMALL_RADIX;
        match (forward, wide) {
            (true, Some(wide)) if small => wide.forward_small(blocks, work, digits),
            (true, None) if small => {
                // SAFETY: as for `forward`.
                unsafe { by_radix!(forward_small(blocks, work, digits)) }
            }
            (true, _) => match blocks.planes {
                // SAFETY: as for `forward`.
                Some(planes) => unsafe {
                    forward_planes_constant_time(blocks, planes, work, digits, wide)
                },
                // SAFETY: as for `forward`.
                None => unsafe { forward_constant_time_avx2(blocks, work, digits) },
            },
            (false, Some(wide)) => wide.inverse_constant_time(blocks, work, digits),
            // SAFETY: as for `forward`.
            (false, None) => unsafe { inverse_constant_time_avx2(blocks, work, digits) },
        }
    }
}

/// Largest radix whose fast π searches two plane chunks side by side ([`plane_search`]): that
/// pays at radices up to here and costs above (BENCHMARKS.md).
const PAIRED_RADIX: u32 = 128;

/// Eight keys, one per lane of a chunk: lanes 0–3 and 4–7.
type Row = [__m256i; 2];

#[target_feature(enable = "avx2")]
fn forward_avx2(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    if blocks.layout.n as usize <= SMALL_RADIX {
        by_radix!(forward_narrow(blocks, work, digits))
    } else {
        let quads = work.quads();
        let lanes = &mut digits[..blocks.lanes];
        let (whole, rest) = match blocks.planes {
            Some(planes) => {
                let (whole, rest) = lanes.as_chunks_mut::<PLANE_LANES>();
                // Up to `PAIRED_RADIX`, two plane chunks side by side where there are two: one
                // chunk's compares run while the other's count settles its bit.
                let paired = blocks.layout.n <= PAIRED_RADIX;
                let (pairs, _) = whole.as_chunks_mut::<2>();
                let spare = quads.as_flattened_mut();
                for (p, [one, two]) in pairs.iter_mut().enumerate().filter(|_| paired) {
                    plane_search::<2, 2>(blocks, planes, 2 * p, [one, two], spare);
                }
                let first = if paired { 2 * pairs.len() } else { 0 };
                for (c, digits) in whole.iter_mut().enumerate().skip(first) {
                    plane_search::<1, 4>(blocks, planes, c, [digits], spare);
                }
                (whole.len() * PLANE_LANES, rest)
            }
            None => (0, lanes),
        };
        for (chunk, digits) in rest.chunks_mut(CHUNK).enumerate() {
            forward_octets(blocks, quads, whole + chunk * CHUNK, digits);
        }
    }
}

/// Fast π(x) for the [`CHUNK`] lanes from `first` on, by the keys' octets.
#[inline]
#[target_feature(enable = "avx2")]
fn forward_octets(
    blocks: &Blocks<'_>,
    quads: &mut [[u64; 4 * CHUNK]],
    first: usize,
    digits: &mut [u32],
) {
    if let Some(rows) = lead_octets(blocks, quads, first, digits) {
        digits.copy_from_slice(&rows[..digits.len()]);
    } else {
        // Rare: the full search, a call of its own (the gathered search would be inlined here
        // and grow the loop that runs for nearly every chunk).
        let found = search_octets(blocks, quads, first, digits);
        found_digits(blocks, first, found, quads.as_flattened_mut(), digits);
    }
}

cpufeatures::new!(lead_rank_cpu, "avx2", "popcnt");

/// Proof that this CPU has AVX2 and POPCNT, which one message's ranking of leading bits on
/// arrival ([`rank_lead`]) and its lead of rank x ([`lead_of_rank`]) run on: only
/// [`LeadRank::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LeadRank(());

impl LeadRank {
    pub(super) fn detect() -> Option<LeadRank> {
        lead_rank_cpu::get().then_some(LeadRank(()))
    }

    /// [`rank_lead`]: key `j` of one message kept and ranked as it arrives.
    #[inline(always)]
    pub(super) fn rank_lead(self, ranked: &mut LeadRanks, j: usize, key: u64) {
        // SAFETY: `self` exists only where the CPU has AVX2, all `rank_lead` needs.
        unsafe { rank_lead(ranked, j, key) }
    }

    /// [`lead_of_rank`]: how many of `n` keys lie below the leading 16 bits of the key of rank
    /// `x`, and how many share them.
    #[inline(always)]
    pub(super) fn lead_of_rank(self, ranked: &LeadRanks, n: usize, x: u32) -> (u32, u32) {
        // SAFETY: `self` exists only where the CPU has AVX2 and POPCNT.
        unsafe { lead_of_rank(ranked, n, x) }
    }

    /// [`gather_ranked`]: the `shared` keys ranked `first` on.
    #[inline(always)]
    pub(super) fn gather_ranked(
        self,
        keys: &[u64],
        ranked: &LeadRanks,
        first: u32,
        shared: u32,
    ) -> [u64; ONE_GATHERED] {
        // SAFETY: `self` exists only where the CPU has AVX2.
        unsafe { gather_ranked(keys, ranked, first, shared) }
    }
}

/// Lane numbers 0 to 15 of a vector of 16-bit values.
#[inline(always)]
unsafe fn lane_numbers() -> __m256i {
    // SAFETY: the caller's CPU has AVX2.
    unsafe { _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) }
}

/// Keeps key `j`'s leading 16 bits (sign-flipped) in `ranked` and ranks them against those of
/// the keys before it, branch-free ([`LeadRanks`] says what the ranks hold): each earlier vector
/// of leads costs one compare, whose mask (all ones where the earlier lead is the greater)
/// counts those keys before key `j` and takes one from their ranks.
///
/// Not `#[target_feature]`, so that it inlines into the one-message chain (as `make_planes`).
/// Key `j`'s lanes (and those after it) must be as [`LeadRanks::reset`] leaves them; every store
/// is of a whole vector, which the next key's loads take from the store queue (a narrower one
/// would stall them until it retires).
///
/// # Safety
///
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn rank_lead(ranked: &mut LeadRanks, j: usize, key: u64) {
    let (leads, ranks) = (&mut ranked.leads, &mut ranked.ranks);
    // SAFETY: (all intrinsics) the caller's CPU has AVX2; every load and store is of a whole
    // vector of `leads` or `ranks`, which hold `RANKED_RADIX` values, a multiple of
    // `LEAD_LANES`, aligned to 64 bytes.
    unsafe {
        let (last, lane) = (j / LEAD_LANES, j % LEAD_LANES);
        let raw = (key >> 48) as u16 as i16;
        let lead = _mm256_set1_epi16(raw ^ i16::MIN);
        let vector = |values: &[u16; RANKED_RADIX as usize], v: usize| {
            _mm256_load_si256(values[LEAD_LANES * v..].as_ptr().cast())
        };
        let store = |values: &mut [u16; RANKED_RADIX as usize], v: usize, value: __m256i| {
            _mm256_store_si256(values[LEAD_LANES * v..].as_mut_ptr().cast(), value)
        };
        // Two mask bits a lane.
        let mut greater_bits = 0u32;
        for v in 0..last {
            let greater = _mm256_cmpgt_epi16(vector(leads, v), lead);
            greater_bits += (_mm256_movemask_epi8(greater) as u32).count_ones();
            store(ranks, v, _mm256_add_epi16(vector(ranks, v), greater));
        }
        // Key j's lane and those after it hold the least lead, above no other.
        let those = vector(leads, last);
        let greater = _mm256_cmpgt_epi16(those, lead);
        greater_bits += (_mm256_movemask_epi8(greater) as u32).count_ones();
        let own = _mm256_cmpeq_epi16(lane_numbers(), _mm256_set1_epi16(lane as i16));
        // The least lead, sign-flipped, is 0x8000: XORing the raw lead in flips it back.
        let lead = _mm256_and_si256(own, _mm256_set1_epi16(raw));
        store(leads, last, _mm256_xor_si256(those, lead));
        let rank = (greater_bits / 2) as i16 - j as i16;
        let counts = _mm256_add_epi16(vector(ranks, last), greater);
        let rank = _mm256_and_si256(own, _mm256_set1_epi16(rank));
        store(ranks, last, _mm256_or_si256(counts, rank));
    }
}

/// How many of the `n` keys that [`rank_lead`] kept lie below the leading 16 bits of the key of
/// rank `x`, and how many share them: one compare a vector to find those bits, two to count, no
/// branch or address that depends on the keys or on `x`. Keys ordered by leading bits, then
/// index, are in their own order but among keys that share their leading 16 bits, which sit
/// side by side in both orders: so the key of rank `x` has the leading bits of the key ranked
/// `x`.
#[target_feature(enable = "avx2,popcnt")]
fn lead_of_rank(ranked: &LeadRanks, n: usize, x: u32) -> (u32, u32) {
    debug_assert!((1..=RANKED_RADIX as usize).contains(&n) && (x as usize) < n);
    let vectors = n.div_ceil(LEAD_LANES);
    // SAFETY: whole 256-bit vectors of `leads` and `ranks`, which hold `RANKED_RADIX` values,
    // aligned to 64 bytes.
    let vector = |values: &[u16; RANKED_RADIX as usize], v: usize| unsafe {
        _mm256_load_si256(values[LEAD_LANES * v..].as_ptr().cast())
    };
    // SAFETY: the CPU has AVX2.
    let lanes = unsafe { lane_numbers() };
    let present =
        |v: usize| _mm256_cmpgt_epi16(_mm256_set1_epi16((n - LEAD_LANES * v) as i16), lanes);
    // The key ranked x is the one with n − 1 − x keys after it, which `ranks` holds as −x.
    let ranked_x = _mm256_set1_epi16(-(x as i16));
    let mut lead = _mm256_setzero_si256();
    for v in 0..vectors {
        let own = _mm256_cmpeq_epi16(vector(&ranked.ranks, v), ranked_x);
        let own = _mm256_and_si256(own, present(v));
        lead = _mm256_or_si256(lead, _mm256_and_si256(own, vector(&ranked.leads, v)));
    }
    let lead = _mm_or_si128(
        _mm256_castsi256_si128(lead),
        _mm256_extracti128_si256::<1>(lead),
    );
    let lead = _mm_or_si128(lead, _mm_srli_si128::<8>(lead));
    let lead = _mm_or_si128(lead, _mm_srli_si128::<4>(lead));
    let lead = _mm_or_si128(lead, _mm_srli_si128::<2>(lead));
    let lead = _mm256_broadcastw_epi16(lead);
    // Two mask bits a lane.
    let (mut below_bits, mut shared_bits) = (0, 0);
    for v in 0..vectors {
        let leads = vector(&ranked.leads, v);
        let below = _mm256_and_si256(_mm256_cmpgt_epi16(lead, leads), present(v));
        below_bits += (_mm256_movemask_epi8(below) as u32).count_ones();
        let shared = _mm256_and_si256(_mm256_cmpeq_epi16(lead, leads), present(v));
        shared_bits += (_mm256_movemask_epi8(shared) as u32).count_ones();
    }
    (below_bits / 2, shared_bits / 2)
}

/// The `shared` keys ranked `first` on by [`rank_lead`]'s ranks (of all `keys`), in the first
/// slots in that order, the other slots all ones: every key is compared with each slot's rank,
/// four at a time, with no branch or address that depends on the keys or the ranks.
#[target_feature(enable = "avx2")]
fn gather_ranked(keys: &[u64], ranked: &LeadRanks, first: u32, shared: u32) -> [u64; ONE_GATHERED] {
    // A key ranked p has −p in `ranks`: its slot is −rank − first, a slot only from 0 up.
    let first = _mm256_set1_epi64x(-i64::from(first));
    let mut slots = [_mm256_setzero_si256(); ONE_GATHERED];
    let mut gather = |words: __m256i, ranks: __m128i| {
        let slot = _mm256_sub_epi64(first, _mm256_cvtepi16_epi64(ranks));
        for (s, gathered) in slots.iter_mut().enumerate() {
            let here = _mm256_cmpeq_epi64(slot, _mm256_set1_epi64x(s as i64));
            *gathered = _mm256_or_si256(*gathered, _mm256_and_si256(here, words));
        }
    };
    let (quads, rest) = keys.as_chunks::<4>();
    for (q, quad) in quads.iter().enumerate() {
        // SAFETY: 32 bytes of `quad` and 8 of `ranks` from 4q, which holds `RANKED_RADIX`
        // values (n of them keys'), unaligned loads.
        let (words, ranks) = unsafe {
            (
                _mm256_loadu_si256(quad.as_ptr().cast()),
                _mm_loadl_epi64(ranked.ranks[4 * q..].as_ptr().cast()),
            )
        };
        gather(words, ranks);
    }
    if !rest.is_empty() {
        // The last keys, the lanes past them zero: all-zero words gather nothing.
        let mut last = [0; 4];
        last[..rest.len()].copy_from_slice(rest);
        // SAFETY: as above.
        let (words, ranks) = unsafe {
            (
                _mm256_loadu_si256(last.as_ptr().cast()),
                _mm_loadl_epi64(ranked.ranks[4 * quads.len()..].as_ptr().cast()),
            )
        };
        gather(words, ranks);
    }
    let mut found = [u64::MAX; ONE_GATHERED];
    for (s, (found, gathered)) in found.iter_mut().zip(slots).enumerate() {
        let half = _mm_or_si128(
            _mm256_castsi256_si128(gathered),
            _mm256_extracti128_si256::<1>(gathered),
        );
        let word = _mm_or_si128(half, _mm_unpackhi_epi64(half, half));
        *found = _mm_cvtsi128_si64(word) as u64 | super::mask(s as u32 >= shared);
    }
    found
}

/// Writes the octets (sign-flipped) of value `k` that `place` says block row `row` holds into
/// [`Blocks::with_planes`]' planes, [`PLANE_LANES`] lanes a vector in [`plane_lane`] order. The
/// lanes' 32-bit words from byte `place.at` are interleaved down to one vector per 32 lanes,
/// whose first two octets are then shuffled apart.
///
/// Not `#[target_feature]`, so that it inlines into the AES row loop (as AVX-512's makers, whose
/// module's docs say why).
///
/// # Safety
///
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn make_planes(row: &[[u8; 16]], k: usize, n: usize, place: OctetsAt, planes: &mut [u64]) {
    // SAFETY: (all intrinsics) the caller's CPU has AVX2.
    unsafe {
        let at = place.at;
        debug_assert!(at < 15);
        let split = _mm256_setr_epi8(
            0, 4, 8, 12, 1, 5, 9, 13, -1, -1, -1, -1, -1, -1, -1, -1, //
            0, 4, 8, 12, 1, 5, 9, 13, -1, -1, -1, -1, -1, -1, -1, -1,
        );
        // Bytes `at`, `at + 1` of each block to its first two; the rest are not read.
        let to_front = _mm256_add_epi8(
            _mm256_setr_epi8(
                0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, //
                0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ),
            _mm256_set1_epi8(at as i8),
        );
        let sign = _mm256_set1_epi8(i8::MIN);
        let (chunks, _) = row.as_chunks::<PLANE_LANES>();
        for (c, blocks) in chunks.iter().enumerate() {
            let (pairs, _) = blocks.as_flattened().as_chunks::<32>();
            // Register i: blocks 2i (low half) and 2i + 1 (high half), byte `at` of each first.
            let pair = |i: usize| match at {
                0 => load_bytes(&pairs[i]),
                _ => _mm256_shuffle_epi8(load_bytes(&pairs[i]), to_front),
            };
            // Loops rather than `array::from_fn` or `map`: inlined into a row loop built with
            // AVX2 (not `#[target_feature]` itself), the closures that `core` calls are not.
            // Word 0 of blocks 4j, 4j + 2 (low half) and 4j + 1, 4j + 3 (high half) in words 0, 1.
            let mut fours = [_mm256_setzero_si256(); 8];
            for (j, four) in fours.iter_mut().enumerate() {
                *four = _mm256_unpacklo_epi32(pair(2 * j), pair(2 * j + 1));
            }
            // Octets 0 then 1 of blocks 8m, 8m + 2, …, 8m + 6 (low half), 8m + 1, … (high half).
            let mut eights = [_mm256_setzero_si256(); 4];
            for (m, eight) in eights.iter_mut().enumerate() {
                let words = _mm256_unpacklo_epi64(fours[2 * m], fours[2 * m + 1]);
                *eight = _mm256_shuffle_epi8(words, split);
            }
            let low = _mm256_unpacklo_epi32(eights[0], eights[1]);
            let high = _mm256_unpacklo_epi32(eights[2], eights[3]);
            let octets = [
                _mm256_unpacklo_epi64(low, high),
                _mm256_unpackhi_epi64(low, high),
            ];
            for (o, &octet) in octets.iter().enumerate() {
                let Some(o) = place.plane(o) else {
                    continue;
                };
                let (rows, _) = planes.as_chunks_mut::<4>();
                store4(
                    &mut rows[(2 * c + o) * n + k],
                    _mm256_xor_si256(octet, sign),
                );
            }
        }
    }
}

/// Fast π(x) for the [`PLANE_LANES`] lanes of each of the `W` plane chunks from `c` on, one
/// digit x each in `digits`, from the planes of the keys' two leading octets: the x-th key's
/// octets ([`plane_lead_octets`], `PER` sums a chunk), and the one key that has them. A lane
/// where other keys share them (rare: about n/65 536 a lane) or its second octet is not known is
/// picked from the whole keys that share its first octet instead ([`pick_sharing`], `spare` its
/// scratch).
#[target_feature(enable = "avx2")]
fn plane_search<const W: usize, const PER: usize>(
    blocks: &Blocks<'_>,
    planes: &[u64],
    c: usize,
    digits: [&mut [u32; PLANE_LANES]; W],
    spare: &mut [u64],
) {
    let (firsts, seconds) = chunk_planes::<W>(planes, blocks.layout.n as usize, c);
    let x = core::array::from_fn(|h| plane_digits(digits[h]));
    let found = plane_lead_octets::<W, PER>(firsts, seconds, x);
    for (h, digits) in digits.into_iter().enumerate() {
        let (first, second, known) = found[h];
        let (mut sharing, mut index) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        // Row k's index in every lane, counted up row by row rather than broadcast.
        let mut k = _mm256_setzero_si256();
        for (one, two) in firsts[h].iter().zip(seconds[h]) {
            let hit = _mm256_and_si256(
                _mm256_cmpeq_epi8(load_vector(one, 0), first),
                _mm256_cmpeq_epi8(load_vector(two, 0), second),
            );
            sharing = _mm256_sub_epi8(sharing, hit);
            index = _mm256_blendv_epi8(index, k, hit);
            k = _mm256_add_epi8(k, _mm256_set1_epi8(1));
        }
        let alone = _mm256_and_si256(_mm256_cmpeq_epi8(sharing, _mm256_set1_epi8(1)), known);
        let alone = _mm256_movemask_epi8(alone) as u32;
        put_plane_bytes(index, digits);
        for p in set_bits(!alone) {
            let (lane, x) = (plane_lane(p), bytes_of(x[h])[p]);
            let octet = bytes_of(first)[p] as i8;
            digits[lane] = pick_sharing(blocks, firsts[h], (c + h, p), octet, spare, x);
        }
    }
}

/// π(x) of the lane at byte `p` of plane chunk `c` from the whole keys that share its x-th key's
/// first octet `octet` (sign-flipped), found in the chunk's planes `firsts` ([`pick_among`]): for
/// the rare lanes where the planes do not tell that key apart.
#[cold]
#[inline(never)]
fn pick_sharing(
    blocks: &Blocks<'_>,
    firsts: &[[u64; 4]],
    (c, p): (usize, usize),
    octet: i8,
    spare: &mut [u64],
    x: u8,
) -> u32 {
    let below = firsts
        .iter()
        .filter(|row| plane_byte(row, p) < octet)
        .count();
    let among = (0..firsts.len()).filter(|&k| plane_byte(&firsts[k], p) == octet);
    let lane = c * PLANE_LANES + plane_lane(p);
    pick_among(blocks, lane, among, below as u32, spare, x.into())
}

/// Byte `p` of a row of planes: the octet (sign-flipped) of lane [`plane_lane`]`(p)`.
#[inline(always)]
fn plane_byte(row: &[u64; 4], p: usize) -> i8 {
    (row[p / 8] >> (8 * (p % 8))) as u8 as i8
}

/// The positions of `bits`' set bits, lowest first.
fn set_bits(mut bits: u32) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        let p = bits.trailing_zeros() as usize;
        bits &= bits.wrapping_sub(1);
        (p < 32).then_some(p)
    })
}

/// `bytes`, one a lane in plane order ([`plane_lane`]), as each lane's digit.
#[inline]
#[target_feature(enable = "avx2")]
fn put_plane_bytes(bytes: __m256i, digits: &mut [u32; PLANE_LANES]) {
    // The even lanes' bytes, then the odd ones': interleaved back into lane order.
    let (even, odd) = (
        _mm256_castsi256_si128(bytes),
        _mm256_extracti128_si256::<1>(bytes),
    );
    let sixteens = [_mm_unpacklo_epi8(even, odd), _mm_unpackhi_epi8(even, odd)];
    let (eights, _) = digits.as_chunks_mut::<CHUNK>();
    for (i, eight) in eights.iter_mut().enumerate() {
        let bytes = match i % 2 {
            0 => sixteens[i / 2],
            _ => _mm_srli_si128::<8>(sixteens[i / 2]),
        };
        // SAFETY: `eight` is 32 writable bytes; the store is unaligned.
        unsafe { _mm256_storeu_si256(eight.as_mut_ptr().cast(), _mm256_cvtepu8_epi32(bytes)) };
    }
}

/// Fast π⁻¹(x) for the [`PLANE_LANES`] lanes of plane chunk `c`, one digit x each in
/// `digits`: each lane's keys below key x by their two leading octets (the planes), 32 lanes to
/// a compare; a lane where another key shares key x's octets adds the keys among those below it
/// in full ([`rank_sharing`]).
#[target_feature(enable = "avx2")]
fn plane_rank(blocks: &Blocks<'_>, planes: &[u64], c: usize, digits: &mut [u32; PLANE_LANES]) {
    let n = blocks.layout.n as usize;
    let (rows, _) = planes.as_chunks::<4>();
    let (firsts, seconds) = rows[2 * c * n..][..2 * n].split_at(n);
    // Each lane's octet of row x: byte p of a vector is byte p mod 8 of its word p / 8.
    let x: [usize; PLANE_LANES] = core::array::from_fn(|p| digits[plane_lane(p)] as usize);
    let pivot = |rows: &[[u64; 4]]| {
        let bytes: [u8; PLANE_LANES] = core::array::from_fn(|p| plane_byte(&rows[x[p]], p) as u8);
        // SAFETY: `bytes` is 32 readable bytes; the load is unaligned.
        unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) }
    };
    let (one, two) = (pivot(firsts), pivot(seconds));
    let (mut below, mut sharing) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for (first, second) in firsts.iter().zip(seconds) {
        let (first, second) = (load_vector(first, 0), load_vector(second, 0));
        let same = _mm256_cmpeq_epi8(first, one);
        let less = _mm256_or_si256(
            _mm256_cmpgt_epi8(one, first),
            _mm256_and_si256(same, _mm256_cmpgt_epi8(two, second)),
        );
        below = _mm256_sub_epi8(below, less);
        sharing = _mm256_sub_epi8(
            sharing,
            _mm256_and_si256(same, _mm256_cmpeq_epi8(second, two)),
        );
    }
    // Key x itself is the one sharing its octets, unless others do too.
    let alone = _mm256_movemask_epi8(_mm256_cmpeq_epi8(sharing, _mm256_set1_epi8(1))) as u32;
    put_plane_bytes(below, digits);
    let below = bytes_of(below);
    for p in set_bits(!alone) {
        let at = (c, p);
        digits[plane_lane(p)] = rank_sharing(blocks, (firsts, seconds), at, x[p], below[p].into());
    }
}

/// π⁻¹(x) of the lane at byte `p` of plane chunk `c` whose key x shares its two octets with
/// others, `below` keys lying below them: [`rank_among`] the keys that share them, found in the
/// chunk's planes `(firsts, seconds)`.
#[cold]
#[inline(never)]
fn rank_sharing(
    blocks: &Blocks<'_>,
    (firsts, seconds): (&[[u64; 4]], &[[u64; 4]]),
    (c, p): (usize, usize),
    x: usize,
    below: u32,
) -> u32 {
    let octets = |k: usize| (plane_byte(&firsts[k], p), plane_byte(&seconds[k], p));
    let among = (0..firsts.len()).filter(|&k| octets(k) == octets(x));
    let lane = c * PLANE_LANES + plane_lane(p);
    rank_among(blocks, lane, among, below, blocks.key(lane, x))
}

/// Constant-time π(x) for every lane (a multiple of [`PLANE_LANES`]) from the planes of the
/// keys' two leading octets: [`plane_forward_constant_time`], up to [`PAIRED_RADIX`] two plane
/// chunks side by side, else each in turn.
#[target_feature(enable = "avx2")]
fn forward_planes_constant_time(
    blocks: &Blocks<'_>,
    planes: &[u64],
    work: Work<'_>,
    digits: &mut [u32],
    wide: Option<Avx512>,
) {
    let quads = work.quads();
    let (chunks, _) = digits[..blocks.lanes].as_chunks_mut::<PLANE_LANES>();
    let paired = blocks.layout.n <= PAIRED_RADIX;
    let (pairs, _) = chunks.as_chunks_mut::<2>();
    for (p, [one, two]) in pairs.iter_mut().enumerate().filter(|_| paired) {
        plane_forward_constant_time::<2, 2>(blocks, planes, 2 * p, [one, two], quads, wide);
    }
    let first = if paired { 2 * pairs.len() } else { 0 };
    for (c, d) in chunks.iter_mut().enumerate().skip(first) {
        plane_forward_constant_time::<1, 4>(blocks, planes, c, [d], quads, wide);
    }
}

/// Constant-time π(x) for the [`PLANE_LANES`] lanes of each of the `W` plane chunks from `c`
/// on, one digit x each in `digits`: the x-th key's two octets searched for over the planes, 32
/// lanes to a compare (`PER` sums a chunk), the (at most [`PLANE_GATHERED`], above radix
/// [`GATHER_AFTER_TWO_MAX_RADIX`] [`PLANE_GATHERED_WIDE`]) keys that share them marked
/// ([`plane_gather`]), and their leading words read from the keystream and ranked against each
/// other, four lanes to a vector ([`rank_planes`]), or with AVX-512 (`wide`) eight. A [`CHUNK`]
/// of lanes where more keys share a lane's two octets runs the constant-time search over all
/// octets instead ([`search_octets_constant_time`]).
#[target_feature(enable = "avx2")]
fn plane_forward_constant_time<const W: usize, const PER: usize>(
    blocks: &Blocks<'_>,
    planes: &[u64],
    c: usize,
    digits: [&mut [u32; PLANE_LANES]; W],
    quads: &mut [[u64; 4 * CHUNK]],
    wide: Option<Avx512>,
) {
    let x = core::array::from_fn(|h| *digits[h]);
    let (most, found) = if blocks.layout.n as usize <= GATHER_AFTER_TWO_MAX_RADIX {
        let found = plane_ranked::<PLANE_GATHERED, W, PER>(blocks, planes, c, &x, quads, wide);
        (PLANE_GATHERED, found)
    } else {
        let found = plane_ranked::<PLANE_GATHERED_WIDE, W, PER>(blocks, planes, c, &x, quads, wide);
        (PLANE_GATHERED_WIDE, found)
    };
    for (digits, (h, (by_lane, ranked))) in digits.into_iter().zip(found.iter().enumerate()) {
        let (eights, _) = by_lane.as_chunks::<CHUNK>();
        for ((chunk, digits), lanes) in digits.chunks_exact_mut(CHUNK).enumerate().zip(eights) {
            let first = (c + h) * PLANE_LANES + chunk * CHUNK;
            let found = ranked[chunk];
            // The documented exception: this branch depends on how many keys share two octets.
            let found = if lanes.iter().any(|lane| lane.count as usize > most) {
                search_octets_constant_time(blocks, quads, first, digits)
            } else {
                found
            };
            found_digits(blocks, first, found, quads.as_flattened_mut(), digits);
        }
    }
}

/// What one plane chunk's constant-time π finds before it picks the digits: each lane's
/// [`Gathered`], and each [`CHUNK`]'s keys of rank x and ties (where no lane has more keys that
/// share its two octets than are ranked).
type PlaneRanked = (
    [Gathered; PLANE_LANES],
    [([u64; CHUNK], u32); PLANE_LANES / CHUNK],
);

/// Each of the `W` plane chunks' [`PlaneRanked`] from `c` on, as
/// [`plane_forward_constant_time`] finds them with at most `S` keys gathered a lane.
#[inline]
#[target_feature(enable = "avx2")]
fn plane_ranked<const S: usize, const W: usize, const PER: usize>(
    blocks: &Blocks<'_>,
    planes: &[u64],
    c: usize,
    digits: &[[u32; PLANE_LANES]; W],
    quads: &mut [[u64; 4 * CHUNK]],
    wide: Option<Avx512>,
) -> [PlaneRanked; W] {
    let n = blocks.layout.n as usize;
    let mut hits = [[0u32; 256]; W];
    let narrowed = quads.as_flattened_mut();
    let gathered = plane_gather::<W, PER>(blocks, planes, c, digits, narrowed, &mut hits);
    let mut found = [(
        [Gathered::default(); PLANE_LANES],
        [([0; CHUNK], 0); PLANE_LANES / CHUNK],
    ); W];
    for (h, found) in found.iter_mut().enumerate() {
        let by_lane = by_lane(gathered[h]);
        let (first, hits) = ((c + h) * PLANE_LANES, &hits[h][..n]);
        let ranked = match wide {
            Some(avx512) => avx512.rank_planes::<S>(blocks, first, hits, &by_lane),
            None => rank_planes::<S>(blocks, first, hits, &by_lane),
        };
        *found = (by_lane, ranked);
    }
    found
}

/// What [`plane_gather`] found, in plane order, as each lane's [`Gathered`].
#[inline]
fn by_lane((rank, count): ([u8; PLANE_LANES], [u8; PLANE_LANES])) -> [Gathered; PLANE_LANES] {
    let mut by_lane = [Gathered::default(); PLANE_LANES];
    for p in 0..PLANE_LANES {
        by_lane[plane_lane(p)] = Gathered {
            rank: rank[p],
            count: count[p],
        };
    }
    by_lane
}

/// For the [`PLANE_LANES`] lanes of each of the `W` plane chunks from `c` on, in plane order
/// ([`plane_lane`]), with no branch or address that depends on the keys or the digits: the rank
/// of each lane's key of rank x among the keys that share its two octets, and how many there
/// are; and in `hits[h][k]`, the lanes of chunk `c + h` whose key k shares them, by [`CHUNK`]:
/// byte q's bits for plane bytes 4q to 4q + 3, then 16 + 4q to 19 + 4q (the q-th chunk's lanes in
/// the order 0, 2, 4, 6, 1, 3, 5, 7). The octets are [`plane_octets`] (`narrowed` its scratch,
/// `PER` sums a chunk).
#[inline]
#[target_feature(enable = "avx2")]
fn plane_gather<const W: usize, const PER: usize>(
    blocks: &Blocks<'_>,
    planes: &[u64],
    c: usize,
    digits: &[[u32; PLANE_LANES]; W],
    narrowed: &mut [u64],
    hits: &mut [[u32; 256]; W],
) -> [([u8; PLANE_LANES], [u8; PLANE_LANES]); W] {
    let n = blocks.layout.n as usize;
    let (firsts, seconds) = chunk_planes::<W>(planes, n, c);
    let x = core::array::from_fn(|h| plane_digits(&digits[h]));
    let found = plane_octets::<W, PER>(firsts, seconds, x, narrowed);
    let mut out = [([0; PLANE_LANES], [0; PLANE_LANES]); W];
    let chunk_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (h, (out, hits)) in out.iter_mut().zip(hits).enumerate() {
        let (first, second, rank) = found[h];
        let mut count = _mm256_setzero_si256();
        for ((one, two), bits) in firsts[h].iter().zip(seconds[h]).zip(&mut hits[..n]) {
            let hit = _mm256_and_si256(
                _mm256_cmpeq_epi8(load_vector(one, 0), first),
                _mm256_cmpeq_epi8(load_vector(two, 0), second),
            );
            // Byte q for the q-th chunk's lanes, so that AVX-512 takes its lane masks whole.
            let in_chunks = _mm256_permutevar8x32_epi32(hit, chunk_order);
            *bits = _mm256_movemask_epi8(in_chunks) as u32;
            count = _mm256_sub_epi8(count, hit);
        }
        *out = (bytes_of(rank), bytes_of(count));
    }
    out
}

/// For the [`PLANE_LANES`] lanes from `first` on, each chunk's key that [`Gathered`] describes
/// (of its rank among the keys that share its two octets) and the lanes (bit `l` for lane `l`
/// of the chunk) where another of those keys ties its leading bits, four lanes to a vector
/// (AVX-512's `rank_planes` runs eight): each key's leading word read from the keystream by a
/// pass over every value, with no address that depends on the keys ([`kept_words`]).
#[inline]
#[target_feature(enable = "avx2")]
fn rank_planes<const S: usize>(
    blocks: &Blocks<'_>,
    first: usize,
    hits: &[u32],
    lanes: &[Gathered; PLANE_LANES],
) -> [([u64; CHUNK], u32); PLANE_LANES / CHUNK] {
    // The unpacking in `kept_words` leaves lanes 0, 2, 1, 3 of four in the words of a vector.
    const ORDER: [usize; 4] = [0, 2, 1, 3];
    let layout = &blocks.layout;
    let kept: [[__m256i; S]; PLANE_LANES / 4] = match layout.bytes_per_value() % 16 {
        0 => core::array::from_fn(|g| kept_words::<S, true>(blocks, first + 4 * g, hits, g)),
        _ => core::array::from_fn(|g| kept_words::<S, false>(blocks, first + 4 * g, hits, g)),
    };
    let mut ranked = [([0u64; CHUNK], 0u32); PLANE_LANES / CHUNK];
    for (g, (four, slots)) in lanes.as_chunks::<4>().0.iter().zip(&kept).enumerate() {
        let of = |byte: &dyn Fn(&Gathered) -> u8| {
            let [a, b, c, d] = ORDER.map(|l| i64::from(byte(&four[l])));
            _mm256_setr_epi64x(a, b, c, d)
        };
        let (found, tied) = rank_kept(layout, slots, of(&|l| l.rank), of(&|l| l.count));
        let (mut words, chunk) = ([0u64; 4], &mut ranked[g / 2]);
        store4(&mut words, found);
        let tied = _mm256_movemask_pd(_mm256_castsi256_pd(tied)) as u32;
        for (w, &l) in ORDER.iter().enumerate() {
            let l = 4 * (g % 2) + l;
            chunk.0[l] = words[w];
            chunk.1 |= (tied >> w & 1) << l;
        }
    }
    ranked
}

/// The leading words of the keys of the four lanes from `first` on (the `g`-th four of a plane
/// chunk, in the order 0, 2, 1, 3) that `hits` marks, at most `S` a lane, each with its index in
/// place of its last bits: shifted into a lane's slots where its bit is set (bits by chunk, as
/// [`plane_gather`] leaves them). `ALIGNED`: every value starts a block (`bytes_per_value` a
/// multiple of 16), so that its leading word is the block's first.
#[inline]
#[target_feature(enable = "avx2")]
fn kept_words<const S: usize, const ALIGNED: bool>(
    blocks: &Blocks<'_>,
    first: usize,
    hits: &[u32],
    g: usize,
) -> [__m256i; S] {
    let layout = &blocks.layout;
    let zero = _mm256_setzero_si256();
    // For the four from 4g, in byte g / 2 of the hits: the two bits from bit 2 (g % 2) (its
    // even lanes) and the two bits four above those (its odd lanes).
    let word_bits = _mm256_setr_epi64x(1, 2, 4, 8);
    // A big-endian word's index bits (at most 8, its last byte).
    let index_bits = _mm256_set1_epi64x((layout.index_mask() << 56) as i64);
    let blocks_per_value = layout.bytes_per_value() / 16;
    let mut slots = [zero; S];
    // The four lanes' blocks of row `j` from byte `at` on, as two vectors.
    let pair = |j: usize, at: usize| {
        let start = (j * blocks.lanes + first) * 16 + at;
        let (pair, _) = blocks.bytes[start..][..64].as_chunks::<32>();
        (load_bytes(&pair[0]), load_bytes(&pair[1]))
    };
    for (k, &bits) in hits.iter().enumerate() {
        // The four lanes' leading words of value k (as `each_row` reads them, not swapped).
        let (block, byte) = match ALIGNED {
            true => (k * blocks_per_value, 0),
            false => lead_at(layout, k),
        };
        let word = match byte {
            // Within the block: loaded from the value's first byte (a value that does not
            // start a block runs into the next row, so the loads stay in the keystream).
            0..=8 => {
                let (one, two) = pair(block, byte);
                _mm256_unpacklo_epi64(one, two)
            }
            _ => {
                let ((one, two), (three, four)) = (pair(block, 0), pair(block + 1, 0));
                let shift = 8 * (byte % 8) as i64;
                let (down, up) = (_mm_cvtsi64_si128(shift), _mm_cvtsi64_si128(64 - shift));
                _mm256_or_si256(
                    _mm256_srl_epi64(_mm256_unpackhi_epi64(one, two), down),
                    _mm256_sll_epi64(_mm256_unpacklo_epi64(three, four), up),
                )
            }
        };
        let index = _mm256_set1_epi64x(((k as u64) << 56) as i64);
        let word = _mm256_or_si256(_mm256_andnot_si256(index_bits, word), index);
        let at = 8 * (g / 2) + 2 * (g % 2);
        let marks = i64::from(bits >> at & 3 | (bits >> (at + 4) & 3) << 2);
        let marks = _mm256_and_si256(_mm256_set1_epi64x(marks), word_bits);
        let hit = _mm256_cmpeq_epi64(marks, word_bits);
        for s in (1..S).rev() {
            slots[s] = _mm256_blendv_epi8(slots[s], slots[s - 1], hit);
        }
        slots[0] = _mm256_blendv_epi8(slots[0], word, hit);
    }
    slots
}

/// Per word, the key of rank `rank` among the first `count` of the keys in `words` (big-endian,
/// each with its index in place of its last bits), and (all ones in a word) whether another of
/// them ties its leading bits.
#[inline]
#[target_feature(enable = "avx2")]
fn rank_kept<const S: usize>(
    layout: &KeyLayout,
    words: &[__m256i; S],
    rank: __m256i,
    count: __m256i,
) -> (__m256i, __m256i) {
    let zero = _mm256_setzero_si256();
    // Keystream words are big-endian.
    let swap = _mm256_setr_epi8(
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, //
        7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,
    );
    let value_mask = _mm256_set1_epi64x(layout.value_mask() as i64);
    let sign = _mm256_set1_epi64x(i64::MIN);
    let keys = words.map(|word| _mm256_shuffle_epi8(word, swap));
    let flipped = keys.map(|key| _mm256_xor_si256(key, sign));
    let valid: [__m256i; S] =
        core::array::from_fn(|s| _mm256_cmpgt_epi64(count, _mm256_set1_epi64x(s as i64)));
    let (mut found, mut tied) = (zero, zero);
    for s in 0..S {
        let (mut below, mut shared) = (zero, zero);
        for t in (0..S).filter(|&t| t != s) {
            let less = _mm256_cmpgt_epi64(flipped[s], flipped[t]);
            below = _mm256_sub_epi64(below, _mm256_and_si256(valid[t], less));
            let differ = _mm256_and_si256(_mm256_xor_si256(keys[s], keys[t]), value_mask);
            let same = _mm256_cmpeq_epi64(differ, zero);
            shared = _mm256_or_si256(shared, _mm256_and_si256(valid[t], same));
        }
        // Only the chosen key's ties count: the others' order does not change its rank.
        let chosen = _mm256_and_si256(valid[s], _mm256_cmpeq_epi64(below, rank));
        found = _mm256_or_si256(found, _mm256_and_si256(keys[s], chosen));
        tied = _mm256_or_si256(tied, _mm256_and_si256(chosen, shared));
    }
    (found, tied)
}

/// The planes of the keys' first and second octets of the `W` plane chunks from `c` on, for
/// radix `n`: `n` vectors each.
type ChunkPlanes<'p, const W: usize> = ([&'p [[u64; 4]]; W], [&'p [[u64; 4]]; W]);

/// [`ChunkPlanes`] from the planes of a step of radix `n`.
#[inline(always)]
fn chunk_planes<const W: usize>(planes: &[u64], n: usize, c: usize) -> ChunkPlanes<'_, W> {
    let (rows, _) = planes.as_chunks::<4>();
    let octets = |h: usize| rows[2 * (c + h) * n..][..2 * n].split_at(n);
    (
        core::array::from_fn(|h| octets(h).0),
        core::array::from_fn(|h| octets(h).1),
    )
}

/// Each lane's digit x, in plane order.
#[inline]
#[target_feature(enable = "avx2")]
fn plane_digits(digits: &[u32; PLANE_LANES]) -> __m256i {
    let x = core::array::from_fn::<u8, PLANE_LANES, _>(|p| digits[plane_lane(p)] as u8);
    // SAFETY: `x` is 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(x.as_ptr().cast()) }
}

/// For each of `W` plane chunks, the two octets (sign-flipped) of each lane's key of rank `x`
/// (in plane order), and the lanes whose second octet is known (all ones): the first by
/// [`plane_octet`]'s bitwise search, the second in one pass over the few keys that share it (about
/// 1 + n/256 a lane), keeping the two least and the two greatest of their second octets. The
/// key of rank x is one of those four unless five or more share its first octet and it lies
/// between them (rare: its lane is then picked from its whole keys).
#[inline]
#[target_feature(enable = "avx2")]
fn plane_lead_octets<const W: usize, const PER: usize>(
    firsts: [&[[u64; 4]]; W],
    seconds: [&[[u64; 4]]; W],
    x: [__m256i; W],
) -> [(__m256i, __m256i, __m256i); W] {
    let first = plane_octet::<W, PER>(x, firsts);
    let (zero, one) = (_mm256_setzero_si256(), _mm256_set1_epi8(1));
    core::array::from_fn(|h| {
        let (octet, below) = first[h];
        let ([least, next_least], [most, next_most], sharing) =
            second_extremes(firsts[h], seconds[h], octet);
        // The key's rank among those that share its first octet, from the bottom and the top.
        let rank = _mm256_sub_epi8(x[h], below);
        let from_top = _mm256_sub_epi8(_mm256_sub_epi8(sharing, one), rank);
        let picks = [
            (_mm256_cmpeq_epi8(rank, zero), least),
            (_mm256_cmpeq_epi8(rank, one), next_least),
            (_mm256_cmpeq_epi8(from_top, zero), most),
            (_mm256_cmpeq_epi8(from_top, one), next_most),
        ];
        let (second, known) = picks
            .iter()
            .fold((least, zero), |(second, known), &(is, octet)| {
                (
                    _mm256_blendv_epi8(second, octet, is),
                    _mm256_or_si256(known, is),
                )
            });
        (octet, second, known)
    })
}

/// The two least and the two greatest second octets (sign-flipped) of the keys whose first
/// octet is `octet`, lane by lane, and how many such keys there are: the pass of
/// [`plane_lead_octets`] over one plane chunk's rows. A function of its own, so that what its
/// caller keeps across it never pushes the five running vectors out of registers.
#[inline(never)]
#[target_feature(enable = "avx2")]
fn second_extremes(
    firsts: &[[u64; 4]],
    seconds: &[[u64; 4]],
    octet: __m256i,
) -> ([__m256i; 2], [__m256i; 2], __m256i) {
    let (largest, smallest) = (_mm256_set1_epi8(i8::MAX), _mm256_set1_epi8(i8::MIN));
    let ([mut least, mut next_least], [mut most, mut next_most]) = ([largest; 2], [smallest; 2]);
    let mut sharing = _mm256_setzero_si256();
    for (lead, next) in firsts.iter().zip(seconds) {
        let two = load_vector(next, 0);
        let same = _mm256_cmpeq_epi8(load_vector(lead, 0), octet);
        let low = _mm256_blendv_epi8(largest, two, same);
        next_least = _mm256_min_epi8(next_least, _mm256_max_epi8(least, low));
        least = _mm256_min_epi8(least, low);
        let high = _mm256_blendv_epi8(smallest, two, same);
        next_most = _mm256_max_epi8(next_most, _mm256_min_epi8(most, high));
        most = _mm256_max_epi8(most, high);
        sharing = _mm256_sub_epi8(sharing, same);
    }
    ([least, next_least], [most, next_most], sharing)
}

/// For each of `W` plane chunks, the two octets (sign-flipped) of each lane's key of rank `x`
/// (in plane order), from the planes of the keys' first and second octets, 32 lanes a compare:
/// the first by a bitwise search, then the second among the keys that share the first (written
/// into `narrowed`, `4n` words a chunk, the others as the largest octet); and the key's rank
/// among the keys that share both.
#[inline]
#[target_feature(enable = "avx2")]
fn plane_octets<const W: usize, const PER: usize>(
    firsts: [&[[u64; 4]]; W],
    seconds: [&[[u64; 4]]; W],
    x: [__m256i; W],
    narrowed: &mut [u64],
) -> [(__m256i, __m256i, __m256i); W] {
    let n = firsts[0].len();
    let first = plane_octet::<W, PER>(x, firsts);
    let largest = _mm256_set1_epi8(i8::MAX);
    let (narrowed, _) = narrowed[..4 * W * n].as_chunks_mut::<4>();
    for (h, narrowed) in narrowed.chunks_exact_mut(n).enumerate() {
        for (out, (one, two)) in narrowed.iter_mut().zip(firsts[h].iter().zip(seconds[h])) {
            let same = _mm256_cmpeq_epi8(load_vector(one, 0), first[h].0);
            store4(out, _mm256_blendv_epi8(largest, load_vector(two, 0), same));
        }
    }
    let x = core::array::from_fn(|h| _mm256_sub_epi8(x[h], first[h].1));
    let narrowed = &*narrowed;
    let second = plane_octet::<W, PER>(x, core::array::from_fn(|h| &narrowed[h * n..][..n]));
    core::array::from_fn(|h| {
        let (octet, below) = second[h];
        (first[h].0, octet, _mm256_sub_epi8(x[h], below))
    })
}

/// For each of `W` plane chunks, each lane's largest octet (sign-flipped) with at most `x` of
/// the lane's octets in `rows` (sign-flipped) below it, and how many are below it: a bitwise
/// search, 32 lanes a compare, the chunks' passes side by side with `PER` sums each.
#[inline]
#[target_feature(enable = "avx2")]
fn plane_octet<const W: usize, const PER: usize>(
    x: [__m256i; W],
    rows: [&[[u64; 4]]; W],
) -> [(__m256i, __m256i); W] {
    let zero = _mm256_setzero_si256();
    let sign = _mm256_set1_epi8(i8::MIN);
    let (mut found, mut below) = ([zero; W], [zero; W]);
    for bit in (0..8).rev() {
        let one = _mm256_set1_epi8((1u8 << bit) as i8);
        let candidate: [__m256i; W] = core::array::from_fn(|h| _mm256_or_si256(found[h], one));
        let flipped: [__m256i; W] = candidate.map(|candidate| _mm256_xor_si256(candidate, sign));
        // `PER` sums a chunk, each its own register, so that no add waits on the one before.
        let mut sums = [[zero; PER]; W];
        for (h, rows) in rows.iter().enumerate() {
            let less = |row: &[u64; 4]| _mm256_cmpgt_epi8(flipped[h], load_vector(row, 0));
            let (groups, rest) = rows.as_chunks::<PER>();
            for group in groups {
                for (sum, row) in sums[h].iter_mut().zip(group) {
                    *sum = _mm256_sub_epi8(*sum, less(row));
                }
            }
            for row in rest {
                sums[h][0] = _mm256_sub_epi8(sums[h][0], less(row));
            }
        }
        for h in 0..W {
            let count = sums[h]
                .iter()
                .fold(zero, |count, &sum| _mm256_add_epi8(count, sum));
            // Counts and digits are below 256: compared unsigned.
            let at_most = _mm256_cmpeq_epi8(_mm256_min_epu8(count, x[h]), count);
            found[h] = _mm256_blendv_epi8(found[h], candidate[h], at_most);
            below[h] = _mm256_blendv_epi8(below[h], count, at_most);
        }
    }
    core::array::from_fn(|h| (_mm256_xor_si256(found[h], sign), below[h]))
}

/// π(x) for every lane from its keys sorted: a sorting network over all `N` keys (the radix,
/// at most [`SMALL_RADIX`]), eight lanes at a time: about N·log²N/4 compare-exchanges (32 at
/// radix 10) against the N² compares of ranking every key.
#[target_feature(enable = "avx2")]
fn forward_small<const N: usize>(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    debug_assert_eq!(N, blocks.layout.n as usize);
    let rows = work.rows();
    for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
        forward_small_chunk::<N>(blocks, rows, chunk * CHUNK, digits);
    }
}

/// [`forward_small`] of the chunk of lanes from `first` on, its rows made into `rows`.
#[inline]
#[target_feature(enable = "avx2")]
fn forward_small_chunk<const N: usize>(
    blocks: &Blocks<'_>,
    rows: &mut [[u64; CHUNK]],
    first: usize,
    digits: &mut [u32],
) {
    let layout = &blocks.layout;
    make_rows(blocks, first, digits.len(), rows);
    let x: [u64; CHUNK] = core::array::from_fn(|l| digits.get(l).map_or(0, |&d| d.into()));
    let mut found = [0u64; CHUNK];
    let mut ties = 0;
    for half in 0..2 {
        // Past the N keys nothing is read: the network and the pick stop at N.
        let keys: [__m256i; SMALL_RADIX] = core::array::from_fn(|k| {
            rows.get(k)
                .map_or(_mm256_setzero_si256(), |r| flip(load(r)[half]))
        });
        let (key, tied) = select_first::<N>(keys, load(&x)[half], layout);
        store4(&mut found.as_chunks_mut::<4>().0[half], key);
        ties |= tied << (4 * half);
    }
    found_digits(
        blocks,
        first,
        (found, ties),
        rows.as_flattened_mut(),
        digits,
    );
}

/// Lanes of a chunk in the words of a vector of narrow keys ([`narrow_chunk`]): word `p` holds
/// lane `NARROW_LANES[p]`.
const NARROW_LANES: [i32; CHUNK] = [0, 2, 4, 6, 1, 3, 5, 7];

/// Where each lane's word lies in a vector of narrow keys ([`NARROW_LANES`] inverted).
const NARROW_WORDS: [i32; CHUNK] = [0, 4, 1, 5, 2, 6, 3, 7];

/// Eight 32-bit words in the order `order` gives (word `p` of the result is word `order[p]`).
#[inline]
#[target_feature(enable = "avx2")]
fn permute_words(v: __m256i, order: [i32; CHUNK]) -> __m256i {
    let [a, b, c, d, e, f, g, h] = order;
    _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(a, b, c, d, e, f, g, h))
}

/// The 32-bit keys of one step up to radix [`SMALL_RADIX`]: a value's 32 leading bits (fewer
/// if `b < 4`) with its index in the low bits, as [`KeyLayout::key`] makes 64-bit ones.
/// Unsigned minimum and maximum make a compare-exchange of eight lanes two instructions (six
/// for 64-bit keys, which AVX2 compares only signed and blends), and a chunk's keys are one
/// vector a value instead of two.
#[derive(Clone, Copy)]
struct NarrowLayout {
    value_mask: __m256i,
    /// [`KeyLayout::narrow_tie_gap`].
    tie_gap: __m256i,
    index_mask: __m256i,
    /// True when a key holds its whole value, so key order is pair order.
    exact: bool,
}

impl NarrowLayout {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn new(layout: &KeyLayout) -> Self {
        let (value_mask, exact) = layout.narrow();
        NarrowLayout {
            value_mask: _mm256_set1_epi32(value_mask as i32),
            tie_gap: _mm256_set1_epi32(layout.narrow_tie_gap() as i32),
            index_mask: _mm256_set1_epi32(layout.index_mask() as i32),
            exact,
        }
    }

    /// Each word's value bits, as a key of index `k`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn key(&self, lead: __m256i, k: usize) -> __m256i {
        _mm256_or_si256(
            _mm256_and_si256(lead, self.value_mask),
            _mm256_set1_epi32(k as i32),
        )
    }

    /// The lanes (bit `l` for lane `l`) where a key other than `found` (both in the order
    /// [`NARROW_LANES`]) shares its value bits, so that key order may not be pair order there.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn ties(&self, keys: &[__m256i], found: __m256i) -> u32 {
        if self.exact {
            return 0;
        }
        let zero = _mm256_setzero_si256();
        let mut same = zero;
        for &key in keys {
            let differ = _mm256_and_si256(_mm256_xor_si256(key, found), self.value_mask);
            same = _mm256_sub_epi32(same, _mm256_cmpeq_epi32(differ, zero));
        }
        let alone = _mm256_cmpeq_epi32(permute_words(same, NARROW_WORDS), _mm256_set1_epi32(1));
        !_mm256_movemask_ps(_mm256_castsi256_ps(alone)) as u32 & 0xff
    }

    /// [`Self::ties`] of `keys` sorted, for any two keys of the lane that may tie (bit `l` for
    /// lane `l`): a gap between neighbours of at most [`KeyLayout::narrow_tie_gap`].
    #[inline]
    #[target_feature(enable = "avx2")]
    fn sorted_ties(&self, keys: &[__m256i]) -> u32 {
        if self.exact {
            return 0;
        }
        let mut gap = _mm256_set1_epi32(-1);
        for pair in keys.windows(2) {
            gap = _mm256_min_epu32(gap, _mm256_sub_epi32(pair[1], pair[0]));
        }
        let near = _mm256_cmpeq_epi32(_mm256_min_epu32(gap, self.tie_gap), gap);
        let near = permute_words(near, NARROW_WORDS);
        _mm256_movemask_ps(_mm256_castsi256_ps(near)) as u32
    }
}

/// Stores `words` (in the order [`NARROW_LANES`]) as the lanes' digits if no lane is in
/// `ties`, and says whether it did.
#[inline]
#[target_feature(enable = "avx2")]
fn store_untied(words: __m256i, ties: u32, digits: &mut [u32; CHUNK]) -> bool {
    if ties != 0 {
        return false;
    }
    let digits_in_order = permute_words(words, NARROW_WORDS);
    // SAFETY: `digits` is 32 writable bytes; the store is unaligned.
    unsafe { _mm256_storeu_si256(digits.as_mut_ptr().cast(), digits_in_order) };
    true
}

/// π(x) for every lane from its keys sorted, as [`forward_small`] does, with narrow keys
/// ([`NarrowLayout`]) for every full chunk. A tie of their fewer leading bits (about 2⁻²⁵ a
/// lane and step at radix 10), or any two keys that may tie ([`KeyLayout::narrow_tie_gap`]:
/// below 45·2⁻²⁷ at radix 10), is settled by a compare in full, a branch on the keys: the
/// constant-time selection keeps 64-bit keys.
#[target_feature(enable = "avx2")]
fn forward_narrow<const N: usize>(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    select_narrow::<N, true>(blocks, work, digits);
}

/// π⁻¹ with narrow keys ([`NarrowLayout`]) for every full chunk: each lane's pivot picked with
/// masks from every key, then the keys up to it counted. A tie of their fewer leading bits is
/// ranked in full, a branch on the keys: the constant-time selection keeps 64-bit keys
/// ([`inverse_constant_time_avx2`]).
#[target_feature(enable = "avx2")]
fn inverse_narrow<const N: usize>(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    select_narrow::<N, false>(blocks, work, digits);
}

/// [`forward_narrow`] if `FORWARD`, else [`inverse_narrow`]: [`narrow_chunk`] for every full
/// chunk, the 64-bit passes for a last chunk of fewer lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn select_narrow<const N: usize, const FORWARD: bool>(
    blocks: &Blocks<'_>,
    work: Work<'_>,
    digits: &mut [u32],
) {
    debug_assert_eq!(N, blocks.layout.n as usize);
    let narrow = NarrowLayout::new(&blocks.layout);
    let full = blocks.lanes / CHUNK * CHUNK;
    let (whole, rest) = digits[..blocks.lanes].split_at_mut(full);
    let rows = work.rows();
    for (chunk, digits) in whole.as_chunks_mut::<CHUNK>().0.iter_mut().enumerate() {
        narrow_chunk::<N, FORWARD>(blocks, &narrow, chunk * CHUNK, digits, rows);
    }
    match (rest.is_empty(), FORWARD) {
        (true, _) => {}
        (false, true) => forward_small_chunk::<N>(blocks, rows, full, rest),
        (false, false) => inverse_constant_time_chunk(blocks, rows, full, rest),
    }
}

/// π(x) if `FORWARD`, else π⁻¹, for the full chunk of lanes from `first` on, by its narrow keys
/// ([`NarrowLayout`]), one vector a value in the lane order [`NARROW_LANES`]: from the made
/// keys if there are any, else from the keystream (each lane's four leading bytes of a value
/// loaded from its first byte, or where they run into the next block, both blocks' words
/// shifted together; the eight lanes' words packed into one vector and byte-swapped to
/// big-endian). `rows` is spare room for a tie's keys in full.
#[target_feature(enable = "avx2")]
fn narrow_chunk<const N: usize, const FORWARD: bool>(
    blocks: &Blocks<'_>,
    narrow: &NarrowLayout,
    first: usize,
    digits: &mut [u32; CHUNK],
    rows: &mut [[u64; CHUNK]],
) {
    let mut keys = [_mm256_setzero_si256(); SMALL_RADIX];
    if let Some(made) = blocks.keys {
        let made_rows = made.chunks_exact(blocks.lanes);
        for (k, (key, row)) in keys.iter_mut().zip(made_rows).enumerate().take(N) {
            let [low, high] = load(&row[first..]);
            // The high words of lanes 0, 1, 4, 5, 2, 3, 6, 7, then in the order NARROW_LANES.
            let words = _mm256_castps_si256(_mm256_shuffle_ps::<0b11_01_11_01>(
                _mm256_castsi256_ps(low),
                _mm256_castsi256_ps(high),
            ));
            *key = narrow.key(permute_words(words, [0, 4, 2, 6, 1, 5, 3, 7]), k);
        }
    } else {
        let swap = _mm256_setr_epi8(
            3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10,
            9, 8, 15, 14, 13, 12,
        );
        // From byte `at` of row `j`'s blocks on: each lane's bytes `at` to `at + 4` in the
        // first word of its half.
        macro_rules! lines {
            ($j:expr, $at:expr) => {
                chunk_lines!(blocks, first, $j, $at)
            };
        }
        // Unpacking interleaves the lanes as `NARROW_LANES`.
        macro_rules! pack {
            ($v:expr) => {{
                let v: [__m256i; 4] = $v;
                _mm256_unpacklo_epi64(
                    _mm256_unpacklo_epi32(v[0], v[1]),
                    _mm256_unpacklo_epi32(v[2], v[3]),
                )
            }};
        }
        for (k, key) in keys.iter_mut().enumerate().take(N) {
            let offset = k * blocks.layout.bytes_per_value();
            let (block, byte) = (offset / 16, offset % 16);
            let words = if byte <= 12 {
                pack!(lines!(block, byte))
            } else {
                // Bytes 12 to 16 of the block and 0 to 4 of the next, as one little-endian
                // word, shifted down to the value's first byte.
                let (high, low) = (lines!(block, 12), lines!(block + 1, 0));
                let shift = _mm_cvtsi64_si128(8 * (byte as i64 - 12));
                let join =
                    |i: usize| _mm256_srl_epi64(_mm256_unpacklo_epi32(high[i], low[i]), shift);
                pack!([join(0), join(1), join(2), join(3)])
            };
            *key = narrow.key(_mm256_shuffle_epi8(words, swap), k);
        }
    }
    let x = permute_words(load_words(digits), NARROW_LANES);
    if FORWARD {
        sort16!(&mut keys, below N, |a, b| (_mm256_min_epu32(a, b), _mm256_max_epu32(a, b)));
        let mut found = _mm256_setzero_si256();
        for (rank, &key) in keys[..N].iter().enumerate() {
            let here = _mm256_cmpeq_epi32(x, _mm256_set1_epi32(rank as i32));
            found = _mm256_blendv_epi8(found, key, here);
        }
        let ties = narrow.sorted_ties(&keys[..N]);
        let index = _mm256_and_si256(found, narrow.index_mask);
        if store_untied(index, ties, digits) {
            return;
        }
        let found = words_of(permute_words(found, NARROW_WORDS)).map(u64::from);
        found_digits(
            blocks,
            first,
            (found, ties),
            rows.as_flattened_mut(),
            digits,
        );
    } else {
        let mut pivot = _mm256_setzero_si256();
        for (k, &key) in keys[..N].iter().enumerate() {
            let hit = _mm256_cmpeq_epi32(x, _mm256_set1_epi32(k as i32));
            pivot = _mm256_blendv_epi8(pivot, key, hit);
        }
        // Keys differ in their index bits, so the keys up to the pivot are those below it and
        // the pivot itself.
        let mut up_to = _mm256_set1_epi32(-1);
        for &key in &keys[..N] {
            let at_most = _mm256_cmpeq_epi32(_mm256_min_epu32(key, pivot), key);
            up_to = _mm256_sub_epi32(up_to, at_most);
        }
        let ties = narrow.ties(&keys[..N], pivot);
        if store_untied(up_to, ties, digits) {
            return;
        }
        let below = words_of(permute_words(up_to, NARROW_WORDS));
        counted_digits(blocks, first, (&below, ties), digits);
    }
}

/// The rows of the [`CHUNK`] lanes from `first` on, `count` of which exist, into `rows`.
#[target_feature(enable = "avx2")]
fn make_rows(blocks: &Blocks<'_>, first: usize, count: usize, rows: &mut [[u64; CHUNK]]) {
    each_row(blocks, first, count, |k, keys| store(&mut rows[k], keys));
}

/// Calls `f(k, keys)` for each value `k` of the [`CHUNK`] lanes from `first` on, `count` of
/// which exist, with the value's keys in lane order (a chunk of fewer lanes than [`CHUNK`] made
/// by the portable code, the missing lanes' keys `u64::MAX`).
///
/// Eight lanes' 8 leading bytes of the value are loaded as four vectors, their first or second
/// words picked into two vectors and byte-swapped to big-endian. A value whose leading bytes lie
/// inside one block is loaded from its first byte; one that runs into the next block takes
/// both blocks' words, shifted together (as `avx512::make_rows` does for every value).
#[inline]
#[target_feature(enable = "avx2")]
fn each_row(blocks: &Blocks<'_>, first: usize, count: usize, mut f: impl FnMut(usize, Row)) {
    let n = blocks.layout.n as usize;
    if let (Some(keys), CHUNK) = (blocks.keys, count) {
        for (k, row) in keys.chunks_exact(blocks.lanes).take(n).enumerate() {
            f(k, load(&row[first..]));
        }
        return;
    }
    if count < CHUNK {
        let mut row = [0; CHUNK];
        for k in 0..n {
            blocks.chunk_row(k, first, count, &mut row);
            f(k, load(&row));
        }
        return;
    }
    let swap = _mm256_set_epi64x(
        0x0809_0a0b_0c0d_0e0f,
        0x0001_0203_0405_0607,
        0x0809_0a0b_0c0d_0e0f,
        0x0001_0203_0405_0607,
    );
    let value_mask = _mm256_set1_epi64x(blocks.layout.value_mask() as i64);
    // Macros, not closures: a build with many codegen units may leave a closure a call of its
    // own, with its vectors passed through memory.
    macro_rules! lines {
        ($j:expr) => {
            lines!($j, 0)
        };
        // From byte `$at` of each lane's block on: a load's first word is then bytes `$at` to
        // `$at + 8` of its first lane's block, and its third those of the next lane's.
        ($j:expr, $at:expr) => {
            chunk_lines!(blocks, first, $j, $at)
        };
    }
    // Unpacking interleaves the lanes as 0, 2, 1, 3; the permutation puts them back in order.
    macro_rules! pick {
        ($a:expr, $b:expr, $second:expr) => {{
            let words = if $second {
                _mm256_unpackhi_epi64($a, $b)
            } else {
                _mm256_unpacklo_epi64($a, $b)
            };
            _mm256_shuffle_epi8(_mm256_permute4x64_epi64::<0b11_01_10_00>(words), swap)
        }};
    }
    macro_rules! half {
        ($lines:expr, $second:expr) => {{
            let l: [__m256i; 4] = $lines;
            [pick!(l[0], l[1], $second), pick!(l[2], l[3], $second)]
        }};
    }
    for k in 0..n {
        let (block, byte) = lead_at(&blocks.layout, k);
        let lead: Row = match byte {
            0 => half!(lines!(block), false),
            // Within the block: loaded from the value's first byte, no shift.
            1..=8 => half!(lines!(block, byte), false),
            _ => {
                let (high, low) = (half!(lines!(block), true), half!(lines!(block + 1), false));
                let shift = 8 * (byte % 8) as i64;
                let (up, down) = (_mm_cvtsi64_si128(shift), _mm_cvtsi64_si128(64 - shift));
                let join = |h: usize| {
                    _mm256_or_si256(
                        _mm256_sll_epi64(high[h], up),
                        _mm256_srl_epi64(low[h], down),
                    )
                };
                [join(0), join(1)]
            }
        };
        let index = _mm256_set1_epi64x(k as i64);
        let key = |lead| _mm256_or_si256(_mm256_and_si256(lead, value_mask), index);
        f(k, [key(lead[0]), key(lead[1])]);
    }
}

/// π(x) for every lane above radix [`SMALL_RADIX`] without a branch or an address that depends
/// on the keys or the digits (save the rare exceptions `Selection::ConstantTime` gives): up to
/// radix 256 the key of rank x searched for bit by bit over the leading octets, 32 keys to a
/// compare, and ranked among the keys that share them ([`search_octets_constant_time`]);
/// sixteen keys to a compare over all bits above ([`search_chunk`]).
#[target_feature(enable = "avx2")]
fn forward_constant_time_avx2(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    let chunks = digits[..blocks.lanes].chunks_mut(CHUNK).enumerate();
    if blocks.layout.n as usize <= OCTET_MAX_RADIX {
        let quads = work.quads();
        for (chunk, digits) in chunks {
            let first = chunk * CHUNK;
            let found = search_octets_constant_time(blocks, quads, first, digits);
            found_digits(blocks, first, found, quads.as_flattened_mut(), digits);
        }
    } else {
        let pairs = work.pairs();
        for (chunk, digits) in chunks {
            let first = chunk * CHUNK;
            let found = search_chunk(blocks, pairs, first, digits);
            found_digits(blocks, first, found, pairs.as_flattened_mut(), digits);
        }
    }
}

/// Each lane's key of rank x of the chunk of lanes from `first` on, and the lanes whose key ties
/// another's leading bits, up to radix [`OCTET_MAX_RADIX`]: [`search_gathered`], or where more
/// keys share the leading octets than it gathers, [`search_octets`].
#[inline]
#[target_feature(enable = "avx2")]
fn search_octets_constant_time(
    blocks: &Blocks<'_>,
    quads: &mut [[u64; 4 * CHUNK]],
    first: usize,
    digits: &[u32],
) -> ([u64; CHUNK], u32) {
    search_gathered(blocks, quads, first, digits)
        .unwrap_or_else(|| search_octets(blocks, quads, first, digits))
}

/// Largest radix of [`search_octets`]: its counts are bytes (a byte counts the keys of one
/// lane in every fourth row, at most 64), and a key's index lies in its last octet.
const OCTET_MAX_RADIX: usize = 256;

/// Largest radix of the fast passes ([`Avx2::forward`] and [`Avx2::inverse`]): that of their
/// octet search above radix 16.
pub(super) const FAST_MAX_RADIX: u32 = OCTET_MAX_RADIX as u32;

/// The lane of each 32-bit word of an octet vector (as [`store_octets`] leaves them; the order is
/// its own inverse, so it also gives each lane's word).
const OCTET_LANES: [usize; CHUNK] = [0, 1, 4, 5, 2, 3, 6, 7];

/// [`search_chunk`] up to radix [`OCTET_MAX_RADIX`], over the keys' eight octets instead of
/// their quarters: thirty-two keys to a compare instead of sixteen.
///
/// Keys are kept four rows to a vector ([`Work::quads`]): vector `o` of quad `q` holds octet
/// `o` (from the top, sign-flipped) of rows `4q` to `4q + 3`, one 32-bit word per lane
/// ([`OCTET_LANES`]) and a byte per row. The search runs as over quarters, a bit a pass; a
/// pass's byte counts are summed per lane into its word.
#[target_feature(enable = "avx2")]
fn search_octets(
    blocks: &Blocks<'_>,
    quads: &mut [[u64; 4 * CHUNK]],
    first: usize,
    digits: &[u32],
) -> ([u64; CHUNK], u32) {
    let n = blocks.layout.n as usize;
    let zero = _mm256_setzero_si256();
    let sign = _mm256_set1_epi8(i8::MIN);
    fill_octets::<OCTETS>(blocks, quads, first, digits.len());
    let x = octet_digits(digits);

    // As in `search_chunk`: the last octet's index bits are not searched for unless keys are
    // exact (n ≤ 256: the index fits in that octet).
    let exact = blocks.layout.exact();
    let index_bits = if exact { 0 } else { blocks.layout.index_bits() };
    let mut under = zero;
    let mut found = [zero; OCTETS];
    for (o, found) in found.iter_mut().enumerate() {
        let lowest = if o == 7 { index_bits } else { 0 };
        *found = largest_octet_at_most(quads, o, lowest, under, x);
        if o == 7 {
            break;
        }
        let (below, _) = narrow(quads, o, *found, true);
        under = _mm256_add_epi32(under, per_lane(below));
    }

    // The keys sharing the found leading bits, and the answer's index (as in `search_chunk`).
    let mut ties = 0;
    let mut index = zero;
    if !exact {
        let outside = _mm256_set1_epi8(!(blocks.layout.index_mask() as u8) as i8);
        // The padding rows of the last quad share all-ones leading bits, so they are masked out.
        let last = n.div_ceil(4) - 1;
        let real = real_rows(n);
        let mut same = zero;
        for (q, quad) in quads.iter().enumerate() {
            let this = load_vector(quad, 7);
            let differ = _mm256_and_si256(_mm256_xor_si256(this, found[7]), outside);
            let lead = _mm256_and_si256(_mm256_cmpeq_epi8(differ, zero), load_vector(quad, 6));
            let lead = if q == last {
                _mm256_and_si256(lead, real)
            } else {
                lead
            };
            same = _mm256_sub_epi8(same, lead);
            let unflipped = _mm256_xor_si256(this, sign);
            index = _mm256_or_si256(
                index,
                _mm256_andnot_si256(outside, _mm256_and_si256(lead, unflipped)),
            );
        }
        ties = lanes_clear(_mm256_cmpeq_epi32(per_lane(same), _mm256_set1_epi32(1)));
    }
    (found_keys(found, index), ties & !(u32::MAX << digits.len()))
}

/// Each lane's key from its octets as the octet searches find them (per lane, in its word, the
/// value four times over, sign-flipped) and, in one byte of its word, its index.
#[inline]
#[target_feature(enable = "avx2")]
fn found_keys(found: [__m256i; OCTETS], index: __m256i) -> [u64; CHUNK] {
    let sign = _mm256_set1_epi8(i8::MIN);
    let octets = found.map(|octet| words_of(_mm256_xor_si256(octet, sign)));
    let index = words_of(index);
    core::array::from_fn(|l| {
        let p = OCTET_LANES[l];
        let lead = octets
            .iter()
            .fold(0, |key, octet| key << 8 | u64::from(octet[p] & 0xff));
        lead | u64::from(index[p].to_le_bytes().iter().fold(0, |i, b| i | b))
    })
}

/// The words of an octet vector (bit `p` for word `p`) whose lanes lie past the first `count`.
#[inline]
fn absent_words(count: usize) -> i32 {
    (0..CHUNK).fold(0, |absent, p| {
        absent | i32::from(OCTET_LANES[p] >= count) << p
    })
}

/// The lanes (bit `l` for lane `l`) whose word of `masks` (each all ones or zero) is zero.
#[inline]
#[target_feature(enable = "avx2")]
fn lanes_clear(masks: __m256i) -> u32 {
    let clear = !_mm256_movemask_ps(_mm256_castsi256_ps(masks)) as u32;
    (0..CHUNK).fold(0, |lanes, p| lanes | (clear >> p & 1) << OCTET_LANES[p])
}

/// Keys of a lane [`gather`] keeps: one quad, a byte each in the lane's word.
const GATHERED: usize = 4;

/// Largest radix at which [`search_gathered`] gathers after two leading octets rather than
/// three. Five of n keys share two octets with probability below C(n, 5)·2^-64 per step
/// (2^-51 at radix 17, 2^-46 at 32, 2^-41 at 64): within the bound of the other exception
/// `Selection::ConstantTime` has, a tie of leading bits, at radix 256 (2^-40). Three octets
/// make it C(n, 5)·2^-96 (2^-62 at radix 256) and cost eight more passes.
pub(super) const GATHER_AFTER_TWO_MAX_RADIX: usize = 64;

/// [`search_octets`] with the same branches and addresses whatever the keys, as long as at
/// most [`GATHERED`] keys of each lane share its answer's `LEAD` leading octets (2 up to radix
/// [`GATHER_AFTER_TWO_MAX_RADIX`], else 3), else `None`: the leading octets are searched for
/// over all keys, then the keys that share them are gathered into one quad ([`gather`]) and
/// ranked there ([`settle_gathered`]).
#[target_feature(enable = "avx2")]
fn search_gathered(
    blocks: &Blocks<'_>,
    quads: &mut [[u64; 4 * CHUNK]],
    first: usize,
    digits: &[u32],
) -> Option<([u64; CHUNK], u32)> {
    if blocks.layout.n as usize <= GATHER_AFTER_TWO_MAX_RADIX {
        search_gathered_after::<2>(blocks, quads, first, digits)
    } else {
        search_gathered_after::<3>(blocks, quads, first, digits)
    }
}

/// [`search_gathered`] after `LEAD` leading octets.
#[inline]
#[target_feature(enable = "avx2")]
fn search_gathered_after<const LEAD: usize>(
    blocks: &Blocks<'_>,
    quads: &mut [[u64; 4 * CHUNK]],
    first: usize,
    digits: &[u32],
) -> Option<([u64; CHUNK], u32)> {
    fill_octets::<OCTETS>(blocks, quads, first, digits.len());
    let zero = _mm256_setzero_si256();
    let x = octet_digits(digits);
    let (mut found, mut under) = ([zero; OCTETS], zero);
    for (o, found) in found.iter_mut().enumerate().take(LEAD) {
        *found = largest_octet_at_most(quads, o, 0, under, x);
        let (below, _) = narrow(quads, o, *found, o + 1 < LEAD);
        under = _mm256_add_epi32(under, per_lane(below));
    }
    let (gathered, count) = gather::<LEAD>(quads, real_rows(blocks.layout.n as usize));
    // Lanes past the chunk's end, whose keys all tie, do not count.
    let absent = absent_words(digits.len());
    let over = _mm256_cmpgt_epi32(count, _mm256_set1_epi32(GATHERED as i32));
    if _mm256_movemask_ps(_mm256_castsi256_ps(over)) & !absent != 0 {
        return None;
    }
    let (found, ties) = settle_gathered::<LEAD>(&blocks.layout, &gathered, found, under, x);
    Some((found, ties & !(u32::MAX << digits.len())))
}

/// The keys marked in the octet `LEAD − 1` vectors of `quads` (`real` masking the last quad's
/// padding rows), gathered into one quad of the same layout: a lane's `s`-th marked key (in
/// row order) into byte `s` of its words, its octets from `LEAD` on (the marks' vector then
/// marks the bytes filled, the others hold the largest octets). Also returns each lane's count
/// of marked keys (in its word, at most 255); keys past the first [`GATHERED`] are left out.
///
/// A quad's marked keys go to their bytes by one shuffle for all its octets: each byte of the
/// destination picks the row whose slot (marked keys before it) is the byte's place.
#[inline]
#[target_feature(enable = "avx2")]
fn gather<const LEAD: usize>(
    quads: &[[u64; 4 * CHUNK]],
    real: __m256i,
) -> ([u64; 4 * CHUNK], __m256i) {
    let zero = _mm256_setzero_si256();
    // Byte r of every word is r; `source[r]` spreads byte r of each word over the word.
    let place = _mm256_set1_epi32(0x0302_0100);
    let source: [__m256i; 4] = core::array::from_fn(|r| word_shuffle(|_| r));
    let out_of_range = _mm256_set1_epi8(0x40);
    let mut before = zero;
    let mut kept = [zero; OCTETS];
    for (q, quad) in quads.iter().enumerate() {
        let marks = load_vector(quad, LEAD - 1);
        let marks = if q == quads.len() - 1 {
            _mm256_and_si256(marks, real)
        } else {
            marks
        };
        // Marked keys up to each row of the word (bytes of 0 or 1 summed upwards).
        let ones = _mm256_sub_epi8(zero, marks);
        let upto = _mm256_add_epi8(ones, _mm256_slli_epi32::<8>(ones));
        let upto = _mm256_add_epi8(upto, _mm256_slli_epi32::<16>(upto));
        // Counts saturate, so that a slot past the first few never wraps round into them.
        let slot = _mm256_adds_epu8(_mm256_sub_epi8(upto, ones), before);
        let slot = _mm256_or_si256(slot, _mm256_andnot_si256(marks, out_of_range));
        let mut pick = _mm256_set1_epi8(i8::MIN);
        for source in source {
            let hit = _mm256_cmpeq_epi8(_mm256_shuffle_epi8(slot, source), place);
            pick = _mm256_blendv_epi8(pick, source, hit);
        }
        for (o, kept) in kept.iter_mut().enumerate().skip(LEAD) {
            let octets = load_vector(quad, o);
            *kept = _mm256_or_si256(*kept, _mm256_shuffle_epi8(octets, pick));
        }
        before = _mm256_adds_epu8(before, _mm256_shuffle_epi8(upto, source[3]));
    }
    let count = _mm256_and_si256(before, _mm256_set1_epi32(0xff));
    let filled = _mm256_cmpgt_epi8(
        _mm256_min_epu8(before, _mm256_set1_epi8(GATHERED as i8)),
        place,
    );
    let mut gathered = [0u64; 4 * CHUNK];
    store_vector(&mut gathered, LEAD - 1, filled);
    let largest = _mm256_set1_epi8(i8::MAX);
    for (o, kept) in kept.into_iter().enumerate().skip(LEAD) {
        store_vector(&mut gathered, o, _mm256_blendv_epi8(largest, kept, filled));
    }
    (gathered, count)
}

/// The mask of the real rows of the last quad of radix `n` (the others pad it).
#[inline]
#[target_feature(enable = "avx2")]
fn real_rows(n: usize) -> __m256i {
    _mm256_set1_epi32((u32::MAX >> (8 * ((4 - n % 4) % 4))) as i32)
}

/// The search of [`search_gathered`] over the keys it gathered (octets `LEAD` on, `filled`
/// marking the bytes that hold keys): each key ranked against the others by a compare of all
/// its octets with theirs, for each of the three turns of its word, rather than a pass a bit.
/// `found` holds the leading octets, `under` counts each lane's keys below the gathered ones.
/// Each lane's key of rank `x` and the lanes where another key ties its leading bits.
#[inline]
#[target_feature(enable = "avx2")]
fn settle_gathered<const LEAD: usize>(
    layout: &KeyLayout,
    gathered: &[u64; 4 * CHUNK],
    mut found: [__m256i; OCTETS],
    under: __m256i,
    x: __m256i,
) -> ([u64; CHUNK], u32) {
    let zero = _mm256_setzero_si256();
    let octets: [__m256i; OCTETS] = core::array::from_fn(|o| load_vector(gathered, o));
    let filled = octets[LEAD - 1];
    // Ties are of the bits above the index (and none if keys are exact).
    let outside = _mm256_set1_epi8(!(layout.index_mask() as u8) as i8);
    let (mut rank, mut tied) = (zero, zero);
    for d in 1..4 {
        let turn = word_shuffle(|s| (s + d) % 4);
        let other = octets.map(|v| _mm256_shuffle_epi8(v, turn));
        let mut below = _mm256_cmpgt_epi8(octets[7], other[7]);
        let mut same = _mm256_cmpeq_epi8(
            _mm256_and_si256(octets[7], outside),
            _mm256_and_si256(other[7], outside),
        );
        same = _mm256_and_si256(same, _mm256_shuffle_epi8(filled, turn));
        for o in (LEAD..7).rev() {
            let equal = _mm256_cmpeq_epi8(octets[o], other[o]);
            below = _mm256_or_si256(
                _mm256_cmpgt_epi8(octets[o], other[o]),
                _mm256_and_si256(equal, below),
            );
            same = _mm256_and_si256(same, equal);
        }
        rank = _mm256_sub_epi8(rank, below);
        tied = _mm256_or_si256(tied, same);
    }
    // The gathered keys' ranks are below four: the rank looked for is in a word's first byte.
    let wanted = _mm256_shuffle_epi8(_mm256_sub_epi32(x, under), word_shuffle(|_| 0));
    let answer = _mm256_and_si256(_mm256_cmpeq_epi8(rank, wanted), filled);
    for (o, found) in found.iter_mut().enumerate().skip(LEAD) {
        // The answer's octet, in one byte of the word, spread over the word.
        let octet = _mm256_and_si256(octets[o], answer);
        let octet = _mm256_or_si256(
            octet,
            _mm256_shuffle_epi8(octet, word_shuffle(|s| (s + 1) % 4)),
        );
        *found = _mm256_or_si256(
            octet,
            _mm256_shuffle_epi8(octet, word_shuffle(|s| (s + 2) % 4)),
        );
    }
    let ties = if layout.exact() {
        0
    } else {
        lanes_clear(_mm256_cmpeq_epi32(_mm256_and_si256(tied, answer), zero))
    };
    (found_keys(found, zero), ties)
}

/// The shuffle of each word's bytes that gives byte `s` byte `source(s)` of the same word.
#[inline]
#[target_feature(enable = "avx2")]
fn word_shuffle(source: impl Fn(usize) -> usize) -> __m256i {
    let word = |w: usize| i32::from_le_bytes(core::array::from_fn(|s| (4 * w + source(s)) as u8));
    _mm256_setr_epi32(
        word(0),
        word(1),
        word(2),
        word(3),
        word(0),
        word(1),
        word(2),
        word(3),
    )
}

/// Octets of keys searched: all eight ([`search_octets`]) or the leading [`LEAD_OCTETS`]
/// ([`lead_octets`]).
const OCTETS: usize = 8;

/// The first `O` octet vectors of each quad of the [`CHUNK`] lanes from `first` on, `count`
/// of which exist, into `quads` (see [`search_octets`]).
#[inline]
#[target_feature(enable = "avx2")]
fn fill_octets<const O: usize>(
    blocks: &Blocks<'_>,
    quads: &mut [[u64; 4 * CHUNK]],
    first: usize,
    count: usize,
) {
    let n = blocks.layout.n as usize;
    let ones = _mm256_set1_epi8(-1);
    // Rows wait here until a quad is whole; past the last row, u64::MAX: the largest octets.
    let mut rows: [Row; 4] = [[ones; 2]; 4];
    each_row(blocks, first, count, |k, keys| {
        rows[k % 4] = keys;
        if k % 4 == 3 {
            store_octets::<O>(&mut quads[k / 4], &rows);
        }
    });
    if !n.is_multiple_of(4) {
        rows[n % 4..].fill([ones; 2]);
        store_octets::<O>(&mut quads[n / 4], &rows);
    }
}

/// Each lane's digit in its word of an octet vector (lanes past `digits` x = 0).
#[inline]
#[target_feature(enable = "avx2")]
fn octet_digits(digits: &[u32]) -> __m256i {
    let x: [u32; CHUNK] = core::array::from_fn(|p| digits.get(OCTET_LANES[p]).map_or(0, |&d| d));
    load_words(&x)
}

/// One step of the octet search, once octet `o`'s value `found` is known (per lane, as
/// [`largest_octet_at_most`] returns it): the keys that lie below by octet `o` are counted
/// (per byte); those that share it (and the octets before) stay in the search, their mask
/// replacing octet `o`, and the others leave it, their octet `o + 1` made the largest (if
/// `next`). Also returns how many keys share the leading octets (per byte).
#[inline]
#[target_feature(enable = "avx2")]
fn narrow(
    quads: &mut [[u64; 4 * CHUNK]],
    o: usize,
    found: __m256i,
    next: bool,
) -> (__m256i, __m256i) {
    let largest = _mm256_set1_epi8(i8::MAX);
    let (mut below, mut sharing) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for quad in quads.iter_mut() {
        let this = load_vector(quad, o);
        let still = if o == 0 {
            _mm256_set1_epi8(-1)
        } else {
            load_vector(quad, o - 1)
        };
        let same = _mm256_and_si256(_mm256_cmpeq_epi8(this, found), still);
        below = _mm256_sub_epi8(below, _mm256_cmpgt_epi8(found, this));
        sharing = _mm256_sub_epi8(sharing, same);
        store_vector(quad, o, same);
        if next {
            let next = load_vector(quad, o + 1);
            store_vector(quad, o + 1, _mm256_blendv_epi8(largest, next, same));
        }
    }
    (below, sharing)
}

/// Leading octets [`lead_octets`] searches.
const LEAD_OCTETS: usize = 2;

/// Fast π(x) for the [`CHUNK`] lanes from `first` on, one digit x each in `digits`, radix
/// above [`SMALL_RADIX`]: [`search_octets`] over the keys' [`LEAD_OCTETS`] leading octets
/// only, which suffice once every lane's key of rank x is the one key with its leading octets
/// (for a chunk of eight lanes at radix 100, 80 chunks in 81). Then each lane's key's index
/// (its row) is returned, else `None`.
#[target_feature(enable = "avx2")]
fn lead_octets(
    blocks: &Blocks<'_>,
    quads: &mut [[u64; 4 * CHUNK]],
    first: usize,
    digits: &[u32],
) -> Option<[u32; CHUNK]> {
    fill_octets::<LEAD_OCTETS>(blocks, quads, first, digits.len());
    let x = octet_digits(digits);
    // Lanes past the chunk's end, whose keys all tie, are not waited for.
    let absent = absent_words(digits.len());
    let mut under = _mm256_setzero_si256();
    for o in 0..LEAD_OCTETS {
        let found = largest_octet_at_most(quads, o, 0, under, x);
        let (below, sharing) = narrow(quads, o, found, o + 1 < LEAD_OCTETS);
        let alone = _mm256_cmpeq_epi32(per_lane(sharing), _mm256_set1_epi32(1));
        if _mm256_movemask_ps(_mm256_castsi256_ps(alone)) | absent == 0xff {
            // Each lane's one key sharing the found octets has its byte of the lane's word
            // (row 4q + r: quad q, byte r) set in the mask of octet `o`.
            let mut rows = _mm256_setzero_si256();
            let mut row = _mm256_set1_epi32(0x0302_0100);
            for quad in quads.iter() {
                rows = _mm256_or_si256(rows, _mm256_and_si256(load_vector(quad, o), row));
                row = _mm256_add_epi8(row, _mm256_set1_epi8(4));
            }
            let words = words_of(per_lane(rows));
            return Some(core::array::from_fn(|l| words[OCTET_LANES[l]]));
        }
        under = _mm256_add_epi32(under, per_lane(below));
    }
    None
}

/// The first `O` of the eight octet vectors of four rows of keys (see [`search_octets`]),
/// sign-flipped.
#[inline]
#[target_feature(enable = "avx2")]
fn store_octets<const O: usize>(quad: &mut [u64; 4 * CHUNK], rows: &[Row; 4]) {
    // Per half of the chunk (lanes 0–3, 4–7): rows 0 and 1 (2 and 3) interleaved byte by byte,
    // then those pairs interleaved, so that word j of `even[0]` holds byte j of rows 0–3 of
    // lanes 0 | 2 (4 | 6), `even[1]` bytes 4–7, and `odd` the same of lanes 1 | 3 (5 | 7).
    let words = |h: usize| {
        let (a, b) = (
            _mm256_unpacklo_epi8(rows[0][h], rows[1][h]),
            _mm256_unpacklo_epi8(rows[2][h], rows[3][h]),
        );
        let (c, d) = (
            _mm256_unpackhi_epi8(rows[0][h], rows[1][h]),
            _mm256_unpackhi_epi8(rows[2][h], rows[3][h]),
        );
        let even = [_mm256_unpacklo_epi16(a, b), _mm256_unpackhi_epi16(a, b)];
        let odd = [_mm256_unpacklo_epi16(c, d), _mm256_unpackhi_epi16(c, d)];
        (even, odd)
    };
    let ((low_even, low_odd), (high_even, high_odd)) = (words(0), words(1));
    // Then words of the same byte of all eight lanes together: bytes 4i to 4i + 3.
    let bytes = |i: usize| {
        let (p, q) = (
            _mm256_unpacklo_epi32(low_even[i], low_odd[i]),
            _mm256_unpacklo_epi32(high_even[i], high_odd[i]),
        );
        let (r, t) = (
            _mm256_unpackhi_epi32(low_even[i], low_odd[i]),
            _mm256_unpackhi_epi32(high_even[i], high_odd[i]),
        );
        [
            _mm256_unpacklo_epi64(p, q),
            _mm256_unpackhi_epi64(p, q),
            _mm256_unpacklo_epi64(r, t),
            _mm256_unpackhi_epi64(r, t),
        ]
    };
    let ([b0, b1, b2, b3], [b4, b5, b6, b7]) = (bytes(0), bytes(1));
    let sign = _mm256_set1_epi8(i8::MIN);
    // Octet 0 is the top byte of a (little-endian) key.
    for (o, octet) in [b7, b6, b5, b4, b3, b2, b1, b0]
        .into_iter()
        .enumerate()
        .take(O)
    {
        store_vector(quad, o, _mm256_xor_si256(octet, sign));
    }
}

/// Each lane's sum of the four byte counts of its word.
#[inline]
#[target_feature(enable = "avx2")]
fn per_lane(counts: __m256i) -> __m256i {
    let pairs = _mm256_maddubs_epi16(counts, _mm256_set1_epi8(1));
    _mm256_madd_epi16(pairs, _mm256_set1_epi16(1))
}

/// [`largest_at_most`] over octet vectors: per lane (in its word, the value four times over)
/// the largest byte, sign-flipped, with its bits below `lowest` clear and at most `x` of the
/// octets `o` of `quads` below it, `under` more counted below.
#[inline]
#[target_feature(enable = "avx2")]
fn largest_octet_at_most(
    quads: &[[u64; 4 * CHUNK]],
    o: usize,
    lowest: u32,
    under: __m256i,
    x: __m256i,
) -> __m256i {
    let zero = _mm256_setzero_si256();
    let sign = _mm256_set1_epi8(i8::MIN);
    let mut found = zero;
    for bit in (lowest..8).rev() {
        let candidate = _mm256_or_si256(found, _mm256_set1_epi8((1u8 << bit) as i8));
        let flipped = _mm256_xor_si256(candidate, sign);
        let mut below = [zero; 4];
        let (fours, rest) = quads.as_chunks::<4>();
        for four in fours {
            for (below, quad) in below.iter_mut().zip(four) {
                let less = _mm256_cmpgt_epi8(flipped, load_vector(quad, o));
                *below = _mm256_sub_epi8(*below, less);
            }
        }
        for quad in rest {
            let less = _mm256_cmpgt_epi8(flipped, load_vector(quad, o));
            below[0] = _mm256_sub_epi8(below[0], less);
        }
        let below = _mm256_add_epi8(
            _mm256_add_epi8(below[0], below[1]),
            _mm256_add_epi8(below[2], below[3]),
        );
        let below = _mm256_add_epi32(per_lane(below), under);
        found = _mm256_blendv_epi8(candidate, found, _mm256_cmpgt_epi32(below, x));
    }
    _mm256_xor_si256(found, sign)
}

/// Vector `v` of a run of words.
#[inline]
#[target_feature(enable = "avx2")]
fn load_vector<const N: usize>(words: &[u64; N], v: usize) -> __m256i {
    let (vectors, _) = words.as_chunks::<4>();
    // SAFETY: a vector is 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(vectors[v].as_ptr().cast()) }
}

/// Stores vector `v` of a run of words.
#[inline]
#[target_feature(enable = "avx2")]
fn store_vector<const N: usize>(words: &mut [u64; N], v: usize, value: __m256i) {
    let (vectors, _) = words.as_chunks_mut::<4>();
    store4(&mut vectors[v], value);
}

/// A vector's eight 32-bit words.
#[inline]
#[target_feature(enable = "avx2")]
fn words_of(v: __m256i) -> [u32; CHUNK] {
    let mut words = [0u32; CHUNK];
    // SAFETY: `words` is 32 writable bytes; the store is unaligned.
    unsafe { _mm256_storeu_si256(words.as_mut_ptr().cast(), v) };
    words
}

/// A vector's 32 bytes (one a lane of a plane chunk).
#[inline]
#[target_feature(enable = "avx2")]
fn bytes_of(v: __m256i) -> [u8; PLANE_LANES] {
    let mut bytes = [0u8; PLANE_LANES];
    // SAFETY: `bytes` is 32 writable bytes; the store is unaligned.
    unsafe { _mm256_storeu_si256(bytes.as_mut_ptr().cast(), v) };
    bytes
}

/// Eight 32-bit words as a vector.
#[inline]
#[target_feature(enable = "avx2")]
fn load_words(words: &[u32; CHUNK]) -> __m256i {
    // SAFETY: `words` is 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(words.as_ptr().cast()) }
}

/// For the lanes from `first` on, one digit x each in `digits`: each lane's key of rank x, and
/// the lanes (bit `l` for lane `l`) where another key shares that key's leading bits.
///
/// Keys are kept as four 16-bit quarters, sign-flipped, two rows to a vector ([`Work::pairs`]):
/// quarter `q` of rows `2p` and `2p + 1` of the eight lanes is vector `q` of pair `p`. Each
/// lane's key of rank x is then found a quarter at a time from the top: the quarter is searched
/// for among the keys that share the quarters found so far (the others made the largest
/// value, which never lies below a candidate), with the keys that lie below in an earlier
/// quarter counted as below.
#[target_feature(enable = "avx2")]
fn search_chunk(
    blocks: &Blocks<'_>,
    pairs: &mut [[u64; 2 * CHUNK]],
    first: usize,
    digits: &[u32],
) -> ([u64; CHUNK], u32) {
    let n = blocks.layout.n as usize;
    let (zero, ones) = (_mm256_setzero_si256(), _mm256_set1_epi8(-1));
    let largest = _mm256_set1_epi16(i16::MAX);
    let sign = _mm256_set1_epi16(i16::MIN);
    // A lane pair's u64s as their quarters, lowest first, each quarter's two lanes in a word.
    let quarters = _mm256_setr_epi8(
        0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15, 0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12,
        13, 6, 7, 14, 15,
    );
    // After unpacking, lane pairs stand as 01, 45, 01, 45, 23, 67, 23, 67.
    let in_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    // Each row as [quarter 1 | quarter 0] and [quarter 3 | quarter 2]; an even row waits for the
    // odd one after it, to be stored as whole vectors of the pair.
    let mut even = [_mm256_set1_epi16(i16::MAX); 2];
    let mut store_pair =
        |p: usize, [high, low]: [__m256i; 2], [next_high, next_low]: [__m256i; 2]| {
            let pair = &mut pairs[p];
            store_quarter(pair, 0, _mm256_permute2x128_si256::<0x31>(high, next_high));
            store_quarter(pair, 1, _mm256_permute2x128_si256::<0x20>(high, next_high));
            store_quarter(pair, 2, _mm256_permute2x128_si256::<0x31>(low, next_low));
            store_quarter(pair, 3, _mm256_permute2x128_si256::<0x20>(low, next_low));
        };
    each_row(blocks, first, digits.len(), |k, keys| {
        let (a, b) = (
            _mm256_shuffle_epi8(keys[0], quarters),
            _mm256_shuffle_epi8(keys[1], quarters),
        );
        let low = _mm256_permutevar8x32_epi32(_mm256_unpacklo_epi32(a, b), in_order);
        let high = _mm256_permutevar8x32_epi32(_mm256_unpackhi_epi32(a, b), in_order);
        let row = [_mm256_xor_si256(high, sign), _mm256_xor_si256(low, sign)];
        if k % 2 == 0 {
            even = row;
        } else {
            store_pair(k / 2, even, row);
        }
    });
    if n % 2 == 1 {
        // The last pair's second row: no key, the largest value in every quarter.
        store_pair(n / 2, even, [_mm256_set1_epi16(i16::MAX); 2]);
    }
    let x: [u16; 2 * CHUNK] =
        core::array::from_fn(|i| digits.get(i % CHUNK).map_or(0, |&d| d as u16));
    // SAFETY: `x` is 32 readable bytes; the load is unaligned.
    let x = unsafe { _mm256_loadu_si256(x.as_ptr().cast()) };

    // Unless keys are exact, the last quarter's index bits are not searched for: the found
    // leading bits are the answer's, and its index is that of the one key sharing them (if
    // another does, leading bits tie and the pick is made again in full anyway).
    let exact = blocks.layout.exact();
    let index_bits = if exact { 0 } else { blocks.layout.index_bits() };
    let mut under = zero;
    let mut found = [zero; 4];
    for (q, found) in found.iter_mut().enumerate() {
        let lowest = if q == 3 { index_bits } else { 0 };
        *found = largest_at_most(pairs, q, lowest, under, x);
        if q == 3 {
            break;
        }
        // Keys that lie below by this quarter are counted; those that share it (and all
        // before) stay in the search, their mask replacing this quarter; the others leave it.
        let mut below = zero;
        for pair in pairs.iter_mut() {
            let [this, next] = [q, q + 1].map(|q| load_quarter(pair, q));
            let still = if q == 0 {
                ones
            } else {
                load_quarter(pair, q - 1)
            };
            let same = _mm256_and_si256(_mm256_cmpeq_epi16(this, *found), still);
            below = _mm256_sub_epi16(below, _mm256_cmpgt_epi16(*found, this));
            store_quarter(pair, q, same);
            store_quarter(pair, q + 1, _mm256_blendv_epi8(largest, next, same));
        }
        under = _mm256_add_epi16(under, both_rows(below));
    }

    // The keys sharing the found leading bits: still in the search after three quarters, and
    // the same in the fourth outside the index; the answer's index is theirs if they are one.
    let mut ties = 0;
    if !exact {
        let outside = _mm256_set1_epi16(!(blocks.layout.index_mask() as u16) as i16);
        // The padding row of an odd radix shares all-ones leading bits, so it is masked out.
        let last = n.div_ceil(2) - 1;
        let real = if n % 2 == 1 {
            _mm256_setr_epi64x(-1, -1, 0, 0)
        } else {
            ones
        };
        let (mut same, mut index) = (zero, zero);
        for (p, pair) in pairs.iter().enumerate() {
            let this = load_quarter(pair, 3);
            let differ = _mm256_and_si256(_mm256_xor_si256(this, found[3]), outside);
            let lead = _mm256_and_si256(_mm256_cmpeq_epi16(differ, zero), load_quarter(pair, 2));
            let lead = if p == last {
                _mm256_and_si256(lead, real)
            } else {
                lead
            };
            same = _mm256_sub_epi16(same, lead);
            index = _mm256_or_si256(
                index,
                _mm256_andnot_si256(outside, _mm256_and_si256(lead, this)),
            );
        }
        let index = _mm256_or_si256(index, _mm256_permute2x128_si256::<0x01>(index, index));
        found[3] = _mm256_or_si256(found[3], index);
        let alone = _mm256_cmpeq_epi16(both_rows(same), _mm256_set1_epi16(1));
        // Two mask bits a lane; lanes 0–7 are the low half.
        let alone = _mm256_movemask_epi8(alone) as u32;
        ties = (0..CHUNK).fold(0, |ties, l| {
            ties | u32::from(alone >> (2 * l) & 1 == 0) << l
        });
    }
    let found = found.map(|quarter| {
        let mut lanes = [0u16; 2 * CHUNK];
        // SAFETY: `lanes` is 32 writable bytes; the store is unaligned.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), _mm256_xor_si256(quarter, sign)) }
        lanes
    });
    let found = core::array::from_fn(|l| {
        found
            .iter()
            .fold(0, |key, quarter| key << 16 | u64::from(quarter[l]))
    });
    (found, ties & !(u32::MAX << digits.len()))
}

/// Vector `q` of a pair: quarter `q` of its two rows.
#[inline]
#[target_feature(enable = "avx2")]
fn load_quarter(pair: &[u64; 2 * CHUNK], q: usize) -> __m256i {
    load_vector(pair, q)
}

/// Stores vector `q` of a pair.
#[inline]
#[target_feature(enable = "avx2")]
fn store_quarter(pair: &mut [u64; 2 * CHUNK], q: usize, v: __m256i) {
    store_vector(pair, q, v);
}

/// Per-lane sums of a vector of two rows' counts, in both halves.
#[inline]
#[target_feature(enable = "avx2")]
fn both_rows(counts: __m256i) -> __m256i {
    _mm256_add_epi16(counts, _mm256_permute2x128_si256::<0x01>(counts, counts))
}

/// For each lane, in both halves: the largest 16-bit value, sign-flipped, with its bits below
/// `lowest` clear and at most `x` of the quarters `q` of `pairs` below it, `under` more counted
/// below. Found from the top bit down, a bit a pass: with sixteen keys to a compare, four
/// running counts keep a pass from waiting on each compare.
#[inline]
#[target_feature(enable = "avx2")]
fn largest_at_most(
    pairs: &[[u64; 2 * CHUNK]],
    q: usize,
    lowest: u32,
    under: __m256i,
    x: __m256i,
) -> __m256i {
    let zero = _mm256_setzero_si256();
    let sign = _mm256_set1_epi16(i16::MIN);
    let mut found = zero;
    for bit in (lowest..16).rev() {
        let candidate = _mm256_or_si256(found, _mm256_set1_epi16((1u16 << bit) as i16));
        let flipped = _mm256_xor_si256(candidate, sign);
        let mut below = [zero; 4];
        let (quads, rest) = pairs.as_chunks::<4>();
        for quad in quads {
            for (below, pair) in below.iter_mut().zip(quad) {
                let less = _mm256_cmpgt_epi16(flipped, load_quarter(pair, q));
                *below = _mm256_sub_epi16(*below, less);
            }
        }
        for pair in rest {
            let less = _mm256_cmpgt_epi16(flipped, load_quarter(pair, q));
            below[0] = _mm256_sub_epi16(below[0], less);
        }
        let below = _mm256_add_epi16(
            _mm256_add_epi16(below[0], below[1]),
            _mm256_add_epi16(below[2], below[3]),
        );
        let below = _mm256_add_epi16(both_rows(below), under);
        // The bit stays where at most x lie below the candidate.
        found = _mm256_blendv_epi8(candidate, found, _mm256_cmpgt_epi16(below, x));
    }
    _mm256_xor_si256(found, sign)
}

/// For four lanes (lane `l` in word `l` of each vector): the key of rank `x` among the first `N`
/// of 16 flipped `keys` (by the sorting network [`SORT16`](super::group::SORT16) pruned to
/// `N`), unflipped, and the lanes where another key shares that key's leading bits, so that key
/// order may not be pair order there.
#[inline]
#[target_feature(enable = "avx2")]
fn select_first<const N: usize>(
    mut keys: [__m256i; 16],
    x: __m256i,
    layout: &KeyLayout,
) -> (__m256i, u32) {
    sort16!(&mut keys, below N, |a, b| {
        let greater = _mm256_cmpgt_epi64(a, b);
        (
            _mm256_blendv_epi8(a, b, greater),
            _mm256_blendv_epi8(b, a, greater),
        )
    });
    let mut found = _mm256_setzero_si256();
    for (rank, &key) in keys[..N].iter().enumerate() {
        let here = _mm256_cmpeq_epi64(x, _mm256_set1_epi64x(rank as i64));
        found = _mm256_blendv_epi8(found, key, here);
    }
    (flip(found), ties(&keys[..N], found, layout))
}

/// The lanes (bit `l` for lane `l`) where a key other than `found` shares its leading bits
/// (none if keys hold whole values). Keys and `found` both flipped, or both not.
#[inline]
#[target_feature(enable = "avx2")]
fn ties(keys: &[__m256i], found: __m256i, layout: &KeyLayout) -> u32 {
    if layout.exact() {
        return 0;
    }
    let value_mask = _mm256_set1_epi64x(layout.value_mask() as i64);
    let mut same = _mm256_setzero_si256();
    for &other in keys {
        let differ = _mm256_and_si256(_mm256_xor_si256(other, found), value_mask);
        same = _mm256_sub_epi64(same, _mm256_cmpeq_epi64(differ, _mm256_setzero_si256()));
    }
    let alone = _mm256_cmpeq_epi64(same, _mm256_set1_epi64x(1));
    !_mm256_movemask_pd(_mm256_castsi256_pd(alone)) as u32 & 0xf
}

/// Unsigned order as signed order: the top bit flipped.
#[inline]
#[target_feature(enable = "avx2")]
fn flip(v: __m256i) -> __m256i {
    _mm256_xor_si256(v, _mm256_set1_epi64x(i64::MIN))
}

/// The first eight words of `words` as two vectors.
#[inline]
#[target_feature(enable = "avx2")]
fn load(words: &[u64]) -> Row {
    let (halves, _) = words[..CHUNK].as_chunks::<4>();
    // SAFETY: each half is 32 readable bytes; the loads are unaligned.
    unsafe {
        [
            _mm256_loadu_si256(halves[0].as_ptr().cast()),
            _mm256_loadu_si256(halves[1].as_ptr().cast()),
        ]
    }
}

/// 32 bytes as a vector.
#[inline]
#[target_feature(enable = "avx2")]
fn load_bytes(bytes: &[u8; 32]) -> __m256i {
    // SAFETY: `bytes` is 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) }
}

/// Two vectors into eight words.
#[inline]
#[target_feature(enable = "avx2")]
fn store(words: &mut [u64; CHUNK], row: Row) {
    let (halves, _) = words.as_chunks_mut::<4>();
    store4(&mut halves[0], row[0]);
    store4(&mut halves[1], row[1]);
}

/// A vector into four words.
#[inline]
#[target_feature(enable = "avx2")]
fn store4(words: &mut [u64; 4], v: __m256i) {
    // SAFETY: `words` is 32 writable bytes; the store is unaligned.
    unsafe { _mm256_storeu_si256(words.as_mut_ptr().cast(), v) }
}

/// Two vectors' eight words.
#[inline]
#[target_feature(enable = "avx2")]
fn array(row: Row) -> [u64; CHUNK] {
    let mut words = [0; CHUNK];
    store(&mut words, row);
    words
}

/// Up to radix [`SMALL_RADIX`], [`inverse_narrow`]; above it, the portable inverse (the tests'
/// oracle) a chunk at a time: each row of keys compared with the lanes' pivots as two vectors
/// as it is made, and never stored.
#[target_feature(enable = "avx2")]
fn inverse_avx2(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    if blocks.layout.n as usize <= SMALL_RADIX {
        return by_radix!(inverse_narrow(blocks, work, digits));
    }
    let value_mask = _mm256_set1_epi64x(blocks.layout.value_mask() as i64);
    let zero = _mm256_setzero_si256();
    for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
        let first = chunk * CHUNK;
        let pivots: [u64; CHUNK] = core::array::from_fn(|l| {
            digits
                .get(l)
                .map_or(0, |&k| blocks.key(first + l, k as usize))
        });
        let pivot = load(&pivots);
        let flipped = [flip(pivot[0]), flip(pivot[1])];
        let (mut below, mut same) = ([zero; 2], [zero; 2]);
        each_row(blocks, first, digits.len(), |_, keys| {
            for h in 0..2 {
                let less = _mm256_cmpgt_epi64(flipped[h], flip(keys[h]));
                below[h] = _mm256_sub_epi64(below[h], less);
                let differ = _mm256_and_si256(_mm256_xor_si256(keys[h], pivot[h]), value_mask);
                same[h] = _mm256_sub_epi64(same[h], _mm256_cmpeq_epi64(differ, zero));
            }
        });
        rank_digits(blocks, first, &pivots, array(below), array(same), digits);
    }
}

/// [`inverse_avx2`] without a load whose address depends on a digit: each lane's pivot is
/// picked with masks from every row as the rows are made, then the stored rows are compared
/// with it (`Selection::ConstantTime`; a tie of leading bits is the documented exception).
#[target_feature(enable = "avx2")]
fn inverse_constant_time_avx2(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    let rows = work.rows();
    for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
        inverse_constant_time_chunk(blocks, rows, chunk * CHUNK, digits);
    }
}

/// [`inverse_constant_time_avx2`] of the chunk of lanes from `first` on, its rows made into
/// `rows`.
#[inline]
#[target_feature(enable = "avx2")]
fn inverse_constant_time_chunk(
    blocks: &Blocks<'_>,
    rows: &mut [[u64; CHUNK]],
    first: usize,
    digits: &mut [u32],
) {
    let n = blocks.layout.n as usize;
    let value_mask = _mm256_set1_epi64x(blocks.layout.value_mask() as i64);
    let zero = _mm256_setzero_si256();
    // Lanes past the group's want no value: no row matches u64::MAX.
    let wanted: [u64; CHUNK] =
        core::array::from_fn(|l| digits.get(l).map_or(u64::MAX, |&k| k.into()));
    let wanted = load(&wanted);
    let mut pivot = [zero; 2];
    each_row(blocks, first, digits.len(), |k, keys| {
        store(&mut rows[k], keys);
        let index = _mm256_set1_epi64x(k as i64);
        for h in 0..2 {
            let hit = _mm256_cmpeq_epi64(index, wanted[h]);
            pivot[h] = _mm256_blendv_epi8(pivot[h], keys[h], hit);
        }
    });
    let flipped = [flip(pivot[0]), flip(pivot[1])];
    let (mut below, mut same) = ([zero; 2], [zero; 2]);
    for row in &rows[..n] {
        let keys = load(row);
        for h in 0..2 {
            let less = _mm256_cmpgt_epi64(flipped[h], flip(keys[h]));
            below[h] = _mm256_sub_epi64(below[h], less);
            let differ = _mm256_and_si256(_mm256_xor_si256(keys[h], pivot[h]), value_mask);
            same[h] = _mm256_sub_epi64(same[h], _mm256_cmpeq_epi64(differ, zero));
        }
    }
    rank_digits(
        blocks,
        first,
        &array(pivot),
        array(below),
        array(same),
        digits,
    );
}
