#![no_std]
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

extern crate alloc;

mod alphabet;
mod cipher;
mod engine;
mod error;
mod format;
mod luhn;
mod named;
mod template;
mod tweak;

pub use alphabet::{Alphabet, MAX_ALPHABET};
pub use cipher::{BulkScratch, FormatCipher};
pub use error::{BulkError, Error, TemplateError};
pub use format::{Format, Mapping, Security};
pub use luhn::Luhn;
pub use named::{NamedFormat, named_formats};
pub use tweak::{TWEAK_MAGIC, TWEAK_VERSION};

/// How the core reads each permutation off its keystream (see [`FormatCipher::with_selection`]).
pub use riffpe::Selection;

/// The longest value, in characters: 4096.
pub const MAX_CHARS: usize = 4096;

/// The fewest values the encrypted positions of a value may take: 1 000 000, the minimum
/// domain of NIST SP 800-38G Rev. 1. [`Format::allow_small_domain`] lifts it.
pub const MIN_DOMAIN: u128 = 1_000_000;
