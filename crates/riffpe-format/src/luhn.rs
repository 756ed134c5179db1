//! The Luhn (mod 10) check: residues and the digit that sets one.

/// How a digit-alphabet format treats the Luhn check digit; see the crate docs for the
/// constructions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Luhn {
    /// No Luhn handling: every encrypted position is encrypted.
    #[default]
    Off,
    /// A number's Luhn residue is kept: a valid number encrypts to a valid number, and any
    /// number round-trips.
    Preserve,
    /// Only valid numbers are encrypted, and their tokens always fail the check (residue 1).
    Invalid,
}

/// The residue tokens of [`Luhn::Invalid`] have.
pub(crate) const INVALID_RESIDUE: u8 = 1;

/// Luhn's doubling of a digit: `2d`, minus 9 when over 9.
fn doubled(d: u32) -> u32 {
    DOUBLED[(d % 10) as usize]
}

/// [`doubled`] of each digit.
const DOUBLED: [u32; 10] = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];

/// The Luhn sum mod 10 of `digits` (most significant first); 0 means the number is valid.
pub(crate) fn residue(digits: impl DoubleEndedIterator<Item = u32>) -> u8 {
    let mut sum = 0u32;
    let mut double = false;
    for d in digits.rev() {
        sum += if double { doubled(d) } else { d % 10 };
        double = !double;
    }
    (sum % 10) as u8
}

/// The digit that, placed `from_right` places from the right of a number whose other digits
/// sum (Luhn-weighted) to `others`, makes its residue `target`.
pub(crate) fn solve(others: u8, from_right: usize, target: u8) -> u32 {
    let need = (u32::from(target) + 10 - u32::from(others)) % 10;
    if from_right % 2 == 1 {
        // Doubling is a bijection on 0..=9; find the digit it sends to `need`.
        (0..10).find(|&d| doubled(d) == need).unwrap_or(0)
    } else {
        need
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digits(s: &str) -> impl DoubleEndedIterator<Item = u32> + '_ {
        s.bytes().map(|b| u32::from(b - b'0'))
    }

    #[test]
    fn doubling_subtracts_nine_past_nine() {
        for d in 0..10 {
            assert_eq!(doubled(d), if 2 * d > 9 { 2 * d - 9 } else { 2 * d });
        }
    }

    #[test]
    fn known_numbers() {
        assert_eq!(residue(digits("4111111111111111")), 0);
        assert_eq!(residue(digits("79927398713")), 0);
        assert_ne!(residue(digits("79927398710")), 0);
    }

    #[test]
    fn solve_sets_the_residue() {
        for from_right in 0..4 {
            for others in 0..10 {
                for target in 0..10 {
                    let d = solve(others, from_right, target);
                    let w = if from_right % 2 == 1 { doubled(d) } else { d };
                    assert_eq!((u32::from(others) + w) % 10, u32::from(target));
                }
            }
        }
    }
}
