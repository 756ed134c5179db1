//! Properties over generated values: shape kept, round trips, determinism, Luhn, kept
//! characters, binding of the shape, bulk equal to single, no panics.

use proptest::prelude::*;
use riffpe_format::{Alphabet, BulkScratch, Format, FormatCipher, Luhn};

const KEY: [u8; 16] = [0x0f; 16];

fn cipher(f: Format) -> FormatCipher {
    FormatCipher::new(&KEY, f).unwrap()
}

fn luhn_residue(s: &str) -> u32 {
    s.chars()
        .filter_map(|c| c.to_digit(10))
        .collect::<Vec<_>>()
        .iter()
        .rev()
        .enumerate()
        .map(|(p, &d)| {
            if p % 2 == 1 {
                (2 * d) % 10 + (2 * d) / 10
            } else {
                d
            }
        })
        .sum::<u32>()
        % 10
}

/// A Luhn-valid number of `payload` digits plus a check digit.
fn with_check_digit(payload: &str) -> String {
    (0..10)
        .map(|d| format!("{payload}{d}"))
        .find(|s| luhn_residue(s) == 0)
        .unwrap()
}

/// Digits with phone separators sprinkled in.
fn phone_value() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::char::range('0', '9'),
            1 => prop::sample::select(vec![' ', '-', '(', ')', '+', '.']),
        ],
        0..40,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn digit_count(s: &str) -> usize {
    s.chars().filter(char::is_ascii_digit).count()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn phone_shape_roundtrip_deterministic(value in phone_value()) {
        let c = cipher(Format::named("phone").unwrap());
        match c.encrypt(&value) {
            Ok(token) => {
                prop_assert!(digit_count(&value) >= 6);
                prop_assert_eq!(token.chars().count(), value.chars().count());
                for (a, b) in value.chars().zip(token.chars()) {
                    prop_assert_eq!(a.is_ascii_digit(), b.is_ascii_digit());
                    if !a.is_ascii_digit() { prop_assert_eq!(a, b); }
                }
                prop_assert_eq!(c.encrypt(&value).unwrap(), token.clone());
                prop_assert_eq!(c.decrypt(&token).unwrap(), value);
            }
            Err(_) => prop_assert!(digit_count(&value) < 6),
        }
    }

    #[test]
    fn card_luhn_residue_preserved(payload in "[0-9]{12,18}", check in 0u32..10) {
        let value = format!("{payload}{check}");
        let c = cipher(Format::named("card").unwrap());
        let token = c.encrypt(&value).unwrap();
        prop_assert_eq!(luhn_residue(&token), luhn_residue(&value));
        prop_assert_eq!(c.decrypt(&token).unwrap(), value);
    }

    #[test]
    fn luhn_invalid_breaks_and_inverts(payload in "[0-9]{9,18}", keep in 0usize..3) {
        let value = with_check_digit(&payload);
        let c = cipher(Format::named("digits").unwrap().luhn(Luhn::Invalid).keep_prefix(keep));
        let token = c.encrypt(&value).unwrap();
        prop_assert!(luhn_residue(&token) != 0);
        prop_assert_eq!(&token[..keep], &value[..keep]);
        prop_assert_eq!(c.decrypt(&token).unwrap(), value);
    }

    #[test]
    fn kept_characters_unchanged(value in "[0-9A-Za-z]{12,30}", prefix in 0usize..4, suffix in 0usize..4) {
        let c = cipher(Format::named("alnum").unwrap().keep_prefix(prefix).keep_suffix(suffix));
        let token = c.encrypt(&value).unwrap();
        prop_assert_eq!(&token[..prefix], &value[..prefix]);
        prop_assert_eq!(&token[value.len() - suffix..], &value[value.len() - suffix..]);
        prop_assert_eq!(c.decrypt(&token).unwrap(), value);
    }

    #[test]
    fn kept_prefix_changes_the_rest(rest in "[0-9]{10}", a in "[0-9]{6}", b in "[0-9]{6}") {
        prop_assume!(a != b);
        let c = cipher(Format::named("digits").unwrap().keep_prefix(6));
        prop_assert_ne!(c.tweak(&format!("{a}{rest}")).unwrap(), c.tweak(&format!("{b}{rest}")).unwrap());
    }

    #[test]
    fn separator_positions_give_other_permutations(digits in "[0-9]{8,16}", i in 1usize..8, j in 1usize..8) {
        prop_assume!(i != j);
        let c = cipher(Format::free_form(Alphabet::digits(), "-").unwrap());
        let at = |k: usize| format!("{}-{}", &digits[..k], &digits[k..]);
        prop_assert_ne!(c.tweak(&at(i)).unwrap(), c.tweak(&at(j)).unwrap());
    }

    #[test]
    fn auto_keeps_every_class(value in "[0-9a-zA-Z ,.é-]{8,40}") {
        let c = cipher(Format::auto());
        if let Ok(token) = c.encrypt(&value) {
            for (x, y) in value.chars().zip(token.chars()) {
                prop_assert_eq!(x.is_ascii_digit(), y.is_ascii_digit());
                prop_assert_eq!(x.is_ascii_lowercase(), y.is_ascii_lowercase());
                prop_assert_eq!(x.is_ascii_uppercase(), y.is_ascii_uppercase());
                if !x.is_ascii_alphanumeric() { prop_assert_eq!(x, y); }
            }
            prop_assert_eq!(c.decrypt(&token).unwrap(), value);
        }
    }

    /// An alphabet of ASCII and other characters: ASCII values may become values with others
    /// and back, in bulk as one at a time.
    #[test]
    fn alphabet_beyond_ascii_round_trips(
        values in prop::collection::vec("[0-9ab\u{e9}\u{20ac}-]{8,24}", 1..8),
    ) {
        let alphabet = Alphabet::new("0123456789ab\u{e9}\u{20ac}").unwrap();
        let c = cipher(Format::free_form(alphabet.clone(), "-").unwrap());
        let Ok(tokens) = c.encrypt_many(&values) else { return Ok(()); };
        for (value, token) in values.iter().zip(&tokens) {
            prop_assert_eq!(&c.encrypt(value).unwrap(), token);
            prop_assert_eq!(value.chars().count(), token.chars().count());
            for (x, y) in value.chars().zip(token.chars()) {
                prop_assert_eq!(x == '-', y == '-');
                prop_assert!(y == '-' || alphabet.index_of(y).is_some());
            }
        }
        prop_assert_eq!(c.decrypt_many(&tokens).unwrap(), values);
    }

    #[test]
    fn uuid_case_kept(hex in "[0-9a-f]{32}", upper in any::<bool>()) {
        let mut value = format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..]);
        if upper { value = value.to_ascii_uppercase(); }
        let c = cipher(Format::named("uuid").unwrap());
        let token = c.encrypt(&value).unwrap();
        let letters = |s: &str, f: fn(&char) -> bool| s.chars().any(|ch| f(&ch));
        if upper {
            prop_assert!(!letters(&token, char::is_ascii_lowercase));
        } else {
            prop_assert!(!letters(&token, char::is_ascii_uppercase));
        }
        prop_assert_eq!(c.decrypt(&token).unwrap(), value);
    }

    #[test]
    fn bulk_equals_single(values in prop::collection::vec(phone_value(), 1..20)) {
        let c = cipher(Format::named("phone").unwrap());
        let single: Result<Vec<String>, usize> = values
            .iter()
            .enumerate()
            .map(|(i, v)| c.encrypt(v).map_err(|_| i))
            .collect();
        match (c.encrypt_many(&values), single) {
            (Ok(many), Ok(one)) => {
                prop_assert_eq!(&many, &one);
                prop_assert_eq!(&c.decrypt_many(&many).unwrap(), &values);
            }
            (Err(e), Err(i)) => prop_assert_eq!(e.index, i),
            (a, b) => prop_assert!(false, "bulk {:?} single {:?}", a.is_ok(), b.is_ok()),
        }
        // Chunks through one kept scratch, both ways: each as with fresh buffers, also after a
        // refused one.
        let mut scratch = BulkScratch::default();
        for size in [1, 3, 7, values.len()] {
            for chunk in values.chunks(size) {
                let tokens = c.encrypt_many_in(chunk, &mut scratch);
                prop_assert_eq!(&tokens, &c.encrypt_many(chunk));
                if let Ok(tokens) = tokens {
                    prop_assert_eq!(c.decrypt_many_in(&tokens, &mut scratch).unwrap(), chunk);
                }
            }
        }
    }

    /// Runs of values of one shape and context (long enough for their tweak to be set up once
    /// for a lockstep call, or not), alternating with another shape or not, under two contexts:
    /// in bulk as one at a time, both ways.
    #[test]
    fn bulk_of_repeated_shapes_equals_single(
        runs in prop::collection::vec((0usize..4, 0u8..2, 1usize..150), 1..6),
        alternate in any::<bool>(),
        seed in any::<u64>(),
    ) {
        // The first two give tweaks of one length that differ only inside.
        let shapes = ["ddd-ddd-dddd", "ddd.ddd.dddd", "(ddd) ddd-dddd", "+dd ddd ddd dddd"];
        let mut x = seed | 1;
        let mut digit = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(b'0' + (x % 10) as u8)
        };
        let mut rows: Vec<(String, [u8; 2])> = Vec::new();
        for &(shape, context, len) in &runs {
            for k in 0..len {
                let shape = if alternate && k % 2 == 1 { (shape + 1) % 4 } else { shape };
                let value = shapes[shape].chars().map(|c| if c == 'd' { digit() } else { c });
                rows.push((value.collect(), [b'c', context]));
            }
        }
        let c = cipher(Format::named("phone").unwrap());
        let under = [b"c\0", b"c\x01"]
            .map(|context| cipher(Format::named("phone").unwrap()).context(context));
        let tokens = c.encrypt_many_with_contexts(&rows).unwrap();
        for ((value, context), token) in rows.iter().zip(&tokens) {
            prop_assert_eq!(&under[usize::from(context[1])].encrypt(value).unwrap(), token);
        }
        let back: Vec<(&str, [u8; 2])> =
            tokens.iter().zip(&rows).map(|(t, r)| (t.as_str(), r.1)).collect();
        let plain = c.decrypt_many_with_contexts(&back).unwrap();
        prop_assert!(plain.iter().zip(&rows).all(|(p, (v, _))| p == v));

        let values: Vec<&str> = rows.iter().map(|(v, _)| v.as_str()).collect();
        let tokens = c.encrypt_many(&values).unwrap();
        for (value, token) in values.iter().zip(&tokens) {
            prop_assert_eq!(&c.encrypt(value).unwrap(), token);
        }
        prop_assert_eq!(c.decrypt_many(&tokens).unwrap(), values);
    }

    #[test]
    fn ssn_with_or_without_dashes(values in prop::collection::vec(("[0-9]{9}", any::<bool>()), 1..20)) {
        let c = cipher(Format::named("ssn").unwrap());
        let dashed = |d: &str| format!("{}-{}-{}", &d[..3], &d[3..5], &d[5..]);
        let given: Vec<String> = values
            .iter()
            .map(|(d, with)| if *with { dashed(d) } else { d.clone() })
            .collect();
        let many = c.encrypt_many(&given).unwrap();
        for ((digits, _), (value, token)) in values.iter().zip(given.iter().zip(&many)) {
            prop_assert_eq!(token, &c.encrypt(value).unwrap());
            let with_dashes = c.encrypt(&dashed(digits)).unwrap();
            prop_assert_eq!(token.replace('-', ""), with_dashes.replace('-', ""));
        }
        prop_assert_eq!(c.decrypt_many(&many).unwrap(), given);
    }

    #[test]
    fn arbitrary_strings_never_panic(value in any::<String>(), name in prop::sample::select(
        riffpe_format::named_formats().iter().map(|f| f.name).collect::<Vec<_>>()))
    {
        let c = cipher(Format::named(name).unwrap());
        if let Ok(token) = c.encrypt(&value) {
            prop_assert_eq!(c.decrypt(&token).unwrap(), value.clone());
        }
        let _ = c.decrypt(&value);
        let _ = c.encrypt_many(&[value.as_str(), "0"]);
    }

    #[test]
    fn arbitrary_templates_never_panic(template in "[9aAx\\[\\]{}0-9a-f\\\\,-]{0,16}", value in "[0-9a-zA-Z-]{0,12}", optional in any::<bool>()) {
        if let Ok(f) = Format::template(&template)
            && let Ok(c) = FormatCipher::new(&KEY, f.allow_small_domain(true).literals_optional(optional))
            && let Ok(token) = c.encrypt(&value)
        {
            prop_assert_eq!(c.decrypt(&token).unwrap(), value);
        }
    }

    #[test]
    fn errors_never_contain_the_value(digits in "[2-9]{8,20}", bad in "[^0-9 ()+.-]", at in 0usize..8) {
        // Eight or more digits with at least two distinct ones cannot be a count in a message.
        prop_assume!(digits.chars().collect::<std::collections::BTreeSet<_>>().len() > 1);
        let value = format!("{}{}{}", &digits[..at], bad, &digits[at..]);
        let c = cipher(Format::named("phone").unwrap());
        let message = c.encrypt(&value).unwrap_err().to_string();
        prop_assert!(!message.contains(&digits[..8]));
        prop_assert!(!message.contains(&digits[digits.len() - 8..]));
        let message = c.encrypt_many(&["555 0100 1234", &value]).unwrap_err().to_string();
        prop_assert!(message.starts_with("value 1: "));
        prop_assert!(!message.contains(&digits[..8]));
    }
}
