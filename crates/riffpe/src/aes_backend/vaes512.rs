//! AES on 512-bit VAES for x86-64 CPUs with AVX-512 (VBMI among it), where lockstep's chains
//! stay in registers from one row of keystream blocks to the next: through the `cipher` crate's
//! trait, each row's input is loaded back from the row stored before, and that round trip
//! stalls the AES pipeline at every row. The planes or keys made from each row are made in the
//! same loop, so that they run in the shadow of the AES rounds.

use core::arch::x86_64::*;

use cipher::consts::{U16, U64};
use cipher::inout::{InOut, InOutBuf};
use cipher::{Array, Block, BlockCipherEncBackend, BlockSizeUser, ParBlocks, ParBlocksSizeUser};

use super::lockstep::{EachRow, LockstepBackend, LockstepClosure, rows_through_memory};
use super::own::{self, Layout, OwnBackend, RoundKeys};

// The features the row loop is built with: VBMI and BW for the planes made inside it, POPCNT
// for the counts of one message's ranking on arrival, which inlines into its chain.
cpufeatures::new!(
    vaes512_cpu,
    "aes",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512vbmi",
    "vaes",
    "popcnt"
);

/// Blocks per `encrypt_par_blocks` call: four to a register, sixteen registers in flight.
const LANES: usize = 64;
const ZMM: usize = LANES / 4;
const HALF: usize = LANES / 2;

/// Proof that this CPU has AES-NI, VAES and AVX-512 F, BW, VL and VBMI: only
/// [`Vaes512::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Vaes512(());

impl Vaes512 {
    pub(crate) fn detect() -> Option<Vaes512> {
        vaes512_cpu::get().then_some(Vaes512(()))
    }
}

// SAFETY: only `Vaes512::detect` makes one, where the CPU has AES-NI.
unsafe impl OwnBackend for Vaes512 {
    #[inline]
    fn run(self, keys: &RoundKeys<Self>, f: impl LockstepClosure) {
        // SAFETY: `self` proves the CPU has the features `run` is built with.
        unsafe { run(keys, f) }
    }
}

#[inline]
#[target_feature(enable = "aes,avx512f,avx512bw,avx512vl,avx512vbmi,vaes,popcnt")]
fn run(keys: &RoundKeys<Vaes512>, f: impl LockstepClosure) {
    // SAFETY: each key is 16 readable bytes; the load is unaligned.
    let (single, count) = keys.load(|key| unsafe { _mm_loadu_si128(key.as_ptr().cast()) });
    let quad = own::each_key(&single, |&key| _mm512_broadcast_i32x4(key));
    f.call(&Backend {
        single,
        quad,
        count,
    });
}

/// SPEC `E_K` on this CPU; it exists only inside [`run`].
struct Backend {
    /// Round keys for one block.
    single: Layout<__m128i>,
    /// The same, four times over, for four blocks a register.
    quad: Layout<__m512i>,
    /// How many round keys the key size has.
    count: usize,
}

impl BlockSizeUser for Backend {
    type BlockSize = U16;
}

impl ParBlocksSizeUser for Backend {
    type ParBlocksSize = U64;
}

impl BlockCipherEncBackend for Backend {
    #[inline(always)]
    fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        // SAFETY: a `Backend` exists only inside `run`, on a CPU with AES-NI.
        unsafe { own::encrypt_one(&self.single, self.count, block) }
    }

    #[inline(always)]
    fn encrypt_par_blocks(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let (input, _) = Array::slice_as_flattened(blocks.get_in()).as_chunks::<64>();
        // SAFETY: a `Backend` exists only inside `run`, on a CPU with AVX-512 and VAES.
        let states = unsafe { encrypt_row(&self.quad, self.count, load_row::<ZMM>(input)) };
        let (output, _) = Array::slice_as_flattened_mut(blocks.get_out()).as_chunks_mut::<64>();
        // SAFETY: as above.
        unsafe { store_row(output, states) }
    }

    #[inline(always)]
    fn encrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
        // A register of four blocks costs what one block costs when latency bounds them: pad
        // to half a batch or a whole one.
        if blocks.len() <= HALF {
            self.encrypt_padded::<{ ZMM / 2 }>(blocks);
        } else {
            self.encrypt_padded::<ZMM>(blocks);
        }
    }
}

impl Backend {
    /// `blocks` (at most `4 * Z`) encrypted in `Z` registers, padded.
    #[inline(always)]
    fn encrypt_padded<const Z: usize>(&self, mut blocks: InOutBuf<'_, '_, Block<Self>>) {
        let bytes = 16 * blocks.len();
        let mut batch = [[0u8; 64]; Z];
        batch.as_flattened_mut()[..bytes]
            .copy_from_slice(Array::slice_as_flattened(blocks.get_in()));
        // SAFETY: a `Backend` exists only inside `run`, on a CPU with AVX-512 and VAES.
        let states = unsafe { encrypt_row(&self.quad, self.count, load_row::<Z>(&batch)) };
        // SAFETY: as above.
        unsafe { store_row(&mut batch, states) };
        Array::slice_as_flattened_mut(blocks.get_out())
            .copy_from_slice(&batch.as_flattened()[..bytes]);
    }
}

impl LockstepBackend for Backend {
    #[inline(always)]
    fn encrypt_rows(
        &self,
        first: &[Block<Self>],
        absorbed: &[u8],
        rows: &mut [Block<Self>],
        each: impl EachRow,
    ) {
        let keys = (&self.quad, self.count);
        match first.len() {
            // SAFETY: a `Backend` exists only inside `run`, on a CPU with the features
            // `rows_in_registers` is built with.
            LANES => unsafe { rows_in_registers::<ZMM>(keys, first, absorbed, rows, each) },
            // Half the lanes, as a step of 32 messages runs: half the registers.
            // SAFETY: as above.
            HALF => unsafe { rows_in_registers::<{ ZMM / 2 }>(keys, first, absorbed, rows, each) },
            _ => rows_through_memory(self, first, absorbed, rows, each),
        }
    }

    /// Up to the next group whose rows stay in registers, from more than a quarter of a batch:
    /// a group's rows cost about what those of a short one padded to a register's blocks do.
    /// Two chains run one after the other, each on one message's own path.
    #[inline(always)]
    fn group_lanes(lanes: usize) -> usize {
        match lanes {
            2 => 1,
            17..=HALF => HALF,
            33..LANES => LANES,
            _ => lanes,
        }
    }
}

/// [`LockstepBackend::encrypt_rows`] of `4 * Z` chains, held in `Z` registers from the
/// CBC-MAC's first block to the last row.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi,vaes")]
fn rows_in_registers<const Z: usize>(
    (keys, count): (&Layout<__m512i>, usize),
    first: &[Block<Backend>],
    absorbed: &[u8],
    rows: &mut [Block<Backend>],
    mut each: impl EachRow,
) {
    let (first, _) = Array::slice_as_flattened(first).as_chunks::<64>();
    let mut states = load_row::<Z>(first);
    let (absorbed, _) = absorbed.as_chunks::<64>();
    for input in absorbed.chunks_exact(Z) {
        let input = load_row::<Z>(input);
        for (state, input) in states.iter_mut().zip(input) {
            *state = _mm512_xor_si512(*state, input);
        }
        states = encrypt_row(keys, count, states);
    }
    for (j, row) in rows.chunks_exact_mut(4 * Z).enumerate() {
        states = encrypt_row(keys, count, states);
        let (quads, _) = Array::slice_as_flattened_mut(row).as_chunks_mut::<64>();
        store_row(quads, states);
        each.row(j, row);
    }
}

/// The AES rounds of `4 * Z` blocks, four to a register.
#[inline]
#[target_feature(enable = "avx512f,vaes")]
fn encrypt_row<const Z: usize>(
    keys: &Layout<__m512i>,
    count: usize,
    mut states: [__m512i; Z],
) -> [__m512i; Z] {
    for state in &mut states {
        *state = _mm512_xor_si512(*state, keys[0]);
    }
    own::rounds(
        &mut states,
        keys,
        count,
        |state, key| *state = _mm512_aesenc_epi128(*state, key),
        |state, key| *state = _mm512_aesenclast_epi128(*state, key),
    );
    states
}

/// The first `Z` lines of four blocks in `quads`, one to a register.
#[inline]
#[target_feature(enable = "avx512f")]
fn load_row<const Z: usize>(quads: &[[u8; 64]]) -> [__m512i; Z] {
    let quads = &quads[..Z];
    // SAFETY: each quad is 64 readable bytes; the load is unaligned.
    core::array::from_fn(|r| unsafe { _mm512_loadu_si512(quads[r].as_ptr().cast()) })
}

/// `states` into the first lines of four blocks in `quads`.
#[inline]
#[target_feature(enable = "avx512f")]
fn store_row<const Z: usize>(quads: &mut [[u8; 64]], states: [__m512i; Z]) {
    for (quad, state) in quads[..Z].iter_mut().zip(states) {
        // SAFETY: each quad is 64 writable bytes; the store is unaligned.
        unsafe { _mm512_storeu_si512(quad.as_mut_ptr().cast(), state) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes_backend::own::tests::{any_key, fips_197_known_answers, matches_the_aes_crate};
    use proptest::prelude::*;

    #[test]
    fn fips_197_known_answers_through_every_entry_point() {
        if let Some(cpu) = Vaes512::detect() {
            fips_197_known_answers(cpu, 70, &[LANES, HALF, 20]);
        }
    }

    proptest! {
        #[test]
        fn matches_the_aes_crate_on_random_input(
            key in any_key(),
            blocks in prop::collection::vec(any::<[u8; 16]>(), 1..140),
            absorbed in prop::collection::vec(any::<[u8; 16]>(), 0..3 * LANES),
            lanes in prop_oneof![Just(LANES), Just(HALF), 1..LANES],
            rows in 0..5usize,
        ) {
            if let Some(cpu) = Vaes512::detect() {
                matches_the_aes_crate(cpu, &key, &blocks, &absorbed, (lanes, rows))?;
            }
        }
    }
}
