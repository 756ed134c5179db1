//! End-to-end tests of the `riffpe` binary: what a user types, what they get back.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use num_bigint::BigUint;
use tempfile::TempDir;

/// The key of SPEC's reference examples.
const KEY: &str = "00112233445566778899aabbccddeeff";

/// Every key a test uses: none may ever appear in any output.
const SECRETS: &[&str] = &[
    KEY,
    "2b7e151628aed2a6abf7158809cf4f3c",
    "000102030405060708090a0b0c0d0e0f1011121314151617",
];

/// The binary, with no key in its environment.
fn riffpe() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_riffpe"));
    command.env_remove("RIFFPE_KEY").env("RUST_BACKTRACE", "1");
    command
}

/// The binary with `RIFFPE_KEY` set to [`KEY`].
fn keyed() -> Command {
    let mut command = riffpe();
    command.env("RIFFPE_KEY", KEY);
    command
}

/// Runs `command`, checks that no key leaked into its output, and returns the output.
fn run(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_lowercase();
    let stderr = String::from_utf8_lossy(&output.stderr).to_lowercase();
    for secret in SECRETS {
        // Every 8-character window, so a truncated echo is caught too.
        for window in secret.as_bytes().windows(8) {
            let window = std::str::from_utf8(window).unwrap();
            assert!(!stdout.contains(window), "key bytes on stdout: {stdout}");
            assert!(!stderr.contains(window), "key bytes on stderr: {stderr}");
        }
    }
    output
}

/// Runs `command`, expects success, returns stdout.
fn success(command: &mut Command) -> String {
    let output = run(command);
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Runs `command`, expects exit status 1 with one `error: …` line on stderr and nothing on
/// stdout, and returns that line.
fn failure(command: &mut Command) -> String {
    let output = run(command);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| !line.starts_with("warning: a key given with -k"))
        .collect();
    assert_eq!(lines.len(), 1, "one line expected: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    assert!(
        !stderr.contains("backtrace") && !stderr.contains("panicked"),
        "{stderr}"
    );
    lines[0].to_string()
}

/// A deterministic stream of numbers.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `count` lines of random numbers below `10^digits`, zero-padded.
    fn lines(&mut self, count: usize, digits: u32) -> String {
        (0..count)
            .map(|_| {
                format!(
                    "{:0w$}\n",
                    self.next() % 10u64.pow(digits),
                    w = digits as usize
                )
            })
            .collect()
    }
}

/// A directory with files in it.
struct Files(TempDir);

impl Files {
    fn new() -> Self {
        Files(tempfile::tempdir().unwrap())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        fs::write(&path, contents).unwrap();
        path
    }

    /// The names of the files in the directory, sorted.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.0.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap()
}

// --- Single values ---------------------------------------------------------------------------

#[test]
fn the_four_spec_examples() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "encrypt",
                "-k",
                KEY,
                "-n",
                "100",
                "-l",
                "8",
                "1234123456785678",
            ],
            "5158543106053628\n",
        ),
        (
            &[
                "decrypt",
                "-k",
                KEY,
                "-n",
                "100",
                "-l",
                "8",
                "5158543106053628",
            ],
            "1234123456785678\n",
        ),
        (
            &[
                "encrypt",
                "-k",
                KEY,
                "-n",
                "100",
                "-l",
                "8",
                "7856785634123412",
                "-B",
            ],
            "2836050631545851\n",
        ),
        (
            &[
                "encrypt",
                "-k",
                KEY,
                "-n",
                "100",
                "-l",
                "8",
                "7766554433221100",
                "-t",
                "416C696365",
            ],
            "4744161879108363\n",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(success(riffpe().args(*args)), *expected, "{args:?}");
    }
}

#[test]
fn defaults_aliases_and_text_tweaks_match_the_reference_flags() {
    // -n 100 -l 8 are the defaults; --base/--length/--tag are the Python CLI's names.
    assert_eq!(
        success(keyed().args(["encrypt", "1234123456785678"])),
        "5158543106053628\n"
    );
    assert_eq!(
        success(keyed().args([
            "encrypt",
            "--base",
            "100",
            "--length",
            "8",
            "--tag",
            "416c696365",
            "7766554433221100"
        ])),
        "4744161879108363\n"
    );
    assert_eq!(
        success(keyed().args(["encrypt", "--tweak-text", "Alice", "7766554433221100"])),
        "4744161879108363\n"
    );
    assert_eq!(
        success(keyed().args(["decrypt", "--big-endian", "2836050631545851"])),
        "7856785634123412\n"
    );
}

#[test]
fn several_values_print_one_per_line_zero_padded() {
    let out = success(keyed().args([
        "encrypt", "-n", "10", "-l", "6", "0", "7", "999999", "000042",
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(
        lines
            .iter()
            .all(|l| l.len() == 6 && l.bytes().all(|b| b.is_ascii_digit()))
    );
    let mut args = vec!["decrypt", "-n", "10", "-l", "6"];
    args.extend(&lines);
    assert_eq!(
        success(keyed().args(&args)),
        "000000\n000007\n999999\n000042\n"
    );
}

#[test]
fn padding_is_the_width_of_the_largest_value() {
    // N = 26·10·10 = 2600: outputs have 4 digits; N = 2^64: 20 digits.
    let out = success(keyed().args(["encrypt", "--radices", "26,10,10", "5"]));
    assert_eq!(out.trim_end().len(), 4, "{out}");
    let out = success(keyed().args(["encrypt", "-n", "65536", "-l", "4", "5"]));
    assert_eq!(out.trim_end().len(), 20, "{out}");
}

#[test]
fn riffpex_through_radices_matches_a_reference_vector() {
    // public.jsonl: radices [40,50,50,100], b = 15, plaintext [17,23,18,72] → [15,16,17,89].
    let key = "000102030405060708090a0b0c0d0e0f1011121314151617";
    let little = |d: [u64; 4]| d[0] + 40 * (d[1] + 50 * (d[2] + 50 * d[3]));
    let big = |d: [u64; 4]| d[3] + 100 * (d[2] + 50 * (d[1] + 50 * d[0]));
    let plain = [17, 23, 18, 72];
    let vector_key = "dfc456618f35bddd6b78c1fdefffc1c91a50b725aff718d4";
    let args = ["--radices", "40,50,50,100", "-b", "15", "-t", "822ee39014"];
    let out = success(
        riffpe()
            .env("RIFFPE_KEY", vector_key)
            .arg("encrypt")
            .args(args)
            .arg(format!("{}", little(plain))),
    );
    assert_eq!(out, format!("{:07}\n", little([15, 16, 17, 89])));
    let out = success(
        riffpe()
            .env("RIFFPE_KEY", vector_key)
            .arg("decrypt")
            .args(args)
            .arg(format!("{}", little([15, 16, 17, 89]))),
    );
    assert_eq!(out, format!("{:07}\n", little(plain)));
    // The same digits read big-endian.
    let out = success(
        riffpe()
            .env("RIFFPE_KEY", vector_key)
            .args(["encrypt", "-B"])
            .args(args)
            .arg(format!("{}", big(plain))),
    );
    assert_eq!(out, format!("{:07}\n", big([15, 16, 17, 89])));
    // Another key gives another answer (the key is really used).
    let other = success(riffpe().args(["encrypt", "--key", key]).args(args).arg("0"));
    assert_eq!(other.len(), 8);
}

/// Every reference vector of the core crate, through the command line, as integers.
#[test]
fn every_public_vector_through_the_command_line() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../riffpe/tests/data/public.jsonl"
    );
    let text = fs::read_to_string(path).unwrap();
    let mut checked = 0;
    for (number, line) in text.lines().enumerate() {
        let vector: serde_json::Value = serde_json::from_str(line).unwrap();
        let digits = |name: &str| -> Vec<u32> {
            vector[name]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as u32)
                .collect()
        };
        let mut args: Vec<String> = Vec::new();
        let radices: Vec<u32> = if vector["scheme"] == "riffpex" {
            let radices = digits("radices");
            let list: Vec<String> = radices.iter().map(u32::to_string).collect();
            args.extend(["--radices".into(), list.join(",")]);
            radices
        } else {
            let radix = vector["radix"].as_u64().unwrap() as u32;
            let l = vector["digits"].as_u64().unwrap() as usize;
            args.extend(["-n".into(), radix.to_string(), "-l".into(), l.to_string()]);
            vec![radix; l]
        };
        args.extend(["-b".into(), vector["bytes_per_value"].to_string()]);
        args.extend(["-t".into(), vector["tweak"].as_str().unwrap().to_string()]);
        let key = vector["key"].as_str().unwrap();
        let size = radices.iter().fold(BigUint::from(1u32), |n, &r| n * r);
        let width = (size - 1u32).to_string().len();
        // x = Σ m_i · ∏_{j<i} r_j (little-endian) or Σ m_i · ∏_{j>i} r_j (big-endian).
        let integer = |digits: &[u32], big_endian: bool| -> String {
            let mut positions: Vec<usize> = (0..digits.len()).collect();
            if !big_endian {
                positions.reverse();
            }
            let value = positions
                .iter()
                .fold(BigUint::ZERO, |x, &i| x * radices[i] + digits[i]);
            format!("{value:0>width$}\n", value = value.to_string())
        };
        let (plain, cipher) = (digits("plaintext"), digits("ciphertext"));
        let orders: &[bool] = if number % 4 == 0 {
            &[false, true]
        } else {
            &[false]
        };
        // Each selection, which must give the same output: the default (constant-time up to
        // radix 256), then each one asked for.
        let selection: &[&str] = match number % 3 {
            0 => &[],
            1 => &["--constant-time"],
            _ => &["--selection", "fast"],
        };
        for &big_endian in orders {
            let order: &[&str] = if big_endian { &["-B"] } else { &[] };
            let (x, y) = (integer(&plain, big_endian), integer(&cipher, big_endian));
            let encrypt = riffpe()
                .env("RIFFPE_KEY", key)
                .arg("encrypt")
                .args(&args)
                .args(order)
                .args(selection)
                .write_stdin(x.clone())
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&encrypt.stdout),
                y,
                "line {}: {line}",
                number + 1
            );
            let decrypt = riffpe()
                .env("RIFFPE_KEY", key)
                .arg("decrypt")
                .args(&args)
                .args(order)
                .args(selection)
                .arg(y.trim_end())
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&decrypt.stdout),
                x,
                "line {}: {line}",
                number + 1
            );
            checked += 1;
        }
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn constant_time_selection_gives_the_same_output_in_bulk() {
    // Enough lines for lockstep: integers of Riffpe(100, 8), of RiffpeX with radices above the
    // ones lockstep ranks every key for, and strings of an alphanumeric format (radix 62).
    let integers: String = (0..300u64)
        .map(|i| {
            format!(
                "{:016}\n",
                i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 10u64.pow(16)
            )
        })
        .collect();
    let small: String = (0..300u64)
        .map(|i| format!("{:07}\n", i * 3331 % 10_000_000))
        .collect();
    let words: String = (0..300u64)
        .map(|i| format!("Id{i:06}x{}\n", i % 7))
        .collect();
    let cases: [(&[&str], &str); 3] = [
        (&["-n", "100", "-l", "8"], &integers),
        (&["--radices", "40,50,50,100"], &small),
        (&["--format", "alnum"], &words),
    ];
    for (args, input) in cases {
        let run = |command: &str, selection: &[&str], input: &str| {
            success(
                keyed()
                    .arg(command)
                    .args(args)
                    .args(selection)
                    .write_stdin(input.to_string()),
            )
        };
        let fast = run("encrypt", &["--selection", "fast"], input);
        assert_eq!(fast.lines().count(), 300, "{args:?}");
        for selection in [
            &[][..],
            &["--constant-time"],
            &["--selection", "constant-time"],
        ] {
            assert_eq!(
                run("encrypt", selection, input),
                fast,
                "{args:?} {selection:?}"
            );
            assert_eq!(
                run("decrypt", selection, &fast),
                input,
                "{args:?} {selection:?}"
            );
        }
    }
}

#[test]
fn selection_flags_conflict() {
    let output = keyed()
        .args([
            "encrypt",
            "-n",
            "10",
            "-l",
            "4",
            "--constant-time",
            "--selection",
            "fast",
        ])
        .arg("1234")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--selection"), "{stderr}");
}

#[test]
fn a_40_digit_domain() {
    let max = "9".repeat(40);
    let values = [
        "0",
        "1234567890123456789012345678901234567890",
        max.as_str(),
    ];
    let mut args = vec!["encrypt", "-n", "10", "-l", "40"];
    args.extend(values);
    let encrypted = success(keyed().args(&args));
    let lines: Vec<&str> = encrypted.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines
            .iter()
            .all(|l| l.len() == 40 && l.bytes().all(|b| b.is_ascii_digit()))
    );
    let mut args = vec!["decrypt", "-n", "10", "-l", "40", "-B"];
    args.extend(&lines);
    let decrypted = success(keyed().args(&args));
    assert_ne!(
        decrypted.lines().nth(1),
        Some(values[1]),
        "-B is another mapping"
    );
    let mut args = vec!["decrypt", "-n", "10", "-l", "40"];
    args.extend(&lines);
    let decrypted = success(keyed().args(&args));
    let expected = format!("{}\n{}\n{}\n", "0".repeat(40), values[1], max);
    assert_eq!(decrypted, expected);

    let too_large = format!("1{}", "0".repeat(40));
    let message = failure(keyed().args(["encrypt", "-n", "10", "-l", "40", &too_large]));
    assert_eq!(
        message,
        format!("error: argument 1: the value is not below the domain size {too_large}")
    );
}

#[test]
fn large_radices_and_domains_round_trip() {
    // 2^320 values with 65 536 values per digit; RiffpeX with radices past 2^16.
    let big = format!("{}{}", u64::MAX, u128::MAX);
    let cases: &[(&[&str], &[&str])] = &[
        (&["-n", "65536", "-l", "20"], &["0", "1", &big]),
        (
            &["--radices", "70000,3,100000,65537"],
            &["0", "1", "1376276999999999", "1234567890123"],
        ),
        (&["--radices", "16777216,2"], &["0", "33554431", "12345678"]),
    ];
    for &(args, values) in cases {
        let encrypted = success(keyed().arg("encrypt").args(args).args(values));
        let lines: Vec<&str> = encrypted.lines().collect();
        assert_eq!(lines.len(), values.len());
        let width = lines[0].len();
        assert!(lines.iter().all(|l| l.len() == width));
        let decrypted = success(keyed().arg("decrypt").args(args).args(&lines));
        let expected: String = values.iter().map(|v| format!("{v:0>width$}\n")).collect();
        assert_eq!(decrypted, expected, "{args:?}");
    }
    let message = failure(keyed().args([
        "encrypt",
        "--radices",
        "70000,3,100000,65537",
        "1376277000000000",
    ]));
    assert_eq!(
        message,
        "error: argument 1: the value is not below the domain size 1376277000000000"
    );
}

// --- Keys --------------------------------------------------------------------------------------

#[test]
fn key_file_env_and_argument_agree_and_only_the_argument_warns() {
    let files = Files::new();
    let key_file = files.write("k.key", format!("{KEY}\n"));
    let from_file = run(riffpe()
        .args(["encrypt", "1234123456785678", "--key-file"])
        .arg(&key_file));
    let from_env = run(keyed().args(["encrypt", "1234123456785678"]));
    let from_argument = run(riffpe().args(["encrypt", "1234123456785678", "-k", KEY]));
    for output in [&from_file, &from_env, &from_argument] {
        assert!(output.status.success());
        assert_eq!(output.stdout, b"5158543106053628\n");
    }
    assert!(from_file.stderr.is_empty());
    assert!(from_env.stderr.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&from_argument.stderr),
        "warning: a key given with -k/--key is visible to other users of this machine \
         (process list, shell history); prefer --key-file PATH or the RIFFPE_KEY environment \
         variable\n"
    );
    // --quiet silences the progress bar, not this warning.
    let quiet = run(riffpe().args(["encrypt", "-q", "1", "-k", KEY]));
    assert!(String::from_utf8_lossy(&quiet.stderr).starts_with("warning: a key given with -k"));
    // A file wins over the environment.
    let other = files.write("other.key", SECRETS[1]);
    let out = success(
        keyed()
            .args(["encrypt", "1234123456785678", "--key-file"])
            .arg(&other),
    );
    assert_ne!(out, "5158543106053628\n");
}

#[test]
fn no_key_is_a_clear_error() {
    let message = failure(riffpe().args(["encrypt", "1"]));
    assert!(
        message.starts_with("error: no key: give --key-file PATH, set RIFFPE_KEY"),
        "{message}"
    );
}

#[test]
fn bad_hex_keys() {
    let files = Files::new();
    let odd = &KEY[..31];
    let bad = format!("{}zz", &KEY[..30]);
    let cases: Vec<(Command, String)> = vec![
        (
            {
                let mut c = riffpe();
                c.args(["encrypt", "1", "-k", odd]);
                c
            },
            "error: -k/--key: an odd number of hex digits (31)".into(),
        ),
        (
            {
                let mut c = riffpe();
                c.args(["encrypt", "1"]).env("RIFFPE_KEY", &bad);
                c
            },
            "error: RIFFPE_KEY: character 31 is not a hex digit".into(),
        ),
        (
            {
                let path = files.write("bad.key", format!("  {bad}\n"));
                let mut c = riffpe();
                c.args(["encrypt", "1", "--key-file"]).arg(&path);
                c
            },
            format!(
                "error: key file {}: character 31 is not a hex digit",
                files.path("bad.key").display()
            ),
        ),
        (
            {
                let mut c = riffpe();
                c.args(["encrypt", "1"]).env("RIFFPE_KEY", "");
                c
            },
            "error: RIFFPE_KEY: empty, expected hex digits".into(),
        ),
        (
            {
                let path = files.write("bin.key", [0xff_u8, 0xfe, 0x00, 0x41]);
                let mut c = riffpe();
                c.args(["encrypt", "1", "--key-file"]).arg(&path);
                c
            },
            format!(
                "error: key file {}: character 1 is not a hex digit",
                files.path("bin.key").display()
            ),
        ),
    ];
    for (mut command, expected) in cases {
        assert_eq!(failure(&mut command), expected);
    }
}

#[test]
fn wrong_key_lengths() {
    for (key, bytes) in [(&KEY[..30], 15), (&SECRETS[2][..34], 17), ("00", 1)] {
        let message = failure(riffpe().args(["encrypt", "1"]).env("RIFFPE_KEY", key));
        assert_eq!(
            message,
            format!(
                "error: RIFFPE_KEY: a {bytes}-byte key is not an AES key (16, 24 or 32 bytes: 32, 48 or 64 hex digits)"
            )
        );
    }
    let message = failure(riffpe().args(["encrypt", "1", "--key", "0011"]));
    assert!(
        message.starts_with("error: -k/--key: a 2-byte key is not an AES key"),
        "{message}"
    );
    let files = Files::new();
    let missing = files.path("missing.key");
    let message = failure(riffpe().args(["encrypt", "1", "--key-file"]).arg(&missing));
    assert!(
        message.starts_with(&format!(
            "error: cannot open key file {}: ",
            missing.display()
        )),
        "{message}"
    );
}

#[test]
fn aes_192_and_256_keys_work() {
    for key in [SECRETS[2], &format!("{KEY}{KEY}")] {
        let out = success(
            riffpe()
                .env("RIFFPE_KEY", key)
                .args(["encrypt", "1234123456785678"]),
        );
        let back = success(
            riffpe()
                .env("RIFFPE_KEY", key)
                .args(["decrypt", out.trim_end()]),
        );
        assert_eq!(back, "1234123456785678\n");
    }
}

// --- Parameters ------------------------------------------------------------------------------

#[test]
fn bad_parameters_are_one_line_each() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-n", "1"],
            "error: invalid parameters: -n/--radix 1 is below 2",
        ),
        (
            &["-n", "0"],
            "error: invalid parameters: -n/--radix 0 is below 2",
        ),
        (
            &["-l", "0"],
            "error: invalid parameters: -l/--digits must be at least 1",
        ),
        (
            &["-b", "0"],
            "error: invalid parameters: -b/--bytes-per-value must be at least 1",
        ),
        (
            &["--radices", "10,1,10"],
            "error: invalid parameters: radix 1 at position 1 is below 2",
        ),
        (
            &["-n", "100", "-l", "300"],
            "error: invalid parameters: 300 digits is more than the 256 this radix allows",
        ),
        (
            &["-t", "41z"],
            "error: -t/--tweak: character 3 is not a hex digit",
        ),
    ];
    for (args, expected) in cases {
        let message = failure(keyed().arg("encrypt").args(*args).arg("1"));
        assert_eq!(message, *expected, "{args:?}");
    }
    let message = failure(keyed().args(["encrypt", "-n", "4000000000", "-b", "64", "1"]));
    assert!(
        message.starts_with("error: invalid parameters: one digit step would need"),
        "{message}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let cases: &[&[&str]] = &[
        &["encrypt", "--radices", "10,10", "-n", "10", "1"],
        &["encrypt", "-t", "00", "--tweak-text", "x", "1"],
        &["encrypt", "-k", KEY, "--key-file", "x", "1"],
        &["encrypt", "--input", "x", "1"],
        &["encrypt", "--threads", "0"],
        &["encrypt", "--delimiter", ";"],
        &["encrypt", "--column", "0"],
        &["encrypt", "-n", "-5", "1"],
        &["encrypt", "--bogus"],
        &["keygen", "--bits", "100"],
        &["bases", "100"],
        &[],
    ];
    for args in cases {
        let output = run(keyed().args(*args));
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert!(output.stdout.is_empty());
    }
}

// --- Bad input -------------------------------------------------------------------------------

#[test]
fn bad_arguments_print_nothing_and_name_the_argument() {
    let cases: &[(&str, &str)] = &[
        (
            "-5",
            "error: argument 2: a sign is not allowed, expected a decimal integer",
        ),
        (
            "+5",
            "error: argument 2: a sign is not allowed, expected a decimal integer",
        ),
        (
            "1 2",
            "error: argument 2: whitespace at byte 2 is not a decimal digit",
        ),
        (
            " 1\u{a0}",
            "error: argument 2: a non-ASCII character at byte 3 is not a decimal digit",
        ),
        (
            "12a",
            "error: argument 2: 'a' at byte 3 is not a decimal digit",
        ),
        (
            "١٢",
            "error: argument 2: a non-ASCII character at byte 1 is not a decimal digit",
        ),
        (
            "10000000000000000",
            "error: argument 2: the value is not below the domain size 10000000000000000",
        ),
        (
            "99999999999999999999999999999",
            "error: argument 2: the value is not below the domain size 10000000000000000",
        ),
        ("1\n2", "error: argument 2: a line break inside an argument"),
    ];
    for (bad, expected) in cases {
        let message = failure(keyed().args(["encrypt", "1", bad, "3"]));
        assert_eq!(message, *expected, "{bad:?}");
    }
    let message = failure(keyed().args(["decrypt", "-n", "10", "-l", "2", "100"]));
    assert_eq!(
        message,
        "error: argument 1: the value is not below the domain size 100"
    );
}

#[test]
fn a_bad_line_in_the_middle_leaves_no_output_and_keeps_an_existing_one() {
    let files = Files::new();
    // Two blocks' worth of cheap lines, the bad one in the second block.
    let mut rng = Xorshift(1);
    let mut text = rng.lines(70_000, 4);
    text.push_str("12x4\n");
    text.push_str(&rng.lines(10, 4));
    let input = files.write("in.txt", &text);
    let args = ["encrypt", "-n", "10", "-l", "4", "--input"];

    let fresh = files.path("fresh.txt");
    let message = failure(keyed().args(args).arg(&input).arg("--output").arg(&fresh));
    assert_eq!(
        message,
        format!(
            "error: {}:70001: 'x' at byte 3 is not a decimal digit",
            input.display()
        )
    );
    assert!(!fresh.exists());
    assert_eq!(
        files.names(),
        ["in.txt"],
        "no temporary file is left behind"
    );

    let existing = files.write("existing.txt", "precious\n");
    failure(keyed().args(args).arg(&input).arg("-o").arg(&existing));
    assert_eq!(read(&existing), b"precious\n");
    assert_eq!(files.names(), ["existing.txt", "in.txt"]);
    assert_eq!(read(&input), text.as_bytes(), "the input is never modified");
}

#[test]
fn bad_lines_name_file_line_and_reason() {
    let files = Files::new();
    let cases: &[(&str, &str)] = &[
        (
            "1\n2\n 3 4\n",
            "3: whitespace at byte 3 is not a decimal digit",
        ),
        ("1\n\t2x \n", "2: 'x' at byte 3 is not a decimal digit"),
        (
            "1\n-2\n",
            "2: a sign is not allowed, expected a decimal integer",
        ),
        (
            "1\r\n2\r\n3\r",
            "3: whitespace at byte 2 is not a decimal digit",
        ),
        (
            "card\n1\n",
            "1: 'c' at byte 1 is not a decimal digit (if line 1 is a header, add --header)",
        ),
        (
            "1\n10000000000000000\n",
            "2: the value is not below the domain size 10000000000000000",
        ),
    ];
    for (text, expected) in cases {
        let input = files.write("in.txt", text);
        let message = failure(keyed().args(["encrypt", "--input"]).arg(&input));
        assert_eq!(
            message,
            format!("error: {}:{expected}", input.display()),
            "{text:?}"
        );
        let message = failure(keyed().arg("encrypt").write_stdin(*text));
        assert_eq!(message, format!("error: <stdin>:{expected}"), "{text:?}");
    }
}

#[test]
fn output_that_is_the_input_is_refused() {
    let files = Files::new();
    let text = Xorshift(3).lines(100, 16);
    let input = files.write("in.txt", &text);
    fs::create_dir(files.path("sub")).unwrap();
    let mut spellings = vec![
        input.clone(),
        files.path("sub/../in.txt"),
        files.path("./in.txt"),
    ];
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&input, files.path("link.txt")).unwrap();
        fs::hard_link(&input, files.path("hard.txt")).unwrap();
        spellings.extend([files.path("link.txt"), files.path("hard.txt")]);
    }
    for output in spellings {
        let message = failure(
            keyed()
                .args(["encrypt", "--input"])
                .arg(&input)
                .arg("--output")
                .arg(&output),
        );
        assert_eq!(
            message,
            format!(
                "error: --output {} is the input file: write to another file (the input is never modified)",
                output.display()
            )
        );
        assert_eq!(read(&input), text.as_bytes());
    }
}

#[cfg(unix)]
#[test]
fn outputs_that_are_links_or_devices() {
    let files = Files::new();
    let input = files.write("in.txt", "1\n");
    let expected = success(keyed().args(["encrypt", "1"]));
    success(
        keyed()
            .args(["encrypt", "-i"])
            .arg(&input)
            .args(["-o", "/dev/null"]),
    );
    assert!(!fs::metadata("/dev/null").unwrap().is_file());
    let target = files.write("target.txt", "old\n");
    let link = files.path("link.txt");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    success(
        keyed()
            .args(["encrypt", "-i"])
            .arg(&input)
            .arg("-o")
            .arg(&link),
    );
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read(&target), expected.as_bytes());
}

#[test]
fn io_errors() {
    let files = Files::new();
    let missing = files.path("missing.txt");
    let message = failure(keyed().args(["encrypt", "--input"]).arg(&missing));
    assert!(
        message.starts_with(&format!("error: cannot open input {}: ", missing.display())),
        "{message}"
    );
    let input = files.write("in.txt", "1\n");
    let nowhere = files.path("no/such/dir/out.txt");
    let message = failure(
        keyed()
            .args(["encrypt", "--input"])
            .arg(&input)
            .arg("--output")
            .arg(&nowhere),
    );
    assert!(
        message.starts_with("error: cannot create a temporary file for output"),
        "{message}"
    );
    let message = failure(
        keyed()
            .args(["encrypt", "--input"])
            .arg(&input)
            .arg("--output")
            .arg(files.0.path()),
    );
    assert!(message.ends_with("is a directory"), "{message}");
}

// --- Bulk ------------------------------------------------------------------------------------

#[test]
fn bulk_stdin_stdout_matches_single_values() {
    let text = Xorshift(11).lines(500, 16);
    let bulk = success(keyed().arg("encrypt").write_stdin(text.clone()));
    let single = success(keyed().arg("encrypt").args(text.lines()));
    assert_eq!(bulk, single);
    assert_eq!(bulk.lines().count(), 500);
    let through_dash = success(
        keyed()
            .args(["encrypt", "--input", "-", "--output", "-"])
            .write_stdin(text),
    );
    assert_eq!(through_dash, bulk);
}

#[test]
fn bulk_files_and_threads() {
    let files = Files::new();
    let text = Xorshift(12).lines(3000, 16);
    let input = files.write("in.txt", &text);
    let expected = success(keyed().arg("encrypt").write_stdin(text.clone()));
    for threads in ["1", "2", "3"] {
        let output = files.path("out.txt");
        let stdout = success(
            keyed()
                .args(["encrypt", "--threads", threads, "--input"])
                .arg(&input)
                .arg("--output")
                .arg(&output),
        );
        assert!(stdout.is_empty());
        assert_eq!(
            String::from_utf8(read(&output)).unwrap(),
            expected,
            "{threads} threads"
        );
    }
    assert_eq!(files.names(), ["in.txt", "out.txt"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(files.path("out.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn decrypt_of_encrypt_is_the_file() {
    let files = Files::new();
    let mut rng = Xorshift(13);
    let text = rng.lines(4000, 16);
    let crlf = text.replace('\n', "\r\n");
    let no_final_newline = text.trim_end().to_string();
    let narrow = rng.lines(3000, 5); // shorter numbers than the width
    for (name, text, args) in [
        ("lf", &text, &[][..]),
        ("big-endian", &text, &["-B"][..]),
        ("tweaked", &text, &["--tweak-text", "batch 7"][..]),
        ("crlf", &crlf, &[][..]),
        ("last line without newline", &no_final_newline, &[][..]),
        ("riffpex", &narrow, &["--radices", "10,100,100"][..]),
    ] {
        let input = files.write("in.txt", text);
        let encrypted = files.path("enc.txt");
        let decrypted = files.path("dec.txt");
        success(
            keyed()
                .arg("encrypt")
                .args(args)
                .arg("-i")
                .arg(&input)
                .arg("-o")
                .arg(&encrypted),
        );
        assert_ne!(read(&encrypted), text.as_bytes(), "{name}");
        assert_eq!(read(&encrypted).len(), text.len(), "{name}: same shape");
        success(
            keyed()
                .arg("decrypt")
                .args(args)
                .arg("-i")
                .arg(&encrypted)
                .arg("-o")
                .arg(&decrypted),
        );
        assert_eq!(
            String::from_utf8(read(&decrypted)).unwrap(),
            *text,
            "{name}"
        );
    }
}

#[test]
fn many_blocks_keep_their_order() {
    // A cheap domain, so 150 000 lines span three blocks quickly.
    let text = Xorshift(14).lines(150_000, 3);
    let encrypted = success(
        keyed()
            .args(["encrypt", "-n", "10", "-l", "3"])
            .write_stdin(text.clone()),
    );
    let single = success(
        keyed()
            .args(["encrypt", "-n", "10", "-l", "3"])
            .args(text.lines().take(5)),
    );
    assert!(encrypted.starts_with(&single));
    let decrypted = success(
        keyed()
            .args(["decrypt", "-n", "10", "-l", "3"])
            .write_stdin(encrypted),
    );
    assert_eq!(decrypted, text);
}

#[test]
fn empty_input_is_empty_output() {
    assert_eq!(success(keyed().arg("encrypt").write_stdin("")), "");
    let files = Files::new();
    let input = files.write("in.txt", "");
    let output = files.path("out.txt");
    success(
        keyed()
            .arg("encrypt")
            .arg("-i")
            .arg(&input)
            .arg("-o")
            .arg(&output),
    );
    assert_eq!(read(&output), b"");
}

// --- CSV -------------------------------------------------------------------------------------

#[test]
fn csv_column_with_header_passes_everything_else_through() {
    let csv = "id,name,card,note\r\n1,alice,1234123456785678,x\r\n2,bob,0000000000000042,\r\n3,é,7856785634123412,\"a b\"\r\n";
    let out = success(
        keyed()
            .args(["encrypt", "--column", "3", "--header"])
            .write_stdin(csv),
    );
    let cards: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap())
        .collect();
    let single = success(keyed().arg("encrypt").args(&cards));
    let tokens: Vec<&str> = single.lines().collect();
    let expected = format!(
        "id,name,card,note\r\n1,alice,{},x\r\n2,bob,{},\r\n3,é,{},\"a b\"\r\n",
        tokens[0], tokens[1], tokens[2]
    );
    assert_eq!(out, expected);
    let back = success(
        keyed()
            .args(["decrypt", "-c", "3", "--header"])
            .write_stdin(out.clone()),
    );
    assert_eq!(back, csv);
    // By header name, as formats take columns; with a row tweak by name, as by number.
    let named =
        |args: &[&str], input: &str| success(keyed().args(args).write_stdin(input.to_string()));
    assert_eq!(
        named(&["encrypt", "--column", "card", "--header"], csv),
        out
    );
    assert_eq!(named(&["decrypt", "-c", "card", "--header"], &out), csv);
    let by_number = named(
        &["encrypt", "-c", "3", "--tweak-column", "1", "--header"],
        csv,
    );
    let by_name = named(
        &["encrypt", "-c", "card", "--tweak-column", "id", "--header"],
        csv,
    );
    assert_eq!(by_name, by_number);
    assert_ne!(by_name, out);
    let refused = |args: &[&str]| failure(keyed().args(args).write_stdin(csv));
    assert_eq!(
        refused(&["encrypt", "-c", "cvv", "--header"]),
        "error: --column \"cvv\": the header has no column of this name (it has \"id\", \
         \"name\", \"card\", \"note\")"
    );
    assert_eq!(
        refused(&[
            "encrypt",
            "-c",
            "card",
            "--tweak-column",
            "card",
            "--header"
        ]),
        "error: --tweak-column card: column 3 is also encrypted; a tweak must stay readable to \
         decrypt"
    );
}

#[test]
fn empty_integer_fields_and_lines_pass_through() {
    // Nulls in a column, with and without each row's own tweak.
    let csv = "id,card\n7,1234123456785678\n8,\n9,0000000000000042\n";
    for extra in [&[][..], &["--tweak-column", "1"][..]] {
        let out = success(
            keyed()
                .args(["encrypt", "--header", "-c", "2"])
                .args(extra)
                .write_stdin(csv),
        );
        let rows: Vec<&str> = out.lines().collect();
        assert_eq!(rows.len(), 4, "{out}");
        assert_eq!(rows[2], "8,", "{extra:?}");
        assert_ne!(rows[1], "7,1234123456785678");
        let back = success(
            keyed()
                .args(["decrypt", "--header", "-c", "2"])
                .args(extra)
                .write_stdin(out.clone()),
        );
        assert_eq!(back, csv, "{extra:?}");
    }
    // Empty lines (and empty arguments) as well.
    let tokens = success(keyed().args(["encrypt", "5", "", "6"]));
    let lines = success(keyed().arg("encrypt").write_stdin("5\n\r\n6"));
    let tokens: Vec<&str> = tokens.lines().collect();
    assert_eq!(tokens[1], "");
    assert_eq!(lines, format!("{}\n\r\n{}", tokens[0], tokens[2]));
}

#[test]
fn csv_delimiters_and_first_or_last_columns() {
    let files = Files::new();
    let text = "5;a;7\n6;b;8\n";
    let input = files.write("in.csv", text);
    let first = success(
        keyed()
            .args(["encrypt", "-n", "10", "-l", "2", "-d", ";", "-c", "1", "-i"])
            .arg(&input),
    );
    let last = success(
        keyed()
            .args(["encrypt", "-n", "10", "-l", "2", "-d", ";", "-c", "3", "-i"])
            .arg(&input),
    );
    let singles = success(keyed().args(["encrypt", "-n", "10", "-l", "2", "5", "6", "7", "8"]));
    let s: Vec<&str> = singles.lines().collect();
    assert_eq!(first, format!("{};a;7\n{};b;8\n", s[0], s[1]));
    assert_eq!(last, format!("5;a;{}\n6;b;{}\n", s[2], s[3]));
    let tabs = success(
        keyed()
            .args(["encrypt", "-n", "10", "-l", "2", "-d", "tab", "-c", "2"])
            .write_stdin("a\t5\n"),
    );
    assert_eq!(tabs, format!("a\t{}\n", s[0]));
}

#[test]
fn integer_columns_are_rfc_4180_fields() {
    let files = Files::new();
    // Before the column: a quoted comma, which a split at every comma would take for a field
    // boundary (then column 3 would be "7" on line 4), and a quoted line break.
    let csv = "id,name,card\r\n\
               1,\"Smith, J\",4111111111111111\r\n\
               2,\"two\nlines\",\"5500000000000004\"\r\n\
               \"x,5\",7,4000056655665556\r\n\
               3,\"\"\"quoted\"\"\",\"\"\r\n";
    let input = files.write("in.csv", csv);
    let singles = success(keyed().args([
        "encrypt",
        "4111111111111111",
        "5500000000000004",
        "4000056655665556",
    ]));
    let t: Vec<&str> = singles.lines().collect();
    let expected = format!(
        "id,name,card\r\n\
         1,\"Smith, J\",{}\r\n\
         2,\"two\nlines\",\"{}\"\r\n\
         \"x,5\",7,{}\r\n\
         3,\"\"\"quoted\"\"\",\"\"\r\n",
        t[0], t[1], t[2]
    );
    for column in ["3", "card"] {
        let out = success(
            keyed()
                .args(["encrypt", "--header", "-c", column, "-i"])
                .arg(&input),
        );
        assert_eq!(out, expected, "--column {column}");
    }
    let encrypted = files.write("out.csv", &expected);
    let back = success(
        keyed()
            .args(["decrypt", "--header", "-c", "3", "-i"])
            .arg(&encrypted),
    );
    assert_eq!(back, csv);
    // A record's line is where it starts: line 5, after a record of two lines.
    let bad = files.write(
        "bad.csv",
        csv.replace("4000056655665556", "40000566556655x6"),
    );
    let message = failure(
        keyed()
            .args(["encrypt", "--header", "-c", "3", "-i"])
            .arg(&bad),
    );
    assert_eq!(
        message,
        format!(
            "error: {}:5: column 3: 'x' at byte 15 is not a decimal digit",
            bad.display()
        )
    );
}

#[test]
fn blanks_around_integers_pass_through() {
    let files = Files::new();
    let singles = success(keyed().args(["encrypt", "4111111111111111", "0000000000000042"]));
    let t: Vec<&str> = singles.lines().collect();
    // A padded column, a space after the delimiter, a tab, blanks inside quotes, and a field
    // of blanks only (a null, as an empty one is).
    let csv = "name, card\n\
               a, 4111111111111111\n\
               b,\t42   \n\
               c,\" 4111111111111111 \"\n\
               d,   \n";
    let expected = format!(
        "name, card\n\
         a, {}\n\
         b,\t{}   \n\
         c,\" {} \"\n\
         d,   \n",
        t[0], t[1], t[0]
    );
    let input = files.write("in.csv", csv);
    let out = success(
        keyed()
            .args(["encrypt", "--header", "-c", "2", "-i"])
            .arg(&input),
    );
    assert_eq!(out, expected);
    let encrypted = files.write("out.csv", &out);
    let back = success(
        keyed()
            .args(["decrypt", "--header", "-c", "2", "-i"])
            .arg(&encrypted),
    );
    assert_eq!(back, csv.replace("\t42", "\t0000000000000042"));
    // Lines and arguments alike.
    let lines = files.write("in.txt", " 4111111111111111\t\n42 \n");
    let out = success(keyed().arg("encrypt").arg("-i").arg(&lines));
    assert_eq!(out, format!(" {}\t\n{} \n", t[0], t[1]));
    let out = success(keyed().args(["encrypt", " 4111111111111111", "42\t"]));
    assert_eq!(out, format!(" {}\n{}\t\n", t[0], t[1]));
}

#[test]
fn integer_tweak_columns_are_read_unquoted() {
    let scheme = ["-n", "10", "-l", "8"];
    let encrypt = |csv: &str| {
        let options = ["-c", "3", "--tweak-column", "2"];
        let out = success(
            keyed()
                .arg("encrypt")
                .args(scheme)
                .args(options)
                .write_stdin(csv.to_string()),
        );
        let tokens = out
            .lines()
            .map(|line| line.rsplit(',').next().unwrap().to_string());
        tokens.collect::<Vec<_>>()
    };
    let single = |who: &[u8]| {
        let hex = row_context_hex(b"", who);
        let out = success(
            keyed()
                .arg("encrypt")
                .args(scheme)
                .args(["--tweak", &hex, "12345678"]),
        );
        out.trim_end().to_string()
    };
    // A quote past a field's first byte is read as it is; a quoted field's value is unquoted.
    let bare = encrypt("1,alice,12345678\n2,b\"ob,12345678\n");
    let quoted = encrypt("1,\"alice\",12345678\n2,\"b\"\"ob\",12345678\n3,\"a,b\",12345678\n");
    let whos: [&[u8]; 3] = [b"alice", b"b\"ob", b"a,b"];
    for (row, who) in whos.iter().enumerate() {
        assert_eq!(quoted[row], single(who), "row {row}");
    }
    assert_eq!(bare[..], quoted[..2]);
    assert_ne!(quoted[0], quoted[1]);
}

#[test]
fn csv_rows_without_the_column_stop_the_run() {
    let files = Files::new();
    let input = files.write("in.csv", "id,card\n1,5\n2\n3,7\n");
    let output = files.path("out.csv");
    let message = failure(
        keyed()
            .args(["encrypt", "-c", "2", "--header", "-i"])
            .arg(&input)
            .arg("-o")
            .arg(&output),
    );
    assert_eq!(
        message,
        format!(
            "error: {}:3: no column 2: the line has 1 field",
            input.display()
        )
    );
    assert!(!output.exists());
    let message = failure(
        keyed()
            .args(["encrypt", "-c", "2", "--header"])
            .write_stdin("id,card\n1,\"5\"6\n"),
    );
    assert_eq!(
        message,
        "error: <stdin>:2: column 2: text after the closing quote of a quoted field (RFC 4180: \
         write `\"\"` for a quote inside)"
    );
}

#[test]
fn blank_lines_in_csv_pass_through() {
    // A trailing blank line, or one between rows: no row, in integer and formatted columns.
    let csv = "id,card\r\n1,4111111111111111\r\n\r\n2,5500000000000004\r\n\n";
    let singles = success(keyed().args(["encrypt", "4111111111111111", "5500000000000004"]));
    let t: Vec<&str> = singles.lines().collect();
    let integers = success(
        keyed()
            .args(["encrypt", "--header", "-c", "2"])
            .write_stdin(csv),
    );
    assert_eq!(
        integers,
        format!("id,card\r\n1,{}\r\n\r\n2,{}\r\n\n", t[0], t[1])
    );
    let cards = success(keyed().args([
        "encrypt",
        "--format",
        "card",
        "4111111111111111",
        "5500000000000004",
    ]));
    let c: Vec<&str> = cards.lines().collect();
    for options in [&["-c", "card:card"][..], &["-c", "2", "--format", "card"]] {
        let formatted = success(
            keyed()
                .args(["encrypt", "--header", "--tweak-column", "id"])
                .args(options)
                .write_stdin(csv),
        );
        let lines: Vec<&str> = formatted.split("\r\n").collect();
        assert_eq!(lines.len(), 5, "{formatted:?}");
        assert_eq!((lines[0], lines[2], lines[4]), ("id,card", "", "\n"));
        let back = success(
            keyed()
                .args(["decrypt", "--header", "--tweak-column", "id"])
                .args(options)
                .write_stdin(formatted.clone()),
        );
        assert_eq!(back, csv);
    }
    let formatted = success(
        keyed()
            .args(["encrypt", "--header", "-c", "card:card"])
            .write_stdin(csv),
    );
    assert_eq!(
        formatted,
        format!("id,card\r\n1,{}\r\n\r\n2,{}\r\n\n", c[0], c[1])
    );
}

// --- keygen and bases ------------------------------------------------------------------------

#[test]
fn keygen_prints_or_writes_a_new_private_file() {
    for (bits, digits) in [
        (None, 32),
        (Some("128"), 32),
        (Some("192"), 48),
        (Some("256"), 64),
    ] {
        let mut command = riffpe();
        command.arg("keygen");
        if let Some(bits) = bits {
            command.args(["--bits", bits]);
        }
        let key = success(&mut command);
        assert_eq!(key.len(), digits + 1);
        assert!(key.trim_end().bytes().all(|b| b.is_ascii_hexdigit()));
    }
    let a = success(riffpe().arg("keygen"));
    let b = success(riffpe().arg("keygen"));
    assert_ne!(a, b);

    let files = Files::new();
    let path = files.path("new.key");
    assert_eq!(
        success(riffpe().args(["keygen", "--output"]).arg(&path)),
        ""
    );
    let key = fs::read_to_string(&path).unwrap();
    assert_eq!(key.len(), 33);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let token = success(riffpe().args(["encrypt", "1", "--key-file"]).arg(&path));
    let back = success(
        riffpe()
            .args(["decrypt", token.trim_end(), "--key-file"])
            .arg(&path),
    );
    assert_eq!(back, "0000000000000001\n");

    let message = failure(riffpe().args(["keygen", "--output"]).arg(&path));
    assert_eq!(
        message,
        format!("error: {} already exists: not overwritten", path.display())
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), key);
}

#[test]
fn bases_as_the_reference() {
    assert_eq!(
        success(riffpe().args(["bases", "7000000000", "--threshold", "30"])),
        "35,40,40,50,50,50\n"
    );
    assert_eq!(
        success(riffpe().args(["bases", "227840000", "-T", "24"])),
        "40,40,40,40,89\n"
    );
    let message = failure(riffpe().args(["bases", "10", "--threshold", "30"]));
    assert_eq!(
        message,
        "error: 10 cannot be split into bases of at least 30"
    );
    // The radices it prints are what --radices takes.
    let bases = success(riffpe().args(["bases", "260000000", "--threshold", "20"]));
    let out = success(keyed().args(["encrypt", "--radices", bases.trim_end(), "259999999"]));
    assert_eq!(out.trim_end().len(), 9);
}

#[test]
fn help_and_version() {
    let help = success(riffpe().arg("--help"));
    for word in ["encrypt", "decrypt", "keygen", "bases", "RIFFPE_KEY"] {
        assert!(help.contains(word), "{word}: {help}");
    }
    let help = success(riffpe().args(["encrypt", "--help"]));
    for flag in [
        "--key-file",
        "--key",
        "--radix",
        "--digits",
        "--radices",
        "--tweak",
        "--tweak-text",
        "--bytes-per-value",
        "--big-endian",
        "--input",
        "--output",
        "--threads",
        "--quiet",
        "--column",
        "--delimiter",
        "--header",
    ] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
    // Braces in help text are clap's to read (`{n}` is a line break): the template syntax
    // must come through as written.
    let template = "{name} a named alphabet, {7} the item before seven";
    assert!(
        help.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains(template),
        "{help}"
    );
    let version = success(riffpe().arg("--version"));
    assert!(version.starts_with("riffpe "), "{version}");
    // The backend a key runs on here, as the library names it.
    let backend = riffpe::Aes::new_from_slice(&[0; 16]).unwrap().backend();
    assert_eq!(backend, riffpe::AesBackend::detect());
    assert!(
        version.contains(&format!("\nAES: {backend}\n")),
        "{version}"
    );
    let short = success(riffpe().arg("-V"));
    assert!(!short.contains("AES"), "{short}");
}

#[test]
fn headers_alone_and_in_plain_line_files() {
    let out = success(
        keyed()
            .args(["encrypt", "-c", "2", "--header"])
            .write_stdin("id,card\n"),
    );
    assert_eq!(out, "id,card\n");
    let out = success(
        keyed()
            .args(["encrypt", "--header"])
            .write_stdin("cards\r\n"),
    );
    assert_eq!(out, "cards\r\n");
    let out = success(
        keyed()
            .args(["encrypt", "--header"])
            .write_stdin("cards\n1234123456785678\n"),
    );
    assert_eq!(out, "cards\n5158543106053628\n");
}

#[test]
fn a_byte_order_mark_passes_through_in_every_kind_of_file() {
    const BOM: &str = "\u{feff}";
    let kinds: [(&[&str], &str); 6] = [
        (&[], "1234123456785678\r\n0000000000000042\r\n"),
        (&["-c", "2"], "1,1234123456785678\n2,\n"),
        (
            &["-c", "card", "--header"],
            "card,id\r\n1234123456785678,7\r\n",
        ),
        (&["--format", "card"], "4111 1111 1111 1111\n"),
        (
            &["-c", "card", "--format", "card", "--header"],
            "card;id\n4111-1111-1111-1111;1\n",
        ),
        (&["--format", "ssn", "--header"], "ssn\n123-45-6789\n"),
    ];
    for (args, text) in kinds {
        let mut args = args.to_vec();
        if text.contains(';') {
            args.extend(["-d", ";"]);
        }
        let run = |command: &str, input: String| {
            success(keyed().arg(command).args(&args).write_stdin(input))
        };
        let plain = run("encrypt", text.to_string());
        assert_ne!(plain, text, "{args:?}");
        let marked = run("encrypt", format!("{BOM}{text}"));
        assert_eq!(marked, format!("{BOM}{plain}"), "{args:?}");
        assert_eq!(run("decrypt", marked), format!("{BOM}{text}"), "{args:?}");
    }
    // UTF-16 (as Excel's "Unicode Text") is refused as a whole, and leaves no output.
    let files = Files::new();
    let input = files.write("u16.txt", b"\xff\xfe1\x002\x00\n\x00");
    for args in [&[][..], &["--format", "card"], &["-c", "1", "--header"]] {
        let message = failure(
            keyed()
                .arg("encrypt")
                .args(args)
                .arg("--input")
                .arg(&input)
                .arg("--output")
                .arg(files.path("out.txt")),
        );
        assert!(
            message.ends_with(
                "u16.txt: it is UTF-16 text (it starts with a UTF-16 byte order mark): save it as \
                 UTF-8, or convert it (iconv -f UTF-16 -t UTF-8)"
            ),
            "{message}"
        );
        assert_eq!(files.names(), ["u16.txt"]);
    }
}

// --- Pipes and signals -----------------------------------------------------------------------

#[test]
fn a_reader_that_closes_early_ends_the_run_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let files = Files::new();
    // Far more output than a pipe buffers, so the writer is still running when the reader goes.
    let input = files.write("big.txt", Xorshift(5).lines(200_000, 16));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_riffpe"))
        .env("RIFFPE_KEY", KEY)
        .args(["encrypt", "--input"])
        .arg(&input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdout.read_line(&mut first).unwrap();
    assert_eq!(first.len(), 17, "{first:?}");
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
}

/// Starts `riffpe encrypt --output out.txt` reading a FIFO, feeds it enough lines that it is
/// writing its output, then sends `signal` while it waits for more, and checks that the output
/// directory is as it was and the run failed.
#[cfg(unix)]
fn interrupted_run_leaves_the_directory_as_it_was(signal: rustix::process::Signal) {
    use std::io::Write;
    use std::process::Stdio;

    let inputs = Files::new();
    let fifo = inputs.path("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .unwrap();
    let outputs = Files::new();
    outputs.write("out.txt", "before\n");
    let before = outputs.names();

    let child = std::process::Command::new(env!("CARGO_BIN_EXE_riffpe"))
        .env("RIFFPE_KEY", KEY)
        .args(["encrypt", "--input"])
        .arg(&fifo)
        .arg("--output")
        .arg(outputs.path("out.txt"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut writer = fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    // Several blocks' worth: once written, the run has read past its first block, so its
    // output file exists and holds data.
    writer
        .write_all(Xorshift(9).lines(150_000, 16).as_bytes())
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    rustix::process::kill_process(rustix::process::Pid::from_child(&child), signal).unwrap();
    let output = child.wait_with_output().unwrap();
    drop(writer);

    assert!(!output.status.success(), "{output:?}");
    assert_eq!(outputs.names(), before);
    assert_eq!(read(&outputs.path("out.txt")), b"before\n");
}

#[cfg(unix)]
#[test]
fn sigint_leaves_the_output_directory_as_it_was() {
    interrupted_run_leaves_the_directory_as_it_was(rustix::process::Signal::INT);
}

#[cfg(unix)]
#[test]
fn sigterm_leaves_the_output_directory_as_it_was() {
    interrupted_run_leaves_the_directory_as_it_was(rustix::process::Signal::TERM);
}

/// Where [`named_temporary_file_child`] writes, when this test binary runs it as a child.
#[cfg(unix)]
const NAMED_OUTPUT: &str = "RIFFPE_TEST_NAMED_OUTPUT";

/// Not a test of its own: the child process of the test below (it returns at once otherwise).
/// Writes through a named temporary file, says so, and waits to be killed.
#[cfg(unix)]
#[test]
fn named_temporary_file_child() {
    use std::io::{Read, Write};
    let Some(path) = std::env::var_os(NAMED_OUTPUT) else {
        return;
    };
    let file = riffpe_cli::output::AtomicFile::create_named(Path::new(&path)).unwrap();
    let mut sink = riffpe_cli::output::Sink::File(file);
    sink.write_all(b"partial\n").unwrap();
    sink.flush().unwrap();
    println!("ready");
    let _ = std::io::stdin().read(&mut [0; 1]);
}

#[cfg(unix)]
#[test]
fn signals_remove_a_named_temporary_file() {
    use rustix::process::{Pid, Signal, kill_process};
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    for signal in [Signal::INT, Signal::TERM, Signal::HUP] {
        let outputs = Files::new();
        outputs.write("out.txt", "before\n");
        let before = outputs.names();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "named_temporary_file_child",
                "--exact",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(NAMED_OUTPUT, outputs.path("out.txt"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        assert!(
            // Sequential libtest puts the test's output after "test … ... " on the same line.
            stdout.lines().any(|line| line.unwrap().ends_with("ready")),
            "the child never got ready"
        );
        // The portable path is the one under test: its temporary file is there by name.
        let during = outputs.names();
        assert_eq!(during.len(), 2, "{during:?}");
        assert!(
            during.iter().any(|name| name.starts_with(".riffpe-")),
            "{during:?}"
        );

        kill_process(Pid::from_child(&child), signal).unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "{signal:?}: {status:?}");
        assert_eq!(outputs.names(), before, "{signal:?}");
        assert_eq!(read(&outputs.path("out.txt")), b"before\n");
    }
}

// --- Formats ---------------------------------------------------------------------------------

/// The README's protect-and-restore commands for the sample customer file, without the key.
const CUSTOMER_COLUMNS: &[&str] = &[
    "--header",
    "--column",
    "card:card",
    "--column",
    "ssn:ssn",
    "--column",
    "phone:phone",
    "--column",
    "id:auto",
];

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/data")
        .join(name)
}

#[test]
fn the_readme_commands_protect_customers_csv_and_restore_it_byte_for_byte() {
    let files = Files::new();
    let protected = files.path("protected.csv");
    let restored = files.path("customers-again.csv");
    let key = sample("demo.key");
    let input = sample("customers.csv");
    let original = read(&input);
    success(
        riffpe()
            .args(["encrypt", "--key-file"])
            .arg(&key)
            .args(CUSTOMER_COLUMNS)
            .arg("--input")
            .arg(&input)
            .arg("--output")
            .arg(&protected),
    );
    success(
        riffpe()
            .args(["decrypt", "--key-file"])
            .arg(&key)
            .args(CUSTOMER_COLUMNS)
            .arg("--input")
            .arg(&protected)
            .arg("--output")
            .arg(&restored),
    );
    assert_eq!(read(&restored), original);

    // Only the four columns changed; everything else, CRLF and quotes included, is as it was.
    let tokens = String::from_utf8(read(&protected)).unwrap();
    let text = String::from_utf8(original).unwrap();
    assert_eq!(tokens.matches("\r\n").count(), text.matches("\r\n").count());
    let (before, after) = (text.split("\r\n"), tokens.split("\r\n"));
    for (plain, token) in before.zip(after).skip(1) {
        assert_eq!(plain.len(), token.len(), "{plain:?} {token:?}");
        let kept = |s: &str| {
            s.chars()
                .map(|c| if c.is_ascii_digit() { '9' } else { c })
                .collect::<String>()
        };
        // Every non-digit stays (the `id` letters change within their class).
        let (p, t) = (kept(plain), kept(token));
        let tail = |s: &str| s.chars().skip(8).collect::<String>();
        assert_eq!(tail(&p), tail(&t), "{plain:?} {token:?}");
    }
    for unchanged in [
        "\"Prefers email, not phone\"",
        "\"O'Brien, Seán\"",
        "\"Said \"\"call me later\"\"\"",
        "李小龙",
        "\"Line one\r\nline two\"",
        "john@example.co.uk,\"\",UK",
    ] {
        assert!(tokens.contains(unchanged), "{unchanged:?}");
    }
    assert!(!tokens.contains("4111 1111 1111 1111"));
    assert!(!tokens.contains("123-45-6789"));
    let quoted_card = tokens
        .match_indices(",\"")
        .any(|(i, _)| tokens.as_bytes()[i + 2].is_ascii_digit());
    assert!(quoted_card, "a quoted card stays quoted");
}

#[test]
fn formatted_columns_match_the_single_value_commands() {
    let csv = "id;card;ssn\n7;4111-1111-1111-1111;123-45-6789\n8;;078-05-1120\n";
    let out = success(
        keyed()
            .args([
                "encrypt", "-d", ";", "--header", "-c", "2:card", "-c", "3", "--format", "ssn",
            ])
            .write_stdin(csv),
    );
    let card = success(keyed().args(["encrypt", "--format", "card", "4111-1111-1111-1111"]));
    let ssns = success(keyed().args(["encrypt", "--format", "ssn", "123-45-6789", "078-05-1120"]));
    let ssns: Vec<&str> = ssns.lines().collect();
    assert_eq!(
        out,
        format!(
            "id;card;ssn\n7;{};{}\n8;;{}\n",
            card.trim_end(),
            ssns[0],
            ssns[1]
        )
    );
}

#[test]
fn header_names_with_blanks_around_them() {
    let out = success(
        keyed()
            .args(["encrypt", "-n", "10", "-l", "16", "--header", "-c", "card"])
            .write_stdin("id, card\n1, 4111111111111111\n"),
    );
    let token = success(keyed().args(["encrypt", "-n", "10", "-l", "16", "4111111111111111"]));
    assert_eq!(out, format!("id, card\n1, {token}"));
}

#[test]
fn ssn_column_with_and_without_dashes() {
    let csv = "id,ssn\n1,123-45-6789\n2,123456789\n3,\n";
    let out = success(
        keyed()
            .args(["encrypt", "--header", "-c", "ssn:ssn"])
            .write_stdin(csv),
    );
    let dashed = success(keyed().args(["encrypt", "--format", "ssn", "123-45-6789"]));
    let dashed = dashed.trim_end();
    let bare = dashed.replace('-', "");
    assert_eq!(out, format!("id,ssn\n1,{dashed}\n2,{bare}\n3,\n"));
    let back = success(
        keyed()
            .args(["decrypt", "--header", "-c", "ssn:ssn"])
            .write_stdin(out),
    );
    assert_eq!(back, csv);
    // A template with --literals-optional is the ssn format.
    let template = ["--template", "999-99-9999", "--literals-optional"];
    let tokens = success(
        keyed()
            .arg("encrypt")
            .args(template)
            .args(["123-45-6789", "123456789"]),
    );
    assert_eq!(tokens, format!("{dashed}\n{bare}\n"));
    let strict = failure(keyed().args(["encrypt", "--template", "999-99-9999", "123456789"]));
    assert!(
        strict.ends_with("the value has 9 characters, the template 11"),
        "{strict}"
    );
    // A column's own template takes it too.
    let column = [
        "encrypt",
        "--header",
        "-c",
        "ssn:template=999-99-9999",
        "--literals-optional",
    ];
    let columns = success(keyed().args(column).write_stdin(csv));
    assert_eq!(columns, format!("id,ssn\n1,{dashed}\n2,{bare}\n3,\n"));
    // ... and leaves a card column beside it as the card format.
    let card = success(keyed().args(["encrypt", "--format", "card", "4111 1111 1111 1111"]));
    let card = card.trim_end();
    let both = success(
        keyed()
            .args(column)
            .args(["-c", "card:card"])
            .write_stdin("id,ssn,card\n1,123456789,4111 1111 1111 1111\n"),
    );
    assert_eq!(both, format!("id,ssn,card\n1,{bare},{card}\n"));
    let without = failure(keyed().args(["encrypt", "--format", "card", "--literals-optional"]));
    assert!(
        without
            .ends_with("--literals-optional needs a template: --template or --column N:template=T"),
        "{without}"
    );
}

#[test]
fn columns_with_their_own_templates_and_alphabets() {
    let csv = "id,mac,dna,card\nK1234567,00:1a:2b:3c:4d:5e,GATT-ACA,4111 1111 1111 1111\n";
    let columns = [
        "-c",
        "id:template=A9{7}",
        "-c",
        "mac:template=xx:xx:xx:xx:xx:xx",
        "-c",
        "3:alphabet=ACGT",
        "-c",
        "card:card",
    ];
    let common = ["--header", "--passthrough", "-", "--allow-small-domain"];
    let out = success(
        keyed()
            .arg("encrypt")
            .args(common)
            .args(columns)
            .write_stdin(csv),
    );
    // Each column as its own single-value command encrypts it.
    let one = |options: &[&str], value: &str| {
        let token = success(keyed().arg("encrypt").args(options).arg(value));
        token.trim_end().to_string()
    };
    let expected = [
        one(&["--template", "A9{7}"], "K1234567"),
        one(&["--template", "xx:xx:xx:xx:xx:xx"], "00:1a:2b:3c:4d:5e"),
        one(
            &[
                "--alphabet",
                "ACGT",
                "--passthrough",
                "-",
                "--allow-small-domain",
            ],
            "GATT-ACA",
        ),
        one(&["--format", "card"], "4111 1111 1111 1111"),
    ];
    assert_eq!(out, format!("id,mac,dna,card\n{}\n", expected.join(",")));
    assert!(
        expected[2].contains('-'),
        "the passthrough stays: {}",
        expected[2]
    );
    let back = success(
        keyed()
            .arg("decrypt")
            .args(common)
            .args(columns)
            .write_stdin(out),
    );
    assert_eq!(back, csv);

    // A format that does not build names its column.
    let err = failure(
        keyed()
            .args(["encrypt", "--header", "-c", "id:template=A9{"])
            .write_stdin(csv),
    );
    assert!(err.contains("--column id:template=A9{"), "{err}");
    // --passthrough needs an alphabet to pass through.
    let err = failure(
        keyed()
            .args([
                "encrypt",
                "--header",
                "-c",
                "id:template=A9{7}",
                "--passthrough",
                "-",
            ])
            .write_stdin(csv),
    );
    assert!(err.contains("--passthrough needs an alphabet"), "{err}");
}

#[test]
fn lines_and_arguments_in_each_kind_of_format() {
    let cases: &[(&[&str], &str)] = &[
        (&["--format", "card"], "4111 1111 1111 1111"),
        (&["--format", "phone"], "+1 (555) 010-9999"),
        (&["--template", "A9{7}"], "K1234567"),
        (
            &["--alphabet", "ACGT", "--passthrough", "-"],
            "GATTACA-GATTACA",
        ),
        (&["--alphabet", "hex", "--keep-prefix", "2"], "deadbeef00"),
        (
            &["--format", "card", "--keep-suffix", "4", "--luhn", "off"],
            "4111111111111111",
        ),
        (
            &["--format", "card", "--luhn", "invalid"],
            "4111111111111111",
        ),
        (&["--format", "digits", "--allow-small-domain"], "1234"),
    ];
    for &(options, value) in cases {
        let token = success(keyed().arg("encrypt").args(options).arg(value));
        let token = token.strip_suffix('\n').unwrap();
        assert_eq!(token.chars().count(), value.chars().count(), "{options:?}");
        assert_ne!(token, value, "{options:?}");
        let back = success(keyed().arg("decrypt").args(options).arg(token));
        assert_eq!(back, format!("{value}\n"), "{options:?}");
        // Lines of a file: empty lines pass through, CRLF stays.
        let lines = format!("{value}\r\n\r\n{value}");
        let out = success(
            keyed()
                .arg("encrypt")
                .args(options)
                .write_stdin(lines.clone()),
        );
        assert_eq!(out, format!("{token}\r\n\r\n{token}"), "{options:?}");
        let back = success(keyed().arg("decrypt").args(options).write_stdin(out));
        assert_eq!(back, lines);
    }
}

#[test]
fn a_printable_token_that_needs_quotes_is_quoted_and_reads_back() {
    let options = ["--alphabet", "printable", "--header", "-c", "2"];
    let mut csv = String::from("n,secret\n");
    for i in 0..200 {
        csv.push_str(&format!("{i},abcdefgh{i:03}\n"));
    }
    let out = success(
        keyed()
            .arg("encrypt")
            .args(options)
            .write_stdin(csv.clone()),
    );
    assert!(out.contains('"'), "some token has a quote or a comma");
    let back = success(
        keyed()
            .arg("decrypt")
            .args(options)
            .write_stdin(out.clone()),
    );
    let unquoted: String = csv.clone();
    // A value quoted only because its token needed it comes back quoted (RFC 4180 equal).
    let mut fields = Vec::new();
    for (a, b) in back.lines().zip(unquoted.lines()) {
        let a = a.replacen(",\"", ",", 1);
        let a = a.strip_suffix('"').map_or(a.clone(), str::to_string);
        assert_eq!(a, b);
        fields.push(a);
    }
    assert_eq!(fields.len(), 201);
}

#[test]
fn tweak_columns_bind_each_row_and_are_refused_when_encrypted() {
    let csv = "who,ssn\nalice,123-45-6789\nbob,123-45-6789\n";
    let options = ["--header", "-c", "ssn:ssn", "--tweak-column", "who"];
    let out = success(keyed().arg("encrypt").args(options).write_stdin(csv));
    let tokens: Vec<&str> = out.lines().skip(1).map(|l| &l[l.len() - 11..]).collect();
    assert_ne!(
        tokens[0], tokens[1],
        "equal values under different row tweaks"
    );
    let back = success(
        keyed()
            .arg("decrypt")
            .args(options)
            .write_stdin(out.clone()),
    );
    assert_eq!(back, csv);
    // The same rows under --tweak-text give other tokens: the text is part of the context.
    let other = success(
        keyed()
            .arg("encrypt")
            .args(options)
            .args(["--tweak-text", "t"])
            .write_stdin(csv),
    );
    assert_ne!(other, out);
    let message = failure(
        keyed()
            .args([
                "encrypt",
                "--header",
                "-c",
                "ssn:ssn",
                "--tweak-column",
                "2",
            ])
            .write_stdin(csv),
    );
    assert_eq!(
        message,
        "error: --tweak-column 2: column 2 is also encrypted; a tweak must stay readable to decrypt"
    );
    // Clap's usage error: the values must be in other columns.
    let output = run(keyed().args(["encrypt", "--tweak-column", "2", "5"]));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--column"));
}

/// The context `--tweak-column` gives a row, as the README spells it, in hex for `--tweak`.
fn row_context_hex(tweak: &[u8], field: &[u8]) -> String {
    let mut context = b"riffpe-cli/tweak-column\x00".to_vec();
    for part in [tweak, field] {
        context.extend_from_slice(&(part.len() as u32).to_le_bytes());
        context.extend_from_slice(part);
    }
    context.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn integer_tweak_columns_give_each_row_the_readme_context() {
    // A small domain, a u128 one and one past u128 (digits): each codec's path.
    for scheme in [
        &["-n", "100", "-l", "8"][..],
        &["-n", "10", "-l", "30"],
        &["-n", "1000", "-l", "20"],
    ] {
        let digits: usize = match scheme[1] {
            "1000" => 60,
            "10" => 30,
            _ => 16,
        };
        let value = "1234567890".repeat(6)[..digits].to_string();
        let rows = [("1", "alice"), ("2", "bob"), ("3", ""), ("4", "alice")];
        let mut csv = String::from("id,who,number\n");
        for (id, who) in rows {
            csv.push_str(&format!("{id},{who},{value}\n"));
        }
        for text in ["", "t"] {
            let options = [
                "--header",
                "-c",
                "3",
                "--tweak-column",
                "2",
                "--tweak-text",
                text,
            ];
            let out = success(
                keyed()
                    .arg("encrypt")
                    .args(scheme)
                    .args(options)
                    .write_stdin(csv.clone()),
            );
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines[0], "id,who,number");
            for ((id, who), line) in rows.iter().zip(&lines[1..]) {
                let hex = row_context_hex(text.as_bytes(), who.as_bytes());
                let single = success(
                    keyed()
                        .arg("encrypt")
                        .args(scheme)
                        .args(["--tweak", &hex, &value]),
                );
                assert_eq!(
                    *line,
                    format!("{id},{who},{}", single.trim_end()),
                    "{scheme:?} {text:?}"
                );
            }
            // Equal values: equal tokens only where the rows' tweak fields are equal.
            assert_ne!(lines[1][8..], lines[2][6..]);
            assert_eq!(lines[1][8..], lines[4][8..]);
            let back = success(
                keyed()
                    .arg("decrypt")
                    .args(scheme)
                    .args(options)
                    .write_stdin(out),
            );
            assert_eq!(back, csv);
        }
    }
}

#[test]
fn integer_tweak_columns_refuse_what_they_cannot_read() {
    let csv = "1,alice,12345678\n2,\"bob\"s,12345678\n";
    let cases = [
        (
            "2",
            "error: <stdin>:2: column 2: text after the closing quote of a quoted field (RFC \
             4180: write `\"\"` for a quote inside)",
        ),
        ("4", "error: <stdin>:1: no column 4: the line has 3 fields"),
        (
            "3",
            "error: --tweak-column 3: column 3 is also encrypted; a tweak must stay readable to \
             decrypt",
        ),
        (
            "who",
            "error: --tweak-column \"who\": a column name needs --header (or give its number)",
        ),
    ];
    for (column, expected) in cases {
        let args = ["encrypt", "-c", "3", "--tweak-column", column];
        assert_eq!(failure(keyed().args(args).write_stdin(csv)), expected);
    }
}

#[test]
fn format_errors_name_file_line_and_column_and_leave_no_output() {
    let files = Files::new();
    let secret = "4111 1111 1111 111x";
    let input = files.write(
        "in.csv",
        format!("id,note,card\r\n1,\"two\r\nlines\",4111 1111 1111 1111\r\n2,,{secret}\r\n"),
    );
    let output = files.path("out.csv");
    let message = failure(
        keyed()
            .args(["encrypt", "--header", "-c", "card:card", "--input"])
            .arg(&input)
            .arg("--output")
            .arg(&output),
    );
    assert_eq!(
        message,
        format!(
            "error: {}:4: column 3 (card): the 19th character is not in the format's alphabet for that position, nor a passthrough character",
            input.display()
        )
    );
    assert!(!message.contains(secret) && !message.contains("111x"));
    assert_eq!(files.names(), ["in.csv"]);

    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["-c", "2:ssn"],
            "a,\"12",
            "error: <stdin>:1: a quoted field is never closed (RFC 4180: `\"` ends it)",
        ),
        (
            &["-c", "2:ssn"],
            "a,\"123-45-6789\"x\n",
            "error: <stdin>:1: column 2: text after the closing quote of a quoted field (RFC 4180: write `\"\"` for a quote inside)",
        ),
        (
            &["-c", "3:ssn"],
            "a,b\n",
            "error: <stdin>:1: no column 3: the line has 2 fields",
        ),
        (
            &["-c", "name:ssn"],
            "a\n",
            "error: --column \"name\": a column name needs --header (or give its number)",
        ),
        (
            &["--header", "-c", "nope:ssn"],
            "a\n",
            "error: --column \"nope\": the header has no column of this name (it has \"a\")",
        ),
        (
            &["-c", "1:ssn", "-c", "1:card"],
            "a\n",
            "error: --column 1: column 1 is given twice",
        ),
        (
            &["-c", "1:nope"],
            "a\n",
            "error: --column 1:nope: no named format has this name (`riffpe formats` lists them)",
        ),
        (
            &["--format", "card-keep-6-4"],
            "4111111111111111\n",
            "error: <stdin>:1: the encrypted positions give 100000 values, fewer than the 1000000 NIST SP 800-38G Rev. 1 requires: encrypt more characters (keep fewer, use a longer value or a larger alphabet), or opt in with allow_small_domain",
        ),
        (
            &["--template", "9{"],
            "1\n",
            "error: --template: template error at its 2nd character: `{` is never closed by `}`",
        ),
        (
            &["-c", "1", "-c", "2"],
            "1,2\n",
            "error: several --column options need a format each (--column N:FORMAT) or --format: integers take one column",
        ),
        (
            &["--keep-suffix", "4"],
            "1\n",
            "error: --keep-prefix, --keep-suffix, --luhn and --allow-small-domain each needs a format: --format, --template, --alphabet or --column N:FORMAT",
        ),
    ];
    for &(options, input, expected) in cases {
        let message = failure(keyed().arg("encrypt").args(options).write_stdin(input));
        assert_eq!(message, expected, "{options:?}");
    }
}

#[test]
fn formats_lists_every_named_format_with_its_domains() {
    let out = success(riffpe().arg("formats"));
    for name in [
        "card",
        "card-keep-6-4",
        "ssn",
        "phone",
        "alnum",
        "auto",
        "uuid",
    ] {
        assert!(out.lines().any(|l| l == name), "{name}");
    }
    assert!(
        out.contains("16 characters: 100000 values: refused"),
        "{out}"
    );
    assert!(out.contains("radices: 10 each, the last digit set by Luhn"));
    // 16^32 does not fit the 128-bit size, which saturates: not printed as 2^128 - 1.
    assert!(out.contains("32 characters: 2^128 or more values"), "{out}");
    assert!(out.contains("16 characters: 2^64 values"), "{out}");
}
