//! Constant-time selection ([`Selection::ConstantTime`](super::Selection::ConstantTime)):
//! branches and memory accesses that depend only on the radix and `bytes_per_value`.

use super::quarter_search::{Pair, quarter_of, search_lead, search_one};
use super::{KeyLayout, OneMessage, RankedLeads, Vector128, WideSearch, mask};

/// Largest radix whose keys one message keeps as they arrive ([`Ranks`], [`Quarters`],
/// [`LeadRanks`]).
pub(crate) const RANKED_RADIX: u32 = 256;

/// Radices from this one on search for π(x) after the chain ([`KeyLayout::pick_searched`])
/// instead of ranking each key as it arrives: the n²/2 compares of ranking outgrow what hides
/// behind the chain, while the search's passes over n/16 vectors stay short beside it.
pub(crate) const SEARCHED_RADIX: u32 = 48;

/// [`SEARCHED_RADIX`] on other CPUs than AMD's Zen cores where AVX-512 searches ([`WideSearch`]),
/// such as Intel's Xeons: on the one measured, that search cost less than ranking on arrival from
/// radix 32 on (the two tied at 24 and 28; BENCHMARKS.md).
pub(crate) const SEARCHED_RADIX_WIDE: u32 = 32;

/// Every radix one message may search from: `OneMessage::detect` picks one for the CPU.
pub(crate) const SEARCHED_RADICES: [u32; 2] = [SEARCHED_RADIX_WIDE, SEARCHED_RADIX];

/// The largest of the radices one message searches from: [`Ranks`] holds a key for each radix
/// below it.
pub(crate) const LARGEST_SEARCHED_RADIX: u32 = SEARCHED_RADIX;

/// Leads (or ranks) of [`LeadRanks`] that `avx2::rank_lead` loads and stores at a time: a
/// 256-bit vector.
pub(crate) const LEAD_LANES: usize = 16;

/// One message's keys' leading 16 bits and their ranks, kept as the keys arrive
/// (`avx2::rank_lead`). Keys are ordered by leading bits, then by index: that order is the keys'
/// own but among keys that share their leading 16 bits, which sit side by side in both orders;
/// so after the chain the key of rank x shares its leading bits with the key ranked x, and is
/// found among the few that do. Ranking 16-bit leads costs a quarter of the compares of whole
/// keys, few enough to issue between the chain's AES rounds.
#[repr(C, align(64))]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) struct LeadRanks {
    /// The keys' leading bits with the top bit flipped (so that they order as signed numbers,
    /// which AVX2 compares); past the keys that have arrived 0x8000, the least.
    pub(super) leads: [u16; RANKED_RADIX as usize],
    /// Once all `n` keys have arrived, `ranks[i]` is the number of keys that come after key `i`
    /// less n − 1 (as a signed number): each key that arrives after key `i` would add one, and
    /// the rank leaves that out.
    pub(super) ranks: [u16; RANKED_RADIX as usize],
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
impl LeadRanks {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        LeadRanks {
            leads: [LEAST_LEAD; RANKED_RADIX as usize],
            ranks: [0; RANKED_RADIX as usize],
        }
    }

    /// Ready for a step of `n` keys: the vectors they fill as `avx2::rank_lead` needs them.
    #[inline(always)]
    pub(crate) fn reset(&mut self, n: usize) {
        let lanes = n.next_multiple_of(LEAD_LANES);
        self.leads[..lanes].fill(LEAST_LEAD);
        self.ranks[..lanes].fill(0);
    }
}

/// The least lead of [`LeadRanks`], sign-flipped: no key's lies below it.
const LEAST_LEAD: u16 = 0x8000;

/// Keys ranked side by side: a multiple of every SIMD width the ranking loop compiles to.
const LANES: usize = 4;

/// Radices below this one pick π(x) by ranking every key ([`KeyLayout::pick`]) where keys are
/// not ranked as they arrive (lockstep, radices above [`RANKED_RADIX`]); from it on, a search
/// ([`KeyLayout::pick_searched`], or [`largest_at_most`] over whole keys) costs less than n²
/// compares.
const PICKED_RADIX: u32 = 48;

/// Keys that share the leading 16 bits of the key of rank x, gathered by one message's
/// constant-time π ([`KeyLayout::rank_gathered`]): more share them with probability below
/// C(n, 6)·2^-80 per step up to radix [`RANKED_RADIX`].
pub(super) const GATHERED: usize = 5;

/// Keys with the top bit flipped order as signed numbers do, which SIMD compares natively.
const SIGN: u64 = 1 << 63;

/// The ranks of one message's keys, kept up to date as the keys arrive from its AES chain,
/// [`LANES`] at a time ([`KeyLayout::rank_arrival`]): one message is bound by AES latency, so
/// the n²/2 compares run while the next blocks are in flight, and constant-time π costs a
/// masked scan afterwards. Ranking a batch at a time halves the instructions that compete
/// with the chain for the core.
///
/// A step needs no clearing: a batch's ranks are set when it is first compared, before any
/// later batch counts into them, and only keys that have arrived are compared. Past the step's
/// last key, a partial batch's slots hold what an earlier step left, and are never read.
pub(crate) struct Ranks {
    /// The keys so far, sign-flipped.
    keys: [i64; LARGEST_SEARCHED_RADIX as usize],
    ranks: [i64; LARGEST_SEARCHED_RADIX as usize],
}

impl Ranks {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Ranks {
            keys: [0; LARGEST_SEARCHED_RADIX as usize],
            ranks: [0; LARGEST_SEARCHED_RADIX as usize],
        }
    }

    /// Ranks the keys of a step of radix `n` that are not yet ranked: a partial batch. After
    /// it, `ranks[k]` is key `k`'s rank among all `n` by key order.
    #[inline(always)]
    fn finish(&mut self, n: usize) {
        if !n.is_multiple_of(LANES) {
            self.rank_batch(n - n % LANES, n % LANES);
        }
    }

    /// Ranks the batch of `count` keys (at most [`LANES`]) from `start` (a multiple of
    /// [`LANES`]) against each other and every key before them, all at once.
    #[inline(always)]
    fn rank_batch(&mut self, start: usize, count: usize) {
        let batch = self.batch(start, count);
        self.rank_within(start, &batch);
        self.rank_against(start, &batch);
    }

    /// The batch from `start` of `count` keys (at most [`LANES`]), padded with the largest key
    /// (which lies below no key).
    #[inline(always)]
    fn batch(&self, start: usize, count: usize) -> [i64; LANES] {
        // Loops, here and in `rank_against`, not `array::from_fn` or `map`: LLVM may leave the
        // closure that `core`'s generic code calls as a call in the chain's loop.
        let mut batch = [i64::MAX; LANES];
        for (a, new) in batch.iter_mut().enumerate().take(count) {
            *new = self.keys[start + a];
        }
        batch
    }

    /// Sets the ranks of `batch`, the keys from `start` ([`Ranks::batch`]), to their ranks among
    /// the batch plus `start`, as if every earlier key lay below them: [`Ranks::rank_against`]
    /// takes away those above.
    #[inline(always)]
    fn rank_within(&mut self, start: usize, batch: &[i64; LANES]) {
        // Keys are distinct (each holds its index); padding, the largest key, counts none.
        for (l, rank) in self.ranks[start..start + LANES].iter_mut().enumerate() {
            let key = self.keys[start + l];
            let within: i64 = batch.iter().map(|&new| i64::from(new < key)).sum();
            *rank = within + start as i64;
        }
    }

    /// Compares `batch`, the keys from `start`, with every key before them: counts the batch's
    /// keys below each earlier key into its rank, and takes the earlier keys above each key of
    /// the batch from the batch's ranks. A batch of keys shares each load and store
    /// of the earlier keys and ranks, where ranking keys one by one spends them on a single
    /// compare each. Every compare is made, whatever the keys; the loops are branch-free over
    /// whole chunks so that they compile to SIMD compares where the CPU has them.
    #[inline(always)]
    fn rank_against(&mut self, start: usize, batch: &[i64; LANES]) {
        let mut above = [0i64; LANES];
        for (&key, rank) in self.keys[..start].iter().zip(&mut self.ranks[..start]) {
            let mut is_above = [0; LANES];
            for (is_above, &new) in is_above.iter_mut().zip(batch) {
                *is_above = i64::from(new < key);
            }
            *rank += is_above.iter().sum::<i64>();
            for (above, is_above) in above.iter_mut().zip(is_above) {
                *above += is_above;
            }
        }
        for (rank, above) in self.ranks[start..start + LANES].iter_mut().zip(above) {
            *rank -= above;
        }
    }
}

/// One message's keys for constant-time π from the radix it searches from ([`Kept`]) to
/// [`RANKED_RADIX`], their leading quarters kept as they arrive ([`Quarters::set_lead`]) and
/// searched after the chain ([`Quarters::search_lead`]), all four only if the search must go on
/// ([`Quarters::search`]): 16-bit quarters, sixteen keys to a pair of 128-bit vectors
/// (`quarter_search`).
#[derive(Clone)]
pub(crate) struct Quarters {
    pairs: [Pair; RANKED_RADIX as usize / KEYS_PER_PAIR],
    /// Pairs in use.
    len: usize,
}

/// Keys in a [`Pair`].
const KEYS_PER_PAIR: usize = 16;

/// A word of quarters that are all the largest value: padding, which no candidate lies above.
const PADDING: u64 = 0x7fff_7fff_7fff_7fff;

impl Quarters {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Quarters {
            pairs: [[PADDING; KEYS_PER_PAIR]; RANKED_RADIX as usize / KEYS_PER_PAIR],
            len: 0,
        }
    }

    /// Ready for `n` keys, those past them padding.
    #[inline(always)]
    pub(crate) fn reset(&mut self, n: usize) {
        self.len = n.div_ceil(KEYS_PER_PAIR);
        self.pairs[..self.len].fill([PADDING; KEYS_PER_PAIR]);
    }

    /// Keeps every quarter of `keys`, the step's.
    #[inline(always)]
    fn set_all(&mut self, keys: &[u64]) -> &mut Self {
        for (j, &key) in keys.iter().enumerate() {
            self.set(j, key);
        }
        self
    }

    /// Keeps key `j`: its quarter `q` is value `j mod 16` of the pair's words `4q..4q + 4`.
    #[inline(always)]
    pub(crate) fn set(&mut self, j: usize, key: u64) {
        let (pair, i) = (&mut self.pairs[j / KEYS_PER_PAIR], j % KEYS_PER_PAIR);
        let shift = 16 * (i % 4);
        for q in 0..4 {
            let word = &mut pair[4 * q + i / 4];
            let quarter = u64::from(quarter_of(key, q) as u16);
            *word = *word & !(0xffff << shift) | quarter << shift;
        }
    }

    /// The key of rank `x` (0-based) among those kept, and whether another key shares its
    /// leading bits (never where keys are exact). Overwrites the quarters.
    #[inline(always)]
    pub(crate) fn search(&mut self, layout: &KeyLayout, x: u32) -> (u64, bool) {
        search_one::<Vector128>(&mut self.pairs[..self.len], layout, x)
    }

    /// Keeps key `j`'s leading quarter only: all [`Quarters::search_lead`] reads, the rest
    /// being made from the keys only if more than [`GATHERED`] keys share it.
    #[inline(always)]
    pub(crate) fn set_lead(&mut self, j: usize, key: u64) {
        let (pair, i) = (&mut self.pairs[j / KEYS_PER_PAIR], j % KEYS_PER_PAIR);
        let shift = 16 * (i % 4);
        let word = &mut pair[i / 4];
        let quarter = u64::from(quarter_of(key, 0) as u16);
        *word = *word & !(0xffff << shift) | quarter << shift;
    }

    /// The leading quarter (sign-flipped) of the key of rank `x` (0-based) among those kept,
    /// and how many keys lie below it by that quarter.
    #[inline(always)]
    fn search_lead(&self, x: u32) -> (i16, u32) {
        search_lead::<Vector128>(&self.pairs[..self.len], x)
    }

    /// [`Quarters::search`] in plain Rust, its reference.
    #[cfg(test)]
    fn search_scalar(&mut self, layout: &KeyLayout, x: u32) -> (u64, bool) {
        search_one::<super::quarter_search::Scalar>(&mut self.pairs[..self.len], layout, x)
    }
}

/// What constant-time π of one message keeps as its keys arrive, made once per call for the
/// radices the call will see: [`Ranks`] below the radix it searches from
/// ([`OneMessage::searched_radix`]), from there up to [`RANKED_RADIX`] [`LeadRanks`] where
/// leading bits are ranked on arrival ([`RankedLeads`]), else nothing where AVX-512 searches the
/// keys themselves ([`WideSearch`]), else [`Quarters`] (each only if some radix needs it).
pub(crate) struct Kept {
    ranks: Option<Ranks>,
    quarters: Option<Quarters>,
    leads: Option<LeadRanks>,
    one_message: OneMessage,
}

/// Where one step's keys go as they arrive ([`Kept::step`]).
pub(crate) enum Arrivals<'a> {
    Ranked(&'a mut Ranks),
    Searched(&'a mut Quarters),
    /// Nowhere but the keys: AVX-512 searches those after the chain.
    Wide(WideSearch),
    /// Their leading 16 bits ranked on arrival, π(x) picked from those ranks.
    LeadsRanked(RankedLeads, &'a mut LeadRanks),
}

impl Arrivals<'_> {
    /// The same place, borrowed for a shorter while.
    #[inline(always)]
    pub(crate) fn reborrow(&mut self) -> Arrivals<'_> {
        match self {
            Arrivals::Ranked(ranks) => Arrivals::Ranked(ranks),
            Arrivals::Searched(quarters) => Arrivals::Searched(quarters),
            Arrivals::Wide(wide) => Arrivals::Wide(*wide),
            Arrivals::LeadsRanked(leads, ranked) => Arrivals::LeadsRanked(*leads, ranked),
        }
    }
}

impl Kept {
    /// For steps of `radices`, searched for after the chain as `one_message` says from its
    /// radix on, and ranked on arrival below.
    #[inline(always)]
    pub(crate) fn for_radices(
        radices: impl Iterator<Item = u32> + Clone,
        one_message: OneMessage,
    ) -> Self {
        let searched_from = one_message.searched_radix;
        debug_assert!(SEARCHED_RADICES.contains(&searched_from));
        let ranked = |n| n < searched_from;
        let quartered = |n| {
            one_message.wide.is_none()
                && one_message.leads.is_none()
                && (searched_from..=RANKED_RADIX).contains(&n)
        };
        let leads_ranked =
            |n| one_message.leads.is_some() && (searched_from..=RANKED_RADIX).contains(&n);
        Kept {
            ranks: radices.clone().any(ranked).then(Ranks::new),
            quarters: radices.clone().any(quartered).then(Quarters::new),
            leads: radices.into_iter().any(leads_ranked).then(LeadRanks::new),
            one_message,
        }
    }

    /// Ready for a step of radix `n`: where its keys go, or `None` above [`RANKED_RADIX`].
    #[inline(always)]
    pub(crate) fn step(&mut self, n: u32) -> Option<Arrivals<'_>> {
        if n < self.one_message.searched_radix {
            Some(Arrivals::Ranked(self.ranks.as_mut()?))
        } else if n > RANKED_RADIX {
            None
        } else if let Some(ranking) = self.one_message.leads {
            let leads = self.leads.as_mut()?;
            leads.reset(n as usize);
            Some(Arrivals::LeadsRanked(ranking, leads))
        } else if let Some(wide) = self.one_message.wide {
            Some(Arrivals::Wide(wide))
        } else {
            let quarters = self.quarters.as_mut()?;
            quarters.reset(n as usize);
            Some(Arrivals::Searched(quarters))
        }
    }
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

impl KeyLayout {
    /// π(x) without secret-dependent branches or memory accesses: every key's rank is
    /// counted, and the index whose rank is x is picked with masks; from [`PICKED_RADIX`] on,
    /// where n² compares cost more, the key of rank x is searched for bit by bit (its leading
    /// quarter up to [`RANKED_RADIX`], then the few keys that share it, as
    /// [`KeyLayout::pick_searched`] does; two bits a pass over whole keys above).
    #[inline(always)]
    pub(super) fn forward_constant_time(&self, keystream: &[u8], keys: &[u64], x: u32) -> u32 {
        let keys = &keys[..self.n as usize];
        if self.n < PICKED_RADIX {
            return self.pick(keystream, keys, x);
        }
        if self.n <= RANKED_RADIX {
            // Made padded throughout, so only the pairs in use need counting.
            let mut quarters = Quarters::new();
            quarters.len = keys.len().div_ceil(KEYS_PER_PAIR);
            for (j, &key) in keys.iter().enumerate() {
                quarters.set_lead(j, key);
            }
            self.pick_searched(keystream, keys, &mut quarters, x)
        } else {
            let found = largest_at_most(keys, 0, x, 64, |key| key);
            self.index_unless_tied(keystream, keys, found, x)
        }
    }

    /// Keeps `key`, the key of value `j` (keys arrive in order), and ranks the batch it
    /// completes ([`Ranks::rank_batch`]); what a step leaves is ranked by [`Ranks::finish`],
    /// which [`KeyLayout::pick_ranked`] calls.
    #[inline(always)]
    pub(crate) fn rank_arrival(&self, key: u64, j: usize, ranks: &mut Ranks) {
        ranks.keys[j] = (key ^ SIGN) as i64;
        if j % LANES == LANES - 1 {
            ranks.rank_batch(j + 1 - LANES, LANES);
        }
    }

    /// π(x) from the ranks of all `n` keys, once the last keys that arrived are ranked, picked
    /// with masks. Key order is pair order except among keys whose leading bits tie, which sit
    /// side by side in both orders; so only if the picked key ties with a key beside it (of
    /// rank x − 1 or x + 1, picked in the same pass) and keys are not exact is π(x) ranked
    /// again with whole values compared.
    #[inline(always)]
    pub(crate) fn pick_ranked(
        &self,
        keystream: &[u8],
        keys: &[u64],
        ranks: &mut Ranks,
        x: u32,
    ) -> u32 {
        let n = self.n as usize;
        ranks.finish(n);
        // The keys of rank x and of the ranks beside it: a key that ties the found one's
        // leading bits lies beside it.
        let (mut below, mut found, mut above) = (0u64, 0u64, 0u64);
        let x = i64::from(x);
        for (&key, &rank) in ranks.keys[..n].iter().zip(&ranks.ranks[..n]) {
            below |= key as u64 & mask(rank == x - 1);
            found |= key as u64 & mask(rank == x);
            above |= key as u64 & mask(rank == x + 1);
        }
        let (below, found, above) = (below ^ SIGN, found ^ SIGN, above ^ SIGN);
        let tied = (x > 0) & self.same_lead(below, found)
            | (x + 1 < n as i64) & self.same_lead(above, found);
        if !self.exact() && tied {
            return self.pick(keystream, &keys[..n], x as u32);
        }
        (found & self.index_mask()) as u32
    }

    /// Keeps `key`, the key of value `j`, as the step's [`Arrivals`] ask.
    #[inline(always)]
    pub(crate) fn arrive(&self, key: u64, j: usize, arrivals: &mut Arrivals<'_>) {
        match arrivals {
            Arrivals::Ranked(ranks) => self.rank_arrival(key, j, ranks),
            Arrivals::Searched(quarters) => quarters.set_lead(j, key),
            Arrivals::Wide(_) => {}
            Arrivals::LeadsRanked(leads, ranked) => leads.rank_lead(ranked, j, key),
        }
    }

    /// π(x) from what the step kept of all `n` keys (`keys` holds them too).
    #[inline(always)]
    pub(crate) fn pick_arrived(
        &self,
        keystream: &[u8],
        keys: &[u64],
        arrivals: &mut Arrivals<'_>,
        x: u32,
    ) -> u32 {
        match arrivals {
            Arrivals::Ranked(ranks) => self.pick_ranked(keystream, keys, ranks, x),
            Arrivals::Searched(quarters) => self.pick_searched(keystream, keys, quarters, x),
            Arrivals::Wide(wide) => self.pick_wide(*wide, keystream, keys, x),
            Arrivals::LeadsRanked(leads, ranked) => {
                self.pick_leads_ranked(*leads, keystream, keys, ranked, x)
            }
        }
    }

    /// π(x) from the leading 16 bits of all `n` keys ranked as they arrived (`ranked`): the keys
    /// that share those of the key ranked x are gathered, by AVX-512 where it picks
    /// ([`RankedLeads::pick_ranked_lead`], at most eight), else with masks (at most
    /// [`GATHERED`]), and ranked against each other. If more share them, π(x) is picked as
    /// [`KeyLayout::forward_constant_time`] picks it; if the key found shares its leading bits
    /// with another, with whole values compared.
    #[inline(always)]
    fn pick_leads_ranked(
        &self,
        leads: RankedLeads,
        keystream: &[u8],
        keys: &[u64],
        ranked: &LeadRanks,
        x: u32,
    ) -> u32 {
        let keys = &keys[..self.n as usize];
        let found = leads
            .pick_ranked_lead(self, keys, ranked, x)
            .unwrap_or_else(|| {
                let (below, shared) = leads.lead_of_rank(ranked, keys.len(), x);
                (shared <= GATHERED as u32).then(|| {
                    let slots = leads.gather_ranked(keys, ranked, below, shared);
                    self.rank_slots(&slots, x - below)
                })
            });
        self.picked(found, keystream, keys, x)
    }

    /// π(x) from AVX-512's search over all `n` keys ([`WideSearch`]: their leading 16 bits
    /// searched, then the at most eight keys that share those gathered and ranked against each
    /// other). If more share them (probability below C(n, 9)·2^-128 per step), π(x) is
    /// picked as [`KeyLayout::forward_constant_time`] picks it; if the key found shares its
    /// leading bits with another, with whole values compared.
    #[inline(always)]
    pub(crate) fn pick_wide(
        &self,
        wide: WideSearch,
        keystream: &[u8],
        keys: &[u64],
        x: u32,
    ) -> u32 {
        let keys = &keys[..self.n as usize];
        self.picked(wide.pick(self, keys, x), keystream, keys, x)
    }

    /// π(x) from `found`, the key of rank x among those gathered that share its leading 16 bits
    /// (of all `n` keys): its index, unless it shares its leading bits with another (then with
    /// whole values compared) or more keys shared its leading 16 bits than were gathered
    /// (`None`: then as [`KeyLayout::forward_constant_time`] picks it).
    #[inline(always)]
    fn picked(&self, found: Option<(u64, bool)>, keystream: &[u8], keys: &[u64], x: u32) -> u32 {
        match found {
            Some((found, false)) => (found & self.index_mask()) as u32,
            Some((_, true)) => self.pick(keystream, keys, x),
            None => self.forward_constant_time(keystream, keys, x),
        }
    }

    /// π(x) from the kept quarters of all `n` keys: the key of rank x's leading quarter by
    /// [`Quarters::search_lead`], then the at most [`GATHERED`] keys that share it, gathered
    /// from `keys` with masks and ranked against each other ([`KeyLayout::rank_gathered`]).
    /// If more keys share it (probability below C(n, 6)·2^-80 per step, 2^-41 at radix 256),
    /// the search goes on over all the quarters ([`Quarters::search`]). If the key found shares
    /// its leading bits with another, π(x) is picked again with whole values compared.
    #[inline(always)]
    pub(crate) fn pick_searched(
        &self,
        keystream: &[u8],
        keys: &[u64],
        quarters: &mut Quarters,
        x: u32,
    ) -> u32 {
        let keys = &keys[..self.n as usize];
        let (lead, below) = quarters.search_lead(x);
        let found = match self.rank_gathered(keys, (lead ^ i16::MIN) as u16, x - below) {
            Some((found, false)) => found,
            Some((_, true)) => return self.pick(keystream, keys, x),
            None => match quarters.set_all(keys).search(self, x) {
                (found, false) => found,
                (_, true) => return self.pick(keystream, keys, x),
            },
        };
        (found & self.index_mask()) as u32
    }

    /// The key of rank `rank` among the keys whose leading 16 bits are `lead` (they lie side
    /// by side in key order), and whether another of them shares its leading bits (never where
    /// keys are exact): the keys are gathered into [`GATHERED`] slots by a masked pass over all
    /// of `keys`, each shifted in where it shares `lead`, and the one whose rank among the slots
    /// is `rank` is picked with masks. `None` if more than [`GATHERED`] share `lead`.
    #[inline(always)]
    fn rank_gathered(&self, keys: &[u64], lead: u16, rank: u32) -> Option<(u64, bool)> {
        // Padding, the largest key, lies below none of the keys gathered.
        let mut slots = [u64::MAX; GATHERED];
        let mut shared = 0usize;
        for &key in keys {
            let shares = mask((key >> 48) as u16 == lead);
            for s in (1..GATHERED).rev() {
                slots[s] = slots[s] & !shares | slots[s - 1] & shares;
            }
            slots[0] = slots[0] & !shares | key & shares;
            shared += (shares & 1) as usize;
        }
        (shared <= GATHERED).then(|| self.rank_slots(&slots, rank))
    }

    /// The key of rank `rank` among `slots`, the keys that share some leading 16 bits (in the
    /// first slots) and padding, the largest key (in the others), and whether another slot
    /// shares its leading bits (never where keys are exact), picked with masks.
    #[inline(always)]
    fn rank_slots(&self, slots: &[u64; GATHERED], rank: u32) -> (u64, bool) {
        let mut found = 0u64;
        for &slot in slots {
            let below: u32 = slots.iter().map(|&other| u32::from(other < slot)).sum();
            found |= slot & mask(below == rank);
        }
        // Keys that share the found key's leading bits share its 16 leading bits, so all are
        // among the slots. Padding shares them only if they are all ones: then π(x) is picked
        // again in full, which is exact whatever.
        let same_lead = slots
            .iter()
            .map(|&slot| u32::from(self.same_lead(slot, found)))
            .sum::<u32>();
        (found, !self.exact() && same_lead != 1)
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

    /// Leading parts whose quarters come from tiny alphabets (so that many tie and the lower
    /// quarters decide) or are arbitrary.
    fn leads() -> impl Strategy<Value = Vec<u64>> {
        let quarter = prop_oneof![
            0u64..3,
            Just(0xffff),
            0xfffeu64..=0xffff,
            any::<u16>().prop_map(u64::from)
        ];
        let lead = proptest::array::uniform4(quarter)
            .prop_map(|q| q.iter().fold(0, |lead, &q| lead << 16 | q));
        proptest::collection::vec(lead, 2..=RANKED_RADIX as usize)
    }

    /// Every key's rank once all have arrived, at every radix below [`LARGEST_SEARCHED_RADIX`]
    /// (each remainder of a batch), after a longer step has left keys and ranks behind.
    #[test]
    fn ranks_on_arrival_are_the_keys_ranks() {
        let mut ranks = Ranks::new();
        for n in 1..LARGEST_SEARCHED_RADIX {
            let layout = KeyLayout::new(n, 16);
            for j in 0..LARGEST_SEARCHED_RADIX as usize - 1 {
                layout.rank_arrival(j as u64, j, &mut ranks);
            }
            // Leads of four values, so that many share them and the index decides.
            let keys: Vec<u64> = (0..n as usize)
                .map(|j| {
                    let lead = (j as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 62 << 62;
                    layout.key_from_lead(lead, j)
                })
                .collect();
            for (j, &key) in keys.iter().enumerate() {
                layout.rank_arrival(key, j, &mut ranks);
            }
            ranks.finish(n as usize);
            for (j, &key) in keys.iter().enumerate() {
                let below = keys.iter().filter(|&&other| other < key).count();
                assert_eq!(ranks.ranks[j], below as i64, "key {j} of {n}");
            }
        }
    }

    /// A keystream of values of `b` bytes (1 or 16): value j's leading bytes (one for b = 1,
    /// later values overwriting the rest), then one of three tails, with 8 readable bytes past
    /// the last value's start.
    fn keystream_of(leads: &[u64], tail: u64, b: usize) -> Vec<u8> {
        let mut keystream = std::vec![0u8; leads.len() * b + 8];
        for (j, &lead) in leads.iter().enumerate() {
            keystream[j * b..][..8].copy_from_slice(&lead.to_be_bytes());
            if b == 16 {
                let tail = tail.wrapping_mul(j as u64 % 3);
                keystream[j * b + 8..][..8].copy_from_slice(&tail.to_be_bytes());
            }
        }
        keystream
    }

    /// A step of `b`-byte values from `leads` and `tail` ([`keystream_of`]): its layout,
    /// keystream and keys, and its indices in value order (π: the index of rank x is
    /// `order[x]`).
    fn step_of(leads: &[u64], tail: u64, b: usize) -> (KeyLayout, Vec<u8>, Vec<u64>, Vec<usize>) {
        let n = leads.len();
        let layout = KeyLayout::new(n as u32, b);
        let keystream = keystream_of(leads, tail, b);
        let keys = (0..n).map(|j| layout.key(&keystream, j)).collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&j| (&keystream[j * b..][..b], j));
        (layout, keystream, keys, order)
    }

    proptest! {
        /// One message's π(x) from the kept quarters (the leading quarter searched, the keys
        /// that share it gathered, or with more than [`GATHERED`] the search over all quarters)
        /// is the full pick's, for every x; leads from tiny alphabets make both paths run, and
        /// the values past their leads tell apart (or tie in full) those whose leads tie.
        #[test]
        fn pick_searched_is_the_full_pick(
            leads in leads(),
            tail in any::<u64>(),
            b in prop_oneof![Just(1usize), Just(16)],
        ) {
            let (layout, keystream, keys, order) = step_of(&leads, tail, b);
            let n = keys.len();
            // Only the leading quarters, as a step's keys arrive: the search over all quarters
            // makes the rest from the keys.
            let mut quarters = Quarters::new();
            quarters.reset(n);
            for (j, &key) in keys.iter().enumerate() {
                quarters.set_lead(j, key);
            }
            for (x, &expected) in order.iter().enumerate() {
                let mut kept = quarters.clone();
                let picked = layout.pick_searched(&keystream, &keys, &mut kept, x as u32);
                prop_assert_eq!(picked as usize, expected, "rank {} of {}", x, n);
            }
        }

        /// AVX-512's search over one message's keys (where the CPU has it) finds the key of each
        /// rank, flags exactly the ties of leading bits, and gives up only where more than eight
        /// keys share the leading 16 bits of the key sought; π(x) through it, its fallbacks
        /// included, is the full pick's. Leads from tiny alphabets make every path run.
        #[test]
        fn wide_search_finds_the_key_of_each_rank(
            leads in leads(),
            tail in any::<u64>(),
            b in prop_oneof![Just(1usize), Just(16)],
        ) {
            let Some(wide) = WideSearch::detect() else {
                return Ok(());
            };
            let (layout, keystream, keys, order) = step_of(&leads, tail, b);
            let n = keys.len();
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            for (x, (&key, &expected)) in sorted.iter().zip(&order).enumerate() {
                let sharing = keys.iter().filter(|&&k| k >> 48 == key >> 48).count();
                match wide.pick(&layout, &keys, x as u32) {
                    None => prop_assert!(sharing > 8, "rank {} of {}", x, n),
                    Some((found, tied)) => {
                        prop_assert!(sharing <= 8, "rank {} of {}", x, n);
                        let ties = keys.iter().filter(|&&k| layout.same_lead(k, key)).count() > 1;
                        prop_assert_eq!(tied, !layout.exact() && ties, "rank {} of {}", x, n);
                        if !tied {
                            prop_assert_eq!(found, key, "rank {} of {}", x, n);
                        }
                    }
                }
                let picked = layout.pick_wide(wide, &keystream, &keys, x as u32);
                prop_assert_eq!(picked as usize, expected, "rank {} of {}", x, n);
            }
        }

        /// The ranking of leading bits on arrival (where the CPU has AVX2), after a longer step
        /// has left leads and ranks behind, ranks every key by its leading 16 bits and then its
        /// index. From those ranks, the count of keys below and sharing the leading bits of the
        /// key of each rank are right, so are the keys gathered from there; AVX-512's pick (where
        /// the CPU has it) finds the key the full search finds, with the same ties flagged and
        /// the same fallback; and π(x) through either pick is the full pick's.
        #[test]
        #[cfg(target_arch = "x86_64")]
        fn leads_ranked_on_arrival_pick_the_key_of_each_rank(
            leads in leads(),
            tail in any::<u64>(),
            b in prop_oneof![Just(1usize), Just(16)],
        ) {
            let Some(ranking) = RankedLeads::detect() else {
                return Ok(());
            };
            let (layout, keystream, keys, order) = step_of(&leads, tail, b);
            let n = keys.len();
            let mut ranked = LeadRanks::new();
            ranked.reset(RANKED_RADIX as usize);
            for j in 0..RANKED_RADIX as usize {
                ranking.rank_lead(&mut ranked, j, u64::MAX - j as u64);
            }
            ranked.reset(n);
            for (j, &key) in keys.iter().enumerate() {
                ranking.rank_lead(&mut ranked, j, key);
            }
            let lead = |j: usize| (keys[j] >> 48, j);
            for (j, &key) in keys.iter().enumerate() {
                prop_assert_eq!(ranked.leads[j], (key >> 48) as u16 ^ LEAST_LEAD);
                let after = (0..n).filter(|&i| lead(i) > lead(j)).count();
                let rank = after as i64 - (n as i64 - 1);
                prop_assert_eq!(i64::from(ranked.ranks[j] as i16), rank, "key {} of {}", j, n);
            }
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            for (x, &expected) in order.iter().enumerate() {
                let x = x as u32;
                let found = sorted[x as usize] >> 48;
                let below = keys.iter().filter(|&&k| k >> 48 < found).count() as u32;
                let sharing: Vec<u64> =
                    keys.iter().copied().filter(|&k| k >> 48 == found).collect();
                let shared = sharing.len() as u32;
                prop_assert_eq!(ranking.lead_of_rank(&ranked, n, x), (below, shared));
                if sharing.len() <= GATHERED {
                    let mut slots = [u64::MAX; GATHERED];
                    slots[..sharing.len()].copy_from_slice(&sharing);
                    prop_assert_eq!(ranking.gather_ranked(&keys, &ranked, below, shared), slots);
                }
                let picked = ranking.pick_ranked_lead(&layout, &keys, &ranked, x);
                if let (Some(wide), Some(picked)) = (WideSearch::detect(), picked) {
                    prop_assert_eq!(picked, wide.pick(&layout, &keys, x), "rank {} of {}", x, n);
                }
                for ranking in [ranking, ranking.without_wide_pick()] {
                    let mut arrivals = Arrivals::LeadsRanked(ranking, &mut ranked);
                    let picked = layout.pick_arrived(&keystream, &keys, &mut arrivals, x);
                    prop_assert_eq!(picked as usize, expected, "rank {} of {}", x, n);
                }
            }
        }

        #[test]
        fn search_finds_the_key_of_each_rank(leads in leads(), b in prop_oneof![Just(1usize), Just(16)]) {
            // b = 1: exact keys (the value is the whole key, here distinct leads); b = 16: the
            // index in the low bits, leads that tie flagged.
            let mut leads = leads;
            if b == 1 {
                leads.sort_unstable();
                leads.dedup();
                leads.reverse();
            }
            let n = leads.len();
            let layout = KeyLayout::new(n as u32, b);
            let keys: Vec<u64> = leads
                .iter()
                .enumerate()
                .map(|(j, &lead)| if b == 1 { lead } else { layout.key_from_lead(lead, j) })
                .collect();
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            let mut quarters = Quarters::new();
            for (x, &expected) in sorted.iter().enumerate() {
                // Each search starts from `reset`, as in the engine, after a longer step.
                quarters.reset(RANKED_RADIX as usize);
                for j in 0..RANKED_RADIX as usize {
                    quarters.set(j, (x as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_mul(j as u64));
                }
                quarters.reset(n);
                for (j, &key) in keys.iter().enumerate() {
                    quarters.set(j, key);
                }
                let scalar = quarters.clone().search_scalar(&layout, x as u32);
                let (found, tied) = quarters.search(&layout, x as u32);
                prop_assert_eq!((found, tied), scalar, "rank {} of {}", x, n);
                let ties = keys.iter().filter(|&&k| layout.same_lead(k, expected)).count() > 1;
                prop_assert_eq!(tied, !layout.exact() && ties, "rank {} of {}", x, n);
                // With ties, the found key is the shared leading bits and no index in particular.
                if !tied {
                    prop_assert_eq!(found, expected, "rank {} of {}", x, n);
                }
                let whole = largest_at_most(&keys, 0, x as u32, 64, |key| key);
                prop_assert_eq!(whole, expected, "rank {} of {}", x, n);
            }
        }
    }
}
