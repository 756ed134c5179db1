//! What a benchmark report must say about where it ran: CPU, cores, AES backend, date, commit.

use std::env;
use std::fs;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::shell;

/// The machine and the build a report describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub aes_backend: String,
    pub date: String,
    pub commit: String,
    pub rustc: String,
}

impl Machine {
    pub fn detect() -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let commit = shell::read(Command::new("git").args(["rev-parse", "--short", "HEAD"]))
            .map(|hash| hash.trim().to_owned());
        // The whole checkout, wherever this runs from; Markdown changes nothing measured (and
        // the report itself is Markdown).
        let dirty = shell::read(Command::new("git").args([
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ":/",
            ":(top,exclude,glob)**/*.md",
        ]))
        .is_ok_and(|status| !status.trim().is_empty());
        Machine {
            cpu: cpu_model(&cpuinfo).unwrap_or_else(|| format!("unknown {}", env::consts::ARCH)),
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            aes_backend: aes_backend(),
            date: utc_date(SystemTime::now()),
            commit: match commit {
                Ok(hash) if dirty => format!("{hash}-dirty"),
                Ok(hash) => hash,
                Err(_) => "unknown (not a git checkout)".to_owned(),
            },
            rustc: shell::read(Command::new("rustc").arg("--version"))
                .map_or_else(|_| "unknown".to_owned(), |v| v.trim().to_owned()),
        }
    }
}

/// The value of the first `key : value` line of `/proc/cpuinfo` with this key.
fn field<'a>(cpuinfo: &'a str, key: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == key).then(|| value.trim())
    })
}

/// On ARM the core named from `CPU implementer`/`CPU part`, with the board's `Model` line when
/// the kernel gives one (Raspberry Pi OS does); elsewhere the `model name`.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    let (Some(implementer), Some(part)) = (
        field(cpuinfo, "CPU implementer"),
        field(cpuinfo, "CPU part"),
    ) else {
        let model = field(cpuinfo, "model name")?;
        return Some(match x86_detail(cpuinfo) {
            Some(detail) => format!("{model} ({detail})"),
            None => model.to_owned(),
        });
    };
    let core = arm_core(implementer, part).map_or_else(
        || format!("implementer {implementer}, part {part}"),
        |name| format!("{name} (implementer {implementer}, part {part})"),
    );
    Some(match field(cpuinfo, "Model") {
        Some(board) => format!("{core} on {board}"),
        None => core,
    })
}

/// For x86: the AMD core generation or Intel Xeon generation from `cpu family` and `model`
/// (cloud VMs often show only "AMD EPYC" or "Intel(R) Xeon(R) Processor"), and the flags that
/// pick Riffpe's fast paths.
fn x86_detail(cpuinfo: &str) -> Option<String> {
    let flags: Vec<&str> = field(cpuinfo, "flags")?.split_whitespace().collect();
    let family = field(cpuinfo, "cpu family").and_then(|f| f.parse::<u32>().ok());
    let model = field(cpuinfo, "model").and_then(|m| m.parse::<u32>().ok());
    let core = match (field(cpuinfo, "vendor_id"), family, model) {
        (Some("AuthenticAMD"), Some(25), Some(m)) if m < 0x10 || (0x20..0x60).contains(&m) => {
            Some("Zen 3")
        }
        (Some("AuthenticAMD"), Some(25), Some(_)) => Some("Zen 4"),
        (Some("AuthenticAMD"), Some(26), Some(_)) => Some("Zen 5"),
        (Some("AuthenticAMD"), Some(23), Some(_)) => Some("Zen 1/2"),
        (Some("GenuineIntel"), Some(6), Some(85)) => Some("Skylake or Cascade Lake"),
        (Some("GenuineIntel"), Some(6), Some(106)) => Some("Ice Lake"),
        (Some("GenuineIntel"), Some(6), Some(143)) => Some("Sapphire Rapids"),
        (Some("GenuineIntel"), Some(6), Some(207)) => Some("Emerald Rapids"),
        (Some("GenuineIntel"), Some(6), Some(173)) => Some("Granite Rapids"),
        _ => None,
    };
    let isa = [
        ("aes", "AES-NI"),
        ("vaes", "VAES"),
        ("avx2", "AVX2"),
        ("avx512f", "AVX-512"),
    ]
    .iter()
    .filter(|(flag, _)| flags.contains(flag))
    .map(|(_, name)| *name)
    .collect::<Vec<_>>()
    .join(", ");
    let mut parts: Vec<String> = core.map(str::to_owned).into_iter().collect();
    if let (Some(family), Some(model)) = (family, model) {
        parts.push(format!("family {family}, model {model}"));
    }
    if !isa.is_empty() {
        parts.push(isa);
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Arm Ltd. core names by MIDR part number (and the cloud CPUs built on them).
fn arm_core(implementer: &str, part: &str) -> Option<&'static str> {
    if implementer != "0x41" {
        return None;
    }
    Some(match part {
        "0xd03" => "Arm Cortex-A53",
        "0xd04" => "Arm Cortex-A35",
        "0xd05" => "Arm Cortex-A55",
        "0xd07" => "Arm Cortex-A57",
        "0xd08" => "Arm Cortex-A72",
        "0xd09" => "Arm Cortex-A73",
        "0xd0a" => "Arm Cortex-A75",
        "0xd0b" => "Arm Cortex-A76",
        "0xd0c" => "Arm Neoverse N1",
        "0xd0d" => "Arm Cortex-A77",
        "0xd40" => "Arm Neoverse V1",
        "0xd41" => "Arm Cortex-A78",
        "0xd49" => "Arm Neoverse N2",
        "0xd4f" => "Arm Neoverse V2",
        _ => return None,
    })
}

/// The AES backend as the `aes_backend` example names it, built like the benches (same
/// RUSTFLAGS): from the blocks the engine gets at once, which is what ran, whatever the CPU's
/// flags promise (the `aes` crate takes VAES only with AVX-512 at run time).
fn aes_backend() -> String {
    let probe = shell::read(shell::cargo().args([
        "run",
        "--quiet",
        "--release",
        "--package",
        "riffpe-examples",
        "--example",
        "aes_backend",
    ]));
    match probe {
        Ok(output) => backend_from_probe(&output)
            .unwrap_or_else(|| "unknown (the aes_backend example named none)".to_owned()),
        Err(error) => format!("unknown (the aes_backend example failed: {error})"),
    }
}

/// The `aes backend:` line of the `aes_backend` example's output, with its `note:` if any.
fn backend_from_probe(output: &str) -> Option<String> {
    let value = |key: &str| {
        output
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .map(str::trim)
    };
    let backend = value("aes backend:")?;
    Some(match value("note:") {
        Some(note) => format!("{backend}; {note}"),
        None => backend.to_owned(),
    })
}

/// `2026-05-01 13:37 UTC`.
pub fn utc_date(time: SystemTime) -> String {
    let seconds = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60
    )
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to a proleptic Gregorian date.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const PI4: &str = "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\n\
        CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\n\
        CPU revision\t: 3\n\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";
    const EPYC: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n\
        flags\t\t: fpu sse2 aes avx2 vaes vpclmulqdq\n";

    #[test]
    fn names_the_cpu() {
        assert_eq!(
            cpu_model(EPYC).as_deref(),
            Some("AMD EPYC 7B13 (AES-NI, VAES, AVX2)")
        );
        let zen3 = "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n\
            model name\t: AMD EPYC\nflags\t\t: aes avx2 vaes\n";
        assert_eq!(
            cpu_model(zen3).as_deref(),
            Some("AMD EPYC (Zen 3; family 25, model 1; AES-NI, VAES, AVX2)")
        );
        let zen4 = zen3.replace("model\t\t: 1\n", "model\t\t: 17\n");
        assert!(cpu_model(&zen4).is_some_and(|cpu| cpu.contains("Zen 4; family 25, model 17")));
        let xeon = "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 207\n\
            model name\t: Intel(R) Xeon(R) Processor\nflags\t\t: aes avx2 avx512f vaes\n";
        assert_eq!(
            cpu_model(xeon).as_deref(),
            Some(
                "Intel(R) Xeon(R) Processor \
                 (Emerald Rapids; family 6, model 207; AES-NI, VAES, AVX2, AVX-512)"
            )
        );
        assert_eq!(
            cpu_model(PI4).as_deref(),
            Some("Arm Cortex-A72 (implementer 0x41, part 0xd08) on Raspberry Pi 4 Model B Rev 1.4")
        );
        assert_eq!(cpu_model(""), None);
    }

    /// What the `aes_backend` example prints, around its backend line.
    fn probe(backend: &str, note: Option<&str>) -> String {
        let note = note.map_or_else(String::new, |note| format!("note:         {note}\n"));
        format!(
            "target:       x86_64-linux\ncpu:          AMD EPYC\n\
             aes backend:  {backend}\n{note}known answer: ok\n"
        )
    }

    #[test]
    fn names_the_aes_backend_the_example_found() {
        // Zen 3 by default: AES-NI, and why VAES is not used.
        let zen3 = probe(
            "AES-NI, 8 blocks at once",
            Some("this CPU has VAES but not AVX-512"),
        );
        assert_eq!(
            backend_from_probe(&zen3).as_deref(),
            Some("AES-NI, 8 blocks at once; this CPU has VAES but not AVX-512")
        );
        let zen3_native = probe("VAES-256 (AVX2), 30 blocks at once", None);
        assert_eq!(
            backend_from_probe(&zen3_native).as_deref(),
            Some("VAES-256 (AVX2), 30 blocks at once")
        );
        let soft = probe("software (constant-time fixslice), 8 blocks at once", None);
        assert!(backend_from_probe(&soft).unwrap().starts_with("software"));
        assert_eq!(backend_from_probe("known answer: ok\n"), None);
    }

    #[test]
    fn dates_are_utc_calendar_dates() {
        let at = |seconds| utc_date(UNIX_EPOCH + Duration::from_secs(seconds));
        assert_eq!(at(0), "1970-01-01 00:00 UTC");
        assert_eq!(at(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(at(1_777_641_420), "2026-05-01 13:17 UTC");
    }
}
