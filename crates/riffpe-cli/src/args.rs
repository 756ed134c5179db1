//! The command line, parsed by clap; the help text is these doc comments.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

const AFTER_HELP: &str = "\
The key comes from --key-file PATH, or else -k HEX, or else the RIFFPE_KEY environment
variable (hex). `riffpe keygen --output PATH` makes a key file.

Examples:
  riffpe keygen --output card.key
  riffpe encrypt --key-file card.key 1234123456785678
  riffpe encrypt --key-file card.key --input cards.txt --output tokens.txt
  riffpe decrypt --key-file card.key --input tokens.txt
  riffpe encrypt --key-file card.key --column 3 --header --input accounts.csv
  riffpe encrypt --key-file id.key --radices 26,10,10,10,10,10,10,10 12345678
  riffpe bases 260000000 --threshold 20";

/// Riffpe format-preserving encryption: integers in, integers of the same domain out.
///
/// A 16-digit number encrypts to a 16-digit number (Riffpe with radix 100 and 8 digits, the
/// default); RiffpeX (--radices) covers mixed domains. Bit for bit with the reference C++ and
/// Python implementations.
#[derive(Debug, Parser)]
#[command(name = "riffpe", version, after_help = AFTER_HELP)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Encrypt integers: the arguments, or one per line of --input (or stdin)
    #[command(after_help = AFTER_HELP)]
    Encrypt(CryptArgs),
    /// Decrypt integers: the arguments, or one per line of --input (or stdin)
    #[command(after_help = AFTER_HELP)]
    Decrypt(CryptArgs),
    /// Generate a random AES key as hex, on stdout or in a new file of mode 0600
    Keygen(KeygenArgs),
    /// Split a domain size into RiffpeX radices, printed as --radices takes them (the
    /// reference's find_best_bases)
    Bases(BasesArgs),
}

/// `encrypt` and `decrypt`.
#[derive(Debug, Args)]
pub struct CryptArgs {
    /// Integers to process, printed one per line, zero-padded to the width of the largest value.
    /// Without any, lines are read from --input or stdin
    #[arg(value_name = "INTEGER", allow_negative_numbers = true)]
    pub values: Vec<String>,

    /// Where the key comes from.
    #[command(flatten)]
    pub key: KeyArgs,

    /// The cipher's parameters.
    #[command(flatten)]
    pub scheme: SchemeArgs,

    /// Files, threads, progress.
    #[command(flatten)]
    pub io: IoArgs,

    /// One column of a delimited file.
    #[command(flatten)]
    pub csv: CsvArgs,
}

/// Where the key comes from.
#[derive(Debug, Args)]
#[command(next_help_heading = "Key (or set RIFFPE_KEY to a hex key)")]
pub struct KeyArgs {
    /// File holding the AES key in hex: 32, 48 or 64 hex digits (AES-128, -192, -256)
    #[arg(long, value_name = "PATH", conflicts_with = "key")]
    pub key_file: Option<PathBuf>,

    /// AES key in hex. Other users can see it in the process list: prefer --key-file or
    /// RIFFPE_KEY
    #[arg(short = 'k', long, value_name = "HEX")]
    pub key: Option<String>,
}

/// The cipher's parameters.
#[derive(Debug, Args)]
#[command(next_help_heading = "Scheme")]
pub struct SchemeArgs {
    /// Radix n of every digit (Riffpe)
    #[arg(
        short = 'n',
        long,
        visible_alias = "base",
        value_name = "N",
        default_value_t = 100
    )]
    pub radix: u32,

    /// Number of digits l: integers are in [0, n^l)
    #[arg(
        short = 'l',
        long,
        visible_alias = "length",
        value_name = "L",
        default_value_t = 8
    )]
    pub digits: usize,

    /// One radix per digit, digit 0 first (RiffpeX), instead of -n and -l
    #[arg(
        long,
        value_name = "R0,R1,...",
        value_delimiter = ',',
        num_args = 1,
        conflicts_with_all = ["radix", "digits"]
    )]
    pub radices: Option<Vec<u32>>,

    /// Tweak in hex
    #[arg(
        short = 't',
        long,
        visible_alias = "tag",
        value_name = "HEX",
        conflicts_with = "tweak_text"
    )]
    pub tweak: Option<String>,

    /// Tweak as UTF-8 text
    #[arg(long, value_name = "TEXT")]
    pub tweak_text: Option<String>,

    /// Keystream bytes per value (the reference's 128-bit settings: 18 for radix 10 and 100, 19
    /// for 1000, 20 for 10000)
    #[arg(short = 'b', long, value_name = "B", default_value_t = 16)]
    pub bytes_per_value: usize,

    /// Big-endian digits: the last digit is the least significant (default: the first)
    #[arg(short = 'B', long)]
    pub big_endian: bool,
}

/// Files, threads, progress.
#[derive(Debug, Args)]
#[command(next_help_heading = "Input and output")]
pub struct IoArgs {
    /// Read one integer per line from FILE ("-": stdin, the default without INTEGER arguments)
    #[arg(short = 'i', long, value_name = "FILE", conflicts_with = "values")]
    pub input: Option<PathBuf>,

    /// Write to FILE instead of stdout. FILE appears, or is replaced, only when the whole run
    /// succeeded (an interrupted run leaves the directory as it was); a new file gets mode 0600
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Worker threads [default: all cores]
    #[arg(long, value_name = "N")]
    pub threads: Option<NonZeroUsize>,

    /// No progress bar (shown on stderr for inputs over 8 MiB when it is a terminal)
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

/// One column of a delimited file.
#[derive(Debug, Args)]
#[command(next_help_heading = "CSV (quote-free fields)")]
pub struct CsvArgs {
    /// Process field N (1-based) of each line; every other byte passes through unchanged
    #[arg(short = 'c', long, value_name = "N")]
    pub column: Option<NonZeroUsize>,

    /// Field delimiter for --column: one ASCII character, or "tab"
    #[arg(
        short = 'd',
        long,
        value_name = "C",
        default_value = ",",
        value_parser = parse_delimiter,
        requires = "column"
    )]
    pub delimiter: u8,

    /// The first line is a header: copied unchanged
    #[arg(long, conflicts_with = "values")]
    pub header: bool,
}

/// `keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Key size in bits
    #[arg(long, value_enum, default_value_t = KeyBits::Aes128)]
    pub bits: KeyBits,

    /// Write the key to FILE, created with mode 0600; an existing file is never overwritten
    /// [default: stdout]
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// AES key sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeyBits {
    /// AES-128: the scheme's 128-bit security target, and the fastest
    #[value(name = "128")]
    Aes128,
    /// AES-192
    #[value(name = "192")]
    Aes192,
    /// AES-256
    #[value(name = "256")]
    Aes256,
}

impl KeyBits {
    /// Key length in bytes.
    pub fn bytes(self) -> usize {
        match self {
            KeyBits::Aes128 => 16,
            KeyBits::Aes192 => 24,
            KeyBits::Aes256 => 32,
        }
    }
}

/// `bases`.
#[derive(Debug, Args)]
pub struct BasesArgs {
    /// Domain size: the number of values to cover exactly
    #[arg(value_name = "N")]
    pub size: u64,

    /// Smallest radix allowed
    #[arg(short = 'T', long, value_name = "T")]
    pub threshold: u64,
}

/// A delimiter: one ASCII character other than a line break, or `tab` / `\t`.
fn parse_delimiter(text: &str) -> Result<u8, String> {
    match text {
        "tab" | "\\t" | "\t" => Ok(b'\t'),
        _ => match text.as_bytes() {
            [b'\n' | b'\r'] => Err("a line break cannot be a delimiter".into()),
            // Encrypted fields are digits: a digit delimiter would split them on output.
            [byte] if byte.is_ascii_digit() => Err(format!(
                "{text:?} is a digit, and encrypted fields are made of digits"
            )),
            &[byte] if byte.is_ascii() => Ok(byte),
            _ => Err(format!(
                "{text:?} is not one ASCII character (write a tab as \"tab\")"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn delimiters() {
        assert_eq!(parse_delimiter(","), Ok(b','));
        assert_eq!(parse_delimiter(";"), Ok(b';'));
        assert_eq!(parse_delimiter("tab"), Ok(b'\t'));
        assert_eq!(parse_delimiter("\\t"), Ok(b'\t'));
        assert!(parse_delimiter("").is_err());
        assert!(parse_delimiter(",,").is_err());
        assert!(parse_delimiter("\n").is_err());
        assert!(parse_delimiter("é").is_err());
    }
}
