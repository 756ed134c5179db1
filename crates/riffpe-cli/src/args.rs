//! The command line, parsed by clap; the help text is these doc comments.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use riffpe::Selection;

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
  riffpe encrypt --key-file card.key --format card '4111 1111 1111 1111'
  riffpe encrypt --key-file pii.key --header --column card:card --column ssn:ssn \\
      --input customers.csv --output protected.csv
  riffpe encrypt --key-file id.key --header --column 'id:template=A9{7}' --input users.csv
  riffpe formats
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

impl Cli {
    /// Parses the process's arguments as [`Parser::parse`] does (exiting on a usage error, or
    /// after `--help` or `--version`), with `--version` also naming the AES backend this CPU
    /// runs, as speed depends on it.
    pub fn parse_with_backend() -> Cli {
        let command = Cli::command().long_version(long_version());
        let parsed = Cli::from_arg_matches_mut(&mut command.get_matches());
        parsed.unwrap_or_else(|error| error.exit())
    }
}

/// `--version`'s text after the name: the version, then the AES backend a key would run on.
fn long_version() -> String {
    format!(
        "{}\nAES: {}",
        env!("CARGO_PKG_VERSION"),
        riffpe::AesBackend::detect()
    )
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
    /// List the named formats (--format, --column N:NAME) with their radices and the domain
    /// size for common lengths
    Formats,
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

    /// Strings of a format instead of integers.
    #[command(flatten)]
    pub format: FormatArgs,

    /// Columns of a delimited file.
    #[command(flatten)]
    pub csv: CsvArgs,
}

/// Strings of a format (the `riffpe-format` crate) instead of integers.
#[derive(Debug, Args)]
#[command(next_help_heading = "Formats (strings instead of integers)")]
pub struct FormatArgs {
    /// A named format: card, ssn, phone, alnum, auto, digits, hex, uuid, ... (`riffpe formats`
    /// lists them)
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with_all = ["template", "alphabet", "radices", "big_endian", "bytes_per_value"]
    )]
    pub format: Option<String>,

    /// A template, one item per character: 9 a digit, a / A a lower / upper-case letter, x a
    /// letter or digit, [a-f0-9] a class, {name} a named alphabet, {7} the item before seven
    /// times, \c a literal; any other character is a literal (e.g. 999-99-9999, A9{7})
    #[arg(
        long,
        value_name = "T",
        conflicts_with_all = ["alphabet", "radices", "big_endian", "bytes_per_value"]
    )]
    pub template: Option<String>,

    /// Free form over one alphabet: a name (digits, hex, HEX, lower, upper, alnum,
    /// printable) or its characters in digit order (e.g. ACGT)
    #[arg(
        long,
        value_name = "A",
        conflicts_with_all = ["radices", "big_endian", "bytes_per_value"]
    )]
    pub alphabet: Option<String>,

    /// With --alphabet (or a column's alphabet=A): characters that pass through where they are
    /// (separators)
    #[arg(long, value_name = "CHARS")]
    pub passthrough: Option<String>,

    /// Keep the first N alphabet characters (separators not counted) unencrypted
    #[arg(long, value_name = "N")]
    pub keep_prefix: Option<usize>,

    /// Keep the last N alphabet characters unencrypted
    #[arg(long, value_name = "N")]
    pub keep_suffix: Option<usize>,

    /// Luhn check digit: preserve the residue, make every token fail the check, or leave
    /// Luhn alone [default: the named format's]
    #[arg(long, value_enum, value_name = "MODE")]
    pub luhn: Option<LuhnMode>,

    /// With a template: a value may also lack every literal (123456789 for 999-99-9999), and
    /// its token lacks them too (the ssn format does this already)
    #[arg(long)]
    pub literals_optional: bool,

    /// Accept domains under 10^6 values (NIST SP 800-38G's minimum): small domains can be
    /// tabulated by anyone who sees enough value/token pairs
    #[arg(long)]
    pub allow_small_domain: bool,
}

impl FormatArgs {
    /// Whether any option asks for strings of a format.
    pub fn any(&self) -> bool {
        self.format.is_some() || self.template.is_some() || self.alphabet.is_some()
    }

    /// Whether an option changes a format without choosing one.
    pub fn modifiers(&self) -> bool {
        self.keep_prefix.is_some()
            || self.keep_suffix.is_some()
            || self.luhn.is_some()
            || self.literals_optional
            || self.allow_small_domain
    }
}

/// `--luhn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LuhnMode {
    /// A Luhn-valid number encrypts to a Luhn-valid number, an invalid one to an invalid one
    Preserve,
    /// Only Luhn-valid numbers are encrypted, and tokens always fail the check
    Invalid,
    /// Every digit is encrypted
    Off,
}

/// A column of `--column` or `--tweak-column`: a 1-based number, or a name from the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnRef {
    /// 0-based index.
    Index(usize),
    /// A header name.
    Name(String),
}

impl std::fmt::Display for ColumnRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ColumnRef::Index(i) => write!(f, "{}", i + 1),
            ColumnRef::Name(name) => f.write_str(name),
        }
    }
}

/// A `--column`: which column, and its own format if given (`3:card`, `ssn:ssn`,
/// `id:template=A9{7}`, `dna:alphabet=ACGT`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnSpec {
    /// The column.
    pub column: ColumnRef,
    /// The format after `:`.
    pub format: Option<ColumnFormat>,
}

/// The format a `--column` gives its column, as `--format`, `--template` or `--alphabet` would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnFormat {
    /// `N:NAME`.
    Named(String),
    /// `N:template=T`.
    Template(String),
    /// `N:alphabet=A`.
    Alphabet(String),
}

impl std::fmt::Display for ColumnFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ColumnFormat::Named(name) => f.write_str(name),
            ColumnFormat::Template(template) => write!(f, "template={template}"),
            ColumnFormat::Alphabet(alphabet) => write!(f, "alphabet={alphabet}"),
        }
    }
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

    /// How each permutation is read off the keystream (the same output either way). Default:
    /// constant-time up to radix 256 (alphabets up to 256 characters), fast above; see the
    /// security notes for the cost of each
    #[arg(long, value_enum, value_name = "HOW")]
    pub selection: Option<SelectionArg>,

    /// Short for --selection constant-time
    #[arg(long, conflicts_with = "selection")]
    pub constant_time: bool,
}

/// `--selection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SelectionArg {
    /// Branches and memory accesses that do not depend on the values or the key
    ConstantTime,
    /// Buckets of keys: faster, with timing and cache traces that depend on secret values
    Fast,
}

impl SchemeArgs {
    /// The core's selection as --selection or --constant-time ask, if they do (else the core
    /// picks by radix).
    pub fn selection(&self) -> Option<Selection> {
        match (self.selection, self.constant_time) {
            (Some(SelectionArg::ConstantTime), _) | (None, true) => Some(Selection::ConstantTime),
            (Some(SelectionArg::Fast), _) => Some(Selection::Fast),
            (None, false) => None,
        }
    }
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

/// Columns of a delimited file.
#[derive(Debug, Args)]
#[command(next_help_heading = "CSV")]
pub struct CsvArgs {
    /// Process column N (1-based) of each row, or the column named NAME in the header
    /// (with --header; spaces around a name there need not be given); N:FORMAT or NAME:FORMAT gives it its own format: a name (3:card), a
    /// template (id:template=A9{7}) or an alphabet (dna:alphabet=ACGT). Repeat for several
    /// columns (integers: one). Fields are RFC 4180 (quotes may hold delimiters and line
    /// breaks); every other byte passes through unchanged
    #[arg(short = 'c', long, value_name = "N[:FORMAT]", value_parser = parse_column)]
    pub column: Vec<ColumnSpec>,

    /// The tweak of each row comes from this column, encoded as the README says: a number or
    /// a header name
    #[arg(long, value_name = "N|NAME", value_parser = parse_column_ref, requires = "column")]
    pub tweak_column: Option<ColumnRef>,

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

/// A column number (1-based) or a header name.
fn parse_column_ref(text: &str) -> Result<ColumnRef, String> {
    if text.is_empty() {
        return Err("a column is a number from 1 or a header name".into());
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return match text.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(ColumnRef::Index(n - 1)),
            _ => Err(format!("column {text} is not a number from 1")),
        };
    }
    Ok(ColumnRef::Name(text.to_string()))
}

/// `N`, `NAME`, `N:FORMAT` or `NAME:FORMAT`: split before the first `:template=` or
/// `:alphabet=` (a template or an alphabet may hold `:` itself), else at the last `:` (a header
/// name may).
fn parse_column(text: &str) -> Result<ColumnSpec, String> {
    let marked = [":template=", ":alphabet="]
        .into_iter()
        .filter_map(|marker| Some((text.find(marker)?, marker)))
        .min();
    let (column, marker, spec) = match (marked, text.rsplit_once(':')) {
        (Some((at, marker)), _) => (&text[..at], marker, &text[at + marker.len()..]),
        (None, Some((column, name))) => (column, ":", name),
        (None, None) => {
            return Ok(ColumnSpec {
                column: parse_column_ref(text)?,
                format: None,
            });
        }
    };
    if spec.is_empty() {
        return Err(format!("{text:?}: no format after `{marker}`"));
    }
    let spec = spec.to_string();
    let format = match marker {
        ":template=" => ColumnFormat::Template(spec),
        ":alphabet=" => ColumnFormat::Alphabet(spec),
        _ => ColumnFormat::Named(spec),
    };
    Ok(ColumnSpec {
        column: parse_column_ref(column)?,
        format: Some(format),
    })
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
            [b'"'] => Err("a double quote cannot be a delimiter: it quotes CSV fields".into()),
            // Encrypted fields are digits and letters: such a delimiter would split them on output.
            [byte] if byte.is_ascii_alphanumeric() => Err(format!(
                "{text:?} is a letter or digit, and encrypted fields are made of those"
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
        assert!(parse_delimiter("\"").is_err());
        assert!(parse_delimiter("é").is_err());
    }

    #[test]
    fn columns_and_their_formats() {
        use ColumnFormat::{Alphabet, Named, Template};
        let name = |n: &str| ColumnRef::Name(n.to_string());
        let cases = [
            ("3", ColumnRef::Index(2), None),
            ("3:card", ColumnRef::Index(2), Some(Named("card".into()))),
            // A header name may hold `:`; a format name may not.
            ("a:b:ssn", name("a:b"), Some(Named("ssn".into()))),
            // A template or an alphabet may hold `:` and `=`.
            (
                "mac:template=xx:xx:x=x",
                name("mac"),
                Some(Template("xx:xx:x=x".into())),
            ),
            (
                "2:alphabet=AC:template=GT",
                ColumnRef::Index(1),
                Some(Alphabet("AC:template=GT".into())),
            ),
        ];
        for (text, column, format) in cases {
            assert_eq!(
                parse_column(text),
                Ok(ColumnSpec { column, format }),
                "{text}"
            );
        }
        assert_eq!(
            parse_column("id:template=A9{7}").map(|c| c.format.unwrap().to_string()),
            Ok("template=A9{7}".to_string())
        );
        assert!(parse_column("3:").is_err());
        assert!(parse_column("3:template=").is_err());
        assert!(parse_column("0:card").is_err());
        assert!(parse_column(":alphabet=ACGT").is_err());
    }
}
