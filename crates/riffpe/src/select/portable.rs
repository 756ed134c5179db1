//! Lane-by-lane selection: a step's keys made from one lane's keystream, then π by a bucket of
//! leading bits and π⁻¹ by one counting pass. Every CPU runs it; it is also the oracle the
//! group kernels are tested against.

use core::cmp::Ordering;

use super::{Selection, mask};

/// Most buckets per step: 256 counters keep the histogram small and cheap to clear.
pub(crate) const MAX_BUCKETS: usize = 256;

/// Radices up to this use 16 buckets (about 6 keys each at radix 100; fewer buckets for small
/// radices do not pay).
const SMALL_RADIX: u32 = 255;

/// Buckets up to this many keys are searched by counting ranks (quadratic, branch-free).
const SMALL_BUCKET: usize = 16;

/// Keys a bucket keeps in [`Slotted`].
const BUCKET_SLOTS: usize = SMALL_BUCKET;

/// [`Slotted`]'s slots: [`BUCKET_SLOTS`] for each of the 16 buckets.
pub(crate) const SLOTS: usize = 16 * BUCKET_SLOTS;

/// The largest radix whose one-message fast π files its keys into [`Slotted`]: up to it, the
/// bucket that holds the x-th key outgrows its slots with probability below 0.6 %.
pub(crate) const SLOTTED_RADIX: u32 = 128;

// Slotted steps have the 16 buckets whose sizes fit the bytes of a u128.
const _: () = assert!(SLOTTED_RADIX <= SMALL_RADIX);

/// The constants of one digit step: radix, value length and how keys are laid out.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyLayout {
    /// Radix of this step (`n ≥ 2`).
    pub n: u32,
    bytes_per_value: usize,
    index_bits: u32,
    /// Leading value bits kept in a key (the top `8·min(b, 8)` bits, less the index bits).
    value_mask: u64,
    /// True when a key holds its whole value, so key order is pair order.
    exact: bool,
    bucket_shift: u32,
    /// Bytes of keystream that must exist before value `k`'s key can be made: `k·b + lead`.
    lead: usize,
}

impl KeyLayout {
    #[inline]
    pub fn new(n: u32, bytes_per_value: usize) -> Self {
        let index_bits = u32::BITS - (n - 1).leading_zeros();
        let lead = bytes_per_value.min(8);
        let value_bits = 8 * lead as u32;
        let index_mask = (1u64 << index_bits) - 1;
        let value_mask = (u64::MAX << (64 - value_bits)) & !index_mask;
        // 16 buckets up to radix 255, then 2^index_bits (the power of two at or above n), at
        // most MAX_BUCKETS.
        let bucket_bits = if n <= SMALL_RADIX {
            4
        } else {
            index_bits.min(MAX_BUCKETS.trailing_zeros())
        };
        KeyLayout {
            n,
            bytes_per_value,
            index_bits,
            value_mask,
            exact: bytes_per_value.saturating_mul(8) <= (u64::BITS - index_bits) as usize,
            bucket_shift: u64::BITS - bucket_bits,
            lead,
        }
    }

    /// Keystream blocks of this step: `ceil(n·b / 16)`.
    #[inline]
    pub fn keystream_blocks(&self) -> usize {
        (self.n as usize * self.bytes_per_value).div_ceil(16)
    }

    /// Buckets of this step's histogram.
    #[inline]
    pub fn buckets(&self) -> usize {
        1 << (u64::BITS - self.bucket_shift)
    }

    /// An empty histogram for this step in `counts` (at least [`KeyLayout::buckets`] long),
    /// for keys that will be filed with [`KeyLayout::file`] if `filed`, else counted.
    #[inline(always)]
    pub fn histogram<'c>(&self, counts: &'c mut [u64], filed: bool) -> Histogram<'c> {
        let counts = &mut counts[..self.buckets()];
        if let Ok(small) = <&mut [u64; 16]>::try_from(&mut *counts) {
            *small = [0; 16]; // A fixed length is cleared inline, not by a call to memset.
        } else {
            clear(counts);
        }
        Histogram { counts, filed }
    }

    /// Keystream bytes needed before the key of value `k` can be made.
    #[inline]
    pub fn ready_at(&self, k: usize) -> usize {
        k * self.bytes_per_value + self.lead
    }

    /// Low key bits that hold the index.
    #[inline]
    pub(super) fn index_bits(&self) -> u32 {
        self.index_bits
    }

    #[inline]
    pub(super) fn index_mask(&self) -> u64 {
        (1u64 << self.index_bits) - 1
    }

    /// The key of value `k`. The keystream holds 8 readable bytes from every value's start
    /// (scratch has slack), and bytes past the value are masked off.
    #[inline(always)]
    pub fn key(&self, keystream: &[u8], k: usize) -> u64 {
        let start = k * self.bytes_per_value;
        let mut leading = [0u8; 8];
        leading.copy_from_slice(&keystream[start..start + 8]);
        self.key_from_lead(u64::from_be_bytes(leading), k)
    }

    /// The key of value `k` whose 8 leading keystream bytes, big-endian, are `lead`.
    #[inline(always)]
    pub fn key_from_lead(&self, lead: u64, k: usize) -> u64 {
        (lead & self.value_mask) | k as u64
    }

    /// The value index a key carries.
    #[inline(always)]
    pub fn index(&self, key: u64) -> usize {
        (key & self.index_mask()) as usize
    }

    /// Whether two keys hold the same leading value bits (their order may then need the
    /// whole values, unless [`KeyLayout::exact`]).
    #[inline(always)]
    pub fn same_lead(&self, a: u64, b: u64) -> bool {
        (a ^ b) & self.value_mask() == 0
    }

    /// The bits of a key that hold the value's leading bytes.
    #[inline(always)]
    pub fn value_mask(&self) -> u64 {
        self.value_mask
    }

    /// Whether keys hold whole values, so that key order is pair order.
    #[inline(always)]
    pub fn exact(&self) -> bool {
        self.exact
    }

    /// The value bits of a 32-bit key (the lockstep passes up to radix 16): a value's 32
    /// leading bits (fewer if `b < 4`) above its index, which fills the low bits as in
    /// [`KeyLayout::key`]; and whether those hold the whole value, so that key order is pair
    /// order.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    pub(super) fn narrow(&self) -> (u32, bool) {
        let value_mask = (self.value_mask >> 32) as u32 & !(self.index_mask() as u32);
        let bits = 8 * self.bytes_per_value() + self.index_bits as usize;
        (value_mask, bits <= u32::BITS as usize)
    }

    /// The most two 32-bit keys ([`KeyLayout::narrow`]) whose value bits tie can differ: their
    /// lowest value bit, less one. Sorted, keys that tie lie side by side, so a lane whose
    /// least gap between neighbours is no more than this may hold a tie (or two values that
    /// differ only in that bit, which a compare in full settles alike).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    pub(super) fn narrow_tie_gap(&self) -> u32 {
        let value_mask = self.narrow().0;
        (value_mask & value_mask.wrapping_neg()).wrapping_sub(1)
    }

    /// Keystream bytes per value.
    #[inline(always)]
    pub fn bytes_per_value(&self) -> usize {
        self.bytes_per_value
    }

    /// Files `key` in its bucket, as a chain through `keys`: `keys[k]` keeps the key's leading
    /// bits and, in its index bits, the index filed before it in the bucket; the bucket counts
    /// the key and points to it. (`k` is where it is stored, so the key is not lost.)
    #[inline(always)]
    pub fn file(&self, keys: &mut [u64], histogram: &mut Histogram<'_>, key: u64) {
        let index_mask = self.index_mask();
        let k = key & index_mask;
        let entry = &mut histogram.counts[self.bucket(key)];
        keys[k as usize] = (key & !index_mask) | (*entry >> 32);
        *entry = u64::from(*entry as u32 + 1) | k << 32;
    }

    #[inline(always)]
    pub fn bucket(&self, key: u64) -> usize {
        (key >> self.bucket_shift) as usize
    }

    /// Whether one message's fast π files this step's keys into [`Slotted`].
    #[inline(always)]
    pub fn slotted(&self) -> bool {
        self.n <= SLOTTED_RADIX
    }

    /// π(x) from every key of the step filed into `slotted` ([`KeyLayout::slotted`]). Should
    /// the x-th key's bucket have outgrown its slots, the keys are made again from `keystream`
    /// into `keys` and counted in `histogram` (empty, not filing), and π found from those.
    #[inline(always)]
    pub fn forward_slotted(
        &self,
        keystream: &[u8],
        slotted: &Slotted<'_>,
        keys: &mut [u64],
        histogram: &mut Histogram<'_>,
        x: u32,
    ) -> u32 {
        debug_assert!(self.slotted());
        let sizes = slotted.sizes;
        let (bucket, rank, size) =
            super::group::find_bucket(sizes as u64, (sizes >> 64) as u64, u64::from(x));
        let (bucket, size) = (bucket as usize, size as usize);
        if size <= BUCKET_SLOTS {
            let keys = &slotted.slots[bucket * BUCKET_SLOTS..][..size];
            return self.pick(keystream, keys, rank as u32);
        }
        self.make_keys(keystream, keys, histogram, true);
        self.forward(keystream, keys, histogram, x)
    }

    /// Whole pairs, for keys whose leading parts are equal.
    #[cold]
    pub(super) fn tie_cmp(&self, keystream: &[u8], a: u64, b: u64) -> Ordering {
        let mask = self.index_mask();
        let (ia, ib) = ((a & mask) as usize, (b & mask) as usize);
        let value = |i: usize| &keystream[i * self.bytes_per_value..(i + 1) * self.bytes_per_value];
        value(ia).cmp(value(ib)).then(ia.cmp(&ib))
    }

    #[inline]
    pub(super) fn cmp(&self, keystream: &[u8], a: u64, b: u64) -> Ordering {
        if self.exact || (a ^ b) & self.value_mask != 0 {
            a.cmp(&b)
        } else {
            self.tie_cmp(keystream, a, b)
        }
    }

    /// π(x): the index of the x-th smallest pair.
    ///
    /// `keys[..n]` holds every key, filed or not as `histogram` says, and `histogram` how many
    /// fall in each bucket; keys are reordered.
    #[inline]
    pub fn forward(
        &self,
        keystream: &[u8],
        keys: &mut [u64],
        histogram: &Histogram<'_>,
        x: u32,
    ) -> u32 {
        // The bucket holding the x-th key, and how many keys lie in buckets before it.
        let (bucket, below) = histogram.find(u64::from(x));
        let keys = if histogram.filed {
            self.gather_filed(keys, histogram.counts[bucket])
        } else {
            self.gather_counted(keys, bucket)
        };
        // Pairs with equal leading parts share a bucket, so whole-value ties are settled here.
        let rank = (u64::from(x) - below) as usize;
        if keys.len() <= SMALL_BUCKET {
            // A few keys: rank each branch-free instead of a selection's branches and calls.
            return self.pick(keystream, keys, rank as u32);
        }
        let (_, nth, _) = keys.select_nth_unstable_by(rank, |&a, &b| self.cmp(keystream, a, b));
        (*nth & self.index_mask()) as u32
    }

    /// The keys of one bucket, moved to the front of `keys[..n]` by a branch-free pass over all.
    #[inline(always)]
    fn gather_counted<'k>(&self, keys: &'k mut [u64], bucket: usize) -> &'k mut [u64] {
        let keys = &mut keys[..self.n as usize];
        let mut len = 0;
        for j in 0..keys.len() {
            let key = keys[j];
            keys[len] = key;
            len += usize::from(self.bucket(key) == bucket);
        }
        &mut keys[..len]
    }

    /// The keys of the bucket whose histogram entry is `entry`, gathered at the top of
    /// `keys[..n]` by following its chain (see [`KeyLayout::file`]). The chain's indices fall
    /// (the j-th is at most n − 1 − j), so no link is overwritten before it is read.
    #[inline(always)]
    fn gather_filed<'k>(&self, keys: &'k mut [u64], entry: u64) -> &'k mut [u64] {
        let n = self.n as usize;
        let len = entry as u32 as usize;
        let keys = &mut keys[..n];
        let index_mask = self.index_mask();
        let mut at = (entry >> 32) as usize;
        for top in (n - len..n).rev() {
            let link = keys[at];
            keys[top] = (link & !index_mask) | at as u64;
            at = (link & index_mask) as usize;
        }
        &mut keys[n - len..]
    }

    /// The index of the key of rank `x` among `keys`: every key's rank is counted and the one
    /// whose rank is `x` is picked with masks, so nothing branches on which one it is (save a
    /// tie of leading bits, see [`Selection::ConstantTime`]).
    #[inline(always)]
    pub(super) fn pick(&self, keystream: &[u8], keys: &[u64], x: u32) -> u32 {
        let mut found = 0u64;
        for &key in keys {
            let rank = self.rank(keystream, keys.iter().copied(), key);
            found |= key & mask(rank == x);
        }
        (found & self.index_mask()) as u32
    }

    /// π⁻¹(k) straight from a whole keystream, keys made on the fly and never stored: one
    /// branch-free pass, for lanes whose keystream is complete before ranking starts.
    #[inline(always)]
    pub fn inverse_from_keystream(&self, keystream: &[u8], k: u32) -> u32 {
        let keys = (0..self.n as usize).map(|j| self.key(keystream, j));
        self.rank(keystream, keys, self.key(keystream, k as usize))
    }

    /// Makes every key from a whole keystream, counting them per bucket when `forward`.
    #[inline(always)]
    pub fn make_keys(
        &self,
        keystream: &[u8],
        keys: &mut [u64],
        histogram: &mut Histogram<'_>,
        forward: bool,
    ) {
        for (k, slot) in keys[..self.n as usize].iter_mut().enumerate() {
            let key = self.key(keystream, k);
            *slot = key;
            if forward {
                histogram.add(self.bucket(key));
            }
        }
    }

    /// π(x) when `forward`, else π⁻¹(x), by the `selection` method.
    #[inline(always)]
    pub fn select_with(
        &self,
        selection: Selection,
        keystream: &[u8],
        keys: &mut [u64],
        histogram: &Histogram<'_>,
        forward: bool,
        x: u32,
    ) -> u32 {
        match (selection, forward) {
            (Selection::Fast, _) => self.select(keystream, keys, histogram, forward, x),
            (Selection::ConstantTime, true) => self.forward_constant_time(keystream, keys, x),
            (Selection::ConstantTime, false) => self.inverse_constant_time(keystream, keys, x),
        }
    }

    /// π(x) when `forward`, else π⁻¹(x).
    #[inline(always)]
    pub fn select(
        &self,
        keystream: &[u8],
        keys: &mut [u64],
        histogram: &Histogram<'_>,
        forward: bool,
        x: u32,
    ) -> u32 {
        if forward {
            self.forward(keystream, keys, histogram, x)
        } else {
            self.inverse(keystream, keys, x)
        }
    }

    /// π⁻¹(k): the rank of pair `k` among `keys[..n]`.
    #[inline]
    pub fn inverse(&self, keystream: &[u8], keys: &[u64], k: u32) -> u32 {
        let keys = &keys[..self.n as usize];
        self.rank(keystream, keys.iter().copied(), keys[k as usize])
    }

    /// How many of `keys` order below `pivot` (one of them), in one branch-free pass. Keys whose
    /// leading bits equal the pivot's are counted alongside; only if one besides the pivot
    /// itself does, and keys are not exact, are whole values compared in a second pass.
    #[inline(always)]
    pub(super) fn rank(
        &self,
        keystream: &[u8],
        keys: impl Iterator<Item = u64> + Clone,
        pivot: u64,
    ) -> u32 {
        let mut below = 0u32;
        let mut same_lead = 0u32;
        for key in keys.clone() {
            below += u32::from(key < pivot);
            same_lead += u32::from((key ^ pivot) & self.value_mask == 0);
        }
        if self.exact || same_lead == 1 {
            below
        } else {
            keys.filter(|&key| self.cmp(keystream, key, pivot) == Ordering::Less)
                .count() as u32
        }
    }
}

/// One message's keys of a step filed by bucket as they arrive, for fast π up to
/// [`SLOTTED_RADIX`]: bucket `b`'s first [`BUCKET_SLOTS`] keys in order from slot
/// `b·BUCKET_SLOTS`, and the 16 buckets' sizes in the bytes of a word that stays in registers.
/// After the chain, the x-th key's bucket is found from the sizes and its keys read from their
/// slots, with no links to follow and no store of a count to wait on.
pub(crate) struct Slotted<'s> {
    slots: &'s mut [u64; SLOTS],
    sizes: u128,
}

impl<'s> Slotted<'s> {
    /// Empty buckets over `slots` (what they held is never read).
    pub fn new(slots: &'s mut [u64; SLOTS]) -> Self {
        Slotted { slots, sizes: 0 }
    }

    /// Files `key` (of a step [`KeyLayout::slotted`]) in its bucket.
    #[inline(always)]
    pub fn file(&mut self, layout: &KeyLayout, key: u64) {
        let bucket = layout.bucket(key);
        let size = (self.sizes >> (8 * bucket)) as usize & 0xff;
        // A full bucket's later keys land on its last slot: its size, over BUCKET_SLOTS, sends
        // π to the keystream instead. Sizes stay below 256, as n does.
        self.slots[bucket * BUCKET_SLOTS + size.min(BUCKET_SLOTS - 1)] = key;
        self.sizes += 1 << (8 * bucket);
    }
}

/// `counts.fill(0)` out of line: inlined, LLVM merges it with the fixed-length clear beside it
/// into one call to memset of either length.
#[inline(never)]
fn clear(counts: &mut [u64]) {
    counts.fill(0);
}

/// How many keys fall in each bucket of leading bits: per bucket, the count in the low 32 bits
/// and, when keys are filed, the index of the last key filed there in the high 32.
///
/// Counters live in memory here: 16 byte-wide counters packed in a `u128` need a two-word
/// variable shift per key. [`Slotted`] packs them so for one message's keys, whose shifts run
/// while its AES chain is in flight, so that no count after the chain waits on a store.
pub(crate) struct Histogram<'c> {
    counts: &'c mut [u64],
    /// Keys are filed by bucket ([`KeyLayout::file`]), not only counted.
    filed: bool,
}

impl Histogram<'_> {
    /// Whether keys are to be filed ([`KeyLayout::file`]) rather than stored in order.
    #[inline(always)]
    pub fn files(&self) -> bool {
        self.filed
    }

    #[inline(always)]
    pub fn add(&mut self, bucket: usize) {
        self.counts[bucket] += 1;
    }

    /// The bucket holding the x-th key and the number of keys in the buckets before it.
    #[inline(always)]
    fn find(&self, x: u64) -> (usize, u64) {
        let mut below = 0;
        for (bucket, &entry) in self.counts.iter().enumerate() {
            let count = u64::from(entry as u32);
            if below + count > x {
                return (bucket, below);
            }
            below += count;
        }
        (self.counts.len() - 1, below) // unreachable: the counts sum to n > x
    }
}
