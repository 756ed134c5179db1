//! One record of input taken apart and put back together: line endings, CSV fields, decimal
//! integers.
//!
//! Every function here is pure, allocates nothing per call (only `write_*` append to the caller's
//! buffer) and never panics, whatever the bytes: this is the surface a fuzz target calls.
//!
//! The accepted text is deliberately strict, so that nothing is guessed about the data:
//!
//! - a line ends in `\n` or `\r\n` (or in nothing, for the last line of a file); the ending is
//!   kept and written back unchanged, so CRLF files stay CRLF;
//! - an integer is one or more ASCII digits `0`–`9`, leading zeros allowed (outputs are
//!   zero-padded, so they must read back); no sign, no spaces inside, no `_`, no non-ASCII
//!   digits; spaces and tabs around it ([`trim_blanks`]) are not part of it and pass through;
//! - CSV fields are RFC 4180 ([`csv_record_end`], [`csv_fields`], [`csv_field`]): a field
//!   that starts with `"` runs to the matching `"`, may hold delimiters, line breaks and
//!   doubled quotes, and is written back quoted; an integer in a quoted field is what lies
//!   between its quotes ([`csv_value_range`]), and its token goes back between them.

use core::fmt;
use core::ops::Range;

/// Why one record (a line, a CSV row or an argument) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecordError {
    /// The field is empty.
    Empty,
    /// The field starts with `+` or `-`.
    Sign,
    /// A space, tab or other ASCII whitespace byte.
    Whitespace {
        /// 0-based byte offset in the field.
        position: usize,
    },
    /// The value starts with a double quote: a whole line (or argument) in quotes, or a quote
    /// inside a quoted CSV field.
    Quoted,
    /// A non-ASCII byte (a UTF-8 character other than `0`–`9`, or invalid UTF-8).
    NonAscii {
        /// 0-based byte offset in the field.
        position: usize,
    },
    /// An ASCII byte that is not a decimal digit.
    NotDigit {
        /// 0-based byte offset in the field.
        position: usize,
        /// The byte.
        byte: u8,
    },
    /// A well-formed integer that is not below the size of the domain.
    OutOfDomain,
    /// A CSV row with fewer fields than the column asked for.
    MissingColumn {
        /// The column asked for, 1-based as on the command line.
        column: usize,
        /// The fields the row has (0 for an empty line).
        fields: usize,
    },
    /// A line break inside a command-line argument.
    LineBreak,
    /// A quoted CSV field whose closing quote never comes.
    UnclosedQuote,
    /// Text between a quoted CSV field's closing quote and the delimiter.
    TextAfterQuote,
    /// A formatted value that is not UTF-8.
    NotUtf8,
    /// A tweak column's value of 4 GiB or more.
    TweakTooLong,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RecordError::Empty => f.write_str("empty, expected a decimal integer"),
            RecordError::Sign => f.write_str("a sign is not allowed, expected a decimal integer"),
            RecordError::Whitespace { position } => {
                write!(f, "whitespace at byte {} is not a decimal digit", position + 1)
            }
            RecordError::Quoted => {
                f.write_str("a quote is not a decimal digit (quotes are CSV's, read with --column)")
            }
            RecordError::NonAscii { position } => write!(
                f,
                "a non-ASCII character at byte {} is not a decimal digit",
                position + 1
            ),
            RecordError::NotDigit { position, byte } => write!(
                f,
                "'{}' at byte {} is not a decimal digit",
                char::from(byte).escape_default(),
                position + 1
            ),
            RecordError::OutOfDomain => f.write_str("the value is not below the domain size"),
            RecordError::MissingColumn { column, fields } => match fields {
                0 => write!(f, "no column {column}: the line is empty"),
                1 => write!(f, "no column {column}: the line has 1 field"),
                _ => write!(f, "no column {column}: the line has {fields} fields"),
            },
            RecordError::LineBreak => f.write_str("a line break inside an argument"),
            RecordError::UnclosedQuote => {
                f.write_str("a quoted field is never closed (RFC 4180: `\"` ends it)")
            }
            RecordError::TextAfterQuote => f.write_str(
                "text after the closing quote of a quoted field (RFC 4180: write `\"\"` for a quote inside)",
            ),
            RecordError::NotUtf8 => f.write_str("the value is not valid UTF-8"),
            RecordError::TweakTooLong => f.write_str("the tweak is 4 GiB or longer"),
        }
    }
}

impl std::error::Error for RecordError {}

impl RecordError {
    /// The same error with its byte position `by` further on: from a trimmed integer's start
    /// to its field's.
    pub fn shifted(self, by: usize) -> Self {
        match self {
            RecordError::Whitespace { position } => RecordError::Whitespace {
                position: position + by,
            },
            RecordError::NonAscii { position } => RecordError::NonAscii {
                position: position + by,
            },
            RecordError::NotDigit { position, byte } => RecordError::NotDigit {
                position: position + by,
                byte,
            },
            other => other,
        }
    }
}

/// Splits a line as read (with its ending) into its content and its ending: `"\n"`, `"\r\n"`,
/// or `""` for a last line without one.
///
/// ```
/// use riffpe_cli::records::split_line_ending;
/// assert_eq!(split_line_ending(b"12\r\n"), (&b"12"[..], &b"\r\n"[..]));
/// assert_eq!(split_line_ending(b"12\n"), (&b"12"[..], &b"\n"[..]));
/// assert_eq!(split_line_ending(b"12"), (&b"12"[..], &b""[..]));
/// ```
pub fn split_line_ending(line: &[u8]) -> (&[u8], &[u8]) {
    let ending = match line {
        [.., b'\r', b'\n'] => 2,
        [.., b'\n'] => 1,
        _ => 0,
    };
    line.split_at(line.len() - ending)
}

/// The byte range of field `index` (0-based) of `content`, fields separated by `delimiter`.
///
/// Quotes are not interpreted. An error names the column 1-based, as the command line does.
///
/// ```
/// use riffpe_cli::records::{field_range, RecordError};
/// assert_eq!(field_range(b"alice,1234,x", b',', 1), Ok(6..10));
/// assert_eq!(field_range(b"alice,1234", b',', 2),
///            Err(RecordError::MissingColumn { column: 3, fields: 2 }));
/// ```
pub fn field_range(
    content: &[u8],
    delimiter: u8,
    index: usize,
) -> Result<Range<usize>, RecordError> {
    let mut start = 0;
    for _ in 0..index {
        match find_byte(&content[start..], delimiter) {
            Some(offset) => start += offset + 1,
            None => {
                let fields = if content.is_empty() {
                    0
                } else {
                    content.iter().filter(|&&b| b == delimiter).count() + 1
                };
                return Err(RecordError::MissingColumn {
                    column: index.saturating_add(1),
                    fields,
                });
            }
        }
    }
    let end = find_byte(&content[start..], delimiter).map_or(content.len(), |p| start + p);
    Ok(start..end)
}

/// Field `index` (0-based) of a record's content (without its final line ending), RFC 4180:
/// a delimiter inside quotes does not end a field. An error names the column 1-based.
///
/// ```
/// use riffpe_cli::records::{csv_field, CsvField, RecordError};
/// let row = b"\"Smith, J\",4111";
/// assert_eq!(csv_field(row, b',', 1), Ok(CsvField { range: 11..15, quoted: false }));
/// assert_eq!(csv_field(row, b',', 0), Ok(CsvField { range: 0..10, quoted: true }));
/// assert_eq!(csv_field(row, b',', 2),
///            Err(RecordError::MissingColumn { column: 3, fields: 2 }));
/// ```
pub fn csv_field(content: &[u8], delimiter: u8, index: usize) -> Result<CsvField, RecordError> {
    // Without a quote, fields are the bytes between delimiters.
    if find_byte(content, b'"').is_none() {
        let range = field_range(content, delimiter, index)?;
        return Ok(CsvField {
            range,
            quoted: false,
        });
    }
    let (mut state, mut start, mut fields, mut found) = (Scan::Start, 0, 0, None);
    for (i, &byte) in content.iter().enumerate() {
        let (next, ends) = state.step(byte, delimiter);
        if ends {
            if fields == index {
                found = Some(start..i);
            }
            fields += 1;
            start = i + 1;
        }
        state = next;
    }
    if state == Scan::Quoted {
        return Err(RecordError::UnclosedQuote);
    }
    if fields == index {
        found = Some(start..content.len());
    }
    match found {
        Some(range) => Ok(CsvField {
            quoted: content.get(range.start) == Some(&b'"'),
            range,
        }),
        None => Err(RecordError::MissingColumn {
            column: index.saturating_add(1),
            fields: fields + 1,
        }),
    }
}

/// The bytes of field `index` (0-based, RFC 4180 as [`csv_field`]) that hold its value and
/// take the new one: the field, or what lies between its quotes, which stay where they are.
/// A quote inside is left in the value, where no integer parses; text after the closing
/// quote is refused.
///
/// ```
/// use riffpe_cli::records::{csv_value_range, RecordError};
/// assert_eq!(csv_value_range(b"\"a,b\",\"4111\",x", b',', 1), Ok(7..11));
/// assert_eq!(csv_value_range(b"1,\"41\"11", b',', 1), Err(RecordError::TextAfterQuote));
/// ```
pub fn csv_value_range(
    content: &[u8],
    delimiter: u8,
    index: usize,
) -> Result<Range<usize>, RecordError> {
    let CsvField { range, quoted } = csv_field(content, delimiter, index)?;
    if !quoted {
        return Ok(range);
    }
    // A closed quoted field is at least `""`, its last byte a quote unless text follows it.
    match content[range.clone()].last() {
        Some(b'"') if range.len() >= 2 => Ok(range.start + 1..range.end - 1),
        _ => Err(RecordError::TextAfterQuote),
    }
}

/// `range` of `content` without the spaces and tabs at either end: the blanks of a padded
/// column, or after a delimiter, are not part of the integer, and pass through as they are.
///
/// ```
/// use riffpe_cli::records::trim_blanks;
/// assert_eq!(trim_blanks(b"a, 4111 \t,b", 2..9), 3..7);
/// assert_eq!(trim_blanks(b" \t ", 0..3), 3..3);
/// ```
pub fn trim_blanks(content: &[u8], range: Range<usize>) -> Range<usize> {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let field = content.get(range.clone()).unwrap_or_default();
    let start = field.iter().position(|b| !blank(b)).unwrap_or(field.len());
    let end = field
        .iter()
        .rposition(|b| !blank(b))
        .map_or(start, |last| last + 1);
    range.start + start..range.start + end
}

/// Line feeds in `text`.
pub fn count_lines(text: &[u8]) -> u64 {
    text.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Where an RFC 4180 scan is inside a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    /// At the start of a field.
    Start,
    /// Inside a field that did not start with a quote.
    Unquoted,
    /// Inside quotes.
    Quoted,
    /// Right after a quote that closed a quoted part (a second quote reopens it: `""`).
    AfterQuote,
}

impl Scan {
    /// The state after `byte`, and whether `byte` ended the field (a delimiter outside quotes).
    #[inline]
    fn step(self, byte: u8, delimiter: u8) -> (Scan, bool) {
        match (self, byte) {
            (Scan::Quoted, b'"') => (Scan::AfterQuote, false),
            (Scan::Quoted, _) => (Scan::Quoted, false),
            (Scan::AfterQuote, b'"') | (Scan::Start, b'"') => (Scan::Quoted, false),
            (_, b) if b == delimiter => (Scan::Start, true),
            // A quote inside an unquoted field, or text after a closing quote, is kept as is.
            _ => (Scan::Unquoted, false),
        }
    }
}

/// The end (just past its `\n`) of the RFC 4180 record that starts `text`: the first line feed
/// outside quotes. `None` if `text` holds no whole record.
///
/// ```
/// use riffpe_cli::records::csv_record_end;
/// assert_eq!(csv_record_end(b"a,\"x\ny\",b\nnext", b','), Some(10));
/// assert_eq!(csv_record_end(b"a,\"x\ny", b','), None);
/// ```
pub fn csv_record_end(text: &[u8], delimiter: u8) -> Option<usize> {
    // Most records hold no quote: then the first line feed ends one.
    let line_end = find_byte(text, b'\n')?;
    if find_byte(&text[..line_end], b'"').is_none() {
        return Some(line_end + 1);
    }
    let mut state = Scan::Start;
    for (i, &byte) in text.iter().enumerate() {
        if byte == b'\n' && state != Scan::Quoted {
            return Some(i + 1);
        }
        state = state.step(byte, delimiter).0;
    }
    None
}

/// One RFC 4180 field of a record: its bytes (with any quotes) and how it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvField {
    /// The field's bytes in the record, quotes included.
    pub range: Range<usize>,
    /// The field starts with a quote.
    pub quoted: bool,
}

impl CsvField {
    /// The field's value: the bytes themselves, or inside quotes with `""` read as `"`.
    /// Text after the closing quote (`"ab"c`, not RFC 4180) is refused.
    pub fn value<'a>(&self, content: &'a [u8]) -> Result<std::borrow::Cow<'a, [u8]>, RecordError> {
        let raw = &content[self.range.clone()];
        if !self.quoted {
            return Ok(raw.into());
        }
        let inner = &raw[1..];
        if find_byte(inner, b'"') == Some(inner.len().wrapping_sub(1)) {
            return Ok(inner[..inner.len() - 1].into());
        }
        let mut out = Vec::new();
        let mut rest = inner;
        loop {
            match find_byte(rest, b'"') {
                Some(at) if rest.get(at + 1) == Some(&b'"') => {
                    out.extend_from_slice(&rest[..=at]);
                    rest = &rest[at + 2..];
                }
                Some(at) if at + 1 == rest.len() => {
                    out.extend_from_slice(&rest[..at]);
                    return Ok(out.into());
                }
                Some(_) => return Err(RecordError::TextAfterQuote),
                None => return Err(RecordError::UnclosedQuote),
            }
        }
    }
}

/// Splits a record's content (without its final line ending) into RFC 4180 fields, into
/// `fields` (cleared first). A record whose last quote is never closed is refused.
///
/// ```
/// use riffpe_cli::records::{csv_fields, CsvField};
/// let mut fields = Vec::new();
/// let row = b"1,\"a,\"\"b\"\"\",";
/// csv_fields(row, b',', &mut fields).unwrap();
/// assert_eq!(fields.len(), 3);
/// assert_eq!(fields[1], CsvField { range: 2..11, quoted: true });
/// assert_eq!(&*fields[1].value(row).unwrap(), b"a,\"b\"");
/// assert_eq!(fields[2].range, 12..12);
/// ```
pub fn csv_fields(
    content: &[u8],
    delimiter: u8,
    fields: &mut Vec<CsvField>,
) -> Result<(), RecordError> {
    fields.clear();
    let mut state = Scan::Start;
    let mut start = 0;
    for (i, &byte) in content.iter().enumerate() {
        let (next, ends) = state.step(byte, delimiter);
        if ends {
            fields.push(CsvField {
                range: start..i,
                quoted: content.get(start) == Some(&b'"'),
            });
            start = i + 1;
        }
        state = next;
    }
    if state == Scan::Quoted {
        return Err(RecordError::UnclosedQuote);
    }
    fields.push(CsvField {
        range: start..content.len(),
        quoted: content.get(start) == Some(&b'"'),
    });
    Ok(())
}

/// How a field was written in the input, for [`write_csv_field`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quoting {
    /// Quoted: written quoted again.
    Quoted,
    /// Unquoted: quoted only if the new value needs it.
    Plain,
    /// Unquoted with a quote or a carriage return inside (not RFC 4180, read literally): those
    /// may stay bare (a quote past the first byte), so such a field reads back as it was.
    Bare,
}

/// Appends `value` as a CSV field: quoted (with `"` doubled) when the input field was, or when
/// the value holds the delimiter, a line break or a quote (see [`Quoting::Bare`]); as it is
/// otherwise.
pub fn write_csv_field(value: &[u8], delimiter: u8, quoting: Quoting, out: &mut Vec<u8>) {
    let bare = quoting == Quoting::Bare;
    let needs = quoting == Quoting::Quoted
        || value.first() == Some(&b'"')
        || value
            .iter()
            .any(|&b| b == delimiter || b == b'\n' || (!bare && (b == b'"' || b == b'\r')));
    if !needs {
        out.extend_from_slice(value);
        return;
    }
    out.push(b'"');
    for &b in value {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

/// The offset of the first `byte` in `haystack`.
#[inline]
pub fn find_byte(haystack: &[u8], byte: u8) -> Option<usize> {
    haystack.iter().position(|&b| b == byte)
}

/// Checks that `field` is a plain decimal integer: one or more ASCII digits and nothing else.
pub fn check_decimal(field: &[u8]) -> Result<(), RecordError> {
    if field.is_empty() {
        return Err(RecordError::Empty);
    }
    match field.iter().position(|b| !b.is_ascii_digit()) {
        Some(position) => Err(classify(field, position)),
        None => Ok(()),
    }
}

/// Why the byte at `position` (not an ASCII digit) makes `field` no decimal integer.
#[cold]
fn classify(field: &[u8], position: usize) -> RecordError {
    let byte = field[position];
    match byte {
        b'+' | b'-' if position == 0 => RecordError::Sign,
        b'"' if position == 0 => RecordError::Quoted,
        b if b.is_ascii_whitespace() => RecordError::Whitespace { position },
        b if !b.is_ascii() => RecordError::NonAscii { position },
        _ => RecordError::NotDigit { position, byte },
    }
}

/// The machine integers a field parses to on the fast path: `u64` and `u128`.
pub trait Decimal: Copy + Ord + Send + Sync + Default + sealed::Sealed {
    /// Appends `self` in decimal, zero-padded on the left to at least `width` digits.
    fn write_padded(self, width: usize, out: &mut Vec<u8>);
    #[doc(hidden)]
    fn push_digit(self, digit: u8) -> Option<Self>;
}

/// Parses a plain decimal integer (see [`check_decimal`]) that is at most `max`.
///
/// ```
/// use riffpe_cli::records::{parse_decimal, RecordError};
/// assert_eq!(parse_decimal(b"0042", 99u64), Ok(42));
/// assert_eq!(parse_decimal(b"100", 99u64), Err(RecordError::OutOfDomain));
/// assert_eq!(parse_decimal(b"-1", 99u64), Err(RecordError::Sign));
/// ```
#[inline]
pub fn parse_decimal<T: Decimal>(field: &[u8], max: T) -> Result<T, RecordError> {
    if field.is_empty() {
        return Err(RecordError::Empty);
    }
    let mut value = T::default();
    for (position, &byte) in field.iter().enumerate() {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            return Err(classify(field, position));
        }
        value = match value.push_digit(digit) {
            Some(value) => value,
            None => {
                // Too large for the type: say so only if the rest is a well-formed integer.
                check_decimal(field)?;
                return Err(RecordError::OutOfDomain);
            }
        };
    }
    if value > max {
        return Err(RecordError::OutOfDomain);
    }
    Ok(value)
}

/// `"00" "01" … "99"`: two digits per division.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

impl Decimal for u64 {
    #[inline]
    fn write_padded(self, width: usize, out: &mut Vec<u8>) {
        let len = self.checked_ilog10().map_or(1, |l| l as usize + 1);
        let width = width.max(len);
        let start = out.len();
        out.resize(start + width, b'0');
        let digits = &mut out[start..];
        let mut end = digits.len();
        let mut rest = self;
        while rest >= 100 {
            let pair = (rest % 100) as usize * 2;
            rest /= 100;
            digits[end - 2..end].copy_from_slice(&PAIRS[pair..pair + 2]);
            end -= 2;
        }
        if rest >= 10 {
            let pair = rest as usize * 2;
            digits[end - 2..end].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else {
            digits[end - 1] = b'0' + rest as u8;
        }
    }

    #[inline]
    fn push_digit(self, digit: u8) -> Option<Self> {
        self.checked_mul(10)?.checked_add(u64::from(digit))
    }
}

/// `10^19`, the largest power of ten below `2^64`.
const TEN_POW_19: u128 = 10_000_000_000_000_000_000;

impl Decimal for u128 {
    #[inline]
    fn write_padded(self, width: usize, out: &mut Vec<u8>) {
        match u64::try_from(self) {
            Ok(small) => small.write_padded(width, out),
            Err(_) => {
                // Two u128 divisions at most, then the u64 formatter for each piece.
                let (high, low) = (self / TEN_POW_19, (self % TEN_POW_19) as u64);
                high.write_padded(width.saturating_sub(19), out);
                low.write_padded(19, out);
            }
        }
    }

    #[inline]
    fn push_digit(self, digit: u8) -> Option<Self> {
        self.checked_mul(10)?.checked_add(u128::from(digit))
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u64 {}
    impl Sealed for u128 {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn padded<T: Decimal>(value: T, width: usize) -> String {
        let mut out = b"x".to_vec();
        value.write_padded(width, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn line_endings() {
        assert_eq!(split_line_ending(b""), (&b""[..], &b""[..]));
        assert_eq!(split_line_ending(b"\n"), (&b""[..], &b"\n"[..]));
        assert_eq!(split_line_ending(b"\r\n"), (&b""[..], &b"\r\n"[..]));
        assert_eq!(split_line_ending(b"\r"), (&b"\r"[..], &b""[..]));
        assert_eq!(split_line_ending(b"1\r\r\n"), (&b"1\r"[..], &b"\r\n"[..]));
    }

    #[test]
    fn fields() {
        assert_eq!(field_range(b"", b',', 0), Ok(0..0));
        assert_eq!(field_range(b"a,b,c", b',', 0), Ok(0..1));
        assert_eq!(field_range(b"a,b,c", b',', 2), Ok(4..5));
        assert_eq!(field_range(b"a,,c", b',', 1), Ok(2..2));
        assert_eq!(field_range(b"a,b,", b',', 2), Ok(4..4));
        assert_eq!(field_range(b"a\tb", b'\t', 1), Ok(2..3));
        assert_eq!(
            field_range(b"", b',', 1),
            Err(RecordError::MissingColumn {
                column: 2,
                fields: 0
            })
        );
        assert_eq!(
            field_range(b"abc", b',', 1),
            Err(RecordError::MissingColumn {
                column: 2,
                fields: 1
            })
        );
        assert_eq!(
            field_range(b"a,b", b',', usize::MAX),
            Err(RecordError::MissingColumn {
                column: usize::MAX,
                fields: 2
            })
        );
    }

    #[test]
    fn csv_records_end_outside_quotes() {
        let cases: &[(&[u8], Option<usize>)] = &[
            (b"", None),
            (b"a", None),
            (b"\n", Some(1)),
            (b"a,b\r\nc", Some(5)),
            (b"\"a\nb\"\n", Some(6)),
            (b"\"a\"\"\nb\"\n", Some(8)),
            (b"\"a\"\"\n", None),
            (b"x\"y\nz", Some(4)),
            (b"\"a\"b\n", Some(5)),
            (b",\"\n\",\n", Some(6)),
            (b"a\n\"b", Some(2)),
            (b"a\"\nb", Some(3)),
        ];
        for &(text, end) in cases {
            assert_eq!(csv_record_end(text, b','), end, "{text:?}");
        }
        assert_eq!(csv_record_end(b"a;\"b\nc\";d\n", b';'), Some(10));
    }

    fn split(content: &[u8]) -> Result<Vec<(Vec<u8>, bool)>, RecordError> {
        let mut fields = Vec::new();
        csv_fields(content, b',', &mut fields)?;
        fields
            .iter()
            .map(|f| Ok((f.value(content)?.into_owned(), f.quoted)))
            .collect()
    }

    #[test]
    fn csv_fields_and_values() {
        let v = |s: &str, q: bool| (s.as_bytes().to_vec(), q);
        assert_eq!(split(b""), Ok(vec![v("", false)]));
        assert_eq!(split(b","), Ok(vec![v("", false), v("", false)]));
        assert_eq!(split(b"\"\""), Ok(vec![v("", true)]));
        assert_eq!(
            split(b"a,\"b,c\",\"d\"\"e\"\"\""),
            Ok(vec![v("a", false), v("b,c", true), v("d\"e\"", true)])
        );
        assert_eq!(
            split(b"\"x\r\ny\",z"),
            Ok(vec![v("x\r\ny", true), v("z", false)])
        );
        assert_eq!(split(b"a\"b,c"), Ok(vec![v("a\"b", false), v("c", false)]));
        assert_eq!(split(b"\"a\"b,c"), Err(RecordError::TextAfterQuote));
        assert_eq!(split(b"a,\"b"), Err(RecordError::UnclosedQuote));
        assert_eq!(
            split("é,\"ü\"".as_bytes()),
            Ok(vec![v("é", false), v("ü", true)])
        );
    }

    /// 20 000 records of up to 11 bytes of `alphabet`, from an xorshift seeded with `seed`.
    fn random_records(mut x: u64, alphabet: &[u8; 6]) -> impl Iterator<Item = Vec<u8>> + '_ {
        (0..20_000).map(move |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 12) as usize;
            (0..len)
                .map(|i| alphabet[((x >> (4 + 3 * i)) % 6) as usize])
                .collect()
        })
    }

    #[test]
    fn csv_field_is_csv_fields_one_at_a_time() {
        let mut fields = Vec::new();
        for content in random_records(0x9e37_79b9_7f4a_7c15, b"a1,\"\n;") {
            let all = csv_fields(&content, b',', &mut fields);
            for index in 0..fields.len() + 2 {
                let one = csv_field(&content, b',', index);
                let expected = match (&all, fields.get(index)) {
                    (Err(e), _) => Err(*e),
                    (Ok(()), Some(field)) => Ok(field.clone()),
                    (Ok(()), None) => Err(RecordError::MissingColumn {
                        column: index + 1,
                        fields: if content.is_empty() { 0 } else { fields.len() },
                    }),
                };
                assert_eq!(one, expected, "{content:?} field {index}");
                // The value range: inside the quotes, which end the field, if it is quoted.
                let range = csv_value_range(&content, b',', index);
                match one {
                    Ok(CsvField {
                        range: r,
                        quoted: false,
                    }) => assert_eq!(range, Ok(r)),
                    Ok(CsvField {
                        range: r,
                        quoted: true,
                    }) if content[r.end - 1] == b'"' && r.len() > 1 => {
                        assert_eq!(range, Ok(r.start + 1..r.end - 1), "{content:?} {index}");
                    }
                    Ok(_) => assert_eq!(range, Err(RecordError::TextAfterQuote)),
                    Err(e) => assert_eq!(range, Err(e)),
                }
            }
        }
    }

    #[test]
    fn csv_fields_write_back_as_they_were_read() {
        let mut fields = Vec::new();
        for content in random_records(0x2545_f491_4f6c_dd1d, b"ab,\"\r\n") {
            if csv_fields(&content, b',', &mut fields).is_err() {
                continue;
            }
            let mut out = Vec::new();
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let raw = &content[field.range.clone()];
                let bare = raw.contains(&b'"') || raw.contains(&b'\r');
                let quoting = match (field.quoted, bare) {
                    (true, _) => Quoting::Quoted,
                    (false, true) => Quoting::Bare,
                    (false, false) => Quoting::Plain,
                };
                match field.value(&content) {
                    Ok(value) => write_csv_field(&value, b',', quoting, &mut out),
                    Err(_) => out.extend_from_slice(&content[field.range.clone()]),
                }
            }
            // A record holds no bare line feed: it would have ended the record.
            let readable = fields.iter().all(|f| {
                f.value(&content).is_ok()
                    && (f.quoted || !content[f.range.clone()].contains(&b'\n'))
            });
            if readable {
                assert_eq!(out, content, "{:?}", String::from_utf8_lossy(&content));
            }
            let mut again = Vec::new();
            csv_fields(&out, b',', &mut again).unwrap();
            let values = |c: &[u8], f: &[CsvField]| -> Vec<Vec<u8>> {
                f.iter()
                    .map(|f| {
                        f.value(c)
                            .map_or_else(|_| c[f.range.clone()].to_vec(), |v| v.into_owned())
                    })
                    .collect()
            };
            if fields.iter().all(|f| f.value(&content).is_ok()) {
                assert_eq!(values(&out, &again), values(&content, &fields));
            }
        }
    }

    #[test]
    fn csv_writer_quotes_when_it_must() {
        let write = |value: &[u8], quoting: Quoting| {
            let mut out = Vec::new();
            write_csv_field(value, b',', quoting, &mut out);
            out
        };
        use Quoting::{Bare, Plain, Quoted};
        assert_eq!(write(b"abc", Plain), b"abc");
        assert_eq!(write(b"abc", Quoted), b"\"abc\"");
        assert_eq!(write(b"a,b", Plain), b"\"a,b\"");
        assert_eq!(write(b"a\"b", Plain), b"\"a\"\"b\"");
        assert_eq!(write(b"a\"b", Bare), b"a\"b");
        assert_eq!(write(b"\"ab", Bare), b"\"\"\"ab\"");
        assert_eq!(write(b"a\nb", Plain), b"\"a\nb\"");
        assert_eq!(write(b"a\rb", Bare), b"a\rb");
        assert_eq!(write(b"a\nb", Bare), b"\"a\nb\"");
        assert_eq!(write(b"a,b", Bare), b"\"a,b\"");
        assert_eq!(write(b"", Quoted), b"\"\"");
    }

    #[test]
    fn parse_accepts_plain_decimals() {
        assert_eq!(parse_decimal(b"0", 0u64), Ok(0));
        assert_eq!(
            parse_decimal(b"000000000000000000000000000007", 7u64),
            Ok(7)
        );
        assert_eq!(
            parse_decimal(b"18446744073709551615", u64::MAX),
            Ok(u64::MAX)
        );
        assert_eq!(
            parse_decimal(b"340282366920938463463374607431768211455", u128::MAX),
            Ok(u128::MAX)
        );
        assert_eq!(
            parse_decimal(b"9999999999999999", 9_999_999_999_999_999u64),
            Ok(9_999_999_999_999_999)
        );
    }

    #[test]
    fn parse_refuses_with_a_reason() {
        let max = 9_999_999_999_999_999u64;
        let cases: &[(&[u8], RecordError)] = &[
            (b"", RecordError::Empty),
            (b"-1", RecordError::Sign),
            (b"+1", RecordError::Sign),
            (
                b"1-",
                RecordError::NotDigit {
                    position: 1,
                    byte: b'-',
                },
            ),
            (b" 1", RecordError::Whitespace { position: 0 }),
            (b"1 ", RecordError::Whitespace { position: 1 }),
            (b"1\t2", RecordError::Whitespace { position: 1 }),
            (b"12\r", RecordError::Whitespace { position: 2 }),
            (b"\"12\"", RecordError::Quoted),
            ("١٢".as_bytes(), RecordError::NonAscii { position: 0 }),
            (b"1\xff", RecordError::NonAscii { position: 1 }),
            (
                b"1_000",
                RecordError::NotDigit {
                    position: 1,
                    byte: b'_',
                },
            ),
            (
                b"0x10",
                RecordError::NotDigit {
                    position: 1,
                    byte: b'x',
                },
            ),
            (b"10000000000000000", RecordError::OutOfDomain),
            (b"18446744073709551616", RecordError::OutOfDomain),
            (b"99999999999999999999999999", RecordError::OutOfDomain),
            (
                b"99999999999999999999999999x",
                RecordError::NotDigit {
                    position: 26,
                    byte: b'x',
                },
            ),
        ];
        for &(field, expected) in cases {
            assert_eq!(parse_decimal(field, max), Err(expected), "{field:?}");
            if expected != RecordError::OutOfDomain {
                assert_eq!(check_decimal(field), Err(expected), "{field:?}");
            }
        }
        assert_eq!(
            parse_decimal(b"340282366920938463463374607431768211456", u128::MAX),
            Err(RecordError::OutOfDomain)
        );
    }

    #[test]
    fn padded_output() {
        assert_eq!(padded(0u64, 1), "x0");
        assert_eq!(padded(0u64, 0), "x0");
        assert_eq!(padded(7u64, 3), "x007");
        assert_eq!(padded(42u64, 2), "x42");
        assert_eq!(padded(123u64, 2), "x123");
        assert_eq!(padded(5158543106053628u64, 16), "x5158543106053628");
        assert_eq!(padded(1u64, 16), "x0000000000000001");
        assert_eq!(padded(u64::MAX, 20), "x18446744073709551615");
        assert_eq!(padded(u128::MAX, 39), format!("x{}", u128::MAX));
        assert_eq!(padded(u128::MAX, 41), format!("x00{}", u128::MAX));
        assert_eq!(padded(TEN_POW_19, 21), "x010000000000000000000");
        assert_eq!(padded(5u128, 30), format!("x{:030}", 5));
        for v in [
            1u128 << 64,
            (1 << 64) + 1,
            10u128.pow(38),
            12345678901234567890123,
        ] {
            assert_eq!(padded(v, 40), format!("x{v:040}"));
        }
    }

    #[test]
    fn parse_and_format_round_trip() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let value = x >> (x % 64);
            let mut text = Vec::new();
            value.write_padded(20, &mut text);
            assert_eq!(parse_decimal(&text, u64::MAX), Ok(value));
            assert_eq!(text, format!("{value:020}").into_bytes());
            let wide = (u128::from(x) << 64) | u128::from(value);
            text.clear();
            wide.write_padded(39, &mut text);
            assert_eq!(text, format!("{wide:039}").into_bytes());
            assert_eq!(parse_decimal(&text, u128::MAX), Ok(wide));
        }
    }
}
