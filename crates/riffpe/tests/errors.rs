//! One test per invalid parameter or input of SPEC: each is a typed error naming the value.

use riffpe::integer::{DigitOrder, domain_size, from_digits, to_digits};
use riffpe::{Domain, Error, MAX_SCRATCH_BYTES, Riffpe, RiffpeX, Scratch};

const KEY: [u8; 16] = [0x11; 16];

#[test]
fn radix_below_two() {
    for radix in [0, 1] {
        assert_eq!(
            Riffpe::new(radix, 4, &KEY, b"").unwrap_err(),
            Error::InvalidRadix { index: 0, radix }
        );
    }
    assert_eq!(
        RiffpeX::new([10, 10, 1, 10], &KEY, b"").unwrap_err(),
        Error::InvalidRadix { index: 2, radix: 1 }
    );
}

#[test]
fn zero_digits() {
    assert_eq!(Riffpe::new(10, 0, &KEY, b"").unwrap_err(), Error::NoDigits);
    assert_eq!(
        RiffpeX::new(Vec::new(), &KEY, b"").unwrap_err(),
        Error::NoDigits
    );
}

#[test]
fn zero_bytes_per_value() {
    assert_eq!(
        Riffpe::with_bytes_per_value(10, 4, &KEY, b"", 0).unwrap_err(),
        Error::InvalidBytesPerValue { bytes_per_value: 0 }
    );
    assert_eq!(
        RiffpeX::with_bytes_per_value([3, 4], &KEY, b"", 0).unwrap_err(),
        Error::InvalidBytesPerValue { bytes_per_value: 0 }
    );
}

#[test]
fn digit_index_must_fit_the_element_width() {
    // w = 1: indices up to 255, so 256 digits are fine and 257 are not.
    assert!(Riffpe::new(255, 256, &KEY, b"").is_ok());
    assert_eq!(
        Riffpe::new(255, 257, &KEY, b"").unwrap_err(),
        Error::TooManyDigits {
            digits: 257,
            max: 256
        }
    );
    // w = 2 from radix 256 on.
    assert!(Riffpe::new(256, 257, &KEY, b"").is_ok());
    assert_eq!(
        Riffpe::with_bytes_per_value(300, 65_537, &KEY, b"", 1).unwrap_err(),
        Error::TooManyDigits {
            digits: 65_537,
            max: 65_536
        }
    );
    let mut radices = vec![2u32; 257];
    assert_eq!(
        RiffpeX::new(radices.clone(), &KEY, b"").unwrap_err(),
        Error::TooManyDigits {
            digits: 257,
            max: 256
        }
    );
    radices[100] = 256;
    assert!(RiffpeX::with_bytes_per_value(radices, &KEY, b"", 1).is_ok());
}

#[test]
fn key_of_wrong_length() {
    for len in [0, 1, 15, 17, 20, 23, 25, 31, 33, 64] {
        assert_eq!(
            Riffpe::new(10, 4, &vec![0u8; len], b"").unwrap_err(),
            Error::InvalidKeyLength { len }
        );
        assert_eq!(
            RiffpeX::new([10, 4], &vec![0u8; len], b"").unwrap_err(),
            Error::InvalidKeyLength { len }
        );
    }
    for len in [16, 24, 32] {
        assert!(Riffpe::new(10, 4, &vec![0u8; len], b"").is_ok());
    }
}

#[test]
fn message_of_wrong_length() {
    let fpe = Riffpe::new(10, 4, &KEY, b"").unwrap();
    for len in [0, 3, 5] {
        let mut m = vec![0; len];
        assert_eq!(
            fpe.encrypt(&mut m).unwrap_err(),
            Error::MessageLength {
                expected: 4,
                actual: len
            }
        );
        assert_eq!(
            fpe.decrypt(&mut m).unwrap_err(),
            Error::MessageLength {
                expected: 4,
                actual: len
            }
        );
    }
}

#[test]
fn digit_not_below_its_radix_leaves_message_unchanged() {
    let fpe = Riffpe::new(10, 4, &KEY, b"").unwrap();
    let mut m = [1, 2, 12, 3];
    let err = Error::DigitOutOfRange {
        index: 2,
        digit: 12,
        radix: 10,
    };
    assert_eq!(fpe.encrypt(&mut m).unwrap_err(), err);
    assert_eq!(fpe.decrypt(&mut m).unwrap_err(), err);
    assert_eq!(fpe.encrypt_tweaked(b"t", &mut m).unwrap_err(), err);
    assert_eq!(m, [1, 2, 12, 3]);
    assert_eq!(
        err.to_string(),
        "digit 12 at position 2 is not below radix 10"
    );

    let fpe = RiffpeX::new([26, 10, 10], &KEY, b"").unwrap();
    let mut m = [26, 0, 0];
    assert_eq!(
        fpe.decrypt(&mut m).unwrap_err(),
        Error::DigitOutOfRange {
            index: 0,
            digit: 26,
            radix: 26
        }
    );
}

#[test]
fn scratch_smaller_than_a_keystream() {
    let fpe = Riffpe::new(100, 8, &KEY, b"").unwrap();
    let need = fpe.scratch_size();
    // At least the 100 values of 16 bytes and a key per value.
    assert!(need.keystream_bytes >= 1600 && need.keys >= 100, "{need:?}");
    let mut m = [0; 8];
    let (mut ks, mut keys) = (vec![0u8; need.keystream_bytes - 1], vec![0u64; need.keys]);
    let err = fpe
        .encrypt_with(&mut m, &mut Scratch::new(&mut ks, &mut keys))
        .unwrap_err();
    assert_eq!(
        err,
        Error::ScratchTooSmall {
            keystream_needed: need.keystream_bytes,
            keystream_given: need.keystream_bytes - 1,
            keys_needed: need.keys,
            keys_given: need.keys
        }
    );
    let (mut ks, mut keys) = (vec![0u8; need.keystream_bytes], vec![0u64; need.keys - 1]);
    assert!(matches!(
        fpe.decrypt_with(&mut m, &mut Scratch::new(&mut ks, &mut keys)),
        Err(Error::ScratchTooSmall { keys_given, .. }) if keys_given == need.keys - 1
    ));
    assert_eq!(m, [0; 8]);
    // Exactly the size asked for works.
    let (mut ks, mut keys) = (vec![0u8; need.keystream_bytes], vec![0u64; need.keys]);
    fpe.encrypt_with(&mut m, &mut Scratch::new(&mut ks, &mut keys))
        .unwrap();
}

#[test]
fn scratch_over_the_cap_is_refused_before_allocation() {
    let err = Riffpe::with_bytes_per_value(4_000_000_000, 2, &KEY, b"", 48).unwrap_err();
    assert!(matches!(err, Error::ScratchTooLarge { max, .. } if max == MAX_SCRATCH_BYTES));
    assert!(Riffpe::with_bytes_per_value(u32::MAX, 2, &KEY, b"", 1).is_err());
    assert!(RiffpeX::with_bytes_per_value([2, u32::MAX], &KEY, b"", 16).is_err());
}

#[test]
fn parameters_are_checked_before_the_key() {
    // A bad radix with a bad key reports the radix: parameters come first.
    assert_eq!(
        Riffpe::new(1, 4, &[0u8; 3], b"").unwrap_err(),
        Error::InvalidRadix { index: 0, radix: 1 }
    );
}

#[test]
fn integer_conversion_errors() {
    let d = Domain::Uniform {
        radix: 10,
        digits: 3,
    };
    let mut out = [0; 3];
    assert_eq!(
        to_digits(1000u64, d, DigitOrder::LittleEndian, &mut out),
        Err(Error::ValueOutOfDomain)
    );
    assert_eq!(
        to_digits(5u64, d, DigitOrder::LittleEndian, &mut [0; 2]),
        Err(Error::MessageLength {
            expected: 3,
            actual: 2
        })
    );
    assert_eq!(
        from_digits::<u64>(&[1, 10, 0], d, DigitOrder::BigEndian),
        Err(Error::DigitOutOfRange {
            index: 1,
            digit: 10,
            radix: 10
        })
    );
    let big = Domain::Uniform {
        radix: 10,
        digits: 40,
    };
    assert_eq!(
        domain_size::<u128>(big),
        Err(Error::DomainTooLarge { bits: 128 })
    );
    assert_eq!(
        from_digits::<u64>(&[9; 40], big, DigitOrder::LittleEndian),
        Err(Error::DomainTooLarge { bits: 64 })
    );
}

#[test]
fn errors_and_debug_never_show_key_bytes() {
    let key = [0xa5u8; 32];
    let fpe = Riffpe::new(100, 8, &key, b"tweak").unwrap();
    let shown = format!("{fpe:?} {:?}", fpe.cipher());
    assert_eq!(
        format!("{fpe:?}"),
        "Riffpe { domain: Uniform { radix: 100, digits: 8 }, bytes_per_value: 16, .. }"
    );
    assert!(!shown.to_lowercase().contains("a5"), "{shown}");
    assert!(!shown.contains("165"), "{shown}");
    let err = Riffpe::new(100, 8, &key[..31], b"")
        .unwrap_err()
        .to_string();
    assert!(
        !err.to_lowercase().contains("a5") && !err.contains("165"),
        "{err}"
    );
}
