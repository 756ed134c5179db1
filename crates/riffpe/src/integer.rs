//! Integers as messages (SPEC: "Integers as messages"): `x` in `[0, N)` ↔ digits.

use crate::{Domain, MessageError};

/// Which digit is the least significant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DigitOrder {
    /// Digit 0 is the least significant (the reference's default).
    #[default]
    LittleEndian,
    /// Digit `l − 1` is the least significant (the reference CLI's `-B`).
    BigEndian,
}

/// The integer types a message converts to and from: `u64` and `u128`.
pub trait Integer: Copy + Ord + core::fmt::Debug + sealed::Sealed {
    /// Bits of the type.
    const BITS: u32;
    /// `self / radix` and `self % radix`, by `reciprocal` = ⌈2¹²⁸ / radix⌉ while the value
    /// fits 64 bits (0: divide).
    #[doc(hidden)]
    fn divrem_by(self, radix: u32, reciprocal: u128) -> (Self, u32);
    #[doc(hidden)]
    fn mul_add(self, radix: u32, digit: u32) -> Option<Self>;
    #[doc(hidden)]
    fn is_zero(self) -> bool;
    #[doc(hidden)]
    fn from_u32(value: u32) -> Self;
    #[doc(hidden)]
    fn to_u64(self) -> Option<u64>;
    #[doc(hidden)]
    fn from_u64(value: u64) -> Self;
}

macro_rules! impl_integer {
    ($($t:ty),*) => {$(
        impl Integer for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline]
            fn divrem_by(self, radix: u32, reciprocal: u128) -> (Self, u32) {
                match u64::try_from(self) {
                    Ok(value) if reciprocal != 0 => {
                        let (quotient, digit) = divrem_u64(value, radix, reciprocal);
                        (quotient.into(), digit)
                    }
                    _ => (self / <$t>::from(radix), (self % <$t>::from(radix)) as u32),
                }
            }
            #[inline]
            fn mul_add(self, radix: u32, digit: u32) -> Option<Self> {
                self.checked_mul(<$t>::from(radix))?.checked_add(<$t>::from(digit))
            }
            #[inline]
            fn is_zero(self) -> bool {
                self == 0
            }
            #[inline]
            fn from_u32(value: u32) -> Self {
                <$t>::from(value)
            }
            #[inline]
            fn to_u64(self) -> Option<u64> {
                u64::try_from(self).ok()
            }
            #[inline]
            fn from_u64(value: u64) -> Self {
                <$t>::from(value)
            }
        }
    )*};
}
impl_integer!(u64, u128);

/// ⌈2¹²⁸ / radix⌉, for [`divrem_u64`] (radix ≥ 2).
fn reciprocal(radix: u32) -> u128 {
    u128::MAX / u128::from(radix) + 1
}

/// `value / radix` and `value % radix` by multiplying by `reciprocal` (⌈2¹²⁸ / radix⌉): the top
/// 64 bits of the 192-bit product are the quotient, exactly for every 64-bit value (Lemire,
/// Kaser and Kurz, "Faster remainder by direct computation", 2019), at the cost of three
/// multiplications instead of a division.
#[inline]
fn divrem_u64(value: u64, radix: u32, reciprocal: u128) -> (u64, u32) {
    let low = (u128::from(reciprocal as u64) * u128::from(value)) >> 64;
    let high = (reciprocal >> 64) * u128::from(value);
    let quotient = ((high + low) >> 64) as u64;
    (quotient, (value - quotient * u64::from(radix)) as u32)
}

/// [`to_digits`] for many values of one domain: a radix shared by every digit is divided by
/// multiplying by its reciprocal, worked out once.
///
/// ```
/// use riffpe::{Domain, integer::{Converter, DigitOrder}};
///
/// let cards = Converter::new(Domain::Uniform { radix: 10, digits: 16 }, DigitOrder::BigEndian);
/// let mut digits = [0; 16];
/// cards.to_digits(4111_1111_1111_1111u64, &mut digits)?;
/// assert_eq!(digits, [4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
/// # Ok::<(), riffpe::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Converter<'d> {
    domain: Domain<'d>,
    order: DigitOrder,
    /// The shared radix's reciprocal, 0 if digits have radices of their own.
    reciprocal: u128,
    /// How values of 64 bits convert, if the digits share a radix and every message fits 64 bits.
    chunks: Option<Chunks>,
}

/// A shared radix `r` for 64-bit values, taken `per_chunk` digits at a time: a value splits
/// into chunks below `r^per_chunk` (< 2³²) by one 64-bit division each but the last, and a
/// chunk's digits come from its fraction of the chunk's range, one multiplication each
/// ([`Chunks::split`]).
#[derive(Clone, Copy, Debug)]
struct Chunks {
    radix: u32,
    per_chunk: usize,
    /// `powers[j]` = `r^j` for `j ≤ per_chunk` (each below 2³²).
    powers: [u64; CHUNK_POWERS],
    /// `reciprocals[j]` = ⌈2⁶⁴ / r^j⌉ for `1 ≤ j ≤ per_chunk`: a chunk of `j` digits times
    /// this is its fraction ([`Chunks::split`]).
    reciprocals: [u64; CHUNK_POWERS],
    /// ⌈2¹²⁸ / r^per_chunk⌉, for [`divrem_u64`].
    chunk_reciprocal: u128,
}

/// Powers of a radix below 2³², from `r^0`: 32 for radix 2.
const CHUNK_POWERS: usize = 32;

impl Chunks {
    fn new(domain: Domain<'_>) -> Option<Self> {
        let Domain::Uniform { radix, .. } = domain else {
            return None;
        };
        if radix < 2 {
            return None;
        }
        max_value::<u64>(domain).ok()?;
        let (mut powers, mut reciprocals) = ([1u64; CHUNK_POWERS], [0u64; CHUNK_POWERS]);
        let mut per_chunk = 0;
        while let Some(next) = (powers[per_chunk] as u32).checked_mul(radix) {
            per_chunk += 1;
            powers[per_chunk] = u64::from(next);
            reciprocals[per_chunk] = u64::MAX / u64::from(next) + 1;
        }
        Some(Chunks {
            radix,
            per_chunk,
            powers,
            reciprocals,
            chunk_reciprocal: reciprocal(powers[per_chunk] as u32),
        })
    }

    /// The digits of `value` into `out` in `order`; whether they hold all of it.
    ///
    /// A chunk `c` of `t` digits (`c < r^t`) is read as the fraction `c / r^t` to 64 bits,
    /// `c · ⌈2⁶⁴ / r^t⌉`, which overshoots it by less than `c / 2⁶⁴`. Each multiplication by
    /// `r` carries the next digit, most significant first, out of the top, and multiplies the
    /// overshoot by `r`. At the j-th digit from the top (from 1), what is left is a multiple of
    /// `r^−(t−j)` below 1, so it lacks at least that of a whole, and the overshoot,
    /// `r^j · c / 2⁶⁴`, is less, since `r^t · c < 2⁶⁴` (both below 2³²): no digit comes out
    /// one too high. (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019,
    /// prove the one-digit case.)
    #[inline(always)]
    fn split(&self, value: u64, out: &mut [u32], order: DigitOrder) -> bool {
        let (mut rest, mut excess) = (value, false);
        match order {
            DigitOrder::LittleEndian => {
                for digits in out.chunks_mut(self.per_chunk) {
                    let mut chunk = self.next_chunk(&mut rest, digits.len(), &mut excess);
                    for digit in digits.iter_mut().rev() {
                        *digit = self.carry(&mut chunk);
                    }
                }
            }
            DigitOrder::BigEndian => {
                for digits in out.rchunks_mut(self.per_chunk) {
                    let mut chunk = self.next_chunk(&mut rest, digits.len(), &mut excess);
                    for digit in digits.iter_mut() {
                        *digit = self.carry(&mut chunk);
                    }
                }
            }
        }
        rest == 0 && !excess
    }

    /// The fraction of the next chunk of `take` digits off `rest` (its value over `r^take`, as
    /// [`Chunks::split`] reads it); `excess` set if the chunk holds more than its digits.
    #[inline(always)]
    fn next_chunk(&self, rest: &mut u64, take: usize, excess: &mut bool) -> u64 {
        let power = self.powers[self.per_chunk];
        // The last chunk needs no division.
        let chunk = if *rest < power {
            core::mem::take(rest)
        } else {
            let (quotient, chunk) = divrem_u64(*rest, power as u32, self.chunk_reciprocal);
            *rest = quotient;
            u64::from(chunk)
        };
        *excess |= chunk >= self.powers[take];
        chunk.wrapping_mul(self.reciprocals[take])
    }

    /// The next digit carried out of the top of `fraction` ([`Chunks::split`]).
    #[inline(always)]
    fn carry(&self, fraction: &mut u64) -> u32 {
        let carried = u128::from(*fraction) * u128::from(self.radix);
        *fraction = carried as u64;
        (carried >> 64) as u32
    }

    /// The value of `digits` (each below the radix, else `None`) in `order`. Cannot
    /// overflow: every message of the domain fits 64 bits.
    #[inline(always)]
    fn join(&self, digits: &[u32], order: DigitOrder) -> Option<u64> {
        if digits.iter().fold(0, |most, &digit| most.max(digit)) >= self.radix {
            return None;
        }
        let (mut value, mut weight) = (0u64, 1u64);
        let mut add = |chunk: u64| {
            value = value.wrapping_add(chunk.wrapping_mul(weight));
            weight = weight.wrapping_mul(self.powers[self.per_chunk]);
        };
        match order {
            DigitOrder::LittleEndian => {
                for digits in digits.chunks(self.per_chunk) {
                    add(self.chunk(digits.iter()));
                }
            }
            DigitOrder::BigEndian => {
                for digits in digits.rchunks(self.per_chunk) {
                    add(self.chunk(digits.iter().rev()));
                }
            }
        }
        Some(value)
    }

    /// A chunk's value from its digits, least significant first: products none of which
    /// waits on another, where a digit at a time would wait on the one before.
    #[inline(always)]
    fn chunk<'a>(&self, digits: impl Iterator<Item = &'a u32>) -> u64 {
        digits.zip(&self.powers).fold(0, |sum, (&digit, &power)| {
            sum.wrapping_add(u64::from(digit).wrapping_mul(power))
        })
    }
}

impl<'d> Converter<'d> {
    /// A converter to the digits of `domain`, in `order`.
    pub fn new(domain: Domain<'d>, order: DigitOrder) -> Self {
        Converter {
            chunks: Chunks::new(domain),
            ..Self::unchunked(domain, order)
        }
    }

    /// [`Converter::new`] without the chunk tables, for a value or two: working them out
    /// would cost more than they save.
    fn unchunked(domain: Domain<'d>, order: DigitOrder) -> Self {
        let reciprocal = match domain {
            Domain::Uniform { radix, .. } if radix >= 2 => reciprocal(radix),
            _ => 0,
        };
        Converter {
            domain,
            order,
            reciprocal,
            chunks: None,
        }
    }

    /// [`to_digits`] of `value`.
    #[inline]
    pub fn to_digits<T: Integer>(&self, value: T, out: &mut [u32]) -> Result<(), MessageError> {
        let digits = self.domain.digits();
        if out.len() != digits {
            return Err(MessageError::MessageLength {
                expected: digits,
                actual: out.len(),
            });
        }
        if let (Some(chunks), Some(value)) = (&self.chunks, value.to_u64()) {
            return match chunks.split(value, out, self.order) {
                true => Ok(()),
                false => Err(MessageError::ValueOutOfDomain { message: 0 }),
            };
        }
        let mut rest = value;
        for position in significance(digits, self.order) {
            let radix = self.domain.radix(position).unwrap_or(2).max(2);
            let (quotient, digit) = rest.divrem_by(radix, self.reciprocal);
            out[position] = digit;
            rest = quotient;
        }
        if rest.is_zero() {
            Ok(())
        } else {
            Err(MessageError::ValueOutOfDomain { message: 0 })
        }
    }

    /// [`from_digits`] of `digits`.
    ///
    /// ```
    /// use riffpe::{Domain, integer::{Converter, DigitOrder}};
    ///
    /// let domain = Domain::Uniform { radix: 10, digits: 16 };
    /// let cards = Converter::new(domain, DigitOrder::BigEndian);
    /// let value: u64 = cards.from_digits(&[4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])?;
    /// assert_eq!(value, 4111_1111_1111_1111);
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    #[inline]
    pub fn from_digits<T: Integer>(&self, digits: &[u32]) -> Result<T, MessageError> {
        let len = self.domain.digits();
        if let Some(chunks) = &self.chunks
            && digits.len() == len
        {
            let value = chunks.join(digits, self.order);
            // A digit out of range: the plain way finds which.
            if let Some(value) = value {
                return Ok(T::from_u64(value));
            }
        }
        from_digits(digits, self.domain, self.order)
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u64 {}
    impl Sealed for u128 {}
}

/// Positions from least to most significant.
fn significance(digits: usize, order: DigitOrder) -> impl DoubleEndedIterator<Item = usize> {
    let little = matches!(order, DigitOrder::LittleEndian);
    (0..digits).map(move |k| if little { k } else { digits - 1 - k })
}

/// Writes the digits of `value` in `domain` to `out` (one per digit of the domain).
///
/// ```
/// use riffpe::{Domain, integer::{to_digits, DigitOrder}};
///
/// let domain = Domain::Uniform { radix: 100, digits: 8 };
/// let mut digits = [0; 8];
/// to_digits(1234123456785678u64, domain, DigitOrder::LittleEndian, &mut digits)?;
/// assert_eq!(digits, [78, 56, 78, 56, 34, 12, 34, 12]);
/// to_digits(1234123456785678u64, domain, DigitOrder::BigEndian, &mut digits)?;
/// assert_eq!(digits, [12, 34, 12, 34, 56, 78, 56, 78]);
/// # Ok::<(), riffpe::Error>(())
/// ```
pub fn to_digits<T: Integer>(
    value: T,
    domain: Domain<'_>,
    order: DigitOrder,
    out: &mut [u32],
) -> Result<(), MessageError> {
    Converter::unchunked(domain, order).to_digits(value, out)
}

/// The integer whose digits in `domain` are `digits`.
///
/// Errors if a digit is not below its radix, or the value does not fit `T`.
pub fn from_digits<T: Integer>(
    digits: &[u32],
    domain: Domain<'_>,
    order: DigitOrder,
) -> Result<T, MessageError> {
    domain.check_message(digits)?;
    let mut value = T::from_u32(0);
    for position in significance(digits.len(), order).rev() {
        let radix = domain.radix(position).unwrap_or(2);
        value = value
            .mul_add(radix, digits[position])
            .ok_or(MessageError::DomainTooLarge { bits: T::BITS })?;
    }
    Ok(value)
}

/// `N − 1`, the largest message of `domain` as an integer, if it fits `T`.
///
/// Unlike [`domain_size`] this fits whenever every message does: a domain of exactly `2^64`
/// messages has `u64::MAX` as its largest.
///
/// ```
/// use riffpe::{Domain, integer::max_value};
/// let cards = Domain::Uniform { radix: 10, digits: 16 };
/// assert_eq!(max_value::<u64>(cards)?, 9_999_999_999_999_999);
/// let all_u64 = Domain::Uniform { radix: 65536, digits: 4 };
/// assert_eq!(max_value::<u64>(all_u64)?, u64::MAX);
/// # Ok::<(), riffpe::Error>(())
/// ```
pub fn max_value<T: Integer>(domain: Domain<'_>) -> Result<T, MessageError> {
    // Horner's rule over the largest digits: ((r0 − 1)·r1 + r1 − 1)… = ∏ r_i − 1.
    let mut max = T::from_u32(0);
    for radix in domain.radices() {
        max = max
            .mul_add(radix, radix.saturating_sub(1))
            .ok_or(MessageError::DomainTooLarge { bits: T::BITS })?;
    }
    Ok(max)
}

/// `N`, the number of messages of `domain` (`n^l` or `∏ r_i`), if it fits `T`.
pub fn domain_size<T: Integer>(domain: Domain<'_>) -> Result<T, MessageError> {
    let mut size = T::from_u32(1);
    for radix in domain.radices() {
        size = size
            .mul_add(radix, 0)
            .ok_or(MessageError::DomainTooLarge { bits: T::BITS })?;
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn division_by_the_reciprocal_is_division(
            value in prop_oneof![any::<u64>(), Just(u64::MAX), 0u64..1000],
            radix in prop_oneof![2u32..=300, any::<u32>().prop_map(|r| r.max(2)), Just(u32::MAX), Just(1 << 31)],
        ) {
            let expected = (value / u64::from(radix), (value % u64::from(radix)) as u32);
            prop_assert_eq!(divrem_u64(value, radix, reciprocal(radix)), expected);
        }

        #[test]
        fn chunked_conversion_is_the_plain_one(
            value in prop_oneof![any::<u64>(), 0u64..1000, Just(u64::MAX)],
            radix in prop_oneof![
                2u32..=300,
                any::<u32>().prop_map(|r| r.max(2)),
                Just(u32::MAX),
                Just(1 << 31),
                Just(1 << 16),
            ],
            shorter in 0usize..8,
            place in 0u8..3,
            big_endian: bool,
            bad in any::<prop::sample::Index>(),
            bad_digit in any::<u32>(),
        ) {
            // The most digits whose messages all fit 64 bits, or fewer.
            let fits = |digits| max_value::<u64>(Domain::Uniform { radix, digits }).is_ok();
            let most = (1..=64).take_while(|&l| fits(l)).last().unwrap();
            let digits = most.saturating_sub(shorter).max(1);
            let domain = Domain::Uniform { radix, digits };
            let order = if big_endian { DigitOrder::BigEndian } else { DigitOrder::LittleEndian };
            // A third of the values taken into the domain, where every digit is read, and a
            // third to its end: the greatest value, and the first two past it.
            let value = match (place, max_value::<u64>(domain)) {
                (1, Ok(max)) => value.checked_rem(max.wrapping_add(1)).unwrap_or(value),
                (2, Ok(max)) => max.wrapping_add(value % 3),
                _ => value,
            };
            let converter = Converter::new(domain, order);
            prop_assert!(converter.chunks.is_some());
            let (mut fast, mut plain) = ([0; 64], [0; 64]);
            let (fast, plain) = (&mut fast[..digits], &mut plain[..digits]);
            let got = converter.to_digits(value, fast);
            prop_assert_eq!(got, to_digits(value, domain, order, plain));
            if got.is_ok() {
                prop_assert_eq!(&*fast, &*plain);
                prop_assert_eq!(converter.from_digits::<u64>(fast), Ok(value));
                prop_assert_eq!(converter.from_digits::<u128>(fast), Ok(u128::from(value)));
            }
            // A digit out of range is named as the plain way names it.
            let at = bad.index(digits);
            fast[at] = bad_digit;
            let plain = from_digits::<u64>(fast, domain, order);
            prop_assert_eq!(converter.from_digits::<u64>(fast), plain);
        }

        #[test]
        fn a_shared_radix_gives_the_digits_of_plain_division(
            value in any::<u128>(),
            radix in prop_oneof![2u32..=300, any::<u32>().prop_map(|r| r.max(2))],
        ) {
            // Enough digits for any u128: the value passes 2^64 on its way down.
            let digits = (128 / (u32::BITS - radix.leading_zeros() - 1)) as usize + 1;
            let domain = Domain::Uniform { radix, digits };
            let mut out = [0; 129];
            to_digits(value, domain, DigitOrder::LittleEndian, &mut out[..digits]).unwrap();
            let mut rest = value;
            for (position, &digit) in out[..digits].iter().enumerate() {
                prop_assert_eq!(u128::from(digit), rest % u128::from(radix), "digit {}", position);
                rest /= u128::from(radix);
            }
        }
    }
}
