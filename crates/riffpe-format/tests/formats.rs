//! Behaviour of each kind of format and of the named ones, on fixed examples.

use riffpe_format::{
    Alphabet, BulkScratch, Error, Format, FormatCipher, Luhn, MAX_CHARS, MIN_DOMAIN, Security,
    Selection, named_formats,
};

const KEY: [u8; 16] = [0x2b; 16];

fn cipher(format: Format) -> FormatCipher {
    FormatCipher::new(&KEY, format).unwrap()
}

fn named(name: &str) -> FormatCipher {
    cipher(Format::named(name).unwrap())
}

fn luhn_valid(s: &str) -> bool {
    let digits: Vec<u32> = s.chars().filter_map(|c| c.to_digit(10)).collect();
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(p, &d)| {
            if p % 2 == 1 {
                let t = 2 * d;
                if t > 9 { t - 9 } else { t }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

fn roundtrip(c: &FormatCipher, value: &str) -> String {
    let token = c.encrypt(value).unwrap();
    assert_eq!(c.decrypt(&token).unwrap(), value, "round trip of a value");
    assert_eq!(token.chars().count(), value.chars().count());
    token
}

#[test]
fn card_preserves_luhn_and_separators() {
    let c = named("card");
    let token = roundtrip(&c, "4111 1111 1111 1111");
    assert!(luhn_valid(&token));
    assert_eq!(token.chars().nth(4), Some(' '));
    // An invalid number round-trips and stays invalid with its residue.
    let token = roundtrip(&c, "4111111111111112");
    assert!(!luhn_valid(&token));
}

#[test]
fn card_keep_6_4_keeps_bin_and_last_four() {
    let c = named("card-keep-6-4");
    let value = "4111111111111111111"; // 19 digits: 8 encrypted digits plus the Luhn one
    let token = roundtrip(&c, value);
    assert_eq!(&token[..6], &value[..6]);
    assert_eq!(&token[15..], &value[15..]);
    assert_eq!(luhn_valid(&token), luhn_valid(value));
    let token = roundtrip(&c, "4111111111111111110");
    assert!(luhn_valid("4111111111111111110") && luhn_valid(&token));
    // 16 digits leave 10^5 values: refused, saying how many.
    assert_eq!(
        c.encrypt("4111111111111111"),
        Err(Error::DomainTooSmall {
            values: 100_000,
            min: MIN_DOMAIN
        })
    );
    assert!(c.decrypt("4111111111111111").is_err());
}

#[test]
fn kept_bin_changes_the_rest() {
    let c = named("card-keep-6-4");
    let a = c.encrypt("411111 123456789 1111").unwrap();
    let b = c.encrypt("511111 123456789 1111").unwrap();
    assert_ne!(&a[7..16], &b[7..16]);
}

#[test]
fn card_keep_last_4() {
    let c = named("card-keep-last-4");
    let token = roundtrip(&c, "4111-1111-1111-1111");
    assert!(token.ends_with("1111"));
    assert!(luhn_valid(&token));
}

#[test]
fn luhn_invalid_tokens_fail_the_check() {
    let c = cipher(
        Format::named("digits")
            .unwrap()
            .luhn(Luhn::Invalid)
            .keep_prefix(1),
    );
    for value in ["4111111111111111", "79927398713", "5500000000000004"] {
        let token = roundtrip(&c, value);
        assert!(!luhn_valid(&token));
        assert_eq!(&token[..1], &value[..1]);
        // A token is not a valid input, and a valid number is not a token.
        assert_eq!(c.encrypt(&token), Err(Error::LuhnCheckFailed));
        assert_eq!(c.decrypt(value), Err(Error::NotALuhnToken));
    }
}

#[test]
fn luhn_only_on_digits() {
    let f = Format::named("alnum").unwrap().luhn(Luhn::Preserve);
    assert_eq!(
        FormatCipher::new(&KEY, f).unwrap_err(),
        Error::LuhnNeedsDigits
    );
    let f = Format::auto().luhn(Luhn::Invalid);
    assert_eq!(
        FormatCipher::new(&KEY, f).unwrap_err(),
        Error::LuhnNeedsDigits
    );
    let f = Format::template("9{4}-9{4}-9{4}")
        .unwrap()
        .luhn(Luhn::Preserve);
    let token = roundtrip(&cipher(f), "4111-1111-1111");
    assert!(luhn_valid(&token) == luhn_valid("4111-1111-1111"));
}

#[test]
fn ssn_template() {
    let c = named("ssn");
    let token = roundtrip(&c, "078-05-1120");
    assert!(
        token
            .chars()
            .enumerate()
            .all(|(i, ch)| if i == 3 || i == 6 {
                ch == '-'
            } else {
                ch.is_ascii_digit()
            })
    );
    assert_eq!(
        c.encrypt("078-05-112"),
        Err(Error::LengthMismatch {
            expected: 11,
            actual: 10,
            without_literals: Some(9),
        })
    );
    assert_eq!(
        c.encrypt("078 05-1120"),
        Err(Error::InvalidChar { position: 3 })
    );

    // Without its dashes, a number encrypts to the dashed token's digits and back.
    let bare = roundtrip(&c, "078051120");
    assert_eq!(bare, token.replace('-', ""));
    assert_eq!(c.decrypt(&bare).unwrap(), "078051120");
    assert_eq!(
        c.encrypt("0780a1120"),
        Err(Error::InvalidChar { position: 4 })
    );
    assert_eq!(
        c.encrypt("078-051120"),
        Err(Error::LengthMismatch {
            expected: 11,
            actual: 10,
            without_literals: Some(9),
        })
    );
}

#[test]
fn literals_optional_only_when_asked() {
    let template = || Format::template("(999) 999-9999").unwrap();
    let strict = cipher(template());
    assert_eq!(
        strict.encrypt("5551234567"),
        Err(Error::LengthMismatch {
            expected: 14,
            actual: 10,
            without_literals: None,
        })
    );
    let optional = cipher(template().literals_optional(true));
    let token = roundtrip(&optional, "(555) 123-4567");
    assert_eq!(token, strict.encrypt("(555) 123-4567").unwrap());
    let digits: String = token.chars().filter(char::is_ascii_digit).collect();
    assert_eq!(roundtrip(&optional, "5551234567"), digits);
    // Positions count in the value as given.
    assert_eq!(
        optional.encrypt("555123456x"),
        Err(Error::InvalidChar { position: 9 })
    );
    assert_eq!(
        optional.encrypt("(555) 123-456x"),
        Err(Error::InvalidChar { position: 13 })
    );
}

#[test]
fn templates_with_classes_and_names() {
    let vowels = Alphabet::new("aeiou").unwrap();
    let f = Format::template_with(r"{vowels}{2}[A-F0-9]{4}\9x{3}", &[("vowels", &vowels)]).unwrap();
    let c = cipher(f);
    let token = roundtrip(&c, "ia0B1C9zZ9");
    let t: Vec<char> = token.chars().collect();
    assert!(t[..2].iter().all(|ch| "aeiou".contains(*ch)));
    assert!(
        t[2..6]
            .iter()
            .all(|ch| ch.is_ascii_hexdigit() && !ch.is_ascii_lowercase())
    );
    assert_eq!(t[6], '9');
    assert!(t[7..].iter().all(char::is_ascii_alphanumeric));
}

#[test]
fn fixed_shape_small_domain_refused_at_construction() {
    let f = Format::template("99-99").unwrap();
    assert_eq!(
        FormatCipher::new(&KEY, f.clone()).unwrap_err(),
        Error::DomainTooSmall {
            values: 10_000,
            min: MIN_DOMAIN
        }
    );
    let c = cipher(f.allow_small_domain(true));
    roundtrip(&c, "12-34");
}

#[test]
fn separators_positions_change_the_permutation() {
    let c = cipher(Format::free_form(Alphabet::digits(), "-").unwrap());
    assert_ne!(c.tweak("1234-5678").unwrap(), c.tweak("123-45678").unwrap());
    assert_ne!(c.tweak("1234-5678").unwrap(), c.tweak("12345678").unwrap());
    let c = cipher(
        Format::free_form(Alphabet::digits(), "-")
            .unwrap()
            .allow_small_domain(true),
    );
    assert_ne!(c.tweak("12-34").unwrap(), c.tweak("1-234").unwrap());
}

#[test]
fn auto_keeps_classes() {
    let c = named("auto");
    let value = "Flight AB-1234, seat 17c";
    let token = roundtrip(&c, value);
    for (a, b) in value.chars().zip(token.chars()) {
        assert_eq!(a.is_ascii_digit(), b.is_ascii_digit());
        assert_eq!(a.is_ascii_lowercase(), b.is_ascii_lowercase());
        assert_eq!(a.is_ascii_uppercase(), b.is_ascii_uppercase());
        if !a.is_ascii_alphanumeric() {
            assert_eq!(a, b);
        }
    }
    assert_ne!(c.tweak("aB1234").unwrap(), c.tweak("Ab1234").unwrap());
}

#[test]
fn uuid_keeps_case_and_dashes() {
    let c = named("uuid");
    let lower = "123e4567-e89b-12d3-a456-426614174000";
    let upper = lower.to_ascii_uppercase();
    let t1 = roundtrip(&c, lower);
    let t2 = roundtrip(&c, &upper);
    assert!(!t1.chars().any(|ch| ch.is_ascii_uppercase()));
    assert!(!t2.chars().any(|ch| ch.is_ascii_lowercase()));
    assert_eq!(t1.len(), 36);
    assert_eq!(
        c.encrypt("123e4567-E89b"),
        Err(Error::MixedCase { position: 9 })
    );
    // Upper-case values whose first encryption has no letter walk on: short ones show it.
    let c = cipher(
        Format::free_form(Alphabet::hex(), "")
            .unwrap()
            .fold_case(true)
            .allow_small_domain(true),
    );
    for v in 0..200u32 {
        let value = format!("{:02X}A", v % 256);
        let token = roundtrip(&c, &value);
        assert!(token.chars().any(|ch| ch.is_ascii_uppercase()));
    }
}

#[test]
fn hex_is_lower_case_only() {
    let c = named("hex");
    roundtrip(&c, "deadbeef");
    assert_eq!(
        c.encrypt("deadBeef"),
        Err(Error::InvalidChar { position: 4 })
    );
    assert_eq!(
        c.encrypt("beef"),
        Err(Error::DomainTooSmall {
            values: 65_536,
            min: MIN_DOMAIN
        })
    );
    roundtrip(&c, "beef0");
}

#[test]
fn keep_counts_alphabet_characters_only() {
    let c = cipher(
        Format::named("phone")
            .unwrap()
            .keep_prefix(3)
            .keep_suffix(2),
    );
    let token = roundtrip(&c, "+1 (555) 010-9999");
    assert_eq!(&token[..6], "+1 (55");
    assert!(token.ends_with("99"));
}

#[test]
fn nothing_to_encrypt() {
    let c = cipher(
        Format::named("digits")
            .unwrap()
            .keep_prefix(4)
            .allow_small_domain(true),
    );
    assert_eq!(
        c.encrypt("1234"),
        Err(Error::NothingToEncrypt {
            chars: 4,
            reserved: 4
        })
    );
    assert_eq!(c.encrypt("--"), Err(Error::InvalidChar { position: 0 }));
    assert!(c.encrypt("").is_err());
}

#[test]
fn length_limits() {
    let c = named("digits");
    let long = "7".repeat(MAX_CHARS + 1);
    assert_eq!(
        c.encrypt(&long),
        Err(Error::TooLong {
            chars: MAX_CHARS + 1,
            max: MAX_CHARS
        })
    );
    // RiffpeX indexes at most 256 positions of radix below 256.
    assert_eq!(
        c.encrypt(&"7".repeat(257)),
        Err(Error::TooManyPositions {
            positions: 257,
            max: 256
        })
    );
    roundtrip(&c, &"7".repeat(256));
    // The printable alphabet at the maximum length is fine through the wide-index path.
    let wide = cipher(
        Format::free_form(
            Alphabet::new(&('\u{100}'..'\u{400}').collect::<String>()).unwrap(),
            "",
        )
        .unwrap(),
    );
    roundtrip(&wide, &"\u{101}".repeat(300));
}

#[test]
fn key_lengths() {
    assert_eq!(
        FormatCipher::new(&[0; 20], Format::auto()).unwrap_err(),
        Error::InvalidKeyLength { len: 20 }
    );
    for len in [16, 24, 32] {
        let c = FormatCipher::new(&vec![1; len], Format::auto()).unwrap();
        roundtrip(&c, "abc123");
    }
}

#[test]
fn security_levels_and_contexts_give_other_tokens() {
    let f = Format::named("digits").unwrap();
    let a = cipher(f.clone()).encrypt("1234567890").unwrap();
    let b = cipher(f.clone().security(Security::Bits256))
        .encrypt("1234567890")
        .unwrap();
    let c = cipher(f)
        .context(b"table.column")
        .encrypt("1234567890")
        .unwrap();
    assert!(a != b && a != c && b != c);
    assert_eq!(Security::Bits128.bytes_per_value(10), 18);
    assert_eq!(Security::Bits128.bytes_per_value(1000), 19);
    assert_eq!(Security::Bits128.bytes_per_value(10_000), 20);
    assert_eq!(Security::Bits256.bytes_per_value(62), 34);
    assert_eq!(Security::Bits256.bytes_per_value(10_000), 35);
}

#[test]
fn bulk_matches_one_at_a_time() {
    let c = named("card");
    let values: Vec<String> = (0..150u64)
        .map(|i| {
            let n = 4_000_000_000_000_000 + i * 7_919_113;
            match i % 3 {
                0 => format!("{n}"),
                1 => format!("{} {}", &n.to_string()[..8], &n.to_string()[8..]),
                _ => format!("{}", n / 1000),
            }
        })
        .collect();
    let tokens = c.encrypt_many(&values).unwrap();
    for (v, t) in values.iter().zip(&tokens) {
        assert_eq!(&c.encrypt(v).unwrap(), t);
    }
    assert_eq!(c.decrypt_many(&tokens).unwrap(), values);
    let uuid = named("uuid");
    let ids = [
        "00000000-0000-0000-0000-00000000000A",
        "ffffffff-0000-0000-0000-000000000000",
    ];
    let tokens = uuid.encrypt_many(&ids).unwrap();
    assert_eq!(uuid.decrypt_many(&tokens).unwrap(), ids);
}

/// A token takes the room of its bytes, no more, where the alphabets are ASCII; a wider
/// alphabet's token still comes back whole.
#[test]
fn tokens_take_the_room_of_their_bytes() {
    let card = named("card");
    let cards = ["4111 1111 1111 1111", "5500-0000-0000-0004"];
    let mut tokens = card.encrypt_many(&cards).unwrap();
    tokens.push(card.encrypt(cards[0]).unwrap());
    assert!(tokens.iter().all(|t| t.capacity() == t.len()));
    let wide = Format::free_form(Alphabet::new("0123456789é€").unwrap(), "-").unwrap();
    let wide = FormatCipher::new(&[0x2b; 16], wide).unwrap();
    let value = "0123-4567-89";
    let token = wide.encrypt(value).unwrap();
    assert_eq!(token.chars().count(), value.chars().count());
    assert_eq!(wide.decrypt(&token).unwrap(), value);
}

/// Rows under their own contexts through one kept scratch, call after call, as with fresh
/// buffers; a refused call in between changes nothing.
#[test]
fn bulk_with_contexts_in_a_kept_scratch() {
    let c = named("ssn");
    let rows: Vec<(String, Vec<u8>)> = (0..300u32)
        .map(|i| {
            (
                format!("{:03}-45-{:04}", 100 + i, i),
                vec![b't', (i % 7) as u8],
            )
        })
        .collect();
    let mut scratch = BulkScratch::default();
    for chunk in rows.chunks(128) {
        let tokens = c
            .encrypt_many_with_contexts_in(chunk, &mut scratch)
            .unwrap();
        assert_eq!(tokens, c.encrypt_many_with_contexts(chunk).unwrap());
        let refused = [("123-45-678x", &b"t"[..])];
        let err = c.encrypt_many_with_contexts_in(&refused, &mut scratch);
        assert_eq!(err.unwrap_err().error, Error::InvalidChar { position: 10 });
        let back: Vec<(&str, &[u8])> = tokens
            .iter()
            .zip(chunk)
            .map(|(t, (_, context))| (t.as_str(), context.as_slice()))
            .collect();
        let plain = c
            .decrypt_many_with_contexts_in(&back, &mut scratch)
            .unwrap();
        assert!(plain.iter().zip(chunk).all(|(p, (v, _))| p == v));
    }
}

#[test]
fn listing() {
    let names: Vec<&str> = named_formats().iter().map(|f| f.name).collect();
    assert_eq!(
        names,
        [
            "digits",
            "card",
            "card-keep-6-4",
            "card-keep-last-4",
            "ssn",
            "phone",
            "alnum",
            "auto",
            "hex",
            "uuid"
        ]
    );
    for f in named_formats() {
        assert_eq!(Format::named(f.name).unwrap(), f.format());
        assert!(FormatCipher::new(&KEY, f.format()).is_ok(), "{}", f.name);
        for (len, size) in f.domain_sizes() {
            assert!(size.is_ok(), "{} {len}", f.name);
        }
    }
    assert_eq!(Format::named("iban"), Err(Error::UnknownFormat));
}

/// The shortest accepted length of each free-form named format, as the crate docs' table says.
#[test]
fn refusal_thresholds_match_the_docs() {
    for (name, shortest) in [
        ("digits", 6),
        ("card", 7),
        ("card-keep-6-4", 17),
        ("card-keep-last-4", 11),
        ("phone", 6),
        ("alnum", 4),
        ("hex", 5),
        ("uuid", 5),
    ] {
        let f = Format::named(name).unwrap();
        let size = |n| f.domain_for(n).unwrap_or(0);
        assert!(size(shortest) >= MIN_DOMAIN, "{name} {shortest}");
        assert!(size(shortest - 1) < MIN_DOMAIN, "{name} {}", shortest - 1);
    }
    assert_eq!(
        Format::named("ssn").unwrap().domain_for(9),
        Ok(1_000_000_000)
    );
}

#[test]
fn constant_time_selection_gives_the_same_tokens() {
    // One at a time and in bulk (lockstep), formats with fixed radices (card, ssn) and with
    // radices per value (auto: digits and letters kept apart; alnum: radix 62, above the
    // radices the lockstep ranks every key for).
    let values = [
        (
            "card",
            vec![
                "4111-1111-1111-1111",
                "5500 0000 0000 0004",
                "340000000000009",
            ],
        ),
        ("ssn", vec!["123-45-6789", "987-65-4321", "001-01-0001"]),
        ("auto", vec!["a1234567", "Zx-99-QQ", "order 2024/11/25"]),
        ("alnum", vec!["Riffpe2026", "abcXYZ0123456789"]),
    ];
    for (name, values) in values {
        let format = || Format::named(name).unwrap();
        let fast = FormatCipher::with_selection(&KEY, format(), Selection::Fast).unwrap();
        let constant_time =
            FormatCipher::with_selection(&KEY, format(), Selection::ConstantTime).unwrap();
        let tokens = fast.encrypt_many(&values).unwrap();
        assert_eq!(
            constant_time.encrypt_many(&values).unwrap(),
            tokens,
            "{name}"
        );
        assert_eq!(
            constant_time.decrypt_many(&tokens).unwrap(),
            values,
            "{name}"
        );
        for (value, token) in values.iter().zip(&tokens) {
            assert_eq!(&constant_time.encrypt(value).unwrap(), token, "{name}");
            assert_eq!(&constant_time.decrypt(token).unwrap(), value, "{name}");
        }
    }
}
