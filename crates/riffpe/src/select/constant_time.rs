//! Constant-time selection ([`Selection::ConstantTime`](super::Selection::ConstantTime)):
//! branches and memory accesses that depend only on the radix and `bytes_per_value`.

use super::KeyLayout;
use super::mask;

impl KeyLayout {
    /// π(x) without secret-dependent branches or memory accesses: every key's rank is
    /// counted, and the index whose rank is x is picked with masks.
    #[inline(always)]
    pub(super) fn forward_constant_time(&self, keystream: &[u8], keys: &[u64], x: u32) -> u32 {
        self.pick(keystream, &keys[..self.n as usize], x)
    }

    /// π⁻¹(k) without secret-dependent branches or memory accesses: key `k` is fetched by a
    /// masked scan, then ranked.
    #[inline(always)]
    pub(super) fn inverse_constant_time(&self, keystream: &[u8], keys: &[u64], k: u32) -> u32 {
        let keys = &keys[..self.n as usize];
        let mut pivot = 0u64;
        for (j, &key) in keys.iter().enumerate() {
            pivot |= key & mask(j as u32 == k);
        }
        self.rank(keystream, keys.iter().copied(), pivot)
    }
}
