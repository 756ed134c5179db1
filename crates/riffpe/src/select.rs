//! The permutation of one digit step, read off its keystream (SPEC: "Sort the pairs (v_k, k)").
//!
//! Pairs are never sorted. Each value becomes a 64-bit key: its leading bits above, its index in
//! the low `index_bits`. Keys order exactly as pairs do unless two leading parts are equal and the
//! values are longer than the leading part; then (and only then) the full values are compared.
//! Forward is a selection in expected O(n), inverse one counting pass.

use core::cmp::Ordering;

/// The `n` values of one keystream, `bytes_per_value` bytes each, big-endian.
pub(crate) struct Values<'a> {
    keystream: &'a [u8],
    bytes_per_value: usize,
    /// Bits holding the index at the bottom of a key.
    index_bits: u32,
    /// True when a key holds its whole value, so key order is pair order.
    exact: bool,
}

impl<'a> Values<'a> {
    /// `keystream` must hold at least `n · bytes_per_value` bytes, `n ≥ 1`.
    #[inline]
    pub fn new(keystream: &'a [u8], n: u32, bytes_per_value: usize) -> Self {
        let index_bits = u32::BITS - (n - 1).leading_zeros();
        let exact = bytes_per_value * 8 <= (u64::BITS - index_bits) as usize;
        Values {
            keystream,
            bytes_per_value,
            index_bits,
            exact,
        }
    }

    #[inline]
    fn index_mask(&self) -> u64 {
        (1u64 << self.index_bits) - 1
    }

    /// Value `k` as bytes.
    #[inline]
    fn value(&self, k: u64) -> &[u8] {
        let start = k as usize * self.bytes_per_value;
        &self.keystream[start..start + self.bytes_per_value]
    }

    /// The ordering key of value `k`: leading bits of `v_k`, then `k`.
    #[inline]
    fn key(&self, k: u32) -> u64 {
        let value = self.value(u64::from(k));
        let mut leading = [0u8; 8];
        let take = value.len().min(8);
        leading[..take].copy_from_slice(&value[..take]);
        (u64::from_be_bytes(leading) & !self.index_mask()) | u64::from(k)
    }

    /// `(v_a, a) < (v_b, b)` for two keys.
    #[inline]
    fn less(&self, a: u64, b: u64) -> bool {
        if self.exact || (a ^ b) >> self.index_bits != 0 {
            a < b
        } else {
            self.tie_cmp(a, b) == Ordering::Less
        }
    }

    #[inline]
    fn cmp(&self, a: u64, b: u64) -> Ordering {
        if self.exact || (a ^ b) >> self.index_bits != 0 {
            a.cmp(&b)
        } else {
            self.tie_cmp(a, b)
        }
    }

    /// Leading bits equal: compare whole values, then indices. Practically never taken for
    /// `bytes_per_value ≥ 8` (a 2^-50 event), taken often for short values that are not exact.
    #[cold]
    fn tie_cmp(&self, a: u64, b: u64) -> Ordering {
        let mask = self.index_mask();
        let (ia, ib) = (a & mask, b & mask);
        self.value(ia).cmp(self.value(ib)).then(ia.cmp(&ib))
    }

    /// π(x): the index of the x-th smallest pair, using `keys[..n]` as working memory.
    pub fn forward(&self, n: u32, x: u32, keys: &mut [u64]) -> u32 {
        let keys = &mut keys[..n as usize];
        for (k, slot) in (0..n).zip(keys.iter_mut()) {
            *slot = self.key(k);
        }
        let (_, nth, _) = keys.select_nth_unstable_by(x as usize, |&a, &b| self.cmp(a, b));
        (*nth & self.index_mask()) as u32
    }

    /// π⁻¹(k): the rank of pair `k`, counting the pairs below it.
    pub fn inverse(&self, n: u32, k: u32) -> u32 {
        let pivot = self.key(k);
        let mut rank = 0u32;
        for j in 0..n {
            rank += u32::from(self.less(self.key(j), pivot));
        }
        rank
    }
}
