//! The `cli_records` target's case and check: the command's record parsing (line endings, CSV
//! fields, decimal integers), its integer codecs and its whole streaming pipeline, on any text.

use std::fmt::Write as _;
use std::io::{self, Read};
use std::sync::OnceLock;

use arbitrary::{Arbitrary, Unstructured};
use clap::Parser;

use riffpe::integer::{DigitOrder, from_digits, to_digits};
use riffpe::{AnyFpe, Domain, MessageError, Selection, Tweak};
use riffpe_batch::{Batch, Mode};
use riffpe_cli::args::{Cli, ColumnRef};
use riffpe_cli::bulk::{self, IntegerColumns, Layout, LineReader, Pipeline, Source};
use riffpe_cli::engine::Transform;
use riffpe_cli::number::{BigCodec, Codec, IntCodec, Numbers};
use riffpe_cli::progress::Progress;
use riffpe_cli::records::{self, Decimal, RecordError};

use crate::case::{self, FUZZ_BUDGET, MAX_MESSAGE_DIGITS, Outcome, Params, fnv1a, next, to_hex};
use crate::check::ensure;

/// The key of every decoded case.
const KEY: [u8; 16] = *b"riffpe cli fuzz!";

/// Fields checked one by one at most per line (every field of a line is O(line²)).
const MAX_FIELDS_CHECKED: usize = 64;

/// One decoded `cli_records` case: a domain, how the integer sits in each line, and the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CliCase {
    /// The cipher's domain (Riffpe or RiffpeX); it may be invalid, then only parsing is checked.
    pub params: Params,
    /// A 16-byte AES key (always the same when decoded).
    pub key: Vec<u8>,
    /// Keystream bytes per value.
    pub bytes_per_value: usize,
    /// Which digit is the least significant.
    pub order: DigitOrder,
    /// Whole lines or one CSV field.
    pub layout: Layout,
    /// Whether the first line is a header.
    pub header: bool,
    /// How the batch crate runs.
    pub mode: Mode,
    /// Lines per block of the pipeline.
    pub block_lines: usize,
    /// Where the reader splits the text between reads.
    pub splits: [usize; 2],
    /// The bound given to `parse_decimal`, besides the domain's.
    pub max: u128,
    /// The width given to `write_padded`.
    pub width: usize,
    /// The input text.
    pub text: Vec<u8>,
}

impl<'a> Arbitrary<'a> for CliCase {
    /// Flags, domain, layout, block size, `bytes_per_value`, splits, bound and width, then the
    /// text (raw, or mapped to mostly digits and line breaks by a flag).
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<CliCase> {
        let flags = next::<u8>(u)?;
        let params = if flags & 1 == 0 {
            let radix = case::radix(u)?;
            let digits = case::digits(u)?.min(MAX_MESSAGE_DIGITS);
            Params::Riffpe { radix, digits }
        } else {
            let mut radices = Vec::new();
            for _ in 0..1 + (next::<u8>(u)? & 3) {
                let radix = case::radix(u)?;
                let count = 1 + usize::from(next::<u8>(u)? & 7);
                radices.resize(radices.len() + count, radix);
            }
            Params::RiffpeX { radices }
        };
        let order = if flags & 2 == 0 {
            DigitOrder::LittleEndian
        } else {
            DigitOrder::BigEndian
        };
        let layout = match next::<u8>(u)? {
            s @ 0..64 => Layout::Csv {
                index: usize::from(s & 3),
                delimiter: next::<u8>(u)?,
            },
            // Common ones, and ones that can collide with a field: a space, a quote, digits.
            s @ 64..128 => Layout::Csv {
                index: usize::from(s & 3),
                delimiter: [b',', b';', b'\t', b'|', b' ', b'"', b'0', b'7']
                    [usize::from(s >> 2 & 7)],
            },
            _ => Layout::Lines,
        };
        let mode = [Mode::Lockstep, Mode::Parallel][usize::from(flags >> 3 & 1)];
        let block_lines = match next::<u8>(u)? {
            s @ 0..128 => 1 + usize::from(s & 3),
            _ => bulk::MAX_BLOCK_LINES,
        };
        let bytes_per_value = case::bytes_per_value(u)?.min(64);
        let splits = [usize::from(next::<u8>(u)?), usize::from(next::<u8>(u)?)];
        let max = match next::<u8>(u)? {
            s @ 0..128 => u128::from(s) * 1_000,
            128..192 => u128::MAX,
            192..255 => u128::from(next::<u64>(u)?),
            255 => u128::from(next::<u64>(u)?) << 64 | u128::from(next::<u64>(u)?),
        };
        let width = usize::from(next::<u8>(u)? % 48);
        let rest = u.bytes(u.len())?;
        Ok(CliCase {
            params,
            // The key's value does not matter here; its bytes are better spent on the text.
            key: KEY.to_vec(),
            bytes_per_value,
            order,
            layout,
            header: flags & 4 != 0,
            mode,
            block_lines,
            splits,
            max,
            width,
            text: if flags & 32 == 0 {
                rest.to_vec()
            } else {
                numeric_text(rest, layout)
            },
        })
    }
}

impl CliCase {
    /// A `#[test]` that rebuilds this case and runs `check` (`cli::records`) on it.
    pub fn reproducer(&self, check: &str) -> String {
        let mut s = String::new();
        let name = check.replace("::", "_");
        let hash = fnv1a(format!("{self:?}").as_bytes());
        let params = match &self.params {
            Params::Riffpe { radix, digits } => {
                format!("Params::Riffpe {{ radix: {radix}, digits: {digits} }}")
            }
            Params::RiffpeX { radices } => {
                format!("Params::RiffpeX {{ radices: vec!{radices:?} }}")
            }
        };
        let layout = match self.layout {
            Layout::Lines => "Layout::Lines".to_string(),
            Layout::Csv { index, delimiter } => format!(
                "Layout::Csv {{ index: {index}, delimiter: b'{}' }}",
                [delimiter].escape_ascii()
            ),
        };
        let _ = writeln!(s, "#[test]");
        let _ = writeln!(s, "fn {name}_{hash:08x}() {{");
        let _ = writeln!(s, "    let case = CliCase {{");
        let _ = writeln!(s, "        params: {params},");
        let _ = writeln!(s, "        key: hex(\"{}\"),", to_hex(&self.key));
        let _ = writeln!(s, "        bytes_per_value: {},", self.bytes_per_value);
        let _ = writeln!(s, "        order: DigitOrder::{:?},", self.order);
        let _ = writeln!(s, "        layout: {layout},");
        let _ = writeln!(s, "        header: {},", self.header);
        let _ = writeln!(s, "        mode: Mode::{:?},", self.mode);
        let _ = writeln!(s, "        block_lines: {},", self.block_lines);
        let _ = writeln!(s, "        splits: {:?},", self.splits);
        let _ = writeln!(s, "        max: {},", self.max);
        let _ = writeln!(s, "        width: {},", self.width);
        let _ = writeln!(
            s,
            "        text: b\"{}\".to_vec(),",
            self.text.escape_ascii()
        );
        let _ = writeln!(s, "    }};");
        let _ = writeln!(s, "    assert_eq!({check}(&case), Ok(()));");
        let _ = writeln!(s, "}}");
        s
    }

    /// The cipher (its key, domain and `bytes_per_value`, no tweak).
    fn build(&self) -> Result<AnyFpe, riffpe::SetupError> {
        self.params
            .build(&self.key, b"", self.bytes_per_value, Selection::Fast)
    }

    fn domain(&self) -> Domain<'_> {
        self.params.domain()
    }
}

/// Mostly digits, line endings, delimiters and blanks, so that most lines are records the
/// pipeline takes (random bytes rarely are).
fn numeric_text(bytes: &[u8], layout: Layout) -> Vec<u8> {
    let delimiter = match layout {
        Layout::Csv { delimiter, .. } => delimiter,
        Layout::Lines => b'\n',
    };
    let mut text = Vec::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            0..160 => text.push(b'0' + b % 10),
            160..200 => text.push(b'\n'),
            200..230 => text.push(delimiter),
            230..240 => text.extend_from_slice(b"\r\n"),
            240..246 => text.push(if b % 2 == 0 { b' ' } else { b'\t' }),
            _ => text.push(b),
        }
    }
    text
}

/// Hands out the text in up to three reads, split where the case says.
struct SplitReader<'a> {
    text: &'a [u8],
    splits: Vec<usize>,
}

impl<'a> SplitReader<'a> {
    fn new(text: &'a [u8], splits: [usize; 2]) -> Self {
        let mut splits: Vec<usize> = splits.iter().map(|&s| s.min(text.len())).collect();
        splits.sort_unstable();
        SplitReader { text, splits }
    }
}

impl Read for SplitReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // Splits are offsets into the original text; keep them relative to what is left.
        let taken = match self.splits.first() {
            Some(&split) => split,
            None => self.text.len(),
        };
        let n = taken.min(buf.len());
        buf[..n].copy_from_slice(&self.text[..n]);
        self.text = &self.text[n..];
        self.splits.retain_mut(|s| {
            *s -= n.min(*s);
            *s > 0
        });
        if n == 0 && !self.text.is_empty() {
            // A split at the current offset: read on to the next one.
            return self.read(buf);
        }
        Ok(n)
    }
}

/// Leaves every message as it is: the pipeline alone.
struct Identity;

impl Transform for Identity {
    fn ints_u64(&self, _: &mut [u64], _: Tweak<'_>) -> Result<(), MessageError> {
        Ok(())
    }
    fn ints_u128(&self, _: &mut [u128], _: Tweak<'_>) -> Result<(), MessageError> {
        Ok(())
    }
    fn digits(&self, _: &mut [u32], _: Tweak<'_>) -> Result<(), MessageError> {
        Ok(())
    }
}

/// The cipher in one direction through the batch crate, as the command runs it.
struct Cipher<'a> {
    fpe: &'a AnyFpe,
    encrypt: bool,
    order: DigitOrder,
    mode: Mode,
}

impl Cipher<'_> {
    fn batch(&self) -> Batch<'_, 'static, riffpe::AnyDomain<Vec<u32>>, riffpe::Aes> {
        Batch::new(self.fpe).order(self.order).mode(self.mode)
    }
}

impl Transform for Cipher<'_> {
    fn ints_u64(&self, values: &mut [u64], tweak: Tweak<'_>) -> Result<(), MessageError> {
        match self.encrypt {
            true => self.batch().tweak(tweak).encrypt_ints(values),
            false => self.batch().tweak(tweak).decrypt_ints(values),
        }
    }
    fn ints_u128(&self, values: &mut [u128], tweak: Tweak<'_>) -> Result<(), MessageError> {
        match self.encrypt {
            true => self.batch().tweak(tweak).encrypt_ints(values),
            false => self.batch().tweak(tweak).decrypt_ints(values),
        }
    }
    fn digits(&self, digits: &mut [u32], tweak: Tweak<'_>) -> Result<(), MessageError> {
        match self.encrypt {
            true => self.batch().tweak(tweak).encrypt_digits(digits),
            false => self.batch().tweak(tweak).decrypt_digits(digits),
        }
    }
}

/// `cli_records`: on any text, the record functions never panic and agree with a model of their
/// documented grammar; every parsed integer formats back to the same value, zero-padded, in
/// every codec, with the integer codecs agreeing with the big-integer one and with
/// `riffpe::integer`; lines read in blocks put back together are the text; and the whole
/// pipeline, encrypting then decrypting, gives back what it gives with no cipher at all.
pub fn records(case: &CliCase) -> Outcome {
    line_reader(case)?;
    if let Layout::Csv { delimiter, .. } = case.layout {
        csv_reader(case, delimiter)?;
    }
    for line in case.text.split_inclusive(|&b| b == b'\n') {
        let (content, ending) = records::split_line_ending(line);
        ensure!(
            [content, ending].concat() == line
                && matches!(ending, b"" | b"\n" | b"\r\n")
                && !(ending == b"\n" && content.ends_with(b"\r"))
                && !content.contains(&b'\n'),
            "split_line_ending({line:?}) = ({content:?}, {ending:?})"
        );
        fields(case, content)?;
        csv_field(case, content)?;
        let field = match case.layout.field(content) {
            Ok(range) => &content[range],
            Err(_) => content,
        };
        decimal(case, field)?;
    }
    if let Ok(fpe) = case.build() {
        codecs(case)?;
        pipeline(case, &fpe)?;
    }
    Ok(())
}

/// Blocks of whole lines, each at most `block_lines` long, that put together after the byte
/// order mark, if any, are the text; or, if it starts with a UTF-16 one, a refusal.
fn line_reader(case: &CliCase) -> Outcome {
    let mut reader = LineReader::new(SplitReader::new(&case.text, case.splits));
    let utf16 = [b"\xff\xfe", b"\xfe\xff"]
        .iter()
        .any(|m| case.text.starts_with(*m));
    let mark = match reader.byte_order_mark() {
        Err(e) if utf16 && e.kind() == io::ErrorKind::InvalidData => return Ok(()),
        other => other.map_err(|e| format!("byte_order_mark: {e}"))?,
    };
    let mut joined = mark.to_vec();
    let mut lines = 0;
    while reader
        .next_block(case.block_lines)
        .map_err(|e| format!("next_block: {e}"))?
    {
        let ends = reader.ends();
        ensure!(
            !ends.is_empty() && ends.len() <= case.block_lines,
            "a block of {} lines (at most {})",
            ends.len(),
            case.block_lines
        );
        ensure!(
            ends.last() == Some(&reader.text().len()) && ends.windows(2).all(|w| w[0] < w[1]),
            "line ends {ends:?} in a block of {} bytes",
            reader.text().len()
        );
        joined.extend_from_slice(reader.text());
        lines += ends.len();
    }
    ensure!(
        joined == case.text,
        "blocks put together: {:?}",
        joined.escape_ascii().to_string()
    );
    let expected = case.text[mark.len()..]
        .split_inclusive(|&b| b == b'\n')
        .count();
    ensure!(
        lines == expected,
        "{lines} lines read, {expected} in the text"
    );
    Ok(())
}

/// RFC 4180 records, read in blocks, that put together after the byte order mark are the
/// text: each but the last ends in a line feed outside quotes and closes its quotes.
fn csv_reader(case: &CliCase, delimiter: u8) -> Outcome {
    let mut reader = LineReader::csv(SplitReader::new(&case.text, case.splits), delimiter);
    let Ok(mark) = reader.byte_order_mark() else {
        return Ok(());
    };
    let mut records: Vec<Vec<u8>> = Vec::new();
    while reader
        .next_block(case.block_lines)
        .map_err(|e| format!("next_block: {e}"))?
    {
        let mut start = 0;
        for &end in reader.ends() {
            records.push(reader.text()[start..end].to_vec());
            start = end;
        }
    }
    ensure!(
        [mark.to_vec(), records.concat()].concat() == case.text,
        "CSV records put together differ from the text"
    );
    let closed =
        |text: &[u8]| records::csv_field(text, delimiter, 0) != Err(RecordError::UnclosedQuote);
    for (i, record) in records.iter().enumerate() {
        let last = i + 1 == records.len();
        let (content, ending) = records::split_line_ending(record);
        ensure!(
            last || (!ending.is_empty() && closed(content)),
            "CSV record {i} {:?} ends inside quotes or without a line feed",
            record.escape_ascii().to_string()
        );
        for (at, _) in content.iter().enumerate().filter(|&(_, &b)| b == b'\n') {
            ensure!(
                !closed(&content[..at]),
                "CSV record {i} {:?} goes on past a line feed outside quotes",
                record.escape_ascii().to_string()
            );
        }
    }
    Ok(())
}

/// `csv_field` for every index (up to [`MAX_FIELDS_CHECKED`]) against `csv_fields`, and
/// `csv_value_range` inside the quotes of a quoted field.
fn csv_field(case: &CliCase, content: &[u8]) -> Outcome {
    let delimiter = match case.layout {
        Layout::Csv { delimiter, .. } => delimiter,
        Layout::Lines => b',',
    };
    let mut fields = Vec::new();
    let all = records::csv_fields(content, delimiter, &mut fields);
    for index in 0..=fields.len().min(MAX_FIELDS_CHECKED) {
        let got = records::csv_field(content, delimiter, index);
        let expected = match (&all, fields.get(index)) {
            (Err(e), _) => Err(*e),
            (Ok(()), Some(field)) => Ok(field.clone()),
            (Ok(()), None) => Err(RecordError::MissingColumn {
                column: index + 1,
                fields: if content.is_empty() { 0 } else { fields.len() },
            }),
        };
        ensure!(
            got == expected,
            "csv_field({content:?}, {delimiter}, {index}) = {got:?}, expected {expected:?}"
        );
        let value = records::csv_value_range(content, delimiter, index);
        let expected = got.and_then(|field| match field.quoted {
            false => Ok(field.range),
            true if field.range.len() >= 2 && content[field.range.end - 1] == b'"' => {
                Ok(field.range.start + 1..field.range.end - 1)
            }
            true => Err(RecordError::TextAfterQuote),
        });
        ensure!(
            value == expected,
            "csv_value_range({content:?}, {delimiter}, {index}) = {value:?}, expected {expected:?}"
        );
    }
    Ok(())
}

/// `field_range` for every index (up to [`MAX_FIELDS_CHECKED`]) and one past the last.
fn fields(case: &CliCase, content: &[u8]) -> Outcome {
    let delimiters: Vec<u8> = match case.layout {
        Layout::Csv { delimiter, .. } => vec![delimiter],
        Layout::Lines => vec![b','],
    };
    for delimiter in delimiters {
        let parts: Vec<&[u8]> = content.split(|&b| b == delimiter).collect();
        let fields = if content.is_empty() { 0 } else { parts.len() };
        let mut start = 0;
        for (index, part) in parts.iter().enumerate().take(MAX_FIELDS_CHECKED) {
            let expected = start..start + part.len();
            let got = records::field_range(content, delimiter, index);
            ensure!(
                got == Ok(expected.clone()),
                "field_range({content:?}, {delimiter}, {index}) = {got:?}, expected Ok({expected:?})"
            );
            start += part.len() + 1;
        }
        for index in [parts.len(), parts.len() + 1, usize::MAX] {
            let got = records::field_range(content, delimiter, index);
            let expected = Err(RecordError::MissingColumn {
                column: index.saturating_add(1),
                fields,
            });
            ensure!(
                got == expected,
                "field_range({content:?}, {delimiter}, {index}) = {got:?}, expected {expected:?}"
            );
        }
    }
    Ok(())
}

/// What `check_decimal` must say, from `RecordError`'s documented grammar.
fn decimal_model(field: &[u8]) -> Result<(), RecordError> {
    let Some(position) = field.iter().position(|b| !b.is_ascii_digit()) else {
        return if field.is_empty() {
            Err(RecordError::Empty)
        } else {
            Ok(())
        };
    };
    let byte = field[position];
    Err(match byte {
        b'+' | b'-' if position == 0 => RecordError::Sign,
        b'"' if position == 0 => RecordError::Quoted,
        b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => RecordError::Whitespace { position },
        128.. => RecordError::NonAscii { position },
        _ => RecordError::NotDigit { position, byte },
    })
}

/// `check_decimal` and `parse_decimal` (`u64` and `u128`, the case's bound and the largest)
/// against the model and the standard library; `write_padded` back to the same value.
fn decimal(case: &CliCase, field: &[u8]) -> Outcome {
    let model = decimal_model(field);
    let got = records::check_decimal(field);
    ensure!(
        got == model,
        "check_decimal({:?}) = {got:?}, expected {model:?}",
        field.escape_ascii().to_string()
    );
    let value = model.map(|()| {
        // Digits only: the standard library's parse is exact, failing only on overflow.
        std::str::from_utf8(field)
            .ok()
            .and_then(|s| s.parse::<u128>().ok())
    });
    let max64 = u64::try_from(case.max).unwrap_or(u64::MAX);
    for max in [max64, u64::MAX] {
        let expected = match value {
            Err(e) => Err(e),
            Ok(Some(v)) if v <= u128::from(max) => Ok(u64::try_from(v).unwrap_or(0)),
            Ok(_) => Err(RecordError::OutOfDomain),
        };
        let got = records::parse_decimal(field, max);
        ensure!(
            got == expected,
            "parse_decimal::<u64>({:?}, {max}) = {got:?}, expected {expected:?}",
            field.escape_ascii().to_string()
        );
        if let Ok(v) = got {
            padded(v, case.width, u128::from(v))?;
        }
    }
    for max in [case.max, u128::MAX] {
        let expected = match value {
            Err(e) => Err(e),
            Ok(Some(v)) if v <= max => Ok(v),
            Ok(_) => Err(RecordError::OutOfDomain),
        };
        let got = records::parse_decimal(field, max);
        ensure!(
            got == expected,
            "parse_decimal::<u128>({:?}, {max}) = {got:?}, expected {expected:?}",
            field.escape_ascii().to_string()
        );
        if let Ok(v) = got {
            padded(v, case.width, v)?;
        }
    }
    Ok(())
}

/// `write_padded(width)` is the standard library's zero-padded decimal and parses back.
fn padded<T: Decimal + std::fmt::Debug + PartialEq>(value: T, width: usize, wide: u128) -> Outcome {
    let mut out = b"x".to_vec();
    value.write_padded(width, &mut out);
    let expected = format!("x{wide:0width$}");
    ensure!(
        out == expected.as_bytes(),
        "write_padded({value:?}, {width}) = {:?}, expected {expected:?}",
        out.escape_ascii().to_string()
    );
    let back = records::parse_decimal(&out[1..], value);
    ensure!(
        back == Ok(value),
        "parse_decimal of write_padded({value:?}): {back:?}"
    );
    Ok(())
}

/// Every line's field through the domain's codec and the big-integer codec.
fn codecs(case: &CliCase) -> Outcome {
    let domain = case.domain();
    let numbers = Numbers::new(domain, case.order);
    let big = BigCodec::new(domain, case.order);
    let digits = domain.digits();
    for line in case.text.split_inclusive(|&b| b == b'\n') {
        let (content, _) = records::split_line_ending(line);
        let Ok(range) = case.layout.field(content) else {
            continue;
        };
        let field = &content[range];
        let mut expected_digits = vec![0u32; digits];
        let expected = big.parse(field, &mut expected_digits);
        let mut expected_text = Vec::new();
        if expected.is_ok() {
            big.format(&expected_digits, &mut expected_text);
            ensure!(
                expected_text.len() == numbers.width(),
                "BigCodec formats {:?} in {} digits, width {}",
                field.escape_ascii().to_string(),
                expected_text.len(),
                numbers.width()
            );
            let mut again = vec![0u32; digits];
            let back = big.parse(&expected_text, &mut again);
            ensure!(
                back.is_ok() && again == expected_digits,
                "BigCodec: {expected_digits:?} formats as {:?}, which parses as {back:?} {again:?}",
                expected_text.escape_ascii().to_string()
            );
            let trimmed = |t: &[u8]| -> Vec<u8> {
                let first = t.iter().position(|&b| b != b'0').unwrap_or(t.len());
                t[first..].to_vec()
            };
            ensure!(
                trimmed(field) == trimmed(&expected_text),
                "BigCodec turns {:?} into {:?}",
                field.escape_ascii().to_string(),
                expected_text.escape_ascii().to_string()
            );
        }
        match &numbers {
            Numbers::U64(codec) => {
                int_codec(
                    case,
                    codec,
                    field,
                    expected,
                    &expected_digits,
                    &expected_text,
                )?;
            }
            Numbers::U128(codec) => {
                int_codec(
                    case,
                    codec,
                    field,
                    expected,
                    &expected_digits,
                    &expected_text,
                )?;
            }
            Numbers::Big(_) => {}
        }
    }
    Ok(())
}

/// An integer codec against the big-integer codec's answer for `field`, and against
/// `riffpe::integer`.
fn int_codec<T>(
    case: &CliCase,
    codec: &IntCodec<T>,
    field: &[u8],
    expected: Result<(), RecordError>,
    expected_digits: &[u32],
    expected_text: &[u8],
) -> Outcome
where
    T: riffpe::integer::Integer + std::fmt::Debug,
    IntCodec<T>: Codec<Elem = T>,
{
    let domain = case.domain();
    let mut value = [T::from_u32(0)];
    let got = codec.parse(field, &mut value);
    ensure!(
        got == expected,
        "{} parse of {:?}: {got:?}, BigCodec says {expected:?}",
        std::any::type_name::<T>(),
        field.escape_ascii().to_string()
    );
    if got.is_err() {
        return Ok(());
    }
    let mut text = Vec::new();
    codec.format(&value, &mut text);
    ensure!(
        text == expected_text,
        "{} formats {value:?} as {:?}, BigCodec as {:?}",
        std::any::type_name::<T>(),
        text.escape_ascii().to_string(),
        expected_text.escape_ascii().to_string()
    );
    let mut digits = vec![0u32; domain.digits()];
    let result = to_digits(value[0], domain, case.order, &mut digits);
    ensure!(
        result.is_ok() && digits == expected_digits,
        "to_digits({value:?}, {:?}) = {result:?} {digits:?}, BigCodec: {expected_digits:?}",
        case.order
    );
    let back = from_digits::<T>(&digits, domain, case.order);
    ensure!(
        back == Ok(value[0]),
        "from_digits(to_digits({value:?})) = {back:?}"
    );
    Ok(())
}

/// Whether `riffpe encrypt --column 1 --delimiter C` takes the byte as its delimiter (asked of
/// the command line's own parser, once per byte).
pub fn command_line_accepts(delimiter: u8) -> bool {
    static ACCEPTED: OnceLock<Vec<bool>> = OnceLock::new();
    let accepted = ACCEPTED.get_or_init(|| {
        (0..=u8::MAX)
            .map(|byte| {
                let text = char::from(byte).to_string();
                let argv = ["riffpe", "encrypt", "--column", "1", "--delimiter", &text];
                Cli::try_parse_from(argv).is_ok()
            })
            .collect()
    });
    accepted[usize::from(delimiter)]
}

/// RFC 4180 records in `text`: a line feed ends one outside a quoted field, and bytes after
/// the last one that ends are one more.
fn csv_records(text: &[u8], delimiter: u8) -> u64 {
    // `closing`: a quote inside quotes, which closes them unless another follows (`""`).
    let (mut records, mut pending) = (0, false);
    let (mut field_start, mut quoted, mut closing) = (true, false, false);
    for &b in text {
        pending = true;
        if closing {
            closing = false;
            if b == b'"' {
                continue;
            }
            quoted = false;
        }
        match b {
            b'"' if quoted => closing = true,
            b'"' if field_start => quoted = true,
            b'\n' if !quoted => {
                records += 1;
                pending = false;
            }
            _ => {}
        }
        field_start = !quoted && (b == delimiter || b == b'\n');
    }
    records + u64::from(pending)
}

/// Encrypting then decrypting the text through the pipeline gives what the pipeline gives with
/// no cipher (the text, every integer zero-padded), and the same error on the same line if any;
/// for every layout the command line can ask for.
fn pipeline(case: &CliCase, fpe: &AnyFpe) -> Outcome {
    if let Layout::Csv { delimiter, .. } = case.layout
        && !command_line_accepts(delimiter)
    {
        return Ok(());
    }
    let lines = case.text.split_inclusive(|&b| b == b'\n').count();
    let per_message = case.params.work_per_message(case.bytes_per_value);
    if per_message.saturating_mul(lines as u64) > FUZZ_BUDGET {
        return Ok(());
    }
    let numbers = Numbers::new(case.domain(), case.order);
    match &numbers {
        Numbers::U64(codec) => pipeline_with(case, fpe, codec, &numbers),
        Numbers::U128(codec) => pipeline_with(case, fpe, codec, &numbers),
        Numbers::Big(codec) => pipeline_with(case, fpe, codec, &numbers),
    }
}

fn pipeline_with<C: Codec>(case: &CliCase, fpe: &AnyFpe, codec: &C, numbers: &Numbers) -> Outcome {
    let cipher = |encrypt| Cipher {
        fpe,
        encrypt,
        order: case.order,
        mode: case.mode,
    };
    let (encrypt, decrypt) = (cipher(true), cipher(false));
    let run = |text: &[u8], transform: &dyn Transform| -> Result<Vec<u8>, String> {
        let pipeline = Pipeline {
            codec,
            transform,
            columns: match case.layout {
                Layout::Lines => None,
                Layout::Csv { index, delimiter } => Some(IntegerColumns {
                    value: ColumnRef::Index(index),
                    tweak_column: None,
                    tweak: b"",
                    delimiter,
                }),
            },
            header: case.header,
            block_lines: case.block_lines,
            domain_size: numbers.size(),
        };
        let mut out = Vec::new();
        let source = Source::File("in.csv".into());
        let reader = SplitReader::new(text, case.splits);
        let records = pipeline
            .run(reader, &source, &mut out, "out.csv", &Progress::none())
            .map_err(|e| e.to_string())?;
        // A byte order mark at the start is not a line's.
        let body = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(text);
        let expected = match case.layout {
            Layout::Lines => body.split_inclusive(|&b| b == b'\n').count() as u64,
            Layout::Csv { delimiter, .. } => csv_records(body, delimiter),
        };
        if records != expected {
            return Err(format!(
                "{records} records processed, {expected} in the text"
            ));
        }
        Ok(out)
    };
    let plain = run(&case.text, &Identity);
    let encrypted = run(&case.text, &encrypt);
    match (&plain, &encrypted) {
        (Err(a), Err(b)) => {
            ensure!(
                a == b,
                "the pipeline fails with {b:?}, without a cipher with {a:?}"
            );
        }
        (Ok(plain), Ok(encrypted)) => {
            let again = run(encrypted, &Identity);
            ensure!(
                again.as_ref() == Ok(encrypted),
                "the encrypted text {:?} does not read back unchanged: {:?}",
                encrypted.escape_ascii().to_string(),
                again.map(|a| a.escape_ascii().to_string())
            );
            let decrypted = run(encrypted, &decrypt);
            ensure!(
                decrypted.as_ref() == Ok(plain),
                "decrypted {:?}, expected {:?}",
                decrypted.map(|d| d.escape_ascii().to_string()),
                plain.escape_ascii().to_string()
            );
        }
        _ => {
            return Err(format!(
                "without a cipher {:?}, encrypting {:?}",
                plain.as_ref().map(|p| p.escape_ascii().to_string()),
                encrypted.as_ref().map(|e| e.escape_ascii().to_string())
            ));
        }
    }
    Ok(())
}
