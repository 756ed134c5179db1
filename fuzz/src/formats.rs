//! The `formats` target's case and check: template parsing, format round trips (one value and
//! many), and the CLI's RFC 4180 reader and formatted-column pipeline, on any text.

use std::fmt::Write as _;

use arbitrary::{Arbitrary, Unstructured};
use riffpe_cli::args::ColumnRef;
use riffpe_cli::bulk::Source;
use riffpe_cli::engine::Direction;
use riffpe_cli::formatted::{FormatLayout, FormatPipeline};
use riffpe_cli::progress::Progress;
use riffpe_cli::records;
use riffpe_format::{Format, FormatCipher, Luhn, named_formats};

use crate::case::{Outcome, fnv1a, next};
use crate::check::ensure;

/// The key of every case.
const KEY: [u8; 16] = *b"riffpe formats!!";

/// Delimiters worth trying: common ones and ones that collide with quotes and values.
const DELIMITERS: [u8; 8] = [b',', b';', b'\t', b'|', b' ', b'a', b'0', b'-'];

/// One decoded `formats` case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatsCase {
    /// A template to parse (and, if it parses, to round-trip `values` through).
    pub template: String,
    /// Index into `named_formats()`.
    pub named: usize,
    /// `keep_prefix`, `keep_suffix`.
    pub keep: (usize, usize),
    /// 0 the named format's own, 1 off, 2 preserve, 3 invalid.
    pub luhn: u8,
    /// Values for both formats.
    pub values: Vec<String>,
    /// The CSV delimiter.
    pub delimiter: u8,
    /// Whether the first record is a header.
    pub header: bool,
    /// Records per block.
    pub block_records: usize,
    /// CSV text for the pipeline.
    pub csv: Vec<u8>,
}

impl<'a> Arbitrary<'a> for FormatsCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<FormatsCase> {
        let flags = next::<u8>(u)?;
        let template_len = usize::from(next::<u8>(u)? % 24);
        let template = text(u, template_len, TEMPLATE_CHARS)?;
        let named = usize::from(next::<u8>(u)?) % named_formats().len();
        let keep = (
            usize::from(next::<u8>(u)? % 8),
            usize::from(next::<u8>(u)? % 8),
        );
        let mut values = Vec::new();
        for _ in 0..next::<u8>(u)? % 6 {
            let len = usize::from(next::<u8>(u)? % 24);
            values.push(text(u, len, VALUE_CHARS)?);
        }
        let rest = u.bytes(u.len())?;
        Ok(FormatsCase {
            template,
            named,
            keep,
            luhn: flags & 3,
            values,
            delimiter: DELIMITERS[usize::from(flags >> 2 & 7)],
            header: flags & 32 != 0,
            block_records: 1 + usize::from(flags >> 6),
            csv: rest
                .iter()
                .map(|&b| CSV_BYTES[usize::from(b) % CSV_BYTES.len()])
                .collect(),
        })
    }
}

/// What templates are made of: every item kind, a few literals, a non-ASCII character.
const TEMPLATE_CHARS: &[char] = &[
    '9', 'a', 'A', 'x', '[', ']', '{', '}', '-', '\\', '0', '1', '4', 'z', 'h', 'e', 'd', 'i', 'g',
    't', 's', ',', 'é',
];
/// What values are made of: digits, letters, separators, a non-ASCII character.
const VALUE_CHARS: &[char] = &[
    '0', '1', '4', '7', '9', 'a', 'f', 'z', 'A', 'F', 'Z', ' ', '-', '+', '(', ')', '.', 'é',
];
/// What CSV text is made of: quotes, delimiters, line breaks, values, a UTF-8 lead byte.
const CSV_BYTES: &[u8] = b"\",;\t| a0-\r\n\n4111 1111 1111 1111Zz\xc3\xa9\xff";

fn text(u: &mut Unstructured<'_>, len: usize, chars: &[char]) -> arbitrary::Result<String> {
    (0..len)
        .map(|_| Ok(chars[usize::from(next::<u8>(u)?) % chars.len()]))
        .collect()
}

impl FormatsCase {
    /// A `#[test]` that rebuilds this case and runs `check` (`formats::check`) on it.
    pub fn reproducer(&self, check: &str) -> String {
        let mut s = String::new();
        let name = check.replace("::", "_");
        let hash = fnv1a(format!("{self:?}").as_bytes());
        let _ = writeln!(s, "#[test]");
        let _ = writeln!(s, "fn {name}_{hash:08x}() {{");
        let _ = writeln!(s, "    let case = FormatsCase {{");
        let _ = writeln!(s, "        template: {:?}.into(),", self.template);
        let _ = writeln!(s, "        named: {},", self.named);
        let _ = writeln!(s, "        keep: {:?},", self.keep);
        let _ = writeln!(s, "        luhn: {},", self.luhn);
        let values: Vec<String> = self
            .values
            .iter()
            .map(|v| format!("{v:?}.into()"))
            .collect();
        let _ = writeln!(s, "        values: vec![{}],", values.join(", "));
        let _ = writeln!(
            s,
            "        delimiter: b'{}',",
            [self.delimiter].escape_ascii()
        );
        let _ = writeln!(s, "        header: {},", self.header);
        let _ = writeln!(s, "        block_records: {},", self.block_records);
        let _ = writeln!(s, "        csv: b\"{}\".to_vec(),", self.csv.escape_ascii());
        let _ = writeln!(s, "    }};");
        let _ = writeln!(s, "    assert_eq!({check}(&case), Ok(()));");
        let _ = writeln!(s, "}}");
        s
    }

    /// The named format with the case's options.
    fn named_format(&self) -> Format {
        let mut format = named_formats()[self.named]
            .format()
            .keep_prefix(self.keep.0)
            .keep_suffix(self.keep.1)
            .allow_small_domain(true);
        format = match self.luhn {
            1 => format.luhn(Luhn::Off),
            2 => format.luhn(Luhn::Preserve),
            3 => format.luhn(Luhn::Invalid),
            _ => format,
        };
        format
    }
}

/// Template parsing never panics; every value a format accepts round-trips, one at a time and
/// in bulk; the CSV pipeline either refuses its text or gives it back byte for byte.
pub fn check(case: &FormatsCase) -> Outcome {
    for optional in [false, true] {
        if let Ok(format) = Format::template(&case.template)
            && let Ok(cipher) = FormatCipher::new(
                &KEY,
                format.allow_small_domain(true).literals_optional(optional),
            )
        {
            round_trips(&cipher, &case.values, "template")?;
        }
    }
    if let Ok(cipher) = FormatCipher::new(&KEY, case.named_format()) {
        round_trips(&cipher, &case.values, "named")?;
    }
    csv(case)
}

fn round_trips(cipher: &FormatCipher, values: &[String], what: &str) -> Outcome {
    let mut accepted = Vec::new();
    for value in values {
        if let Ok(token) = cipher.encrypt(value) {
            ensure!(
                token.chars().count() == value.chars().count(),
                "{what}: the token's length differs"
            );
            let back = cipher.decrypt(&token);
            ensure!(
                back.as_deref() == Ok(value.as_str()),
                "{what}: decrypt(encrypt(v)) = {back:?}, not v"
            );
            accepted.push((value.as_str(), token));
        }
    }
    let plain: Vec<&str> = accepted.iter().map(|(v, _)| *v).collect();
    let tokens: Vec<&str> = accepted.iter().map(|(_, t)| t.as_str()).collect();
    let many = cipher.encrypt_many(&plain);
    let same = many
        .as_ref()
        .is_ok_and(|m| m.iter().map(String::as_str).eq(tokens.iter().copied()));
    ensure!(
        same,
        "{what}: encrypt_many differs from encrypt one by one: {many:?}"
    );
    Ok(())
}

fn csv(case: &FormatsCase) -> Outcome {
    let mut fields = Vec::new();
    let mut rest = &case.csv[..];
    while !rest.is_empty() {
        let end = records::csv_record_end(rest, case.delimiter).unwrap_or(rest.len());
        let (content, _) = records::split_line_ending(&rest[..end]);
        if records::csv_fields(content, case.delimiter, &mut fields).is_ok() {
            for field in &fields {
                let _ = field.value(content);
            }
        }
        rest = &rest[end..];
    }

    // The command line refuses these delimiters: tokens are made of letters and digits.
    if case.delimiter.is_ascii_alphanumeric() {
        return Ok(());
    }
    let run = |text: &[u8], direction: Direction| {
        let cipher = |name: &str| {
            let format = Format::named(name).expect("a named format");
            FormatCipher::new(&KEY, format.allow_small_domain(true)).expect("a cipher")
        };
        let pipeline = FormatPipeline {
            layout: FormatLayout::Csv {
                delimiter: case.delimiter,
                columns: vec![
                    (ColumnRef::Index(0), cipher("auto")),
                    (ColumnRef::Index(2), cipher("auto")),
                ],
                tweak_column: Some(ColumnRef::Index(1)),
            },
            header: case.header,
            direction,
            tweak: b"t",
            block_records: case.block_records,
        };
        let mut out = Vec::new();
        let source = Source::File("fuzz.csv".into());
        pipeline
            .run(text, &source, &mut out, "out", &Progress::none())
            .map(|_| out)
            .map_err(|e| e.to_string())
    };
    let Ok(tokens) = run(&case.csv, Direction::Encrypt) else {
        return Ok(());
    };
    let back = run(&tokens, Direction::Decrypt);
    ensure!(
        back.as_deref() == Ok(&case.csv[..]),
        "the CSV pipeline does not give the text back: {back:?}"
    );
    Ok(())
}
