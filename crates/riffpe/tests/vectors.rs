//! The reference's vectors, through every entry point, in both directions.

mod common;

use common::{Params, Vector, parse_vectors, public_vectors};
use riffpe::{AnyFpe, Riffpe, RiffpeX, ScratchBuf, Tweak};

/// Checks one vector through the fixed-tweak, per-call-tweak (shared and per-message),
/// caller-scratch and run-time-scheme paths. Returns a description of the first mismatch.
fn check(v: &Vector) -> Result<(), String> {
    let at = |what: &str, got: &[u32], want: &[u32]| {
        if got == want {
            Ok(())
        } else {
            Err(format!(
                "line {}: {what}: got {got:?}, want {want:?}",
                v.line
            ))
        }
    };
    let mut buf = ScratchBuf::new();
    macro_rules! all_paths {
        ($fpe:expr, $other_tweak:expr) => {{
            let fpe = $fpe.map_err(|e| format!("line {}: construction failed: {e}", v.line))?;
            let mut m = v.plaintext.clone();
            fpe.encrypt(&mut m).map_err(|e| e.to_string())?;
            at("encrypt", &m, &v.ciphertext)?;
            fpe.decrypt(&mut m).map_err(|e| e.to_string())?;
            at("decrypt", &m, &v.plaintext)?;

            buf.reserve(fpe.scratch_size());
            let mut m = v.plaintext.clone();
            fpe.encrypt_with(Tweak::Fixed, &mut m, &mut buf.scratch())
                .map_err(|e| e.to_string())?;
            at("encrypt_with", &m, &v.ciphertext)?;
            fpe.decrypt_with(Tweak::Fixed, &mut m, &mut buf.scratch())
                .map_err(|e| e.to_string())?;
            at("decrypt_with", &m, &v.plaintext)?;

            // The same vector through an object whose fixed tweak is another one.
            let other = $other_tweak.map_err(|e| format!("line {}: {e}", v.line))?;
            let mut m = v.plaintext.clone();
            other
                .encrypt_with(Tweak::Bytes(&v.tweak), &mut m, &mut buf.scratch())
                .map_err(|e| e.to_string())?;
            at("encrypt_with Tweak::Bytes", &m, &v.ciphertext)?;
            other
                .decrypt_with(Tweak::Bytes(&v.tweak), &mut m, &mut buf.scratch())
                .map_err(|e| e.to_string())?;
            at("decrypt_with Tweak::Bytes", &m, &v.plaintext)?;
            let tweaks: [&[u8]; 1] = [&v.tweak];
            other
                .encrypt_with(Tweak::PerMessage(&tweaks), &mut m, &mut buf.scratch())
                .map_err(|e| e.to_string())?;
            at("encrypt_with Tweak::PerMessage", &m, &v.ciphertext)?;
            other
                .decrypt_with(Tweak::PerMessage(&tweaks), &mut m, &mut buf.scratch())
                .map_err(|e| e.to_string())?;
            at("decrypt_with Tweak::PerMessage", &m, &v.plaintext)?;

            // The scheme chosen at run time.
            let any: AnyFpe = fpe.into();
            let mut m = v.plaintext.clone();
            any.encrypt(&mut m).map_err(|e| e.to_string())?;
            at("AnyFpe encrypt", &m, &v.ciphertext)?;
            any.decrypt(&mut m).map_err(|e| e.to_string())?;
            at("AnyFpe decrypt", &m, &v.plaintext)?;
        }};
    }
    match &v.radices {
        None => all_paths!(
            Riffpe::builder(v.radix, v.digits)
                .bytes_per_value(v.bytes_per_value)
                .tweak(&v.tweak)
                .build(&v.key),
            Riffpe::builder(v.radix, v.digits)
                .bytes_per_value(v.bytes_per_value)
                .tweak(b"other")
                .build(&v.key)
        ),
        Some(radices) => all_paths!(
            RiffpeX::builder(radices.clone())
                .bytes_per_value(v.bytes_per_value)
                .tweak(&v.tweak)
                .build(&v.key),
            RiffpeX::builder(radices.as_slice())
                .bytes_per_value(v.bytes_per_value)
                .tweak(b"other")
                .build(&v.key)
        ),
    }
    Ok(())
}

#[test]
fn public_vectors_all_paths() {
    let vectors = public_vectors();
    assert_eq!(
        vectors.len(),
        306,
        "the bundled copy of the reference vectors"
    );
    let failures: Vec<String> = vectors.iter().filter_map(|v| check(v).err()).collect();
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn public_vectors_cover_both_schemes() {
    let vectors = public_vectors();
    assert!(vectors.iter().any(|v| v.radices.is_some()));
    assert!(vectors.iter().any(|v| v.radices.is_none()));
    assert!(vectors.iter().any(|v| v.key.len() == 24));
}

/// The plain reference implementation agrees with the reference's vectors too, so it is a
/// trustworthy oracle for the properties.
#[test]
fn plain_reference_matches_public_vectors() {
    for v in public_vectors()
        .iter()
        .filter(|v| v.radix <= 300 && v.digits <= 20)
    {
        let radices = v.radices.clone().unwrap_or_else(|| vec![v.radix; v.digits]);
        let r = Params {
            mixed: v.radices.is_some(),
            radices: &radices,
            key: &v.key,
            bytes_per_value: v.bytes_per_value,
        }
        .reference(&v.tweak);
        let mut m = v.plaintext.clone();
        r.encrypt(&mut m);
        assert_eq!(m, v.ciphertext, "line {}", v.line);
        r.decrypt(&mut m);
        assert_eq!(m, v.plaintext, "line {}", v.line);
    }
}

/// `RIFFPE_EXTRA_VECTORS=path` checks every vector of another file of the same format.
#[test]
fn extra_vectors_from_environment() {
    let Some(path) = std::env::var_os("RIFFPE_EXTRA_VECTORS") else {
        return;
    };
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("RIFFPE_EXTRA_VECTORS={}: {e}", path.to_string_lossy()));
    let vectors = parse_vectors(&text);
    let failures: Vec<String> = vectors.iter().filter_map(|v| check(v).err()).collect();
    println!(
        "extra vectors: {} checked, {} mismatches",
        vectors.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
