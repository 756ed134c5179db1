//! Committed vectors of the format layer (`tests/data/vectors.jsonl`), replayed; and the
//! format layer shown to be core RiffpeX on the mapped digits with the documented tweak.
//!
//! Regenerate the file (only on purpose: it pins the tweak layout) with
//! `cargo test -p riffpe-format --test vectors -- --ignored write_vectors`.

use riffpe_format::{Format, FormatCipher, Luhn, Security};
use serde_json::{Value, json};

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/vectors.jsonl");

/// A format from its vector-file spelling: a named format, or `template:` followed by a template.
fn format(spec: &Value) -> Format {
    let name = spec["format"].as_str().unwrap();
    let mut f = match name.strip_prefix("template:") {
        Some(t) => Format::template(t).unwrap(),
        None => Format::named(name).unwrap(),
    };
    if let Some(n) = spec.get("keep_prefix") {
        f = f.keep_prefix(n.as_u64().unwrap() as usize);
    }
    if let Some(n) = spec.get("keep_suffix") {
        f = f.keep_suffix(n.as_u64().unwrap() as usize);
    }
    match spec.get("luhn").and_then(Value::as_str) {
        Some("preserve") => f = f.luhn(Luhn::Preserve),
        Some("invalid") => f = f.luhn(Luhn::Invalid),
        _ => {}
    }
    if spec.get("security").and_then(Value::as_u64) == Some(256) {
        f = f.security(Security::Bits256);
    }
    f
}

fn cipher(spec: &Value) -> FormatCipher {
    let key = hex::decode(spec["key"].as_str().unwrap()).unwrap();
    let context = hex::decode(spec["context"].as_str().unwrap_or("")).unwrap();
    FormatCipher::new(&key, format(spec))
        .unwrap()
        .context(&context)
}

const K128: &str = "2b7e151628aed2a6abf7158809cf4f3c";
const K256: &str = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";

/// The cases the file holds: (spec without input, inputs).
fn cases() -> Vec<(Value, Vec<&'static str>)> {
    vec![
        (
            json!({"format": "digits", "key": K128}),
            vec!["123456", "0000000000", "9999999999999999"],
        ),
        (
            json!({"format": "card", "key": K128}),
            vec![
                "4111111111111111",
                "4111 1111 1111 1111",
                "5500-0000-0000-0004",
                "378282246310005",
            ],
        ),
        (
            json!({"format": "card-keep-6-4", "key": K128}),
            vec!["4111111111111111110", "4111 1111 1111 1111 110"],
        ),
        (
            json!({"format": "card-keep-last-4", "key": K256}),
            vec!["4111111111111111", "6011000990139424"],
        ),
        (
            json!({"format": "ssn", "key": K128}),
            vec!["078-05-1120", "123-45-6789"],
        ),
        (
            json!({"format": "phone", "key": K128}),
            vec!["+1 (555) 010-9999", "555.010.1234", "5550101234"],
        ),
        (
            json!({"format": "alnum", "key": K128, "context": "7573657273"}),
            vec!["Alice2024", "zZ09"],
        ),
        (
            json!({"format": "auto", "key": K128}),
            vec!["AB-123456", "Flight LH 4711, seat 17C"],
        ),
        (
            json!({"format": "hex", "key": K128, "security": 256}),
            vec!["deadbeef", "0123456789abcdef"],
        ),
        (
            json!({"format": "uuid", "key": K256}),
            vec![
                "123e4567-e89b-12d3-a456-426614174000",
                "123E4567-E89B-12D3-A456-426614174000",
            ],
        ),
        (
            json!({"format": "digits", "key": K128, "luhn": "invalid", "keep_prefix": 1}),
            vec!["4111111111111111", "79927398713"],
        ),
        (
            json!({"format": "template:A9{7}", "key": K128}),
            vec!["K1234567"],
        ),
        (
            json!({"format": "template:[a-f0-9]{4}-x{4}", "key": K128, "keep_suffix": 2}),
            vec!["c0de-Ab12"],
        ),
    ]
}

#[test]
#[ignore = "writes tests/data/vectors.jsonl"]
fn write_vectors() {
    let mut out = String::new();
    for (spec, inputs) in cases() {
        let c = cipher(&spec);
        for input in inputs {
            let mut line = spec.clone();
            line["input"] = json!(input);
            line["output"] = json!(c.encrypt(input).unwrap());
            line["tweak"] = json!(hex::encode(c.tweak(input).unwrap()));
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    std::fs::write(FILE, out).unwrap();
}

#[test]
fn replay_vectors() {
    let text = std::fs::read_to_string(FILE).unwrap();
    let mut n = 0;
    for (i, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap();
        let c = cipher(&v);
        let input = v["input"].as_str().unwrap();
        let output = v["output"].as_str().unwrap();
        let tweak = v["tweak"].as_str().unwrap();
        assert_eq!(
            hex::encode(c.tweak(input).unwrap()),
            tweak,
            "line {}: tweak",
            i + 1
        );
        assert_eq!(
            hex::encode(c.tweak(output).unwrap()),
            tweak,
            "line {}: tweak of the output",
            i + 1
        );
        assert_eq!(c.encrypt(input).unwrap(), output, "line {}: encrypt", i + 1);
        assert_eq!(c.decrypt(output).unwrap(), input, "line {}: decrypt", i + 1);
        assert_eq!(
            c.encrypt_many(&[input]).unwrap(),
            [output],
            "line {}: bulk",
            i + 1
        );
        n += 1;
    }
    assert!(n >= 25, "{n} vectors");
}

/// The format layer is core RiffpeX on the mapped digits, under the documented tweak.
#[test]
fn format_layer_is_core_riffpex() {
    for (spec, inputs) in cases() {
        let f = format(&spec);
        let key = hex::decode(spec["key"].as_str().unwrap()).unwrap();
        let context = hex::decode(spec["context"].as_str().unwrap_or("")).unwrap();
        let c = cipher(&spec);
        for input in inputs {
            let before = f.map(input, &context).unwrap();
            let reference = riffpe_reference::Reference::new(
                riffpe_reference::Scheme::RiffpeX(&before.radices),
                &key,
                &before.tweak,
                f.bytes_per_value(),
            );
            let mut digits = before.digits.clone();
            reference.encrypt(&mut digits);
            let output = c.encrypt(input).unwrap();
            let after = f.map(&output, &context).unwrap();
            assert_eq!(after.tweak, before.tweak);
            if spec["format"] == "uuid" && digits.iter().all(|&d| d < 10) {
                continue; // an upper-case value would walk on to a token with a letter
            }
            assert_eq!(after.digits, digits, "{input}");
        }
    }
}

/// The tweak layout of the crate docs, spelled out for one value.
#[test]
fn tweak_layout_by_hand() {
    let f = Format::template("999-9999").unwrap().keep_prefix(1);
    let t = f.map("123-4567", b"ctx").unwrap().tweak;
    let le32 = |n: u32| n.to_le_bytes().to_vec();
    let field = |tag: u8, body: &[u8]| [vec![tag], le32(body.len() as u32), body.to_vec()].concat();
    let alphabets = field(0x10, &[1, 0, 0x01, 0x01]); // one alphabet, built-in digits
    let shape = field(
        0x11,
        &[
            vec![0x01, b'C', 0, 0],
            le32(3),
            vec![b'L'],
            le32('-' as u32),
            vec![b'C', 0, 0],
            le32(4),
        ]
        .concat(),
    );
    let keep = field(0x12, &[le32(1), le32(0)].concat());
    let format = [alphabets, shape, keep, field(0x13, &[0]), field(0x14, &[0])].concat();
    assert_eq!(f.encoding(), format);
    let value_shape = [
        vec![b'C', 0, 0],
        le32(3),
        vec![b'P'],
        le32('-' as u32),
        vec![b'C', 0, 0],
        le32(4),
    ]
    .concat();
    let expected = [
        b"riffpe-format".to_vec(),
        vec![1],
        field(0x01, &format),
        field(0x02, &value_shape),
        field(0x03, b"1"),
        field(0x04, b""),
        field(0x05, b"ctx"),
    ]
    .concat();
    assert_eq!(t, expected);
}
