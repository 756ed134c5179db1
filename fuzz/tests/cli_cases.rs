//! Hand-picked cases of the `cli_records` target: SPEC's CLI examples, the integer types'
//! boundaries, every record error. The fuzz harness prints a failing case as a test to paste
//! here.
#![cfg(feature = "cli")]

use riffpe::integer::DigitOrder;
use riffpe_batch::Mode;
use riffpe_cli::bulk::Layout;
use riffpe_fuzz::case::{Params, hex};
use riffpe_fuzz::cli::{self, CliCase};

/// A CSV case over Riffpe(`radix`, `digits`) with `text`.
fn csv(radix: u32, digits: usize, index: usize, delimiter: u8, text: &[u8]) -> CliCase {
    CliCase {
        params: Params::Riffpe { radix, digits },
        key: hex("00112233445566778899aabbccddeeff"),
        bytes_per_value: 16,
        order: DigitOrder::LittleEndian,
        layout: Layout::Csv { index, delimiter },
        header: false,
        mode: Mode::Lockstep,
        block_lines: 2,
        splits: [1, 5],
        max: 9_999,
        width: 20,
        text: text.to_vec(),
    }
}

fn lines(radix: u32, digits: usize, text: &[u8]) -> CliCase {
    CliCase {
        layout: Layout::Lines,
        ..csv(radix, digits, 0, b',', text)
    }
}

fn cli_cases() -> Vec<CliCase> {
    let mut big_endian = lines(100, 8, b"1234123456785678\n7856785634123412\n");
    big_endian.order = DigitOrder::BigEndian;
    let mut header = csv(10, 4, 1, b';', b"name;pin\r\nalice;0042\r\nbob;7\r\n");
    header.header = true;
    let mut mixed = csv(10, 3, 0, b'\t', b"259\t\xff\n0\t\n");
    mixed.params = Params::RiffpeX {
        radices: vec![26, 10, 7],
    };
    mixed.mode = Mode::Parallel;
    let mut bom_header = csv(10, 4, 1, b',', b"\xef\xbb\xbfname,pin\nalice,0042\n");
    bom_header.header = true;
    let mut long = lines(2, 130, b"1\n2\n");
    long.block_lines = 1;
    let mut cases = vec![
        // SPEC's CLI examples, whole lines, LF and CRLF and no final ending.
        lines(100, 8, b"1234123456785678\n5158543106053628\r\n0"),
        big_endian,
        header,
        mixed,
        bom_header,
        // Domains on the u64/u128/big-integer boundaries: 2^64 = 65536^4, 2^128 = 2^128.
        lines(65_536, 4, b"18446744073709551615\n18446744073709551616\n"),
        lines(2, 64, b"18446744073709551615\n"),
        lines(2, 127, b"170141183460469231731687303715884105727\n"),
        long,
        // RFC 4180: a quoted integer, a quoted delimiter and line break before the column.
        csv(10, 4, 1, b',', b"x,\"1\"\n\"\",\"\"\n"),
        csv(10, 4, 2, b',', b"\"a,b\",x,0042\r\n\"c\nd\"\"\",y,7\n"),
        // Errors: text after a closing quote, a quote never closed, a missing column.
        csv(10, 4, 1, b',', b"x,\"1\"2\n"),
        csv(10, 4, 1, b',', b"x,1\n\"y,2\n"),
        csv(10, 4, 3, b',', b"1,2\n"),
    ];
    let four_digit_lines: [&[u8]; 14] = [
        // Errors: not a digit, a sign, a space, out of the domain.
        b"12a4\n",
        b"-1\n",
        b" 1\n",
        b"10000\n",
        b"99999999999999999999999999999999999999999999\n",
        // An empty text, an empty line, a lone CR, non-ASCII.
        b"",
        b"\n",
        b"\r",
        "١٢".as_bytes(),
        // A byte order mark: alone, before lines (one before a header is `bom_header`); a part
        // of one is a line's; UTF-16's.
        b"\xef\xbb\xbf",
        b"\xef\xbb\xbf0042\r\n7\n",
        b"\xef\xbb\n1\n",
        b"\xff\xfe1\x00\n\x00",
        b"\xfe\xff",
    ];
    cases.extend(four_digit_lines.map(|text| lines(10, 4, text)));
    cases
}

#[test]
fn cli_edge_cases() {
    for case in cli_cases() {
        if let Err(failure) = cli::records(&case) {
            panic!("{failure}\n\n{}", case.reproducer("cli::records"));
        }
    }
}

/// Which delimiters the command line takes: the fuzz target's pipeline check covers exactly these.
#[test]
fn delimiters_the_command_line_accepts() {
    for byte in [b',', b';', b'\t', b'|', b' '] {
        assert!(cli::command_line_accepts(byte), "{:?}", char::from(byte));
    }
    for byte in [b'\n', b'\r', b'"', 0x80, 0xff] {
        assert!(!cli::command_line_accepts(byte), "{:?}", char::from(byte));
    }
}

/// `--delimiter 5` was once accepted, and encrypted fields then contained the delimiter (or,
/// where it was not their first digit, silently decrypted to another value). Digits are now
/// refused; the fuzzer's input is kept in `fuzz/regressions/cli_records/`.
#[test]
fn digit_delimiters_are_refused() {
    // Letters too: the format columns' tokens are made of them.
    for byte in (b'0'..=b'9').chain(b'a'..=b'z').chain(b'A'..=b'Z') {
        assert!(
            !cli::command_line_accepts(byte),
            "--delimiter {} is accepted",
            char::from(byte)
        );
    }
    let case = csv(10, 4, 0, b'5', b"1\n2\n3\n4\n");
    if let Err(failure) = cli::records(&case) {
        panic!("{failure}\n\n{}", case.reproducer("cli::records"));
    }
}
