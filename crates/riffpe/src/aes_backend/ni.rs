//! AES on AES-NI for x86-64 CPUs without VAES (Westmere to Cascade Lake, Zen 1 and 2), in
//! batches of [`LANES`] blocks: the `aes` crate's AES-NI runs eight a call, and lockstep's
//! selection over the keys' leading octets needs 32 or 64 lanes side by side. A batch runs
//! eight blocks at a time, as many as the `aes` crate's AES-NI keeps in flight.

use core::arch::x86_64::*;

use cipher::consts::{U16, U64};
use cipher::inout::{InOut, InOutBuf};
use cipher::typenum::Unsigned;
use cipher::{Block, BlockCipherEncBackend, BlockSizeUser, ParBlocks, ParBlocksSizeUser};

use super::lockstep::{LockstepBackend, LockstepClosure};
use super::own::{self, Layout, OwnBackend, RoundKeys};

cpufeatures::new!(aes_cpu, "aes");
cpufeatures::new!(avx2_cpu, "avx2");

/// Blocks per `encrypt_par_blocks` call.
type Lanes = U64;
const LANES: usize = Lanes::USIZE;

/// Blocks in flight: one register each, beside the round key of the moment.
const IN_FLIGHT: usize = 8;

/// Proof that this CPU has AES-NI, and whether it has AVX2: only [`AesNi::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AesNi {
    avx2: bool,
}

impl AesNi {
    pub(crate) fn detect() -> Option<AesNi> {
        aes_cpu::get().then(|| AesNi {
            avx2: avx2_cpu::get(),
        })
    }

    /// Each way [`run`] is built that this CPU runs: without AVX2, and with it where it has it.
    #[cfg(test)]
    pub(crate) fn variants() -> impl Iterator<Item = AesNi> {
        let cpu = AesNi::detect();
        let without = cpu.map(|_| AesNi { avx2: false });
        without.into_iter().chain(cpu.filter(|cpu| cpu.avx2))
    }
}

// SAFETY: only `AesNi::detect` makes one, where the CPU has AES-NI, and AVX2 if `avx2` says so.
unsafe impl OwnBackend for AesNi {
    #[inline]
    fn run(self, keys: &RoundKeys<Self>, f: impl LockstepClosure) {
        // SAFETY: `self` proves the CPU has the features each `run` is built with.
        unsafe {
            if self.avx2 {
                run_avx2(keys, f);
            } else {
                run(keys, f);
            }
        }
    }
}

/// [`run_on`] built for AES-NI alone (Westmere to Ivy Bridge).
#[inline]
#[target_feature(enable = "aes")]
fn run(keys: &RoundKeys<AesNi>, f: impl LockstepClosure) {
    run_on(keys, f);
}

/// [`run_on`] built with AVX2 too (Haswell to Cascade Lake, Zen 1 and 2), so that the AVX2
/// code that `select` inlines into the AES row loop compiles to instructions; built for AES-NI
/// alone, each of its intrinsics would be a call.
#[inline]
#[target_feature(enable = "aes,avx2")]
fn run_avx2(keys: &RoundKeys<AesNi>, f: impl LockstepClosure) {
    run_on(keys, f);
}

/// The backend, with its round keys loaded, handed to `f`. The CPU must have AES-NI.
#[inline(always)]
fn run_on(keys: &RoundKeys<AesNi>, f: impl LockstepClosure) {
    // SAFETY: each key is 16 readable bytes; the load is unaligned.
    let (keys, count) = keys.load(|key| unsafe { _mm_loadu_si128(key.as_ptr().cast()) });
    f.call(&Backend { keys, count });
}

/// SPEC `E_K` on this CPU; it exists only inside [`run_on`].
struct Backend {
    keys: Layout<__m128i>,
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
        // SAFETY: a `Backend` exists only inside `run_on`, on a CPU with AES-NI.
        unsafe { own::encrypt_one(&self.keys, self.count, block) }
    }

    #[inline(always)]
    fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        self.encrypt_eights(&mut blocks.into_buf(), LANES / IN_FLIGHT);
    }

    #[inline(always)]
    fn encrypt_tail_blocks(&self, mut blocks: InOutBuf<'_, '_, Block<Self>>) {
        let len = blocks.len().min(LANES);
        let eights = len / IN_FLIGHT;
        self.encrypt_eights(&mut blocks, eights);
        // The rest padded to eight, copied a block at a time (a copy of a length known only at
        // run time is a call).
        let rest = eights * IN_FLIGHT..len;
        if !rest.is_empty() {
            let mut batch = [Block::<Self>::default(); IN_FLIGHT];
            for (block, input) in batch.iter_mut().zip(&blocks.get_in()[rest.clone()]) {
                *block = *input;
            }
            // SAFETY: a `Backend` exists only inside `run_on`, on a CPU with AES-NI.
            let states = unsafe { encrypt_eight(&self.keys, self.count, &batch) };
            store_eight(&mut batch, states);
            for (output, block) in blocks.get_out()[rest].iter_mut().zip(&batch) {
                *output = *block;
            }
        }
    }
}

impl Backend {
    /// The first `eights` eights of `blocks`, each eight in flight together.
    #[inline(always)]
    fn encrypt_eights(&self, blocks: &mut InOutBuf<'_, '_, Block<Self>>, eights: usize) {
        for at in 0..eights {
            let (input, _) = blocks.get_in().as_chunks::<IN_FLIGHT>();
            // SAFETY: a `Backend` exists only inside `run_on`, on a CPU with AES-NI.
            let states = unsafe { encrypt_eight(&self.keys, self.count, &input[at]) };
            let (output, _) = blocks.get_out().as_chunks_mut::<IN_FLIGHT>();
            store_eight(&mut output[at], states);
        }
    }
}

// Rows through memory, and a short group as it is: padded to a whole batch, its extra AES
// cost more than the selection over planes saved.
impl LockstepBackend for Backend {}

/// The eight blocks of `input`, encrypted in registers.
#[inline]
#[target_feature(enable = "aes")]
fn encrypt_eight(
    keys: &Layout<__m128i>,
    count: usize,
    input: &[Block<Backend>; IN_FLIGHT],
) -> [__m128i; IN_FLIGHT] {
    let mut states: [__m128i; IN_FLIGHT] = core::array::from_fn(|b| {
        // SAFETY: a block is 16 readable bytes; the load is unaligned.
        let state = unsafe { _mm_loadu_si128(input[b].as_ptr().cast()) };
        _mm_xor_si128(state, keys[0])
    });
    own::rounds(
        &mut states,
        keys,
        count,
        |state, key| *state = _mm_aesenc_si128(*state, key),
        |state, key| *state = _mm_aesenclast_si128(*state, key),
    );
    states
}

/// `states` into the eight blocks of `output`.
#[inline(always)]
fn store_eight(output: &mut [Block<Backend>; IN_FLIGHT], states: [__m128i; IN_FLIGHT]) {
    for (block, state) in output.iter_mut().zip(states) {
        // SAFETY: a block is 16 writable bytes; the store is unaligned.
        unsafe { _mm_storeu_si128(block.as_mut_ptr().cast(), state) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes_backend::own::tests::{any_key, fips_197_known_answers, matches_the_aes_crate};
    use proptest::prelude::*;

    #[test]
    fn fips_197_known_answers_through_every_entry_point() {
        for cpu in AesNi::variants() {
            fips_197_known_answers(cpu, 150, &[LANES, 20, 8, 3]);
        }
    }

    proptest! {
        /// Every entry point on random keys of each size, blocks, CBC-MAC input and lanes
        /// (whole batches, whole eights, and neither) gives what the `aes` crate gives.
        #[test]
        fn matches_the_aes_crate_on_random_input(
            key in any_key(),
            blocks in prop::collection::vec(any::<[u8; 16]>(), 1..140),
            absorbed in prop::collection::vec(any::<[u8; 16]>(), 0..3 * LANES),
            lanes in prop_oneof![Just(LANES), Just(16), 1..LANES],
            rows in 0..5usize,
        ) {
            for cpu in AesNi::variants() {
                matches_the_aes_crate(cpu, &key, &blocks, &absorbed, (lanes, rows))?;
            }
        }
    }
}
