//! AES-128, -192 or -256 chosen from the key length at run time, as the reference does.

use cipher::consts::U16;
#[cfg(target_arch = "x86_64")]
use cipher::{Block, ParBlocksSizeUser, consts::U8, inout::InOut, typenum::Unsigned};
use cipher::{
    BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, KeyInit,
};
use core::fmt;

use crate::SetupError;
#[cfg(target_arch = "x86_64")]
use crate::aes_vaes256::{self, OwnBackend};
#[cfg(target_arch = "x86_64")]
use crate::aes_vaes512;
use crate::backend::{LockstepClosure, OnAnyBackend};

/// AES with the key size picked from the key: 16, 24 or 32 bytes.
///
/// The hardware backend is picked at run time, once, when the key is expanded: VAES of this
/// crate's own on x86-64 CPUs with VAES and AVX-512 (512-bit, with lockstep's chains kept in
/// registers from one row of keystream blocks to the next) or VAES and AVX2 without that
/// AVX-512 (256-bit; on a Zen 3 the `aes` crate would run AES-NI), else the `aes` crate's choice
/// (AES-NI, ARMv8 crypto extensions, or the constant-time software fallback). With the `zeroize`
/// feature the expanded key is wiped on drop. `Debug` shows the key size only.
///
/// ```
/// let aes = riffpe::Aes::new_from_slice(&[7u8; 24])?;
/// assert_eq!(aes.key_bits(), 192);
/// assert!(riffpe::Aes::new_from_slice(&[7u8; 20]).is_err());
/// # Ok::<(), riffpe::Error>(())
/// ```
#[derive(Clone)]
pub struct Aes(Inner);

#[derive(Clone)]
enum Inner {
    Aes128(aes::Aes128),
    Aes192(aes::Aes192),
    Aes256(aes::Aes256),
    #[cfg(target_arch = "x86_64")]
    Vaes128(aes_vaes256::RoundKeys<11, aes_vaes256::Vaes256>),
    #[cfg(target_arch = "x86_64")]
    Vaes192(aes_vaes256::RoundKeys<13, aes_vaes256::Vaes256>),
    #[cfg(target_arch = "x86_64")]
    Vaes256(aes_vaes256::RoundKeys<15, aes_vaes256::Vaes256>),
    #[cfg(target_arch = "x86_64")]
    Wide128(aes_vaes256::RoundKeys<11, aes_vaes512::Vaes512>),
    #[cfg(target_arch = "x86_64")]
    Wide192(aes_vaes256::RoundKeys<13, aes_vaes512::Vaes512>),
    #[cfg(target_arch = "x86_64")]
    Wide256(aes_vaes256::RoundKeys<15, aes_vaes512::Vaes512>),
}

impl Aes {
    /// Expands `key`; errors unless it is 16, 24 or 32 bytes long.
    pub fn new_from_slice(key: &[u8]) -> Result<Self, SetupError> {
        #[cfg(target_arch = "x86_64")]
        if let Some(cpu) = aes_vaes512::Vaes512::detect() {
            return Ok(Aes(match key.len() {
                16 => Inner::Wide128(cpu.expand(key)),
                24 => Inner::Wide192(cpu.expand(key)),
                32 => Inner::Wide256(cpu.expand(key)),
                len => return Err(SetupError::InvalidKeyLength { len }),
            }));
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(cpu) = aes_vaes256::Vaes256::detect() {
            return Ok(Aes(match key.len() {
                16 => Inner::Vaes128(cpu.expand(key)),
                24 => Inner::Vaes192(cpu.expand(key)),
                32 => Inner::Vaes256(cpu.expand(key)),
                len => return Err(SetupError::InvalidKeyLength { len }),
            }));
        }
        let invalid = |_| SetupError::InvalidKeyLength { len: key.len() };
        Ok(Aes(match key.len() {
            16 => Inner::Aes128(aes::Aes128::new_from_slice(key).map_err(invalid)?),
            24 => Inner::Aes192(aes::Aes192::new_from_slice(key).map_err(invalid)?),
            32 => Inner::Aes256(aes::Aes256::new_from_slice(key).map_err(invalid)?),
            len => return Err(SetupError::InvalidKeyLength { len }),
        }))
    }

    /// 128, 192 or 256.
    pub fn key_bits(&self) -> u32 {
        match self.0 {
            Inner::Aes128(_) => 128,
            Inner::Aes192(_) => 192,
            Inner::Aes256(_) => 256,
            #[cfg(target_arch = "x86_64")]
            Inner::Vaes128(_) => 128,
            #[cfg(target_arch = "x86_64")]
            Inner::Vaes192(_) => 192,
            #[cfg(target_arch = "x86_64")]
            Inner::Vaes256(_) => 256,
            #[cfg(target_arch = "x86_64")]
            Inner::Wide128(_) => 128,
            #[cfg(target_arch = "x86_64")]
            Inner::Wide192(_) => 192,
            #[cfg(target_arch = "x86_64")]
            Inner::Wide256(_) => 256,
        }
    }

    /// Runs lockstep's closure on this key's backend: as [`BlockCipherEncrypt`] does, but
    /// with this crate's own backends able to run rows of chains their own way.
    #[inline]
    pub(crate) fn encrypt_with_lockstep_backend(&self, f: impl LockstepClosure) {
        // One match per call: callers run a whole message inside one closure.
        match &self.0 {
            Inner::Aes128(c) => c.encrypt_with_backend(NarrowWide(OnAnyBackend(f))),
            Inner::Aes192(c) => c.encrypt_with_backend(NarrowWide(OnAnyBackend(f))),
            Inner::Aes256(c) => c.encrypt_with_backend(NarrowWide(OnAnyBackend(f))),
            #[cfg(target_arch = "x86_64")]
            Inner::Vaes128(c) => c.encrypt_with_lockstep_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::Vaes192(c) => c.encrypt_with_lockstep_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::Vaes256(c) => c.encrypt_with_lockstep_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::Wide128(c) => c.encrypt_with_lockstep_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::Wide192(c) => c.encrypt_with_lockstep_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::Wide256(c) => c.encrypt_with_lockstep_backend(f),
        }
    }
}

impl fmt::Debug for Aes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Aes{} {{ .. }}", self.key_bits())
    }
}

impl BlockSizeUser for Aes {
    type BlockSize = U16;
}

impl BlockCipherEncrypt for Aes {
    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        // One match per call: callers run a whole message inside one closure.
        match &self.0 {
            Inner::Aes128(c) => c.encrypt_with_backend(NarrowWide(f)),
            Inner::Aes192(c) => c.encrypt_with_backend(NarrowWide(f)),
            Inner::Aes256(c) => c.encrypt_with_backend(NarrowWide(f)),
            #[cfg(target_arch = "x86_64")]
            Inner::Vaes128(c) => c.encrypt_with_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::Vaes192(c) => c.encrypt_with_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::Vaes256(c) => c.encrypt_with_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::Wide128(c) => c.encrypt_with_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::Wide192(c) => c.encrypt_with_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::Wide256(c) => c.encrypt_with_backend(f),
        }
    }
}

#[cfg(feature = "zeroize")]
impl zeroize::ZeroizeOnDrop for Aes {}

/// Runs a closure on the `aes` crate's backend as it is, unless that is one of the crate's VAES
/// backends (more than AES-NI's eight blocks a call): those get [`OneByOne`] instead. `Aes` runs
/// this crate's own VAES wherever the `aes` crate would pick its own (on any CPU with VAES,
/// AES-NI and AVX2), so they are never run here; without the stand-in, every closure (the whole
/// engine among them) would still be compiled for each of them in each key size.
struct NarrowWide<F>(F);

impl<F> BlockSizeUser for NarrowWide<F> {
    type BlockSize = U16;
}

impl<F: BlockCipherEncClosure<BlockSize = U16>> BlockCipherEncClosure for NarrowWide<F> {
    #[inline(always)]
    fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
        // A constant per backend, so the other branch is not compiled for it.
        #[cfg(target_arch = "x86_64")]
        if const { B::ParBlocksSize::USIZE > NarrowBlocks::USIZE } {
            let encrypt = |block: &mut Block<Aes>| backend.encrypt_block(InOut::from(block));
            return self.0.call(&OneByOne(&encrypt));
        }
        self.0.call(backend);
    }
}

/// Blocks a call of the stand-in: AES-NI's, the most the `aes` crate runs without VAES.
#[cfg(target_arch = "x86_64")]
type NarrowBlocks = U8;

/// One backend type for every backend [`NarrowWide`] stands in for: [`NarrowBlocks`] a call,
/// each encrypted by the wide backend alone (correct, not fast; `Aes` never runs it).
#[cfg(target_arch = "x86_64")]
struct OneByOne<'b>(&'b dyn Fn(&mut Block<Aes>));

#[cfg(target_arch = "x86_64")]
impl BlockSizeUser for OneByOne<'_> {
    type BlockSize = U16;
}

#[cfg(target_arch = "x86_64")]
impl ParBlocksSizeUser for OneByOne<'_> {
    type ParBlocksSize = NarrowBlocks;
}

#[cfg(target_arch = "x86_64")]
impl BlockCipherEncBackend for OneByOne<'_> {
    fn encrypt_block(&self, mut block: InOut<'_, '_, Block<Self>>) {
        let mut copy = block.clone_in();
        (self.0)(&mut copy);
        *block.get_out() = copy;
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    extern crate std;

    use super::*;
    use crate::{Riffpe, ScratchBuf, Selection, Tweak};
    use cipher::KeyInit;
    use std::vec::Vec;

    /// The stand-in for the `aes` crate's VAES backends hands closures eight blocks a call and
    /// encrypts as the wide backend does: a batch, a tail and a single block.
    #[test]
    fn a_wide_backend_runs_as_eight_blocks_that_encrypt_alike() {
        struct Wide16<'a>(&'a aes::Aes128);
        impl BlockSizeUser for Wide16<'_> {
            type BlockSize = U16;
        }
        impl ParBlocksSizeUser for Wide16<'_> {
            type ParBlocksSize = U16;
        }
        impl BlockCipherEncBackend for Wide16<'_> {
            fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
                self.0.encrypt_block_inout(block);
            }
        }
        struct Probe<'a>(&'a mut [Block<Aes>], &'a mut usize);
        impl BlockSizeUser for Probe<'_> {
            type BlockSize = U16;
        }
        impl BlockCipherEncClosure for Probe<'_> {
            fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
                *self.1 = B::ParBlocksSize::USIZE;
                let (batch, rest) = self.0.split_at_mut(B::ParBlocksSize::USIZE);
                let batch = <&mut cipher::ParBlocks<B>>::try_from(batch).expect("a batch");
                backend.encrypt_par_blocks_inplace(batch);
                let (tail, last) = rest.split_at_mut(rest.len() - 1);
                backend.encrypt_tail_blocks_inplace(tail);
                backend.encrypt_block_inplace(&mut last[0]);
            }
        }

        let aes = aes::Aes128::new(&[0x3c; 16].into());
        let plain: Vec<Block<Aes>> = (0..12u8).map(|i| [i; 16].into()).collect();
        let mut expected = plain.clone();
        expected
            .iter_mut()
            .for_each(|block| aes.encrypt_block(block));
        let (mut blocks, mut lanes) = (plain.clone(), 0);
        NarrowWide(Probe(&mut blocks, &mut lanes)).call(&Wide16(&aes));
        assert_eq!(lanes, 8);
        assert_eq!(blocks, expected);
        // A backend of eight or fewer blocks is run as it is.
        let (mut blocks, mut lanes) = (plain, 0);
        aes.encrypt_with_backend(NarrowWide(Probe(&mut blocks, &mut lanes)));
        assert!(lanes <= 8);
        assert_eq!(blocks, expected);
    }

    /// Lockstep on each of this crate's own backends the CPU runs, not only the one
    /// `new_from_slice` picks, gives what the `aes` crate gives one message at a time: for
    /// counts whose last group runs padded (to half a batch or a whole one), as single messages
    /// (a pair) or as it is, with a tweak per message, in both modes of selection.
    #[test]
    fn own_backends_in_lockstep_equal_the_aes_crate_one_message_at_a_time() {
        let key = [0x5a; 16];
        let mut own = Vec::new();
        if let Some(cpu) = aes_vaes256::Vaes256::detect() {
            own.push(Aes(Inner::Vaes128(cpu.expand(&key))));
        }
        if let Some(cpu) = aes_vaes512::Vaes512::detect() {
            own.push(Aes(Inner::Wide128(cpu.expand(&key))));
        }
        let plain = Aes(Inner::Aes128(aes::Aes128::new(&key.into())));
        let (radix, digits) = (100, 8);
        for selection in [Selection::ConstantTime, Selection::Fast] {
            let fpe = |aes| {
                let builder = Riffpe::builder(radix, digits).selection(selection);
                builder.build_with_aes(aes).expect("valid parameters")
            };
            let reference = fpe(plain.clone());
            for aes in &own {
                let fpe = fpe(aes.clone());
                for count in [2, 3, 5, 15, 16, 17, 18, 20, 33, 50, 63, 64, 66, 67, 100] {
                    let messages: Vec<u32> = (0..count * digits)
                        .map(|d| (d as u32 * 37 + 11) % radix)
                        .collect();
                    let tweaks: Vec<Vec<u8>> =
                        (0..count).map(|m| std::vec![m as u8; m % 20]).collect();
                    let tweaks: Vec<&[u8]> = tweaks.iter().map(Vec::as_slice).collect();
                    let mut expected = messages.clone();
                    for (message, tweak) in expected.chunks_exact_mut(digits).zip(&tweaks) {
                        reference
                            .encrypt_tweaked(tweak, message)
                            .expect("valid digits");
                    }
                    let mut buf = ScratchBuf::for_lockstep(&fpe);
                    let mut ours = messages.clone();
                    let per = Tweak::PerMessage(&tweaks);
                    fpe.encrypt_with(per, &mut ours, &mut buf.scratch())
                        .expect("valid");
                    let what = std::format!("{aes:?} {selection:?} count {count}");
                    assert_eq!(ours, expected, "{what}");
                    fpe.decrypt_with(per, &mut ours, &mut buf.scratch())
                        .expect("valid");
                    assert_eq!(ours, messages, "{what}, decrypt");
                }
            }
        }
    }
}
