//! The key of rank x found by a bitwise search over 16-bit quarters of keys, sixteen to a pair
//! of 128-bit vectors ([`I16x16`]: `sse2`, `neon`, or [`Scalar`] elsewhere), with no branch or
//! address that depends on the keys or the digit, save a tie of leading bits (see
//! `Selection::ConstantTime`). One search ([`search`]) serves one message's constant-time π
//! (sixteen of its keys to a vector, counted together) and the group kernel's (two rows of a
//! [`CHUNK`] of lanes to a vector, counted per lane); the AVX2 group kernel runs the same search
//! in its own intrinsics (`avx2::search_chunk`).
//!
//! Keys are split into four sign-flipped 16-bit quarters (which turns unsigned order into
//! signed order) and kept sixteen to a [`Pair`]: quarter `q` of its keys in words `4q..4q + 4`.
//! For a group, the keys of rows `2p` and `2p + 1` of a chunk's lanes are pair `p` (row `r`,
//! lane `l` at index `8·r + l`), stored in the key scratch ([`Work::pairs`]).

use super::group::{Blocks, CHUNK, Work, found_digits, rank_digits};
use super::{KeyLayout, mask};

/// Sixteen keys as four sign-flipped 16-bit quarters, four words each.
pub(crate) type Pair = [u64; 2 * CHUNK];

/// Sixteen signed 16-bit values, two rows of a chunk's lanes (row `r`, lane `l` at `8·r + l`):
/// the operations the search needs, in the vector registers of a CPU that has them.
pub(super) trait I16x16: Copy {
    fn splat(value: i16) -> Self;
    fn from_array(values: [i16; 2 * CHUNK]) -> Self;
    fn to_array(self) -> [i16; 2 * CHUNK];
    /// The values stored by [`I16x16::store`] in `words`.
    fn load(words: &[u64; 4]) -> Self;
    fn store(self, words: &mut [u64; 4]);
    fn add(self, other: Self) -> Self;
    fn sub(self, other: Self) -> Self;
    /// All ones where `self > other`, else zero.
    fn gt(self, other: Self) -> Self;
    /// All ones where `self == other`, else zero.
    fn eq(self, other: Self) -> Self;
    fn and(self, other: Self) -> Self;
    /// `!self & other`.
    fn and_not(self, other: Self) -> Self;
    fn or(self, other: Self) -> Self;
    fn xor(self, other: Self) -> Self;
    /// Each value of row 0 swapped with its lane's value of row 1.
    fn swap_rows(self) -> Self;

    /// `a` where `mask` is all ones, `b` where it is zero.
    #[inline(always)]
    fn select(mask: Self, a: Self, b: Self) -> Self {
        mask.and(a).or(mask.and_not(b))
    }

    /// Per-lane sums of two rows' counts, in both rows.
    #[inline(always)]
    fn both_rows(self) -> Self {
        self.add(self.swap_rows())
    }

    /// The sum of all sixteen values, in each.
    #[inline(always)]
    fn sum_all(self) -> Self {
        Self::splat(self.to_array().iter().sum())
    }

    /// The bitwise or of all sixteen values, in each.
    #[inline(always)]
    fn or_all(self) -> Self {
        Self::splat(self.to_array().iter().fold(0, |any, &v| any | v))
    }
}

/// [`I16x16`] in plain Rust, for CPUs with neither SSE2 nor NEON (and as their reference).
#[cfg_attr(
    any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_feature = "neon")
    ),
    allow(dead_code)
)]
#[derive(Clone, Copy)]
pub(crate) struct Scalar([i16; 2 * CHUNK]);

#[cfg_attr(
    any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_feature = "neon")
    ),
    allow(dead_code)
)]
impl Scalar {
    #[inline(always)]
    fn map(self, other: Self, f: impl Fn(i16, i16) -> i16) -> Self {
        Scalar(core::array::from_fn(|i| f(self.0[i], other.0[i])))
    }
}

impl I16x16 for Scalar {
    fn splat(value: i16) -> Self {
        Scalar([value; 2 * CHUNK])
    }
    fn from_array(values: [i16; 2 * CHUNK]) -> Self {
        Scalar(values)
    }
    fn to_array(self) -> [i16; 2 * CHUNK] {
        self.0
    }
    fn load(words: &[u64; 4]) -> Self {
        Scalar(core::array::from_fn(|i| {
            (words[i / 4] >> (16 * (i % 4))) as i16
        }))
    }
    fn store(self, words: &mut [u64; 4]) {
        for (w, word) in words.iter_mut().enumerate() {
            *word = (0..4).fold(0, |word, i| {
                word | u64::from(self.0[4 * w + i] as u16) << (16 * i)
            });
        }
    }
    fn add(self, other: Self) -> Self {
        self.map(other, i16::wrapping_add)
    }
    fn sub(self, other: Self) -> Self {
        self.map(other, i16::wrapping_sub)
    }
    fn gt(self, other: Self) -> Self {
        self.map(other, |a, b| -i16::from(a > b))
    }
    fn eq(self, other: Self) -> Self {
        self.map(other, |a, b| -i16::from(a == b))
    }
    fn and(self, other: Self) -> Self {
        self.map(other, |a, b| a & b)
    }
    fn and_not(self, other: Self) -> Self {
        self.map(other, |a, b| !a & b)
    }
    fn or(self, other: Self) -> Self {
        self.map(other, |a, b| a | b)
    }
    fn xor(self, other: Self) -> Self {
        self.map(other, |a, b| a ^ b)
    }
    fn swap_rows(self) -> Self {
        Scalar(core::array::from_fn(|i| self.0[i ^ CHUNK]))
    }
}

/// Which values a count adds up.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Span {
    /// The same lane's in both rows of a group's pair.
    Lanes,
    /// All sixteen keys of one message's pair.
    All,
}

impl Span {
    /// The value whose key is at index `i` of pair `p`.
    #[inline(always)]
    fn value(self, p: usize, i: usize) -> usize {
        match self {
            Span::Lanes => 2 * p + i / CHUNK,
            Span::All => 2 * CHUNK * p + i,
        }
    }

    #[inline(always)]
    fn sum<V: I16x16>(self, counts: V) -> V {
        match self {
            Span::Lanes => counts.both_rows(),
            Span::All => counts.sum_all(),
        }
    }

    #[inline(always)]
    fn or<V: I16x16>(self, bits: V) -> V {
        match self {
            Span::Lanes => bits.or(bits.swap_rows()),
            Span::All => bits.or_all(),
        }
    }
}

/// The sign bit: flipping it turns unsigned order into signed order.
const SIGN: i16 = i16::MIN;

/// Quarter `q` of a pair's two rows.
#[inline(always)]
fn quarter(pair: &Pair, q: usize) -> &[u64; 4] {
    &pair.as_chunks::<4>().0[q]
}

#[inline(always)]
fn quarter_mut(pair: &mut Pair, q: usize) -> &mut [u64; 4] {
    &mut pair.as_chunks_mut::<4>().0[q]
}

/// π(x) when `forward`, else π⁻¹(k), for every lane.
#[inline(always)]
pub(super) fn select<V: I16x16>(
    blocks: &Blocks<'_>,
    work: Work<'_>,
    digits: &mut [u32],
    forward: bool,
) {
    if forward {
        self::forward::<V>(blocks, work, digits)
    } else {
        inverse(blocks, work, digits)
    }
}

/// π(x) for every lane, each lane's key of rank x found by [`search_chunk`].
#[inline(always)]
fn forward<V: I16x16>(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    let pairs = work.pairs();
    for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
        let first = chunk * CHUNK;
        let found = search_chunk::<V>(blocks, pairs, first, digits);
        found_digits(blocks, first, found, pairs.as_flattened_mut(), digits);
    }
}

/// π⁻¹(k) for every lane: each lane's pivot (its key of value k) picked with masks from every
/// row as the rows are made, then the keys below it counted.
#[inline(always)]
fn inverse(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
    let rows = work.rows();
    let value_mask = blocks.layout.value_mask();
    for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
        let first = chunk * CHUNK;
        // Lanes past the group's want no value: no row matches u64::MAX.
        let wanted: [u64; CHUNK] =
            core::array::from_fn(|l| digits.get(l).map_or(u64::MAX, |&k| k.into()));
        let mut pivots = [0u64; CHUNK];
        for (k, row) in rows.iter_mut().enumerate() {
            blocks.chunk_row(k, first, digits.len(), row);
            for l in 0..CHUNK {
                pivots[l] |= row[l] & mask(wanted[l] == k as u64);
            }
        }
        let (mut below, mut same) = ([0u64; CHUNK], [0u64; CHUNK]);
        for row in rows.iter() {
            for l in 0..CHUNK {
                below[l] += u64::from(row[l] < pivots[l]);
                same[l] += u64::from((row[l] ^ pivots[l]) & value_mask == 0);
            }
        }
        rank_digits(blocks, first, &pivots, below, same, digits);
    }
}

/// For the lanes from `first` on, one digit x each in `digits`: each lane's key of rank x, and
/// the lanes (bit `l` for lane `l`) where another key shares that key's leading bits.
#[inline(always)]
pub(super) fn search_chunk<V: I16x16>(
    blocks: &Blocks<'_>,
    pairs: &mut [Pair],
    first: usize,
    digits: &[u32],
) -> ([u64; CHUNK], u32) {
    let n = blocks.layout.n as usize;
    let mut row = [0u64; CHUNK];
    for (p, pair) in pairs.iter_mut().enumerate() {
        let mut quarters = [[i16::MAX; 2 * CHUNK]; 4];
        // The last pair's second row of an odd radix has no key: the largest value throughout.
        for r in 0..2.min(n - 2 * p) {
            blocks.chunk_row(2 * p + r, first, digits.len(), &mut row);
            for (q, quarter) in quarters.iter_mut().enumerate() {
                for (l, &key) in row.iter().enumerate() {
                    quarter[8 * r + l] = quarter_of(key, q);
                }
            }
        }
        for (q, quarter) in quarters.into_iter().enumerate() {
            V::from_array(quarter).store(quarter_mut(pair, q));
        }
    }
    let x = V::from_array(core::array::from_fn(|i| {
        digits.get(i % CHUNK).map_or(0, |&d| d as i16)
    }));
    let (found, same) = search(pairs, &blocks.layout, x, Span::Lanes);
    let (found, same) = (found.map(V::to_array), same.to_array());
    let ties = (0..CHUNK).fold(0, |ties, l| ties | u32::from(same[l] != 1) << l);
    let found = core::array::from_fn(|l| key(found.map(|quarter| quarter[l])));
    (found, ties & !(u32::MAX << digits.len()))
}

/// The key of rank `x` among one message's keys in `pairs` (its padding the largest value in
/// every quarter), and whether another key shares its leading bits.
#[inline(always)]
pub(crate) fn search_one<V: I16x16>(pairs: &mut [Pair], layout: &KeyLayout, x: u32) -> (u64, bool) {
    let (found, same) = search(pairs, layout, V::splat(x as i16), Span::All);
    (
        key(found.map(|quarter| quarter.to_array()[0])),
        same.to_array()[0] != 1,
    )
}

/// The leading quarter (sign-flipped) of the key of rank `x` among one message's keys in
/// `pairs` (its padding the largest value in every quarter), and how many keys lie below it by
/// that quarter: [`search_one`]'s first quarter, whose keys [`KeyLayout::pick_searched`] then
/// gathers instead of searching on.
#[inline(always)]
pub(crate) fn search_lead<V: I16x16>(pairs: &[Pair], x: u32) -> (i16, u32) {
    let zero = V::splat(0);
    let found = largest_at_most(pairs, 0, 0, zero, V::splat(x as i16), Span::All);
    let mut below = zero;
    for pair in pairs {
        below = below.sub(found.gt(V::load(quarter(pair, 0))));
    }
    let below = Span::All.sum(below).to_array()[0];
    (found.to_array()[0], u32::from(below as u16))
}

/// A key from its four sign-flipped quarters, highest first.
#[inline(always)]
fn key(quarters: [i16; 4]) -> u64 {
    quarters.iter().fold(0, |key, &quarter| {
        key << 16 | u64::from((quarter ^ SIGN) as u16)
    })
}

/// Quarter `q` of a key, sign-flipped.
#[inline(always)]
pub(crate) fn quarter_of(key: u64, q: usize) -> i16 {
    (key >> (48 - 16 * q)) as i16 ^ SIGN
}

/// For each key sought (a lane's, or one message's in every value), its four quarters, and how
/// many keys share its leading bits (1 where keys are exact). `x` holds each sought key's rank.
///
/// A quarter at a time from the top, the quarter is searched for among the keys that share the
/// quarters found so far (the others made the largest value, which never lies below a
/// candidate), with the keys that lie below in an earlier quarter counted as below. Once
/// searched, a quarter is replaced by its keys' mask of still being in the search.
#[inline(always)]
fn search<V: I16x16>(pairs: &mut [Pair], layout: &KeyLayout, x: V, span: Span) -> ([V; 4], V) {
    // Unless keys are exact, the last quarter's index bits are not searched for: the found
    // leading bits are the answer's, and its index is that of the one key sharing them (if
    // another does, leading bits tie and the pick is made again in full anyway).
    let exact = layout.exact();
    let index_bits = if exact { 0 } else { layout.index_bits() };
    let (zero, ones, largest) = (V::splat(0), V::splat(-1), V::splat(i16::MAX));
    let mut under = zero;
    let mut found = [zero; 4];
    for (q, found) in found.iter_mut().enumerate() {
        let lowest = if q == 3 { index_bits } else { 0 };
        *found = largest_at_most(pairs, q, lowest, under, x, span);
        if q == 3 {
            break;
        }
        // Keys that lie below by this quarter are counted; those that share it (and all
        // before) stay in the search, their mask replacing this quarter; the others leave it.
        let mut below = zero;
        for pair in pairs.iter_mut() {
            let (this, next) = (V::load(quarter(pair, q)), V::load(quarter(pair, q + 1)));
            let still = if q == 0 {
                ones
            } else {
                V::load(quarter(pair, q - 1))
            };
            let same = this.eq(*found).and(still);
            below = below.sub(found.gt(this));
            same.store(quarter_mut(pair, q));
            V::select(same, next, largest).store(quarter_mut(pair, q + 1));
        }
        under = under.add(span.sum(below));
    }
    if exact {
        return (found, V::splat(1));
    }

    // The keys sharing the found leading bits: still in the search after three quarters, and
    // the same in the fourth outside the index; the answer's index is theirs if they are one.
    // Padding shares all-ones leading bits, so the last pair's is masked out.
    let outside = V::splat(!(layout.index_mask() as u16) as i16);
    let last = pairs.len() - 1;
    let n = layout.n as usize;
    let real = V::from_array(core::array::from_fn(|i| {
        -i16::from(span.value(last, i) < n)
    }));
    let (mut same, mut index) = (zero, zero);
    for (p, pair) in pairs.iter().enumerate() {
        let (this, still) = (V::load(quarter(pair, 3)), V::load(quarter(pair, 2)));
        let lead = this.xor(found[3]).and(outside).eq(zero).and(still);
        let lead = if p == last { lead.and(real) } else { lead };
        same = same.sub(lead);
        index = index.or(outside.and_not(lead.and(this)));
    }
    found[3] = found[3].or(span.or(index));
    (found, span.sum(same))
}

/// For each key sought: the largest 16-bit value, sign-flipped, with its bits below `lowest`
/// clear and at most `x` of the quarters `q` of `pairs` (counted over `span`) below it, `under`
/// more counted below. Found from the top bit down, a bit a pass; two running counts keep a pass from
/// waiting on each compare.
#[inline(always)]
fn largest_at_most<V: I16x16>(
    pairs: &[Pair],
    q: usize,
    lowest: u32,
    under: V,
    x: V,
    span: Span,
) -> V {
    let sign = V::splat(SIGN);
    let mut found = V::splat(0);
    for bit in (lowest..16).rev() {
        let candidate = found.or(V::splat((1u16 << bit) as i16));
        let flipped = candidate.xor(sign);
        let mut below = [V::splat(0); 2];
        let (twos, rest) = pairs.as_chunks::<2>();
        for two in twos {
            for (below, pair) in below.iter_mut().zip(two) {
                *below = below.sub(flipped.gt(V::load(quarter(pair, q))));
            }
        }
        for pair in rest {
            below[0] = below[0].sub(flipped.gt(V::load(quarter(pair, q))));
        }
        let below = span.sum(below[0].add(below[1])).add(under);
        // The bit stays where at most x lie below the candidate.
        found = V::select(below.gt(x), found, candidate);
    }
    found.xor(sign)
}
