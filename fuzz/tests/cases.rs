//! Hand-picked cases of the `roundtrip` and `differential` targets: SPEC's boundaries, run with
//! a larger budget than the fuzzer's. The fuzz harness prints a failing case as a test to
//! paste here.

use riffpe::{MessageError, Selection, SetupError};
use riffpe_fuzz::case::{
    Case, FUZZ_BUDGET, MAX_MESSAGE_DIGITS, Outcome, Params, TEST_BUDGET, hex, runs,
};
use riffpe_fuzz::{batch, check};

const KEY16: &str = "00112233445566778899aabbccddeeff";
const KEY24: &str = "000102030405060708090a0b0c0d0e0f1011121314151617";
const KEY32: &str = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";

/// A Riffpe case with one message of `digits` digits counting up from 0 modulo `radix`, another
/// of the largest digits, the empty fixed tweak and a short per-call tweak.
fn riffpe(radix: u32, digits: usize, bytes_per_value: usize) -> Case {
    let count = digits.min(MAX_MESSAGE_DIGITS);
    let r = u64::from(radix.max(1));
    let up = (0..count)
        .map(|i| u32::try_from(i as u64 % r).expect("below a u32 radix"))
        .collect();
    let top = vec![radix.saturating_sub(1); count];
    Case {
        params: Params::Riffpe { radix, digits },
        key: hex(KEY16),
        tweak: Vec::new(),
        bytes_per_value,
        call_tweak: b"per call".to_vec(),
        messages: vec![up, top],
        message_tweaks: vec![b"first".to_vec(), Vec::new()],
        scratch_lanes: 3,
    }
}

/// A RiffpeX case with one message of zeros and one of each radix's largest digit.
fn riffpex(radices: Vec<u32>, bytes_per_value: usize) -> Case {
    let zeros = vec![0; radices.len()];
    let top = radices.iter().map(|r| r.saturating_sub(1)).collect();
    Case {
        params: Params::RiffpeX { radices },
        key: hex(KEY16),
        tweak: b"fixed".to_vec(),
        bytes_per_value,
        call_tweak: Vec::new(),
        messages: vec![zeros, top],
        message_tweaks: vec![b"fixed".to_vec(), vec![0xa5; 100]],
        scratch_lanes: 1,
    }
}

fn with(mut case: Case, change: impl FnOnce(&mut Case)) -> Case {
    change(&mut case);
    // A case of the fuzzer never holds more messages than its budget allows.
    while !case.within_budget(FUZZ_BUDGET) && case.messages.len() > 1 {
        case.messages.pop();
    }
    case.message_tweaks
        .resize(case.messages.len(), b"per message".to_vec());
    case
}

/// Boundary cases, each a pick from the decoding's edge-value tables.
fn edge_cases() -> Vec<Case> {
    let mut cases = vec![
        // Radix 2, and the element width's boundaries: w = 1 up to 255, 2 from 256, 4 from 65 536.
        riffpe(2, 1, 16),
        riffpe(2, 8, 16),
        riffpe(255, 4, 16),
        riffpe(256, 4, 16),
        riffpe(65_535, 2, 1),
        riffpe(65_536, 1, 1),
        riffpe(65_537, 1, 1),
        // w = 1 holds digit indices up to 255: 256 digits are fine, 257 are not.
        riffpe(2, 256, 16),
        riffpe(255, 256, 1),
        riffpe(2, 257, 16),
        riffpe(255, 257, 1),
        // ... but at w = 2 they are.
        riffpe(256, 257, 1),
        // bytes_per_value: 1 (ties everywhere), 8 and 9 (a key's leading part), 48, and 0.
        riffpe(10, 6, 1),
        riffpe(100, 4, 8),
        riffpe(100, 4, 9),
        riffpe(10, 8, 48),
        riffpe(1000, 2, 48),
        riffpe(10, 4, 0),
        // Over the scratch cap, and any radix at all: constructed (or refused), never run.
        riffpe(u32::MAX, 1, 1),
        riffpe(4_000_000_000, 3, 48),
        riffpe(1 << 24, 300, 16),
        // Invalid radix and digit counts.
        riffpe(0, 4, 16),
        riffpe(1, 4, 16),
        riffpe(10, 0, 16),
        riffpe(65_536, usize::try_from(1u64 << 32).unwrap_or(usize::MAX), 1),
        // Tweaks: empty and 100 bytes, fixed and per call; 24- and 32-byte keys.
        with(riffpe(10, 8, 16), |c| c.tweak = vec![0xa5; 100]),
        with(riffpe(10, 8, 16), |c| c.call_tweak = vec![0x5a; 100]),
        with(riffpe(100, 8, 18), |c| c.key = hex(KEY24)),
        with(riffpe(100, 8, 18), |c| c.key = hex(KEY32)),
        // Keys of no AES size.
        with(riffpe(10, 4, 16), |c| c.key = Vec::new()),
        with(riffpe(10, 4, 16), |c| c.key = vec![7; 17]),
        // RiffpeX: mixed widths, a single digit, radices below 2, 256 and 257 digits at w = 1.
        riffpex(vec![26, 10, 10, 10], 16),
        riffpex(vec![2, 65_536], 1),
        riffpex(vec![255, 256], 16),
        riffpex(vec![3], 16),
        riffpex(vec![10, 1, 10], 16),
        riffpex(runs(&[(2, 256)]), 16),
        riffpex(runs(&[(2, 257)]), 16),
        riffpex(runs(&[(2, 256), (256, 1)]), 1),
        riffpex(Vec::new(), 16),
        // Invalid messages: a digit equal to its radix, one digit too few, one too many.
        with(riffpe(10, 4, 16), |c| c.messages[1][2] = 10),
        with(riffpe(10, 4, 16), |c| c.messages[0][3] = u32::MAX),
        with(riffpe(10, 4, 16), |c| {
            c.messages[0].pop();
        }),
        with(riffpe(10, 4, 16), |c| c.messages[1].push(0)),
        with(riffpex(vec![26, 10, 10], 16), |c| c.messages[1][0] = 27),
        // Many messages: lockstep runs several groups of lanes.
        with(riffpe(10, 6, 16), |c| {
            c.messages = (0..70u32).map(|i| vec![i % 10; 6]).collect();
            c.message_tweaks = (0..70u8).map(|i| vec![i; usize::from(i % 20)]).collect();
            c.scratch_lanes = 8;
        }),
    ];
    // Every case within the budget, as the fuzzer's decoding makes them.
    for case in &mut cases {
        let trimmed = with(case.clone(), |_| {});
        *case = trimmed;
    }
    cases
}

/// Runs `check` on every edge case with the tests' larger budget.
fn run_edge_cases(name: &str, check: fn(&Case, u64) -> Outcome) {
    for case in edge_cases() {
        if let Err(failure) = check(&case, TEST_BUDGET) {
            panic!("{failure}\n\n{}", case.reproducer(name));
        }
    }
}

#[test]
fn edge_cases_roundtrip() {
    run_edge_cases("check::roundtrip", check::roundtrip_within);
}

#[test]
fn edge_cases_differential() {
    run_edge_cases("check::differential", check::differential_within);
}

#[test]
fn edge_cases_batch_modes() {
    run_edge_cases("batch::modes", batch::modes_within);
}

/// The edge cases that matter most are really run, not only constructed.
#[test]
fn edge_cases_reach_every_width() {
    let run: Vec<usize> = edge_cases()
        .iter()
        .filter(|c| c.within_budget(TEST_BUDGET) && c.build(Selection::Fast).is_ok())
        .map(|c| c.params.width())
        .collect();
    for width in [1, 2, 4] {
        assert!(
            run.contains(&width),
            "no edge case encrypts at width {width}"
        );
    }
}

/// The checks do fail: a constructor that refuses valid parameters, or accepts invalid ones.
#[test]
fn checks_are_not_vacuous() {
    let valid = riffpe(10, 4, 16);
    assert!(check::construction(&valid, &Err(SetupError::NoDigits)).is_err());
    let wrong_key = Err(SetupError::InvalidKeyLength { len: 16 });
    assert!(check::construction(&valid, &wrong_key).is_err());
    let built = valid.build(Selection::Fast);
    assert!(check::construction(&valid, &built).is_ok());
    let bad_key = with(valid.clone(), |c| c.key = vec![1; 17]);
    assert!(check::construction(&bad_key, &built).is_err());
    let bad_digits = with(riffpe(255, 257, 1), |_| {});
    assert!(check::construction(&bad_digits, &built).is_err());
    let huge = riffpe(4_000_000_000, 1, 48);
    assert!(check::construction(&huge, &built).is_err());
    assert_eq!(
        valid.params.message_error(&[1, 2, 10, 11]),
        Some(MessageError::DigitOutOfRange {
            message: 0,
            position: 2,
            radix: 10
        })
    );
}

/// A huge bytes_per_value once overflowed the scratch size in `Layout::new`; now each is
/// refused with an error.
#[test]
fn huge_bytes_per_value_is_refused() {
    // One case per overflow: radix · b (the keystream's blocks), the keystream stride's + 16,
    // b · 8 (the selection keys). In release builds the first was accepted, and encrypt then
    // panicked out of bounds.
    let cases = [
        riffpe(2, 1, usize::MAX / 2 + 1),
        riffpe(14, 4, usize::MAX),
        riffpex(vec![60, 60], usize::MAX / 4),
        riffpe(51, 3, usize::MAX / 5),
    ];
    for case in cases {
        if let Err(failure) = check::roundtrip(&case) {
            panic!("{failure}\n\n{}", case.reproducer("check::roundtrip"));
        }
    }
}
