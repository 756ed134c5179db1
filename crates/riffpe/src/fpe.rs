//! The cipher objects: a domain, a block cipher and the set-up state, shared by Riffpe and
//! RiffpeX, and the builder that makes them.

use cipher::BlockCipherEncrypt;
use cipher::consts::U16;
use core::fmt;

use crate::domain::{AnyDomain, Domain, Layout, Mixed, Radices, Uniform};
use crate::engine::{self, AesBlock, Direction};
#[cfg(feature = "alloc")]
use crate::integer::{DigitOrder, Integer};
use crate::{Aes, MessageError, Scratch, ScratchSize, Selection, SetupError, Tweak};

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

/// Riffpe or RiffpeX, chosen at run time: what a program holds when the scheme comes from
/// its configuration. Made from either with `From`.
///
/// ```
/// use riffpe::{AnyFpe, Riffpe, RiffpeX};
///
/// let key = [0x2b; 16];
/// let ciphers: [AnyFpe; 2] = [
///     Riffpe::new(100, 8, &key, b"")?.into(),
///     RiffpeX::new(vec![26, 10, 10, 10], &key, b"")?.into(),
/// ];
/// for fpe in &ciphers {
///     let mut message = vec![1; fpe.digits()];
///     fpe.encrypt(&mut message)?;
/// }
/// # Ok::<(), riffpe::Error>(())
/// ```
#[cfg(feature = "alloc")]
pub type AnyFpe<R = alloc::vec::Vec<u32>, C = Aes> = Fpe<AnyDomain<R>, C>;
/// Riffpe or RiffpeX, chosen at run time (radices held in `R`).
#[cfg(not(feature = "alloc"))]
pub type AnyFpe<R, C = Aes> = Fpe<AnyDomain<R>, C>;

/// A Riffpe cipher over the domain `D` ([`Uniform`] for [`Riffpe`], [`Mixed`] for
/// [`RiffpeX`], [`AnyDomain`] for [`AnyFpe`]) with the block cipher `C`.
///
/// The key schedule and the set-up CBC-MAC of the fixed tweak are computed once, at
/// construction. All methods take `&self`, so one object serves many threads (it is `Send` and
/// `Sync`) and, through [`Tweak`], many tweaks.
///
/// Every method checks all its messages before changing any digit: on error they are left as
/// they were.
#[derive(Clone)]
pub struct Fpe<D, C = Aes> {
    cipher: C,
    runner: engine::Runner<C>,
    domain: D,
    layout: Layout,
    iv: SetupIv,
}

/// IV0 of the fixed tweak, wiped on drop with the `zeroize` feature.
#[derive(Clone)]
struct SetupIv(AesBlock);

#[cfg(feature = "zeroize")]
impl Drop for SetupIv {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        self.0.zeroize();
    }
}

/// Parameters of a cipher besides its domain, by name: bytes per value, selection method,
/// fixed tweak; then a key or a block cipher. Made by [`Riffpe::builder`] and
/// [`RiffpeX::builder`].
///
/// ```
/// use riffpe::{Riffpe, Selection};
///
/// let fpe = Riffpe::builder(100, 8)
///     .bytes_per_value(18) // the reference's 128-bit setting for radix 100
///     .tweak(b"cards")
///     .selection(Selection::ConstantTime)
///     .build(&[0x2b; 16])?;
/// assert_eq!(fpe.bytes_per_value(), 18);
///
/// use aes::cipher::KeyInit;
/// let aes = aes::Aes256::new_from_slice(&[0x2b; 32]).expect("a 32-byte key");
/// let fpe = riffpe::RiffpeX::builder([26, 10, 10]).build_with_cipher(aes)?;
/// # Ok::<(), riffpe::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct Builder<'t, D> {
    domain: D,
    bytes_per_value: usize,
    /// `None` until chosen: then [`Selection::default_for`] the domain.
    selection: Option<Selection>,
    tweak: &'t [u8],
}

impl<'t, D: Radices> Builder<'t, D> {
    fn new(domain: D) -> Self {
        Builder {
            domain,
            bytes_per_value: DEFAULT_BYTES_PER_VALUE,
            selection: None,
            tweak: b"",
        }
    }

    /// Keystream bytes per value (default 16, as the reference). The reference's 128-bit
    /// security settings use 18 for radix 10 and 100, 19 for 1000, 20 for 10 000.
    pub fn bytes_per_value(mut self, bytes_per_value: usize) -> Self {
        self.bytes_per_value = bytes_per_value;
        self
    }

    /// How a step's permutation is read off its keystream; outputs do not depend on it.
    /// Unless chosen (or given `None`), [`Selection::default_for`] the largest radix:
    /// constant-time up to 256.
    ///
    /// ```
    /// use riffpe::{Riffpe, Selection};
    ///
    /// let asked: Option<Selection> = None; // e.g. from a command-line flag not given
    /// let fpe = Riffpe::builder(1000, 3).selection(asked).build(&[0x2b; 16])?;
    /// assert_eq!(fpe.selection(), Selection::Fast);
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn selection(mut self, selection: impl Into<Option<Selection>>) -> Self {
        self.selection = selection.into();
        self
    }

    /// The fixed tweak ([`Tweak::Fixed`]), empty by default; its set-up is computed once.
    pub fn tweak<'u>(self, tweak: &'u [u8]) -> Builder<'u, D> {
        Builder {
            domain: self.domain,
            bytes_per_value: self.bytes_per_value,
            selection: self.selection,
            tweak,
        }
    }

    /// Builds on AES keyed by a 16-, 24- or 32-byte `key` (AES-128, -192 or -256).
    pub fn build(self, key: &[u8]) -> Result<Fpe<D, Aes>, SetupError> {
        // Parameters are checked before the key is expanded.
        Layout::new(self.domain.domain(), self.bytes_per_value, self.selection)?;
        self.build_with_aes(Aes::new_from_slice(key)?)
    }

    /// Builds on an expanded AES key, e.g. one cloned for several domains.
    ///
    /// Prefer it to `build_with_cipher(aes)`: it runs the same code, compiled once in this
    /// crate, where the generic method compiles the whole engine again in the calling crate.
    pub fn build_with_aes(self, aes: Aes) -> Result<Fpe<D, Aes>, SetupError> {
        self.assemble(aes, engine::on_aes_backend)
    }

    /// Builds on a block cipher chosen by type (e.g. `aes::Aes256`).
    pub fn build_with_cipher<C: BlockCipherEncrypt<BlockSize = U16>>(
        self,
        cipher: C,
    ) -> Result<Fpe<D, C>, SetupError> {
        self.assemble(cipher, engine::on_backend::<C>)
    }

    fn assemble<C: BlockCipherEncrypt<BlockSize = U16>>(
        self,
        cipher: C,
        runner: engine::Runner<C>,
    ) -> Result<Fpe<D, C>, SetupError> {
        let layout = Layout::new(self.domain.domain(), self.bytes_per_value, self.selection)?;
        let iv = engine::setup(&cipher, self.domain.domain(), self.tweak);
        Ok(Fpe {
            cipher,
            runner,
            domain: self.domain,
            layout,
            iv: SetupIv(iv),
        })
    }
}

impl Riffpe<Aes> {
    /// Riffpe over `digits` digits below `radix`, AES keyed by a 16-, 24- or 32-byte `key`,
    /// with a fixed `tweak` (may be empty) and the default `bytes_per_value` of 16.
    pub fn new(radix: u32, digits: usize, key: &[u8], tweak: &[u8]) -> Result<Self, SetupError> {
        Self::builder(radix, digits).tweak(tweak).build(key)
    }

    /// A [`Builder`] for `digits` digits below `radix`, for the parameters `new` does not take.
    pub fn builder(radix: u32, digits: usize) -> Builder<'static, Uniform> {
        Builder::new(Uniform { radix, digits })
    }
}

impl<C> Riffpe<C> {
    /// The radix of every digit.
    pub fn radix(&self) -> u32 {
        self.domain.radix
    }
}

impl<R: AsRef<[u32]>> RiffpeX<R, Aes> {
    /// RiffpeX over `radices` (digit `i` below `radices[i]`), AES keyed by a 16-, 24- or
    /// 32-byte `key`, with a fixed `tweak` and the default `bytes_per_value` of 16.
    pub fn new(radices: R, key: &[u8], tweak: &[u8]) -> Result<Self, SetupError> {
        Self::builder(radices).tweak(tweak).build(key)
    }

    /// A [`Builder`] for `radices`, for the parameters `new` does not take.
    pub fn builder(radices: R) -> Builder<'static, Mixed<R>> {
        Builder::new(Mixed(radices))
    }
}

impl<R, C> From<Riffpe<C>> for AnyFpe<R, C> {
    fn from(fpe: Riffpe<C>) -> Self {
        Fpe {
            cipher: fpe.cipher,
            runner: fpe.runner,
            domain: AnyDomain::Uniform(fpe.domain),
            layout: fpe.layout,
            iv: fpe.iv,
        }
    }
}

impl<R, C> From<RiffpeX<R, C>> for AnyFpe<R, C> {
    fn from(fpe: RiffpeX<R, C>) -> Self {
        Fpe {
            cipher: fpe.cipher,
            runner: fpe.runner,
            domain: AnyDomain::Mixed(fpe.domain),
            layout: fpe.layout,
            iv: fpe.iv,
        }
    }
}

impl<D: Radices, C: BlockCipherEncrypt<BlockSize = U16>> Fpe<D, C> {
    /// The selection method in use.
    pub fn selection(&self) -> Selection {
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

    /// The scratch one message at a time needs: what to size caller-provided buffers by
    /// (see [`Scratch`]); [`ScratchBuf::for_message`](crate::ScratchBuf::for_message) does so.
    /// A buffer `k` times as large runs up to `k` messages in lockstep, but without the room
    /// where the lockstep kernels keep the keys they make in the AES loop, nor the room to
    /// start its rows on a cache line: size lockstep buffers by [`Fpe::lockstep_scratch_size`]
    /// or [`Fpe::scratch_size_for_lanes`] instead.
    ///
    /// With [`Selection::Fast`] up to radix 128 it includes 256 keys where π files each step's
    /// keys by bucket; a buffer without them (a key per value and 16 more) runs one message
    /// too, a little more slowly.
    pub fn scratch_size(&self) -> ScratchSize {
        self.layout.scratch_size(1)
    }

    /// How many messages [`Fpe::encrypt_with`] advances together on this CPU: the AES
    /// backend's parallel block count. With [`Aes`]: 64 for VAES-512 and for AES-NI without
    /// VAES, 16 for VAES-256 without AVX-512, else 8 (ARMv8, the software AES); a cipher of the
    /// `aes` crate's own runs the count of its backend (2 or 4 for its software AES).
    pub fn lanes(&self) -> usize {
        engine::backend_lanes(&self.cipher)
    }

    /// The scratch for [`Fpe::lanes`] messages in lockstep, with room to start its rows on a
    /// cache line wherever the buffers lie;
    /// [`ScratchBuf::for_lockstep`](crate::ScratchBuf::for_lockstep) sizes a buffer by it.
    pub fn lockstep_scratch_size(&self) -> ScratchSize {
        self.layout.scratch_size(self.lanes())
    }

    /// The scratch for `lanes` messages in lockstep (at least one; above one, with room to
    /// start its rows on a cache line): for callers that run fewer lanes than [`Fpe::lanes`],
    /// to bound memory at large radices or for short batches.
    /// Sizes saturate at `usize::MAX` rather than wrap around.
    ///
    /// ```
    /// use riffpe::Riffpe;
    ///
    /// let fpe = Riffpe::new(100, 8, &[0x2b; 16], b"tweak")?;
    /// assert_eq!(fpe.scratch_size_for_lanes(1), fpe.scratch_size());
    /// assert_eq!(fpe.scratch_size_for_lanes(fpe.lanes()), fpe.lockstep_scratch_size());
    /// assert_eq!(fpe.scratch_size_for_lanes(usize::MAX).keys, usize::MAX);
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn scratch_size_for_lanes(&self, lanes: usize) -> ScratchSize {
        self.layout.scratch_size(lanes.max(1))
    }

    /// Checks messages as every call does (whole messages, each digit below its radix)
    /// without encrypting them: for callers that split work and must refuse it all up front.
    pub fn check(&self, messages: &[u32]) -> Result<(), MessageError> {
        engine::check(self.domain(), messages).map(|_| ())
    }

    fn run(
        &self,
        tweak: Tweak<'_>,
        messages: &mut [u32],
        scratch: &mut Scratch<'_>,
        direction: Direction,
    ) -> Result<(), MessageError> {
        let keyed = engine::Keyed {
            cipher: &self.cipher,
            runner: self.runner,
            domain: self.domain(),
            layout: &self.layout,
            iv: &self.iv.0,
        };
        engine::run(keyed, tweak, messages, scratch, direction)
    }

    /// Encrypts messages in place under `tweak`: [`Fpe::digits`] digits each, back to back,
    /// one message or many. Up to [`Fpe::lanes`] messages advance together (as many as
    /// `scratch` holds), so their AES chains fill the pipeline: several times the throughput
    /// of one message at a time, with identical results. Allocates nothing.
    ///
    /// ```
    /// use riffpe::{Riffpe, ScratchBuf, Tweak};
    ///
    /// let fpe = Riffpe::new(10, 6, &[0x2b; 16], b"")?;
    /// let mut buf = ScratchBuf::for_lockstep(&fpe);
    /// let mut many = vec![3u32; 6 * 100];
    /// fpe.encrypt_with(Tweak::Fixed, &mut many, &mut buf.scratch())?;
    ///
    /// let mut one = [3u32; 6];
    /// fpe.encrypt(&mut one)?;
    /// assert_eq!(&many[..6], &one);
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn encrypt_with(
        &self,
        tweak: Tweak<'_>,
        messages: &mut [u32],
        scratch: &mut Scratch<'_>,
    ) -> Result<(), MessageError> {
        self.run(tweak, messages, scratch, Direction::Encrypt)
    }

    /// Decrypts messages in place under `tweak`; see [`Fpe::encrypt_with`].
    pub fn decrypt_with(
        &self,
        tweak: Tweak<'_>,
        messages: &mut [u32],
        scratch: &mut Scratch<'_>,
    ) -> Result<(), MessageError> {
        self.run(tweak, messages, scratch, Direction::Decrypt)
    }
}

/// Scratch that fits on the stack: keystreams up to 4 KiB (plus the buffer's slack and a
/// CBC-MAC input of up to four blocks)…
#[cfg(feature = "alloc")]
const STACK_KEYSTREAM: usize = 4096 + 16 + 64;
/// …and radices up to 256 (a key and a bucket each, and up to radix 128 fast π's slots).
#[cfg(feature = "alloc")]
const STACK_KEYS: usize = 512;
/// A smaller stack scratch for small domains (keystreams up to 512 bytes: radix 32 at 16 bytes
/// a value), which costs less to clear before a message and to wipe after it.
#[cfg(feature = "alloc")]
const SMALL_KEYSTREAM: usize = 512 + 16 + 64;
/// Keys of [`SMALL_KEYSTREAM`]'s scratch, with fast π's slots.
#[cfg(feature = "alloc")]
const SMALL_KEYS: usize = 64 + crate::select::SLOTS;

#[cfg(feature = "alloc")]
impl<D: Radices, C: BlockCipherEncrypt<BlockSize = U16>> Fpe<D, C> {
    /// Runs one message with stack scratch when the domain fits it (radix ≤ 256, keystream
    /// ≤ 4 KiB), else with a heap buffer for this call.
    fn run_one(
        &self,
        tweak: Tweak<'_>,
        message: &mut [u32],
        direction: Direction,
    ) -> Result<(), MessageError> {
        // A bad message is refused before any scratch is allocated.
        self.domain().check_message(message)?;
        let size = self.scratch_size();
        let fits =
            |keystream: usize, keys: usize| size.keystream_bytes <= keystream && size.keys <= keys;
        if fits(SMALL_KEYSTREAM, SMALL_KEYS) {
            self.run_on_stack::<SMALL_KEYSTREAM, SMALL_KEYS>(tweak, message, direction)
        } else if fits(STACK_KEYSTREAM, STACK_KEYS) {
            self.run_on_stack::<STACK_KEYSTREAM, STACK_KEYS>(tweak, message, direction)
        } else {
            let mut buf = crate::ScratchBuf::for_message(self);
            self.run(tweak, message, &mut buf.scratch(), direction)
        }
    }

    /// Runs one message with `KEYSTREAM` bytes and `KEYS` keys of stack scratch (enough for
    /// [`Fpe::scratch_size`]), wiped afterwards.
    #[inline(always)]
    fn run_on_stack<const KEYSTREAM: usize, const KEYS: usize>(
        &self,
        tweak: Tweak<'_>,
        message: &mut [u32],
        direction: Direction,
    ) -> Result<(), MessageError> {
        let mut keystream = [0u8; KEYSTREAM];
        let mut keys = [0u64; KEYS];
        let result = self.run(
            tweak,
            message,
            &mut Scratch::new(&mut keystream, &mut keys),
            direction,
        );
        crate::scratch::wipe(&mut keystream);
        crate::scratch::wipe(&mut keys);
        result
    }

    /// Encrypts one message in place under the fixed tweak.
    ///
    /// Allocates nothing when the radix is at most 256 and `radix · bytes_per_value` at most
    /// 4 KiB (Riffpe(100, 8) with 16 or 18 bytes per value, say); larger domains allocate their
    /// scratch per call, which [`Fpe::encrypt_with`] and a reused
    /// [`ScratchBuf`](crate::ScratchBuf) avoid.
    pub fn encrypt(&self, message: &mut [u32]) -> Result<(), MessageError> {
        self.run_one(Tweak::Fixed, message, Direction::Encrypt)
    }

    /// Decrypts one message in place under the fixed tweak (scratch as in [`Fpe::encrypt`]).
    pub fn decrypt(&self, message: &mut [u32]) -> Result<(), MessageError> {
        self.run_one(Tweak::Fixed, message, Direction::Decrypt)
    }

    /// Encrypts one message in place under `tweak` instead of the fixed one (a row's own tweak,
    /// say), with scratch as in [`Fpe::encrypt`]: what [`Fpe::new`] with that tweak and
    /// [`Fpe::encrypt`] give, without a key schedule per tweak (the tweak's set-up CBC-MAC runs
    /// in each call).
    ///
    /// ```
    /// use riffpe::Riffpe;
    ///
    /// let key = [0x2b; 16];
    /// let shared = Riffpe::new(10, 6, &key, b"")?;
    /// let mut digits = [1, 2, 3, 4, 5, 6];
    /// shared.encrypt_tweaked(b"row 7", &mut digits)?;
    ///
    /// let mut expected = [1, 2, 3, 4, 5, 6];
    /// Riffpe::new(10, 6, &key, b"row 7")?.encrypt(&mut expected)?;
    /// assert_eq!(digits, expected);
    /// shared.decrypt_tweaked(b"row 7", &mut digits)?;
    /// assert_eq!(digits, [1, 2, 3, 4, 5, 6]);
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn encrypt_tweaked(&self, tweak: &[u8], message: &mut [u32]) -> Result<(), MessageError> {
        self.run_one(Tweak::Bytes(tweak), message, Direction::Encrypt)
    }

    /// Decrypts one message in place under `tweak`; see [`Fpe::encrypt_tweaked`].
    pub fn decrypt_tweaked(&self, tweak: &[u8], message: &mut [u32]) -> Result<(), MessageError> {
        self.run_one(Tweak::Bytes(tweak), message, Direction::Decrypt)
    }

    fn run_int<T: Integer>(
        &self,
        value: T,
        order: DigitOrder,
        direction: Direction,
    ) -> Result<T, MessageError> {
        // A domain that fits T has at most T::BITS digits (every radix is at least 2).
        crate::integer::max_value::<T>(self.domain())?;
        let mut digits = [0u32; 128];
        let digits = &mut digits[..self.digits()];
        crate::integer::to_digits(value, self.domain(), order, digits)?;
        self.run_one(Tweak::Fixed, digits, direction)?;
        crate::integer::from_digits(digits, self.domain(), order)
    }

    /// Encrypts an integer below the domain size under the fixed tweak: its digits in
    /// `order` (SPEC "Integers as messages"), encrypted, and read back the same way.
    ///
    /// ```
    /// use riffpe::{Riffpe, integer::DigitOrder};
    ///
    /// let key = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff];
    /// let fpe = Riffpe::new(100, 8, &key, b"")?;
    /// // The reference CLI: encrypt -k 0011…eeff -n 100 -l 8 1234123456785678
    /// let token = fpe.encrypt_int(1234123456785678u64, DigitOrder::LittleEndian)?;
    /// assert_eq!(token, 5158543106053628);
    /// assert_eq!(fpe.decrypt_int(token, DigitOrder::LittleEndian)?, 1234123456785678);
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn encrypt_int<T: Integer>(&self, value: T, order: DigitOrder) -> Result<T, MessageError> {
        self.run_int(value, order, Direction::Encrypt)
    }

    /// Decrypts an integer; see [`Fpe::encrypt_int`].
    pub fn decrypt_int<T: Integer>(&self, value: T, order: DigitOrder) -> Result<T, MessageError> {
        self.run_int(value, order, Direction::Decrypt)
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

// The cipher objects are shared across threads by design.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Riffpe>();
    assert_send_sync::<RiffpeX<&'static [u32]>>();
    assert_send_sync::<RiffpeX<[u32; 4]>>();
    assert_send_sync::<AnyFpe<[u32; 4]>>();
};

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use aes::cipher::KeyInit;

    use super::*;

    const KEY: [u8; 16] = [
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
        0xff,
    ];

    /// The engine compiled once for [`Aes`] and the generic one for another cipher type agree
    /// with the reference CLI (`encrypt -k 0011…eeff -n 100 -l 8 1234123456785678`), one
    /// message and in lockstep.
    #[test]
    fn every_way_of_giving_the_cipher_runs_the_same_scheme() {
        let builder = Riffpe::builder(100, 8);
        let by_key = builder.build(&KEY).unwrap();
        let by_aes = builder
            .build_with_aes(Aes::new_from_slice(&KEY).unwrap())
            .unwrap();
        let generic = builder
            .build_with_cipher(aes::Aes128::new_from_slice(&KEY).unwrap())
            .unwrap();
        let order = DigitOrder::LittleEndian;
        let (plain, token) = (1234123456785678u64, 5158543106053628u64);
        assert_eq!(by_key.encrypt_int(plain, order).unwrap(), token);
        assert_eq!(by_aes.encrypt_int(plain, order).unwrap(), token);
        assert_eq!(generic.encrypt_int(plain, order).unwrap(), token);
        assert_eq!(generic.decrypt_int(token, order).unwrap(), plain);

        let mut one = [0u32; 8];
        crate::integer::to_digits(plain, by_key.domain(), order, &mut one).unwrap();
        let mut many = one.repeat(20);
        let mut buf = crate::ScratchBuf::for_lockstep(&generic);
        generic
            .encrypt_with(Tweak::Fixed, &mut many, &mut buf.scratch())
            .unwrap();
        by_key.encrypt(&mut one).unwrap();
        assert!(many.chunks(8).all(|m| m == one));
    }

    /// Constant-time π of one message gives the fast selection's results whichever radix it
    /// searches from (the CPU picks one of two) and however it finds the key of rank x from
    /// there (leading bits ranked on arrival where the CPU has AVX2, picked by AVX-512 or not;
    /// AVX-512's search where the CPU has it; the 128-bit one), ranking on arrival or not on
    /// either side of each, RiffpeX's steps switching between them within a message.
    #[test]
    fn one_message_ranks_or_searches_alike() {
        use crate::select::{OneMessage, RankedLeads, SEARCHED_RADICES, WideSearch};
        // The 128-bit search, AVX-512's where the CPU has it, and leading bits ranked on arrival
        // where it has AVX2, with and without AVX-512's pick.
        let wide = WideSearch::detect();
        let ranked = RankedLeads::detect()
            .into_iter()
            .flat_map(|leads| [(wide, Some(leads)), (None, Some(leads.without_wide_pick()))]);
        let searches = [(None, None)]
            .into_iter()
            .chain(wide.map(|wide| (Some(wide), None)))
            .chain(ranked);
        let ways = SEARCHED_RADICES
            .into_iter()
            .flat_map(move |searched_radix| {
                searches.clone().map(move |(wide, leads)| OneMessage {
                    searched_radix,
                    wide,
                    leads,
                })
            });
        let fast = |fpe: &Riffpe| {
            let fast = Riffpe::builder(fpe.radix(), fpe.digits()).selection(Selection::Fast);
            fast.build(&KEY).unwrap()
        };
        // Each side of every radix searched from, and some above them all.
        let around = SEARCHED_RADICES
            .into_iter()
            .flat_map(|from| [from - 1, from, from + 1]);
        for radix in around.chain([100, 128, 129, 200, 256]) {
            let mut fpe = Riffpe::builder(radix, 6).build(&KEY).unwrap();
            assert_eq!(fpe.selection(), Selection::ConstantTime);
            assert_eq!(fpe.layout.one_message, OneMessage::detect());
            assert!(ways.clone().any(|way| way == fpe.layout.one_message));
            let fast = fast(&fpe);
            for way in ways.clone() {
                fpe.layout.one_message = way;
                for seed in 0..8u32 {
                    let message: [u32; 6] =
                        core::array::from_fn(|d| (seed * 37 + d as u32 * 11) % radix);
                    let (mut ours, mut theirs) = (message, message);
                    fpe.encrypt(&mut ours).unwrap();
                    fast.encrypt(&mut theirs).unwrap();
                    assert_eq!(ours, theirs, "radix {radix}, {way:?}");
                }
            }
        }
        let radices = [40u32, 100, 120, 60, 250, 10, 201];
        let mut mixed = RiffpeX::new(&radices[..], &KEY, b"").unwrap();
        let fast = RiffpeX::builder(&radices[..])
            .selection(Selection::Fast)
            .build(&KEY)
            .unwrap();
        let message = [39, 0, 119, 31, 200, 9, 200];
        let (mut expected, mut ours) = (message, message);
        fast.encrypt(&mut expected).unwrap();
        for way in ways {
            mixed.layout.one_message = way;
            ours.copy_from_slice(&message);
            mixed.encrypt(&mut ours).unwrap();
            assert_eq!(ours, expected, "{way:?}");
        }
    }

    /// Unless told otherwise, ciphers select in constant time up to radix 256 (their largest
    /// radix, for RiffpeX), fast above; a chosen selection is kept.
    #[test]
    fn selection_defaults_by_largest_radix() {
        let key = &KEY;
        let uniform = |radix| Riffpe::new(radix, 2, key, b"").unwrap().selection();
        assert_eq!(uniform(2), Selection::ConstantTime);
        assert_eq!(uniform(256), Selection::ConstantTime);
        assert_eq!(uniform(257), Selection::Fast);
        let mixed = |radices: &[u32]| RiffpeX::new(radices, key, b"").unwrap().selection();
        assert_eq!(mixed(&[26, 10, 10]), Selection::ConstantTime);
        assert_eq!(mixed(&[10, 257, 10]), Selection::Fast);
        for selection in [Selection::Fast, Selection::ConstantTime] {
            for radix in [10, 1000] {
                let fpe = Riffpe::builder(radix, 2).selection(selection).build(key);
                assert_eq!(fpe.unwrap().selection(), selection);
            }
        }
    }
}
