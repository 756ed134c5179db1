//! Where the AES key comes from (`--key-file`, `RIFFPE_KEY`, `-k`), hex in and out in constant
//! time, zeroized.
//!
//! Key bytes live in [`Zeroizing`] buffers from the moment they are read, and no error message
//! ever contains a byte or a character of the key: only lengths and positions.

use std::fmt;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::Path;

use anyhow::{Context, Result, bail};
use zeroize::Zeroizing;

/// The environment variable holding a hex key.
pub const KEY_ENV: &str = "RIFFPE_KEY";

/// Printed on stderr when the key is given with `-k`, which every user of the machine can read
/// in the process list (and which lands in shell history).
pub const ARGV_KEY_WARNING: &str = "warning: a key given with -k/--key is visible to other users \
     of this machine (process list, shell history); prefer --key-file PATH or the RIFFPE_KEY \
     environment variable";

/// A key file larger than this is certainly not a hex key (64 hex digits and a newline).
const MAX_KEY_FILE: usize = 4096;

/// Where the key was found, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySource<'a> {
    /// `--key-file PATH`.
    File(&'a Path),
    /// The `RIFFPE_KEY` environment variable.
    Env,
    /// `-k/--key HEX` on the command line.
    Argument,
}

impl fmt::Display for KeySource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::File(path) => write!(f, "key file {}", path.display()),
            KeySource::Env => write!(f, "{KEY_ENV}"),
            KeySource::Argument => f.write_str("-k/--key"),
        }
    }
}

/// Why a hex string was refused. Never carries the offending character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HexError {
    /// Nothing but whitespace.
    Empty,
    /// An odd number of hex digits.
    OddLength {
        /// The number of characters.
        digits: usize,
    },
    /// A character that is not `0`–`9`, `a`–`f` or `A`–`F`.
    NotHex {
        /// 1-based position of the character, after leading whitespace.
        position: usize,
    },
}

impl fmt::Display for HexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HexError::Empty => f.write_str("empty, expected hex digits"),
            HexError::OddLength { digits } => {
                write!(f, "an odd number of hex digits ({digits})")
            }
            HexError::NotHex { position } => {
                write!(f, "character {position} is not a hex digit")
            }
        }
    }
}

impl std::error::Error for HexError {}

/// Decodes hex (either case), ignoring leading and trailing ASCII whitespace such as the newline
/// at the end of a key file. The digits are decoded in constant time.
///
/// ```
/// use riffpe_cli::key::{decode_hex, HexError};
/// assert_eq!(&decode_hex(" 00ff\n").unwrap()[..], &[0x00, 0xff]);
/// assert_eq!(decode_hex("0g"), Err(HexError::NotHex { position: 2 }));
/// ```
pub fn decode_hex(text: &str) -> Result<Zeroizing<Vec<u8>>, HexError> {
    let text = text
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .as_bytes();
    if text.is_empty() {
        return Err(HexError::Empty);
    }
    let mut bytes = Zeroizing::new(vec![0u8; text.len() / 2]);
    if text.len() % 2 == 0 && base16ct::mixed::decode(text, &mut bytes[..]).is_ok() {
        return Ok(bytes);
    }
    Err(refused(text))
}

/// Why `text` is not hex. Its branches on characters run only on refused text, never on a key
/// that goes on to be used.
#[cold]
fn refused(text: &[u8]) -> HexError {
    match text.iter().position(|c| !c.is_ascii_hexdigit()) {
        Some(position) => {
            // Count characters, not bytes, so a multi-byte character is reported where a
            // person would see it.
            let position = String::from_utf8_lossy(&text[..position]).chars().count() + 1;
            HexError::NotHex { position }
        }
        // Only non-hex characters and odd lengths are refused; here every byte is a digit.
        None => HexError::OddLength { digits: text.len() },
    }
}

/// Lower-case hex of `bytes` (encoded in constant time), in a buffer zeroized on drop.
pub fn encode_hex(bytes: &[u8]) -> Zeroizing<String> {
    let mut hex = Zeroizing::new(vec![0u8; bytes.len() * 2]);
    // Reserved whole up front, so no reallocation leaves a copy behind.
    let mut text = Zeroizing::new(String::with_capacity(hex.len()));
    if let Ok(encoded) = base16ct::lower::encode(bytes, &mut hex[..]) {
        text.extend(encoded.iter().map(|&digit| char::from(digit)));
    }
    text
}

/// Decodes a hex key and checks it is an AES key (16, 24 or 32 bytes).
pub fn parse_key(text: &str, source: KeySource<'_>) -> Result<Zeroizing<Vec<u8>>> {
    let key = decode_hex(text).with_context(|| format!("{source}"))?;
    if !matches!(key.len(), 16 | 24 | 32) {
        bail!(
            "{source}: a {}-byte key is not an AES key (16, 24 or 32 bytes: 32, 48 or 64 hex digits)",
            key.len()
        );
    }
    Ok(key)
}

/// Reads a hex key from a file.
pub fn read_key_file(path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    let source = KeySource::File(path);
    let mut file = File::open(path).with_context(|| format!("cannot open {source}"))?;
    // A fixed buffer: a growing one would leave unzeroized copies of the key behind.
    let mut buffer = Zeroizing::new([0u8; MAX_KEY_FILE + 1]);
    let mut len = 0;
    while len < buffer.len() {
        match file.read(&mut buffer[len..]) {
            Ok(0) => break,
            Ok(read) => len += read,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {source}")),
        }
    }
    if len > MAX_KEY_FILE {
        bail!("{source}: larger than {MAX_KEY_FILE} bytes, not a hex key");
    }
    // A byte order mark, as Notepad writes in "UTF-8 with BOM", is not part of the key.
    let text = buffer[..len]
        .strip_prefix("\u{feff}".as_bytes())
        .unwrap_or(&buffer[..len]);
    // Invalid UTF-8 is reported by `decode_hex` as a non-hex character, without echoing it.
    let text = Zeroizing::new(String::from_utf8_lossy(text).into_owned());
    parse_key(&text, source)
}

/// The key from the first source given: `--key-file`, then `-k`, then `RIFFPE_KEY` (`env` is its
/// value, if set). Prints [`ARGV_KEY_WARNING`] to stderr when the key comes from `-k`.
pub fn load(
    key_file: Option<&Path>,
    key_argument: Option<&str>,
    env: Option<Zeroizing<String>>,
) -> Result<Zeroizing<Vec<u8>>> {
    if let Some(path) = key_file {
        return read_key_file(path);
    }
    if let Some(text) = key_argument {
        eprintln!("{ARGV_KEY_WARNING}");
        return parse_key(text, KeySource::Argument);
    }
    if let Some(text) = env {
        return parse_key(&text, KeySource::Env);
    }
    bail!(
        "no key: give --key-file PATH, set {KEY_ENV} to a hex key, or use -k HEX \
         (`riffpe keygen --output PATH` makes a key file)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let bytes: Vec<u8> = (0..=255).collect();
        let text = encode_hex(&bytes);
        assert_eq!(&decode_hex(&text).unwrap()[..], &bytes[..]);
        assert_eq!(&decode_hex(&text.to_uppercase()).unwrap()[..], &bytes[..]);
    }

    #[test]
    fn hex_errors_name_positions_not_characters() {
        assert_eq!(decode_hex(""), Err(HexError::Empty));
        assert_eq!(decode_hex(" \n"), Err(HexError::Empty));
        assert_eq!(decode_hex("abc"), Err(HexError::OddLength { digits: 3 }));
        assert_eq!(decode_hex("abz"), Err(HexError::NotHex { position: 3 }));
        assert_eq!(decode_hex("00 11"), Err(HexError::NotHex { position: 3 }));
        assert_eq!(decode_hex("0x00"), Err(HexError::NotHex { position: 2 }));
        assert_eq!(decode_hex("éé00"), Err(HexError::NotHex { position: 1 }));
        assert_eq!(decode_hex("00é0"), Err(HexError::NotHex { position: 3 }));
        let message = decode_hex("00112233445566778899aabbccddeeXf")
            .unwrap_err()
            .to_string();
        assert_eq!(message, "character 31 is not a hex digit");
    }

    #[test]
    fn key_lengths() {
        for len in [16, 24, 32] {
            let text = "ab".repeat(len);
            assert_eq!(parse_key(&text, KeySource::Env).unwrap().len(), len);
        }
        for len in [1, 15, 17, 31, 33, 64] {
            let text = "ab".repeat(len);
            let message = format!("{:#}", parse_key(&text, KeySource::Env).unwrap_err());
            assert!(message.contains(&format!("a {len}-byte key")), "{message}");
            assert!(!message.contains("abab"), "{message}");
        }
    }

    #[test]
    fn key_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        std::fs::write(&path, format!("{}\r\n", "aB".repeat(16))).unwrap();
        assert_eq!(&read_key_file(&path).unwrap()[..], &[0xab; 16]);
        std::fs::write(&path, format!("\u{feff}{}\r\n", "cd".repeat(24))).unwrap();
        assert_eq!(&read_key_file(&path).unwrap()[..], &[0xcd; 24]);
        // Only at the start.
        std::fs::write(&path, format!("{}\u{feff}", "cd".repeat(16))).unwrap();
        let message = format!("{:#}", read_key_file(&path).unwrap_err());
        assert!(
            message.ends_with("character 33 is not a hex digit"),
            "{message}"
        );
        std::fs::write(&path, " ".repeat(MAX_KEY_FILE) + &"ab".repeat(16)).unwrap();
        let message = format!("{:#}", read_key_file(&path).unwrap_err());
        assert!(
            message.ends_with("larger than 4096 bytes, not a hex key"),
            "{message}"
        );
        assert!(!message.contains("abab"), "{message}");
    }

    #[test]
    fn sources_in_order() {
        let env = || Some(Zeroizing::new("11".repeat(16)));
        assert_eq!(
            &load(None, Some(&"22".repeat(16)), env()).unwrap()[..],
            &[0x22; 16]
        );
        assert_eq!(&load(None, None, env()).unwrap()[..], &[0x11; 16]);
        let message = load(None, None, None).unwrap_err().to_string();
        assert!(message.starts_with("no key"), "{message}");
    }
}
