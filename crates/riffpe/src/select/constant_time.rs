//! Constant-time selection ([`Selection::ConstantTime`](super::Selection::ConstantTime)):
//! branches and memory accesses that depend only on the radix and `bytes_per_value`.

use super::KeyLayout;
use super::mask;

/// Largest radix whose keys [`Ranks`] ranks as they arrive.
pub(crate) const RANKED_RADIX: u32 = 256;

/// Keys ranked side by side: a multiple of every SIMD width the ranking loop compiles to.
const LANES: usize = 4;

/// Keys with the top bit flipped order as signed numbers do, which SIMD compares natively.
const SIGN: u64 = 1 << 63;

/// The ranks of one message's keys, kept up to date as each key arrives from its AES chain
/// ([`KeyLayout::rank_arrival`]): one message is bound by AES latency, so the n²/2 compares run
/// while the next block is in flight, and constant-time π costs a masked scan afterwards.
pub(crate) struct Ranks {
    /// The keys so far, sign-flipped; `i64::MIN` past the newest, so whole chunks of
    /// [`LANES`] can be compared without a tail.
    keys: [i64; RANKED_RADIX as usize],
    ranks: [i64; RANKED_RADIX as usize],
}

impl Ranks {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Ranks {
            keys: [i64::MIN; RANKED_RADIX as usize],
            ranks: [0; RANKED_RADIX as usize],
        }
    }

    /// Ready for a step of radix `n` (at most [`RANKED_RADIX`]): only the entries it compares
    /// are cleared.
    #[inline(always)]
    pub(crate) fn reset(&mut self, n: u32) {
        let len = (n as usize).next_multiple_of(LANES);
        self.keys[..len].fill(i64::MIN);
        self.ranks[..len].fill(0);
    }
}

impl KeyLayout {
    /// π(x) without secret-dependent branches or memory accesses: every key's rank is
    /// counted, and the index whose rank is x is picked with masks.
    #[inline(always)]
    pub(super) fn forward_constant_time(&self, keystream: &[u8], keys: &[u64], x: u32) -> u32 {
        self.pick(keystream, &keys[..self.n as usize], x)
    }

    /// Ranks `key`, the key of value `j` (keys arrive in order), against the keys before it,
    /// and counts it into their ranks: after key `n − 1`, `ranks[k]` is key `k`'s rank among
    /// all by key order. Every compare is made, whatever the keys; the loop is branch-free over
    /// whole chunks so that it compiles to SIMD compares where the CPU has them.
    #[inline(always)]
    pub(crate) fn rank_arrival(&self, key: u64, j: usize, ranks: &mut Ranks) {
        let newest = (key ^ SIGN) as i64;
        ranks.keys[j] = newest;
        let len = j.div_ceil(LANES) * LANES;
        // How many earlier keys order above the newest; key j and the padding past it never do.
        let mut above = 0;
        for (&key, rank) in ranks.keys[..len].iter().zip(&mut ranks.ranks[..len]) {
            let is_above = i64::from(newest < key);
            *rank += is_above;
            above += is_above;
        }
        // Keys are distinct (each holds its index), so the rest order below.
        ranks.ranks[j] = j as i64 - above;
    }

    /// π(x) from the ranks of all `n` keys, picked with masks. Key order is pair order except
    /// among keys whose leading bits tie, which sit side by side in both orders; so only if
    /// the picked key ties with another (and keys are not exact) is π(x) ranked again with
    /// whole values compared, as [`Self::forward_constant_time`] does.
    #[inline(always)]
    pub(crate) fn pick_ranked(&self, keystream: &[u8], keys: &[u64], ranks: &Ranks, x: u32) -> u32 {
        let n = self.n as usize;
        let x = i64::from(x);
        let mut found = 0u64;
        for (&key, &rank) in ranks.keys[..n].iter().zip(&ranks.ranks[..n]) {
            found |= key as u64 & mask(rank == x);
        }
        let mut same_lead = 0u32;
        for &key in &ranks.keys[..n] {
            same_lead += u32::from(self.same_lead(key as u64, found));
        }
        if !self.exact() && same_lead != 1 {
            return self.forward_constant_time(keystream, keys, x as u32);
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
