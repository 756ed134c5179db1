//! The permutation of one digit step, read off its keystream (SPEC: "Sort the pairs (v_k, k)").
//!
//! Pairs are never sorted. Each value becomes a 64-bit key: its leading bits above, its index
//! in the low `index_bits`, so keys order as pairs do unless two leading parts are equal and
//! the values are longer than the leading part; only then are whole values compared.
//!
//! For one message, keys are made while the keystream is generated, where they cost nothing:
//! each AES block waits on the one before, and the ALU is idle meanwhile. Forward (π) also files
//! keys by bucket of leading bits there; selecting the x-th key then looks at one small bucket.
//! In lockstep, keys are made from each lane's whole keystream and only counted per bucket,
//! and forward gathers the one bucket in a pass over the keys; inverse (π⁻¹) counts the keys
//! below one key in a single branch-free pass. On x86-64 with AVX2 and radices up to 256, the
//! group kernel does this for eight lanes at a time; with AVX-512 too, inverse runs on it up to
//! radix 255 where no planes are made (below), and forward stays on AVX2's passes (BENCHMARKS.md
//! compares them). Up to radix 16 the passes use 32-bit keys, eight lanes to an AVX2 vector or
//! sixteen to an AVX-512 one (a tie of their fewer leading bits is compared in full), and
//! forward sorts each lane's keys by a network; above
//! radix 16, forward searches the keys' two leading octets as the constant-time search does,
//! stopping there once every lane's answer is the only key with its leading octets (else, over
//! planes, such a lane is picked from the whole keys that share its first octet, and elsewhere
//! the search goes on); over planes it reads the second octet off the few keys that share the
//! first, in one pass.
//! Constant-time lockstep runs the group kernel's constant-time passes up to radix 32 767 on
//! every x86-64 and aarch64 CPU: π⁻¹ by a masked pivot and a count, π by a bitwise search over
//! parts of keys: with AVX2 their leading two or three octets up to radix 256 (32 keys to a
//! compare), after which the few keys that share them are gathered and ranked against each
//! other, and their 16-bit quarters above (sixteen), up to radix 16 each lane's keys sorted by a
//! network of fixed compare-exchanges (with AVX-512, eight lanes to a vector); 16-bit quarters with SSE2 or NEON (eight keys to a
//! compare). The AVX2 kernels read their keys from those the AES loop made while the blocks
//! were still in registers, where each value starts a block and the radix is at most 256
//! (`group::made_in_loop`), if the scratch has room for them (`Fpe::lockstep_scratch_size`);
//! the constant-time kernels, with VBMI, wherever values start (`group::MadeKeys::covers`).
//! Above radix 16, with 32 or 64 lanes, AVX2's fast passes both ways (π⁻¹ too where AVX-512
//! runs) and constant-time π read only the keys' two leading octets instead, which the AES loop
//! lays out one byte a lane (`group::Planes`, by AVX-512 VBMI's byte permutes where the CPU has
//! them, else AVX2's shuffles): an eighth of the keys' bytes, searched 32 lanes to a compare.
//! They are made for any `bytes_per_value` from 16 on, values starting anywhere in a block
//! (`group::planes_in_loop`).
//! Constant-time π then reads the leading words of the few keys of each lane that share the two
//! octets it found, in a pass over every value, and ranks them against each other (with
//! AVX-512, eight lanes to a vector). With AVX-512 and VBMI, the AES loop also lays out the
//! keys' next four octets from the same byte permutes (`group::Middles`), and the ranking reads
//! those instead, sixteen lanes to a vector: a quarter of the bytes of the stored keystream.
//!
//! Constant-time π of one message ranks the keys as they arrive (four at a time) below radix 48,
//! or 32 on CPUs with AVX-512 other than AMD's Zen cores ([`OneMessage`], picked when a cipher is
//! built), and from there up to radix 256 finds the key of rank x by its leading 16 bits, then
//! among the few keys that share them (`constant_time`): on AMD's Zen 3 to Zen 5 cores those bits
//! are ranked as the keys arrive (`avx2`, sixteen to a compare), elsewhere searched for after the
//! chain (with AVX-512 over the keys, 32 to a compare, `avx512`; else over the leading 16-bit
//! quarters kept as the keys arrive, by `quarter_search`).
//!
//! One backend a file: `portable` (lane by lane, every CPU), `constant_time`, `group` (the
//! group kernel's shared passes), `quarter_search` (its constant-time search for 128-bit
//! vectors), and the intrinsics in `avx512`, `avx2`, `sse2` and `neon` (the only `unsafe`
//! here).
//! [`Kernel::detect`] picks among them once, when a cipher is built.

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx512;
mod constant_time;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[allow(unsafe_code)]
mod neon;
// Elsewhere the group kernel's search compiles but goes unused (one message's runs everywhere).
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_feature = "neon")
    )),
    allow(dead_code)
)]
mod quarter_search;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod sse2;
// Only the x86-64 kernels run the group passes; elsewhere they compile for their tests' sake.
#[cfg_attr(
    not(target_arch = "x86_64"),
    allow(dead_code, unused_macros, unused_imports)
)]
pub(crate) mod group;
mod portable;
#[cfg(test)]
mod tests;

use constant_time::LeadRanks;
pub(crate) use constant_time::{Arrivals, Kept};

/// The 128-bit vectors every CPU of the target has, which one message's constant-time search
/// runs on (`quarter_search`).
#[cfg(target_arch = "x86_64")]
type Vector128 = sse2::Sse2;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
type Vector128 = neon::Neon;
#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "aarch64", target_feature = "neon")
)))]
type Vector128 = quarter_search::Scalar;
#[cfg(test)]
pub(crate) use constant_time::SEARCHED_RADICES;
use constant_time::SEARCHED_RADIX;
#[cfg(test)]
use constant_time::{Quarters, RANKED_RADIX, Ranks};
#[cfg(test)]
use portable::MAX_BUCKETS;
pub(crate) use portable::{Histogram, KeyLayout, SLOTS, SLOTTED_RADIX, Slotted};

/// How the permutation of a digit step is read off its keystream.
///
/// Both give identical results; they differ in what their timing can reveal. Unless a builder
/// is given one, a cipher selects as [`Selection::default_for`] its largest radix says:
/// in constant time up to radix 256, fast above.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Selection {
    /// Expected O(n) per step: keys are counted into buckets of their leading bits and the
    /// x-th key is looked for in one bucket (encryption); ranking counts in one pass
    /// (decryption). Which bucket is touched, and how many keys it holds, depend on the
    /// keystream and the digit, so timing and cache traces depend on secret values. The
    /// default above radix 256.
    Fast,
    /// About n² compares per step below radix 48 (one message on CPUs with AVX-512 other than AMD's
    /// Zen cores: below 32) and at most 64·n from there on (96·n above radix 256 one message at a
    /// time; one message on AMD's Zen 3 to Zen 5 up to radix 256, n²/2 compares of 16 bits, sixteen
    /// to an instruction), with branches and memory accesses that depend only on the radix and
    /// `bytes_per_value`: the key of rank x is found branch-free and its index picked with masks
    /// (encryption); the digit's key is fetched by a masked scan and ranked (decryption).
    /// Encrypting one message ranks the keys as their AES blocks arrive, four at a time (radices
    /// below 48, or below 32 on CPUs with AVX-512 other than AMD's Zen cores, whose search costs
    /// less; 768 bytes of stack); from there on to radix 256, where the n²/2 compares of ranking
    /// whole keys outgrow the chain, the key of rank x is found by its leading 16 bits. On AMD's
    /// Zen 3 to Zen 5 cores (with AVX2) those are ranked as the keys arrive, sixteen to a compare
    /// (1 KiB of stack), and the at most five keys that share the leading bits of the key ranked x
    /// (with AVX-512's VBMI2, eight) are gathered with masks and ranked against each other.
    /// Elsewhere they are searched for after the chain, bit by bit: with AVX-512 those of the keys,
    /// 32 to a compare, two bits a pass, after which the at most eight keys that share them are
    /// gathered into one vector and ranked against each other; else over the leading 16-bit
    /// quarters kept as the keys arrive, sixteen keys to a pair of 128-bit vectors (SSE2, NEON;
    /// 2 KiB of stack), then the at most five keys that share that quarter are gathered in a masked
    /// pass and ranked against each other; above radix 256 two bits a pass over whole keys. In
    /// lockstep on x86-64 and aarch64 with radices up to 32 767, the group kernel's constant-time
    /// passes select for eight lanes at a time. Encryption with AVX2 searches a bit a pass over the
    /// keys' leading two octets up to radix 64, three up to radix 256 (32 keys to a compare), then
    /// ranks the at most four keys of a lane that share them against each other; above radix 256 it
    /// searches their 16-bit quarters (sixteen to a compare), and with SSE2 or NEON their quarters
    /// (eight). Where the AES loop lays out the keys' two leading octets as planes (radices 17 to
    /// 255, 32 or 64 lanes, each value starting a block), it searches those, 32 lanes to a compare,
    /// then reads the leading words of the at most four (radix 64) or five keys of a lane that
    /// share them in a pass over every value and ranks them against each other. The exceptions: a
    /// tie of a value's leading 64 bits with another's, which happens with probability below
    /// n²/2^(64 − log2 n) per step (about 2^-44 for n = 100), compares the two values in full (over
    /// planes with AVX-512 also a key of rank x whose 64 leading bits are all ones, below n·2^-56);
    /// one message from radix 48 (32 on CPUs with AVX-512 other than AMD's Zen) to 256, more than
    /// five keys that share the leading 16 bits of the key of rank x, with probability below
    /// C(n, 6)·2^-80 per step (2^-41 at 256; with AVX-512 more than eight, below C(n, 9)·2^-128,
    /// 2^-74 at 256), make the search go on over all four quarters; and in lockstep with AVX2 up to
    /// radix 256, more keys of a lane that share those two or three leading octets than are ranked,
    /// with probability below C(n, 5)·2^-64 per step up to radix 64 (2^-41 at 64), C(n, 5)·2^-96
    /// above (2^-62 at 256), or over planes C(n, 6)·2^-80 (2^-41 at 255), make its chunk of eight
    /// lanes search over all the keys' bits. None exceeds 2^-40 per step at any radix up to 256,
    /// the default range.
    ConstantTime,
}

impl Selection {
    /// The largest radix whose ciphers select in constant time unless told otherwise: up to
    /// it, constant-time selection costs little more than the fast one, one message at a time
    /// and in lockstep (BENCHMARKS.md has the ratios); above it its search grows with the
    /// radix.
    pub const CONSTANT_TIME_DEFAULT_MAX_RADIX: u32 = 256;

    /// The selection of a cipher whose largest radix is `max_radix` when its builder is not
    /// given one.
    ///
    /// ```
    /// use riffpe::{Riffpe, Selection};
    ///
    /// assert_eq!(Selection::default_for(100), Selection::ConstantTime);
    /// assert_eq!(Selection::default_for(1000), Selection::Fast);
    /// let fpe = Riffpe::new(100, 8, &[0x2b; 16], b"")?;
    /// assert_eq!(fpe.selection(), Selection::ConstantTime);
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub const fn default_for(max_radix: u32) -> Selection {
        if max_radix <= Self::CONSTANT_TIME_DEFAULT_MAX_RADIX {
            Selection::ConstantTime
        } else {
            Selection::Fast
        }
    }
}

/// All ones when `condition` holds, else zero, without a branch.
#[inline(always)]
pub(crate) fn mask(condition: bool) -> u64 {
    u64::from(condition).wrapping_neg()
}

/// How constant-time π of one message finds the key of rank x: chosen once, when a cipher is
/// built ([`OneMessage::detect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OneMessage {
    /// The radix from which whole keys are no longer ranked as they arrive: from there the key
    /// of rank x is found by its leading 16 bits, ranked as they arrive ([`OneMessage::leads`])
    /// or searched for after the chain.
    pub searched_radix: u32,
    /// AVX-512's search over the step's keys, where the CPU has it; else the search over the
    /// leading quarters kept as the keys arrive, on 128-bit vectors.
    pub wide: Option<WideSearch>,
    /// On AMD's Zen 3 to Zen 5 cores, the ranking of the keys' leading 16 bits as they arrive
    /// ([`LeadRanks`], AVX2), from the radix searched from to
    /// [`RANKED_RADIX`](constant_time::RANKED_RADIX), in place of a search after the chain.
    pub leads: Option<RankedLeads>,
}

impl OneMessage {
    /// For this CPU. On AMD's Zen cores (CPU families 25 and 26), ranking the keys' leading 16
    /// bits as they arrive hides behind the chain and costs less than either search after it,
    /// from radix 48 on (whole keys ranked below); on an Intel Xeon with AVX-512, its search
    /// cost less than ranking on arrival from radix 32 on. BENCHMARKS.md has the figures.
    pub(crate) fn detect() -> OneMessage {
        let (wide, zen) = (WideSearch::detect(), zen());
        let searched_radix = match (zen, wide) {
            (false, Some(_)) => constant_time::SEARCHED_RADIX_WIDE,
            _ => SEARCHED_RADIX,
        };
        OneMessage {
            searched_radix,
            wide,
            leads: RankedLeads::detect().filter(|_| zen),
        }
    }
}

/// Whether this CPU is one of AMD's Zen 3 to Zen 5 cores (families 25 and 26).
fn zen() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use core::sync::atomic::{AtomicU8, Ordering};
        // CPUID traps to the hypervisor in a virtual machine: asked once per process.
        static FOUND: AtomicU8 = AtomicU8::new(0);
        let found = FOUND.load(Ordering::Relaxed);
        if found != 0 {
            return found == 2;
        }
        let vendor = core::arch::x86_64::__cpuid(0);
        let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6e65, 0x444d_4163);
        // Family: the base field, plus the extended one where the base is 15.
        let signature = core::arch::x86_64::__cpuid(1).eax;
        let family = (signature >> 8 & 0xf) + (signature >> 20 & 0xff);
        let zen = amd && (25..=26).contains(&family);
        FOUND.store(1 + u8::from(zen), Ordering::Relaxed);
        zen
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Proof that this CPU runs AVX-512's search for one message's key of rank x over its keys
/// (`avx512::pick_one`): only [`WideSearch::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WideSearch(
    #[cfg(target_arch = "x86_64")] avx512::OneSearch,
    #[cfg(not(target_arch = "x86_64"))] core::convert::Infallible,
);

impl WideSearch {
    pub(crate) fn detect() -> Option<WideSearch> {
        #[cfg(target_arch = "x86_64")]
        return avx512::OneSearch::detect().map(WideSearch);
        #[cfg(not(target_arch = "x86_64"))]
        None
    }

    /// The key of rank `x` among `keys` (a step's, at most 256) and whether another shares its
    /// leading bits, or `None` if more than eight share its leading 16 bits.
    #[inline(always)]
    pub(crate) fn pick(self, layout: &KeyLayout, keys: &[u64], x: u32) -> Option<(u64, bool)> {
        #[cfg(target_arch = "x86_64")]
        return self.0.pick_one(layout, keys, x);
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (layout, keys, x);
            match self.0 {}
        }
    }
}

/// Proof that this CPU ranks one message's leading 16 bits as its keys arrive
/// (`avx2::rank_lead`) and picks π(x) from those ranks: with AVX-512's gather and ranking of the
/// keys that share the leading bits found (`avx512::pick_ranked_lead`) where the CPU has VBMI2,
/// else from the lead of rank x (`avx2::lead_of_rank`) and a gather with masks. Only
/// [`RankedLeads::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RankedLeads {
    #[cfg(target_arch = "x86_64")]
    rank: avx2::LeadRank,
    #[cfg(target_arch = "x86_64")]
    pick: Option<avx512::LeadPick>,
    #[cfg(not(target_arch = "x86_64"))]
    never: core::convert::Infallible,
}

impl RankedLeads {
    pub(crate) fn detect() -> Option<RankedLeads> {
        #[cfg(target_arch = "x86_64")]
        return avx2::LeadRank::detect().map(|rank| RankedLeads {
            rank,
            pick: avx512::LeadPick::detect(),
        });
        #[cfg(not(target_arch = "x86_64"))]
        None
    }

    /// Without AVX-512's pick, as on a CPU that lacks it.
    #[cfg(test)]
    pub(crate) fn without_wide_pick(self) -> RankedLeads {
        #[cfg(target_arch = "x86_64")]
        return RankedLeads { pick: None, ..self };
        #[cfg(not(target_arch = "x86_64"))]
        self
    }

    /// Keeps key `j` of a step (keys arrive in order) and ranks its leading 16 bits against the
    /// earlier keys' ([`LeadRanks`]).
    #[inline(always)]
    pub(crate) fn rank_lead(self, ranked: &mut LeadRanks, j: usize, key: u64) {
        #[cfg(target_arch = "x86_64")]
        self.rank.rank_lead(ranked, j, key);
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (ranked, j, key);
            match self.never {}
        }
    }

    /// How many of the `n` keys whose leads were ranked lie below the leading 16 bits of the
    /// key of rank `x`, and how many share them.
    #[inline(always)]
    pub(crate) fn lead_of_rank(self, ranked: &LeadRanks, n: usize, x: u32) -> (u32, u32) {
        #[cfg(target_arch = "x86_64")]
        return self.rank.lead_of_rank(ranked, n, x);
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (ranked, n, x);
            match self.never {}
        }
    }

    /// The `shared` keys (at most [`GATHERED`](constant_time::GATHERED)) of `keys` ranked
    /// `first` on by their leading bits ranked on arrival, in the first slots, the others all
    /// ones.
    #[inline(always)]
    pub(crate) fn gather_ranked(
        self,
        keys: &[u64],
        ranked: &LeadRanks,
        first: u32,
        shared: u32,
    ) -> [u64; constant_time::GATHERED] {
        #[cfg(target_arch = "x86_64")]
        return self.rank.gather_ranked(keys, ranked, first, shared);
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (keys, ranked, first, shared);
            match self.never {}
        }
    }

    /// [`WideSearch::pick`] from what [`RankedLeads::rank_lead`] kept of all of `keys`, by
    /// AVX-512; `None` where the CPU lacks its pick (VBMI2). Inside, `None` where more keys share
    /// the lead of the key ranked x than the pick gathers.
    #[inline(always)]
    pub(crate) fn pick_ranked_lead(
        self,
        layout: &KeyLayout,
        keys: &[u64],
        ranked: &LeadRanks,
        x: u32,
    ) -> Option<Option<(u64, bool)>> {
        #[cfg(target_arch = "x86_64")]
        return self
            .pick
            .map(|pick| pick.pick_ranked_lead(layout, keys, ranked, x));
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (layout, keys, ranked, x);
            match self.never {}
        }
    }
}

/// Which code selects in lockstep: chosen once, when a cipher is built, by [`Kernel::detect`].
/// (One message at a time always runs lane by lane, with keys filed as its chain runs.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// Lane by lane ([`Selection::Fast`]).
    PerLane,
    /// Lane by lane, in constant time ([`Selection::ConstantTime`]).
    ConstantTime,
    /// Eight lanes at a time, on a CPU that runs the group kernel (AVX-512 or AVX2).
    Group(Group),
    /// In constant time, eight lanes at a time (π⁻¹ by a masked pivot, π by a bitwise search):
    /// AVX2, else SSE2 on x86-64, NEON on aarch64.
    ConstantTimeGroup(ConstantTimeGroup),
}

impl Kernel {
    /// The kernel for `selection` over radices up to `max_radix` on this CPU: the group kernel
    /// where it pays (AVX2 or AVX-512 for each direction, [`Group::detect`]; in constant time on
    /// x86-64 and aarch64, up to [`group::CONSTANT_TIME_MAX_RADIX`]), else lane by lane.
    pub(crate) fn detect(selection: Selection, max_radix: u32) -> Kernel {
        match selection {
            Selection::ConstantTime => match ConstantTimeGroup::detect() {
                Some(group) if max_radix <= group::CONSTANT_TIME_MAX_RADIX => {
                    Kernel::ConstantTimeGroup(group)
                }
                _ => Kernel::ConstantTime,
            },
            Selection::Fast => match Group::detect(max_radix) {
                Some(group) => Kernel::Group(group),
                None => Kernel::PerLane,
            },
        }
    }

    /// Whether a step of radix `n` with `lanes` lanes (a whole group) has its keys' two
    /// leading octets made as planes in the AES loop, for π (`forward`) or π⁻¹: above radix
    /// [`group::SMALL_RADIX`], where π runs AVX2's passes (every CPU with AVX2), both
    /// directions read them first, and constant-time π searches them.
    #[inline]
    pub(crate) fn planes(self, n: u32, lanes: usize, forward: bool) -> Option<group::Planes> {
        let fits = n as usize > group::SMALL_RADIX
            && n <= group::MAX_RADIX
            && lanes.is_multiple_of(group::PLANE_LANES);
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Group(Group {
                forward: GroupIsa::Avx2(_),
                made_by: Some(isa),
                ..
            }) if fits => Some(group::Planes(isa)),
            #[cfg(target_arch = "x86_64")]
            Kernel::ConstantTimeGroup(ConstantTimeGroup(ConstantTimeIsa::Avx2(_, _, isa)))
                if fits && forward =>
            {
                Some(group::Planes(isa))
            }
            _ => {
                let _ = (fits, forward);
                None
            }
        }
    }

    /// Whether constant-time π, where it searches the [`planes`](Kernel::planes), ranks the keys
    /// that share two octets by their next four made in the AES loop beside them
    /// ([`group::Middles`]), rather than by leading words read from the stored keystream: where
    /// AVX-512 ranks them and VBMI makes what the loop lays out.
    #[inline]
    pub(crate) fn middles(self, forward: bool) -> Option<group::Middles> {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::ConstantTimeGroup(ConstantTimeGroup(ConstantTimeIsa::Avx2(
                _,
                Some(_),
                group::LoopIsa::Vbmi(vbmi),
            ))) if forward => Some(group::Middles(vbmi)),
            _ => {
                let _ = forward;
                None
            }
        }
    }

    /// Whether the kernel's rows for π (`forward`) or π⁻¹ in a step of `layout` are read from
    /// keys made in the AES loop rather than made from the stored keystream: where the direction
    /// runs AVX2's passes (AVX-512's read them too where they are made, as its sorting up to
    /// radix 16 does) and each value starts a block ([`group::made_in_loop`]); for the
    /// constant-time passes, wherever the CPU's maker [covers](group::MadeKeys::covers) the
    /// step (with VBMI, any `bytes_per_value`; the fast passes up to radix 16, which gather
    /// 32-bit leads, gained nothing from them where values do not start blocks: BENCHMARKS.md).
    /// The 128-bit passes build their rows from the keystream.
    #[inline]
    pub(crate) fn made_keys(self, forward: bool, layout: &KeyLayout) -> Option<group::MadeKeys> {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Group(group) => {
                let isa = if forward {
                    group.forward
                } else {
                    group.inverse
                };
                match (isa, group.made_by) {
                    (GroupIsa::Avx2(_), Some(made_by)) if group::made_in_loop(layout) => {
                        Some(group::MadeKeys(made_by))
                    }
                    _ => None,
                }
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::ConstantTimeGroup(ConstantTimeGroup(ConstantTimeIsa::Avx2(_, _, isa))) => {
                Some(group::MadeKeys(isa)).filter(|made| made.covers(layout))
            }
            _ => {
                let _ = (forward, layout);
                None
            }
        }
    }
}

/// The instruction sets the group kernel is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GroupIsa {
    #[cfg(target_arch = "x86_64")]
    Avx512(avx512::Avx512),
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::Avx2),
}

impl GroupIsa {
    /// The largest radix the passes select: [`group::MAX_RADIX`] where they count keys in
    /// byte-sized buckets (AVX-512), 256 with AVX2, whose forward pass above radix 16 searches
    /// the keys' octets instead (each lane's count of a byte in every fourth row).
    fn max_radix(self) -> u32 {
        match self {
            #[cfg(target_arch = "x86_64")]
            GroupIsa::Avx512(_) => group::MAX_RADIX,
            #[cfg(target_arch = "x86_64")]
            GroupIsa::Avx2(_) => avx2::FAST_MAX_RADIX,
        }
    }

    /// What makes the planes and keys the AES loop lays out for AVX2's passes on this CPU, if
    /// it has AVX2.
    fn made_by() -> Option<group::LoopIsa> {
        #[cfg(target_arch = "x86_64")]
        return avx2::Avx2::detect().map(group::LoopIsa::detect);
        #[cfg(not(target_arch = "x86_64"))]
        None
    }

    /// Every instruction set of the group kernel this CPU runs, widest first.
    fn available() -> [Option<GroupIsa>; 2] {
        #[cfg(target_arch = "x86_64")]
        return [
            avx512::Avx512::detect().map(GroupIsa::Avx512),
            avx2::Avx2::detect().map(GroupIsa::Avx2),
        ];
        #[cfg(not(target_arch = "x86_64"))]
        [None, None]
    }
}

/// Proof that this CPU runs the group kernel: only [`Group::detect`] makes one. Each direction
/// has its own instruction set, and steps up to radix [`group::SMALL_RADIX`] one of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    forward: GroupIsa,
    /// Both directions up to radix [`group::SMALL_RADIX`]: a sorting network or a count of
    /// 32-bit keys, whatever the cipher's largest radix, so the widest vectors.
    small: GroupIsa,
    inverse: GroupIsa,
    /// What makes the planes and keys the AES loop lays out for AVX2's passes, where the CPU
    /// has AVX2.
    made_by: Option<group::LoopIsa>,
}

impl Group {
    /// The group kernel for radices up to `max_radix` on this CPU. Above radix
    /// [`group::SMALL_RADIX`], π runs AVX2's passes wherever the CPU has AVX2, AVX-512 included,
    /// rather than AVX-512's count of buckets and gather of one (BENCHMARKS.md compares the two).
    /// π⁻¹, one pass of compares, runs the widest vectors, except over planes
    /// ([`Kernel::planes`]), which AVX2's passes read. Steps up to radix 16 run the widest.
    fn detect(max_radix: u32) -> Option<Group> {
        let [avx512, avx2] = GroupIsa::available();
        let reaches = |isa: &GroupIsa| max_radix <= isa.max_radix();
        Some(Group {
            forward: [avx2, avx512].into_iter().flatten().find(reaches)?,
            small: avx512.or(avx2)?,
            inverse: [avx512, avx2].into_iter().flatten().find(reaches)?,
            made_by: GroupIsa::made_by(),
        })
    }

    /// The instruction set of π (`forward`) or π⁻¹ for a step of radix `n`.
    #[inline(always)]
    fn isa(self, forward: bool, n: u32) -> GroupIsa {
        match forward {
            _ if n as usize <= group::SMALL_RADIX => self.small,
            true => self.forward,
            false => self.inverse,
        }
    }

    /// The largest radix both directions select.
    #[cfg(test)]
    fn max_radix(self) -> u32 {
        let isas = [self.forward, self.small, self.inverse];
        isas.map(GroupIsa::max_radix).into_iter().min().unwrap_or(0)
    }

    /// Every group kernel this CPU runs, one instruction set for both directions, widest
    /// first (the tests check each).
    #[cfg(test)]
    fn available() -> [Option<Group>; 2] {
        GroupIsa::available().map(|isa| {
            isa.map(|isa| Group {
                forward: isa,
                small: isa,
                inverse: isa,
                made_by: GroupIsa::made_by(),
            })
        })
    }

    /// π(x) for every lane: `digits[l]` is lane `l`'s x, replaced by its π(x).
    #[inline(always)]
    // Elsewhere no `Group` exists: its instruction set is uninhabited.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unreachable_code))]
    pub(crate) fn forward(
        self,
        blocks: &group::Blocks<'_>,
        work: group::Work<'_>,
        digits: &mut [u32],
    ) {
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (blocks, work, digits);
        match self.isa(true, blocks.layout.n) {
            #[cfg(target_arch = "x86_64")]
            GroupIsa::Avx512(isa) => isa.forward(blocks, work, digits),
            #[cfg(target_arch = "x86_64")]
            GroupIsa::Avx2(isa) => isa.forward(blocks, work, digits),
        }
    }

    /// π⁻¹(k) for every lane: `digits[l]` is lane `l`'s k, replaced by its rank.
    #[inline(always)]
    // Elsewhere no `Group` exists: its instruction set is uninhabited.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unreachable_code))]
    pub(crate) fn inverse(
        self,
        blocks: &group::Blocks<'_>,
        work: group::Work<'_>,
        digits: &mut [u32],
    ) {
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (blocks, work, digits);
        // Planes are made only where π runs AVX2's passes (`Kernel::planes`).
        #[cfg(target_arch = "x86_64")]
        if let (GroupIsa::Avx2(avx2), Some(planes)) = (self.forward, blocks.planes) {
            return avx2.inverse_planes(blocks, planes, digits);
        }
        match self.isa(false, blocks.layout.n) {
            #[cfg(target_arch = "x86_64")]
            GroupIsa::Avx512(isa) => isa.inverse(blocks, work, digits),
            #[cfg(target_arch = "x86_64")]
            GroupIsa::Avx2(isa) => isa.inverse(blocks, work, digits),
        }
    }
}

/// The instruction sets the constant-time group passes are written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConstantTimeIsa {
    /// With AVX-512 as well where the CPU has it, for the ranking after a search of planes,
    /// and what makes the planes and keys the AES loop lays out.
    #[cfg(target_arch = "x86_64")]
    Avx2(avx2::Avx2, Option<avx512::Avx512>, group::LoopIsa),
    /// x86-64 without AVX2: 128-bit vectors (`quarter_search`).
    #[cfg(target_arch = "x86_64")]
    Sse2,
    /// aarch64 (`quarter_search`).
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    Neon,
}

/// Proof that this CPU runs the group kernel's constant-time passes (x86-64, aarch64 with
/// NEON): only [`ConstantTimeGroup::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ConstantTimeGroup(ConstantTimeIsa);

impl ConstantTimeGroup {
    fn detect() -> Option<ConstantTimeGroup> {
        ConstantTimeGroup::available().into_iter().flatten().next()
    }

    /// Every constant-time group kernel this CPU runs, widest first (the tests check each).
    fn available() -> [Option<ConstantTimeGroup>; 3] {
        #[cfg(target_arch = "x86_64")]
        return {
            let avx2 = avx2::Avx2::detect();
            let with = |wide| {
                avx2.map(|isa| {
                    let made_by = group::LoopIsa::detect(isa);
                    ConstantTimeGroup(ConstantTimeIsa::Avx2(isa, wide, made_by))
                })
            };
            [
                avx512::Avx512::detect().and_then(|wide| with(Some(wide))),
                with(None),
                Some(ConstantTimeGroup(ConstantTimeIsa::Sse2)),
            ]
        };
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        return [Some(ConstantTimeGroup(ConstantTimeIsa::Neon)), None, None];
        #[allow(unreachable_code)]
        [None, None, None]
    }

    /// The constant-time search of the chunk of lanes from `first` on (above radix
    /// [`group::SMALL_RADIX`]): each lane's key of rank x and the lanes whose key ties another's
    /// leading bits.
    #[cfg(test)]
    fn search(
        self,
        blocks: &group::Blocks<'_>,
        work: group::Work<'_>,
        first: usize,
        digits: &[u32],
    ) -> ([u64; group::CHUNK], u32) {
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            ConstantTimeIsa::Avx2(isa, ..) => isa.search_constant_time(blocks, work, first, digits),
            #[cfg(target_arch = "x86_64")]
            ConstantTimeIsa::Sse2 => {
                quarter_search::search_chunk::<sse2::Sse2>(blocks, work.pairs(), first, digits)
            }
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            ConstantTimeIsa::Neon => {
                quarter_search::search_chunk::<neon::Neon>(blocks, work.pairs(), first, digits)
            }
        }
    }

    /// π(x) when `forward`, else π⁻¹(k), for every lane, as [`Group::forward`] and
    /// [`Group::inverse`] but with no branch or address that depends on the keys or the digits
    /// (save a tie of leading bits, see [`Selection::ConstantTime`]).
    #[inline(always)]
    pub(crate) fn select(
        self,
        blocks: &group::Blocks<'_>,
        work: group::Work<'_>,
        digits: &mut [u32],
        forward: bool,
    ) {
        #[cfg(not(any(
            target_arch = "x86_64",
            all(target_arch = "aarch64", target_feature = "neon")
        )))]
        let _ = (blocks, work, digits, forward);
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            ConstantTimeIsa::Avx2(isa, wide, _) => {
                isa.select_constant_time(blocks, work, digits, forward, wide)
            }
            #[cfg(target_arch = "x86_64")]
            ConstantTimeIsa::Sse2 => {
                quarter_search::select::<sse2::Sse2>(blocks, work, digits, forward)
            }
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            ConstantTimeIsa::Neon => {
                quarter_search::select::<neon::Neon>(blocks, work, digits, forward)
            }
        }
    }
}
