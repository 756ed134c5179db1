//! The scheme itself: set-up CBC-MAC, digit steps and the two passes (SPEC: "Set-up" to "Encrypt and decrypt").
//!
//! Everything runs inside one `encrypt_with_backend` closure per call, so the AES backend is
//! chosen once per message and each chained block costs only the hardware's latency.

use cipher::consts::U16;
use cipher::{
    Block, BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser,
};

use crate::domain::{Domain, Layout};
use crate::select::Values;
use crate::{Error, Scratch};

/// One AES block.
pub(crate) type AesBlock = Block<aes::Aes128>;

/// Which way the digits move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Encrypt,
    Decrypt,
}

/// CBC-MAC over a byte stream fed piecewise, so no buffer of the whole input is needed.
struct CbcMac {
    state: AesBlock,
    filled: usize,
}

impl CbcMac {
    #[inline]
    fn new(iv: &AesBlock) -> Self {
        CbcMac {
            state: *iv,
            filled: 0,
        }
    }

    #[inline]
    fn absorb<B: BlockCipherEncBackend<BlockSize = U16>>(&mut self, backend: &B, bytes: &[u8]) {
        for &byte in bytes {
            self.state[self.filled] ^= byte;
            self.filled += 1;
            if self.filled == 16 {
                backend.encrypt_block_inplace(&mut self.state);
                self.filled = 0;
            }
        }
    }

    /// SPEC `pkcs7`: pads with 1..=16 bytes, which always completes a final block.
    #[inline]
    fn finish_pkcs7<B: BlockCipherEncBackend<BlockSize = U16>>(mut self, backend: &B) -> AesBlock {
        let pad = 16 - self.filled;
        for _ in 0..pad {
            self.absorb(backend, &[pad as u8]);
        }
        self.state
    }
}

/// SPEC "Set-up": `IV0 = cbcmac(0^16, pkcs7(prefix))`.
fn setup_iv<B: BlockCipherEncBackend<BlockSize = U16>>(
    backend: &B,
    domain: Domain<'_>,
    tweak: &[u8],
) -> AesBlock {
    let mut mac = CbcMac::new(&AesBlock::default());
    match domain {
        Domain::Uniform { radix, digits } => {
            // Riffpe: LE32(n) || LE32(l) || LE64(len(T)) || T
            mac.absorb(backend, &radix.to_le_bytes());
            mac.absorb(backend, &(digits as u32).to_le_bytes());
            mac.absorb(backend, &(tweak.len() as u64).to_le_bytes());
        }
        Domain::Mixed(radices) => {
            // RiffpeX: LE32(r_0) || ':' || … || LE32(r_{l-1}) || '^'  (no tweak length)
            for (i, radix) in radices.iter().enumerate() {
                if i > 0 {
                    mac.absorb(backend, b":");
                }
                mac.absorb(backend, &radix.to_le_bytes());
            }
            mac.absorb(backend, b"^");
        }
    }
    mac.absorb(backend, tweak);
    mac.finish_pkcs7(backend)
}

/// Computes IV0 for `domain` and `tweak` with any block cipher.
pub(crate) fn setup<C: BlockCipherEncrypt<BlockSize = U16>>(
    cipher: &C,
    domain: Domain<'_>,
    tweak: &[u8],
) -> AesBlock {
    struct Setup<'a> {
        domain: Domain<'a>,
        tweak: &'a [u8],
        out: &'a mut AesBlock,
    }
    impl BlockSizeUser for Setup<'_> {
        type BlockSize = U16;
    }
    impl BlockCipherEncClosure for Setup<'_> {
        fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
            *self.out = setup_iv(backend, self.domain, self.tweak);
        }
    }
    let mut iv = AesBlock::default();
    cipher.encrypt_with_backend(Setup {
        domain,
        tweak,
        out: &mut iv,
    });
    iv
}

/// Where IV0 comes from for one call.
#[derive(Clone, Copy)]
pub(crate) enum Iv<'a> {
    /// Computed at construction.
    Fixed(&'a AesBlock),
    /// Computed from this tweak at the start of the call.
    Tweak(&'a [u8]),
}

/// Checks `message` and `scratch`, then encrypts or decrypts `message` in place.
///
/// Nothing is modified unless every check passes.
pub(crate) fn run<C: BlockCipherEncrypt<BlockSize = U16>>(
    cipher: &C,
    domain: Domain<'_>,
    layout: &Layout,
    iv: Iv<'_>,
    message: &mut [u32],
    scratch: &mut Scratch<'_>,
    direction: Direction,
) -> Result<(), Error> {
    domain.check_message(message)?;
    let need = layout.scratch_size();
    if scratch.keystream.len() < need.keystream_bytes || scratch.keys.len() < need.keys {
        return Err(Error::ScratchTooSmall {
            keystream_needed: need.keystream_bytes,
            keystream_given: scratch.keystream.len(),
            keys_needed: need.keys,
            keys_given: scratch.keys.len(),
        });
    }
    cipher.encrypt_with_backend(Message {
        domain,
        layout,
        iv,
        message,
        keystream: &mut *scratch.keystream,
        keys: &mut *scratch.keys,
        direction,
    });
    Ok(())
}

/// One whole message, as a closure over the AES backend.
struct Message<'a> {
    domain: Domain<'a>,
    layout: &'a Layout,
    iv: Iv<'a>,
    message: &'a mut [u32],
    keystream: &'a mut [u8],
    keys: &'a mut [u64],
    direction: Direction,
}

impl BlockSizeUser for Message<'_> {
    type BlockSize = U16;
}

impl BlockCipherEncClosure for Message<'_> {
    #[inline]
    fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
        let iv = match self.iv {
            Iv::Fixed(iv) => *iv,
            Iv::Tweak(tweak) => setup_iv(backend, self.domain, tweak),
        };
        let digits = self.message.len();
        let mut step = |i: usize, phase: u32| {
            let radix = self.domain.radix(i).unwrap_or(2);
            let seed = seed(backend, &iv, self.message, i, phase, self.layout.width);
            let bytes = (radix as usize * self.layout.bytes_per_value).div_ceil(16) * 16;
            let keystream = &mut self.keystream[..bytes];
            fill_keystream(backend, seed, keystream);
            let values = Values::new(keystream, radix, self.layout.bytes_per_value);
            let digit = &mut self.message[i];
            *digit = match self.direction {
                Direction::Encrypt => values.forward(radix, *digit, self.keys),
                Direction::Decrypt => values.inverse(radix, *digit),
            };
        };
        // SPEC: encrypt f = 0, 1 with i ascending; decrypt f = 1, 0 with i descending.
        match self.direction {
            Direction::Encrypt => {
                for phase in 0..2 {
                    for i in 0..digits {
                        step(i, phase);
                    }
                }
            }
            Direction::Decrypt => {
                for phase in (0..2).rev() {
                    for i in (0..digits).rev() {
                        step(i, phase);
                    }
                }
            }
        }
    }
}

/// SPEC "One digit step": `S_0 = cbcmac(IV0, pkcs7(LEw(m_0) … LEw(m_{l-1}) || LEw(i)))`
/// with slot `i` holding `LEw(f)`.
#[inline]
fn seed<B: BlockCipherEncBackend<BlockSize = U16>>(
    backend: &B,
    iv: &AesBlock,
    message: &[u32],
    position: usize,
    phase: u32,
    width: usize,
) -> AesBlock {
    let mut mac = CbcMac::new(iv);
    for (j, &digit) in message.iter().enumerate() {
        let element = if j == position { phase } else { digit };
        mac.absorb(backend, &element.to_le_bytes()[..width]);
    }
    mac.absorb(backend, &(position as u32).to_le_bytes()[..width]);
    mac.finish_pkcs7(backend)
}

/// SPEC: `S_{j+1} = E_K(S_j)`, keystream `S_1 || S_2 || …`.
#[inline]
fn fill_keystream<B: BlockCipherEncBackend<BlockSize = U16>>(
    backend: &B,
    mut state: AesBlock,
    keystream: &mut [u8],
) {
    for chunk in keystream.chunks_exact_mut(16) {
        backend.encrypt_block_inplace(&mut state);
        chunk.copy_from_slice(&state);
    }
}
