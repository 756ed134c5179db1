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

/// Values converted side by side by [`Converter::to_digits_many`].
const SIDE_BY_SIDE: usize = 8;

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

    /// The digits of each of `values` into `out` (`K` messages one after another) in
    /// `order`; whether they hold all of every value.
    ///
    /// A chunk `c` of `t` digits (`c < r^t`) is read as the fraction `c / r^t` to 64 bits,
    /// `c · ⌈2⁶⁴ / r^t⌉`, which overshoots it by less than `c / 2⁶⁴`. Each multiplication by
    /// `r` carries the next digit, most significant first, out of the top, and multiplies the
    /// overshoot by `r`. At the j-th digit from the top (from 1), what is left is a multiple of
    /// `r^−(t−j)` below 1, so it lacks at least that of a whole, and the overshoot,
    /// `r^j · c / 2⁶⁴`, is less, since `r^t · c < 2⁶⁴` (both below 2³²): no digit comes out
    /// one too high. (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019,
    /// prove the one-digit case.)
    ///
    /// A value's digits wait on each other, one multiplication apart; the `K` values' chains
    /// run side by side.
    #[inline(always)]
    fn split<const K: usize>(&self, values: [u64; K], out: &mut [u32], order: DigitOrder) -> bool {
        let digits = out.len() / K;
        let mut messages = messages_mut::<K>(out, digits);
        let (mut rest, mut excess) = (values, false);
        let mut low = 0;
        while low < digits {
            let take = self.per_chunk.min(digits - low);
            let mut fractions = [0; K];
            for (fraction, rest) in fractions.iter_mut().zip(&mut rest) {
                *fraction = self.next_chunk(rest, take, &mut excess);
            }
            // Each message's digits of this chunk.
            let mut parts = messages.each_mut().map(|message| match order {
                DigitOrder::LittleEndian => &mut message[low..][..take],
                DigitOrder::BigEndian => &mut message[digits - low - take..][..take],
            });
            // Most significant first.
            let mut carry_into = |j: usize| {
                for (fraction, part) in fractions.iter_mut().zip(&mut parts) {
                    part[j] = self.carry(fraction);
                }
            };
            match order {
                DigitOrder::LittleEndian => (0..take).rev().for_each(&mut carry_into),
                DigitOrder::BigEndian => (0..take).for_each(&mut carry_into),
            }
            low += take;
        }
        rest.iter().all(|&rest| rest == 0) && !excess
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

    /// Whether every digit of `digits` is below the radix.
    #[inline(always)]
    fn in_range(&self, digits: &[u32]) -> bool {
        digits.iter().fold(0, |most, &digit| most.max(digit)) < self.radix
    }

    /// The value of `digits` (each below the radix: [`Chunks::in_range`]) in `order`. Cannot
    /// overflow: every message of the domain fits 64 bits.
    #[inline(always)]
    fn join(&self, digits: &[u32], order: DigitOrder) -> u64 {
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
        value
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

/// The first `K` messages of `len` digits each off `digits` (as many as there are, the rest
/// empty).
#[inline(always)]
fn messages_mut<const K: usize>(mut digits: &mut [u32], len: usize) -> [&mut [u32]; K] {
    core::array::from_fn(|_| {
        let (message, rest) = core::mem::take(&mut digits)
            .split_at_mut_checked(len)
            .unwrap_or_default();
        digits = rest;
        message
    })
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
            return match chunks.split([value], out, self.order) {
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

    /// [`Converter::to_digits`] of each of `values` into `out`, one message after another
    /// (`out.len()` is `values.len()` times the domain's digits). An error names the first
    /// value that does not fit by its index in `values`; the messages before it are written.
    ///
    /// Where the digits share a radix, a value's digits wait on each other, so several values
    /// are converted side by side: per value, this is faster than a call each.
    ///
    /// ```
    /// use riffpe::{Domain, integer::{Converter, DigitOrder}};
    ///
    /// let ids = Converter::new(Domain::Uniform { radix: 10, digits: 3 }, DigitOrder::BigEndian);
    /// let mut digits = [0; 6];
    /// ids.to_digits_many(&[123u64, 45], &mut digits)?;
    /// assert_eq!(digits, [1, 2, 3, 0, 4, 5]);
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn to_digits_many<T: Integer>(
        &self,
        values: &[T],
        out: &mut [u32],
    ) -> Result<(), MessageError> {
        let digits = self.domain.digits();
        self.check_many(values.len(), out.len())?;
        let mut done = 0;
        if let Some(chunks) = &self.chunks
            && digits > 0
        {
            let (groups, _) = values.as_chunks::<SIDE_BY_SIDE>();
            for (group, out) in groups
                .iter()
                .zip(out.chunks_exact_mut(SIDE_BY_SIDE * digits))
            {
                let mut fits = true;
                let group = group.map(|value| {
                    let value = value.to_u64();
                    fits &= value.is_some();
                    value.unwrap_or(0)
                });
                // A value out of the domain: one at a time below finds which.
                if !fits || !chunks.split(group, out, self.order) {
                    break;
                }
                done += SIDE_BY_SIDE;
            }
        }
        for (m, &value) in values.iter().enumerate().skip(done) {
            let message = &mut out[m * digits..][..digits];
            self.to_digits(value, message).map_err(|e| e.offset(m))?;
        }
        Ok(())
    }

    /// [`Converter::from_digits`] of each message of `digits` (one after another,
    /// `values.len()` of them) into `values`. An error names the first message with a digit
    /// out of range by its index; the values before it are written.
    ///
    /// Where the digits share a radix, all of them are checked at once: per message, this is
    /// faster than a call each.
    ///
    /// ```
    /// use riffpe::{Domain, integer::{Converter, DigitOrder}};
    ///
    /// let ids = Converter::new(Domain::Uniform { radix: 10, digits: 3 }, DigitOrder::BigEndian);
    /// let mut values = [0u64; 2];
    /// ids.from_digits_many(&[1, 2, 3, 0, 4, 5], &mut values)?;
    /// assert_eq!(values, [123, 45]);
    /// # Ok::<(), riffpe::Error>(())
    /// ```
    pub fn from_digits_many<T: Integer>(
        &self,
        digits: &[u32],
        values: &mut [T],
    ) -> Result<(), MessageError> {
        let len = self.domain.digits();
        self.check_many(values.len(), digits.len())?;
        // Every digit checked at once; a digit out of range: one at a time below finds which.
        if let Some(chunks) = &self.chunks
            && len > 0
            && chunks.in_range(digits)
        {
            for (value, message) in values.iter_mut().zip(digits.chunks_exact(len)) {
                *value = T::from_u64(chunks.join(message, self.order));
            }
            return Ok(());
        }
        for (m, value) in values.iter_mut().enumerate() {
            let message = &digits[m * len..][..len];
            *value = from_digits(message, self.domain, self.order).map_err(|e| e.offset(m))?;
        }
        Ok(())
    }

    /// That `digits` is the digits of `values` messages of the domain, one after another.
    fn check_many(&self, values: usize, digits: usize) -> Result<(), MessageError> {
        let expected = values.checked_mul(self.domain.digits());
        match expected == Some(digits) {
            true => Ok(()),
            false => Err(MessageError::MessageLength {
                expected: expected.unwrap_or(usize::MAX),
                actual: digits,
            }),
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
            // A digit out of range: the plain way finds which.
            if chunks.in_range(digits) {
                return Ok(T::from_u64(chunks.join(digits, self.order)));
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
    extern crate std;

    use super::*;
    use proptest::prelude::*;
    use std::{vec, vec::Vec};

    #[test]
    fn many_values_refuse_lengths_past_usize() {
        let domain = Domain::Uniform {
            radix: 10,
            digits: usize::MAX,
        };
        let converter = Converter::new(domain, DigitOrder::LittleEndian);
        let expected = Err(MessageError::MessageLength {
            expected: usize::MAX,
            actual: 0,
        });
        assert_eq!(converter.to_digits_many(&[1u64, 2], &mut []), expected);
        assert_eq!(
            converter.from_digits_many::<u64>(&[], &mut [0, 0]),
            expected
        );
    }

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
        fn many_values_convert_as_one_at_a_time(
            radices in prop::collection::vec(prop_oneof![2u32..=12, 2u32..=300, Just(1 << 16)], 1..20),
            uniform: bool,
            big_endian: bool,
            seeds in prop::collection::vec(any::<u64>(), 0..30),
            bad in any::<prop::sample::Index>(),
            bad_digit in any::<u32>(),
        ) {
            // A shared radix (the chunked path) or mixed ones, to as many digits as fit 64 bits.
            let fits = |radices: &[u32]| {
                max_value::<u64>(Domain::Mixed(radices)).is_ok()
                    && (!uniform || max_value::<u64>(Domain::Uniform { radix: radices[0], digits: radices.len() }).is_ok())
            };
            let mut len = radices.len();
            while len > 1 && !fits(&radices[..len]) {
                len -= 1;
            }
            let domain = match uniform {
                true => Domain::Uniform { radix: radices[0], digits: len },
                false => Domain::Mixed(&radices[..len]),
            };
            let order = if big_endian { DigitOrder::BigEndian } else { DigitOrder::LittleEndian };
            let converter = Converter::new(domain, order);
            let max = max_value::<u64>(domain).unwrap();
            // Most values in the domain; some past it, as u128 one past 2^64 among them.
            let values: Vec<u128> = seeds
                .iter()
                .map(|&seed| match seed % 16 {
                    0 => u128::from(max) + 1 + u128::from(seed >> 60),
                    1 => u128::from(u64::MAX) + 1,
                    _ => u128::from(seed % max.wrapping_add(1).max(1)),
                })
                .collect();
            let mut many = vec![0; values.len() * len];
            let mut one = vec![0; values.len() * len];
            let got = converter.to_digits_many(&values, &mut many);
            let first_error = values.iter().zip(one.chunks_exact_mut(len)).enumerate().find_map(
                |(m, (&value, out))| converter.to_digits(value, out).err().map(|e| e.offset(m)),
            );
            prop_assert_eq!(got, first_error.map_or(Ok(()), Err));
            let written = first_error.map_or(values.len(), |e| match e {
                MessageError::ValueOutOfDomain { message } => message,
                _ => 0,
            });
            prop_assert_eq!(&many[..written * len], &one[..written * len]);

            // Back, from the digits of the values in the domain, one digit maybe out of range.
            let fitting: Vec<u64> = values.iter().filter_map(|&v| u64::try_from(v).ok()).filter(|&v| v <= max).collect();
            let mut digits = vec![0; fitting.len() * len];
            converter.to_digits_many(&fitting, &mut digits).unwrap();
            let mut back = vec![0u64; fitting.len()];
            converter.from_digits_many(&digits, &mut back).unwrap();
            prop_assert_eq!(&back, &fitting);
            if !digits.is_empty() {
                let at = bad.index(digits.len());
                digits[at] = bad_digit;
                let got = converter.from_digits_many(&digits, &mut back);
                let expected = digits.chunks_exact(len).enumerate().find_map(|(m, message)| {
                    converter.from_digits::<u64>(message).err().map(|e| e.offset(m))
                });
                prop_assert_eq!(got, expected.map_or(Ok(()), Err));
            }
            // A length that is not the values' digits is refused.
            prop_assert!(converter.to_digits_many(&fitting, &mut vec![0; digits.len() + 1]).is_err());
            prop_assert!(converter.from_digits_many(&digits[..digits.len().saturating_sub(1)], &mut back).is_err() || back.is_empty());
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
