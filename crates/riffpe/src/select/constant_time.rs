//! Constant-time selection ([`Selection::ConstantTime`](super::Selection::ConstantTime)):
//! branches and memory accesses that depend only on the radix and `bytes_per_value`.

use super::KeyLayout;
use super::mask;

/// Largest radix whose keys [`Ranks`] ranks as they arrive.
pub(crate) const RANKED_RADIX: u32 = 256;

/// The ranks of one message's keys, kept up to date as each key arrives from its AES chain
/// ([`KeyLayout::rank_arrival`]): one message is bound by AES latency, so the n²/2 compares run
/// while the next block is in flight, and constant-time π costs a masked scan afterwards.
pub(crate) struct Ranks {
    ranks: [u32; RANKED_RADIX as usize],
    /// Nonzero once two keys share their leading bits (see [`KeyLayout::pick_ranked`]).
    tied: u64,
}

impl Ranks {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Ranks {
            ranks: [0; RANKED_RADIX as usize],
            tied: 0,
        }
    }
}

impl KeyLayout {
    /// π(x) without secret-dependent branches or memory accesses: every key's rank is
    /// counted, and the index whose rank is x is picked with masks.
    #[inline(always)]
    pub(super) fn forward_constant_time(&self, keystream: &[u8], keys: &[u64], x: u32) -> u32 {
        self.pick(keystream, &keys[..self.n as usize], x)
    }

    /// Ranks key `j`, the newest of `keys[..=j]`, against the keys before it, and counts it
    /// into their ranks: after key `n − 1`, `ranks[k]` is key `k`'s rank among all (unless leading
    /// bits tie). Every compare is made, whatever the keys.
    #[inline(always)]
    pub(crate) fn rank_arrival(&self, keys: &[u64], j: usize, ranks: &mut Ranks) {
        let (before, newest) = (&keys[..j], keys[j]);
        let mut below = 0u32;
        let mut tied = 0u64;
        for (rank, &key) in ranks.ranks[..j].iter_mut().zip(before) {
            let above = u32::from(newest < key);
            *rank += above;
            below += 1 - above;
            tied |= mask((key ^ newest) & self.value_mask() == 0);
        }
        ranks.ranks[j] = below;
        ranks.tied |= tied;
    }

    /// π(x) from the ranks of all `n` keys, picked with masks; if two keys' leading bits tied
    /// (and keys are not exact), ranked again with whole values compared, as
    /// [`Self::forward_constant_time`] does.
    #[inline(always)]
    pub(crate) fn pick_ranked(&self, keystream: &[u8], keys: &[u64], ranks: &Ranks, x: u32) -> u32 {
        if !self.exact() && ranks.tied != 0 {
            return self.forward_constant_time(keystream, keys, x);
        }
        let n = self.n as usize;
        let mut found = 0u64;
        for (&key, &rank) in keys[..n].iter().zip(&ranks.ranks[..n]) {
            found |= key & mask(rank == x);
        }
        (found & self.index_mask()) as u32
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
