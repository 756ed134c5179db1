#![no_std]
#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;

mod aes_backend;
#[cfg(feature = "alloc")]
mod bases;
mod domain;
mod engine;
mod error;
mod fpe;
pub mod integer;
mod scratch;
mod select;
mod tweak;

pub use aes_backend::{Aes, AesBackend};
#[cfg(feature = "alloc")]
pub use bases::find_best_bases;
pub use domain::{AnyDomain, Domain, Mixed, Radices, Uniform};
pub use error::{Error, MessageError, SetupError};
pub use fpe::{AnyFpe, Builder, DEFAULT_BYTES_PER_VALUE, Fpe, Riffpe, RiffpeX};
#[cfg(feature = "alloc")]
pub use scratch::ScratchBuf;
pub use scratch::{Scratch, ScratchSize};
pub use select::Selection;
pub use tweak::Tweak;

/// The most scratch (keystream plus selection keys) one digit step may need: 1 GiB.
///
/// Parameters above it (radix 4 000 000 000 with 48 bytes per value would need 192 GB) are
/// refused at construction with [`SetupError::ScratchTooLarge`], before anything is allocated.
pub const MAX_SCRATCH_BYTES: u64 = 1 << 30;
