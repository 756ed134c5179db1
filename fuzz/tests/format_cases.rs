//! Hand-picked cases of the `formats` target: the sample customer rows, quoted fields with
//! delimiters and line breaks, templates that do and do not parse. The fuzz harness prints a
//! failing case as a test to paste here.
#![cfg(feature = "cli")]

use riffpe_fuzz::formats::{self, FormatsCase};

fn case(template: &str, named: usize, csv: &[u8]) -> FormatsCase {
    FormatsCase {
        template: template.into(),
        named,
        keep: (0, 0),
        luhn: 0,
        values: vec![
            "4111 1111 1111 1111".into(),
            "123-45-6789".into(),
            "a1234567".into(),
            "".into(),
            "é".into(),
        ],
        delimiter: b',',
        header: true,
        block_records: 1,
        csv: csv.to_vec(),
    }
}

#[test]
fn hand_picked_cases_pass() {
    let customers = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/data/customers.csv"
    ))
    .expect("the sample file");
    let cases = [
        case("999-99-9999", 0, &customers),
        case(
            "A9{7}",
            1,
            b"id,who,card\r\na1,\"x,\"\"y\",\"4111\r\n1111\"\r\n",
        ),
        case("[a-f0-9]{8}", 4, b"\"unclosed,1,2\n"),
        case("9{", 6, b"a\"b,c,\"d\"e\n"),
        case("{digits}\\9x", 9, b",,\n\"\",\"\",\"\"\n"),
    ];
    for case in &cases {
        assert_eq!(formats::check(case), Ok(()), "{case:?}");
    }
}

/// The fuzzer's first failure: with `0` as the delimiter an `auto` token held the delimiter and
/// came back quoted. The command line refuses letter and digit delimiters, and so does the check.
#[test]
fn formats_check_digit_delimiter() {
    let case = FormatsCase {
        template: "x".into(),
        named: 9,
        keep: (1, 1),
        luhn: 1,
        values: vec![],
        delimiter: b'0',
        header: false,
        block_records: 2,
        csv: b"Z\"a4\"\"\"\"\"\"\"\"\"\"\"\",,1100;z;\t\t|,-11".to_vec(),
    };
    assert_eq!(formats::check(&case), Ok(()));
    let comma = FormatsCase {
        delimiter: b',',
        ..case
    };
    assert_eq!(formats::check(&comma), Ok(()));
}
