//! Every mode gives the same output as encrypting one message at a time with the core.

use riffpe::integer::{DigitOrder, from_digits, to_digits};
use riffpe::{MessageError, Riffpe, RiffpeX};
use riffpe_batch::{Batch, Mode};

const MODES: [Mode; 2] = [Mode::Lockstep, Mode::Parallel];

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

/// Lengths around the lane counts (8, 30, 64) and the chunk size (1024), odd ones included.
const LENGTHS: [usize; 10] = [0, 1, 5, 8, 29, 63, 64, 65, 1023, 2049];

#[test]
fn u64_cards_all_modes_agree_with_the_core() {
    let fpe = Riffpe::new(100, 8, &[9; 16], b"cards").unwrap();
    for order in [DigitOrder::LittleEndian, DigitOrder::BigEndian] {
        for len in LENGTHS {
            let plain: Vec<u64> = random(len as u64, len)
                .iter()
                .map(|x| x % 10u64.pow(16))
                .collect();
            // The core, one message at a time.
            let expected: Vec<u64> = plain
                .iter()
                .map(|&x| {
                    let mut d = [0; 8];
                    to_digits(x, fpe.domain(), order, &mut d).unwrap();
                    fpe.encrypt(&mut d).unwrap();
                    from_digits(&d, fpe.domain(), order).unwrap()
                })
                .collect();
            for mode in MODES {
                let batch = Batch::new(&fpe).order(order).mode(mode);
                let mut v = plain.clone();
                batch.encrypt_ints(&mut v).unwrap();
                assert_eq!(v, expected, "{mode:?} {order:?} len {len}");
                batch.decrypt_ints(&mut v).unwrap();
                assert_eq!(v, plain, "{mode:?} {order:?} len {len} decrypt");
            }
        }
    }
}

#[test]
fn u128_and_riffpex_digits_all_modes_agree() {
    // 26 · 10^7 · 1000^3: beyond u64? No (2.6e17), so also use a u128-only domain below.
    let fpex = RiffpeX::builder(vec![26, 10, 10, 10, 10, 10, 10, 10, 1000, 1000])
        .bytes_per_value(15)
        .build(&[3; 24])
        .unwrap();
    let l = fpex.digits();
    for len in [0usize, 3, 64, 100, 1500] {
        let plain: Vec<u32> = random(7 + len as u64, len * l)
            .iter()
            .enumerate()
            .map(|(j, &r)| (r % u64::from(fpex.domain().radix(j % l).unwrap())) as u32)
            .collect();
        let mut expected = plain.clone();
        for m in expected.chunks_exact_mut(l) {
            fpex.encrypt(m).unwrap();
        }
        for mode in MODES {
            let batch = Batch::new(&fpex).mode(mode);
            let mut d = plain.clone();
            batch.encrypt_digits(&mut d).unwrap();
            assert_eq!(d, expected, "{mode:?} len {len}");
            batch.decrypt_digits(&mut d).unwrap();
            assert_eq!(d, plain, "{mode:?} len {len} decrypt");
        }
    }

    // 10^30: a u128 domain.
    let fpe = Riffpe::builder(10, 30)
        .bytes_per_value(18)
        .tweak(b"u128")
        .build(&[5; 32])
        .unwrap();
    let plain: Vec<u128> = random(3, 300)
        .chunks(2)
        .map(|p| ((u128::from(p[0]) << 64) | u128::from(p[1])) % 10u128.pow(30))
        .collect();
    let mut expected = Vec::new();
    for &x in &plain {
        let mut d = [0; 30];
        to_digits(x, fpe.domain(), DigitOrder::LittleEndian, &mut d).unwrap();
        fpe.encrypt(&mut d).unwrap();
        expected.push(from_digits::<u128>(&d, fpe.domain(), DigitOrder::LittleEndian).unwrap());
    }
    for mode in MODES {
        let mut v = plain.clone();
        Batch::new(&fpe).mode(mode).encrypt_ints(&mut v).unwrap();
        assert_eq!(v, expected, "{mode:?}");
    }
}

#[test]
fn a_bad_value_leaves_the_batch_untouched() {
    let fpe = Riffpe::new(10, 4, &[1; 16], b"").unwrap();
    for mode in MODES {
        let mut v: Vec<u64> = (0..3000).collect();
        v[2500] = 10_000;
        let before = v.clone();
        let err = Batch::new(&fpe)
            .mode(mode)
            .encrypt_ints(&mut v)
            .unwrap_err();
        assert_eq!(err, MessageError::ValueOutOfDomain { message: 2500 });
        assert_eq!(v, before);

        let mut d = vec![1u32; 4 * 2000];
        d[4 * 1500 + 2] = 10;
        let before = d.clone();
        let err = Batch::new(&fpe)
            .mode(mode)
            .decrypt_digits(&mut d)
            .unwrap_err();
        assert_eq!(
            err,
            MessageError::DigitOutOfRange {
                message: 1500,
                position: 2,
                radix: 10
            }
        );
        assert_eq!(d, before);
        assert_eq!(
            err.to_string(),
            "message 1500: the digit at position 2 is not below radix 10"
        );

        let mut partial = vec![0u32; 4 * 3 + 1];
        assert_eq!(
            Batch::new(&fpe).mode(mode).encrypt_digits(&mut partial),
            Err(MessageError::MessageLength {
                expected: 4,
                actual: 13
            })
        );
        assert_eq!(partial, vec![0u32; 4 * 3 + 1]);
    }
}

#[test]
fn a_domain_larger_than_the_integer_type_is_refused() {
    // 10^20 does not fit u64: a ciphertext might not either.
    let fpe = Riffpe::new(10, 20, &[1; 16], b"").unwrap();
    let mut v = vec![5u64; 10];
    let err = Batch::new(&fpe).encrypt_ints(&mut v).unwrap_err();
    assert_eq!(err, MessageError::DomainTooLarge { bits: 64 });
    assert_eq!(v, vec![5u64; 10]);
    let mut w = vec![5u128; 10];
    Batch::new(&fpe).encrypt_ints(&mut w).unwrap();
}
