//! Which AES Riffpe runs on here, picked at run time and named by `Aes::backend`: on x86-64,
//! Riffpe's own backends (VAES-512 with AVX-512 as AMD Zen 4 and Zen 5 or Intel Ice Lake on
//! have it; VAES-256 with AVX2 but no AVX-512, as on AMD Zen 3; else AES-NI, 64 blocks a
//! batch), elsewhere the `aes` crate's choice (the ARMv8 crypto extensions on aarch64,
//! otherwise its constant-time software implementation: several times slower; a Raspberry Pi
//! 4's Cortex-A72 has no crypto extensions, a Graviton1's has). A known-answer check from
//! SPEC.md shows the backend computes Riffpe correctly.
//!
//! `cargo run --release --example aes_backend [-- --require-hardware]`: with the flag, the
//! software fallback is an error (CI runs it so under `qemu-aarch64 -cpu cortex-a72`).

use std::process::ExitCode;
use std::{env, fs};

use riffpe::integer::DigitOrder;
use riffpe::{AesBackend, Riffpe};

fn main() -> ExitCode {
    let require_hardware = env::args().skip(1).any(|arg| arg == "--require-hardware");
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();

    println!("target:       {}-{}", env::consts::ARCH, env::consts::OS);
    println!("cpu:          {}", cpu_model(&cpuinfo));
    if let Some(features) = cpu_features() {
        println!("cpu features: {features}");
    }
    let fpe = match Riffpe::new(100, 8, &[0; 16], b"") {
        Ok(fpe) => fpe,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let backend = fpe.cipher().backend();
    println!("aes backend:  {backend}, {} blocks at once", fpe.lanes());
    match known_answer() {
        Ok(()) => println!("known answer: ok (SPEC.md: 1234123456785678 -> 5158543106053628)"),
        Err(error) => {
            eprintln!("known answer: FAILED: {error}");
            return ExitCode::FAILURE;
        }
    }
    if require_hardware && backend == AesBackend::Software {
        eprintln!("error: --require-hardware, but AES runs on the aes crate's software fallback");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// SPEC.md's first command-line example: Riffpe(100, 8), little-endian digits.
fn known_answer() -> Result<(), Box<dyn std::error::Error>> {
    let key = hex::decode("00112233445566778899aabbccddeeff")?;
    let fpe = Riffpe::new(100, 8, &key, b"")?;
    let ciphertext = fpe.encrypt_int(1234123456785678u64, DigitOrder::LittleEndian)?;
    if ciphertext == 5158543106053628 {
        Ok(())
    } else {
        Err(format!("got {ciphertext:016}").into())
    }
}

/// The `Key : value` line of `/proc/cpuinfo`.
fn field<'a>(cpuinfo: &'a str, key: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == key).then(|| value.trim())
    })
}

/// On ARM the core from its MIDR part number (and the board if the kernel names it);
/// elsewhere the `model name`.
fn cpu_model(cpuinfo: &str) -> String {
    let (Some(implementer), Some(part)) = (
        field(cpuinfo, "CPU implementer"),
        field(cpuinfo, "CPU part"),
    ) else {
        return match field(cpuinfo, "model name") {
            // qemu-user before 8.2 shows an emulated program the host's /proc/cpuinfo.
            Some(model) if cfg!(target_arch = "aarch64") => {
                format!("{model} (the host's /proc/cpuinfo, shown by qemu-user before 8.2)")
            }
            Some(model) => model.to_owned(),
            None => "unknown (no /proc/cpuinfo)".to_owned(),
        };
    };
    let core = match (implementer, part) {
        ("0x41", "0xd03") => "Arm Cortex-A53",
        ("0x41", "0xd05") => "Arm Cortex-A55",
        ("0x41", "0xd07") => "Arm Cortex-A57",
        ("0x41", "0xd08") => "Arm Cortex-A72",
        ("0x41", "0xd0b") => "Arm Cortex-A76",
        ("0x41", "0xd0c") => "Arm Neoverse N1",
        ("0x41", "0xd40") => "Arm Neoverse V1",
        ("0x41", "0xd49") => "Arm Neoverse N2",
        ("0x41", "0xd4f") => "Arm Neoverse V2",
        _ => "Arm core",
    };
    let board = field(cpuinfo, "Model").map_or_else(String::new, |m| format!(" on {m}"));
    format!("{core} (implementer {implementer}, part {part}){board}")
}

/// The AES-relevant CPU features the program sees: on aarch64 Linux the kernel's `AT_HWCAP`
/// bits (which qemu-user sets from its `-cpu` model), on x86 what CPUID reports.
fn cpu_features() -> Option<String> {
    #[cfg(all(target_arch = "aarch64", target_os = "linux"))]
    {
        const AT_HWCAP: u64 = 16;
        const NAMES: [&str; 22] = [
            "fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "atomics", "fphp",
            "asimdhp", "cpuid", "asimdrdm", "jscvt", "fcma", "lrcpc", "dcpop", "sha3", "sm3",
            "sm4", "asimddp", "sha512",
        ];
        // The auxiliary vector: (type, value) pairs of native-endian u64s.
        let auxv = fs::read("/proc/self/auxv").ok()?;
        let words: Vec<u64> = auxv
            .chunks_exact(8)
            .map(|word| u64::from_ne_bytes(word.try_into().unwrap_or_default()))
            .collect();
        let hwcap = words
            .chunks_exact(2)
            .find(|pair| pair[0] == AT_HWCAP)
            .map(|pair| pair[1])?;
        let names: Vec<&str> = (0..NAMES.len())
            .filter(|bit| hwcap & (1 << bit) != 0)
            .map(|bit| NAMES[bit])
            .collect();
        Some(format!("{} (AT_HWCAP {hwcap:#x})", names.join(" ")))
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    {
        let mut names = Vec::new();
        if std::arch::is_x86_feature_detected!("aes") {
            names.push("aes");
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            names.push("avx2");
        }
        if std::arch::is_x86_feature_detected!("vaes") {
            names.push("vaes");
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            names.push("avx512f");
        }
        Some(format!("{} (CPUID)", names.join(" ")))
    }
    #[cfg(not(any(
        all(target_arch = "aarch64", target_os = "linux"),
        target_arch = "x86_64",
        target_arch = "x86"
    )))]
    {
        None
    }
}
