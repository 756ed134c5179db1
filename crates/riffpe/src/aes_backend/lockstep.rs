//! What lockstep asks of an AES backend beyond the `cipher` crate's trait: every lane's chain
//! run through its CBC-MAC and then rows of keystream blocks, which a backend of this crate's own keeps in registers
//! from row to row (through the trait, each row's input is loaded back from the row before).

use cipher::consts::U16;
use cipher::inout::{InOut, InOutBuf};
use cipher::{
    Array, Block, BlockCipherEncBackend, BlockCipherEncClosure, BlockSizeUser, ParBlocks,
    ParBlocksSizeUser,
};

/// An AES backend that lockstep runs on.
pub(crate) trait LockstepBackend: BlockCipherEncBackend<BlockSize = U16> + Sized {
    /// Each lane's CBC-MAC, then row after row of chained blocks: the chain from lane `l`'s
    /// block in `first` absorbs block `l` of each row of `absorbed` (`E(chain ⊕ block)`), then
    /// `rows` (a whole number of rows of `first.len()` blocks, at least one) gets `E(chain)`,
    /// then `E` of that row, and so on; `each.row(j, row)` runs on row `j` as soon as it is
    /// written, before the next is encrypted.
    #[inline(always)]
    fn encrypt_rows(
        &self,
        first: &[Block<Self>],
        absorbed: &[u8],
        rows: &mut [Block<Self>],
        each: impl EachRow,
    ) {
        rows_through_memory(self, first, absorbed, rows, each);
    }

    /// The lanes a group of `lanes` chains, fewer than a batch, runs as where that costs less:
    /// more (padded with chains whose results are dropped) or fewer (the group in parts, one
    /// after another). By default, `lanes`.
    #[inline(always)]
    fn group_lanes(lanes: usize) -> usize {
        lanes
    }
}

/// What is made from each row of keystream blocks as [`LockstepBackend::encrypt_rows`] writes
/// it. A trait rather than a closure so that its `#[inline(always)]` puts the work inside the
/// row loop: called, it would spill every chain held in a register.
pub(crate) trait EachRow {
    fn row(&mut self, j: usize, row: &[Block<aes::Aes128>]);
}

/// [`LockstepBackend::encrypt_rows`] through the `cipher` crate's trait: the CBC-MAC run in the
/// first row's room, then each row encrypted from the one before in memory.
#[inline(always)]
pub(crate) fn rows_through_memory<B: BlockCipherEncBackend<BlockSize = U16>>(
    backend: &B,
    first: &[Block<B>],
    absorbed: &[u8],
    rows: &mut [Block<B>],
    mut each: impl EachRow,
) {
    let lanes = first.len();
    let mut rows = rows.chunks_exact_mut(lanes);
    let Some(chains) = rows.next() else {
        return;
    };
    chains.copy_from_slice(first);
    for input in absorbed.chunks_exact(16 * lanes) {
        xor_blocks(chains, input);
        encrypt_in_place(backend, chains);
    }
    encrypt_in_place(backend, chains);
    each.row(0, chains);
    let mut previous = &*chains;
    for (j, row) in rows.enumerate() {
        encrypt_into(backend, previous, row);
        each.row(j + 1, row);
        previous = row;
    }
}

/// `blocks[l] = E(blocks[l])` for every lane, in one backend call.
#[inline(always)]
fn encrypt_in_place<B: BlockCipherEncBackend<BlockSize = U16>>(
    backend: &B,
    blocks: &mut [Block<B>],
) {
    match <&mut ParBlocks<B>>::try_from(&mut *blocks) {
        Ok(batch) => backend.encrypt_par_blocks_inplace(batch),
        Err(_) => backend.encrypt_tail_blocks_inplace(blocks),
    }
}

/// `output[l] = E(input[l])` for every lane, in one backend call.
#[inline(always)]
fn encrypt_into<B: BlockCipherEncBackend<BlockSize = U16>>(
    backend: &B,
    input: &[Block<B>],
    output: &mut [Block<B>],
) {
    let par = (
        <&ParBlocks<B>>::try_from(input),
        <&mut ParBlocks<B>>::try_from(&mut *output),
    );
    if let (Ok(input), Ok(output)) = par {
        backend.encrypt_par_blocks(InOut::from((input, output)));
    } else if let Ok(blocks) = InOutBuf::new(input, output) {
        backend.encrypt_tail_blocks(blocks);
    }
}

/// A closure over a [`LockstepBackend`], as `BlockCipherEncClosure` is over a backend.
pub(crate) trait LockstepClosure {
    fn call<B: LockstepBackend>(self, backend: &B);
}

/// Runs a [`LockstepClosure`] on any cipher's backend, whose rows go through memory.
pub(crate) struct OnAnyBackend<F>(pub(crate) F);

impl<F> BlockSizeUser for OnAnyBackend<F> {
    type BlockSize = U16;
}

impl<F: LockstepClosure> BlockCipherEncClosure for OnAnyBackend<F> {
    #[inline(always)]
    fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
        self.0.call(&AnyBackend(backend));
    }
}

/// Runs a `BlockCipherEncClosure` as a [`LockstepClosure`], for this crate's own backends.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Plain<F>(pub(crate) F);

#[cfg(target_arch = "x86_64")]
impl<F: BlockCipherEncClosure<BlockSize = U16>> LockstepClosure for Plain<F> {
    #[inline(always)]
    fn call<B: LockstepBackend>(self, backend: &B) {
        self.0.call(backend);
    }
}

/// Another crate's backend, as a [`LockstepBackend`] with the rows through memory.
struct AnyBackend<'b, B>(&'b B);

impl<B: BlockCipherEncBackend<BlockSize = U16>> BlockSizeUser for AnyBackend<'_, B> {
    type BlockSize = U16;
}

impl<B: BlockCipherEncBackend<BlockSize = U16>> ParBlocksSizeUser for AnyBackend<'_, B> {
    type ParBlocksSize = B::ParBlocksSize;
}

impl<B: BlockCipherEncBackend<BlockSize = U16>> BlockCipherEncBackend for AnyBackend<'_, B> {
    #[inline(always)]
    fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        self.0.encrypt_block(block);
    }

    #[inline(always)]
    fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        self.0.encrypt_par_blocks(blocks);
    }

    #[inline(always)]
    fn encrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
        self.0.encrypt_tail_blocks(blocks);
    }
}

impl<B: BlockCipherEncBackend<BlockSize = U16>> LockstepBackend for AnyBackend<'_, B> {}

/// `state ^= input` for each block (`input` as long as `states`), four blocks at a time as
/// 64-bit words, which the compiler turns into vector XORs (512-bit ones in the VAES-512
/// backend's closure); a loop over the bytes compiles to 16 byte loads and stores a block.
#[inline(always)]
pub(crate) fn xor_blocks(states: &mut [Block<aes::Aes128>], input: &[u8]) {
    debug_assert_eq!(states.len() * 16, input.len());
    let states = Array::slice_as_flattened_mut(states);
    let (states_wide, states_tail) = states.as_chunks_mut::<64>();
    let (input_wide, input_tail) = input.as_chunks::<64>();
    for (state, input) in states_wide.iter_mut().zip(input_wide) {
        xor_words(state, input);
    }
    let (states_tail, _) = states_tail.as_chunks_mut::<16>();
    let (input_tail, _) = input_tail.as_chunks::<16>();
    for (state, input) in states_tail.iter_mut().zip(input_tail) {
        xor_words(state, input);
    }
}

/// `state ^= input`, `N` bytes as 64-bit words.
#[inline(always)]
fn xor_words<const N: usize>(state: &mut [u8; N], input: &[u8; N]) {
    let (state_words, _) = state.as_chunks_mut::<8>();
    let (input_words, _) = input.as_chunks::<8>();
    for (word, input) in state_words.iter_mut().zip(input_words) {
        *word = (u64::from_ne_bytes(*word) ^ u64::from_ne_bytes(*input)).to_ne_bytes();
    }
}
