//! AES on 256-bit VAES for x86-64 CPUs that have VAES and AVX2 but not the AVX-512 that
//! `vaes512` needs, such as Zen 3, on which the `aes` crate runs AES-NI one block per
//! instruction.

use core::arch::x86_64::*;

use cipher::consts::U16;
use cipher::inout::{InOut, InOutBuf};
use cipher::typenum::Unsigned;
use cipher::{Block, BlockCipherEncBackend, BlockSizeUser, ParBlocks, ParBlocksSizeUser};

use super::lockstep::{LockstepBackend, LockstepClosure};
use super::own::{self, Layout, OwnBackend, RoundKeys};

// POPCNT for the counts of one message's ranking on arrival, which inlines into its chain.
cpufeatures::new!(aes_avx2_cpu, "aes", "avx2", "popcnt");

/// Blocks per `encrypt_par_blocks` call: two to a register, eight registers in flight, which
/// covers the VAES latency with room for the round key and the caller's live values.
type Lanes = U16;
const YMM: usize = Lanes::USIZE / 2;

/// Proof that this CPU has AES-NI, AVX2, POPCNT and VAES: only [`Vaes256::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Vaes256(());

impl Vaes256 {
    pub(crate) fn detect() -> Option<Vaes256> {
        (aes_avx2_cpu::get() && cpuid_vaes()).then_some(Vaes256(()))
    }
}

// SAFETY: only `Vaes256::detect` makes one, where the CPU has AES-NI.
unsafe impl OwnBackend for Vaes256 {
    #[inline]
    fn run(self, keys: &RoundKeys<Self>, f: impl LockstepClosure) {
        // SAFETY: `self` proves the CPU has the features `run` is built with.
        unsafe { run(keys, f) }
    }
}

/// CPUID leaf 7, ECX bit 9 (VAES); `cpufeatures` ties it to AVX-512 register state, which
/// 256-bit VAES does not need (AVX2's, checked with it, suffices).
fn cpuid_vaes() -> bool {
    __cpuid(0).eax >= 7 && __cpuid_count(7, 0).ecx & (1 << 9) != 0
}

#[inline]
#[target_feature(enable = "aes,avx2,popcnt,vaes")]
fn run(keys: &RoundKeys<Vaes256>, f: impl LockstepClosure) {
    // SAFETY: each key is 16 readable bytes; the load is unaligned.
    let (single, count) = keys.load(|key| unsafe { _mm_loadu_si128(key.as_ptr().cast()) });
    let double = own::each_key(&single, |&key| _mm256_broadcastsi128_si256(key));
    f.call(&Backend {
        single,
        double,
        count,
    });
}

/// SPEC `E_K` on this CPU; it exists only inside [`run`].
struct Backend {
    /// Round keys for one block.
    single: Layout<__m128i>,
    /// The same, twice over, for two blocks a register.
    double: Layout<__m256i>,
    /// How many round keys the key size has.
    count: usize,
}

impl BlockSizeUser for Backend {
    type BlockSize = U16;
}

impl ParBlocksSizeUser for Backend {
    type ParBlocksSize = Lanes;
}

impl BlockCipherEncBackend for Backend {
    #[inline(always)]
    fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        // SAFETY: a `Backend` exists only inside `run`, on a CPU with AES-NI.
        unsafe { own::encrypt_one(&self.single, self.count, block) }
    }

    #[inline(always)]
    fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        // SAFETY: a `Backend` exists only inside `run`, on a CPU with AVX2 and VAES.
        unsafe { encrypt_par(&self.double, self.count, blocks) }
    }

    #[inline(always)]
    fn encrypt_tail_blocks(&self, mut blocks: InOutBuf<'_, '_, Block<Self>>) {
        // A full batch costs what a few blocks cost when latency bounds them: pad to one.
        let mut batch = ParBlocks::<Self>::default();
        let count = blocks.len().min(Lanes::USIZE);
        batch[..count].copy_from_slice(&blocks.get_in()[..count]);
        self.encrypt_par_blocks_inplace(&mut batch);
        blocks.get_out()[..count].copy_from_slice(&batch[..count]);
    }
}

// Rows through memory: with 16 lanes the engine keeps its chains in registers itself.
impl LockstepBackend for Backend {
    /// A whole batch from three lanes on: the engine keeps a batch's chains in registers from
    /// row to row, where a shorter group's go through memory. Two chains run one after the
    /// other, each on one message's own path.
    #[inline(always)]
    fn group_lanes(lanes: usize) -> usize {
        match lanes {
            2 => 1,
            3..Lanes::USIZE => Lanes::USIZE,
            _ => lanes,
        }
    }
}

#[inline]
#[target_feature(enable = "avx2,vaes")]
fn encrypt_par(
    keys: &Layout<__m256i>,
    count: usize,
    mut blocks: InOut<'_, '_, ParBlocks<Backend>>,
) {
    let input = blocks.get_in();
    let mut states: [__m256i; YMM] = core::array::from_fn(|r| {
        // SAFETY: blocks `2r` and `2r + 1` are 32 contiguous readable bytes; the load is
        // unaligned.
        let state = unsafe { _mm256_loadu_si256(input[2 * r..].as_ptr().cast()) };
        _mm256_xor_si256(state, keys[0])
    });
    own::rounds(
        &mut states,
        keys,
        count,
        |state, key| *state = _mm256_aesenc_epi128(*state, key),
        |state, key| *state = _mm256_aesenclast_epi128(*state, key),
    );
    let output = blocks.get_out();
    for (r, state) in states.into_iter().enumerate() {
        // SAFETY: blocks `2r` and `2r + 1` are 32 contiguous writable bytes; the store is
        // unaligned.
        unsafe { _mm256_storeu_si256(output[2 * r..].as_mut_ptr().cast(), state) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes_backend::own::tests::{any_key, fips_197_known_answers, matches_the_aes_crate};
    use proptest::prelude::*;

    #[test]
    fn fips_197_known_answers_through_every_entry_point() {
        if let Some(cpu) = Vaes256::detect() {
            fips_197_known_answers(cpu, 20, &[Lanes::USIZE]);
        }
    }

    proptest! {
        /// One row of chains from a whole batch of lanes, as the engine asks of this backend.
        #[test]
        fn matches_the_aes_crate_on_random_input(
            key in any_key(),
            blocks in prop::collection::vec(any::<[u8; 16]>(), 0..70),
        ) {
            if let Some(cpu) = Vaes256::detect() {
                matches_the_aes_crate(cpu, &key, &blocks, &[], (Lanes::USIZE, 1))?;
            }
        }
    }
}
