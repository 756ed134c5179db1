//! AES-128, -192 or -256 chosen from the key length at run time, as the reference does, on the
//! backend picked here, once, when the key is expanded: this crate's own on x86-64, else the
//! `aes` crate's. `vaes512`, `vaes256` and `ni` each hold one backend's intrinsics, `own` what
//! they share (key expansion, the rounds); with `select`'s kernels, these four are the only
//! files with `unsafe`. `lockstep` is what the engine asks of a backend beyond the `cipher`
//! crate's trait.

pub(crate) mod lockstep;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod ni;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod own;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod vaes256;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod vaes512;

use cipher::consts::{U8, U16};
use cipher::inout::{InOut, InOutBuf};
use cipher::typenum::Unsigned;
use cipher::{
    Array, Block, BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser,
    KeyInit, ParBlocks, ParBlocksSizeUser,
};
use core::fmt;

use crate::SetupError;
use lockstep::{LockstepClosure, OnAnyBackend};
#[cfg(target_arch = "x86_64")]
use own::{OwnBackend, RoundKeys};

/// AES with the key size picked from the key: 16, 24 or 32 bytes.
///
/// The hardware backend is picked at run time, once, when the key is expanded. On x86-64 it is
/// one of this crate's own: VAES on CPUs with VAES and AVX-512 (512-bit, with lockstep's chains
/// kept in registers from one row of keystream blocks to the next) or VAES and AVX2 without
/// that AVX-512 (256-bit; on a Zen 3 the `aes` crate would run AES-NI), else AES-NI, 64 blocks
/// a batch (the `aes` crate runs eight, too few for lockstep's selection over many lanes at
/// once). Elsewhere it is the `aes` crate's choice (ARMv8 crypto extensions), and without
/// hardware AES the crate's constant-time software fallback; [`Aes::backend`] says which.
/// With the `zeroize` feature the expanded key is wiped on drop. `Debug` shows the key size
/// only.
///
/// ```
/// let aes = riffpe::Aes::new_from_slice(&[7u8; 24])?;
/// assert_eq!(aes.key_bits(), 192);
/// println!("AES runs on {}", aes.backend());
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
    /// This crate's own backends, each running every key size.
    #[cfg(target_arch = "x86_64")]
    OwnVaes256(RoundKeys<vaes256::Vaes256>),
    #[cfg(target_arch = "x86_64")]
    OwnVaes512(RoundKeys<vaes512::Vaes512>),
    #[cfg(target_arch = "x86_64")]
    OwnAesNi(RoundKeys<ni::AesNi>),
}

impl Aes {
    /// Expands `key`; errors unless it is 16, 24 or 32 bytes long.
    pub fn new_from_slice(key: &[u8]) -> Result<Self, SetupError> {
        let invalid = SetupError::InvalidKeyLength { len: key.len() };
        let to_setup_error = |_| invalid;
        Ok(Aes(match (Cpu::detect(), key.len()) {
            #[cfg(target_arch = "x86_64")]
            (Cpu::Vaes512(cpu), _) => Inner::OwnVaes512(cpu.expand(key).ok_or(invalid)?),
            #[cfg(target_arch = "x86_64")]
            (Cpu::Vaes256(cpu), _) => Inner::OwnVaes256(cpu.expand(key).ok_or(invalid)?),
            #[cfg(target_arch = "x86_64")]
            (Cpu::AesNi(cpu), _) => Inner::OwnAesNi(cpu.expand(key).ok_or(invalid)?),
            (Cpu::AesCrate, 16) => {
                Inner::Aes128(aes::Aes128::new_from_slice(key).map_err(to_setup_error)?)
            }
            (Cpu::AesCrate, 24) => {
                Inner::Aes192(aes::Aes192::new_from_slice(key).map_err(to_setup_error)?)
            }
            (Cpu::AesCrate, 32) => {
                Inner::Aes256(aes::Aes256::new_from_slice(key).map_err(to_setup_error)?)
            }
            (Cpu::AesCrate, _) => return Err(invalid),
        }))
    }

    /// 128, 192 or 256.
    pub fn key_bits(&self) -> u32 {
        match &self.0 {
            Inner::Aes128(_) => 128,
            Inner::Aes192(_) => 192,
            Inner::Aes256(_) => 256,
            #[cfg(target_arch = "x86_64")]
            Inner::OwnVaes256(keys) => keys.key_bits(),
            #[cfg(target_arch = "x86_64")]
            Inner::OwnVaes512(keys) => keys.key_bits(),
            #[cfg(target_arch = "x86_64")]
            Inner::OwnAesNi(keys) => keys.key_bits(),
        }
    }

    /// The implementation this key runs on, picked when it was expanded.
    ///
    /// ```
    /// use riffpe::{AesBackend, Riffpe};
    ///
    /// let fpe = Riffpe::new(100, 8, &[0x2b; 16], b"")?;
    /// if fpe.cipher().backend() == AesBackend::Software {
    ///     eprintln!("no AES instructions here: expect several times slower");
    /// }
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn backend(&self) -> AesBackend {
        match &self.0 {
            #[cfg(target_arch = "x86_64")]
            Inner::OwnVaes512(_) => AesBackend::Vaes512,
            #[cfg(target_arch = "x86_64")]
            Inner::OwnVaes256(_) => AesBackend::Vaes256,
            #[cfg(target_arch = "x86_64")]
            Inner::OwnAesNi(_) => AesBackend::AesNi,
            Inner::Aes128(_) | Inner::Aes192(_) | Inner::Aes256(_) => {
                AesBackend::of_the_aes_crate()
            }
        }
    }

    /// Runs lockstep's closure on this key's backend: as [`BlockCipherEncrypt`] does, but
    /// with this crate's own backends able to run rows of chains their own way.
    #[inline]
    pub(crate) fn encrypt_with_lockstep_backend(&self, f: impl LockstepClosure) {
        // One match per call: callers run a whole message inside one closure.
        match &self.0 {
            Inner::Aes128(c) => c.encrypt_with_backend(ByEight(OnAnyBackend(f))),
            Inner::Aes192(c) => c.encrypt_with_backend(ByEight(OnAnyBackend(f))),
            Inner::Aes256(c) => c.encrypt_with_backend(ByEight(OnAnyBackend(f))),
            #[cfg(target_arch = "x86_64")]
            Inner::OwnVaes256(c) => c.encrypt_with_lockstep_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::OwnVaes512(c) => c.encrypt_with_lockstep_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::OwnAesNi(c) => c.encrypt_with_lockstep_backend(f),
        }
    }
}

/// The implementation of AES an [`Aes`] runs on: [`Aes::backend`], or [`AesBackend::detect`]
/// without a key. `Display` names it as a person would, e.g. `VAES-512 (AVX-512, riffpe's
/// own)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AesBackend {
    /// This crate's own 512-bit VAES, 64 blocks at once: x86-64 CPUs with VAES and AVX-512 F,
    /// BW, VL and VBMI, such as AMD Zen 4 and Zen 5 and Intel from Ice Lake on.
    Vaes512,
    /// This crate's own 256-bit VAES, 16 blocks at once: x86-64 CPUs with VAES and AVX2 but
    /// not that AVX-512, such as AMD Zen 3.
    Vaes256,
    /// AES-NI: on x86-64 CPUs without VAES this crate's own, 64 blocks a batch; on 32-bit x86
    /// the `aes` crate's.
    AesNi,
    /// The ARMv8 crypto extensions (`AESE`/`AESMC`), through the `aes` crate.
    Armv8,
    /// The `aes` crate's constant-time software AES (fixslice): CPUs without AES instructions,
    /// several times slower.
    Software,
}

impl AesBackend {
    /// The implementation a key expanded now would run on, found without one.
    ///
    /// ```
    /// let aes = riffpe::Aes::new_from_slice(&[0x2b; 32])?;
    /// assert_eq!(aes.backend(), riffpe::AesBackend::detect());
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn detect() -> AesBackend {
        match Cpu::detect() {
            #[cfg(target_arch = "x86_64")]
            Cpu::Vaes512(_) => AesBackend::Vaes512,
            #[cfg(target_arch = "x86_64")]
            Cpu::Vaes256(_) => AesBackend::Vaes256,
            #[cfg(target_arch = "x86_64")]
            Cpu::AesNi(_) => AesBackend::AesNi,
            Cpu::AesCrate => AesBackend::of_the_aes_crate(),
        }
    }

    /// What the `aes` crate runs here: it picks by this same check, cached, when it expands a
    /// key.
    fn of_the_aes_crate() -> AesBackend {
        if !aes::hardware_accelerated() {
            AesBackend::Software
        } else if cfg!(target_arch = "aarch64") {
            AesBackend::Armv8
        } else {
            AesBackend::AesNi
        }
    }
}

/// The backend [`Aes`] picks on this CPU, with the proof that the CPU has its features: the
/// first of this crate's own that it runs, else the `aes` crate.
enum Cpu {
    #[cfg(target_arch = "x86_64")]
    Vaes512(vaes512::Vaes512),
    #[cfg(target_arch = "x86_64")]
    Vaes256(vaes256::Vaes256),
    #[cfg(target_arch = "x86_64")]
    AesNi(ni::AesNi),
    AesCrate,
}

impl Cpu {
    fn detect() -> Cpu {
        #[cfg(target_arch = "x86_64")]
        if let Some(cpu) = vaes512::Vaes512::detect() {
            return Cpu::Vaes512(cpu);
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(cpu) = vaes256::Vaes256::detect() {
            return Cpu::Vaes256(cpu);
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(cpu) = ni::AesNi::detect() {
            return Cpu::AesNi(cpu);
        }
        Cpu::AesCrate
    }
}

impl fmt::Display for AesBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AesBackend::Vaes512 => "VAES-512 (AVX-512, riffpe's own)",
            AesBackend::Vaes256 => "VAES-256 (AVX2, riffpe's own)",
            AesBackend::AesNi if cfg!(target_arch = "x86_64") => "AES-NI (riffpe's own)",
            AesBackend::AesNi => "AES-NI (the aes crate's)",
            AesBackend::Armv8 => "ARMv8 crypto extensions (AESE/AESMC)",
            AesBackend::Software => "software (constant-time fixslice)",
        })
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
            Inner::Aes128(c) => c.encrypt_with_backend(ByEight(f)),
            Inner::Aes192(c) => c.encrypt_with_backend(ByEight(f)),
            Inner::Aes256(c) => c.encrypt_with_backend(ByEight(f)),
            #[cfg(target_arch = "x86_64")]
            Inner::OwnVaes256(c) => c.encrypt_with_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::OwnVaes512(c) => c.encrypt_with_backend(f),
            #[cfg(target_arch = "x86_64")]
            Inner::OwnAesNi(c) => c.encrypt_with_backend(f),
        }
    }
}

#[cfg(feature = "zeroize")]
impl zeroize::ZeroizeOnDrop for Aes {}

/// Runs a closure on the `aes` crate's backend as it is where that runs eight blocks a call
/// (ARMv8), else on [`Batched`]: the software backend (two or four blocks a call), and on
/// x86-64 every backend of the crate (`Aes` runs this crate's own wherever the CPU has AES-NI,
/// so the crate's AES-NI and VAES backends never run there). Without it, every closure (the whole engine among them) would
/// be compiled for each of those backends in each key size, not once.
struct ByEight<F>(F);

impl<F> BlockSizeUser for ByEight<F> {
    type BlockSize = U16;
}

impl<F: BlockCipherEncClosure<BlockSize = U16>> BlockCipherEncClosure for ByEight<F> {
    #[inline(always)]
    fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
        // A constant per backend, so the other branch is not compiled for it. On x86-64 the
        // `aes` crate runs only where this crate's own AES-NI cannot: its software fallback.
        if const { cfg!(target_arch = "x86_64") || B::ParBlocksSize::USIZE != EightBlocks::USIZE } {
            let one = |block: &mut Block<Aes>| backend.encrypt_block_inplace(block);
            let eight = |blocks: &mut [Block<Aes>]| {
                let (batches, tail) = Array::<_, B::ParBlocksSize>::slice_as_chunks_mut(blocks);
                batches
                    .iter_mut()
                    .for_each(|batch| backend.encrypt_par_blocks_inplace(batch));
                if !tail.is_empty() {
                    backend.encrypt_tail_blocks_inplace(tail);
                }
            };
            return on_batched(
                self.0,
                &Batched {
                    one: &one,
                    eight: &eight,
                },
            );
        }
        self.0.call(backend);
    }
}

/// Runs `f` on `batched`. Not inlined: the closure (the whole engine among them) is then
/// compiled once for all the backends [`ByEight`] stands in for, not into each of them.
#[inline(never)]
fn on_batched<F: BlockCipherEncClosure<BlockSize = U16>>(f: F, batched: &Batched<'_>) {
    f.call(batched);
}

/// Blocks a call of AES-NI and ARMv8 in the `aes` crate, and of [`Batched`].
type EightBlocks = U8;

/// One backend type for every backend [`ByEight`] stands in for: [`EightBlocks`] a call, each
/// call made through a function pointer to the backend's own code.
struct Batched<'b> {
    one: &'b dyn Fn(&mut Block<Aes>),
    eight: &'b dyn Fn(&mut [Block<Aes>]),
}

impl BlockSizeUser for Batched<'_> {
    type BlockSize = U16;
}

impl ParBlocksSizeUser for Batched<'_> {
    type ParBlocksSize = EightBlocks;
}

impl BlockCipherEncBackend for Batched<'_> {
    fn encrypt_block(&self, mut block: InOut<'_, '_, Block<Self>>) {
        let mut copy = block.clone_in();
        (self.one)(&mut copy);
        *block.get_out() = copy;
    }

    fn encrypt_par_blocks(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let mut copy = blocks.clone_in();
        (self.eight)(&mut copy);
        *blocks.get_out() = copy;
    }

    fn encrypt_tail_blocks(&self, mut blocks: InOutBuf<'_, '_, Block<Self>>) {
        let mut copy = ParBlocks::<Self>::default();
        let copy = &mut copy[..blocks.len()];
        copy.copy_from_slice(blocks.get_in());
        (self.eight)(copy);
        blocks.get_out().copy_from_slice(copy);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use core::cell::Cell;
    use std::vec::Vec;

    /// The `aes` crate's AES-128 as a backend of `N` blocks a call, counting those calls.
    struct Lanes<'a, N>(&'a aes::Aes128, Cell<usize>, core::marker::PhantomData<N>);

    impl<N> BlockSizeUser for Lanes<'_, N> {
        type BlockSize = U16;
    }

    impl<N: cipher::array::ArraySize> ParBlocksSizeUser for Lanes<'_, N> {
        type ParBlocksSize = N;
    }

    impl<N: cipher::array::ArraySize> BlockCipherEncBackend for Lanes<'_, N> {
        fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
            self.0.encrypt_block_inout(block);
        }

        fn encrypt_par_blocks(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
            self.1.set(self.1.get() + 1);
            let mut copy = blocks.clone_in();
            copy.iter_mut()
                .for_each(|block| self.0.encrypt_block(block));
            *blocks.get_out() = copy;
        }
    }

    /// Encrypts its blocks as a closure would: a batch, a tail, one block; and records the
    /// blocks a call of the backend it got, and that backend's type.
    struct Probe<'a>(&'a mut [Block<Aes>], &'a mut (usize, &'static str));

    impl BlockSizeUser for Probe<'_> {
        type BlockSize = U16;
    }

    impl BlockCipherEncClosure for Probe<'_> {
        fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
            *self.1 = (B::ParBlocksSize::USIZE, core::any::type_name::<B>());
            let (batch, rest) = self.0.split_at_mut(B::ParBlocksSize::USIZE);
            let batch = <&mut ParBlocks<B>>::try_from(batch).expect("a batch");
            backend.encrypt_par_blocks_inplace(batch);
            let (tail, last) = rest.split_at_mut(rest.len() - 1);
            backend.encrypt_tail_blocks_inplace(tail);
            backend.encrypt_block_inplace(&mut last[0]);
        }
    }

    /// Backends of other than eight blocks a call (software's four, VAES's more) are run as
    /// eight blocks a call that go through their own batches and encrypt alike; a backend of
    /// eight is run as it is, but on x86-64 (where only the software fallback runs).
    #[test]
    fn backends_of_other_than_eight_blocks_run_as_eight_that_encrypt_alike() {
        fn run<N: cipher::array::ArraySize>(aes: &aes::Aes128, plain: &[Block<Aes>]) {
            let mut expected = plain.to_vec();
            expected
                .iter_mut()
                .for_each(|block| aes.encrypt_block(block));
            let backend = Lanes::<N>(aes, Cell::new(0), core::marker::PhantomData);
            let (mut blocks, mut seen) = (plain.to_vec(), (0, ""));
            ByEight(Probe(&mut blocks, &mut seen)).call(&backend);
            let what = std::format!("a backend of {} blocks", N::USIZE);
            assert_eq!(blocks, expected, "{what}");
            assert_eq!(seen.0, 8, "{what}");
            let own = seen.1.contains("Lanes");
            let as_it_is = N::USIZE == 8 && !cfg!(target_arch = "x86_64");
            assert_eq!(own, as_it_is, "{what} ran as {}", seen.1);
            // Its own batches ran, as many as the batch of eight and the tail of three hold.
            assert_eq!(backend.1.get(), 8 / N::USIZE + 3 / N::USIZE, "{what}");
        }
        let aes = aes::Aes128::new(&[0x3c; 16].into());
        let plain: Vec<Block<Aes>> = (0..12u8).map(|i| [i; 16].into()).collect();
        run::<cipher::consts::U2>(&aes, &plain);
        run::<cipher::consts::U4>(&aes, &plain);
        run::<U8>(&aes, &plain);
        run::<U16>(&aes, &plain);
        run::<cipher::consts::U64>(&aes, &plain);
    }

    /// `backend` names what the key runs on, as `detect` does without one: the first of this
    /// crate's own backends the CPU has, with the lanes lockstep then runs.
    #[test]
    fn backend_names_the_backend_picked() {
        let aes = Aes::new_from_slice(&[1; 24]).unwrap();
        let lanes = match aes.backend() {
            AesBackend::Vaes512 | AesBackend::AesNi => 64,
            AesBackend::Vaes256 => 16,
            AesBackend::Armv8 | AesBackend::Software => 8,
        };
        assert_eq!(crate::engine::backend_lanes(&aes), lanes);
        assert_eq!(aes.backend(), AesBackend::detect());
        #[cfg(target_arch = "x86_64")]
        {
            let expected = if vaes512::Vaes512::detect().is_some() {
                AesBackend::Vaes512
            } else if vaes256::Vaes256::detect().is_some() {
                AesBackend::Vaes256
            } else if ni::AesNi::detect().is_some() {
                AesBackend::AesNi
            } else {
                AesBackend::Software
            };
            assert_eq!(aes.backend(), expected);
        }
        let names = [
            AesBackend::Vaes512,
            AesBackend::Vaes256,
            AesBackend::AesNi,
            AesBackend::Armv8,
            AesBackend::Software,
        ]
        .map(|backend| std::format!("{backend}"));
        for (i, name) in names.iter().enumerate() {
            assert!(!names[..i].contains(name), "{name} named twice");
        }
    }

    /// Lockstep on each of this crate's own backends the CPU runs (AES-NI built with AVX2 and
    /// without), not only the one `new_from_slice` picks, gives what the `aes` crate gives one
    /// message at a time: for counts whose last group runs padded (to half a batch or a whole
    /// one), as single messages (a pair) or as it is, with a tweak per message, in both modes
    /// of selection.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn own_backends_in_lockstep_equal_the_aes_crate_one_message_at_a_time() {
        use crate::{Riffpe, ScratchBuf, Selection, Tweak};

        // Each key size, run by the same code on this crate's own backends.
        let mut pairs = Vec::new();
        for len in [16, 24, 32] {
            let key: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(0x5a)).collect();
            let plain = Aes(match len {
                16 => Inner::Aes128(aes::Aes128::new_from_slice(&key).unwrap()),
                24 => Inner::Aes192(aes::Aes192::new_from_slice(&key).unwrap()),
                _ => Inner::Aes256(aes::Aes256::new_from_slice(&key).unwrap()),
            });
            if let Some(cpu) = vaes256::Vaes256::detect() {
                let own = Aes(Inner::OwnVaes256(cpu.expand(&key).unwrap()));
                pairs.push((own, plain.clone()));
            }
            if let Some(cpu) = vaes512::Vaes512::detect() {
                let own = Aes(Inner::OwnVaes512(cpu.expand(&key).unwrap()));
                pairs.push((own, plain.clone()));
            }
            for cpu in ni::AesNi::variants() {
                let own = Aes(Inner::OwnAesNi(cpu.expand(&key).unwrap()));
                pairs.push((own, plain.clone()));
            }
        }
        let (radix, digits) = (100, 8);
        for selection in [Selection::ConstantTime, Selection::Fast] {
            let fpe = |aes| {
                let builder = Riffpe::builder(radix, digits).selection(selection);
                builder.build_with_aes(aes).expect("valid parameters")
            };
            for (aes, plain) in &pairs {
                let reference = fpe(plain.clone());
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
