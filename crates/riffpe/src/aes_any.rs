//! AES-128, -192 or -256 chosen from the key length at run time, as the reference does.

use cipher::consts::U16;
use cipher::{BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, KeyInit};
use core::fmt;

use crate::SetupError;
#[cfg(target_arch = "x86_64")]
use crate::aes_vaes256;
#[cfg(target_arch = "x86_64")]
use crate::aes_vaes512;
use crate::backend::{LockstepClosure, OnAnyBackend};

/// AES with the key size picked from the key: 16, 24 or 32 bytes.
///
/// The hardware backend is picked at run time, once, when the key is expanded: VAES of this
/// crate's own on x86-64 CPUs with VAES and AVX-512 (512-bit, with lockstep's chains kept in
/// registers from one row of keystream blocks to the next) or VAES and AVX2 but no AVX-512
/// (256-bit, where the `aes` crate would run AES-NI), else the `aes` crate's choice (AES-NI,
/// ARMv8 crypto extensions, or the constant-time software fallback). With the `zeroize` feature the
/// expanded key is wiped on drop. `Debug` shows the key size only.
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
        if let Some(cpu) = aes_vaes256::Vaes256::detect().filter(|cpu| cpu.beats_aes_crate()) {
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
            Inner::Aes128(c) => c.encrypt_with_backend(OnAnyBackend(f)),
            Inner::Aes192(c) => c.encrypt_with_backend(OnAnyBackend(f)),
            Inner::Aes256(c) => c.encrypt_with_backend(OnAnyBackend(f)),
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
            Inner::Aes128(c) => c.encrypt_with_backend(f),
            Inner::Aes192(c) => c.encrypt_with_backend(f),
            Inner::Aes256(c) => c.encrypt_with_backend(f),
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
