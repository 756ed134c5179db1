//! Properties over random parameters: round trips, the plain reference as oracle, bijections.

mod common;

use common::{Params, SplitMix, cases, counts_at_large_radices};
use proptest::prelude::*;
use riffpe::integer::{DigitOrder, domain_size, from_digits, to_digits};
use riffpe::{AnyFpe, Domain, ScratchBuf, ScratchSize, Selection, Tweak};

/// Riffpe or RiffpeX parameters with a message, all valid.
#[derive(Clone, Debug)]
struct Case {
    mixed: bool,
    radices: Vec<u32>,
    key: Vec<u8>,
    tweak: Vec<u8>,
    bytes_per_value: usize,
    message: Vec<u32>,
}

fn radix() -> impl Strategy<Value = u32> + Clone {
    prop_oneof![
        4 => 2u32..=40,
        2 => 41u32..=300,
        1 => 60_000u32..=70_000,
    ]
}

fn case() -> impl Strategy<Value = Case> {
    case_with(radix())
}

/// Cases whose radices stay small, for the O(n²) constant-time selection.
fn small_case() -> impl Strategy<Value = Case> {
    case_with(2u32..=300)
}

fn case_with(radix: impl Strategy<Value = u32> + Clone) -> impl Strategy<Value = Case> {
    (
        any::<bool>(),
        radix.clone(),
        prop::collection::vec(radix, 1..8),
        1usize..10,
        prop::sample::select(vec![16usize, 24, 32]),
        prop::collection::vec(any::<u8>(), 0..=100),
        1usize..=48,
        any::<u64>(),
    )
        .prop_map(|(mixed, n, radices, l, key_len, tweak, b, seed)| {
            let radices = if mixed { radices } else { vec![n; l] };
            let mut rng = SplitMix(seed);
            let message = radices
                .iter()
                .map(|&r| rng.below(u64::from(r)) as u32)
                .collect();
            Case {
                mixed,
                radices,
                key: rng.bytes(key_len),
                tweak,
                bytes_per_value: b,
                message,
            }
        })
}

impl Case {
    fn params(&self) -> Params<'_> {
        Params {
            mixed: self.mixed,
            radices: &self.radices,
            key: &self.key,
            bytes_per_value: self.bytes_per_value,
        }
    }
}

/// Messages in lockstep under `tweak`, with scratch for at most `lanes` lanes (`usize::MAX`:
/// as many as the backend runs).
fn lockstep(fpe: &AnyFpe, tweak: Tweak<'_>, messages: &mut [u32], lanes: usize, encrypt: bool) {
    let one = fpe.scratch_size();
    let mut buf = if lanes == usize::MAX {
        ScratchBuf::for_lockstep(fpe)
    } else {
        ScratchBuf::with_size(ScratchSize {
            keystream_bytes: one.keystream_bytes * lanes,
            keys: one.keys * lanes,
        })
    };
    if encrypt {
        fpe.encrypt_with(tweak, messages, &mut buf.scratch())
            .unwrap()
    } else {
        fpe.decrypt_with(tweak, messages, &mut buf.scratch())
            .unwrap()
    }
}

proptest! {
    #![proptest_config(cases(96))]

    #[test]
    fn decrypt_inverts_encrypt(c in case()) {
        let fpe = c.params().fpe(&c.tweak);
        let mut m = c.message.clone();
        fpe.encrypt(&mut m).unwrap();
        prop_assert!(m.iter().zip(&c.radices).all(|(d, r)| d < r));
        fpe.decrypt(&mut m).unwrap();
        prop_assert_eq!(m, c.message);
    }

    #[test]
    fn fast_path_equals_plain_reference(c in case()) {
        let fpe = c.params().fpe(&c.tweak);
        let reference = c.params().reference(&c.tweak);
        let (mut fast, mut plain) = (c.message.clone(), c.message.clone());
        fpe.encrypt(&mut fast).unwrap();
        reference.encrypt(&mut plain);
        prop_assert_eq!(&fast, &plain);
        fpe.decrypt(&mut fast).unwrap();
        reference.decrypt(&mut plain);
        prop_assert_eq!(fast, plain);
    }

    #[test]
    fn per_call_tweak_equals_fixed_tweak(c in case(), other in prop::collection::vec(any::<u8>(), 0..40)) {
        let fixed = c.params().fpe(&c.tweak);
        let shared = c.params().fpe(&other);
        let (mut a, mut b) = (c.message.clone(), c.message.clone());
        fixed.encrypt(&mut a).unwrap();
        let mut buf = ScratchBuf::for_message(&shared);
        shared.encrypt_with(Tweak::Bytes(&c.tweak), &mut b, &mut buf.scratch()).unwrap();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn integers_round_trip_through_digits(radices in prop::collection::vec(2u32..1000, 1..7), x in any::<u64>(), big in any::<bool>()) {
        let domain = Domain::Mixed(&radices);
        let n: u64 = domain_size(domain).unwrap();
        let x = x % n;
        let order = if big { DigitOrder::BigEndian } else { DigitOrder::LittleEndian };
        let mut digits = vec![0; radices.len()];
        to_digits(x, domain, order, &mut digits).unwrap();
        prop_assert_eq!(from_digits::<u64>(&digits, domain, order).unwrap(), x);
        prop_assert_eq!(from_digits::<u128>(&digits, domain, order).unwrap(), u128::from(x));
    }
}

/// Every small domain (n^l ≤ 10 000): encryption is a bijection and decryption its inverse.
#[test]
fn exhaustive_bijection_on_small_domains() {
    let mut rng = SplitMix(7);
    let mut domains: Vec<(bool, Vec<u32>)> = Vec::new();
    for n in 2u32..=100 {
        let mut l = 1;
        while u64::from(n).pow(l) <= 10_000 {
            domains.push((false, vec![n; l as usize]));
            l += 1;
        }
    }
    domains.push((true, vec![26, 10, 10, 3]));
    domains.push((true, vec![2, 3, 5, 7, 11]));
    domains.push((true, vec![9_999]));
    for (mixed, radices) in domains {
        let key_len = [16, 24, 32][rng.below(3) as usize];
        let key = rng.bytes(key_len);
        let b = 1 + rng.below(20) as usize;
        let fpe = Params {
            mixed,
            radices: &radices,
            key: &key,
            bytes_per_value: b,
        }
        .fpe(b"bij");
        let domain = Domain::Mixed(&radices);
        let size: u64 = domain_size(domain).unwrap();
        let mut seen = vec![false; size as usize];
        let mut m = vec![0; radices.len()];
        for x in 0..size {
            to_digits(x, domain, DigitOrder::LittleEndian, &mut m).unwrap();
            fpe.encrypt(&mut m).unwrap();
            let y: u64 = from_digits(&m, domain, DigitOrder::LittleEndian).unwrap();
            assert!(!seen[y as usize], "{radices:?} b={b}: {x} collides");
            seen[y as usize] = true;
            fpe.decrypt(&mut m).unwrap();
            assert_eq!(
                from_digits::<u64>(&m, domain, DigitOrder::LittleEndian).unwrap(),
                x
            );
        }
    }
}

/// Many messages in lockstep give exactly what one message at a time gives, for counts below,
/// at and above the lane count (last groups that run padded among them), with scratch for fewer
/// lanes than the backend offers, in both modes of selection and both directions.
#[test]
fn lockstep_equals_one_at_a_time() {
    // Counts around each backend's lanes (8, 16, 32, 64) and past several groups.
    const COUNTS: &[usize] = &[0, 1, 2, 3, 7, 8, 9, 19, 31, 33, 64, 65, 66, 101, 131];
    // Radices 1000 and 70 000 take fewer (`counts_at_large_radices`).
    let mut rng = SplitMix(11);
    let configs: Vec<(bool, Vec<u32>, usize)> = vec![
        (false, vec![100; 8], 16),
        (false, vec![200; 4], 32),
        (false, vec![10; 16], 18),
        (false, vec![2; 19], 17),
        // More digits than a group of 64 holds digit by digit: it runs lane by lane, with
        // the group kernel and (fast, above radix 255) without.
        (false, vec![3; 40], 2),
        (false, vec![300; 34], 2),
        (false, vec![1000; 3], 19),
        (false, vec![70_000; 2], 3),
        // Four-byte slots over two blocks, the last slot in the second.
        (true, vec![70_000, 3, 5, 7], 3),
        // One digit: a step's digit and its phase share a slot.
        (false, vec![100; 1], 16),
        (true, vec![26, 10, 10, 10, 10, 10, 10, 10], 16),
        (true, vec![40, 50, 50, 100], 15),
        (true, vec![3, 300, 2], 1),
    ];
    let selections = [Selection::ConstantTime, Selection::Fast];
    for ((mixed, radices, b), selection) in configs.iter().flat_map(|c| selections.map(|s| (c, s)))
    {
        let key_len = [16, 24, 32][rng.below(3) as usize];
        let key = rng.bytes(key_len);
        let fpe = Params {
            mixed: *mixed,
            radices,
            key: &key,
            bytes_per_value: *b,
        }
        .fpe_with(b"lanes", selection);
        let l = radices.len();
        let counts =
            counts_at_large_radices(radices, fpe.lanes()).unwrap_or_else(|| COUNTS.to_vec());
        for count in counts {
            let messages = rng.messages(radices, count);
            let mut one = messages.clone();
            for m in one.chunks_exact_mut(l) {
                fpe.encrypt(m).unwrap();
            }
            for lanes_of_scratch in [usize::MAX, 3] {
                let mut many = messages.clone();
                lockstep(&fpe, Tweak::Fixed, &mut many, lanes_of_scratch, true);
                let what = format!("{radices:?} b={b} {selection:?} count={count}");
                assert_eq!(many, one, "{what} lanes≤{lanes_of_scratch}");
                lockstep(&fpe, Tweak::Fixed, &mut many, lanes_of_scratch, false);
                assert_eq!(many, messages, "{what} decrypt");
            }
        }
    }
}

proptest! {
    #![proptest_config(cases(64))]

    /// Constant-time selection gives exactly the fast selection's outputs, both ways, one
    /// message and many.
    #[test]
    fn constant_time_selection_equals_fast(c in small_case()) {
        let fast = c.params().fpe_with(&c.tweak, Selection::Fast);
        let ct = c.params().fpe_with(&c.tweak, Selection::ConstantTime);
        prop_assert_eq!(ct.selection(), Selection::ConstantTime);
        let (mut a, mut b) = (c.message.clone(), c.message.clone());
        fast.encrypt(&mut a).unwrap();
        ct.encrypt(&mut b).unwrap();
        prop_assert_eq!(&a, &b);
        ct.decrypt(&mut b).unwrap();
        prop_assert_eq!(&b, &c.message);

        let many: Vec<u32> = c.message.iter().cycle().take(c.message.len() * 9).copied().collect();
        let (mut a, mut b) = (many.clone(), many.clone());
        lockstep(&fast, Tweak::Fixed, &mut a, usize::MAX, true);
        lockstep(&ct, Tweak::Fixed, &mut b, usize::MAX, true);
        prop_assert_eq!(&a, &b);
        lockstep(&ct, Tweak::Fixed, &mut b, usize::MAX, false);
        prop_assert_eq!(b, many);
    }
}

/// One RiffpeX message whose steps take every constant-time path in turn: ranked as keys
/// arrive (below radix 144), searched by 32-bit halves (144 to 256), searched by whole keys
/// (above 256), and back; each against the reference, on many messages.
#[test]
fn constant_time_paths_follow_each_other_within_a_message() {
    let radices = [10, 144, 256, 257, 1000, 143, 200];
    let key = [0x5a; 16];
    let params = Params {
        mixed: true,
        radices: &radices,
        key: &key,
        bytes_per_value: 16,
    };
    let ct = params.fpe_with(b"paths", Selection::ConstantTime);
    let reference = params.reference(b"paths");
    let mut rng = SplitMix(7);
    for _ in 0..50 {
        let message: Vec<u32> = radices
            .iter()
            .map(|&r| rng.below(r.into()) as u32)
            .collect();
        let mut ours = message.clone();
        ct.encrypt(&mut ours).unwrap();
        let mut expected = message.clone();
        reference.encrypt(&mut expected);
        assert_eq!(ours, expected, "{message:?}");
        ct.decrypt(&mut ours).unwrap();
        assert_eq!(ours, message);
    }
}

/// Fast lockstep on both sides of the group kernels' largest radices (255 with AVX-512, 256
/// with AVX2, lane by lane above), each value starting a block (keys made in the AES loop) or
/// not, on enough messages for full groups and a last short one; against the reference.
#[test]
fn fast_lockstep_matches_the_reference_around_radix_256() {
    let key = [0x3c; 16];
    let mut rng = SplitMix(11);
    for (radix, bytes_per_value) in [(255, 16), (256, 16), (256, 18), (257, 16)] {
        let radices = [radix; 4];
        let params = Params {
            mixed: false,
            radices: &radices,
            key: &key,
            bytes_per_value,
        };
        let fpe = params.fpe(b"256");
        let reference = params.reference(b"256");
        let messages: Vec<u32> = (0..4 * 70)
            .map(|_| rng.below(radix.into()) as u32)
            .collect();
        let mut ours = messages.clone();
        lockstep(&fpe, Tweak::Fixed, &mut ours, usize::MAX, true);
        for (message, encrypted) in messages.chunks(4).zip(ours.chunks(4)) {
            let mut expected = message.to_vec();
            reference.encrypt(&mut expected);
            assert_eq!(encrypted, expected, "radix {radix}, b {bytes_per_value}");
        }
        lockstep(&fpe, Tweak::Fixed, &mut ours, usize::MAX, false);
        assert_eq!(ours, messages, "radix {radix}, b {bytes_per_value}");
    }
}

#[test]
fn lockstep_gives_the_same_ciphertexts_wherever_its_scratch_lies() {
    // Lockstep starts its rows on a cache line where the scratch has room to: at every offset
    // of the buffers, with that room (the sizes `lockstep_scratch_size` gives) and without it
    // (a lane's size times the lanes), the ciphertexts are one message's at a time, and back.
    let selections = [Selection::Fast, Selection::ConstantTime];
    for (radix, bytes_per_value, selection) in [(100, 16), (10, 18), (36, 16)]
        .into_iter()
        .flat_map(|(n, b)| selections.map(|s| (n, b, s)))
    {
        let fpe = riffpe::Riffpe::builder(radix, 8)
            .bytes_per_value(bytes_per_value)
            .selection(selection)
            .build(&[0x2b; 16])
            .unwrap();
        let lanes = fpe.lanes();
        let plain: Vec<u32> = (0..lanes * 2 * 8).map(|i| i as u32 * 37 % radix).collect();
        let mut expected = plain.clone();
        for message in expected.chunks_mut(8) {
            fpe.encrypt(message).unwrap();
        }
        let one = fpe.scratch_size();
        let unpadded = ScratchSize {
            keystream_bytes: one.keystream_bytes * lanes,
            keys: one.keys * lanes,
        };
        for size in [fpe.lockstep_scratch_size(), unpadded] {
            let mut keystream = vec![0u8; size.keystream_bytes + 64];
            let mut keys = vec![0u64; size.keys + 8];
            for (byte, word) in (0..64).zip((0..8).cycle()) {
                let mut scratch = riffpe::Scratch::new(
                    &mut keystream[byte..][..size.keystream_bytes],
                    &mut keys[word..][..size.keys],
                );
                let mut messages = plain.clone();
                fpe.encrypt_with(Tweak::Fixed, &mut messages, &mut scratch)
                    .unwrap();
                assert_eq!(
                    messages, expected,
                    "radix {radix}, offsets {byte} and {word}"
                );
                fpe.decrypt_with(Tweak::Fixed, &mut messages, &mut scratch)
                    .unwrap();
                assert_eq!(messages, plain, "radix {radix}, offsets {byte} and {word}");
            }
        }
    }
}
