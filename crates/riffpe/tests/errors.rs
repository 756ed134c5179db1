//! One test per invalid parameter or input of SPEC: each is a typed error naming the value.

use riffpe::integer::{DigitOrder, domain_size, from_digits, to_digits};
use riffpe::{
    AnyFpe, Domain, MAX_SCRATCH_BYTES, MessageError, Riffpe, RiffpeX, Scratch, ScratchBuf,
    Selection, SetupError, Tweak,
};

const KEY: [u8; 16] = [0x11; 16];

#[test]
fn radix_below_two() {
    for radix in [0, 1] {
        assert_eq!(
            Riffpe::new(radix, 4, &KEY, b"").unwrap_err(),
            SetupError::InvalidRadix { index: 0, radix }
        );
    }
    assert_eq!(
        RiffpeX::new([10, 10, 1, 10], &KEY, b"").unwrap_err(),
        SetupError::InvalidRadix { index: 2, radix: 1 }
    );
}

#[test]
fn zero_digits() {
    assert_eq!(
        Riffpe::new(10, 0, &KEY, b"").unwrap_err(),
        SetupError::NoDigits
    );
    assert_eq!(
        RiffpeX::new(Vec::new(), &KEY, b"").unwrap_err(),
        SetupError::NoDigits
    );
}

#[test]
fn zero_bytes_per_value() {
    assert_eq!(
        Riffpe::builder(10, 4)
            .bytes_per_value(0)
            .build(&KEY)
            .unwrap_err(),
        SetupError::InvalidBytesPerValue { bytes_per_value: 0 }
    );
    assert_eq!(
        RiffpeX::builder([3, 4])
            .bytes_per_value(0)
            .build(&KEY)
            .unwrap_err(),
        SetupError::InvalidBytesPerValue { bytes_per_value: 0 }
    );
}

#[test]
fn digit_index_must_fit_the_element_width() {
    // w = 1: indices up to 255, so 256 digits are fine and 257 are not.
    assert!(Riffpe::new(255, 256, &KEY, b"").is_ok());
    assert_eq!(
        Riffpe::new(255, 257, &KEY, b"").unwrap_err(),
        SetupError::TooManyDigits {
            digits: 257,
            max: 256
        }
    );
    // w = 2 from radix 256 on.
    assert!(Riffpe::new(256, 257, &KEY, b"").is_ok());
    assert_eq!(
        Riffpe::builder(300, 65_537)
            .bytes_per_value(1)
            .build(&KEY)
            .unwrap_err(),
        SetupError::TooManyDigits {
            digits: 65_537,
            max: 65_536
        }
    );
    let mut radices = vec![2u32; 257];
    assert_eq!(
        RiffpeX::new(radices.clone(), &KEY, b"").unwrap_err(),
        SetupError::TooManyDigits {
            digits: 257,
            max: 256
        }
    );
    radices[100] = 256;
    assert!(
        RiffpeX::builder(radices)
            .bytes_per_value(1)
            .build(&KEY)
            .is_ok()
    );
}

#[test]
fn key_of_wrong_length() {
    for len in [0, 1, 15, 17, 20, 23, 25, 31, 33, 64] {
        assert_eq!(
            Riffpe::new(10, 4, &vec![0u8; len], b"").unwrap_err(),
            SetupError::InvalidKeyLength { len }
        );
        assert_eq!(
            RiffpeX::new([10, 4], &vec![0u8; len], b"").unwrap_err(),
            SetupError::InvalidKeyLength { len }
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
            MessageError::MessageLength {
                expected: 4,
                actual: len
            }
        );
        assert_eq!(
            fpe.decrypt(&mut m).unwrap_err(),
            MessageError::MessageLength {
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
    let err = MessageError::DigitOutOfRange {
        message: 0,
        position: 2,
        radix: 10,
    };
    assert_eq!(fpe.encrypt(&mut m).unwrap_err(), err);
    assert_eq!(fpe.decrypt(&mut m).unwrap_err(), err);
    let mut buf = ScratchBuf::for_message(&fpe);
    assert_eq!(
        fpe.encrypt_with(Tweak::Bytes(b"t"), &mut m, &mut buf.scratch())
            .unwrap_err(),
        err
    );
    assert_eq!(m, [1, 2, 12, 3]);
    assert_eq!(
        err.to_string(),
        "message 0: the digit at position 2 is not below radix 10"
    );

    let fpe = RiffpeX::new([26, 10, 10], &KEY, b"").unwrap();
    let mut m = [26, 0, 0];
    assert_eq!(
        fpe.decrypt(&mut m).unwrap_err(),
        MessageError::DigitOutOfRange {
            message: 0,
            position: 0,
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
        .encrypt_with(Tweak::Fixed, &mut m, &mut Scratch::new(&mut ks, &mut keys))
        .unwrap_err();
    assert_eq!(
        err,
        MessageError::ScratchTooSmall {
            keystream_needed: need.keystream_bytes,
            keystream_given: need.keystream_bytes - 1,
            keys_needed: need.keys,
            keys_given: need.keys
        }
    );
    let (mut ks, mut keys) = (vec![0u8; need.keystream_bytes], vec![0u64; need.keys - 1]);
    assert!(matches!(
        fpe.decrypt_with(Tweak::Fixed, &mut m, &mut Scratch::new(&mut ks, &mut keys)),
        Err(MessageError::ScratchTooSmall { keys_given, .. }) if keys_given == need.keys - 1
    ));
    assert_eq!(m, [0; 8]);
    // Exactly the size asked for works.
    let (mut ks, mut keys) = (vec![0u8; need.keystream_bytes], vec![0u64; need.keys]);
    fpe.encrypt_with(Tweak::Fixed, &mut m, &mut Scratch::new(&mut ks, &mut keys))
        .unwrap();
}

/// Fast selection up to radix 128 asks for 256 keys more, where one message's π files its keys
/// by bucket; without them (a key per value and 16 buckets) it gives the same results, and one
/// key fewer still is too small.
#[test]
fn fast_scratch_without_the_slots() {
    for (n, l, b) in [(10, 6, 16), (100, 8, 16), (100, 8, 18), (128, 4, 19)] {
        let fpe = Riffpe::builder(n, l)
            .bytes_per_value(b)
            .selection(Selection::Fast)
            .build(&KEY)
            .unwrap();
        let need = fpe.scratch_size();
        let least = n as usize + 16;
        assert_eq!(need.keys, least + 256, "radix {n}");
        let messages: Vec<Vec<u32>> = (0..50u32)
            .map(|s| (0..l as u32).map(|i| (s * 37 + i * 11) % n).collect())
            .collect();
        let mut ks = vec![0u8; need.keystream_bytes];
        for size in [need.keys, least] {
            let mut keys = vec![0u64; size];
            for plain in &messages {
                let (mut m, mut want) = (plain.clone(), plain.clone());
                fpe.encrypt(&mut want).unwrap();
                let mut scratch = Scratch::new(&mut ks, &mut keys);
                fpe.encrypt_with(Tweak::Fixed, &mut m, &mut scratch)
                    .unwrap();
                assert_eq!(m, want, "radix {n}, {size} keys");
                fpe.decrypt_with(Tweak::Fixed, &mut m, &mut scratch)
                    .unwrap();
                assert_eq!(&m, plain, "radix {n}, {size} keys");
            }
        }
        let mut keys = vec![0u64; least - 1];
        let mut m = messages[0].clone();
        assert!(matches!(
            fpe.encrypt_with(Tweak::Fixed, &mut m, &mut Scratch::new(&mut ks, &mut keys)),
            Err(MessageError::ScratchTooSmall { keys_needed, .. }) if keys_needed == least
        ));
    }
}

#[test]
fn scratch_over_the_cap_is_refused_before_allocation() {
    let err = Riffpe::builder(4_000_000_000, 2)
        .bytes_per_value(48)
        .build(&KEY)
        .unwrap_err();
    assert!(matches!(err, SetupError::ScratchTooLarge { max, .. } if max == MAX_SCRATCH_BYTES));
    assert!(
        Riffpe::builder(u32::MAX, 2)
            .bytes_per_value(1)
            .build(&KEY)
            .is_err()
    );
    assert!(
        RiffpeX::builder([2, u32::MAX])
            .bytes_per_value(16)
            .build(&KEY)
            .is_err()
    );
}

#[test]
fn parameters_are_checked_before_the_key() {
    // A bad radix with a bad key reports the radix: parameters come first.
    assert_eq!(
        Riffpe::new(1, 4, &[0u8; 3], b"").unwrap_err(),
        SetupError::InvalidRadix { index: 0, radix: 1 }
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
        Err(MessageError::ValueOutOfDomain { message: 0 })
    );
    assert_eq!(
        to_digits(5u64, d, DigitOrder::LittleEndian, &mut [0; 2]),
        Err(MessageError::MessageLength {
            expected: 3,
            actual: 2
        })
    );
    assert_eq!(
        from_digits::<u64>(&[1, 10, 0], d, DigitOrder::BigEndian),
        Err(MessageError::DigitOutOfRange {
            message: 0,
            position: 1,
            radix: 10
        })
    );
    let big = Domain::Uniform {
        radix: 10,
        digits: 40,
    };
    assert_eq!(
        domain_size::<u128>(big),
        Err(MessageError::DomainTooLarge { bits: 128 })
    );
    assert_eq!(
        from_digits::<u64>(&[9; 40], big, DigitOrder::LittleEndian),
        Err(MessageError::DomainTooLarge { bits: 64 })
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

#[test]
fn messages_that_are_not_whole_are_refused_unchanged() {
    let fpe = Riffpe::new(10, 4, &KEY, b"").unwrap();
    let mut buf = ScratchBuf::for_lockstep(&fpe);
    for len in [1, 3, 5, 4 * 9 + 1, 4 * 9 + 3] {
        let mut m: Vec<u32> = (0..len as u32).map(|i| i % 10).collect();
        let before = m.clone();
        let err = MessageError::MessageLength {
            expected: 4,
            actual: len,
        };
        assert_eq!(
            fpe.encrypt_with(Tweak::Fixed, &mut m, &mut buf.scratch()),
            Err(err)
        );
        assert_eq!(
            fpe.decrypt_with(Tweak::Bytes(b"t"), &mut m, &mut buf.scratch()),
            Err(err)
        );
        assert_eq!(fpe.check(&m), Err(err));
        assert_eq!(m, before);
    }
    // Zero messages are a whole number of them: nothing to do.
    fpe.encrypt_with(Tweak::Fixed, &mut [], &mut buf.scratch())
        .unwrap();
}

#[test]
fn per_message_tweaks_must_match_the_message_count() {
    let fpe = RiffpeX::new([26, 10, 10], &KEY, b"").unwrap();
    let mut buf = ScratchBuf::for_lockstep(&fpe);
    let tweaks: [&[u8]; 3] = [b"a", b"b", b"c"];
    for (messages, given) in [(2, 3), (4, 3), (1, 0), (0, 1), (3, 2)] {
        let mut m: Vec<u32> = (0..messages * 3).map(|i| (i % 10) as u32).collect();
        let before = m.clone();
        let err = MessageError::TweakCount {
            messages,
            tweaks: given,
        };
        let per = Tweak::PerMessage(&tweaks[..given]);
        assert_eq!(fpe.encrypt_with(per, &mut m, &mut buf.scratch()), Err(err));
        assert_eq!(fpe.decrypt_with(per, &mut m, &mut buf.scratch()), Err(err));
        assert_eq!(m, before);
    }
    assert_eq!(
        MessageError::TweakCount {
            messages: 2,
            tweaks: 3
        }
        .to_string(),
        "3 tweaks given for 2 messages"
    );
}

/// A batch holding one bad digit is refused with `err`, by a lockstep call (`encrypt` or
/// decrypt) and by `check`, and left as it was.
fn refused_untouched(fpe: AnyFpe, mut messages: Vec<u32>, encrypt: bool, err: MessageError) {
    let mut buf = ScratchBuf::for_lockstep(&fpe);
    let before = messages.clone();
    let refused = if encrypt {
        fpe.encrypt_with(Tweak::Fixed, &mut messages, &mut buf.scratch())
    } else {
        fpe.decrypt_with(Tweak::Fixed, &mut messages, &mut buf.scratch())
    };
    assert_eq!(refused, Err(err));
    assert_eq!(fpe.check(&messages), Err(err));
    assert_eq!(messages, before);
}

#[test]
fn a_bad_digit_names_its_message_and_position() {
    let fpe = RiffpeX::new(vec![26, 10, 10], &KEY, b"").unwrap();
    let mut m = vec![1u32; 3 * 20];
    m[3 * 13 + 2] = 10;
    m[3 * 17] = 26;
    let err = MessageError::DigitOutOfRange {
        message: 13,
        position: 2,
        radix: 10,
    };
    refused_untouched(fpe.into(), m, true, err);
    assert_eq!(err.message(), Some(13));
    assert_eq!(err.offset(100).message(), Some(113));

    // One radix: the one bad digit, u32::MAX, deep in a batch of digits in range.
    let fpe = Riffpe::new(10, 4, &KEY, b"").unwrap();
    let mut m = vec![9u32; 4 * 70];
    m[4 * 66 + 1] = u32::MAX;
    let err = MessageError::DigitOutOfRange {
        message: 66,
        position: 1,
        radix: 10,
    };
    refused_untouched(fpe.into(), m, false, err);
}

#[test]
fn integer_calls_refuse_values_outside_the_domain() {
    let fpe = Riffpe::new(10, 3, &KEY, b"").unwrap();
    assert_eq!(
        fpe.encrypt_int(1000u64, DigitOrder::LittleEndian),
        Err(MessageError::ValueOutOfDomain { message: 0 })
    );
    assert_eq!(
        fpe.decrypt_int(1000u128, DigitOrder::BigEndian),
        Err(MessageError::ValueOutOfDomain { message: 0 })
    );
    assert!(fpe.encrypt_int(999u64, DigitOrder::LittleEndian).unwrap() < 1000);
    // 10^20 does not fit u64, so a ciphertext might not either.
    let wide = Riffpe::new(10, 20, &KEY, b"").unwrap();
    assert_eq!(
        wide.encrypt_int(5u64, DigitOrder::LittleEndian),
        Err(MessageError::DomainTooLarge { bits: 64 })
    );
    assert!(wide.encrypt_int(5u128, DigitOrder::LittleEndian).is_ok());
}

#[test]
fn either_error_converts_into_error() {
    fn build_and_encrypt(radix: u32, message: &mut [u32]) -> Result<(), riffpe::Error> {
        Riffpe::new(radix, 2, &KEY, b"")?.encrypt(message)?;
        Ok(())
    }
    assert_eq!(
        build_and_encrypt(1, &mut [0, 0]),
        Err(riffpe::Error::Setup(SetupError::InvalidRadix {
            index: 0,
            radix: 1
        }))
    );
    let err = build_and_encrypt(10, &mut [0, 10]).unwrap_err();
    assert_eq!(
        err,
        riffpe::Error::Message(MessageError::DigitOutOfRange {
            message: 0,
            position: 1,
            radix: 10
        })
    );
    assert_eq!(
        err.to_string(),
        "message 0: the digit at position 1 is not below radix 10"
    );
}
