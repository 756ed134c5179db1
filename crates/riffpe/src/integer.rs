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
/// into chunks below `r^per_chunk` (< 2³²) by one 64-bit division each, and each digit of a
/// chunk comes from the chunk by its own multiplications, none waiting on another digit's.
#[derive(Clone, Copy, Debug)]
struct Chunks {
    radix: u32,
    per_chunk: usize,
    /// `powers[j]` = `r^j` for `j ≤ per_chunk` (each below 2³²).
    powers: [u64; CHUNK_POWERS],
    /// `reciprocals[j]` = ⌈2⁶⁴ / r^j⌉ for `1 ≤ j ≤ per_chunk`: `c / r^j` is
    /// `(c · reciprocals[j]) >> 64` for every 32-bit `c` (Lemire, Kaser and Kurz, 2019).
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

    /// `chunk / r^j`, `1 ≤ j ≤ per_chunk`.
    #[inline(always)]
    fn over(&self, chunk: u32, j: usize) -> u32 {
        ((u128::from(chunk) * u128::from(self.reciprocals[j])) >> 64) as u32
    }

    /// The digits of `value`, least significant first, into `out` by `at(k)`, the index of
    /// the k-th least significant; whether they hold all of it.
    #[inline(always)]
    fn split(&self, value: u64, out: &mut [u32], at: impl Fn(usize) -> usize) -> bool {
        let digits = out.len();
        let power = self.powers[self.per_chunk] as u32;
        let (mut rest, mut excess, mut k) = (value, 0, 0);
        while k < digits {
            let (quotient, chunk) = divrem_u64(rest, power, self.chunk_reciprocal);
            rest = quotient;
            let take = self.per_chunk.min(digits - k);
            // Digit j is chunk / r^j − r · (chunk / r^(j+1)).
            let mut above = chunk;
            for j in 0..take {
                let next = self.over(chunk, j + 1);
                out[at(k + j)] = above - next * self.radix;
                above = next;
            }
            excess |= above;
            k += take;
        }
        rest == 0 && excess == 0
    }

    /// The value of `digits` (each below the radix, else `None`), most significant first by
    /// `at(k)`, the index of the k-th most significant. Cannot overflow: every message of the
    /// domain fits 64 bits.
    #[inline(always)]
    fn join(&self, digits: &[u32], at: impl Fn(usize) -> usize) -> Option<u64> {
        let (mut value, mut invalid, mut k) = (0u64, false, 0);
        let len = digits.len();
        while k < len {
            // The leading chunk takes what is left over, so that the others are whole.
            let take = match (len - k) % self.per_chunk {
                rest if k == 0 && rest != 0 => rest,
                _ => self.per_chunk,
            };
            let mut chunk = 0u64;
            for j in 0..take {
                let digit = digits[at(k + j)];
                invalid |= digit >= self.radix;
                let weight = self.powers[take - 1 - j];
                chunk = chunk.wrapping_add(u64::from(digit).wrapping_mul(weight));
            }
            value = value.wrapping_mul(self.powers[take]).wrapping_add(chunk);
            k += take;
        }
        (!invalid).then_some(value)
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
            let fits = match self.order {
                DigitOrder::LittleEndian => chunks.split(value, out, |k| k),
                DigitOrder::BigEndian => chunks.split(value, out, |k| digits - 1 - k),
            };
            return match fits {
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
            let value = match self.order {
                DigitOrder::LittleEndian => chunks.join(digits, |k| len - 1 - k),
                DigitOrder::BigEndian => chunks.join(digits, |k| k),
            };
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
