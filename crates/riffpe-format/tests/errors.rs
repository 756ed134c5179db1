//! Error messages: what they say, and that no value (or key) is ever in them.

use riffpe_format::{Alphabet, Error, Format, FormatCipher, Luhn, TemplateError};

const KEY: [u8; 16] = [0x5a; 16];

fn cipher(name: &str) -> FormatCipher {
    FormatCipher::new(&KEY, Format::named(name).unwrap()).unwrap()
}

/// The message of `result`'s error, checked to contain none of `secrets`.
fn message<T: std::fmt::Debug>(result: Result<T, Error>, secrets: &[&str]) -> String {
    let m = result.unwrap_err().to_string();
    for s in secrets {
        assert!(!m.contains(s), "{m:?} contains {s:?}");
    }
    m
}

#[test]
fn value_errors_name_positions_not_values() {
    let card = cipher("card");
    let m = message(
        card.encrypt("4929 3816 5?72 0463"),
        &["4929", "3816", "?", "0463"],
    );
    assert!(m.contains("the 12th character"), "{m}");

    let ssn = cipher("ssn");
    let m = message(ssn.encrypt("987-65-43210"), &["987", "4321"]);
    assert_eq!(
        m,
        "the value has 12 characters, the template 11 (9 without its literals)"
    );

    let uuid = cipher("uuid");
    let m = message(uuid.encrypt("9f8e7d6c-B5a4"), &["9f8e", "B5a4", "b5a4"]);
    assert!(m.contains("the 10th character"), "{m}");

    let luhn =
        FormatCipher::new(&KEY, Format::named("digits").unwrap().luhn(Luhn::Invalid)).unwrap();
    message(luhn.encrypt("4929381657204630"), &["4929", "7204"]);
    message(luhn.decrypt("4929381657204633"), &["4929", "7204"]);
}

#[test]
fn small_domain_says_how_many_and_what_to_change() {
    let c = cipher("card-keep-6-4");
    let m = message(c.encrypt("4929381657204633"), &["4929", "381657", "4633"]);
    assert!(m.contains("100000 values"), "{m}");
    assert!(m.contains("1000000"), "{m}");
    assert!(
        m.contains("keep fewer") && m.contains("allow_small_domain"),
        "{m}"
    );
    assert!(m.contains("NIST SP 800-38G"), "{m}");
}

#[test]
fn bulk_errors_name_the_index() {
    let c = cipher("phone");
    let e = c
        .encrypt_many(&["+1 555 010 9999", "+1 555 010 9999", "+1 555 O10 9999"])
        .unwrap_err();
    assert_eq!((e.index, e.error), (2, Error::InvalidChar { position: 7 }));
    let m = e.to_string();
    assert!(m.starts_with("value 2: the 8th character "), "{m}");
    assert!(
        !m.contains("555") && !m.contains("9999") && !m.contains('O'),
        "{m}"
    );
}

#[test]
fn template_errors_give_char_and_byte() {
    let e = Format::template("ü9{bogus}").unwrap_err();
    assert_eq!(
        e,
        Error::Template {
            position: 2,
            byte: 3,
            reason: TemplateError::UnknownAlphabet
        }
    );
    assert_eq!(
        e.to_string(),
        "template error at its 3rd character: no alphabet has this name"
    );
}

#[test]
fn definition_errors() {
    assert_eq!(Alphabet::new("x"), Err(Error::AlphabetSize { size: 1 }));
    assert_eq!(
        Alphabet::new("abcb"),
        Err(Error::DuplicateChar { position: 3 })
    );
    let too_big = (0u32..0x1_1000).filter_map(char::from_u32);
    assert!(matches!(
        Alphabet::from_chars(too_big),
        Err(Error::AlphabetSize { .. })
    ));
    assert_eq!(
        Format::free_form(Alphabet::digits(), " 5"),
        Err(Error::PassthroughInAlphabet { position: 1 })
    );
    let mixed = Format::named("alnum").unwrap().fold_case(true);
    assert_eq!(
        FormatCipher::new(&KEY, mixed).unwrap_err(),
        Error::CaseFoldAmbiguous
    );
    for free in [Format::named("card").unwrap(), Format::auto()] {
        assert_eq!(
            FormatCipher::new(&KEY, free.literals_optional(true)).unwrap_err(),
            Error::LiteralsOptionalNeedsTemplate
        );
    }
    // Switching it off is a no-op anywhere; a template without literals takes it.
    assert!(FormatCipher::new(&KEY, Format::auto().literals_optional(false)).is_ok());
    let bare = Format::template("9{12}").unwrap().literals_optional(true);
    assert!(FormatCipher::new(&KEY, bare).is_ok());
}

#[test]
fn debug_shows_no_key() {
    let c = FormatCipher::new(&[0xab; 16], Format::named("digits").unwrap()).unwrap();
    let d = format!("{c:?}");
    assert!(
        !d.to_lowercase().contains("abab") && !d.contains("171"),
        "{d}"
    );
    let m = FormatCipher::new(&[0xab; 17], Format::auto())
        .unwrap_err()
        .to_string();
    assert_eq!(m, "a 17-byte key is not an AES key (16, 24 or 32 bytes)");
}
