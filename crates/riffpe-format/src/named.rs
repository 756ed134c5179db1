//! The named formats and their listing.

use alloc::vec::Vec;

use crate::{Alphabet, Error, Format, Luhn};

/// A named format, as [`named_formats`] lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamedFormat {
    /// The name [`Format::named`] takes.
    pub name: &'static str,
    /// What it encrypts, in a line.
    pub description: &'static str,
    /// The radix of each encrypted position.
    pub radices: &'static str,
    /// Lengths (in alphabet characters, separators not counted) worth listing.
    pub common_lengths: &'static [usize],
}

impl NamedFormat {
    /// The format.
    pub fn format(&self) -> Format {
        // Every name in the table builds.
        build(self.name).unwrap_or_else(|_| Format::auto())
    }

    /// For each of [`NamedFormat::common_lengths`], the number of values the encrypted
    /// positions take (see [`Format::domain_for`]); below [`MIN_DOMAIN`](crate::MIN_DOMAIN)
    /// such values are refused.
    pub fn domain_sizes(&self) -> Vec<(usize, Result<u128, Error>)> {
        let format = self.format();
        self.common_lengths
            .iter()
            .map(|&n| (n, format.domain_for(n)))
            .collect()
    }
}

const NAMED: &[NamedFormat] = &[
    NamedFormat {
        name: "digits",
        description: "decimal digits, any length",
        radices: "10 each",
        common_lengths: &[6, 9, 12, 16],
    },
    NamedFormat {
        name: "card",
        description: "card number, Luhn residue preserved; spaces and dashes pass through",
        radices: "10 each, the last digit set by Luhn",
        common_lengths: &[13, 15, 16, 19],
    },
    NamedFormat {
        name: "card-keep-6-4",
        description: "card number keeping the first 6 (BIN) and last 4 digits, Luhn preserved",
        radices: "10 each, the last encrypted digit set by Luhn",
        common_lengths: &[16, 19],
    },
    NamedFormat {
        name: "card-keep-last-4",
        description: "card number keeping the last 4 digits, Luhn preserved",
        radices: "10 each, the last encrypted digit set by Luhn",
        common_lengths: &[13, 15, 16, 19],
    },
    NamedFormat {
        name: "ssn",
        description: "US social security number 999-99-9999, or its 9 digits without the dashes",
        radices: "10 each",
        common_lengths: &[9],
    },
    NamedFormat {
        name: "phone",
        description: "phone number: digits, with + ( ) - . and space passing through",
        radices: "10 each",
        common_lengths: &[7, 10, 11, 12, 15],
    },
    NamedFormat {
        name: "alnum",
        description: "ASCII letters and digits (0-9A-Za-z), any length",
        radices: "62 each",
        common_lengths: &[4, 6, 8, 16],
    },
    NamedFormat {
        name: "auto",
        description: "each digit, lower- or upper-case letter keeps its class; others pass through",
        radices: "10, 26 or 26 by class (sizes for all digits)",
        common_lengths: &[6, 8, 12, 16],
    },
    NamedFormat {
        name: "hex",
        description: "lower-case hexadecimal (0-9a-f), any length",
        radices: "16 each",
        common_lengths: &[4, 5, 8, 16, 32],
    },
    NamedFormat {
        name: "uuid",
        description: "hex digits with dashes passing through, case kept",
        radices: "16 each",
        common_lengths: &[32],
    },
];

/// Every named format, in a fixed order (the command line's `riffpe formats`).
///
/// ```
/// let card = riffpe_format::named_formats().iter().find(|f| f.name == "card-keep-6-4").unwrap();
/// let sizes = card.domain_sizes();
/// assert_eq!(sizes[0].0, 16);
/// assert_eq!(sizes[0].1, Ok(100_000)); // 16 − 6 − 4 digits, one set by Luhn: refused
/// assert_eq!(sizes[1].1, Ok(100_000_000));
/// ```
pub fn named_formats() -> &'static [NamedFormat] {
    NAMED
}

fn build(name: &str) -> Result<Format, Error> {
    let digits_with = |pass: &str| Format::free_form(Alphabet::digits(), pass);
    Ok(match name {
        "digits" => digits_with("")?,
        "card" => digits_with(" -")?.luhn(Luhn::Preserve),
        "card-keep-6-4" => digits_with(" -")?
            .luhn(Luhn::Preserve)
            .keep_prefix(6)
            .keep_suffix(4),
        "card-keep-last-4" => digits_with(" -")?.luhn(Luhn::Preserve).keep_suffix(4),
        "ssn" => Format::template("999-99-9999")?.literals_optional(true),
        "phone" => digits_with("+()-. ")?,
        "alnum" => Format::free_form(Alphabet::alnum(), "")?,
        "auto" => Format::auto(),
        "hex" => Format::free_form(Alphabet::hex(), "")?,
        "uuid" => Format::free_form(Alphabet::hex(), "-")?.fold_case(true),
        _ => return Err(Error::UnknownFormat),
    })
}

impl Format {
    /// A named format (see [`named_formats`] and the crate docs' table).
    pub fn named(name: &str) -> Result<Self, Error> {
        build(name)
    }
}
