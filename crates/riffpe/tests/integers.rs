//! Integers as messages (`encrypt_int`), the scheme chosen at run time (`AnyFpe`) and RiffpeX
//! radices from `find_best_bases`.

mod common;

use common::{Params, SplitMix, cases};
use proptest::prelude::*;
use riffpe::integer::{DigitOrder, domain_size, from_digits, max_value, to_digits};
use riffpe::{AnyFpe, Domain, Riffpe, RiffpeX, ScratchBuf, Tweak, find_best_bases};

/// The key of SPEC's command-line examples.
const SPEC_KEY: [u8; 16] = [
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
];

/// SPEC "Integers as messages": the reference CLI's examples, Riffpe(100, 8).
#[test]
fn spec_command_line_examples() {
    use DigitOrder::{BigEndian, LittleEndian};
    let fpe = Riffpe::new(100, 8, &SPEC_KEY, b"").unwrap();
    assert_eq!(
        fpe.encrypt_int(1234123456785678u64, LittleEndian),
        Ok(5158543106053628)
    );
    assert_eq!(
        fpe.decrypt_int(5158543106053628u64, LittleEndian),
        Ok(1234123456785678)
    );
    assert_eq!(
        fpe.encrypt_int(1234123456785678u128, LittleEndian),
        Ok(5158543106053628)
    );
    // -B
    assert_eq!(
        fpe.encrypt_int(7856785634123412u64, BigEndian),
        Ok(2836050631545851)
    );
    assert_eq!(
        fpe.decrypt_int(2836050631545851u64, BigEndian),
        Ok(7856785634123412)
    );
    // -t 416C696365
    let alice = Riffpe::new(100, 8, &SPEC_KEY, b"Alice").unwrap();
    assert_eq!(
        alice.encrypt_int(7766554433221100u64, LittleEndian),
        Ok(4744161879108363)
    );
    assert_eq!(
        alice.decrypt_int(4744161879108363u64, LittleEndian),
        Ok(7766554433221100)
    );
    // The same examples through the digits and a per-call tweak.
    let mut digits = [0; 8];
    to_digits(7766554433221100u64, fpe.domain(), LittleEndian, &mut digits).unwrap();
    let mut buf = ScratchBuf::for_message(&fpe);
    fpe.encrypt_with(Tweak::Bytes(b"Alice"), &mut digits, &mut buf.scratch())
        .unwrap();
    assert_eq!(
        from_digits::<u64>(&digits, fpe.domain(), LittleEndian),
        Ok(4744161879108363)
    );
    to_digits(7856785634123412u64, fpe.domain(), BigEndian, &mut digits).unwrap();
    fpe.encrypt(&mut digits).unwrap();
    assert_eq!(
        from_digits::<u64>(&digits, fpe.domain(), BigEndian),
        Ok(2836050631545851)
    );
}

/// Radices of a Riffpe or RiffpeX whose domain fits `u64`, with a value below its size.
fn int_case() -> impl Strategy<Value = (bool, Vec<u32>, u64, usize)> {
    (
        any::<bool>(),
        prop::collection::vec(2u32..=1000, 1..7),
        any::<u64>(),
        1usize..=20,
    )
        .prop_map(|(mixed, radices, x, b)| {
            let radices = if mixed {
                radices
            } else {
                vec![radices[0]; radices.len()]
            };
            let size: u64 = domain_size(Domain::Mixed(&radices)).expect("below 1000^6");
            (mixed, radices, x % size, b)
        })
}

proptest! {
    #![proptest_config(cases(64))]

    /// `encrypt_int` is the digits of the value, encrypted, read back the same way; for `u64`
    /// and `u128`, both digit orders, and it equals the plain reference.
    #[test]
    fn encrypt_int_equals_the_digits_path((mixed, radices, x, b) in int_case(), seed in any::<u64>()) {
        let key = SplitMix(seed).bytes(16);
        let params = Params { mixed, radices: &radices, key: &key, bytes_per_value: b };
        let fpe = params.fpe(b"ints");
        let reference = params.reference(b"ints");
        let domain = fpe.domain();
        for order in [DigitOrder::LittleEndian, DigitOrder::BigEndian] {
            let mut digits = vec![0; radices.len()];
            to_digits(x, domain, order, &mut digits).unwrap();
            reference.encrypt(&mut digits);
            let want: u64 = from_digits(&digits, domain, order).unwrap();
            prop_assert_eq!(fpe.encrypt_int(x, order), Ok(want));
            prop_assert_eq!(fpe.encrypt_int(u128::from(x), order), Ok(u128::from(want)));
            prop_assert_eq!(fpe.decrypt_int(want, order), Ok(x));
        }
    }

    /// `AnyFpe` made from a `Riffpe` or `RiffpeX` gives what the concrete type gives, on every
    /// path.
    #[test]
    fn any_fpe_equals_the_concrete_type((mixed, radices, x, b) in int_case(), seed in any::<u64>()) {
        let mut rng = SplitMix(seed);
        let key = rng.bytes(24);
        let order = DigitOrder::BigEndian;
        let count = 11;
        let messages: Vec<u32> = (0..count * radices.len())
            .map(|j| rng.below(u64::from(radices[j % radices.len()])) as u32)
            .collect();
        macro_rules! compare {
            ($concrete:expr) => {{
                let concrete = $concrete.bytes_per_value(b).tweak(b"any").build(&key).unwrap();
                let any: AnyFpe = concrete.clone().into();
                prop_assert_eq!(any.domain(), concrete.domain());
                prop_assert_eq!(any.lanes(), concrete.lanes());
                prop_assert_eq!(any.scratch_size(), concrete.scratch_size());
                prop_assert_eq!(any.encrypt_int(x, order), concrete.encrypt_int(x, order));
                let (mut a, mut c) = (messages.clone(), messages.clone());
                let mut buf = ScratchBuf::for_lockstep(&concrete);
                any.encrypt_with(Tweak::Bytes(b"other"), &mut a, &mut buf.scratch()).unwrap();
                concrete.encrypt_with(Tweak::Bytes(b"other"), &mut c, &mut buf.scratch()).unwrap();
                prop_assert_eq!(&a, &c);
                any.decrypt_with(Tweak::Bytes(b"other"), &mut a, &mut buf.scratch()).unwrap();
                prop_assert_eq!(&a, &messages);
                let (mut a, mut c) = (messages[..radices.len()].to_vec(), messages[..radices.len()].to_vec());
                any.encrypt(&mut a).unwrap();
                concrete.encrypt(&mut c).unwrap();
                prop_assert_eq!(a, c);
            }};
        }
        if mixed {
            compare!(RiffpeX::builder(radices.clone()));
        } else {
            compare!(Riffpe::builder(radices[0], radices.len()));
        }
    }

    /// `find_best_bases` gives radices whose product is the size, each at least the
    /// threshold, ascending, that `RiffpeX::new` takes and whose integers stay below the size.
    #[test]
    fn find_best_bases_gives_a_riffpex(factors in prop::collection::vec(2u64..=3000, 1..5), threshold in 2u64..=60, x in any::<u64>()) {
        let size: u64 = factors.iter().product();
        let Ok(bases) = find_best_bases(size, threshold) else {
            // Only a size below the threshold has no split (every factor here fits a radix).
            prop_assert!(size < threshold);
            return Ok(());
        };
        prop_assert!(bases.iter().all(|&r| u64::from(r) >= threshold), "{:?}", bases);
        prop_assert!(bases.is_sorted(), "{:?}", bases);
        prop_assert_eq!(bases.iter().map(|&r| u64::from(r)).product::<u64>(), size);
        let fpe = RiffpeX::new(bases, &[7; 16], b"").unwrap();
        prop_assert_eq!(domain_size::<u64>(fpe.domain()), Ok(size));
        prop_assert_eq!(max_value::<u64>(fpe.domain()), Ok(size - 1));
        let y = fpe.encrypt_int(x % size, DigitOrder::LittleEndian).unwrap();
        prop_assert!(y < size);
        prop_assert_eq!(fpe.decrypt_int(y, DigitOrder::LittleEndian), Ok(x % size));
    }
}

/// Every size up to 2000 that `find_best_bases` splits builds a RiffpeX of exactly that size.
#[test]
fn find_best_bases_small_sizes() {
    for threshold in [2, 3, 10, 40] {
        for size in threshold..2000 {
            let bases = find_best_bases(size, threshold)
                .unwrap_or_else(|e| panic!("{size}, {threshold}: {e}"));
            let fpe = RiffpeX::new(bases.as_slice(), &[1; 16], b"")
                .unwrap_or_else(|e| panic!("{size}, {threshold}: {bases:?}: {e}"));
            assert_eq!(domain_size::<u64>(fpe.domain()), Ok(size), "{bases:?}");
        }
    }
}
