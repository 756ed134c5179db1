//! Integers of a domain of any size as decimal text: a `u64` or `u128` fast path, and a big-integer
//! path for the rest (SPEC: "Integers as messages").
//!
//! A [`Codec`] turns one field into one message (an integer, or a group of digits) and back into
//! zero-padded decimal text. [`Numbers::new`] picks the cheapest codec the domain size `N` allows:
//!
//! | `N` fits | codec | message handed to the batch crate |
//! | --- | --- | --- |
//! | `u64` | [`IntCodec<u64>`] | the integer (`encrypt_ints`) |
//! | `u128` | [`IntCodec<u128>`] | the integer (`encrypt_ints`) |
//! | neither | [`BigCodec`] | its digits (`encrypt_digits`) |
//!
//! Every output is padded to the number of decimal digits of `N − 1`, as the reference does.

use num_bigint::BigUint;
use riffpe::Domain;
use riffpe::integer::DigitOrder;

use crate::engine::Element;
use crate::records::{self, Decimal, RecordError};

/// Text ↔ messages for one domain.
pub trait Codec: Sync {
    /// What a message is stored as: an integer, or one digit of `stride()`.
    type Elem: Element;

    /// Elements per message: 1 for integers, the digit count for digit groups.
    fn stride(&self) -> usize;

    /// Parses one field into `out` (`stride()` elements).
    fn parse(&self, field: &[u8], out: &mut [Self::Elem]) -> Result<(), RecordError>;

    /// Appends one message (`stride()` elements) as zero-padded decimal text.
    fn format(&self, message: &[Self::Elem], out: &mut Vec<u8>);
}

/// A domain whose largest value `max = N − 1` fits the machine integer `T`.
#[derive(Clone, Copy, Debug)]
pub struct IntCodec<T> {
    max: T,
    width: usize,
}

impl<T: Decimal + Element> Codec for IntCodec<T> {
    type Elem = T;

    fn stride(&self) -> usize {
        1
    }

    #[inline]
    fn parse(&self, field: &[u8], out: &mut [T]) -> Result<(), RecordError> {
        if let Some(slot) = out.first_mut() {
            *slot = records::parse_decimal(field, self.max)?;
        }
        Ok(())
    }

    #[inline]
    fn format(&self, message: &[T], out: &mut Vec<u8>) {
        if let Some(&value) = message.first() {
            value.write_padded(self.width, out);
        }
    }
}

/// A domain too large for `u128`: decimal text ↔ big integer ↔ digits. Slow, but exact.
#[derive(Clone, Debug)]
pub struct BigCodec {
    radices: Vec<u32>,
    order: DigitOrder,
    max: BigUint,
    width: usize,
}

impl BigCodec {
    /// The same domain through this path, whatever its size: the plain reference the fast
    /// paths are tested against.
    pub fn new(domain: Domain<'_>, order: DigitOrder) -> Self {
        let radices: Vec<u32> = domain.radices().collect();
        let size = radices
            .iter()
            .fold(BigUint::from(1u32), |size, &radix| size * radix);
        // An empty product is 1, so this never underflows.
        let max = size - 1u32;
        let width = max.to_str_radix(10).len();
        BigCodec {
            radices,
            order,
            max,
            width,
        }
    }

    /// Positions from the least significant digit to the most.
    fn least_significant_first(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        let l = self.radices.len();
        (0..l).map(move |k| match self.order {
            DigitOrder::LittleEndian => k,
            DigitOrder::BigEndian => l - 1 - k,
        })
    }
}

impl Codec for BigCodec {
    type Elem = u32;

    fn stride(&self) -> usize {
        self.radices.len()
    }

    fn parse(&self, field: &[u8], out: &mut [u32]) -> Result<(), RecordError> {
        records::check_decimal(field)?;
        let mut value = BigUint::parse_bytes(field, 10).ok_or(RecordError::Empty)?;
        if value > self.max {
            return Err(RecordError::OutOfDomain);
        }
        // Least significant digit first: the remainders of repeated division by each radix.
        for position in self.least_significant_first() {
            let radix = self.radices[position];
            let digit = &value % radix;
            out[position] = u32::try_from(&digit).unwrap_or(0);
            value /= radix;
        }
        Ok(())
    }

    fn format(&self, message: &[u32], out: &mut Vec<u8>) {
        let mut value = BigUint::ZERO;
        for position in self.least_significant_first().rev() {
            value = value * self.radices[position] + message[position];
        }
        let text = value.to_str_radix(10);
        out.resize(out.len() + self.width.saturating_sub(text.len()), b'0');
        out.extend_from_slice(text.as_bytes());
    }
}

/// The codec for a domain, chosen by its size.
#[derive(Clone, Debug)]
pub enum Numbers {
    /// `N` fits `u64`.
    U64(IntCodec<u64>),
    /// `N` fits `u128` but not `u64`.
    U128(IntCodec<u128>),
    /// Larger domains.
    Big(BigCodec),
}

impl Numbers {
    /// The cheapest codec for `domain`, with integers mapped to digits in `order`.
    pub fn new(domain: Domain<'_>, order: DigitOrder) -> Self {
        let big = BigCodec::new(domain, order);
        let width = big.width;
        // `N` itself must fit, not only `N − 1`: the batch crate checks values against `N` in
        // the integer type (so 65536^4 = 2^64 takes the u128 path).
        let size = &big.max + 1u32;
        if let Ok(size) = u64::try_from(&size) {
            Numbers::U64(IntCodec {
                max: size - 1,
                width,
            })
        } else if let Ok(size) = u128::try_from(&size) {
            Numbers::U128(IntCodec {
                max: size - 1,
                width,
            })
        } else {
            Numbers::Big(big)
        }
    }

    /// Decimal digits of every output: those of `N − 1`.
    pub fn width(&self) -> usize {
        match self {
            Numbers::U64(codec) => codec.width,
            Numbers::U128(codec) => codec.width,
            Numbers::Big(codec) => codec.width,
        }
    }

    /// `N`, the number of values of the domain, in decimal.
    pub fn size(&self) -> String {
        match self {
            Numbers::U64(codec) => (u128::from(codec.max) + 1).to_string(),
            Numbers::U128(codec) => (BigUint::from(codec.max) + 1u32).to_string(),
            Numbers::Big(codec) => (&codec.max + 1u32).to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uniform(radix: u32, digits: usize) -> Domain<'static> {
        Domain::Uniform { radix, digits }
    }

    #[test]
    fn picks_the_smallest_integer_that_fits() {
        let cases = [
            (uniform(100, 8), "u64", 16),
            (uniform(10, 1), "u64", 1),
            (uniform(2, 64), "u128", 20),
            (uniform(2, 63), "u64", 19),
            (uniform(65536, 4), "u128", 20),
            (uniform(2, 65), "u128", 20),
            (uniform(10, 20), "u128", 20),
            (uniform(2, 127), "u128", 39),
            (uniform(2, 128), "big", 39),
            (uniform(2, 129), "big", 39),
            (uniform(10, 40), "big", 40),
            (uniform(65536, 20), "big", 97),
        ];
        for (domain, kind, width) in cases {
            let numbers = Numbers::new(domain, DigitOrder::LittleEndian);
            let found = match numbers {
                Numbers::U64(_) => "u64",
                Numbers::U128(_) => "u128",
                Numbers::Big(_) => "big",
            };
            assert_eq!((found, numbers.width()), (kind, width), "{domain:?}");
        }
        assert_eq!(
            Numbers::new(uniform(100, 8), DigitOrder::LittleEndian).size(),
            "10000000000000000"
        );
        assert_eq!(
            Numbers::new(Domain::Mixed(&[26, 10, 10]), DigitOrder::LittleEndian).size(),
            "2600"
        );
    }

    #[test]
    fn big_codec_digits_follow_spec() {
        // x = Σ m_i · ∏_{j<i} r_j (little-endian), x = Σ m_i · ∏_{j>i} r_j (big-endian).
        let radices = [26, 10, 7];
        let domain = Domain::Mixed(&radices);
        let mut digits = [0u32; 3];
        let little = BigCodec::new(domain, DigitOrder::LittleEndian);
        little.parse(b"1234", &mut digits).unwrap();
        assert_eq!(digits, [1234 % 26, (1234 / 26) % 10, 1234 / 260]);
        let mut text = Vec::new();
        little.format(&digits, &mut text);
        assert_eq!(text, b"1234");

        let big = BigCodec::new(domain, DigitOrder::BigEndian);
        big.parse(b"0005", &mut digits).unwrap();
        assert_eq!(digits, [0, 0, 5]);
        big.parse(b"1234", &mut digits).unwrap();
        assert_eq!(digits, [1234 / 70, (1234 / 7) % 10, 1234 % 7]);
        text.clear();
        big.format(&digits, &mut text);
        assert_eq!(text, b"1234");
        text.clear();
        big.format(&[0, 0, 5], &mut text);
        assert_eq!(text, b"0005");
        assert_eq!(
            big.parse(b"1820", &mut digits),
            Err(RecordError::OutOfDomain)
        );
        assert_eq!(big.parse(b"1819", &mut digits), Ok(()));
        assert_eq!(big.parse(b"-1", &mut digits), Err(RecordError::Sign));
    }

    #[test]
    fn fast_paths_match_the_big_path() {
        let domains = [
            uniform(100, 8),
            uniform(10, 19),
            uniform(10, 20),
            uniform(65536, 4),
            uniform(2, 64),
            uniform(2, 127),
        ];
        let mut x: u64 = 0x243f_6a88_85a3_08d3;
        for domain in domains {
            for order in [DigitOrder::LittleEndian, DigitOrder::BigEndian] {
                let numbers = Numbers::new(domain, order);
                let reference = BigCodec::new(domain, order);
                for _ in 0..200 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let mut field = format!("{x}{x}").into_bytes();
                    field.truncate(1 + (x % 40) as usize);
                    let mut expected = Vec::new();
                    let mut digits = vec![0; domain.digits()];
                    let reference_result = reference.parse(&field, &mut digits);
                    if reference_result.is_ok() {
                        reference.format(&digits, &mut expected);
                    }
                    let mut got = Vec::new();
                    let result = match &numbers {
                        Numbers::U64(c) => {
                            let mut v = [0];
                            c.parse(&field, &mut v).map(|()| c.format(&v, &mut got))
                        }
                        Numbers::U128(c) => {
                            let mut v = [0];
                            c.parse(&field, &mut v).map(|()| c.format(&v, &mut got))
                        }
                        Numbers::Big(_) => unreachable!(),
                    };
                    assert_eq!(result, reference_result, "{domain:?} {field:?}");
                    assert_eq!(got, expected, "{domain:?} {field:?}");
                }
            }
        }
    }
}
