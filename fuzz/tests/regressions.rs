//! Every input kept in `fuzz/regressions/<target>/` through the checks of its target, on
//! stable; and each kept input still decodes to the case it was kept for, so a change of the
//! decoding cannot quietly change what a regression tests.

use riffpe_fuzz::{kept_inputs, replay};

#[test]
fn kept_inputs_pass() {
    let mut failures = Vec::new();
    let mut targets = vec!["roundtrip", "differential"];
    if cfg!(feature = "cli") {
        targets.extend(["cli_records", "formats"]);
    }
    for target in targets {
        for path in kept_inputs(target) {
            let data = std::fs::read(&path).expect("regression input");
            if let Err(failure) = replay(target, &data) {
                failures.push(format!("{}: {failure}", path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every kept input is named here with the case it stands for.
#[test]
fn every_kept_input_is_pinned() {
    let pinned: Vec<String> = PINNED.iter().map(|(path, _)| path.to_string()).collect();
    for target in ["roundtrip", "differential", "cli_records", "formats"] {
        for path in kept_inputs(target) {
            let name = path.file_name().expect("file name").to_string_lossy();
            let key = format!("{target}/{name}");
            assert!(pinned.contains(&key), "{key} is not pinned in {}", file!());
        }
    }
}

/// `(target/file, check that the file decodes to the case)`.
const PINNED: &[(&str, fn())] = &[("cli_records/digit-delimiter", digit_delimiter)];

#[cfg(feature = "cli")]
fn read(path: &str) -> Vec<u8> {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("regressions")
        .join(path);
    std::fs::read(full).expect("regression input")
}

#[test]
fn kept_inputs_decode_to_their_cases() {
    for (_, check) in PINNED {
        check();
    }
}

/// `--delimiter 7` was once accepted, and encrypted fields then contained the delimiter.
fn digit_delimiter() {
    #[cfg(feature = "cli")]
    {
        use riffpe::integer::DigitOrder;
        use riffpe_batch::Mode;
        use riffpe_cli::bulk::{Layout, MAX_BLOCK_LINES};
        use riffpe_fuzz::case::Params;
        use riffpe_fuzz::cli::CliCase;

        let case: CliCase = riffpe_fuzz::decode(&read("cli_records/digit-delimiter"));
        let expected = CliCase {
            params: Params::Riffpe {
                radix: 45,
                digits: 14,
            },
            key: b"riffpe cli fuzz!".to_vec(),
            bytes_per_value: 16,
            order: DigitOrder::LittleEndian,
            layout: Layout::Csv {
                index: 0,
                delimiter: b'7',
            },
            header: false,
            mode: Mode::Lockstep,
            block_lines: MAX_BLOCK_LINES,
            splits: [204, 200],
            max: 1000,
            width: 15,
            text: b"8".to_vec(),
        };
        assert_eq!(case, expected);
    }
}
