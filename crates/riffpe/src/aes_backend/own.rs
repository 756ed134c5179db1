//! What this crate's own AES backends share: the proof of a CPU that runs one
//! ([`OwnBackend`]), the key expansion and the round keys' [`Layout`], and the rounds of a
//! batch of blocks and of one block, generic over the register each backend holds blocks in.

use core::arch::x86_64::*;

use cipher::consts::U16;
use cipher::inout::InOut;
use cipher::{Block, BlockCipherEncClosure};

use super::lockstep::{LockstepClosure, Plain};

/// Proof that the CPU runs one of this crate's own AES backends, and runs it.
///
/// # Safety
///
/// Only a CPU with AES-NI may have one (key expansion uses it).
pub(crate) unsafe trait OwnBackend: Copy {
    /// Runs `f` on the backend, with the round keys `keys`.
    fn run(self, keys: &RoundKeys<Self>, f: impl LockstepClosure);

    /// The round keys of `key` for this backend, or `None` unless it is 16, 24 or 32 bytes
    /// long.
    fn expand(self, key: &[u8]) -> Option<RoundKeys<Self>> {
        RoundKeys::new(self, key)
    }
}

/// Round keys in the layout every backend of this crate's own reads, for any key size: the
/// first at 0, the rest at the end, so that AES-128, -192 and -256 run the same code (the
/// longer keys two or four more rounds, at 1 to 4) and whatever runs on a backend is compiled
/// once for it, not once per key size.
pub(crate) type Layout<K> = [K; MAX_ROUND_KEYS];

/// AES-256's round keys, the most of any key size.
const MAX_ROUND_KEYS: usize = 15;

/// An expanded AES key for one of this crate's own backends (`C`, the proof of its CPU).
#[derive(Clone)]
pub(crate) struct RoundKeys<C> {
    round: Layout<[u8; 16]>,
    /// 11, 13 or 15.
    count: usize,
    cpu: C,
}

impl<C: OwnBackend> RoundKeys<C> {
    /// The round keys of `key`, or `None` unless it is 16, 24 or 32 bytes long.
    pub(crate) fn new(cpu: C, key: &[u8]) -> Option<Self> {
        if !matches!(key.len(), 16 | 24 | 32) {
            return None;
        }
        // SAFETY: an `OwnBackend` exists only where the CPU has AES-NI.
        let (round, count) = unsafe { expand(key) };
        Some(RoundKeys { round, count, cpu })
    }

    /// 128, 192 or 256.
    pub(crate) fn key_bits(&self) -> u32 {
        32 * (self.count as u32 - 7)
    }

    /// Runs `f` with the backend.
    #[inline]
    pub(crate) fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        self.cpu.run(self, Plain(f));
    }

    /// [`RoundKeys::encrypt_with_backend`] for lockstep.
    #[inline]
    pub(crate) fn encrypt_with_lockstep_backend(&self, f: impl LockstepClosure) {
        self.cpu.run(self, f);
    }

    /// The round keys, each made a vector by `load`, and how many there are.
    #[inline(always)]
    pub(crate) fn load<K>(&self, load: impl Fn(&[u8; 16]) -> K) -> (Layout<K>, usize) {
        (each_key(&self.round, load), self.count)
    }
}

/// `f` of each key of a [`Layout`], written out key by key: `array::map` is `core`'s generic
/// code, which a crate built with several codegen units may call rather than inline.
#[inline(always)]
pub(crate) fn each_key<T, K>(keys: &Layout<T>, f: impl Fn(&T) -> K) -> Layout<K> {
    [
        f(&keys[0]),
        f(&keys[1]),
        f(&keys[2]),
        f(&keys[3]),
        f(&keys[4]),
        f(&keys[5]),
        f(&keys[6]),
        f(&keys[7]),
        f(&keys[8]),
        f(&keys[9]),
        f(&keys[10]),
        f(&keys[11]),
        f(&keys[12]),
        f(&keys[13]),
        f(&keys[14]),
    ]
}

#[cfg(feature = "zeroize")]
impl<C> Drop for RoundKeys<C> {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.round);
    }
}

/// Rounds 1 to the last of a block, in every state of `states`, with round keys `keys` in the
/// [`Layout`] of `count` of them: `round(state, key)` for each but the last, `last(state, key)`
/// for it. The first key is the caller's to add. The rounds every key size runs are unrolled,
/// the two or four that longer keys add a loop: small enough to inline into the engine.
#[inline(always)]
pub(crate) fn rounds<K: Copy, S>(
    states: &mut [S],
    keys: &Layout<K>,
    count: usize,
    round: impl Fn(&mut S, K),
    last: impl Fn(&mut S, K),
) {
    let mut each = |key: K| states.iter_mut().for_each(|state| round(state, key));
    for &key in keys[1..5].iter().skip(MAX_ROUND_KEYS - count) {
        each(key);
    }
    keys[5..14].iter().for_each(|&key| each(key));
    states.iter_mut().for_each(|state| last(state, keys[14]));
}

/// [`rounds`] of one block, unrolled: a chain of single blocks is bound by their latency, and
/// without a loop's instructions the reorder window holds more of the work beside the chain.
#[inline(always)]
fn rounds_unrolled<K: Copy, S>(
    state: &mut S,
    keys: &Layout<K>,
    count: usize,
    round: impl Fn(&mut S, K),
    last: impl Fn(&mut S, K),
) {
    if count == 15 {
        round(state, keys[1]);
        round(state, keys[2]);
    }
    if count >= 13 {
        round(state, keys[3]);
        round(state, keys[4]);
    }
    keys[5..14].iter().for_each(|&key| round(state, key));
    last(state, keys[14]);
}

/// One block, as every backend of this crate's own encrypts it.
#[inline]
#[target_feature(enable = "aes")]
pub(crate) fn encrypt_one(
    keys: &Layout<__m128i>,
    count: usize,
    mut block: InOut<'_, '_, Block<aes::Aes128>>,
) {
    // SAFETY: a block is 16 readable bytes; the load is unaligned.
    let state = unsafe { _mm_loadu_si128(block.get_in().as_ptr().cast()) };
    let mut state = _mm_xor_si128(state, keys[0]);
    rounds_unrolled(
        &mut state,
        keys,
        count,
        |state, key| *state = _mm_aesenc_si128(*state, key),
        |state, key| *state = _mm_aesenclast_si128(*state, key),
    );
    // SAFETY: a block is 16 writable bytes; the store is unaligned.
    unsafe { _mm_storeu_si128(block.get_out().as_mut_ptr().cast(), state) };
}

/// FIPS-197 `KeyExpansion` of a 16, 24 or 32-byte `key`, a word at a time, with `SubWord` done
/// by AES-NI so that no table lookup depends on the key: the round keys in the [`Layout`], and
/// how many there are.
#[target_feature(enable = "aes")]
pub(crate) fn expand(key: &[u8]) -> (Layout<[u8; 16]>, usize) {
    let nk = key.len() / 4;
    let count = nk + 7;
    let mut words = [0u32; 4 * MAX_ROUND_KEYS];
    for (word, bytes) in words.iter_mut().zip(key.chunks_exact(4)) {
        *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    let mut rcon = 1u32;
    for i in nk..4 * count {
        let mut temp = words[i - 1];
        if i % nk == 0 {
            // RotWord on little-endian words is a rotation right by one byte.
            temp = sub_word(temp.rotate_right(8)) ^ rcon;
            rcon = (rcon << 1) ^ (0x11b & 0u32.wrapping_sub(rcon >> 7));
        } else if nk > 6 && i % nk == 4 {
            temp = sub_word(temp);
        }
        words[i] = words[i - nk] ^ temp;
    }
    let key = |r: usize| {
        let mut key = [0u8; 16];
        for (bytes, word) in key.chunks_exact_mut(4).zip(&words[4 * r..4 * r + 4]) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        key
    };
    // Round key r > 0 at r + MAX_ROUND_KEYS - count; the slots between stay zero.
    let shift = MAX_ROUND_KEYS - count;
    let round = core::array::from_fn(|i| match i {
        0 => key(0),
        i if i > shift => key(i - shift),
        _ => [0; 16],
    });
    #[cfg(feature = "zeroize")]
    zeroize::Zeroize::zeroize(&mut words);
    (round, count)
}

/// FIPS-197 `SubWord`: word 0 of `AESKEYGENASSIST` is `SubWord` of word 1.
#[inline]
#[target_feature(enable = "aes")]
fn sub_word(word: u32) -> u32 {
    let assist = _mm_aeskeygenassist_si128::<0>(_mm_set1_epi32(word as i32));
    _mm_cvtsi128_si32(assist) as u32
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;

    use super::*;
    use crate::aes_backend::lockstep::{EachRow, LockstepBackend};
    use aes::cipher::{BlockCipherEncrypt, KeyInit};
    use cipher::ParBlocks;
    use cipher::typenum::Unsigned;
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;
    use std::vec::Vec;

    /// What each entry point of one of this crate's own backends made of the same blocks.
    struct Outputs {
        /// The blocks one at a time.
        one: Vec<[u8; 16]>,
        /// In batches of the backend's parallel blocks, the rest as a tail.
        par: Vec<[u8; 16]>,
        /// As tails one block shorter than a batch.
        tails: Vec<[u8; 16]>,
        /// From the first `lanes` blocks (all of them if fewer), the CBC-MACs of the whole rows
        /// of `absorbed`, then `rows` rows of chained blocks.
        rows: Vec<[u8; 16]>,
        /// Those rows as `EachRow` saw each of them.
        seen: Vec<[u8; 16]>,
    }

    /// Runs `blocks` through every entry point of the backend of `keys`: see [`Outputs`].
    fn every_entry_point<C: OwnBackend>(
        keys: &RoundKeys<C>,
        blocks: &[[u8; 16]],
        absorbed: &[[u8; 16]],
        (lanes, rows): (usize, usize),
    ) -> Outputs {
        struct Every<'a> {
            blocks: &'a [[u8; 16]],
            absorbed: &'a [[u8; 16]],
            lanes: usize,
            rows: usize,
            out: &'a mut Option<Outputs>,
        }
        struct Seen<'a>(&'a mut Vec<[u8; 16]>, usize);
        impl EachRow for Seen<'_> {
            fn row(&mut self, j: usize, row: &[Block<aes::Aes128>]) {
                assert_eq!(j, self.1, "rows in order");
                self.0.extend(row.iter().map(|block| block.0));
                self.1 += 1;
            }
        }
        impl LockstepClosure for Every<'_> {
            fn call<B: LockstepBackend>(self, backend: &B) {
                let blocks: Vec<Block<B>> = self.blocks.iter().map(|&b| b.into()).collect();
                let mut one = blocks.clone();
                for block in &mut one {
                    backend.encrypt_block_inplace(block);
                }
                let mut par = blocks.clone();
                let lanes = B::ParBlocksSize::USIZE;
                for chunk in par.chunks_mut(lanes) {
                    if chunk.len() == lanes {
                        let batch: &mut ParBlocks<B> = chunk.try_into().expect("a full batch");
                        backend.encrypt_par_blocks_inplace(batch);
                    } else {
                        backend.encrypt_tail_blocks_inplace(chunk);
                    }
                }
                let mut tails = blocks.clone();
                for chunk in tails.chunks_mut(lanes - 1) {
                    backend.encrypt_tail_blocks_inplace(chunk);
                }
                let first = &blocks[..blocks.len().min(self.lanes)];
                let mut rows = std::vec![Block::<B>::default(); first.len() * self.rows];
                let mut seen = Vec::new();
                if !first.is_empty() {
                    let absorbed = whole_rows(self.absorbed, first.len()).as_flattened();
                    backend.encrypt_rows(first, absorbed, &mut rows, Seen(&mut seen, 0));
                }
                let plain = |v: Vec<Block<B>>| v.into_iter().map(|b| b.0).collect();
                *self.out = Some(Outputs {
                    one: plain(one),
                    par: plain(par),
                    tails: plain(tails),
                    rows: plain(rows),
                    seen,
                });
            }
        }
        let mut out = None;
        keys.encrypt_with_lockstep_backend(Every {
            blocks,
            absorbed,
            lanes,
            rows,
            out: &mut out,
        });
        out.expect("the backend ran")
    }

    /// The whole rows of `lanes` blocks at the start of `blocks`.
    fn whole_rows(blocks: &[[u8; 16]], lanes: usize) -> &[[u8; 16]] {
        &blocks[..blocks.len() / lanes * lanes]
    }

    /// Rows of chained blocks from the first `lanes` of `blocks` after their CBC-MACs of
    /// `absorbed`, by the `aes` crate.
    fn reference_rows(
        key: &[u8],
        blocks: &[[u8; 16]],
        absorbed: &[[u8; 16]],
        (lanes, rows): (usize, usize),
    ) -> Vec<[u8; 16]> {
        let mut row = blocks[..blocks.len().min(lanes)].to_vec();
        if row.is_empty() {
            return row;
        }
        for input in whole_rows(absorbed, row.len()).chunks_exact(row.len()) {
            for (chain, input) in row.iter_mut().zip(input) {
                for (byte, input) in chain.iter_mut().zip(input) {
                    *byte ^= input;
                }
            }
            row = reference(key, &row);
        }
        let mut all = Vec::new();
        for _ in 0..rows {
            row = reference(key, &row);
            all.extend_from_slice(&row);
        }
        all
    }

    /// `blocks` encrypted one at a time by the `aes` crate under `key`.
    fn reference(key: &[u8], blocks: &[[u8; 16]]) -> Vec<[u8; 16]> {
        fn each<C: BlockCipherEncrypt<BlockSize = U16>>(
            c: C,
            blocks: &[[u8; 16]],
        ) -> Vec<[u8; 16]> {
            blocks
                .iter()
                .map(|b| {
                    let mut block = (*b).into();
                    c.encrypt_block(&mut block);
                    block.0
                })
                .collect()
        }
        match key.len() {
            16 => each(aes::Aes128::new_from_slice(key).unwrap(), blocks),
            24 => each(aes::Aes192::new_from_slice(key).unwrap(), blocks),
            _ => each(aes::Aes256::new_from_slice(key).unwrap(), blocks),
        }
    }

    /// An AES key of each size, for proptests.
    pub(crate) fn any_key() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 16),
            prop::collection::vec(any::<u8>(), 24),
            prop::collection::vec(any::<u8>(), 32),
        ]
    }

    /// FIPS-197 Appendix C.1, C.2 and C.3 through every entry point of `cpu`'s backend, on
    /// `blocks` copies of the plaintext, with rows of each of `lanes`.
    pub(crate) fn fips_197_known_answers<C: OwnBackend>(cpu: C, blocks: usize, lanes: &[usize]) {
        let plain: [u8; 16] = hex::decode("00112233445566778899aabbccddeeff")
            .unwrap()
            .try_into()
            .unwrap();
        for (len, cipher) in [
            (16, "69c4e0d86a7b0430d8cdb78070b4c55a"),
            (24, "dda97ca4864cdfe06eaf70a0ec0d7191"),
            (32, "8ea2b7ca516745bfeafc49904b496089"),
        ] {
            let key: Vec<u8> = (0..len as u8).collect();
            let keys = cpu.expand(&key).expect("a valid key length");
            assert_eq!(keys.key_bits(), 8 * len as u32);
            for &lanes in lanes {
                let out = every_entry_point(&keys, &std::vec![plain; blocks], &[], (lanes, 1));
                for block in [out.one, out.par, out.tails, out.rows].concat() {
                    assert_eq!(hex::encode(block), cipher, "{len}-byte key, {lanes} lanes");
                }
            }
        }
    }

    /// Every entry point of `cpu`'s backend under `key` gives what the `aes` crate gives:
    /// [`every_entry_point`] against [`reference`] and [`reference_rows`].
    pub(crate) fn matches_the_aes_crate<C: OwnBackend>(
        cpu: C,
        key: &[u8],
        blocks: &[[u8; 16]],
        absorbed: &[[u8; 16]],
        rows: (usize, usize),
    ) -> Result<(), TestCaseError> {
        let keys = cpu.expand(key).expect("a valid key length");
        let expected = reference(key, blocks);
        let expected_rows = reference_rows(key, blocks, absorbed, rows);
        let out = every_entry_point(&keys, blocks, absorbed, rows);
        prop_assert_eq!(&out.one, &expected);
        prop_assert_eq!(&out.par, &expected);
        prop_assert_eq!(&out.tails, &expected);
        prop_assert_eq!(&out.rows, &expected_rows);
        prop_assert_eq!(&out.seen, &expected_rows);
        Ok(())
    }

    #[test]
    fn fips_197_key_expansion() {
        let Some(cpu) = super::super::ni::AesNi::detect() else {
            return;
        };
        // FIPS-197 Appendix A.1, A.2, A.3: the last round key of each example key.
        for (key, bits, last) in [
            (
                "2b7e151628aed2a6abf7158809cf4f3c",
                128,
                "d014f9a8c9ee2589e13f0cc8b6630ca6",
            ),
            (
                "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
                192,
                "e98ba06f448c773c8ecc720401002202",
            ),
            (
                "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
                256,
                "fe4890d1e6188d0b046df344706c631e",
            ),
        ] {
            let keys = cpu.expand(&hex::decode(key).unwrap()).unwrap();
            assert_eq!(keys.key_bits(), bits);
            assert_eq!(hex::encode(keys.round[14]), last, "AES-{bits}");
        }
        assert!(cpu.expand(&[0; 20]).is_none());
    }
}
