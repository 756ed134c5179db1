//! Tweaks in a batch, one per message or one for all, in both modes, against the core one
//! message at a time and the plain reference; errors name the batch-wide message index.

use riffpe::integer::{DigitOrder, from_digits, to_digits};
use riffpe::{AnyFpe, MessageError, Riffpe, RiffpeX, ScratchBuf, Tweak};
use riffpe_batch::{Batch, Mode};
use riffpe_reference::{Reference, Scheme};

const MODES: [Mode; 2] = [Mode::Lockstep, Mode::Parallel];

/// Lengths around the lane counts (8, 30, 64) and the chunk size (1024).
const LENGTHS: [usize; 9] = [0, 1, 7, 9, 31, 65, 1023, 1025, 2049];

fn random(seed: u64, count: usize) -> Vec<u64> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

/// One tweak per message: empty ones, ones up to three blocks long, and repeats.
fn tweaks(count: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|i| format!("customer {} ", i % 700).repeat(i % 4).into_bytes())
        .collect()
}

/// Messages whose digits are below `radices` (one message per `radices.len()` digits).
fn messages(seed: u64, radices: &[u32], count: usize) -> Vec<u32> {
    let l = radices.len();
    random(seed, count * l)
        .iter()
        .enumerate()
        .map(|(j, &r)| (r % u64::from(radices[j % l])) as u32)
        .collect()
}

#[test]
fn per_message_tweaks_on_integers_equal_the_core_and_the_reference() {
    let key = [9; 16];
    let fpe = Riffpe::new(100, 8, &key, b"fixed").unwrap();
    let mut buf = ScratchBuf::for_message(&fpe);
    let order = DigitOrder::BigEndian;
    for len in LENGTHS {
        let plain: Vec<u64> = random(len as u64, len)
            .iter()
            .map(|x| x % 10u64.pow(16))
            .collect();
        let tweaks = tweaks(len);
        let refs: Vec<&[u8]> = tweaks.iter().map(Vec::as_slice).collect();
        let expected: Vec<u64> = plain
            .iter()
            .zip(&tweaks)
            .map(|(&x, tweak)| {
                let mut d = [0; 8];
                to_digits(x, fpe.domain(), order, &mut d).unwrap();
                fpe.encrypt_with(Tweak::Bytes(tweak), &mut d, &mut buf.scratch())
                    .unwrap();
                from_digits(&d, fpe.domain(), order).unwrap()
            })
            .collect();
        // The reference, built with the message's tweak, on the first, middle and last.
        for i in [0, len / 2, len.saturating_sub(1)]
            .into_iter()
            .filter(|&i| i < len)
        {
            let reference = Reference::new(
                Scheme::Riffpe {
                    radix: 100,
                    digits: 8,
                },
                &key,
                &tweaks[i],
                16,
            );
            let mut d = [0; 8];
            to_digits(plain[i], fpe.domain(), order, &mut d).unwrap();
            reference.encrypt(&mut d);
            assert_eq!(
                from_digits::<u64>(&d, fpe.domain(), order).unwrap(),
                expected[i],
                "len {len} message {i}"
            );
        }
        for mode in MODES {
            let batch = Batch::new(&fpe)
                .order(order)
                .mode(mode)
                .tweak(Tweak::PerMessage(&refs));
            let mut v = plain.clone();
            batch.encrypt_ints(&mut v).unwrap();
            assert_eq!(v, expected, "{mode:?} len {len}");
            batch.decrypt_ints(&mut v).unwrap();
            assert_eq!(v, plain, "{mode:?} len {len} decrypt");
        }
    }
}

#[test]
fn per_message_tweaks_on_digits_equal_the_core_and_the_reference() {
    // Radix 2, ties-prone one byte per value, and a radix above 65 536 (four-byte elements).
    let configs: [(Scheme<'_>, usize, u64); 3] = [
        (
            Scheme::Riffpe {
                radix: 2,
                digits: 19,
            },
            1,
            1,
        ),
        (Scheme::RiffpeX(&[2, 70_000, 5]), 1, 2),
        (Scheme::RiffpeX(&[26, 10, 10, 10]), 2, 3),
    ];
    let key = [4; 32];
    for (scheme, b, seed) in configs {
        let (fpe, radices): (AnyFpe, Vec<u32>) = match scheme {
            Scheme::Riffpe { radix, digits } => (
                Riffpe::builder(radix, digits)
                    .bytes_per_value(b)
                    .build(&key)
                    .unwrap()
                    .into(),
                vec![radix; digits],
            ),
            Scheme::RiffpeX(radices) => (
                RiffpeX::builder(radices.to_vec())
                    .bytes_per_value(b)
                    .build(&key)
                    .unwrap()
                    .into(),
                radices.to_vec(),
            ),
        };
        let l = radices.len();
        let mut buf = ScratchBuf::for_message(&fpe);
        for len in [1, 9, 31, 1030] {
            let plain = messages(seed + len as u64, &radices, len);
            let tweaks = tweaks(len);
            let refs: Vec<&[u8]> = tweaks.iter().map(Vec::as_slice).collect();
            let mut expected = plain.clone();
            for (m, tweak) in expected.chunks_exact_mut(l).zip(&tweaks) {
                fpe.encrypt_with(Tweak::Bytes(tweak), m, &mut buf.scratch())
                    .unwrap();
            }
            for i in [0, 1, 1023, 1024, len - 1].into_iter().filter(|&i| i < len) {
                let mut m = plain[i * l..][..l].to_vec();
                Reference::new(scheme, &key, &tweaks[i], b).encrypt(&mut m);
                assert_eq!(
                    m,
                    expected[i * l..][..l],
                    "{scheme:?} len {len} message {i}"
                );
            }
            for mode in MODES {
                let batch = Batch::new(&fpe).mode(mode).tweak(Tweak::PerMessage(&refs));
                let mut d = plain.clone();
                batch.encrypt_digits(&mut d).unwrap();
                assert_eq!(d, expected, "{scheme:?} {mode:?} len {len}");
                batch.decrypt_digits(&mut d).unwrap();
                assert_eq!(d, plain, "{scheme:?} {mode:?} len {len} decrypt");
            }
        }
    }
}

#[test]
fn a_shared_tweak_equals_a_cipher_built_with_it() {
    let other = Riffpe::new(10, 9, &[2; 16], b"other").unwrap();
    let built = Riffpe::new(10, 9, &[2; 16], b"shared").unwrap();
    for len in [1, 65, 2049] {
        let plain: Vec<u64> = random(len as u64, len)
            .iter()
            .map(|x| x % 1_000_000_000)
            .collect();
        let mut expected = plain.clone();
        Batch::new(&built).encrypt_ints(&mut expected).unwrap();
        for mode in MODES {
            let batch = Batch::new(&other).mode(mode).tweak(Tweak::Bytes(b"shared"));
            let mut v = plain.clone();
            batch.encrypt_ints(&mut v).unwrap();
            assert_eq!(v, expected, "{mode:?} len {len}");
            batch.decrypt_ints(&mut v).unwrap();
            assert_eq!(v, plain, "{mode:?} len {len} decrypt");
        }
    }
}

#[test]
fn a_tweak_count_other_than_the_message_count_is_refused() {
    let fpe = Riffpe::new(10, 4, &[1; 16], b"").unwrap();
    let tweaks = tweaks(1500);
    let refs: Vec<&[u8]> = tweaks.iter().map(Vec::as_slice).collect();
    for mode in MODES {
        for (messages, given) in [(1000, 999), (1000, 1001), (1, 0), (0, 3)] {
            let batch = Batch::new(&fpe)
                .mode(mode)
                .tweak(Tweak::PerMessage(&refs[..given]));
            let err = MessageError::TweakCount {
                messages,
                tweaks: given,
            };
            let mut v: Vec<u64> = (0..messages as u64).collect();
            assert_eq!(batch.encrypt_ints(&mut v), Err(err), "{mode:?}");
            assert_eq!(v, (0..messages as u64).collect::<Vec<_>>());
            let mut d = vec![3u32; 4 * messages];
            assert_eq!(batch.decrypt_digits(&mut d), Err(err), "{mode:?}");
            assert_eq!(d, vec![3u32; 4 * messages]);
        }
    }
}

/// Bad messages in the first, a middle and the last chunk, at lane and chunk boundaries: the
/// first of them is reported by its batch-wide index, in both modes, with per-message tweaks
/// too, and nothing changes.
#[test]
fn errors_name_the_first_bad_message_and_its_position() {
    let fpe = RiffpeX::new([26, 10, 10, 10], &[1; 16], b"").unwrap();
    let count = 3000;
    let tweaks = tweaks(count);
    let refs: Vec<&[u8]> = tweaks.iter().map(Vec::as_slice).collect();
    let bad = [(0, 0), (7, 3), (8, 1), (1023, 2), (1024, 0), (2999, 3)];
    for (i, &(message, position)) in bad.iter().enumerate() {
        let radix = [26, 10, 10, 10][position];
        let mut d = messages(5, &[26, 10, 10, 10], count);
        d[message * 4 + position] = radix + 1;
        // A later bad message too: the first is the one reported.
        if let Some(&(later, at)) = bad.get(i + 1) {
            d[later * 4 + at] = u32::MAX;
        }
        let before = d.clone();
        let want = MessageError::DigitOutOfRange {
            message,
            position,
            radix,
        };
        for mode in MODES {
            for tweak in [Tweak::Fixed, Tweak::PerMessage(&refs)] {
                let batch = Batch::new(&fpe).mode(mode).tweak(tweak);
                assert_eq!(batch.encrypt_digits(&mut d), Err(want), "{mode:?}");
                assert_eq!(batch.decrypt_digits(&mut d), Err(want), "{mode:?}");
                assert_eq!(d, before);
            }
        }

        let mut v: Vec<u64> = random(6, count).iter().map(|x| x % 26_000).collect();
        v[message] = 26_000 + message as u64;
        if let Some(&(later, _)) = bad.get(i + 1) {
            v[later] = u64::MAX;
        }
        let before = v.clone();
        for mode in MODES {
            for tweak in [Tweak::Fixed, Tweak::PerMessage(&refs)] {
                let batch = Batch::new(&fpe).mode(mode).tweak(tweak);
                assert_eq!(
                    batch.encrypt_ints(&mut v),
                    Err(MessageError::ValueOutOfDomain { message }),
                    "{mode:?}"
                );
                assert_eq!(v, before);
            }
        }
    }
}
