//! The `riffpe` command as a library: what the binary does, in modules a test or a fuzz target
//! can call.
//!
//! Data flows one way (integers): [`args`] (the command line) → [`key`] and [`engine`] (the
//! cipher) → [`bulk`] (blocks of lines, columns found by [`columns`], parsed and formatted by
//! [`records`] and [`number`], encrypted by the `riffpe-batch` crate) → [`output`] (stdout, or a
//! file replaced only on success). [`commands`] ties them together for each subcommand.
//!
//! # Examples
//!
//! ```text
//! riffpe keygen --output card.key
//! riffpe encrypt --key-file card.key 1234123456785678
//! riffpe encrypt --key-file card.key --input cards.txt --output tokens.txt
//! riffpe decrypt --key-file card.key --input tokens.txt
//! riffpe encrypt --key-file card.key --column 3 --header --input accounts.csv
//! riffpe encrypt --key-file id.key --radices 26,10,10,10,10,10,10,10 12345678
//! riffpe encrypt --key-file card.key --format card '4111 1111 1111 1111'
//! riffpe encrypt --key-file pii.key --header --column card:card --column ssn:ssn --input customers.csv
//! riffpe encrypt --key-file id.key --header --column 'id:template=A9{7}' --input users.csv
//! riffpe formats
//! riffpe bases 260000000 --threshold 20
//! ```
//!
//! Strings of a format (`--format`, `--template`, `--alphabet`, `--column N:FORMAT`) go through
//! [`formatted`] instead: RFC 4180 CSV, several columns, a tweak per row.
//!
//! # Behaviour
//!
//! - Integers are strict decimal text (see [`records`]): ASCII digits only, leading zeros
//!   allowed, nothing trimmed. A line ends in `\n` or `\r\n`, and its ending is written back as
//!   it was; so is a missing newline at the end of the file.
//! - Outputs are zero-padded to the number of decimal digits of `N − 1`, `N` the domain size
//!   (SPEC: "Integers as messages"). Domains of any size work: `u64`, `u128` or big integers.
//! - The first bad record stops the run: `error: FILE:LINE: reason`, exit status 1. With
//!   `--output` nothing is written (the output is put in place only on success, see [`output`],
//!   and SIGINT, SIGTERM or SIGHUP leave the directory as it was); on stdout, blocks of up to
//!   65 536 lines before the bad one have already been written. Integer arguments are all
//!   checked before any is printed.
//! - A closed output pipe (`riffpe … | head -1`) ends the run quietly with exit status 0.
//! - Usage errors are clap's (exit status 2); every other error is one line, exit status 1.
//!
//! # Security notes
//!
//! - The key comes from `--key-file`, `-k` or `RIFFPE_KEY`, in that order. `-k` always prints a
//!   warning to stderr (even with `--quiet`, which only silences the progress bar): the command
//!   line is visible to every user of the machine.
//! - Key hex is decoded in constant time ([`key`]), key bytes are held in zeroized buffers,
//!   and no message ever echoes a key character.
//! - `keygen --output` and new `--output` files are created with mode 0600.
//!
//! # Performance
//!
//! Lines are processed in blocks of up to 65 536 ([`bulk::MAX_BLOCK_LINES`]): parsing and
//! formatting run in parallel over the block, then the batch crate encrypts the whole block in
//! its parallel mode. Memory stays around 10 MiB whatever the input size. On Riffpe(100, 8) the
//! command's own work (reading, parsing, formatting, writing) is about 1 % of the time; the rest
//! is the cipher.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod args;
pub mod bulk;
pub mod columns;
pub mod commands;
pub mod engine;
pub mod formatted;
pub mod key;
pub mod number;
pub mod output;
pub mod progress;
pub mod records;
