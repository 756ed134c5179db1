//! Per-call tweaks (`Tweak::Bytes`, `Tweak::PerMessage`), one message or many in lockstep,
//! against one message at a time and against the plain reference built with each tweak.

mod common;

use common::{Params, SplitMix, counts_at_large_radices};
use riffpe::{AnyFpe, ScratchBuf, ScratchSize, Tweak};

/// `(mixed, radices, bytes_per_value)`: radix 2, ties-prone `bytes_per_value` 1 and 2, radices
/// above 65 536 (four-byte elements), and mixed radices of every element width, whose set-up
/// prefix before the tweak ends 4, 15 and 15 bytes into a block, and (sixteen radices) at its end.
const CONFIGS: &[(bool, &[u32], usize)] = &[
    (false, &[100; 8], 16),
    (false, &[2; 19], 1),
    (false, &[2; 3], 16),
    (false, &[10; 6], 1),
    (false, &[70_000; 2], 3),
    (true, &[26, 10, 10, 10], 1),
    (true, &[3, 300, 2], 2),
    (true, &[2, 70_000, 5], 2),
    (
        true,
        &[3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33],
        1,
    ),
];

/// Message counts below, around and not a multiple of the backend's lanes, with last groups
/// that run padded to a half or a whole batch, or as single messages, where the backend runs
/// them so. The configurations with a radix of 1000 or more (here those of radix 70 000) take
/// fewer ([`counts_at_large_radices`]).
fn counts(lanes: usize) -> Vec<usize> {
    let mut counts = vec![
        1,
        2,
        3,
        lanes / 4 + 3,
        lanes / 2 + 1,
        lanes - 1,
        lanes + 1,
        lanes + 2,
        lanes + lanes / 2 + 5,
        2 * lanes + 3,
    ];
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// Scratch for exactly `lanes` lanes of `fpe`.
fn scratch_for(fpe: &AnyFpe, lanes: usize) -> ScratchBuf {
    let one = fpe.scratch_size();
    ScratchBuf::with_size(ScratchSize {
        keystream_bytes: one.keystream_bytes * lanes,
        keys: one.keys * lanes,
    })
}

/// Tweaks of every length up to six blocks, the empty one and repeats among them.
fn random_tweaks(rng: &mut SplitMix, count: usize) -> Vec<Vec<u8>> {
    let mut tweaks: Vec<Vec<u8>> = (0..count)
        .map(|_| {
            let len = rng.below(97) as usize;
            rng.bytes(len)
        })
        .collect();
    tweaks[0].clear();
    if count > 2 {
        tweaks[count - 1] = tweaks[1].clone();
    }
    tweaks
}

#[test]
fn per_message_tweaks_in_lockstep_equal_one_at_a_time_and_the_reference() {
    let mut rng = SplitMix(21);
    for &(mixed, radices, b) in CONFIGS {
        let key_len = [16, 24, 32][rng.below(3) as usize];
        let key = rng.bytes(key_len);
        let params = Params {
            mixed,
            radices,
            key: &key,
            bytes_per_value: b,
        };
        let fpe = params.fpe(b"fixed");
        let l = radices.len();
        let mut one_buf = ScratchBuf::for_message(&fpe);
        let lanes = fpe.lanes();
        let counts = counts_at_large_radices(radices, lanes).unwrap_or_else(|| counts(lanes));
        for count in counts {
            let plain = rng.messages(radices, count);
            let tweaks = random_tweaks(&mut rng, count);
            let tweak_refs: Vec<&[u8]> = tweaks.iter().map(Vec::as_slice).collect();
            let what = format!("{radices:?} b={b} count={count}");

            // One message at a time, each under its own tweak.
            let mut expected = plain.clone();
            for (m, tweak) in expected.chunks_exact_mut(l).zip(&tweaks) {
                fpe.encrypt_with(Tweak::Bytes(tweak), m, &mut one_buf.scratch())
                    .unwrap();
            }
            // The same on the one-message calls' own scratch (on the stack up to radix 256).
            for ((original, want), tweak) in plain
                .chunks_exact(l)
                .zip(expected.chunks_exact(l))
                .zip(&tweaks)
            {
                let mut m = original.to_vec();
                fpe.encrypt_tweaked(tweak, &mut m).unwrap();
                assert_eq!(m, want, "{what}: encrypt_tweaked, tweak {tweak:02x?}");
                fpe.decrypt_tweaked(tweak, &mut m).unwrap();
                assert_eq!(m, original, "{what}: decrypt_tweaked");
            }
            // The reference, built with each message's tweak as its fixed tweak.
            for ((m, want), tweak) in plain
                .chunks_exact(l)
                .zip(expected.chunks_exact(l))
                .zip(&tweaks)
            {
                let mut m = m.to_vec();
                params.reference(tweak).encrypt(&mut m);
                assert_eq!(m, want, "{what}: reference, tweak {tweak:02x?}");
            }

            // Lockstep with the backend's lanes; in groups of 3 (tweaks cross groups) in one
            // message's scratch multiplied; in groups of up to 5 sized by the method for them.
            let lockstep_bufs = [
                ScratchBuf::for_lockstep(&fpe),
                scratch_for(&fpe, 3),
                ScratchBuf::with_size(fpe.scratch_size_for_lanes(5)),
            ];
            for (which, mut buf) in lockstep_bufs.into_iter().enumerate() {
                let mut m = plain.clone();
                let per = Tweak::PerMessage(&tweak_refs);
                fpe.encrypt_with(per, &mut m, &mut buf.scratch()).unwrap();
                assert_eq!(m, expected, "{what}: lockstep scratch {which}");
                fpe.decrypt_with(per, &mut m, &mut buf.scratch()).unwrap();
                assert_eq!(m, plain, "{what}: lockstep scratch {which}, decrypt");
            }
        }
    }
}

#[test]
fn shared_tweak_bytes_equal_a_cipher_built_with_that_tweak() {
    let mut rng = SplitMix(22);
    for &(mixed, radices, b) in CONFIGS {
        let key = rng.bytes(16);
        let params = Params {
            mixed,
            radices,
            key: &key,
            bytes_per_value: b,
        };
        let other = params.fpe(b"another fixed tweak");
        let l = radices.len();
        let long = rng.bytes(40);
        let tweaks: [&[u8]; 4] = [b"", b"t", b"0123456789abcdef", &long];
        for tweak in tweaks {
            let built = params.fpe(tweak);
            let count = 2 * built.lanes() + 3;
            let plain = rng.messages(radices, count);
            let mut expected = plain.clone();
            for m in expected.chunks_exact_mut(l) {
                built.encrypt(m).unwrap();
            }
            let mut m = plain.clone();
            let mut buf = ScratchBuf::for_lockstep(&other);
            other
                .encrypt_with(Tweak::Bytes(tweak), &mut m, &mut buf.scratch())
                .unwrap();
            assert_eq!(m, expected, "{radices:?} b={b} tweak {tweak:02x?}");
            let mut fixed = plain.clone();
            built
                .encrypt_with(Tweak::Fixed, &mut fixed, &mut buf.scratch())
                .unwrap();
            assert_eq!(fixed, expected, "{radices:?} b={b} fixed {tweak:02x?}");
            other
                .decrypt_with(Tweak::Bytes(tweak), &mut m, &mut buf.scratch())
                .unwrap();
            assert_eq!(m, plain, "{radices:?} b={b} decrypt {tweak:02x?}");
        }
    }
}

/// The batch crate splits per-message tweaks with `Tweak::slice`: calls on consecutive
/// sub-slices give what one call on everything gives.
#[test]
fn sliced_per_message_tweaks_equal_one_call() {
    let mut rng = SplitMix(23);
    let key = rng.bytes(32);
    let radices = [26, 10, 10, 10];
    let fpe = Params {
        mixed: true,
        radices: &radices,
        key: &key,
        bytes_per_value: 5,
    }
    .fpe(b"");
    let count = 3 * fpe.lanes() + 5;
    let plain = rng.messages(&radices, count);
    let tweaks = random_tweaks(&mut rng, count);
    let tweak_refs: Vec<&[u8]> = tweaks.iter().map(Vec::as_slice).collect();
    let per = Tweak::PerMessage(&tweak_refs);
    let mut buf = ScratchBuf::for_lockstep(&fpe);
    let mut whole = plain.clone();
    fpe.encrypt_with(per, &mut whole, &mut buf.scratch())
        .unwrap();
    for split in [1, 5, fpe.lanes(), count - 1] {
        let mut parts = plain.clone();
        let (head, tail) = parts.split_at_mut(split * radices.len());
        fpe.encrypt_with(per.slice(0..split), head, &mut buf.scratch())
            .unwrap();
        fpe.encrypt_with(per.slice(split..count), tail, &mut buf.scratch())
            .unwrap();
        assert_eq!(parts, whole, "split at {split}");
    }
    assert_eq!(Tweak::Bytes(b"x").slice(3..7), Tweak::Bytes(b"x"));
    assert_eq!(Tweak::Fixed.slice(3..7), Tweak::Fixed);
}
