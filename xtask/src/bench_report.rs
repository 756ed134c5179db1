//! `cargo xtask bench-report`: runs the criterion benches and turns criterion's JSON results
//! into `BENCHMARKS.md` (latency per operation, throughput, the chained-AES limit, the machine).
//!
//! The bench naming it reads (benches/): groups `latency-encrypt` and `latency-decrypt` with the
//! implementation as function and the digit count as value; `aes-chain` with `aes_chain N blocks`;
//! `throughput-*` with the mode (`single`, `lockstep`, `parallel`) as function and the input
//! size as value. Anything else lands in a generic table, so nothing measured is dropped.
//!
//! Next to criterion's results, the benches leave the allocations they counted (with a counting
//! global allocator) in `riffpe-allocations/`, one JSON file a benchmark:
//! `{"group": …, "function": …, "value": …, "operations": n, "allocations": k}`.

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::machine::{Machine, utc_date};
use crate::shell::{self, Result, cargo, run};
use crate::workspace::Metadata;

#[derive(Debug)]
pub struct Options {
    /// Run the benches first; without it the report is made from the results already there.
    pub run: bool,
    pub output: PathBuf,
    /// Passed to the bench binaries (criterion): `--quick`, a filter, …
    pub bench_args: Vec<String>,
}

const BENCH_PACKAGE: &str = "riffpe-benches";

pub fn bench_report(options: &Options) -> Result {
    let metadata = Metadata::load()?;
    let criterion = metadata.target_dir()?.join("criterion");
    // Read before the benches are built and run, so that edits made while they run do not
    // mark the report dirty.
    let detected = Machine::detect();
    let mut command = cargo();
    command.args(["bench", "--package", BENCH_PACKAGE]);
    if !options.bench_args.is_empty() {
        command.arg("--").args(&options.bench_args);
    }
    let (since, source) = if options.run {
        if metadata.targets(BENCH_PACKAGE, "bench").is_empty() {
            return Err(format!("{BENCH_PACKAGE} has no bench targets yet").into());
        }
        let start = SystemTime::now();
        run(&mut command)?;
        // Only this run's results: older ones may be of benches since renamed or removed.
        // (Some file systems keep modification times to the second.)
        (
            Some(start - Duration::from_secs(2)),
            format!("`{}`", shell::display(&command)),
        )
    } else {
        (
            None,
            format!(
                "an earlier `cargo bench --package {BENCH_PACKAGE}` (reported with `--report-only`)"
            ),
        )
    };

    shell::step("report");
    let (measurements, newest) = collect(&criterion, since)?;
    let Some(newest) = newest else {
        return Err(format!("no criterion results under {}", criterion.display()).into());
    };
    // The date the benches ran, also when the report is made later.
    let machine = Machine {
        date: utc_date(newest),
        ..detected
    };
    let report = render(&measurements, &machine, &source);
    fs::write(&options.output, report)?;
    println!(
        "wrote {} ({} measurements)",
        options.output.display(),
        measurements.len()
    );
    Ok(())
}

/// What one iteration of a benchmark processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throughput {
    Bytes(u64),
    Elements(u64),
    ElementsAndBytes { elements: u64, bytes: u64 },
}

impl Throughput {
    /// Bytes and elements per iteration. The throughput benches encrypt `u64` numbers, so an
    /// element is 8 bytes when only one of the two is given.
    fn bytes_and_elements(self) -> (u64, u64) {
        match self {
            Throughput::Bytes(bytes) => (bytes, bytes / 8),
            Throughput::Elements(elements) => (elements * 8, elements),
            Throughput::ElementsAndBytes { elements, bytes } => (bytes, elements),
        }
    }

    /// Bytes and elements per iteration, each only if criterion was given it.
    fn units(self) -> [Option<u64>; 2] {
        match self {
            Throughput::Bytes(bytes) => [Some(bytes), None],
            Throughput::Elements(elements) => [None, Some(elements)],
            Throughput::ElementsAndBytes { elements, bytes } => [Some(bytes), Some(elements)],
        }
    }
}

/// One benchmark's result: criterion's median time per iteration and its 95 % confidence
/// interval, in nanoseconds, and the allocations the bench counted, if it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    pub group: String,
    pub function: Option<String>,
    pub value: Option<String>,
    pub throughput: Option<Throughput>,
    pub median: f64,
    pub lower: f64,
    pub upper: f64,
    pub allocations: Option<Allocations>,
}

/// The directory of the benches' allocation counts in criterion's
/// (`riffpe_benches::ALLOCATIONS_DIR`).
const ALLOCATIONS_DIR: &str = "riffpe-allocations";

/// Allocation calls (`alloc`, `alloc_zeroed`, `realloc`) a bench counted over `operations`
/// iterations of a benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocations {
    pub operations: u64,
    pub allocations: u64,
}

impl Allocations {
    fn per_operation(self) -> f64 {
        self.allocations as f64 / self.operations as f64
    }
}

/// A benchmark's criterion id: `(group, function, value)`.
type BenchmarkId = (String, Option<String>, Option<String>);

/// One of the benches' allocation files: the benchmark's id and its count.
pub fn parse_allocations(text: &str) -> Result<(BenchmarkId, Allocations)> {
    let json: Value = serde_json::from_str(text)?;
    let text = |key: &str| json[key].as_str().map(str::to_owned);
    let number = |key: &str| json[key].as_u64().ok_or_else(|| format!("no {key}"));
    let count = Allocations {
        operations: number("operations")?,
        allocations: number("allocations")?,
    };
    if count.operations == 0 {
        return Err("no operations counted".into());
    }
    let group = text("group").ok_or("no group")?;
    Ok(((group, text("function"), text("value")), count))
}

impl Measurement {
    /// Half the width of the confidence interval: the `±` of the report.
    fn spread(&self) -> f64 {
        (self.upper - self.lower) / 2.0
    }

    fn name(&self) -> String {
        [
            Some(&self.group),
            self.function.as_ref(),
            self.value.as_ref(),
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("/")
    }
}

/// Every `new/benchmark.json` + `new/estimates.json` pair under `dir` (criterion's latest
/// results), optionally only those written since `since`, and when the newest was written.
pub fn collect(
    dir: &Path,
    since: Option<SystemTime>,
) -> Result<(Vec<Measurement>, Option<SystemTime>)> {
    let mut found = Vec::new();
    let mut newest = None;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry?.path();
            if !path.is_dir() {
                continue;
            }
            let (benchmark, estimates) = (path.join("benchmark.json"), path.join("estimates.json"));
            if path.ends_with("new") && benchmark.is_file() && estimates.is_file() {
                let written = fs::metadata(&estimates)?.modified()?;
                if since.is_none_or(|since| written >= since) {
                    newest = newest.max(Some(written));
                    let read = |file: &Path| {
                        fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))
                    };
                    let measurement = parse(&read(&benchmark)?, &read(&estimates)?)
                        .map_err(|e| format!("{}: {e}", path.display()))?;
                    found.push(measurement);
                }
            } else {
                pending.push(path);
            }
        }
    }
    found.sort_by(|a, b| natural_cmp(&a.name(), &b.name()));
    if let Ok(entries) = fs::read_dir(dir.join(ALLOCATIONS_DIR)) {
        for entry in entries {
            let path = entry?.path();
            let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let ((group, function, value), count) =
                parse_allocations(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            for m in &mut found {
                if m.group == group && m.function == function && m.value == value {
                    m.allocations = Some(count);
                }
            }
        }
    }
    Ok((found, newest))
}

/// A measurement from criterion's `benchmark.json` and `estimates.json`.
pub fn parse(benchmark: &str, estimates: &str) -> Result<Measurement> {
    let benchmark: Value = serde_json::from_str(benchmark)?;
    let estimates: Value = serde_json::from_str(estimates)?;
    let text = |key: &str| benchmark[key].as_str().map(str::to_owned);
    let median = &estimates["median"];
    let number = |value: &Value, what: &str| {
        value
            .as_f64()
            .ok_or_else(|| format!("estimates.json: no {what}"))
    };
    Ok(Measurement {
        group: text("group_id").ok_or("benchmark.json: no group_id")?,
        function: text("function_id"),
        value: text("value_str"),
        throughput: throughput(&benchmark["throughput"]),
        median: number(&median["point_estimate"], "median")?,
        lower: number(
            &median["confidence_interval"]["lower_bound"],
            "median lower bound",
        )?,
        upper: number(
            &median["confidence_interval"]["upper_bound"],
            "median upper bound",
        )?,
        allocations: None,
    })
}

/// criterion's `Throughput`, serialized by serde as `{"Bytes": n}`, `{"Elements": n}`, ….
fn throughput(value: &Value) -> Option<Throughput> {
    let (kind, amount) = value.as_object()?.iter().next()?;
    Some(match (kind.as_str(), amount.as_u64()) {
        ("Bytes" | "BytesDecimal", Some(bytes)) => Throughput::Bytes(bytes),
        ("Bits", Some(bits)) => Throughput::Bytes(bits / 8),
        ("Elements", Some(elements)) => Throughput::Elements(elements),
        ("ElementsAndBytes", None) => Throughput::ElementsAndBytes {
            elements: amount["elements"].as_u64()?,
            bytes: amount["bytes"].as_u64()?,
        },
        _ => return None,
    })
}

/// The Markdown report. `source` says where the results came from.
pub fn render(measurements: &[Measurement], machine: &Machine, source: &str) -> String {
    let mut used = vec![false; measurements.len()];
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# Benchmarks\n");
    let _ = writeln!(
        w,
        "Written by `cargo xtask bench-report` from criterion's results of {source}.\n"
    );
    let _ = writeln!(w, "| | |\n| --- | --- |");
    let _ = writeln!(w, "| CPU | {} |", machine.cpu);
    let _ = writeln!(w, "| cores | {} |", machine.cores);
    let _ = writeln!(w, "| AES backend | {} |", machine.aes_backend);
    let _ = writeln!(w, "| date | {} |", machine.date);
    let _ = writeln!(w, "| commit | {} |", machine.commit);
    let _ = writeln!(w, "| compiler | {} |\n", machine.rustc);
    let _ = writeln!(
        w,
        "Times are criterion's median per operation; `±` is half the width of its 95 % \
         confidence interval. *N/A*: not measured."
    );
    let _ = writeln!(
        w,
        "\nAllocations are counted by the benches: each bench binary runs with a counting global \
         allocator (the system's, counting `alloc`, `alloc_zeroed` and `realloc` calls), and a \
         count is the calls made during criterion's timed runs, after its first warm-up run, \
         divided by the operations run. The hot path of a message should show 0."
    );

    for (group, title) in [
        ("latency-encrypt", "Encryption time"),
        ("latency-decrypt", "Decryption time"),
    ] {
        latency_table(w, measurements, &mut used, group, title);
    }
    aes_chain_section(w, measurements, &mut used);
    throughput_table(w, measurements, &mut used);

    let rest: Vec<&Measurement> = measurements
        .iter()
        .zip(&used)
        .filter_map(|(m, used)| (!used).then_some(m))
        .collect();
    if !rest.is_empty() {
        let _ = writeln!(w, "\n## Other measurements\n");
        let _ = writeln!(
            w,
            "| benchmark | median | throughput | allocations / iteration |\n\
             | --- | ---: | ---: | ---: |"
        );
        for m in rest {
            let [mib, per_second] = m.throughput.map_or([None, None], |t| t.units());
            let rates = rates(mib.unwrap_or(0), per_second.unwrap_or(0), m.median);
            let rate = [
                mib.map(|_| format!("{} MiB/s", rates[0])),
                per_second.map(|_| format!("{} elements/s", rates[1])),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
            let _ = writeln!(
                w,
                "| {} | {} | {rate} | {} |",
                m.name(),
                time(m),
                allocations_per(m, 1)
            );
        }
    }
    out
}

/// Rows: implementations; columns: the digit counts measured (6, 9, 16 …); cells: µs.
fn latency_table(
    w: &mut String,
    measurements: &[Measurement],
    used: &mut [bool],
    group: &str,
    title: &str,
) {
    let cells: Vec<(usize, &str, &str)> = measurements
        .iter()
        .enumerate()
        .filter(|(_, m)| m.group == group)
        .filter_map(|(i, m)| Some((i, m.function.as_deref()?, m.value.as_deref()?)))
        .collect();
    if cells.is_empty() {
        let _ = writeln!(w, "\n## {title}\n\nNot measured (no `{group}` results).");
        return;
    }
    let mut rows: Vec<&str> = cells.iter().map(|&(_, row, _)| row).collect();
    rows.sort_by(|a, b| row_cmp(a, b));
    rows.dedup();
    let mut columns: Vec<&str> = cells.iter().map(|&(_, _, column)| column).collect();
    columns.sort_by(|a, b| natural_cmp(a, b));
    columns.dedup();

    let _ = writeln!(w, "\n## {title} (µs, one message)\n");
    let _ = write!(w, "| implementation |");
    for column in &columns {
        let _ = write!(w, " {} |", digits_heading(column));
    }
    let _ = write!(w, " allocations / op |\n| --- |");
    for _ in &columns {
        let _ = write!(w, " ---: |");
    }
    let _ = writeln!(w, " ---: |");
    for row in rows {
        let _ = write!(w, "| {row} |");
        // The row's allocation count in each of its columns.
        let mut counts: Vec<(&str, Option<Allocations>)> = Vec::new();
        for column in &columns {
            match cells.iter().find(|&&(_, r, c)| r == row && c == *column) {
                Some(&(i, _, _)) => {
                    used[i] = true;
                    let m = &measurements[i];
                    let _ = write!(w, " {} |", micros(m.median, m.spread()));
                    counts.push((column, m.allocations));
                }
                None => {
                    let _ = write!(w, " *N/A* |");
                }
            }
        }
        let _ = writeln!(w, " {} |", row_allocations(&counts));
    }
}

/// A latency row's allocation counts per message: one number if all its columns agree,
/// else each column's (`12 (6-digit), 14 (16-digit)`).
fn row_allocations(counts: &[(&str, Option<Allocations>)]) -> String {
    let per: Vec<Option<String>> = counts
        .iter()
        .map(|(_, count)| count.map(|c| allocation_count(c.per_operation())))
        .collect();
    if per.iter().all(Option::is_none) {
        return "*N/A*".to_owned();
    }
    if let Some(Some(first)) = per.first()
        && per.iter().all(|p| p.as_ref() == Some(first))
    {
        return first.clone();
    }
    counts
        .iter()
        .zip(&per)
        .map(|((column, _), p)| {
            let count = p.as_deref().unwrap_or("*N/A*");
            format!("{count} ({})", digits_heading(column))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `m`'s allocations per iteration divided by `share` (1: per iteration; the elements of an
/// iteration: per element), or *N/A*.
fn allocations_per(m: &Measurement, share: u64) -> String {
    match m.allocations {
        Some(count) if share > 0 => allocation_count(count.per_operation() / share as f64),
        _ => "*N/A*".to_owned(),
    }
}

/// A whole count as it is (`0`, `12`); a fraction to three significant digits, in scientific
/// notation when small (`0.500`, `7.63e-6`).
fn allocation_count(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else if x >= 0.01 {
        significant(x)
    } else {
        format!("{x:.2e}")
    }
}

/// `16` → `16-digit`; other values as they are.
fn digits_heading(value: &str) -> String {
    if value.bytes().all(|b| b.is_ascii_digit()) {
        format!("{value}-digit")
    } else {
        value.to_owned()
    }
}

/// The latency row whose 16-digit times are compared with the chained-AES limit.
const CHAIN_ROW: &str = "Riffpe n=100 b=16";

/// Riffpe's 16-digit times against the same number of chained AES blocks, Riffpe's floor.
fn aes_chain_section(w: &mut String, measurements: &[Measurement], used: &mut [bool]) {
    let _ = writeln!(w, "\n## Against the chained-AES limit\n");
    let Some(chain) = aes_chain_result(measurements, "aes_chain") else {
        let _ = writeln!(w, "Not measured (no `aes-chain` result).");
        return;
    };
    used[chain] = true;
    let limit = &measurements[chain];
    let label = limit.function.as_deref().unwrap_or_default();
    let blocks = label_number(label, "");
    let _ = write!(
        w,
        "`{label}`: AES blocks each encrypting the previous one's output, as one Riffpe(100, 8, \
         b=16) encryption must (16 digit steps of 1 + 100 blocks): {} µs",
        micros(limit.median, limit.spread())
    );
    match blocks {
        Some(blocks) => {
            let _ = writeln!(
                w,
                ", {:.2} ns an AES block.\n",
                limit.median / f64::from(blocks)
            );
        }
        None => {
            let _ = writeln!(w, ".\n");
        }
    }
    let _ = writeln!(
        w,
        "| operation | median (µs) | × the limit |\n| --- | ---: | ---: |"
    );
    // The configuration the chain is sized for, in every variant measured (constant-time …).
    for (group, op) in [
        ("latency-encrypt", "encrypt"),
        ("latency-decrypt", "decrypt"),
    ] {
        let mut rows: Vec<&Measurement> = measurements
            .iter()
            .filter(|m| {
                m.group == group
                    && m.value.as_deref() == Some("16")
                    && m.function
                        .as_deref()
                        .is_some_and(|f| f.starts_with(CHAIN_ROW))
            })
            .collect();
        rows.sort_by(|a, b| natural_cmp(&a.name(), &b.name()));
        if rows.is_empty() {
            let _ = writeln!(w, "| {CHAIN_ROW}, 16-digit {op} | *N/A* | *N/A* |");
        }
        for m in rows {
            let _ = writeln!(
                w,
                "| {}, 16-digit {op} | {} | {:.2} |",
                m.function.as_deref().unwrap_or_default(),
                micros(m.median, m.spread()),
                m.median / limit.median
            );
        }
    }
    lanes_section(w, measurements, used, limit);
}

/// The throughput input compared with the parallel-AES limit: the configuration both chains are
/// sized for.
const LANES_INPUT: &str = "Riffpe(100,8) b=16";

/// The same chains, as many at once as the backend runs (`aes_lanes N blocks xK`): the most
/// lockstep can gain over one message, and how near lockstep comes to it.
fn lanes_section(
    w: &mut String,
    measurements: &[Measurement],
    used: &mut [bool],
    chain: &Measurement,
) {
    let Some(found) = aes_chain_result(measurements, "aes_lanes") else {
        return;
    };
    used[found] = true;
    let floor = &measurements[found];
    let label = floor.function.as_deref().unwrap_or_default();
    let Some((lanes, blocks)) = chains_of(label) else {
        return;
    };
    let per_message = floor.median / f64::from(lanes);
    let _ = writeln!(
        w,
        "\n`{label}`: the same chains, {lanes} at once (the AES backend's parallel blocks, one \
         call a step): {}, {:.2} µs a message. That is {:.1}× the chained rate: the most \
         lockstep can gain over one message with this backend.\n",
        chains_rate(floor, lanes, blocks),
        per_message / 1e3,
        chain.median / per_message,
    );
    let _ = writeln!(
        w,
        "| lockstep, one core | per message (µs) | × the limit |\n| --- | ---: | ---: |"
    );
    for (group, op) in [
        ("throughput-encrypt", "encrypt"),
        ("throughput-decrypt", "decrypt"),
    ] {
        let lockstep = measurements.iter().find(|m| {
            m.group == group
                && m.function.as_deref() == Some("lockstep")
                && m.value
                    .as_deref()
                    .is_some_and(|v| v.starts_with(LANES_INPUT))
        });
        let row = match lockstep.and_then(|m| Some((m, m.throughput?.bytes_and_elements().1))) {
            Some((m, elements)) if elements > 0 => {
                let each = m.median / elements as f64;
                format!("{:.2} | {:.2}", each / 1e3, each / per_message)
            }
            _ => "*N/A* | *N/A*".to_owned(),
        };
        let _ = writeln!(w, "| {LANES_INPUT} {op} | {row} |");
    }
    raw_vaes(w, measurements, used, chain);
}

/// Raw VAES-256 rounds (`vaes256_rounds N blocks xK`, x86 only): what the AES units sustain with
/// K blocks in flight, against which the backend's `aes_lanes` rate is read.
fn raw_vaes(w: &mut String, measurements: &[Measurement], used: &mut [bool], chain: &Measurement) {
    let mut found: Vec<(u32, u32, usize)> = measurements
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let label = m.function.as_deref()?;
            if m.group != "aes-chain" || !label.starts_with("vaes256_rounds") {
                return None;
            }
            let (lanes, blocks) = chains_of(label)?;
            Some((lanes, blocks, i))
        })
        .collect();
    if found.is_empty() {
        return;
    }
    found.sort();
    let _ = writeln!(
        w,
        "\nHand-written VAES-256 rounds, the same chains with nothing else in the loop (how many \
         blocks the AES units can keep in flight, not a backend Riffpe runs):\n"
    );
    for (lanes, blocks, i) in found {
        used[i] = true;
        let m = &measurements[i];
        let _ = writeln!(
            w,
            "- {lanes} blocks at once: {}, {:.1}× the chained rate.",
            chains_rate(m, lanes, blocks),
            chain.median * f64::from(lanes) / m.median,
        );
    }
}

/// `(lanes, blocks)` of an `aes-chain` label such as `"aes_lanes 1616 blocks x64"`: `lanes`
/// chains of `blocks` blocks each. `None` unless both are there and positive.
fn chains_of(label: &str) -> Option<(u32, u32)> {
    let lanes = label_number(label, "x").filter(|&lanes| lanes > 0)?;
    let blocks = label_number(label, "").filter(|&blocks| blocks > 0)?;
    Some((lanes, blocks))
}

/// `"27.7 (±0.2) µs, 2.14 ns an AES block"`: `m` timed `lanes` chains of `blocks` blocks.
fn chains_rate(m: &Measurement, lanes: u32, blocks: u32) -> String {
    format!(
        "{} µs, {:.2} ns an AES block",
        micros(m.median, m.spread()),
        m.median / f64::from(blocks * lanes)
    )
}

/// The `aes-chain` group's result whose function starts with `prefix`.
fn aes_chain_result(measurements: &[Measurement], prefix: &str) -> Option<usize> {
    measurements.iter().position(|m| {
        m.group == "aes-chain" && m.function.as_deref().is_some_and(|f| f.starts_with(prefix))
    })
}

/// The first word of `label` that is `prefix` and a number: `"aes_lanes 1616 blocks x64"`
/// gives 1616 for `""` and 64 for `"x"`.
fn label_number(label: &str, prefix: &str) -> Option<u32> {
    label
        .split_whitespace()
        .find_map(|word| word.strip_prefix(prefix)?.parse().ok())
}

/// Many messages at once: one row per operation, input size and mode.
fn throughput_table(w: &mut String, measurements: &[Measurement], used: &mut [bool]) {
    let mut rows: Vec<usize> = (0..measurements.len())
        .filter(|&i| {
            let m = &measurements[i];
            m.group.starts_with("throughput") && m.function.is_some() && m.throughput.is_some()
        })
        .collect();
    let _ = writeln!(w, "\n## Throughput (many messages)\n");
    if rows.is_empty() {
        let _ = writeln!(w, "Not measured (no `throughput-*` results).");
        return;
    }
    let key = |m: &Measurement| {
        let mode = m.function.as_deref().unwrap_or_default();
        let rank = ["single", "lockstep", "parallel"]
            .iter()
            .position(|&known| known == mode)
            .unwrap_or(3);
        (m.group.clone(), m.value.clone().unwrap_or_default(), rank)
    };
    rows.sort_by(|&a, &b| {
        let (ga, va, ra) = key(&measurements[a]);
        let (gb, vb, rb) = key(&measurements[b]);
        ga.cmp(&gb)
            .then_with(|| natural_cmp(&va, &vb))
            .then(ra.cmp(&rb))
    });
    let _ = writeln!(
        w,
        "Arrays of numbers as `u64`, 8 bytes each; the input names the configuration and the \
         array's size. `single`: one message after another; \
         `lockstep`: several messages advance together to fill the AES pipeline (one core); \
         `parallel`: lockstep over all cores. Allocations are counted per call (one call \
         encrypts or decrypts the whole array) and per element (the call's count over the \
         array's numbers).\n"
    );
    let _ = writeln!(
        w,
        "| operation | input | mode | time | MiB/s | elements/s | × single | allocations / call \
         | allocations / element |\n\
         | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for &i in &rows {
        used[i] = true;
        let m = &measurements[i];
        let op = m
            .group
            .trim_start_matches("throughput")
            .trim_start_matches('-');
        let op = if op.is_empty() { "encrypt" } else { op };
        let (bytes, elements) = m.throughput.map_or((0, 0), Throughput::bytes_and_elements);
        let [mib, per_second] = rates(bytes, elements, m.median);
        let single = measurements.iter().find(|s| {
            s.group == m.group && s.value == m.value && s.function.as_deref() == Some("single")
        });
        let speedup = match single {
            Some(s) => format!("{:.2}", s.median / m.median),
            None => single_elsewhere(measurements, m).unwrap_or_else(|| "*N/A*".to_owned()),
        };
        let _ = writeln!(
            w,
            "| {op} | {} | {} | {} | {mib} | {per_second} | {speedup} | {} | {} |",
            m.value.as_deref().unwrap_or("—"),
            m.function.as_deref().unwrap_or_default(),
            time(m),
            allocations_per(m, 1),
            allocations_per(m, elements),
        );
    }
}

/// `m` against the single loop over the same configuration at another array size, per
/// element (the benches run the single loop at 1 MiB only; its cost per number does not depend
/// on the size): "5.10 (single at 1MiB)".
fn single_elsewhere(measurements: &[Measurement], m: &Measurement) -> Option<String> {
    let (config, _) = m.value.as_deref()?.rsplit_once(' ')?;
    let per_element = |x: &Measurement| {
        let (_, elements) = x.throughput?.bytes_and_elements();
        (elements > 0).then(|| x.median / elements as f64)
    };
    let single = measurements.iter().find(|s| {
        s.group == m.group
            && s.function.as_deref() == Some("single")
            && s.value
                .as_deref()
                .and_then(|v| v.rsplit_once(' '))
                .map(|(c, _)| c)
                == Some(config)
    })?;
    let size = single.value.as_deref()?.rsplit_once(' ')?.1;
    let ratio = per_element(single)? / per_element(m)?;
    Some(format!("{ratio:.2} (single at {size})"))
}

/// `MiB/s` and `elements/s` for `bytes` and `elements` per iteration of `nanos`.
fn rates(bytes: u64, elements: u64, nanos: f64) -> [String; 2] {
    let seconds = nanos / 1e9;
    [
        format!("{:.1}", bytes as f64 / f64::from(1u32 << 20) / seconds),
        si(elements as f64 / seconds),
    ]
}

/// `12 300` → `12.3 k`.
fn si(x: f64) -> String {
    let (value, prefix) = match x {
        x if x >= 1e9 => (x / 1e9, " G"),
        x if x >= 1e6 => (x / 1e6, " M"),
        x if x >= 1e3 => (x / 1e3, " k"),
        x => (x, ""),
    };
    format!("{}{prefix}", significant(value))
}

/// Three significant digits (at least the units).
fn significant(x: f64) -> String {
    let decimals = match x.abs() {
        x if x >= 100.0 => 0,
        x if x >= 10.0 => 1,
        x if x >= 1.0 => 2,
        _ => 3,
    };
    format!("{x:.decimals$}")
}

/// `median (±spread)` in µs.
fn micros(nanos: f64, spread: f64) -> String {
    with_spread(nanos / 1e3, spread / 1e3)
}

/// A time with its unit: `15.2 ns (±0.1)`, `3.41 ms (±0.02)`.
fn time(m: &Measurement) -> String {
    let (scale, unit) = match m.median {
        t if t >= 1e9 => (1e9, "s"),
        t if t >= 1e6 => (1e6, "ms"),
        t if t >= 1e3 => (1e3, "µs"),
        _ => (1.0, "ns"),
    };
    let [median, spread] = split_spread(m.median / scale, m.spread() / scale);
    format!("{median} {unit} (±{spread})")
}

fn with_spread(value: f64, spread: f64) -> String {
    let [value, spread] = split_spread(value, spread);
    format!("{value} (±{spread})")
}

/// The value to three significant digits; the spread with the value's decimals, or more (up
/// to three) so that it does not round to zero.
fn split_spread(value: f64, spread: f64) -> [String; 2] {
    let value = significant(value);
    let mut decimals = value.split_once('.').map_or(0, |(_, d)| d.len());
    while decimals < 3 && spread > 0.0 && spread * 10f64.powi(decimals as i32) < 0.95 {
        decimals += 1;
    }
    [value, format!("{spread:.decimals$}")]
}

/// Riffpe's own rows first, then the others (FF1 …), each in natural order.
fn row_cmp(a: &str, b: &str) -> Ordering {
    let ours = |s: &str| !s.starts_with("Riffpe");
    ours(a).cmp(&ours(b)).then_with(|| natural_cmp(a, b))
}

/// Compares runs of digits as numbers: `n=10` < `n=100`, `6` < `16`, `1MiB` < `16MiB`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        match (a.chars().next(), b.chars().next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let split = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
                let (na, ra) = a.split_at(split(a));
                let (nb, rb) = b.split_at(split(b));
                let (ta, tb) = (na.trim_start_matches('0'), nb.trim_start_matches('0'));
                let order = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb));
                if order != Ordering::Equal {
                    return order;
                }
                (a, b) = (ra, rb);
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(&y);
                }
                (a, b) = (&a[x.len_utf8()..], &b[y.len_utf8()..]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::env;

    /// A criterion tree as `cargo bench` leaves it, in a fresh temporary directory.
    struct FakeCriterion(PathBuf);

    impl FakeCriterion {
        fn new(name: &str) -> Self {
            let dir = env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            FakeCriterion(dir)
        }

        /// A benchmark with median `median` ns and confidence interval `median ± spread`.
        /// Writes one result; returns its `estimates.json`.
        fn add(
            &self,
            id: [Option<&str>; 3],
            throughput: &str,
            median: f64,
            spread: f64,
        ) -> PathBuf {
            let [group, function, value] = id;
            let dir = [group, function, value]
                .into_iter()
                .flatten()
                .fold(self.0.clone(), |dir, part| {
                    dir.join(part.replace(['/', ':'], "_"))
                })
                .join("new");
            fs::create_dir_all(&dir).unwrap();
            let json = |s: Option<&str>| s.map_or("null".to_owned(), |s| format!("{s:?}"));
            fs::write(
                dir.join("benchmark.json"),
                format!(
                    r#"{{"group_id":{},"function_id":{},"value_str":{},"throughput":{throughput},"full_id":"x","directory_name":"x","title":"x"}}"#,
                    json(group),
                    json(function),
                    json(value)
                ),
            )
            .unwrap();
            let estimate = |point: f64| {
                format!(
                    r#"{{"confidence_interval":{{"confidence_level":0.95,"lower_bound":{},"upper_bound":{}}},"point_estimate":{point},"standard_error":1.0}}"#,
                    point - spread,
                    point + spread
                )
            };
            let estimates = dir.join("estimates.json");
            fs::write(
                &estimates,
                format!(
                    r#"{{"mean":{},"median":{},"median_abs_dev":{},"slope":null,"std_dev":{}}}"#,
                    estimate(median * 1.01),
                    estimate(median),
                    estimate(spread),
                    estimate(spread)
                ),
            )
            .unwrap();
            estimates
        }
    }

    impl FakeCriterion {
        /// The benches' allocation count for a benchmark, in the file the benches write
        /// (`name` is the file's name).
        fn count(&self, name: &str, id: [Option<&str>; 3], operations: u64, allocations: u64) {
            let dir = self.0.join(ALLOCATIONS_DIR);
            fs::create_dir_all(&dir).unwrap();
            let json = |s: Option<&str>| s.map_or("null".to_owned(), |s| format!("{s:?}"));
            let [group, function, value] = id.map(json);
            fs::write(
                dir.join(format!("{name}.json")),
                format!(
                    "{{\"group\":{group},\"function\":{function},\"value\":{value},\
                     \"operations\":{operations},\"allocations\":{allocations}}}\n"
                ),
            )
            .unwrap();
        }
    }

    impl Drop for FakeCriterion {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn machine() -> Machine {
        Machine {
            cpu: "Arm Cortex-A72".into(),
            cores: 4,
            aes_backend: "ARMv8 crypto extensions".into(),
            date: "2026-05-01 13:17 UTC".into(),
            commit: "abc1234".into(),
            rustc: "rustc 1.95.0".into(),
        }
    }

    #[test]
    fn reads_criterion_results() {
        let tree = FakeCriterion::new("read");
        tree.add(
            [Some("latency-encrypt"), Some("Riffpe n=10 b=18"), Some("6")],
            "null",
            6_445.9,
            20.0,
        );
        let parallel = tree.add(
            [Some("throughput-encrypt"), Some("parallel"), Some("1MiB")],
            r#"{"Bytes":1048576}"#,
            2.5e8,
            1e6,
        );
        // A report directory and a baseline are not results.
        fs::create_dir_all(tree.0.join("report")).unwrap();
        tree.count(
            "a",
            [Some("latency-encrypt"), Some("Riffpe n=10 b=18"), Some("6")],
            1000,
            0,
        );
        // Counts of other benchmarks (another value, no result) go nowhere.
        tree.count(
            "b",
            [Some("throughput-encrypt"), Some("parallel"), Some("16MiB")],
            10,
            30,
        );
        tree.count("c", [Some("other"), Some("x"), None], 10, 30);
        let found = collect(&tree.0, None).unwrap().0;
        assert_eq!(
            found,
            [
                Measurement {
                    group: "latency-encrypt".into(),
                    function: Some("Riffpe n=10 b=18".into()),
                    value: Some("6".into()),
                    throughput: None,
                    median: 6_445.9,
                    lower: 6_425.9,
                    upper: 6_465.9,
                    allocations: Some(Allocations {
                        operations: 1000,
                        allocations: 0,
                    }),
                },
                Measurement {
                    group: "throughput-encrypt".into(),
                    function: Some("parallel".into()),
                    value: Some("1MiB".into()),
                    throughput: Some(Throughput::Bytes(1 << 20)),
                    median: 2.5e8,
                    lower: 2.49e8,
                    upper: 2.51e8,
                    allocations: None,
                },
            ]
        );
        // The newest result's time is when the benches ran, whenever the report is made.
        let ran = SystemTime::now() + Duration::from_secs(60);
        fs::File::options()
            .write(true)
            .open(&parallel)
            .unwrap()
            .set_modified(ran)
            .unwrap();
        assert_eq!(collect(&tree.0, None).unwrap().1, Some(ran));
        let later = SystemTime::now() + Duration::from_secs(3600);
        let (found, newest) = collect(&tree.0, Some(later)).unwrap();
        assert!(found.is_empty());
        assert_eq!(newest, None);
    }

    #[test]
    fn writes_every_section() {
        let tree = FakeCriterion::new("render");
        for (op, scale) in [("latency-encrypt", 1.0), ("latency-decrypt", 1.1)] {
            tree.add(
                [Some(op), Some("Riffpe n=100 b=16"), Some("16")],
                "null",
                30_000.0 * scale,
                200.0,
            );
            tree.add(
                [Some(op), Some("Riffpe n=10 b=18"), Some("6")],
                "null",
                6_445.9 * scale,
                20.0,
            );
            tree.add(
                [
                    Some(op),
                    Some("Riffpe n=100 b=16 constant-time"),
                    Some("16"),
                ],
                "null",
                50_000.0 * scale,
                200.0,
            );
            tree.add(
                [Some(op), Some("FF1 radix 10"), Some("9")],
                "null",
                1_234.5 * scale,
                5.0,
            );
        }
        tree.add(
            [Some("aes-chain"), Some("aes_chain 1616 blocks"), None],
            "null",
            25_000.0,
            50.0,
        );
        tree.add(
            [Some("aes-chain"), Some("aes_lanes 1616 blocks x8"), None],
            "null",
            40_000.0,
            50.0,
        );
        tree.add(
            [
                Some("aes-chain"),
                Some("vaes256_rounds 1616 blocks x16"),
                None,
            ],
            "null",
            20_000.0,
            50.0,
        );
        tree.add(
            [
                Some("throughput-encrypt"),
                Some("lockstep"),
                Some("Riffpe(100,8) b=16 1MiB"),
            ],
            r#"{"Elements":1000}"#,
            10e6,
            1e5,
        );
        // Larger sizes run the batch modes only: compared per element with the 1 MiB single.
        for (mode, value, elements, nanos) in [
            ("single", "Riffpe(10,6) b=18 1MiB", 1000, 40e6),
            ("lockstep", "Riffpe(10,6) b=18 16MiB", 16000, 128e6),
        ] {
            tree.add(
                [Some("throughput-decrypt"), Some(mode), Some(value)],
                &format!(r#"{{"Elements":{elements}}}"#),
                nanos,
                1e5,
            );
        }
        for (mode, nanos) in [("single", 8e8), ("lockstep", 2e8), ("parallel", 1e8)] {
            tree.add(
                [Some("throughput-encrypt"), Some(mode), Some("1MiB")],
                r#"{"Bytes":1048576}"#,
                nanos,
                1e6,
            );
        }
        tree.add(
            [Some("setup"), Some("Riffpe::new"), None],
            r#"{"Elements":1}"#,
            812.0,
            3.0,
        );
        // Allocations: none on Riffpe's paths, some for FF1 (different per digit count, and
        // not counted for one), one per call for the single loop, a fraction per call in
        // parallel.
        let encrypt = Some("latency-encrypt");
        for (function, value, allocations) in [
            ("Riffpe n=10 b=18", "6", 0),
            ("Riffpe n=100 b=16", "16", 0),
            ("FF1 radix 10", "6", 18_000),
            ("FF1 radix 10", "9", 21_000),
        ] {
            tree.count(
                &format!("{function} {value}"),
                [encrypt, Some(function), Some(value)],
                1000,
                allocations,
            );
        }
        tree.add(
            [encrypt, Some("FF1 radix 10"), Some("6")],
            "null",
            1_000.0,
            5.0,
        );
        tree.add(
            [encrypt, Some("FF1 radix 10"), Some("16")],
            "null",
            2_000.0,
            5.0,
        );
        for (mode, allocations) in [("single", 10), ("lockstep", 0), ("parallel", 35)] {
            tree.count(
                mode,
                [Some("throughput-encrypt"), Some(mode), Some("1MiB")],
                10,
                allocations,
            );
        }
        tree.count(
            "setup",
            [Some("setup"), Some("Riffpe::new"), None],
            100,
            250,
        );
        let report = render(
            &collect(&tree.0, None).unwrap().0,
            &machine(),
            "`cargo bench`",
        );
        println!("{report}");

        for line in [
            "| CPU | Arm Cortex-A72 |",
            "| cores | 4 |",
            "| AES backend | ARMv8 crypto extensions |",
            "| commit | abc1234 |",
            "## Encryption time (µs, one message)",
            "| implementation | 6-digit | 9-digit | 16-digit | allocations / op |",
            "| --- | ---: | ---: | ---: | ---: |",
            "| Riffpe n=10 b=18 | 6.45 (±0.02) | *N/A* | *N/A* | 0 |",
            "| Riffpe n=100 b=16 | *N/A* | *N/A* | 30.0 (±0.2) | 0 |",
            "| Riffpe n=100 b=16 constant-time | *N/A* | *N/A* | 50.0 (±0.2) | *N/A* |",
            "| FF1 radix 10 | 1.00 (±0.005) | 1.23 (±0.005) | 2.00 (±0.005) \
             | 18 (6-digit), 21 (9-digit), *N/A* (16-digit) |",
            "| FF1 radix 10 | *N/A* | 1.36 (±0.005) | *N/A* | *N/A* |",
            "| Riffpe n=100 b=16 | *N/A* | *N/A* | 33.0 (±0.2) | *N/A* |",
            "The hot path of a message should show 0.",
            "| Riffpe n=100 b=16, 16-digit encrypt | 30.0 (±0.2) | 1.20 |",
            "| Riffpe n=100 b=16, 16-digit decrypt | 33.0 (±0.2) | 1.32 |",
            "| Riffpe n=100 b=16 constant-time, 16-digit encrypt | 50.0 (±0.2) | 2.00 |",
            "| operation | input | mode | time | MiB/s | elements/s | × single \
             | allocations / call | allocations / element |",
            "| encrypt | 1MiB | single | 800 ms (±1) | 1.2 | 164 k | 1.00 | 1 | 7.63e-6 |",
            "| encrypt | 1MiB | lockstep | 200 ms (±1) | 5.0 | 655 k | 4.00 | 0 | 0 |",
            "| encrypt | 1MiB | parallel | 100 ms (±1) | 10.0 | 1.31 M | 8.00 | 3.50 | 2.67e-5 |",
            "| encrypt | Riffpe(100,8) b=16 1MiB | lockstep | 10.0 ms (±0.1) | 0.8 | 100 k | *N/A* \
             | *N/A* | *N/A* |",
            "| setup/Riffpe::new | 812 ns (±3) | 1.23 M elements/s | 2.50 |",
            "| decrypt | Riffpe(10,6) b=18 16MiB | lockstep | 128 ms (±0.1) | 1.0 | 125 k \
             | 5.00 (single at 1MiB) |",
        ] {
            assert!(report.contains(line), "missing {line:?} in:\n{report}");
        }
        assert!(report.contains("25.0 (±0.05) µs, 15.47 ns an AES block."));
        // 8 chains of 1616 blocks in 40 µs: 5 µs a message, 5× the chained rate; lockstep
        // encrypts a message in 10 µs, twice that floor.
        assert!(report.contains("40.0 (±0.05) µs, 3.09 ns an AES block, 5.00 µs a message. That is 5.0× the chained rate"));
        // 16 raw VAES chains of 1616 blocks in 20 µs: 1.25 µs a message, 20× the chained rate.
        assert!(report.contains(
            "- 16 blocks at once: 20.0 (±0.05) µs, 0.77 ns an AES block, 20.0× the chained rate."
        ));
        assert!(
            !report.contains("aes-chain/vaes256_rounds"),
            "listed as unused"
        );
        assert!(report.contains("| Riffpe(100,8) b=16 encrypt | 10.00 | 2.00 |"));
        assert!(report.contains("| Riffpe(100,8) b=16 decrypt | *N/A* | *N/A* |"));
        // Riffpe rows before the others, digit columns in numeric order.
        let encrypt = &report[report.find("## Encryption").unwrap()..];
        assert!(encrypt.find("n=10 b=18").unwrap() < encrypt.find("n=100 b=16").unwrap());
        assert!(encrypt.find("n=100 b=16").unwrap() < encrypt.find("FF1").unwrap());
    }

    #[test]
    fn missing_groups_are_said_to_be_missing() {
        let only = Measurement {
            group: "other".into(),
            function: None,
            value: Some("x".into()),
            throughput: None,
            median: 1.5,
            lower: 1.0,
            upper: 2.0,
            allocations: None,
        };
        let report = render(&[only], &machine(), "`cargo bench`");
        assert!(report.contains("Not measured (no `latency-encrypt` results)."));
        assert!(report.contains("Not measured (no `aes-chain` result)."));
        assert!(report.contains("Not measured (no `throughput-*` results)."));
        assert!(report.contains("| other/x | 1.50 ns (±0.50) |  | *N/A* |"));
    }

    #[test]
    fn allocation_files_are_checked() {
        let (id, count) = parse_allocations(
            r#"{"group":"g","function":"f","value":null,"operations":4,"allocations":2}"#,
        )
        .unwrap();
        assert_eq!(id, ("g".to_owned(), Some("f".to_owned()), None));
        assert_eq!(count.per_operation(), 0.5);
        for bad in [
            r#"{"group":"g","function":"f","value":null,"operations":0,"allocations":0}"#,
            r#"{"group":"g","function":"f","value":null,"operations":4}"#,
            r#"{"function":"f","value":null,"operations":4,"allocations":2}"#,
            r#"{"group":"g","#,
        ] {
            assert!(parse_allocations(bad).is_err(), "accepted {bad}");
        }
        assert_eq!(allocation_count(0.0), "0");
        assert_eq!(allocation_count(58.0), "58");
        assert_eq!(allocation_count(51.393), "51.4");
        assert_eq!(allocation_count(0.5), "0.500");
        assert_eq!(allocation_count(3.0 / 131_072.0), "2.29e-5");
    }

    #[test]
    fn spreads_do_not_round_to_zero() {
        assert_eq!(micros(21_212.0, 30.0), "21.2 (±0.03)");
        assert_eq!(micros(21_212.0, 160.0), "21.2 (±0.2)");
        assert_eq!(micros(212_120.0, 1.0), "212 (±0.001)");
        assert_eq!(micros(6_445.9, 0.0), "6.45 (±0.00)");
    }

    #[test]
    fn numbers_sort_naturally() {
        let mut values = [
            "16",
            "6",
            "9",
            "Riffpe n=100",
            "Riffpe n=10",
            "16MiB",
            "1MiB",
        ];
        values.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            values,
            [
                "1MiB",
                "6",
                "9",
                "16",
                "16MiB",
                "Riffpe n=10",
                "Riffpe n=100"
            ]
        );
    }
}
