//! Properties over random parameters: round trips, the plain reference as oracle, bijections.

mod common;

use common::{SplitMix, reference::Reference};
use proptest::prelude::*;
use riffpe::integer::{DigitOrder, domain_size, from_digits, to_digits};
use riffpe::{Domain, Riffpe, RiffpeX};

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

enum Any {
    Riffpe(Riffpe),
    RiffpeX(RiffpeX<Vec<u32>>),
}

impl Any {
    fn new(c: &Case, tweak: &[u8]) -> Any {
        if c.mixed {
            Any::RiffpeX(
                RiffpeX::with_bytes_per_value(c.radices.clone(), &c.key, tweak, c.bytes_per_value)
                    .unwrap(),
            )
        } else {
            Any::Riffpe(
                Riffpe::with_bytes_per_value(
                    c.radices[0],
                    c.radices.len(),
                    &c.key,
                    tweak,
                    c.bytes_per_value,
                )
                .unwrap(),
            )
        }
    }
    fn encrypt(&self, m: &mut [u32]) {
        match self {
            Any::Riffpe(f) => f.encrypt(m).unwrap(),
            Any::RiffpeX(f) => f.encrypt(m).unwrap(),
        }
    }
    fn decrypt(&self, m: &mut [u32]) {
        match self {
            Any::Riffpe(f) => f.decrypt(m).unwrap(),
            Any::RiffpeX(f) => f.decrypt(m).unwrap(),
        }
    }
    /// Lockstep over `messages`, with scratch for at most `lanes` lanes.
    fn many(&self, messages: &mut [u32], lanes: usize, encrypt: bool) {
        macro_rules! go {
            ($f:expr) => {{
                let f = $f;
                let one = f.scratch_size();
                let size = if lanes == usize::MAX {
                    f.lockstep_scratch_size()
                } else {
                    riffpe::ScratchSize {
                        keystream_bytes: one.keystream_bytes * lanes,
                        keys: one.keys * lanes,
                    }
                };
                let mut buf = riffpe::ScratchBuf::with_size(size);
                let mut scratch = buf.scratch(size);
                if encrypt {
                    f.encrypt_many_with(messages, &mut scratch).unwrap()
                } else {
                    f.decrypt_many_with(messages, &mut scratch).unwrap()
                }
            }};
        }
        match self {
            Any::Riffpe(f) => go!(f),
            Any::RiffpeX(f) => go!(f),
        }
    }
    fn encrypt_many(&self, messages: &mut [u32], lanes: usize) {
        self.many(messages, lanes, true)
    }
    fn decrypt_many(&self, messages: &mut [u32], lanes: usize) {
        self.many(messages, lanes, false)
    }
    fn encrypt_tweaked(&self, t: &[u8], m: &mut [u32]) {
        match self {
            Any::Riffpe(f) => f.encrypt_tweaked(t, m).unwrap(),
            Any::RiffpeX(f) => f.encrypt_tweaked(t, m).unwrap(),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn decrypt_inverts_encrypt(c in case()) {
        let fpe = Any::new(&c, &c.tweak);
        let mut m = c.message.clone();
        fpe.encrypt(&mut m);
        prop_assert!(m.iter().zip(&c.radices).all(|(d, r)| d < r));
        fpe.decrypt(&mut m);
        prop_assert_eq!(m, c.message);
    }

    #[test]
    fn fast_path_equals_plain_reference(c in case()) {
        let fpe = Any::new(&c, &c.tweak);
        let reference = Reference::new(&c.radices, c.mixed, &c.key, &c.tweak, c.bytes_per_value);
        let (mut fast, mut plain) = (c.message.clone(), c.message.clone());
        fpe.encrypt(&mut fast);
        reference.encrypt(&mut plain);
        prop_assert_eq!(&fast, &plain);
        fpe.decrypt(&mut fast);
        reference.decrypt(&mut plain);
        prop_assert_eq!(fast, plain);
    }

    #[test]
    fn per_call_tweak_equals_fixed_tweak(c in case(), other in prop::collection::vec(any::<u8>(), 0..40)) {
        let fixed = Any::new(&c, &c.tweak);
        let shared = Any::new(&c, &other);
        let (mut a, mut b) = (c.message.clone(), c.message.clone());
        fixed.encrypt(&mut a);
        shared.encrypt_tweaked(&c.tweak, &mut b);
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
        let fpe = if mixed {
            Any::RiffpeX(RiffpeX::with_bytes_per_value(radices.clone(), &key, b"bij", b).unwrap())
        } else {
            Any::Riffpe(
                Riffpe::with_bytes_per_value(radices[0], radices.len(), &key, b"bij", b).unwrap(),
            )
        };
        let domain = Domain::Mixed(&radices);
        let size: u64 = domain_size(domain).unwrap();
        let mut seen = vec![false; size as usize];
        let mut m = vec![0; radices.len()];
        for x in 0..size {
            to_digits(x, domain, DigitOrder::LittleEndian, &mut m).unwrap();
            fpe.encrypt(&mut m);
            let y: u64 = from_digits(&m, domain, DigitOrder::LittleEndian).unwrap();
            assert!(!seen[y as usize], "{radices:?} b={b}: {x} collides");
            seen[y as usize] = true;
            fpe.decrypt(&mut m);
            assert_eq!(
                from_digits::<u64>(&m, domain, DigitOrder::LittleEndian).unwrap(),
                x
            );
        }
    }
}

/// Many messages in lockstep give exactly what one message at a time gives, for counts below,
/// at and above the lane count, with scratch for fewer lanes than the backend offers, and for
/// both directions.
#[test]
fn lockstep_equals_one_at_a_time() {
    let mut rng = SplitMix(11);
    let configs: Vec<(bool, Vec<u32>, usize)> = vec![
        (false, vec![100; 8], 16),
        (false, vec![10; 16], 18),
        (false, vec![2; 19], 17),
        (false, vec![1000; 3], 19),
        (false, vec![70_000; 2], 3),
        (true, vec![26, 10, 10, 10, 10, 10, 10, 10], 16),
        (true, vec![40, 50, 50, 100], 15),
        (true, vec![3, 300, 2], 1),
    ];
    for (mixed, radices, b) in configs {
        let key_len = [16, 24, 32][rng.below(3) as usize];
        let key = rng.bytes(key_len);
        let fpe = if mixed {
            Any::RiffpeX(RiffpeX::with_bytes_per_value(radices.clone(), &key, b"lanes", b).unwrap())
        } else {
            Any::Riffpe(
                Riffpe::with_bytes_per_value(radices[0], radices.len(), &key, b"lanes", b).unwrap(),
            )
        };
        let l = radices.len();
        for count in [0usize, 1, 2, 3, 7, 8, 9, 31, 64, 65, 131] {
            let messages: Vec<u32> = (0..count * l)
                .map(|j| rng.below(u64::from(radices[j % l])) as u32)
                .collect();
            let mut one = messages.clone();
            for m in one.chunks_exact_mut(l) {
                fpe.encrypt(m);
            }
            for lanes_of_scratch in [usize::MAX, 3] {
                let mut many = messages.clone();
                fpe.encrypt_many(&mut many, lanes_of_scratch);
                assert_eq!(
                    many, one,
                    "{radices:?} b={b} count={count} lanes≤{lanes_of_scratch}"
                );
                fpe.decrypt_many(&mut many, lanes_of_scratch);
                assert_eq!(many, messages, "{radices:?} b={b} count={count} decrypt");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Constant-time selection gives exactly the fast selection's outputs, both ways, one
    /// message and many.
    #[test]
    fn constant_time_selection_equals_fast(c in small_case()) {
        use riffpe::Selection;
        let (fast, ct) = if c.mixed {
            let f = RiffpeX::with_bytes_per_value(c.radices.clone(), &c.key, &c.tweak, c.bytes_per_value).unwrap();
            (Any::RiffpeX(f.clone()), Any::RiffpeX(f.with_selection(Selection::ConstantTime)))
        } else {
            let f = Riffpe::with_bytes_per_value(c.radices[0], c.radices.len(), &c.key, &c.tweak, c.bytes_per_value).unwrap();
            (Any::Riffpe(f.clone()), Any::Riffpe(f.with_selection(Selection::ConstantTime)))
        };
        let (mut a, mut b) = (c.message.clone(), c.message.clone());
        fast.encrypt(&mut a);
        ct.encrypt(&mut b);
        prop_assert_eq!(&a, &b);
        ct.decrypt(&mut b);
        prop_assert_eq!(&b, &c.message);

        let many: Vec<u32> = c.message.iter().cycle().take(c.message.len() * 9).copied().collect();
        let (mut a, mut b) = (many.clone(), many.clone());
        fast.encrypt_many(&mut a, usize::MAX);
        ct.encrypt_many(&mut b, usize::MAX);
        prop_assert_eq!(&a, &b);
        ct.decrypt_many(&mut b, usize::MAX);
        prop_assert_eq!(b, many);
    }
}
