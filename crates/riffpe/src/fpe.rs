//! The cipher objects: a domain, a block cipher and the set-up state, shared by Riffpe and RiffpeX.

use cipher::BlockCipherEncrypt;
use cipher::consts::U16;
use core::fmt;

use crate::domain::{Domain, Layout, Mixed, Radices, Uniform};
use crate::engine::{self, AesBlock, Direction, Iv};
use crate::{Aes, Error, Scratch, ScratchSize};

/// The `bytes_per_value` of the reference implementations when none is given.
pub const DEFAULT_BYTES_PER_VALUE: usize = 16;

/// Riffpe: `digits` digits of one radix. See [`Fpe`] for the methods.
///
/// ```
/// let fpe = riffpe::Riffpe::new(100, 8, &[0x2b; 16], b"Alice")?;
/// let mut card = [78, 56, 78, 56, 34, 12, 34, 12]; // 1234123456785678 in base 100, little-endian
/// fpe.encrypt(&mut card)?;
/// assert!(card.iter().all(|&d| d < 100));
/// fpe.decrypt(&mut card)?;
/// assert_eq!(card, [78, 56, 78, 56, 34, 12, 34, 12]);
/// # Ok::<(), riffpe::Error>(())
/// ```
pub type Riffpe<C = Aes> = Fpe<Uniform, C>;

/// RiffpeX: one radix per digit, held in `R` (`Vec<u32>`, `[u32; N]`, `&'static [u32]` …).
/// See [`Fpe`] for the methods.
///
/// ```
/// // [a-z][0-9]{3}: 26 · 10^3 values
/// let fpe = riffpe::RiffpeX::new([26, 10, 10, 10], &[0x2b; 32], b"")?;
/// let mut id = [7, 0, 4, 2];
/// fpe.encrypt(&mut id)?;
/// assert!(id[0] < 26 && id[1..].iter().all(|&d| d < 10));
/// # Ok::<(), riffpe::Error>(())
/// ```
pub type RiffpeX<R, C = Aes> = Fpe<Mixed<R>, C>;

/// A Riffpe cipher over the domain `D` ([`Uniform`] for [`Riffpe`], [`Mixed`] for [`RiffpeX`])
/// with the block cipher `C`.
///
/// The key schedule and the set-up CBC-MAC of the fixed tweak are computed once, at
/// construction. All methods take `&self`, so one object serves many threads (it is `Send` and
/// `Sync`) and, through the `*_tweaked*` methods, many tweaks.
///
/// Every method checks the whole message before changing any digit: on error the message is
/// left as it was.
#[derive(Clone)]
pub struct Fpe<D, C = Aes> {
    cipher: C,
    domain: D,
    layout: Layout,
    iv: AesBlock,
}

impl Riffpe<Aes> {
    /// Riffpe over `digits` digits below `radix`, AES keyed by a 16-, 24- or 32-byte `key`,
    /// with a fixed `tweak` (may be empty) and the default `bytes_per_value` of 16.
    pub fn new(radix: u32, digits: usize, key: &[u8], tweak: &[u8]) -> Result<Self, Error> {
        Self::with_bytes_per_value(radix, digits, key, tweak, DEFAULT_BYTES_PER_VALUE)
    }

    /// As [`Riffpe::new`], with `bytes_per_value` keystream bytes per value (the reference's
    /// 128-bit security settings use 18 for radix 10 and 100, 19 for 1000, 20 for 10 000).
    pub fn with_bytes_per_value(
        radix: u32,
        digits: usize,
        key: &[u8],
        tweak: &[u8],
        bytes_per_value: usize,
    ) -> Result<Self, Error> {
        // Parameters are checked before the key is expanded.
        let domain = Uniform { radix, digits };
        Layout::new(domain.domain(), bytes_per_value)?;
        Self::from_cipher(
            Aes::new_from_slice(key)?,
            radix,
            digits,
            tweak,
            bytes_per_value,
        )
    }
}

impl<C: BlockCipherEncrypt<BlockSize = U16>> Riffpe<C> {
    /// Riffpe with a block cipher chosen by type (e.g. `aes::Aes256`).
    pub fn from_cipher(
        cipher: C,
        radix: u32,
        digits: usize,
        tweak: &[u8],
        bytes_per_value: usize,
    ) -> Result<Self, Error> {
        Fpe::build(cipher, Uniform { radix, digits }, tweak, bytes_per_value)
    }

    /// The radix of every digit.
    pub fn radix(&self) -> u32 {
        self.domain.radix
    }
}

impl<R: AsRef<[u32]>> RiffpeX<R, Aes> {
    /// RiffpeX over `radices` (digit `i` below `radices[i]`), AES keyed by a 16-, 24- or
    /// 32-byte `key`, with a fixed `tweak` and the default `bytes_per_value` of 16.
    pub fn new(radices: R, key: &[u8], tweak: &[u8]) -> Result<Self, Error> {
        Self::with_bytes_per_value(radices, key, tweak, DEFAULT_BYTES_PER_VALUE)
    }

    /// As [`RiffpeX::new`], with `bytes_per_value` keystream bytes per value.
    pub fn with_bytes_per_value(
        radices: R,
        key: &[u8],
        tweak: &[u8],
        bytes_per_value: usize,
    ) -> Result<Self, Error> {
        Layout::new(Domain::Mixed(radices.as_ref()), bytes_per_value)?;
        Self::from_cipher(Aes::new_from_slice(key)?, radices, tweak, bytes_per_value)
    }
}

impl<R: AsRef<[u32]>, C: BlockCipherEncrypt<BlockSize = U16>> RiffpeX<R, C> {
    /// RiffpeX with a block cipher chosen by type.
    pub fn from_cipher(
        cipher: C,
        radices: R,
        tweak: &[u8],
        bytes_per_value: usize,
    ) -> Result<Self, Error> {
        Fpe::build(cipher, Mixed(radices), tweak, bytes_per_value)
    }
}

impl<D: Radices, C: BlockCipherEncrypt<BlockSize = U16>> Fpe<D, C> {
    fn build(cipher: C, domain: D, tweak: &[u8], bytes_per_value: usize) -> Result<Self, Error> {
        let layout = Layout::new(domain.domain(), bytes_per_value)?;
        let iv = engine::setup(&cipher, domain.domain(), tweak);
        Ok(Fpe {
            cipher,
            domain,
            layout,
            iv,
        })
    }

    /// The same cipher with another [`Selection`](crate::Selection) method; outputs do not change.
    ///
    /// ```
    /// use riffpe::{Riffpe, Selection};
    ///
    /// let fast = Riffpe::new(100, 8, &[0x2b; 16], b"")?;
    /// let ct = fast.clone().with_selection(Selection::ConstantTime);
    /// let (mut a, mut b) = ([5; 8], [5; 8]);
    /// fast.encrypt(&mut a)?;
    /// ct.encrypt(&mut b)?;
    /// assert_eq!(a, b);
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn with_selection(mut self, selection: crate::Selection) -> Self {
        self.layout.selection = selection;
        self
    }

    /// The selection method in use.
    pub fn selection(&self) -> crate::Selection {
        self.layout.selection
    }

    /// The domain: every digit's radix.
    pub fn domain(&self) -> Domain<'_> {
        self.domain.domain()
    }

    /// Digits in a message.
    pub fn digits(&self) -> usize {
        self.domain().digits()
    }

    /// Keystream bytes per value.
    pub fn bytes_per_value(&self) -> usize {
        self.layout.bytes_per_value
    }

    /// The underlying block cipher.
    pub fn cipher(&self) -> &C {
        &self.cipher
    }

    /// The scratch one message needs, for [`Scratch`] and the `*_with` methods.
    pub fn scratch_size(&self) -> ScratchSize {
        self.layout.scratch_size(1)
    }

    /// How many messages [`Fpe::encrypt_many_with`] advances together on this CPU: the AES
    /// backend's parallel block count (8 for AES-NI and ARMv8, 30 for VAES-256, 64 for
    /// VAES-512, 2 or 4 for the software AES).
    pub fn lanes(&self) -> usize {
        engine::backend_lanes(&self.cipher)
    }

    /// The scratch for [`Fpe::lanes`] messages in lockstep.
    pub fn lockstep_scratch_size(&self) -> ScratchSize {
        self.layout.scratch_size(self.lanes())
    }

    fn keyed(&self) -> engine::Keyed<'_, C> {
        engine::Keyed {
            cipher: &self.cipher,
            domain: self.domain(),
            layout: &self.layout,
        }
    }

    fn run(
        &self,
        iv: Iv<'_>,
        message: &mut [u32],
        scratch: &mut Scratch<'_>,
        direction: Direction,
    ) -> Result<(), Error> {
        engine::run(self.keyed(), iv, message, scratch, direction, 1)
    }

    fn run_many(
        &self,
        messages: &mut [u32],
        scratch: &mut Scratch<'_>,
        direction: Direction,
    ) -> Result<(), Error> {
        engine::run(
            self.keyed(),
            Iv::Fixed(&self.iv),
            messages,
            scratch,
            direction,
            usize::MAX,
        )
    }

    /// Encrypts many messages in place, [`Fpe::digits`] digits each, back to back, under the
    /// fixed tweak. Up to [`Fpe::lanes`] messages advance together (as many as `scratch`
    /// holds, see [`Fpe::lockstep_scratch_size`]), so their AES chains fill the pipeline:
    /// several times the throughput of one message at a time, with identical results.
    ///
    /// All messages are checked first; an error's digit index counts from the start of
    /// `messages`.
    ///
    /// ```
    /// use riffpe::{Riffpe, ScratchBuf};
    ///
    /// let fpe = Riffpe::new(10, 6, &[0x2b; 16], b"")?;
    /// let mut buf = ScratchBuf::with_size(fpe.lockstep_scratch_size());
    /// let mut many = vec![3u32; 6 * 100];
    /// fpe.encrypt_many_with(&mut many, &mut buf.scratch(fpe.lockstep_scratch_size()))?;
    ///
    /// let mut one = [3u32; 6];
    /// fpe.encrypt(&mut one)?;
    /// assert_eq!(&many[..6], &one);
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn encrypt_many_with(
        &self,
        messages: &mut [u32],
        scratch: &mut Scratch<'_>,
    ) -> Result<(), Error> {
        self.run_many(messages, scratch, Direction::Encrypt)
    }

    /// Decrypts many messages in place; see [`Fpe::encrypt_many_with`].
    pub fn decrypt_many_with(
        &self,
        messages: &mut [u32],
        scratch: &mut Scratch<'_>,
    ) -> Result<(), Error> {
        self.run_many(messages, scratch, Direction::Decrypt)
    }

    /// Encrypts `message` in place under the fixed tweak, using caller-provided scratch.
    pub fn encrypt_with(
        &self,
        message: &mut [u32],
        scratch: &mut Scratch<'_>,
    ) -> Result<(), Error> {
        self.run(Iv::Fixed(&self.iv), message, scratch, Direction::Encrypt)
    }

    /// Decrypts `message` in place under the fixed tweak, using caller-provided scratch.
    pub fn decrypt_with(
        &self,
        message: &mut [u32],
        scratch: &mut Scratch<'_>,
    ) -> Result<(), Error> {
        self.run(Iv::Fixed(&self.iv), message, scratch, Direction::Decrypt)
    }

    /// Encrypts `message` in place under `tweak` (instead of the fixed one), using
    /// caller-provided scratch. Costs one CBC-MAC of the tweak more than [`Fpe::encrypt_with`].
    pub fn encrypt_tweaked_with(
        &self,
        tweak: &[u8],
        message: &mut [u32],
        scratch: &mut Scratch<'_>,
    ) -> Result<(), Error> {
        self.run(Iv::Tweak(tweak), message, scratch, Direction::Encrypt)
    }

    /// Decrypts `message` in place under `tweak`, using caller-provided scratch.
    pub fn decrypt_tweaked_with(
        &self,
        tweak: &[u8],
        message: &mut [u32],
        scratch: &mut Scratch<'_>,
    ) -> Result<(), Error> {
        self.run(Iv::Tweak(tweak), message, scratch, Direction::Decrypt)
    }
}

/// Scratch that fits on the stack: keystreams up to 4 KiB (plus the buffers' slack)…
#[cfg(feature = "alloc")]
const STACK_KEYSTREAM: usize = 4096 + 16;
/// …and radices up to 256 (a key and a bucket each).
#[cfg(feature = "alloc")]
const STACK_KEYS: usize = 512;

#[cfg(feature = "alloc")]
impl<D: Radices, C: BlockCipherEncrypt<BlockSize = U16>> Fpe<D, C> {
    /// Runs with stack scratch when the domain fits it (radix ≤ 256, keystream ≤ 4 KiB), else
    /// with a heap buffer for this call.
    fn run_self_scratched(
        &self,
        iv: Iv<'_>,
        message: &mut [u32],
        direction: Direction,
    ) -> Result<(), Error> {
        // A bad message is refused before any scratch is allocated.
        self.domain().check_message(message)?;
        let size = self.scratch_size();
        if size.keystream_bytes <= STACK_KEYSTREAM && size.keys <= STACK_KEYS {
            let mut keystream = [0u8; STACK_KEYSTREAM];
            let mut keys = [0u64; STACK_KEYS];
            let result = self.run(
                iv,
                message,
                &mut Scratch::new(&mut keystream, &mut keys),
                direction,
            );
            #[cfg(feature = "zeroize")]
            {
                use zeroize::Zeroize;
                keystream.zeroize();
                keys.zeroize();
            }
            result
        } else {
            let mut buf = crate::ScratchBuf::with_size(size);
            self.run(iv, message, &mut buf.scratch(size), direction)
        }
    }

    /// Encrypts `message` in place under the fixed tweak.
    ///
    /// Allocates nothing when the radix is at most 256 and `radix · bytes_per_value` at most
    /// 4 KiB (Riffpe(100, 8) with 16 or 18 bytes per value, say); larger domains allocate their
    /// scratch per call, which [`Fpe::encrypt_with`] and a reused [`ScratchBuf`](crate::ScratchBuf) avoid.
    pub fn encrypt(&self, message: &mut [u32]) -> Result<(), Error> {
        self.run_self_scratched(Iv::Fixed(&self.iv), message, Direction::Encrypt)
    }

    /// Decrypts `message` in place under the fixed tweak (scratch as in [`Fpe::encrypt`]).
    pub fn decrypt(&self, message: &mut [u32]) -> Result<(), Error> {
        self.run_self_scratched(Iv::Fixed(&self.iv), message, Direction::Decrypt)
    }

    /// Encrypts `message` in place under `tweak` instead of the fixed one.
    pub fn encrypt_tweaked(&self, tweak: &[u8], message: &mut [u32]) -> Result<(), Error> {
        self.run_self_scratched(Iv::Tweak(tweak), message, Direction::Encrypt)
    }

    /// Decrypts `message` in place under `tweak` instead of the fixed one.
    pub fn decrypt_tweaked(&self, tweak: &[u8], message: &mut [u32]) -> Result<(), Error> {
        self.run_self_scratched(Iv::Tweak(tweak), message, Direction::Decrypt)
    }
}

impl<D: Radices, C> fmt::Debug for Fpe<D, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key, the round keys or the set-up state.
        let name = match self.domain.domain() {
            Domain::Uniform { .. } => "Riffpe",
            Domain::Mixed(_) => "RiffpeX",
        };
        f.debug_struct(name)
            .field("domain", &self.domain.domain())
            .field("bytes_per_value", &self.layout.bytes_per_value)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "zeroize")]
impl<D, C> Drop for Fpe<D, C> {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        self.iv.0.zeroize();
    }
}

// The cipher objects are shared across threads by design.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Riffpe>();
    assert_send_sync::<RiffpeX<&'static [u32]>>();
    assert_send_sync::<RiffpeX<[u32; 4]>>();
};
