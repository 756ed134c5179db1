//! Constant-time selection ([`Selection::ConstantTime`](super::Selection::ConstantTime)):
//! branches and memory accesses that depend only on the radix and `bytes_per_value`.

use super::KeyLayout;
use super::mask;

/// Largest radix whose keys one message keeps as they arrive ([`Ranks`], [`Halves`]).
pub(crate) const RANKED_RADIX: u32 = 256;

/// Radices from this one on search for π(x) after the chain ([`Halves::search`]) instead of
/// ranking each key as it arrives: the n²/2 compares of ranking outgrow what hides behind the
/// chain, while the search's 32 passes over n keys (two bits a pass) stay short beside it.
pub(crate) const SEARCHED_RADIX: u32 = 128;

/// Keys ranked side by side: a multiple of every SIMD width the ranking loop compiles to.
const LANES: usize = 4;

/// Radices below this one pick π(x) by ranking every key ([`KeyLayout::pick`]) where keys are
/// not ranked as they arrive (lockstep, radices above [`RANKED_RADIX`]); from it on, a search
/// ([`Halves::search`], or [`largest_at_most`] over whole keys) costs less than n² compares.
const PICKED_RADIX: u32 = 48;

/// Keys with the top bit flipped order as signed numbers do, which SIMD compares natively.
const SIGN: u64 = 1 << 63;

/// The same for a key's halves.
const SIGN32: u32 = 1 << 31;

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

    /// Ready for a step of radix `n` (below [`SEARCHED_RADIX`]): only the entries it compares
    /// are cleared.
    #[inline(always)]
    pub(crate) fn reset(&mut self, n: u32) {
        let len = (n as usize).next_multiple_of(LANES);
        self.keys[..len].fill(i64::MIN);
        self.ranks[..len].fill(0);
    }
}

/// One message's keys for constant-time π from radix [`SEARCHED_RADIX`] to [`RANKED_RADIX`],
/// kept as they arrive ([`Halves::set`]) and searched after the chain ([`Halves::search`]):
/// split into sign-flipped 32-bit halves, so that a SIMD compare takes twice as many.
pub(crate) struct Halves {
    high: [i32; RANKED_RADIX as usize],
    low: [i32; RANKED_RADIX as usize],
    /// Keys kept, rounded up to whole chunks of [`HALF_LANES`].
    len: usize,
}

/// Halves compared side by side: a multiple of every SIMD width the search compiles to.
const HALF_LANES: usize = 8;

impl Halves {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Halves {
            high: [i32::MAX; RANKED_RADIX as usize],
            low: [i32::MAX; RANKED_RADIX as usize],
            len: 0,
        }
    }

    /// Ready for `n` keys. Past them, both halves are the largest value, which no candidate
    /// lies above, so padding never counts.
    #[inline(always)]
    pub(crate) fn reset(&mut self, n: usize) {
        self.len = n.next_multiple_of(HALF_LANES);
        self.high[..self.len].fill(i32::MAX);
        self.low[..self.len].fill(i32::MAX);
    }

    /// Keeps key `j`.
    #[inline(always)]
    pub(crate) fn set(&mut self, j: usize, key: u64) {
        self.high[j] = flip32(key >> 32);
        self.low[j] = flip32(key);
    }

    /// The key of rank `x` (0-based) among those kept, found bit by bit from the top: a
    /// candidate bit is kept when at most x keys lie below the candidate, so the result is
    /// the largest value with at most x keys below it, which is the key of rank x (keys are
    /// distinct). Two bits a pass, each pass branch-free over all keys: 16 over the high
    /// halves, then 16 over the low halves of the keys whose high half is the answer's.
    #[inline(always)]
    pub(crate) fn search(&self, x: u32) -> u64 {
        let len = self.len;
        let high = largest_at_most(&self.high[..len], 0, x, 32, flip32);
        // Keys whose high half is below the answer's all lie below; of the others, only those
        // with the same high half can, by their low halves.
        let flipped = flip32(high);
        let mut low_of_equal = [i32::MAX; RANKED_RADIX as usize];
        let mut under = 0u32;
        for ((low, &h), &l) in low_of_equal[..len]
            .iter_mut()
            .zip(&self.high[..len])
            .zip(&self.low[..len])
        {
            under += u32::from(h < flipped);
            *low = pick32(h == flipped, l as u32, i32::MAX as u32) as i32;
        }
        let low = largest_at_most(&low_of_equal[..len], under, x, 32, flip32);
        high << 32 | low
    }
}

/// What constant-time π of one message keeps as its keys arrive, made once per call for the
/// radices the call will see: [`Ranks`] below [`SEARCHED_RADIX`], [`Halves`] up to
/// [`RANKED_RADIX`] (each only if some radix needs it).
pub(crate) struct Kept {
    ranks: Option<Ranks>,
    halves: Option<Halves>,
}

/// Where one step's keys go as they arrive ([`Kept::step`]).
pub(crate) enum Arrivals<'a> {
    Ranked(&'a mut Ranks),
    Searched(&'a mut Halves),
}

impl Arrivals<'_> {
    /// The same place, borrowed for a shorter while.
    #[inline(always)]
    pub(crate) fn reborrow(&mut self) -> Arrivals<'_> {
        match self {
            Arrivals::Ranked(ranks) => Arrivals::Ranked(ranks),
            Arrivals::Searched(halves) => Arrivals::Searched(halves),
        }
    }
}

impl Kept {
    #[inline(always)]
    pub(crate) fn for_radices(radices: impl Iterator<Item = u32> + Clone) -> Self {
        Kept {
            ranks: radices.clone().any(ranked).then(Ranks::new),
            halves: radices.into_iter().any(searched).then(Halves::new),
        }
    }

    /// Ready for a step of radix `n`: where its keys go, or `None` above [`RANKED_RADIX`].
    #[inline(always)]
    pub(crate) fn step(&mut self, n: u32) -> Option<Arrivals<'_>> {
        if ranked(n) {
            let ranks = self.ranks.as_mut()?;
            ranks.reset(n);
            Some(Arrivals::Ranked(ranks))
        } else if searched(n) {
            let halves = self.halves.as_mut()?;
            halves.reset(n as usize);
            Some(Arrivals::Searched(halves))
        } else {
            None
        }
    }
}

/// Whether one message ranks its keys as they arrive at radix `n`.
#[inline(always)]
fn ranked(n: u32) -> bool {
    n < SEARCHED_RADIX
}

/// Whether one message keeps its keys' halves for a search at radix `n`.
#[inline(always)]
fn searched(n: u32) -> bool {
    (SEARCHED_RADIX..=RANKED_RADIX).contains(&n)
}

/// The largest `bits`-bit value `v` with at most `x` values below it: `under` plus those of
/// `values` below `key(v)`, where `key` maps a value to the form `values` hold. Found from the
/// top bit down, two bits a pass over the values, branch-free: three counts a pass cost less
/// than waiting for each pass's count, which is what bounds a pass over a few hundred keys.
#[inline(always)]
fn largest_at_most<T: Copy + PartialOrd>(
    values: &[T],
    under: u32,
    x: u32,
    bits: u32,
    key: impl Fn(u64) -> T,
) -> u64 {
    let mut found = 0u64;
    for shift in (0..bits).step_by(2).rev() {
        // Counts below are nondecreasing in the candidate, so the candidates that keep at most
        // x below are a prefix of the three, and their number is the next two bits.
        let [one, two, three] = [1u64, 2, 3].map(|step| key(found | step << shift));
        let (mut a, mut b, mut c) = (under, under, under);
        for &value in values {
            a += u32::from(value < one);
            b += u32::from(value < two);
            c += u32::from(value < three);
        }
        found |= u64::from(u32::from(a <= x) + u32::from(b <= x) + u32::from(c <= x)) << shift;
    }
    found
}

/// A 32-bit half as [`Halves`] keeps it.
#[inline(always)]
fn flip32(half: u64) -> i32 {
    (half as u32 ^ SIGN32) as i32
}

/// `yes` if `condition`, else `no`, by masks rather than a branch.
#[inline(always)]
fn pick32(condition: bool, yes: u32, no: u32) -> u32 {
    let take = u32::from(condition).wrapping_neg();
    (yes & take) | (no & !take)
}

impl KeyLayout {
    /// π(x) without secret-dependent branches or memory accesses: every key's rank is
    /// counted, and the index whose rank is x is picked with masks; from [`PICKED_RADIX`] on,
    /// where n² compares cost more, the key of rank x is searched for bit by bit (32 passes
    /// over the keys, by halves up to [`RANKED_RADIX`]).
    #[inline(always)]
    pub(super) fn forward_constant_time(&self, keystream: &[u8], keys: &[u64], x: u32) -> u32 {
        let keys = &keys[..self.n as usize];
        if self.n < PICKED_RADIX {
            return self.pick(keystream, keys, x);
        }
        let found = if self.n <= RANKED_RADIX {
            let mut halves = Halves::new();
            halves.len = keys.len().next_multiple_of(HALF_LANES);
            for (j, &key) in keys.iter().enumerate() {
                halves.set(j, key);
            }
            halves.search(x)
        } else {
            largest_at_most(keys, 0, x, 64, |key| key)
        };
        self.index_unless_tied(keystream, keys, found, x)
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
    /// whole values compared.
    #[inline(always)]
    pub(crate) fn pick_ranked(&self, keystream: &[u8], keys: &[u64], ranks: &Ranks, x: u32) -> u32 {
        let n = self.n as usize;
        let mut found = 0u64;
        for (&key, &rank) in ranks.keys[..n].iter().zip(&ranks.ranks[..n]) {
            found |= key as u64 & mask(rank == i64::from(x));
        }
        self.index_unless_tied(keystream, keys, found ^ SIGN, x)
    }

    /// Keeps `key`, the key of value `j`, as the step's [`Arrivals`] ask.
    #[inline(always)]
    pub(crate) fn arrive(&self, key: u64, j: usize, arrivals: &mut Arrivals<'_>) {
        match arrivals {
            Arrivals::Ranked(ranks) => self.rank_arrival(key, j, ranks),
            Arrivals::Searched(halves) => halves.set(j, key),
        }
    }

    /// π(x) from what the step kept of all `n` keys (`keys` holds them too).
    #[inline(always)]
    pub(crate) fn pick_arrived(
        &self,
        keystream: &[u8],
        keys: &[u64],
        arrivals: &Arrivals<'_>,
        x: u32,
    ) -> u32 {
        match arrivals {
            Arrivals::Ranked(ranks) => self.pick_ranked(keystream, keys, ranks, x),
            Arrivals::Searched(halves) => self.pick_searched(keystream, keys, halves, x),
        }
    }

    /// π(x) from the kept halves of all `n` keys, by [`Halves::search`]; ties as for
    /// [`Self::pick_ranked`].
    #[inline(always)]
    pub(crate) fn pick_searched(
        &self,
        keystream: &[u8],
        keys: &[u64],
        halves: &Halves,
        x: u32,
    ) -> u32 {
        self.index_unless_tied(keystream, keys, halves.search(x), x)
    }

    /// The index `found`, the key of rank x, carries; unless another key shares its leading
    /// bits (and keys are not exact): then π(x) is picked again with whole values compared.
    #[inline(always)]
    fn index_unless_tied(&self, keystream: &[u8], keys: &[u64], found: u64, x: u32) -> u32 {
        let mut same_lead = 0u32;
        for &key in &keys[..self.n as usize] {
            same_lead += u32::from(self.same_lead(key, found));
        }
        if !self.exact() && same_lead != 1 {
            return self.pick(keystream, &keys[..self.n as usize], x);
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

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    /// Distinct keys whose high halves come from a tiny alphabet (so that many tie and the
    /// low halves decide) or are arbitrary, and whose lows share bits with each other.
    fn keys() -> impl Strategy<Value = Vec<u64>> {
        let high = prop_oneof![
            0u64..3,
            Just(u64::from(u32::MAX)),
            any::<u32>().prop_map(u64::from)
        ];
        let low = prop_oneof![0u64..4, any::<u32>().prop_map(u64::from)];
        proptest::collection::btree_set((high, low).prop_map(|(h, l)| h << 32 | l), 1..=256)
            .prop_map(|set| set.into_iter().collect())
    }

    proptest! {
        #[test]
        fn search_finds_the_key_of_each_rank(mut keys in keys(), seed in any::<u64>()) {
            // Kept in an order other than sorted, as keys arrive.
            let len = keys.len();
            keys.rotate_left(seed as usize % len);
            let mut halves = Halves::new();
            // A previous, longer step's halves must not leak into this one.
            halves.reset(RANKED_RADIX as usize);
            for j in 0..RANKED_RADIX as usize {
                halves.set(j, seed.wrapping_mul(j as u64 + 1));
            }
            halves.reset(len);
            for (j, &key) in keys.iter().enumerate() {
                halves.set(j, key);
            }
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            for (x, &expected) in sorted.iter().enumerate() {
                prop_assert_eq!(halves.search(x as u32), expected, "rank {} of {}", x, len);
                let whole = largest_at_most(&keys, 0, x as u32, 64, |key| key);
                prop_assert_eq!(whole, expected, "rank {} of {}", x, len);
            }
        }
    }
}
