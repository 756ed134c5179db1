//! Strings of a format (`--format`, `--template`, `--alphabet`, `--column N:FORMAT`): whole
//! lines or RFC 4180 CSV columns, encrypted by the `riffpe-format` crate a block at a time.
//!
//! Each block of records is cut into chunks spread over the current rayon pool; in a chunk,
//! every column's values go through [`FormatCipher::encrypt_many`] together (values of equal
//! radices run in lockstep), and the chunk's output is the input with those fields replaced.
//! Every other byte, quotes of untouched fields and line endings included, passes through.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::io::{Read, Write};

use anyhow::{Context, Result, anyhow};
use rayon::prelude::*;
use riffpe_format::{BulkError, BulkScratch, FormatCipher};

use crate::args::ColumnRef;
use crate::bulk::{LineReader, Source};
use crate::columns::{self, header_names, tweak_column_encrypted};
use crate::engine::Direction;
use crate::progress::Progress;
use crate::records::{self, CsvField, Quoting, RecordError, count_lines};

/// The most records in a block.
pub const BLOCK_RECORDS: usize = 1 << 16;
/// Records per parallel task: one `encrypt_many_in` call per column.
const CHUNK_RECORDS: usize = 1 << 11;

thread_local! {
    /// Each worker's buffers for the format calls, kept from chunk to chunk: fresh ones for
    /// every call can be fresh pages from the kernel (glibc's large blocks), faulted in and
    /// zeroed.
    static SCRATCH: RefCell<BulkScratch> = RefCell::default();
}

/// The bytes that start every context a tweak column makes (see [`row_context`]).
pub const TWEAK_COLUMN_TAG: &[u8] = b"riffpe-cli/tweak-column\x00";

/// The context of a row under `--tweak-column`:
/// `TWEAK_COLUMN_TAG || LE32(len(tweak)) || tweak || LE32(len(field)) || field`, where `tweak`
/// is `-t`/`--tweak-text` (empty by default) and `field` the tweak column's value (after CSV
/// unquoting), appended to `out`. Every part has its length, so distinct pairs never share a
/// context.
pub fn row_context(tweak: &[u8], field: &[u8], out: &mut Vec<u8>) -> Result<(), RecordError> {
    let len = |bytes: &[u8]| u32::try_from(bytes.len()).map_err(|_| RecordError::TweakTooLong);
    out.extend_from_slice(TWEAK_COLUMN_TAG);
    out.extend_from_slice(&len(tweak)?.to_le_bytes());
    out.extend_from_slice(tweak);
    out.extend_from_slice(&len(field)?.to_le_bytes());
    out.extend_from_slice(field);
    Ok(())
}

/// Where the values are in a record.
#[derive(Debug)]
pub enum FormatLayout {
    /// The whole line (without its ending) is one value.
    Lines(Box<FormatCipher>),
    /// RFC 4180 fields.
    Csv {
        /// The byte between fields.
        delimiter: u8,
        /// Each column to process and its cipher.
        columns: Vec<(ColumnRef, FormatCipher)>,
        /// Where each row's tweak comes from.
        tweak_column: Option<ColumnRef>,
    },
}

/// One run of formatted values over one input.
#[derive(Debug)]
pub struct FormatPipeline<'a> {
    /// Where the values are, and their ciphers.
    pub layout: FormatLayout,
    /// Whether the first record is a header, copied unchanged (and naming the columns).
    pub header: bool,
    /// Encrypt or decrypt.
    pub direction: Direction,
    /// `-t`/`--tweak-text`, part of every row's context under a tweak column.
    pub tweak: &'a [u8],
    /// Records per block.
    pub block_records: usize,
}

/// The columns once the header is known: field index and cipher of each, in field order.
#[derive(Debug)]
struct Columns<'c> {
    targets: Vec<(usize, &'c FormatCipher)>,
    tweak: Option<usize>,
    names: Vec<String>,
}

/// Why a record was refused, and where.
#[derive(Debug)]
struct Failure {
    /// Index of the record in its block (header excluded).
    record: usize,
    /// 0-based field index, for CSV.
    column: Option<usize>,
    reason: Reason,
}

#[derive(Debug)]
enum Reason {
    Record(RecordError),
    Format(riffpe_format::Error),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Record(e) => e.fmt(f),
            Reason::Format(e) => e.fmt(f),
        }
    }
}

/// One encrypted field of a record: where it is and which value replaces it.
#[derive(Clone, Copy, Debug)]
struct Spot {
    start: usize,
    end: usize,
    quoted: bool,
    /// The cipher's index and the value's index in its list; `None` passes the field through.
    value: Option<(usize, usize)>,
}

impl FormatPipeline<'_> {
    /// Processes every record of `input` into `output` (named `output_name` in messages).
    /// Returns the number of records.
    pub fn run<R: Read, W: Write>(
        &self,
        input: R,
        source: &Source,
        output: &mut W,
        output_name: &str,
        progress: &Progress,
    ) -> Result<u64> {
        let mut reader = match &self.layout {
            FormatLayout::Lines(_) => LineReader::new(input),
            FormatLayout::Csv { delimiter, .. } => LineReader::csv(input, *delimiter),
        };
        let write_error = || format!("cannot write {output_name}");
        let mark = reader
            .byte_order_mark()
            .with_context(|| format!("cannot read {source}"))?;
        output.write_all(mark).with_context(write_error)?;
        let mut columns = match self.header {
            true => None,
            false => Some(self.columns(None)?),
        };
        let mut line = 1u64;
        let mut records = 0u64;
        let mut outputs: Vec<Vec<u8>> = Vec::new();
        while reader
            .next_block(self.block_records)
            .with_context(|| format!("cannot read {source}"))?
        {
            let (text, ends) = (reader.text(), reader.ends());
            let origin = match &columns {
                Some(_) => 0,
                None => {
                    columns = Some(self.columns(Some(&text[..ends[0]]))?);
                    ends[0]
                }
            };
            let first = usize::from(origin > 0);
            let Some(cols) = &columns else { continue };
            let body_line = line + count_lines(&text[..origin]);
            self.block(text, origin, &ends[first..], cols, &mut outputs)
                .map_err(|f| {
                    self.failure(f, source, body_line, text, origin, &ends[first..], cols)
                })?;
            output
                .write_all(&text[..origin])
                .with_context(write_error)?;
            for out in &outputs {
                output.write_all(out).with_context(write_error)?;
            }
            progress.advance(text.len() as u64);
            line += count_lines(text);
            records += ends.len() as u64;
        }
        Ok(records)
    }

    /// Resolves the columns against the header record (with its line ending), if any.
    fn columns(&self, header: Option<&[u8]>) -> Result<Columns<'_>> {
        let (delimiter, specs, tweak_column) = match &self.layout {
            FormatLayout::Lines(cipher) => {
                return Ok(Columns {
                    targets: vec![(0, cipher)],
                    tweak: None,
                    names: Vec::new(),
                });
            }
            FormatLayout::Csv {
                delimiter,
                columns,
                tweak_column,
            } => (delimiter, columns, tweak_column),
        };
        let names = header.map(|h| header_names(h, *delimiter)).transpose()?;
        let find =
            |column: &ColumnRef, option: &str| columns::find(column, names.as_deref(), option);
        let mut targets = Vec::with_capacity(specs.len());
        for (column, cipher) in specs {
            let index = find(column, "--column")?;
            if targets.iter().any(|&(i, _)| i == index) {
                return Err(anyhow!(
                    "--column {column}: column {} is given twice",
                    index + 1
                ));
            }
            targets.push((index, cipher));
        }
        targets.sort_by_key(|&(i, _)| i);
        let tweak = match tweak_column {
            Some(column) => {
                let index = find(column, "--tweak-column")?;
                if targets.iter().any(|&(i, _)| i == index) {
                    return Err(tweak_column_encrypted(column, index));
                }
                Some(index)
            }
            None => None,
        };
        Ok(Columns {
            targets,
            tweak,
            names: names.unwrap_or_default(),
        })
    }

    /// The one-line message for a refused record: `file:line: column C: reason`.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn failure(
        &self,
        failure: Failure,
        source: &Source,
        line: u64,
        text: &[u8],
        origin: usize,
        ends: &[usize],
        columns: &Columns<'_>,
    ) -> anyhow::Error {
        let start = match failure.record {
            0 => origin,
            i => ends[i - 1],
        };
        let line = match self.layout {
            FormatLayout::Lines(_) => line + failure.record as u64,
            FormatLayout::Csv { .. } => line + count_lines(&text[origin..start]),
        };
        let column = match failure.column {
            None => String::new(),
            Some(i) => match columns.names.get(i) {
                Some(name) => format!("column {} ({name}): ", i + 1),
                None => format!("column {}: ", i + 1),
            },
        };
        anyhow!("{}: {column}{}", source.at(line), failure.reason)
    }

    /// Processes the records of a block (record `i` ends at `ends[i]`, the first starts at
    /// `origin`) into `outputs`, one buffer per chunk.
    fn block(
        &self,
        text: &[u8],
        origin: usize,
        ends: &[usize],
        columns: &Columns<'_>,
        outputs: &mut Vec<Vec<u8>>,
    ) -> Result<(), Failure> {
        let chunks = ends.len().div_ceil(CHUNK_RECORDS);
        outputs.resize_with(chunks, Vec::new);
        let failures: Vec<Failure> = outputs
            .par_iter_mut()
            .enumerate()
            .filter_map(|(chunk, out)| {
                let first = chunk * CHUNK_RECORDS;
                let last = ends.len().min(first + CHUNK_RECORDS);
                let start = |i: usize| if i == 0 { origin } else { ends[i - 1] };
                out.clear();
                self.chunk(text, start, &ends[..last], first, columns, out)
                    .err()
            })
            .collect();
        match failures.into_iter().min_by_key(|f| f.record) {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }

    /// Records `first..ends.len()` into `out`.
    fn chunk(
        &self,
        text: &[u8],
        start: impl Fn(usize) -> usize,
        ends: &[usize],
        first: usize,
        columns: &Columns<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), Failure> {
        let delimiter = match self.layout {
            FormatLayout::Csv { delimiter, .. } => Some(delimiter),
            FormatLayout::Lines(_) => None,
        };
        let targets = &columns.targets;
        let mut spots: Vec<Spot> = Vec::with_capacity((ends.len() - first) * targets.len());
        let mut values: Vec<Vec<(Cow<'_, str>, usize)>> = vec![Vec::new(); targets.len()];
        let mut contexts: Vec<Vec<u8>> = Vec::new();
        let mut fields: Vec<CsvField> = Vec::new();
        let mut refused: Option<Failure> = None;
        let mut last = ends.len();
        'records: for i in first..ends.len() {
            let from = start(i);
            let (content, _) = records::split_line_ending(&text[from..ends[i]]);
            // A blank line is no row (CSV readers skip it): it passes through, as a null does in
            // every column it lacks.
            if content.is_empty() && delimiter.is_some() {
                if columns.tweak.is_some() {
                    contexts.push(Vec::new());
                }
                let blank = || Spot {
                    start: from,
                    end: from,
                    quoted: false,
                    value: None,
                };
                spots.extend(targets.iter().map(|_| blank()));
                continue;
            }
            // A missing column is named in the reason; CSV errors name their column.
            let at = |column: Option<usize>, e: RecordError| Failure {
                record: i,
                column: match e {
                    RecordError::MissingColumn { .. } => None,
                    _ => column.filter(|_| delimiter.is_some()),
                },
                reason: Reason::Record(e),
            };
            match delimiter {
                None => {
                    fields.clear();
                    fields.push(CsvField {
                        range: 0..content.len(),
                        quoted: false,
                    });
                }
                Some(d) => {
                    if let Err(e) = records::csv_fields(content, d, &mut fields) {
                        refused = Some(at(None, e));
                        last = i;
                        break 'records;
                    }
                }
            }
            let column = |index: usize| {
                fields.get(index).ok_or(RecordError::MissingColumn {
                    column: index.saturating_add(1),
                    fields: if content.is_empty() { 0 } else { fields.len() },
                })
            };
            if let Some(index) = columns.tweak {
                let context = column(index)
                    .and_then(|field| field.value(content))
                    .and_then(|value| {
                        let mut context = Vec::new();
                        row_context(self.tweak, &value, &mut context).map(|()| context)
                    });
                match context {
                    Ok(context) => contexts.push(context),
                    Err(e) => {
                        refused = Some(at(Some(index), e));
                        last = i;
                        break 'records;
                    }
                }
            }
            let mark = spots.len();
            for (t, &(index, _)) in targets.iter().enumerate() {
                let parsed = column(index).and_then(|field| {
                    let value = field.value(content)?;
                    Ok((field.clone(), value))
                });
                let (field, value) = match parsed {
                    Ok(found) => found,
                    Err(e) => {
                        refused = Some(at(Some(index), e));
                        spots.truncate(mark);
                        last = i;
                        break 'records;
                    }
                };
                let value = match value.is_empty() {
                    // Empty fields (nulls in exports) pass through.
                    true => None,
                    false => match utf8(value) {
                        Some(value) => {
                            values[t].push((value, i));
                            Some((t, values[t].len() - 1))
                        }
                        None => {
                            refused = Some(at(Some(index), RecordError::NotUtf8));
                            spots.truncate(mark);
                            last = i;
                            break 'records;
                        }
                    },
                };
                spots.push(Spot {
                    start: from + field.range.start,
                    end: from + field.range.end,
                    quoted: field.quoted,
                    value,
                });
            }
        }
        // Values of records before a refused one are still checked: the earliest error wins.
        for v in &mut values {
            v.retain(|&(_, record)| record < last);
        }

        let mut tokens: Vec<Vec<String>> = Vec::with_capacity(targets.len());
        let mut scratch = SCRATCH.with_borrow_mut(std::mem::take);
        for (t, &(index, cipher)) in targets.iter().enumerate() {
            let list = &values[t];
            let done = match columns.tweak {
                None => {
                    let plain: Vec<&str> = list.iter().map(|(v, _)| v.as_ref()).collect();
                    match self.direction {
                        Direction::Encrypt => cipher.encrypt_many_in(&plain, &mut scratch),
                        Direction::Decrypt => cipher.decrypt_many_in(&plain, &mut scratch),
                    }
                }
                Some(_) => {
                    let pairs: Vec<(&str, &[u8])> = list
                        .iter()
                        .map(|(v, r)| (v.as_ref(), contexts[r - first].as_slice()))
                        .collect();
                    match self.direction {
                        Direction::Encrypt => {
                            cipher.encrypt_many_with_contexts_in(&pairs, &mut scratch)
                        }
                        Direction::Decrypt => {
                            cipher.decrypt_many_with_contexts_in(&pairs, &mut scratch)
                        }
                    }
                }
            };
            match done {
                Ok(list) => tokens.push(list),
                Err(BulkError { index: at, error }) => {
                    let failure = Failure {
                        record: list[at].1,
                        column: Some(index).filter(|_| delimiter.is_some()),
                        reason: Reason::Format(error),
                    };
                    let earlier = refused.as_ref().is_none_or(|r| failure.record < r.record);
                    if earlier {
                        refused = Some(failure);
                    }
                }
            }
        }
        SCRATCH.set(scratch);
        if let Some(failure) = refused {
            return Err(failure);
        }

        let mut spots = spots.iter();
        for i in first..ends.len() {
            let mut cursor = start(i);
            for spot in spots.by_ref().take(targets.len()) {
                out.extend_from_slice(&text[cursor..spot.start]);
                match (spot.value, delimiter) {
                    (None, _) => out.extend_from_slice(&text[spot.start..spot.end]),
                    (Some((t, v)), None) => out.extend_from_slice(tokens[t][v].as_bytes()),
                    (Some((t, v)), Some(d)) => {
                        let quoting = match spot.quoted {
                            true => Quoting::Quoted,
                            false
                                if text[spot.start..spot.end]
                                    .iter()
                                    .any(|&b| b == b'"' || b == b'\r') =>
                            {
                                Quoting::Bare
                            }
                            false => Quoting::Plain,
                        };
                        records::write_csv_field(tokens[t][v].as_bytes(), d, quoting, out);
                    }
                }
                cursor = spot.end;
            }
            out.extend_from_slice(&text[cursor..ends[i]]);
        }
        Ok(())
    }
}

/// The value as text, borrowed when it can be.
fn utf8(value: Cow<'_, [u8]>) -> Option<Cow<'_, str>> {
    match value {
        Cow::Borrowed(bytes) => std::str::from_utf8(bytes).ok().map(Cow::Borrowed),
        Cow::Owned(bytes) => String::from_utf8(bytes).ok().map(Cow::Owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bulk::tests::Trickle;
    use riffpe_format::Format;

    fn cipher(name: &str) -> FormatCipher {
        FormatCipher::new(&[0x2b; 16], Format::named(name).unwrap()).unwrap()
    }

    fn run(input: &[u8], direction: Direction, block_records: usize) -> Result<Vec<u8>> {
        let pipeline = FormatPipeline {
            layout: FormatLayout::Csv {
                delimiter: b',',
                columns: vec![
                    (ColumnRef::Name("ssn".into()), cipher("ssn")),
                    (ColumnRef::Index(3), cipher("card")),
                ],
                tweak_column: Some(ColumnRef::Index(0)),
            },
            header: true,
            direction,
            tweak: b"",
            block_records,
        };
        let mut out = Vec::new();
        let source = Source::File("in.csv".into());
        pipeline.run(Trickle(input), &source, &mut out, "out", &Progress::none())?;
        Ok(out)
    }

    #[test]
    fn records_across_reads_and_blocks_round_trip() {
        let input = "who,ssn,note,card\r\n\"a\r\nb\",123-45-6789,\"x,\"\"y\"\"\",4111 1111 1111 1111\r\nc,,,\r\n\"\",\"078-05-1120\",,5500-0000-0000-0004";
        let whole = run(input.as_bytes(), Direction::Encrypt, BLOCK_RECORDS).unwrap();
        for block_records in [1, 2, 3] {
            let out = run(input.as_bytes(), Direction::Encrypt, block_records).unwrap();
            assert_eq!(out, whole, "{block_records}");
            let back = run(&out, Direction::Decrypt, block_records).unwrap();
            assert_eq!(back, input.as_bytes(), "{block_records}");
        }
        let text = String::from_utf8(whole).unwrap();
        assert!(text.starts_with("who,ssn,note,card\r\n\"a\r\nb\","));
        assert!(text.contains(",\"x,\"\"y\"\"\","));
        assert!(text.contains("\r\nc,,,\r\n\"\",\""));
    }

    #[test]
    fn errors_give_the_first_line_of_their_record() {
        let input = b"who,ssn,note,card\n\"a\nb\nc\",123-45-6789,,\nd,12-345-6789,,\n";
        for block_records in [1, 2, BLOCK_RECORDS] {
            let message = run(input, Direction::Encrypt, block_records)
                .unwrap_err()
                .to_string();
            assert_eq!(
                message,
                "in.csv:5: column 2 (ssn): the 3rd character is not in the format's alphabet for that position, nor a passthrough character"
            );
        }
    }

    #[test]
    fn tweak_contexts_are_length_prefixed() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        row_context(b"ab", b"c", &mut a).unwrap();
        row_context(b"a", b"bc", &mut b).unwrap();
        assert_ne!(a, b);
        assert_eq!(
            a,
            b"riffpe-cli/tweak-column\x00\x02\x00\x00\x00ab\x01\x00\x00\x00c"
        );
    }
}
