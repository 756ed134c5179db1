//! What lockstep asks of an AES backend beyond the `cipher` crate's trait: every lane's chain
//! run through rows of keystream blocks, which a backend of this crate's own keeps in registers
//! from row to row (through the trait, each row's input is loaded back from the row before).

use cipher::consts::U16;
use cipher::inout::{InOut, InOutBuf};
use cipher::{
    Block, BlockCipherEncBackend, BlockCipherEncClosure, BlockSizeUser, ParBlocks,
    ParBlocksSizeUser,
};

/// An AES backend that lockstep runs on.
pub(crate) trait LockstepBackend: BlockCipherEncBackend<BlockSize = U16> + Sized {
    /// Row after row of chained blocks: `rows` (a whole number of rows of `first.len()`
    /// blocks) gets `E(first)`, then `E` of that row, and so on; `each.row(j, row)` runs on
    /// row `j` as soon as it is written, before the next is encrypted.
    #[inline(always)]
    fn encrypt_rows(&self, first: &[Block<Self>], rows: &mut [Block<Self>], each: impl EachRow) {
        rows_through_memory(self, first, rows, each);
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

/// [`LockstepBackend::encrypt_rows`] through the `cipher` crate's trait: each row encrypted
/// from the one before in memory.
#[inline(always)]
pub(crate) fn rows_through_memory<B: BlockCipherEncBackend<BlockSize = U16>>(
    backend: &B,
    first: &[Block<B>],
    rows: &mut [Block<B>],
    mut each: impl EachRow,
) {
    let lanes = first.len();
    let mut previous = first;
    for (j, row) in rows.chunks_exact_mut(lanes).enumerate() {
        encrypt_into(backend, previous, row);
        each.row(j, row);
        previous = row;
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
