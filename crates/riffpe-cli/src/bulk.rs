//! Streaming: blocks of lines are read, parsed, encrypted by the batch crate, formatted and
//! written in input order, so memory is bounded by the block size whatever the input size.
//!
//! Per block, three phases each spread over the current rayon pool:
//!
//! 1. parse: each line → its field ([`Layout`]) → one message ([`Codec::parse`]), and its
//!    tweak field if rows have their own tweak ([`RowTweak`]);
//! 2. transform: the whole block at once ([`Transform`], the batch crate's parallel mode);
//! 3. format: bytes before the field, the new value, bytes after it (line ending included).
//!
//! An empty field (a blank line, or a null in a CSV column) passes through unchanged. The
//! first bad line stops the run before anything of its block is written, with an error naming
//! the input, the line number and the reason.

use std::fmt;
use std::io::{self, ErrorKind, Read, Write};
use std::ops::Range;
use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use rayon::prelude::*;
use riffpe::{MessageError, Tweak};

use crate::args::ColumnRef;
use crate::columns;
use crate::engine::{Element, Transform};
use crate::formatted::row_context;
use crate::number::Codec;
use crate::progress::Progress;
use crate::records::{self, CsvField, RecordError};

/// The most lines in a block (fewer when messages are expensive, see [`block_lines`]).
pub const MAX_BLOCK_LINES: usize = 1 << 16;
/// The fewest lines in a block: enough chunks to keep every core busy.
pub const MIN_BLOCK_LINES: usize = 1 << 12;
/// A block stops growing at this many bytes (a longer single line is still read whole).
pub const BLOCK_BYTES: usize = 8 << 20;
/// Bytes asked of the input per read.
const READ_SIZE: usize = 1 << 20;
/// Lines per parse or format task.
const CHUNK_LINES: usize = 1 << 12;
/// AES blocks of work aimed at per block, so the progress bar moves for expensive domains too.
const BLOCK_WORK: u64 = 1 << 27;

/// Lines per block for a domain: as many as [`MAX_BLOCK_LINES`] for cheap messages, down to
/// [`MIN_BLOCK_LINES`] when one message costs many AES blocks (large radices).
pub fn block_lines(radices: impl Iterator<Item = u32>, bytes_per_value: usize) -> usize {
    // Two passes over the digits, each step a keystream of ⌈r·b/16⌉ blocks.
    let work: u64 = radices
        .map(|r| 2 * (u64::from(r) * bytes_per_value as u64).div_ceil(16))
        .fold(1, u64::saturating_add);
    usize::try_from(BLOCK_WORK / work)
        .unwrap_or(MAX_BLOCK_LINES)
        .clamp(MIN_BLOCK_LINES, MAX_BLOCK_LINES)
}

/// Where the integer is in a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The whole line (without its ending) is the integer.
    Lines,
    /// One field of an RFC 4180 record (a quoted field may hold delimiters and line breaks).
    Csv {
        /// 0-based field index (`--column` minus one).
        index: usize,
        /// The byte between fields.
        delimiter: u8,
    },
}

impl Layout {
    /// The range of the field in `content` (a line, or a CSV record, without its ending):
    /// inside the quotes of a quoted field; the blanks around its integer are the caller's to
    /// trim ([`records::trim_blanks`]).
    #[inline]
    pub fn field(&self, content: &[u8]) -> Result<Range<usize>, RecordError> {
        match *self {
            Layout::Lines => Ok(0..content.len()),
            Layout::Csv { index, delimiter } => records::csv_value_range(content, delimiter, index),
        }
    }
}

/// `--column` on integers (with `--tweak-column`, if given), before a header names the columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntegerColumns<'a> {
    /// The integer's column.
    pub value: ColumnRef,
    /// The column each row's tweak comes from, if rows have their own (see [`RowTweak`]).
    pub tweak_column: Option<ColumnRef>,
    /// `-t`/`--tweak-text`: the first part of every row's tweak.
    pub tweak: &'a [u8],
    /// The byte between fields.
    pub delimiter: u8,
}

impl<'a> IntegerColumns<'a> {
    /// Where the integer and the row's tweak are, once the header (if any) names the columns.
    fn resolve(&self, header: Option<&[u8]>) -> Result<Placement<'a>> {
        // A quote the header never closes would have made the whole input the header.
        if let Some(header) = header {
            let (content, _) = records::split_line_ending(header);
            if let Err(e @ RecordError::UnclosedQuote) =
                records::csv_field(content, self.delimiter, 0)
            {
                return Err(anyhow!("the header: {e}"));
            }
        }
        let named = |column: &ColumnRef| matches!(column, ColumnRef::Name(_));
        // A header is only read when a column is named: otherwise it passes through unread.
        let names = header
            .filter(|_| named(&self.value) || self.tweak_column.as_ref().is_some_and(named))
            .map(|h| columns::header_names(h, self.delimiter))
            .transpose()?;
        let index = columns::find(&self.value, names.as_deref(), "--column")?;
        let row_tweak = match &self.tweak_column {
            None => None,
            Some(column) => {
                let tweak_index = columns::find(column, names.as_deref(), "--tweak-column")?;
                if tweak_index == index {
                    return Err(columns::tweak_column_encrypted(column, index));
                }
                Some(RowTweak {
                    index: tweak_index,
                    delimiter: self.delimiter,
                    tweak: self.tweak,
                })
            }
        };
        let layout = Layout::Csv {
            index,
            delimiter: self.delimiter,
        };
        Ok(Placement { layout, row_tweak })
    }
}

/// `--tweak-column` on integers: each row's tweak is [`row_context`] of `tweak` and the
/// row's field `index`, its value after CSV unquoting, as with formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowTweak<'a> {
    /// 0-based field index (`--tweak-column` minus one).
    pub index: usize,
    /// The byte between fields.
    pub delimiter: u8,
    /// `-t`/`--tweak-text`: the first part of every row's tweak.
    pub tweak: &'a [u8],
}

impl RowTweak<'_> {
    /// The tweak field of `content` (a record without its ending).
    #[inline]
    pub fn field(&self, content: &[u8]) -> Result<CsvField, RecordError> {
        records::csv_field(content, self.delimiter, self.index)
    }
}

/// The name of the input, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Standard input.
    Stdin,
    /// `--input PATH`.
    File(PathBuf),
    /// Integers given on the command line.
    Arguments,
}

impl Source {
    /// Where line `line` (1-based) is, as `file:line`.
    pub fn at(&self, line: u64) -> String {
        match self {
            Source::Stdin => format!("<stdin>:{line}"),
            Source::File(path) => format!("{}:{line}", path.display()),
            Source::Arguments => format!("argument {line}"),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Stdin => f.write_str("<stdin>"),
            Source::File(path) => write!(f, "{}", path.display()),
            Source::Arguments => f.write_str("the arguments"),
        }
    }
}

/// Joins command-line integers into the text of one block, one per line.
pub fn arguments_text(values: &[String]) -> Result<Vec<u8>> {
    let mut text = Vec::with_capacity(values.iter().map(|v| v.len() + 1).sum());
    for (i, value) in values.iter().enumerate() {
        if value.contains('\n') {
            return Err(anyhow!(
                "{}: {}",
                Source::Arguments.at(i as u64 + 1),
                RecordError::LineBreak
            ));
        }
        text.extend_from_slice(value.as_bytes());
        text.push(b'\n');
    }
    Ok(text)
}

/// Reads whole lines, a block at a time, from any reader.
#[derive(Debug)]
pub struct LineReader<R> {
    reader: R,
    /// The current block's lines, then bytes read ahead.
    text: Vec<u8>,
    /// End offset of each line of the current block in `text`.
    ends: Vec<usize>,
    eof: bool,
    /// RFC 4180 records with this delimiter: a line feed inside quotes does not end one.
    csv: Option<u8>,
}

impl<R: Read> LineReader<R> {
    /// A reader with empty buffers.
    pub fn new(reader: R) -> Self {
        LineReader {
            reader,
            text: Vec::new(),
            ends: Vec::new(),
            eof: false,
            csv: None,
        }
    }

    /// A reader of RFC 4180 records: a record may span lines inside a quoted field.
    pub fn csv(reader: R, delimiter: u8) -> Self {
        LineReader {
            csv: Some(delimiter),
            ..LineReader::new(reader)
        }
    }

    /// Reads and drops a UTF-8 byte order mark at the start of the input, as spreadsheet tools
    /// write, and returns it (else nothing), for the caller to write back: it is not part of
    /// the first line's value. Input that starts with a UTF-16 one is refused, as a whole.
    /// Call it before the first block.
    pub fn byte_order_mark(&mut self) -> io::Result<&'static [u8]> {
        const UTF8: &[u8] = "\u{feff}".as_bytes();
        const UTF16: [&[u8]; 2] = [b"\xff\xfe", b"\xfe\xff"];
        let partial = |text: &[u8]| {
            text.len() < UTF8.len()
                && (UTF8.starts_with(text) || UTF16.iter().any(|mark| mark.starts_with(text)))
        };
        while !self.eof && partial(&self.text) {
            self.fill()?;
        }
        if UTF16.iter().any(|mark| self.text.starts_with(mark)) {
            return Err(io::Error::new(
                ErrorKind::InvalidData,
                "it is UTF-16 text (it starts with a UTF-16 byte order mark): save it as UTF-8, \
                 or convert it (iconv -f UTF-16 -t UTF-8)",
            ));
        }
        if !self.text.starts_with(UTF8) {
            return Ok(b"");
        }
        self.text.drain(..UTF8.len());
        Ok(UTF8)
    }

    /// Reads the next block: up to `max_lines` lines (each with its ending, if it has one),
    /// fewer once [`BLOCK_BYTES`] are held. Returns `false` at the end of the input.
    pub fn next_block(&mut self, max_lines: usize) -> io::Result<bool> {
        let consumed = self.ends.last().copied().unwrap_or(0);
        self.text.copy_within(consumed.., 0);
        self.text.truncate(self.text.len() - consumed);
        self.ends.clear();
        let mut scanned = 0;
        loop {
            while self.ends.len() < max_lines {
                let end = match self.csv {
                    None => records::find_byte(&self.text[scanned..], b'\n').map(|at| at + 1),
                    Some(delimiter) => records::csv_record_end(&self.text[scanned..], delimiter),
                };
                match end {
                    Some(offset) => {
                        scanned += offset;
                        self.ends.push(scanned);
                    }
                    None => {
                        // A record's quote state starts at its first byte: scan it again.
                        if self.csv.is_none() {
                            scanned = self.text.len();
                        }
                        break;
                    }
                }
            }
            let full = self.ends.len() >= max_lines
                || (!self.ends.is_empty() && self.text.len() >= BLOCK_BYTES);
            if full {
                break;
            }
            if self.eof {
                // A last line without an ending.
                if self.ends.last().copied().unwrap_or(0) < self.text.len() {
                    self.ends.push(self.text.len());
                }
                break;
            }
            self.fill()?;
        }
        Ok(!self.ends.is_empty())
    }

    /// Appends up to [`READ_SIZE`] bytes of input to `text`, or sets `eof`.
    fn fill(&mut self) -> io::Result<()> {
        let old = self.text.len();
        self.text.resize(old + READ_SIZE, 0);
        let read = loop {
            match self.reader.read(&mut self.text[old..]) {
                Ok(read) => break read,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.text.truncate(old);
                    return Err(e);
                }
            }
        };
        self.text.truncate(old + read);
        self.eof = read == 0;
        Ok(())
    }

    /// The text of the current block.
    pub fn text(&self) -> &[u8] {
        &self.text[..self.ends.last().copied().unwrap_or(0)]
    }

    /// The end offset of each line of the current block.
    pub fn ends(&self) -> &[usize] {
        &self.ends
    }
}

/// One run over one input: the codec, the transform, where the integer is, and the messages'
/// context.
pub struct Pipeline<'a, C, X: ?Sized> {
    /// Text ↔ messages.
    pub codec: &'a C,
    /// What happens to each block of messages.
    pub transform: &'a X,
    /// The integer's column, and where each row's tweak comes from if rows have their own;
    /// `None`: the whole line is the integer, and the tweak is the cipher's.
    pub columns: Option<IntegerColumns<'a>>,
    /// Whether the first line is a header, copied unchanged (and naming the columns).
    pub header: bool,
    /// Lines per block.
    pub block_lines: usize,
    /// `N` in decimal, for "not below the domain size" messages.
    pub domain_size: String,
}

impl<C, X: ?Sized> fmt::Debug for Pipeline<'_, C, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pipeline")
            .field(
                "columns",
                &self.columns.as_ref().map(|c| (&c.value, &c.tweak_column)),
            )
            .field("block_lines", &self.block_lines)
            .finish_non_exhaustive()
    }
}

/// The records of a block (lines, or CSV records that may span lines): record `i` is
/// `text[start(i)..ends[i]]`.
#[derive(Clone, Copy)]
struct Lines<'a> {
    text: &'a [u8],
    /// Where the first record starts (after a header).
    origin: usize,
    ends: &'a [usize],
    /// The input's line number of the first record.
    line: u64,
}

impl Lines<'_> {
    #[inline]
    fn start(&self, i: usize) -> usize {
        match i {
            0 => self.origin,
            _ => self.ends[i - 1],
        }
    }

    /// The input's line number where record `i` starts.
    #[cold]
    fn line_of(&self, i: usize) -> u64 {
        self.line + records::count_lines(&self.text[self.origin..self.start(i)])
    }
}

/// Where a record's integer is in the block's text, and its tweak field under [`RowTweak`]
/// (byte offsets, start and end, the tweak's quotes included); an empty integer field leaves
/// both empty, and its record is written as it was read.
#[derive(Clone, Copy, Default)]
struct Fields {
    value: (usize, usize),
    tweak: (usize, usize),
    tweak_quoted: bool,
}

/// Buffers reused from block to block.
struct Buffers<E> {
    values: Vec<E>,
    fields: Vec<Fields>,
    /// The rows' tweaks end to end, and where each ends.
    tweaks: Vec<u8>,
    tweak_ends: Vec<usize>,
    outputs: Vec<Vec<u8>>,
}

/// Where the integer and each row's tweak are, the columns resolved.
#[derive(Clone, Copy)]
struct Placement<'a> {
    layout: Layout,
    row_tweak: Option<RowTweak<'a>>,
}

impl Placement<'_> {
    /// The integer's column (0-based), unless it is the whole line.
    fn value_column(&self) -> Option<usize> {
        match self.layout {
            Layout::Lines => None,
            Layout::Csv { index, .. } => Some(index),
        }
    }
}

impl<'a, C, X: ?Sized> Pipeline<'a, C, X> {
    /// Resolves the columns against the header line (with its ending), if any.
    fn placement(&self, header: Option<&[u8]>) -> Result<Placement<'a>> {
        match &self.columns {
            None => Ok(Placement {
                layout: Layout::Lines,
                row_tweak: None,
            }),
            Some(columns) => columns.resolve(header),
        }
    }

    /// The one-line message for a refused record: `file:line: [column N: ]reason`, `column`
    /// the field refused (0-based), if any.
    #[cold]
    fn record_error(
        &self,
        source: &Source,
        line: u64,
        column: Option<usize>,
        error: RecordError,
    ) -> anyhow::Error {
        let column = match (column, error) {
            (_, RecordError::MissingColumn { .. }) | (None, _) => String::new(),
            (Some(index), _) => format!("column {}: ", index + 1),
        };
        let hint = match error {
            RecordError::OutOfDomain => format!(" {}", self.domain_size),
            RecordError::NotDigit { .. } | RecordError::NonAscii { .. }
                if line == 1 && !self.header && *source != Source::Arguments =>
            {
                " (if line 1 is a header, add --header)".to_string()
            }
            _ => String::new(),
        };
        anyhow!("{}: {column}{error}{hint}", source.at(line))
    }

    /// The one-line message for a block the cipher refused: the refused message's line,
    /// column and reason, never its value.
    #[cold]
    fn message_error(
        &self,
        place: &Placement<'_>,
        source: &Source,
        block: &Lines<'_>,
        error: MessageError,
    ) -> anyhow::Error {
        let Some(index) = error.message() else {
            return anyhow!("{source}: {error}");
        };
        let line = block.line_of(index);
        match error {
            MessageError::DigitOutOfRange {
                position, radix, ..
            } => {
                let column = match place.value_column() {
                    None => String::new(),
                    Some(index) => format!("column {}: ", index + 1),
                };
                anyhow!(
                    "{}: {column}digit {position} is not below its radix {radix}",
                    source.at(line)
                )
            }
            _ => self.record_error(source, line, place.value_column(), RecordError::OutOfDomain),
        }
    }
}

impl<C: Codec, X: Transform + ?Sized> Pipeline<'_, C, X> {
    /// Processes every line (or CSV record, with columns) of `input` into `output` (named
    /// `output_name` in messages). Returns the number of lines or records.
    pub fn run<R: Read, W: Write>(
        &self,
        input: R,
        source: &Source,
        output: &mut W,
        output_name: &str,
        progress: &Progress,
    ) -> Result<u64> {
        let mut reader = match &self.columns {
            None => LineReader::new(input),
            Some(columns) => LineReader::csv(input, columns.delimiter),
        };
        let mut buffers = Buffers {
            values: Vec::new(),
            fields: Vec::new(),
            tweaks: Vec::new(),
            tweak_ends: Vec::new(),
            outputs: Vec::new(),
        };
        let mut place = match self.header {
            true => None,
            false => Some(self.placement(None)?),
        };
        let (mut line, mut read) = (1u64, 0u64);
        let write_error = || format!("cannot write {output_name}");
        let mark = reader
            .byte_order_mark()
            .with_context(|| format!("cannot read {source}"))?;
        output.write_all(mark).with_context(write_error)?;
        while reader
            .next_block(self.block_lines)
            .with_context(|| format!("cannot read {source}"))?
        {
            let (text, ends) = (reader.text(), reader.ends());
            // The header goes out with the first block, once that block has been checked.
            let first = usize::from(read == 0 && self.header);
            let origin = if first == 1 { ends[0] } else { 0 };
            let place = match place {
                Some(place) => place,
                None => *place.insert(self.placement(Some(&text[..origin]))?),
            };
            let lines = Lines {
                text,
                origin,
                ends: &ends[first..],
                line: line + records::count_lines(&text[..origin]),
            };
            self.block(&place, &lines, source, &mut buffers)?;
            output
                .write_all(&text[..origin])
                .with_context(write_error)?;
            let chunks = (ends.len() - first).div_ceil(CHUNK_LINES);
            for out in &buffers.outputs[..chunks] {
                output.write_all(out).with_context(write_error)?;
            }
            progress.advance(text.len() as u64);
            line += records::count_lines(text);
            read += ends.len() as u64;
        }
        Ok(read)
    }

    /// Parses, transforms and formats `block` into `buffers.outputs`, one buffer per chunk.
    fn block(
        &self,
        place: &Placement<'_>,
        block: &Lines<'_>,
        source: &Source,
        buffers: &mut Buffers<C::Elem>,
    ) -> Result<()> {
        let stride = self.codec.stride();
        let Lines { text, ends, .. } = *block;
        let lines = ends.len();
        let start = |i: usize| block.start(i);

        // 1. Parse.
        buffers.values.clear();
        buffers.values.resize(lines * stride, C::Elem::default());
        buffers.fields.clear();
        buffers.fields.resize(lines, Fields::default());
        let failures: Vec<(usize, Option<usize>, RecordError)> = buffers
            .values
            .par_chunks_mut(CHUNK_LINES * stride)
            .zip(buffers.fields.par_chunks_mut(CHUNK_LINES))
            .enumerate()
            .filter_map(|(chunk, (values, fields))| {
                let first = chunk * CHUNK_LINES;
                let messages = values.chunks_exact_mut(stride).zip(fields.iter_mut());
                for (i, (message, field)) in (first..).zip(messages) {
                    let from = start(i);
                    let (content, _) = records::split_line_ending(&text[from..ends[i]]);
                    if content.is_empty() {
                        // A blank line (no row, to CSV readers) passes through as a null does.
                        continue;
                    }
                    let (range, blanks) = match place.layout.field(content) {
                        Ok(field) => {
                            let range = records::trim_blanks(content, field.clone());
                            (range.clone(), range.start - field.start)
                        }
                        Err(e) => return Some((i, place.value_column(), e)),
                    };
                    if range.is_empty() {
                        // A null (or blanks) passes through: its message stays zero, and its
                        // empty field makes the format phase copy the line.
                        continue;
                    }
                    if let Err(e) = self.codec.parse(&content[range.clone()], message) {
                        return Some((i, place.value_column(), e.shifted(blanks)));
                    }
                    field.value = (from + range.start, from + range.end);
                    if let Some(row) = &place.row_tweak {
                        match row.field(content) {
                            Ok(CsvField { range, quoted }) => {
                                field.tweak = (from + range.start, from + range.end);
                                field.tweak_quoted = quoted;
                            }
                            Err(e) => return Some((i, Some(row.index), e)),
                        }
                    }
                }
                None
            })
            .collect();
        if let Some(&(i, column, error)) = failures.iter().min_by_key(|(i, ..)| *i) {
            return Err(self.record_error(source, block.line_of(i), column, error));
        }

        // 2. Transform.
        let row_tweaks: Vec<&[u8]>;
        let tweak = match &place.row_tweak {
            None => Tweak::Fixed,
            Some(row) => {
                buffers.tweaks.clear();
                buffers.tweak_ends.clear();
                for (i, field) in buffers.fields.iter().enumerate() {
                    let (from, to) = field.tweak;
                    let tweak = CsvField {
                        range: from..to,
                        quoted: field.tweak_quoted,
                    };
                    tweak
                        .value(text)
                        .and_then(|value| row_context(row.tweak, &value, &mut buffers.tweaks))
                        .map_err(|e| {
                            self.record_error(source, block.line_of(i), Some(row.index), e)
                        })?;
                    buffers.tweak_ends.push(buffers.tweaks.len());
                }
                let starts = core::iter::once(0).chain(buffers.tweak_ends.iter().copied());
                row_tweaks = starts
                    .zip(&buffers.tweak_ends)
                    .map(|(from, &to)| &buffers.tweaks[from..to])
                    .collect();
                Tweak::PerMessage(&row_tweaks)
            }
        };
        C::Elem::apply(self.transform, &mut buffers.values, tweak)
            .map_err(|e| self.message_error(place, source, block, e))?;

        // 3. Format.
        let chunks = lines.div_ceil(CHUNK_LINES);
        if buffers.outputs.len() < chunks {
            buffers.outputs.resize_with(chunks, Vec::new);
        }
        let (values, fields) = (&buffers.values, &buffers.fields);
        buffers.outputs[..chunks]
            .par_iter_mut()
            .enumerate()
            .for_each(|(chunk, out)| {
                out.clear();
                let first = chunk * CHUNK_LINES;
                for i in first..lines.min(first + CHUNK_LINES) {
                    let (field_start, field_end) = fields[i].value;
                    if field_start == field_end {
                        out.extend_from_slice(&text[start(i)..ends[i]]);
                        continue;
                    }
                    out.extend_from_slice(&text[start(i)..field_start]);
                    self.codec
                        .format(&values[i * stride..(i + 1) * stride], out);
                    out.extend_from_slice(&text[field_end..ends[i]]);
                }
            });
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::number::Numbers;
    use riffpe::Domain;
    use riffpe::integer::DigitOrder;

    /// Hands out one byte per read, to split lines (and records) across reads.
    pub(crate) struct Trickle<'a>(pub(crate) &'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((&byte, rest)), Some(slot)) => {
                    *slot = byte;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
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

    fn blocks(input: &[u8], max_lines: usize) -> Vec<Vec<Vec<u8>>> {
        let mut reader = LineReader::new(Trickle(input));
        let mut blocks = Vec::new();
        while reader.next_block(max_lines).unwrap() {
            let mut start = 0;
            let mut lines = Vec::new();
            for &end in reader.ends() {
                lines.push(reader.text()[start..end].to_vec());
                start = end;
            }
            blocks.push(lines);
        }
        blocks
    }

    #[test]
    fn lines_are_read_whole_in_blocks() {
        let input = b"1\n22\r\n\n333\n4444";
        let lines: Vec<Vec<u8>> = input
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        for max_lines in [1, 2, 3, 5, 100] {
            let blocks = blocks(input, max_lines);
            assert!(blocks.iter().all(|b| !b.is_empty() && b.len() <= max_lines));
            assert_eq!(blocks.concat(), lines, "{max_lines}");
        }
        assert!(blocks(b"", 10).is_empty());
        assert_eq!(blocks(b"\n", 10), [[b"\n".to_vec()]]);
    }

    #[test]
    fn a_byte_order_mark_is_taken_off_the_first_line() {
        let bom = "\u{feff}".as_bytes();
        let read = |input: &[u8]| {
            let mut reader = LineReader::new(Trickle(input));
            let mark = reader.byte_order_mark().unwrap();
            let mut text = Vec::new();
            while reader.next_block(2).unwrap() {
                text.extend_from_slice(reader.text());
            }
            (mark, text)
        };
        assert_eq!(read(b"\xef\xbb\xbf12\n3"), (bom, b"12\n3".to_vec()));
        assert_eq!(read(b"\xef\xbb\xbf"), (bom, Vec::new()));
        // Anything else, a part of a mark included, is the first line's.
        for input in [
            &b""[..],
            b"12\n3",
            b"\xef\xbb",
            b"\xef\xbb\n",
            b"\xbb\xbf\xef1",
        ] {
            assert_eq!(read(input), (&b""[..], input.to_vec()));
        }
        // Only at the very start.
        assert_eq!(
            read(b"1\n\xef\xbb\xbf2"),
            (&b""[..], b"1\n\xef\xbb\xbf2".to_vec())
        );
        for input in [&b"\xff\xfe1\x00"[..], b"\xfe\xff\x001", b"\xff\xfe"] {
            let error = LineReader::new(Trickle(input))
                .byte_order_mark()
                .unwrap_err();
            assert_eq!(error.kind(), ErrorKind::InvalidData);
            assert!(
                error.to_string().starts_with("it is UTF-16 text"),
                "{error}"
            );
        }
        assert_eq!(read(b"\xff1\n"), (&b""[..], b"\xff1\n".to_vec()));
    }

    /// Refuses every block with one error.
    struct Refuse(MessageError);

    impl Transform for Refuse {
        fn ints_u64(&self, _: &mut [u64], _: Tweak<'_>) -> Result<(), MessageError> {
            Err(self.0)
        }
        fn ints_u128(&self, _: &mut [u128], _: Tweak<'_>) -> Result<(), MessageError> {
            Err(self.0)
        }
        fn digits(&self, _: &mut [u32], _: Tweak<'_>) -> Result<(), MessageError> {
            Err(self.0)
        }
    }

    /// Column `column` (a number from 1, or a header name) of `delimiter`-separated lines.
    fn csv(column: &str, delimiter: u8) -> Option<IntegerColumns<'static>> {
        let value = match column.parse::<usize>() {
            Ok(n) => ColumnRef::Index(n - 1),
            Err(_) => ColumnRef::Name(column.into()),
        };
        Some(IntegerColumns {
            value,
            tweak_column: None,
            tweak: b"",
            delimiter,
        })
    }

    fn run(
        input: &[u8],
        columns: Option<IntegerColumns<'_>>,
        header: bool,
        block_lines: usize,
    ) -> Result<Vec<u8>> {
        run_with(&Identity, input, columns, header, block_lines)
    }

    fn run_with(
        transform: &dyn Transform,
        input: &[u8],
        columns: Option<IntegerColumns<'_>>,
        header: bool,
        block_lines: usize,
    ) -> Result<Vec<u8>> {
        let domain = Domain::Uniform {
            radix: 100,
            digits: 8,
        };
        let Numbers::U64(codec) = Numbers::new(domain, DigitOrder::LittleEndian) else {
            unreachable!()
        };
        let pipeline = Pipeline {
            codec: &codec,
            transform,
            columns,
            header,
            block_lines,
            domain_size: "10000000000000000".into(),
        };
        let mut out = Vec::new();
        let source = Source::File("in.txt".into());
        pipeline.run(Trickle(input), &source, &mut out, "out", &Progress::none())?;
        Ok(out)
    }

    #[test]
    fn every_other_byte_passes_through() {
        // Input, columns, header, output.
        type Case = (
            &'static [u8],
            Option<IntegerColumns<'static>>,
            bool,
            &'static [u8],
        );
        let cases: &[Case] = &[
            (b"", None, false, b""),
            (
                b"42\n7\r\n9",
                None,
                false,
                b"0000000000000042\n0000000000000007\r\n0000000000000009",
            ),
            (b"n\n1\n", None, true, b"n\n0000000000000001\n"),
            (
                b"a;b;c\r\nx;5;\xff\r\ny;6\n",
                csv("2", b';'),
                true,
                b"a;b;c\r\nx;0000000000000005;\xff\r\ny;0000000000000006\n",
            ),
            // A name is looked up in the header.
            (
                b"a;\"b\";c\nx;5;\xff\n",
                csv("b", b';'),
                true,
                b"a;\"b\";c\nx;0000000000000005;\xff\n",
            ),
            (b"a;b\n", csv("b", b';'), true, b"a;b\n"),
            // A header is read only to find a name (and that its quotes close).
            (
                b"\"a\"b;c\nx;5\n",
                csv("2", b';'),
                true,
                b"\"a\"b;c\nx;0000000000000005\n",
            ),
            // A quoted line break.
            (
                b"\"a\nb\";c\n\"x\ny;z\";\"5\"\r\n",
                csv("2", b';'),
                true,
                b"\"a\nb\";c\n\"x\ny;z\";\"0000000000000005\"\r\n",
            ),
            (b"", csv("b", b';'), true, b""),
            (b"x;5\n", csv("2", b';'), false, b"x;0000000000000005\n"),
            // Empty lines and empty fields (nulls) pass through; their zero is not written.
            (
                b"1\n\n\r\n3",
                None,
                false,
                b"0000000000000001\n\n\r\n0000000000000003",
            ),
            (b"x;;z\ny;\r\n", csv("2", b';'), false, b"x;;z\ny;\r\n"),
            // Blank lines are no rows.
            (
                b"x;5\n\r\n\ny;6",
                csv("2", b';'),
                false,
                b"x;0000000000000005\n\r\n\ny;0000000000000006",
            ),
        ];
        for (input, columns, header, expected) in cases {
            for block_lines in [1, 2, MAX_BLOCK_LINES] {
                let out = run(input, columns.clone(), *header, block_lines).unwrap();
                assert_eq!(out, *expected, "{input:?} {block_lines}");
            }
        }
    }

    #[test]
    fn errors_name_the_line() {
        let input = b"1\n2\n3\n4\nfive\n6\n";
        for block_lines in [1, 2, 3, MAX_BLOCK_LINES] {
            let message = run(input, None, false, block_lines)
                .unwrap_err()
                .to_string();
            assert_eq!(message, "in.txt:5: 'f' at byte 1 is not a decimal digit");
        }
        let third = || csv("3", b',');
        let message = run(b"h\n1,2,3\n1,2\n", third(), true, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(message, "in.txt:3: no column 3: the line has 2 fields");
        for column in ["a", "2"] {
            let message = run(b"\"h,a\n1,2\n", csv(column, b','), true, 1)
                .unwrap_err()
                .to_string();
            assert_eq!(
                message,
                "the header: a quoted field is never closed (RFC 4180: `\"` ends it)"
            );
        }
        // A record's line is the line it starts on.
        let message = run(b"h\n\"1\n2\",3\n4,x\n", csv("2", b','), true, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "in.txt:4: column 2: 'x' at byte 1 is not a decimal digit"
        );
        // A line without the column is not a null, but a blank line is no row.
        let message = run(b"1,2,3\n\r\n\n1\n", third(), false, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(message, "in.txt:4: no column 3: the line has 1 field");
        let message = run(b"a,b,c\n", third(), false, 1).unwrap_err().to_string();
        assert_eq!(
            message,
            "in.txt:1: column 3: 'c' at byte 1 is not a decimal digit (if line 1 is a header, add --header)"
        );
        let message = run(b"10000000000000000\n", None, false, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "in.txt:1: the value is not below the domain size 10000000000000000"
        );
    }

    #[test]
    fn cipher_errors_name_the_line_not_the_value() {
        let digit = Refuse(MessageError::DigitOutOfRange {
            message: 1,
            position: 3,
            radix: 100,
        });
        let message = run_with(&digit, b"h\nx,12\nx,34\n", csv("2", b','), true, 2)
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "in.txt:3: column 2: digit 3 is not below its radix 100"
        );
        let value = Refuse(MessageError::ValueOutOfDomain { message: 2 });
        let message = run_with(&value, b"1\n2\n3\n", None, false, 3)
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "in.txt:3: the value is not below the domain size 10000000000000000"
        );
        let length = Refuse(MessageError::MessageLength {
            expected: 8,
            actual: 7,
        });
        let message = run_with(&length, b"1\n", None, false, 3)
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "in.txt: 7 digits given, not a whole number of 8-digit messages"
        );
    }

    #[test]
    fn block_sizes() {
        let cheap = block_lines([100; 8].into_iter(), 16);
        assert_eq!(cheap, MAX_BLOCK_LINES);
        let dear = block_lines([1 << 20; 3].into_iter(), 16);
        assert_eq!(dear, MIN_BLOCK_LINES);
    }

    /// Writes each message's row tweak field (a decimal, after the context's `-t` part) as
    /// its value.
    struct FieldOfTweak;

    impl FieldOfTweak {
        fn field(tweak: &[u8]) -> u64 {
            let field = &tweak[crate::formatted::TWEAK_COLUMN_TAG.len() + 4 + 1 + 4..];
            std::str::from_utf8(field).unwrap().parse().unwrap()
        }
    }

    impl Transform for FieldOfTweak {
        fn ints_u64(&self, values: &mut [u64], tweak: Tweak<'_>) -> Result<(), MessageError> {
            let Tweak::PerMessage(tweaks) = tweak else {
                panic!("{tweak:?}")
            };
            assert_eq!(tweaks.len(), values.len());
            for (value, tweak) in values.iter_mut().zip(tweaks) {
                *value = Self::field(tweak);
            }
            Ok(())
        }
        fn ints_u128(&self, _: &mut [u128], _: Tweak<'_>) -> Result<(), MessageError> {
            unreachable!()
        }
        fn digits(&self, _: &mut [u32], _: Tweak<'_>) -> Result<(), MessageError> {
            unreachable!()
        }
    }

    #[test]
    fn each_row_gets_its_own_tweak_across_chunks_and_blocks() {
        let lines = 2 * CHUNK_LINES + 3;
        let mut input = b"field,value,tweak\n".to_vec();
        let mut expected = input.clone();
        for i in 0..lines {
            input.extend_from_slice(format!("f,{},{}\n", i % 7, 5 * i).as_bytes());
            expected.extend_from_slice(format!("f,{:016},{}\n", 5 * i, 5 * i).as_bytes());
        }
        for (value, tweak_column) in [("2", "3"), ("value", "tweak")] {
            let columns = IntegerColumns {
                tweak_column: csv(tweak_column, b',').map(|c| c.value),
                tweak: b"t",
                ..csv(value, b',').unwrap()
            };
            for block_lines in [lines, CHUNK_LINES + 1, 1000] {
                let out = run_with(
                    &FieldOfTweak,
                    &input,
                    Some(columns.clone()),
                    true,
                    block_lines,
                );
                assert!(out.unwrap() == expected, "{block_lines} lines a block");
            }
        }
    }
}
