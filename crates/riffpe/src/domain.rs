//! Message domains: `l` digits of one radix (Riffpe) or of one radix each (RiffpeX).

use crate::select::group;
use crate::{MessageError, SetupError};

/// A borrowed view of a domain: the radix of every digit position.
///
/// [`Domain::Uniform`] is Riffpe's domain and [`Domain::Mixed`] RiffpeX's; the two schemes also
/// differ in their set-up prefix, so a `Mixed` domain whose radices are all equal is still RiffpeX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain<'a> {
    /// `digits` digits, each below `radix`.
    Uniform {
        /// Radix of every digit.
        radix: u32,
        /// Number of digits.
        digits: usize,
    },
    /// Digit `i` is below `radices[i]`.
    Mixed(&'a [u32]),
}

impl Domain<'_> {
    /// Number of digits in a message.
    #[inline]
    pub fn digits(&self) -> usize {
        match *self {
            Domain::Uniform { digits, .. } => digits,
            Domain::Mixed(radices) => radices.len(),
        }
    }

    /// Radix of digit `index` (`None` past the last digit).
    #[inline]
    pub fn radix(&self, index: usize) -> Option<u32> {
        match *self {
            Domain::Uniform { radix, digits } => (index < digits).then_some(radix),
            Domain::Mixed(radices) => radices.get(index).copied(),
        }
    }

    /// The largest radix (0 for an empty domain).
    pub fn max_radix(&self) -> u32 {
        match *self {
            Domain::Uniform { radix, .. } => radix,
            Domain::Mixed(radices) => radices.iter().copied().max().unwrap_or(0),
        }
    }

    /// Iterator over the radices, digit 0 first.
    pub fn radices(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.digits()).map_while(|i| self.radix(i))
    }

    /// Checks that every digit of `message` is below its radix and that the length matches.
    pub(crate) fn check_message(&self, message: &[u32]) -> Result<(), MessageError> {
        if message.len() != self.digits() {
            return Err(MessageError::MessageLength {
                expected: self.digits(),
                actual: message.len(),
            });
        }
        for (position, (&digit, radix)) in message.iter().zip(self.radices()).enumerate() {
            if digit >= radix {
                return Err(MessageError::DigitOutOfRange {
                    message: 0,
                    position,
                    radix,
                });
            }
        }
        Ok(())
    }
}

/// Riffpe's domain: `digits` digits of one `radix`. Built by [`Riffpe`](crate::Riffpe)'s constructors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uniform {
    pub(crate) radix: u32,
    pub(crate) digits: usize,
}

/// RiffpeX's domain: one radix per digit, kept in `R` (a `Vec<u32>`, an array, a `&'static [u32]` …).
/// Built by [`RiffpeX`](crate::RiffpeX)'s constructors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mixed<R>(pub(crate) R);

/// The domain of a cipher, sealed: [`Uniform`] or [`Mixed`].
pub trait Radices: sealed::Sealed {
    /// The borrowed view of this domain.
    fn domain(&self) -> Domain<'_>;
}

impl Radices for Uniform {
    #[inline]
    fn domain(&self) -> Domain<'_> {
        Domain::Uniform {
            radix: self.radix,
            digits: self.digits,
        }
    }
}

impl<R: AsRef<[u32]>> Radices for Mixed<R> {
    #[inline]
    fn domain(&self) -> Domain<'_> {
        Domain::Mixed(self.0.as_ref())
    }
}

/// Riffpe's or RiffpeX's domain, chosen at run time: the domain of [`AnyFpe`](crate::AnyFpe).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnyDomain<R> {
    /// Riffpe: one radix.
    Uniform(Uniform),
    /// RiffpeX: one radix per digit.
    Mixed(Mixed<R>),
}

impl<R: AsRef<[u32]>> Radices for AnyDomain<R> {
    #[inline]
    fn domain(&self) -> Domain<'_> {
        match self {
            AnyDomain::Uniform(uniform) => uniform.domain(),
            AnyDomain::Mixed(mixed) => mixed.domain(),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Uniform {}
    impl<R: AsRef<[u32]>> Sealed for super::Mixed<R> {}
    impl<R: AsRef<[u32]>> Sealed for super::AnyDomain<R> {}
}

/// The cache line lockstep's scratch starts on where it has room, so that no vector load or
/// store of its rows straddles two lines: 64 bytes on x86-64 and the common aarch64 cores.
pub(crate) const CACHE_LINE: usize = 64;

/// The parameters one digit step needs, derived once from a domain and checked against SPEC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Bytes per encoded digit and index: 1, 2 or 4 (SPEC: element width `w`).
    pub width: usize,
    /// Bytes of keystream per value (SPEC: `b`).
    pub bytes_per_value: usize,
    /// The largest radix, which sizes the scratch.
    pub max_radix: u32,
    /// Digits per message.
    pub digits: usize,
    /// How a step's permutation is read off its keystream.
    pub selection: crate::Selection,
    /// Which code selects in lockstep, chosen from `selection` and the CPU.
    pub kernel: crate::select::Kernel,
    /// How constant-time π of one message finds the key of rank x, chosen from the CPU.
    pub one_message: crate::select::OneMessage,
}

impl Layout {
    /// Validates `domain` and `bytes_per_value` as SPEC's "Invalid parameters" requires, and
    /// picks the kernel for `selection` (if `None`, [`Selection::default_for`] the largest
    /// radix).
    ///
    /// [`Selection::default_for`]: crate::Selection::default_for
    pub fn new(
        domain: Domain<'_>,
        bytes_per_value: usize,
        selection: Option<crate::Selection>,
    ) -> Result<Self, SetupError> {
        let digits = domain.digits();
        if digits == 0 {
            return Err(SetupError::NoDigits);
        }
        for (index, radix) in domain.radices().enumerate() {
            if radix < 2 {
                return Err(SetupError::InvalidRadix { index, radix });
            }
            if matches!(domain, Domain::Uniform { .. }) {
                break; // one radix for all digits
            }
        }
        if bytes_per_value == 0 {
            return Err(SetupError::InvalidBytesPerValue { bytes_per_value });
        }
        let max_radix = domain.max_radix();
        let width = match max_radix {
            0..=0xff => 1,
            0x100..=0xffff => 2,
            _ => 4,
        };
        // The digit index is encoded in `width` bytes and the digit count in LE32.
        let max_digits: u64 = match width {
            1 => 0x100,
            2 => 0x1_0000,
            _ => u64::from(u32::MAX),
        };
        if digits as u64 > max_digits {
            return Err(SetupError::TooManyDigits {
                digits,
                max: usize::try_from(max_digits).unwrap_or(usize::MAX),
            });
        }
        let selection = selection.unwrap_or(crate::Selection::default_for(max_radix));
        let layout = Layout {
            width,
            bytes_per_value,
            max_radix,
            digits,
            selection,
            kernel: crate::select::Kernel::detect(selection, max_radix),
            one_message: crate::select::OneMessage::detect(),
        };
        let needed = layout.scratch_bytes();
        if needed > crate::MAX_SCRATCH_BYTES {
            return Err(SetupError::ScratchTooLarge {
                needed,
                max: crate::MAX_SCRATCH_BYTES,
            });
        }
        Ok(layout)
    }

    /// Keystream blocks of one step for the largest radix: `ceil(n·b / 16)`.
    fn keystream_blocks(&self) -> u64 {
        u64::from(self.max_radix)
            .saturating_mul(self.bytes_per_value as u64)
            .div_ceil(16)
    }

    /// Bytes of the padded digit buffer a step's CBC-MAC reads: `pkcs7((l + 1)·w)`.
    pub fn mac_len(&self) -> usize {
        self.mac_len_u64() as usize
    }

    /// [`Self::mac_len`] in 64 bits, so that it cannot overflow on 32-bit targets before
    /// `new` has bounded it by the scratch cap.
    fn mac_len_u64(&self) -> u64 {
        let digit_bytes = (self.digits as u64 + 1).saturating_mul(self.width as u64);
        (digit_bytes / 16 + 1).saturating_mul(16)
    }

    /// Bytes of one lane's keystream buffer: the keystream plus 16 bytes of slack, so that a
    /// key can always read 8 bytes at a value.
    fn keystream_stride_u64(&self) -> u64 {
        (self.keystream_blocks().saturating_mul(16)).saturating_add(16)
    }

    /// Bytes of one lane's share of scratch keystream: its keystream buffer and its CBC-MAC
    /// input, which is kept between steps (each step changes three of its slots).
    fn lane_bytes_u64(&self) -> u64 {
        self.keystream_stride_u64()
            .saturating_add(self.mac_len_u64())
    }

    /// Entries of the key buffer: a key per value, then the bucket counts. (Lockstep's group
    /// selection takes eight lanes' rows, 8·n words, from the whole group's key buffers.)
    fn keys_stride_u64(&self) -> u64 {
        let buckets = crate::select::KeyLayout::new(self.max_radix, self.bytes_per_value).buckets();
        u64::from(self.max_radix) + buckets as u64
    }

    /// Total scratch bytes of one lane, computed without overflow.
    fn scratch_bytes(&self) -> u64 {
        self.lane_bytes_u64()
            .saturating_add(self.keys_stride_u64().saturating_mul(8))
    }

    /// One lane's keystream buffer (only called once `new` bounded it by the cap).
    pub fn keystream_stride(&self) -> usize {
        self.keystream_stride_u64() as usize
    }

    /// One lane's key buffer.
    pub fn keys_stride(&self) -> usize {
        self.keys_stride_u64() as usize
    }

    /// Scratch for `lanes` messages in lockstep: [`Layout::lanes_need`], and with more than one
    /// lane the room to start both buffers on a cache line ([`CACHE_LINE`]).
    pub fn scratch_size(&self, lanes: usize) -> crate::ScratchSize {
        let need = self.lanes_need(lanes);
        let room = if lanes > 1 { CACHE_LINE - 1 } else { 0 };
        crate::ScratchSize {
            keystream_bytes: need.keystream_bytes.saturating_add(room),
            keys: need.keys.saturating_add(room / 8),
        }
    }

    /// What `lanes` messages in lockstep use: a keystream buffer, a CBC-MAC input and keys
    /// per lane (the keystream buffers first, then the CBC-MAC inputs); with more than one
    /// lane, room for the group kernel's rows of one chunk beside every lane's keys; with one,
    /// the slots that fast π files its keys into up to [`crate::select::SLOTTED_RADIX`].
    pub fn lanes_need(&self, lanes: usize) -> crate::ScratchSize {
        let beside = match lanes {
            1 if self.slotted() => crate::select::SLOTS,
            1 => 0,
            _ => group::Work::words(self.max_radix.min(group::MADE_KEYS_MAX_RADIX)),
        };
        crate::ScratchSize {
            keystream_bytes: lanes.saturating_mul(self.lane_bytes_u64() as usize),
            keys: lanes
                .saturating_mul(self.keys_stride())
                .saturating_add(beside),
        }
    }

    /// The least scratch that runs a lane: its keystream buffer, CBC-MAC input and keys, without
    /// the slots of [`Layout::lanes_need`] (one message's fast π then files into a histogram).
    pub fn lane_least(&self) -> crate::ScratchSize {
        crate::ScratchSize {
            keystream_bytes: self.lane_bytes_u64() as usize,
            keys: self.keys_stride(),
        }
    }

    /// Whether a call's short last group (fewer lanes than the backend runs) may run as the
    /// backend runs it for less (`LockstepBackend::group_lanes`: padded to more lanes, or in
    /// parts): where the group kernel selects, up to radix 256, whose paths for whole groups
    /// (keys or planes made in the AES loop, whole chunks of lanes) the padding buys. Above it,
    /// each lane's selection outweighs the AES rows.
    pub fn reshapes_short_group(&self) -> bool {
        let group_kernel = matches!(
            self.kernel,
            crate::select::Kernel::Group(_) | crate::select::Kernel::ConstantTimeGroup(_)
        );
        group_kernel && self.max_radix <= group::MADE_KEYS_MAX_RADIX
    }

    /// Whether one message's fast π files the keys of every step into slots
    /// ([`crate::select::Slotted`]), which sit after its keys.
    pub fn slotted(&self) -> bool {
        self.selection == crate::Selection::Fast && self.max_radix <= crate::select::SLOTTED_RADIX
    }
}
