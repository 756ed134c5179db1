//! Working memory of one digit step: the keystream and the selection keys.

/// How much scratch one digit step needs: see [`Fpe::scratch_size`](crate::Fpe::scratch_size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScratchSize {
    /// Bytes of keystream: `ceil(n · bytes_per_value / 16) · 16` for the largest radix `n`.
    pub keystream_bytes: usize,
    /// Selection keys (`u64`): a key per value of the largest radix, then its bucket
    /// counts; for one message's fast selection up to radix 128, also 256 slots that its keys
    /// are filed into by bucket.
    pub keys: usize,
}

/// Caller-provided working memory, for use without an allocator.
///
/// Reused across calls, it makes encryption allocation-free. It holds keystream after a call;
/// wipe the buffers if that matters for your threat model (`ScratchBuf` does so on drop with
/// the `zeroize` feature).
///
/// ```
/// use riffpe::{Riffpe, Scratch, Tweak};
///
/// let fpe = Riffpe::new(10, 6, &[0x2b; 16], b"tweak")?;
/// // 10 values of 16 bytes with slack, and a CBC-MAC block; 10 keys, 16 buckets
/// let size = fpe.scratch_size();
/// assert_eq!((size.keystream_bytes, size.keys), (192, 26));
/// let (mut keystream, mut keys) = ([0u8; 192], [0u64; 26]);
/// let mut scratch = Scratch::new(&mut keystream, &mut keys);
///
/// let mut digits = [1, 2, 3, 4, 5, 6];
/// fpe.encrypt_with(Tweak::Fixed, &mut digits, &mut scratch)?;
/// fpe.decrypt_with(Tweak::Fixed, &mut digits, &mut scratch)?;
/// assert_eq!(digits, [1, 2, 3, 4, 5, 6]);
/// # Ok::<(), riffpe::Error>(())
/// ```
#[derive(Debug)]
pub struct Scratch<'a> {
    pub(crate) keystream: &'a mut [u8],
    pub(crate) keys: &'a mut [u64],
}

impl<'a> Scratch<'a> {
    /// Wraps two buffers; their sizes are checked on each call against [`ScratchSize`].
    pub fn new(keystream: &'a mut [u8], keys: &'a mut [u64]) -> Self {
        Scratch { keystream, keys }
    }
}

#[cfg(feature = "alloc")]
pub use owned::ScratchBuf;

/// Wipes scratch that held keystream (with the `zeroize` feature): as a slice, in one fill,
/// where `zeroize` wipes an array or a `Vec` element by element, a volatile store each.
#[cfg(feature = "zeroize")]
pub(crate) fn wipe<T: zeroize::DefaultIsZeroes>(scratch: &mut [T]) {
    use zeroize::Zeroize;
    scratch.zeroize();
}

/// Without the `zeroize` feature, scratch is not wiped.
#[cfg(not(feature = "zeroize"))]
pub(crate) fn wipe<T>(_scratch: &mut [T]) {}

#[cfg(feature = "alloc")]
mod owned {
    use super::{Scratch, ScratchSize, wipe};
    use crate::{Fpe, Radices};
    use alloc::{vec, vec::Vec};
    use cipher::BlockCipherEncrypt;
    use cipher::consts::U16;
    use core::mem;

    /// Heap-backed scratch that grows to the largest size asked of it (feature `alloc`).
    ///
    /// Keep one per thread and pass its [`ScratchBuf::scratch`] to the `*_with` methods:
    /// nothing is allocated after it is made.
    #[derive(Debug, Default)]
    pub struct ScratchBuf {
        keystream: Vec<u8>,
        keys: Vec<u64>,
    }

    impl ScratchBuf {
        /// An empty buffer, for [`ScratchBuf::reserve`].
        pub fn new() -> Self {
            Self::default()
        }

        /// A buffer for one message of `fpe` at a time.
        pub fn for_message<D: Radices, C: BlockCipherEncrypt<BlockSize = U16>>(
            fpe: &Fpe<D, C>,
        ) -> Self {
            Self::with_size(fpe.scratch_size())
        }

        /// A buffer for [`Fpe::lanes`] messages of `fpe` in lockstep.
        pub fn for_lockstep<D: Radices, C: BlockCipherEncrypt<BlockSize = U16>>(
            fpe: &Fpe<D, C>,
        ) -> Self {
            Self::with_size(fpe.lockstep_scratch_size())
        }

        /// A buffer of `size`.
        pub fn with_size(size: ScratchSize) -> Self {
            let mut buf = Self::new();
            buf.reserve(size);
            buf
        }

        /// Grows the buffers to at least `size` (to serve several ciphers, say). A buffer that
        /// grows is replaced, the old one wiped (with the `zeroize` feature) before it is freed.
        pub fn reserve(&mut self, size: ScratchSize) {
            // New buffers rather than `resize`, whose reallocation would free the old one
            // with its keystream in it.
            if self.keystream.len() < size.keystream_bytes {
                wipe(&mut mem::replace(
                    &mut self.keystream,
                    vec![0; size.keystream_bytes],
                ));
            }
            if self.keys.len() < size.keys {
                wipe(&mut mem::replace(&mut self.keys, vec![0; size.keys]));
            }
        }

        /// Borrows the buffers for a call.
        pub fn scratch(&mut self) -> Scratch<'_> {
            Scratch::new(&mut self.keystream, &mut self.keys)
        }
    }

    #[cfg(feature = "zeroize")]
    impl Drop for ScratchBuf {
        fn drop(&mut self) {
            // Nothing is ever written past the length, so the spare capacity holds no keystream.
            wipe(&mut self.keystream);
            wipe(&mut self.keys);
        }
    }
}
