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
}

impl<'d> Converter<'d> {
    /// A converter to the digits of `domain`, in `order`.
    pub fn new(domain: Domain<'d>, order: DigitOrder) -> Self {
        let reciprocal = match domain {
            Domain::Uniform { radix, .. } if radix >= 2 => reciprocal(radix),
            _ => 0,
        };
        Converter {
            domain,
            order,
            reciprocal,
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
    Converter::new(domain, order).to_digits(value, out)
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
