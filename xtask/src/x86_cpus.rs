//! `cargo xtask x86-cpus`: the core's tests on x86-64 CPUs other than the host, under
//! `qemu-x86_64 -cpu MODEL`, so that the AES backends and selection kernels the host does not
//! pick still run: AES-NI without AVX (SSE2 kernels), AES-NI with AVX2 but no VAES (the AVX2
//! group kernels on riffpe's own AES-NI), and riffpe's own VAES-256 (which a host with
//! AVX-512 never runs: there riffpe's own VAES-512 does). A model is skipped where the host
//! runs its backend and kernels itself; the others' test binaries share the cores, one queue
//! for all models. qemu's TCG has no AVX-512, so the AVX-512 kernels and riffpe's VAES-512 run
//! on an emulated Tiger Lake under Bochs instead (`bochs`), with fewer tests. A CPU without
//! AES-NI is left out (the software AES under emulation took 11 minutes for the vectors, unit
//! and property tests).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::shell::{self, Result, TestCounts, cargo, run_tee_as};
use crate::{bochs, cross, workspace};

/// The package whose tests run on each model: AES backends, kernels and lockstep live there.
const PACKAGE_MANIFEST: &str = "crates/riffpe/Cargo.toml";

/// Left out under emulation, as the host runs them: the exhaustive bijection check (pure
/// permutation logic, also left out by `cross-test`), the comparison with the plain
/// reference on random parameters, and `find_best_bases` on random sizes (arithmetic the
/// same on every CPU; its RiffpeX round trips with radices in the thousands are slow under
/// AVX2 emulation). The vectors (RiffpeX among them), on every model but Haswell (whose one
/// message runs as on Westmere), and `lockstep_equals_one_at_a_time` on each model still hold
/// the engine to the reference's outputs, one message and in lockstep.
const SKIPPED_TESTS: [&str; 3] = [
    "exhaustive_bijection_on_small_domains",
    "fast_path_equals_plain_reference",
    "find_best_bases_gives_a_riffpex",
];

/// The CPU features that decide which AES backend and kernels run.
struct Features {
    aes: bool,
    avx2: bool,
    vaes: bool,
    avx512f: bool,
}

impl Features {
    /// The host's, or none off x86-64.
    fn host() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            Features {
                aes: has!("aes"),
                avx2: has!("avx2"),
                vaes: has!("vaes"),
                avx512f: has!("avx512f"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Features {
            aes: false,
            avx2: false,
            vaes: false,
            avx512f: false,
        }
    }
}

/// A qemu CPU model, the AES backend `aes_backend` must report on it, the test binaries
/// another model already runs on the same backend, and whether a host with given features
/// runs the same backend and kernels itself (emulating the model then adds nothing).
struct Model {
    name: &'static str,
    backend: &'static str,
    what: &'static str,
    skipped_binaries: &'static [&'static str],
    native: fn(&Features) -> bool,
}

const MODELS: [Model; 3] = [
    Model {
        name: "Westmere",
        backend: "AES-NI (riffpe's own), 64 blocks at once",
        what: "AES-NI and SSE4.2, no AVX: SSE2 constant-time kernel, lane by lane fast",
        skipped_binaries: &[],
        native: |cpu| cpu.aes && !cpu.avx2,
    },
    Model {
        name: "Haswell-noTSX",
        backend: "AES-NI (riffpe's own), 64 blocks at once",
        what: "AES-NI and AVX2, no VAES: AVX2 group kernels",
        // Westmere runs the tweak tests on the same AES-NI backend and lane count, and the same
        // tests ran several times faster there under qemu; the tweak paths do not depend on the
        // selection kernel. The vectors go one message at a time, which runs here just as on
        // Westmere: a chain of single blocks on riffpe's own AES-NI, and the 128-bit
        // (SSE2) selection of a CPU without AVX-512. What only this model runs, the AVX2 group
        // kernels on the AES-NI lanes, the lockstep properties and `wide_backend` hold to one
        // message at a time.
        skipped_binaries: &["tweaks", "vectors"],
        native: |cpu| cpu.aes && cpu.avx2 && !cpu.vaes && !cpu.avx512f,
    },
    Model {
        name: "max",
        backend: "VAES-256 (AVX2, riffpe's own), 16 blocks at once",
        what: "VAES and AVX2, no AVX-512 (TCG has none): riffpe's VAES-256 backend",
        skipped_binaries: &[],
        native: |cpu| cpu.vaes && cpu.avx2 && !cpu.avx512f,
    },
];

/// Executables of the last `cargo test`/`cargo build` with `args`, as `(target name,
/// manifest path, path)`. The workspace is built as the test step builds it, so nothing is
/// rebuilt (a single package would resolve other features and rebuild the core).
fn executables(args: &[&str]) -> Result<Vec<(String, String, PathBuf)>> {
    let json = shell::read(cargo().args(args).arg("--message-format=json"))?;
    let mut found = Vec::new();
    for line in json.lines() {
        let message: Value = serde_json::from_str(line)?;
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        if let (Some(name), Some(manifest), Some(path)) = (
            message["target"]["name"].as_str(),
            message["manifest_path"].as_str(),
            message["executable"].as_str(),
        ) {
            found.push((name.to_owned(), manifest.to_owned(), PathBuf::from(path)));
        }
    }
    Ok(found)
}

/// The core's test executables, as `(target name, path)`, and the `aes_backend` probe, as the
/// test and examples steps build them: nothing is rebuilt, and the test profile is optimised.
struct Built {
    tests: Vec<(String, PathBuf)>,
    probe: PathBuf,
}

impl Built {
    fn find() -> Result<Self> {
        let tests: Vec<(String, PathBuf)> = executables(&["test", "--workspace", "--no-run"])?
            .into_iter()
            .filter(|(_, manifest, _)| manifest.ends_with(PACKAGE_MANIFEST))
            .map(|(name, _, path)| (name, path))
            .collect();
        if tests.is_empty() {
            return Err(format!("no test executables of {PACKAGE_MANIFEST}").into());
        }
        let probe = executables(&["build", "--workspace", "--examples"])?
            .into_iter()
            .find(|(name, _, _)| name == "aes_backend")
            .map(|(_, _, path)| path)
            .ok_or("no aes_backend example was built")?;
        Ok(Built { tests, probe })
    }

    /// The test executable `name` of the core.
    fn test(&self, name: &str) -> Result<&PathBuf> {
        self.tests
            .iter()
            .find(|(target, _)| target == name)
            .map(|(_, path)| path)
            .ok_or_else(|| format!("no test executable `{name}` in {PACKAGE_MANIFEST}").into())
    }
}

/// Every model, or those named in `only` (`Westmere`, `Haswell-noTSX`, `max`, `tigerlake`).
pub fn x86_cpus(only: &[String]) -> Result {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        println!("skipped: the host is not x86-64 Linux");
        return Ok(());
    }
    let known = || MODELS.iter().map(|model| model.name).chain([bochs::MODEL]);
    if let Some(unknown) = only
        .iter()
        .find(|name| !known().any(|model| model == *name))
    {
        let models: Vec<&str> = known().collect();
        return Err(format!(
            "unknown model `{unknown}`; the models are {}",
            models.join(", ")
        )
        .into());
    }
    let chosen = |name: &str| only.is_empty() || only.iter().any(|model| model == name);
    let host = Features::host();
    let built = Built::find()?;
    let models: Vec<&Model> = MODELS.iter().filter(|model| chosen(model.name)).collect();
    if !models.is_empty() {
        qemu_models(&models, &host, &built)?;
    }
    if chosen(bochs::MODEL) {
        tiger_lake(&host, &built)?;
    }
    Ok(())
}

fn qemu_models(models: &[&Model], host: &Features, built: &Built) -> Result {
    cross::install_qemu("qemu-x86_64")?;
    let version = shell::read(Command::new("qemu-x86_64").arg("--version"))?;
    println!("qemu: {}", version.lines().next().unwrap_or("?"));

    // Where cargo would run them: the package's directory.
    let package = workspace::root().join(PACKAGE_MANIFEST);
    let package = package.parent().unwrap_or(workspace::root());

    let mut emulated = Vec::new();
    for model in models {
        println!("\n-- {} ({})", model.name, model.what);
        if (model.native)(host) {
            println!("skipped: the host runs this backend and these kernels natively");
        } else {
            emulated.push(*model);
        }
    }
    for model in &emulated {
        probe(model, built)?;
    }
    // Every model's test binaries as one queue, the slowest first, on a worker a core: the
    // models' runs end at about the same time, and no core waits while another model's long
    // tests run. Among a binary's runs the last model first: `max`, whose AVX2 and VAES
    // emulation is the slowest.
    let mut jobs: Vec<(usize, &str, &PathBuf)> = Vec::new();
    for (name, test) in &built.tests {
        for (m, model) in emulated.iter().enumerate().rev() {
            if model.skipped_binaries.contains(&name.as_str()) {
                println!("[{}] {name}: left to another model", model.name);
            } else {
                jobs.push((m, name, test));
            }
        }
    }
    let rank = |name: &str| {
        SLOWEST_BINARIES
            .iter()
            .position(|slow| *slow == name)
            .unwrap_or(SLOWEST_BINARIES.len())
    };
    jobs.sort_by_key(|&(_, name, _)| rank(name));
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    let outputs = shell::on_workers(&jobs, workers, |_, &(m, _, test)| {
        emulate(emulated[m], test, package)
    });
    let (mut printed, mut errors) = (vec![String::new(); emulated.len()], Vec::new());
    for (&(m, name, _), output) in jobs.iter().zip(outputs) {
        match output {
            Ok(output) => printed[m] += &output,
            Err(error) => errors.push(format!("{} ({name}): {error}", emulated[m].name)),
        }
    }
    for (model, printed) in emulated.iter().zip(&printed) {
        println!("{}: {}", model.name, TestCounts::parse(printed));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n").into())
    }
}

/// The core's test binaries that take longest under emulation, slowest first; the others
/// follow in the order cargo built them.
const SLOWEST_BINARIES: [&str; 5] = ["vectors", "properties", "tweaks", "wide_backend", "riffpe"];

/// `qemu-x86_64 -cpu` `model`.
fn qemu(model: &Model) -> Command {
    let mut command = Command::new("qemu-x86_64");
    command.args(["-cpu", model.name]);
    command
}

/// The probe under `model`: an error unless it reports the model's AES backend.
fn probe(model: &Model, built: &Built) -> Result {
    let reported = run_tee_as(qemu(model).arg(&built.probe), &label(model))?;
    if reported.contains(model.backend) {
        Ok(())
    } else {
        Err(format!(
            "on {} the AES backend should be \"{}\"; aes_backend reported:\n{reported}",
            model.name, model.backend
        )
        .into())
    }
}

/// What each line of `model`'s output is shown after.
fn label(model: &Model) -> String {
    format!("[{}] ", model.name)
}

/// The test binary `test` under `model`, each line shown after the model's name; what it
/// printed.
fn emulate(model: &Model, test: &Path, package: &Path) -> Result<String> {
    let mut command = qemu(model);
    command
        .arg(test)
        .current_dir(package)
        .env("PROPTEST_CASES", cross::EMULATED_PROPTEST_CASES);
    for skipped in SKIPPED_TESTS {
        command.args(["--skip", skipped]);
    }
    run_tee_as(&mut command, &label(model))
}

/// The backend riffpe must pick on the emulated Tiger Lake (which has AVX-512 VBMI).
const TIGER_LAKE_BACKEND: &str = "VAES-512 (AVX-512, riffpe's own), 64 blocks at once";

/// The test binaries each Bochs guest runs, with their arguments. Bochs runs some tens of
/// millions of instructions a second (a test binary takes minutes), so two guests run side by
/// side and the tests are those that hold the AVX-512 kernels and the 64 lanes of VAES-512 to
/// the portable paths and the reference: riffpe's VAES-512 against the `aes` crate and FIPS-197,
/// the group kernels at 64 lanes against a plain sort (the unit tests of
/// `select::tests::group`), every way of giving the cipher, lockstep included, against the
/// reference's token (`fpe::tests`), and lockstep groups of 64 against the reference around the
/// group kernels' largest radix and in constant time against fast (`properties`). Left to hosts
/// with AVX-512, as the slowest under Bochs: the plane searches' two tests of keys sharing
/// leading octets, and `wide_backend`'s full groups of 64 at radices 2 to 5000 (it still runs
/// on every host with that host's kernels). The other unit tests run no AVX-512 code (one
/// lane's selection, constant-time ranks, arithmetic, riffpe's VAES-256), and one message's
/// paths are those of AVX2 CPUs: the host and the qemu models run them. The guests are split
/// so they take about as long.
const TIGER_LAKE_GUESTS: [&[(&str, &[&str])]; 2] = [
    &[(
        "riffpe",
        &[
            "aes_backend::vaes512::",
            "select::tests::group::",
            "fpe::tests::",
            "--skip",
            "fast_plane_search_picks_among_keys_that_share_the_first_octet",
            "--skip",
            "plane_search_ranks_the_keys_that_share_two_octets",
            "--skip",
            PLANE_RANKING_TEST,
        ],
    )],
    &[
        (
            "properties",
            &[
                "--exact",
                "fast_lockstep_matches_the_reference_around_radix_256",
                "constant_time_selection_equals_fast",
            ],
        ),
        ("riffpe", &[PLANE_RANKING_TEST]),
    ],
];

/// The slowest unit test the first guest would run: the second runs it instead.
const PLANE_RANKING_TEST: &str =
    "select::tests::group::plane_ranking_finds_a_key_of_all_ones_among_those_gathered";

/// The core's tests on Bochs' Tiger Lake, unless the host has AVX-512 and VAES itself.
fn tiger_lake(host: &Features, built: &Built) -> Result {
    println!(
        "\n-- {} under Bochs (AVX-512 and VAES-512: the AVX-512 kernels, 64 lanes)",
        bochs::MODEL
    );
    if host.avx512f && host.vaes {
        println!("skipped: the host runs this backend and these kernels natively");
        return Ok(());
    }
    let mut guests = Vec::new();
    for (index, binaries) in TIGER_LAKE_GUESTS.iter().enumerate() {
        let mut programs = Vec::new();
        if index == 0 {
            programs.push(bochs::Program {
                name: "aes_backend".to_owned(),
                path: built.probe.clone(),
                args: Vec::new(),
            });
        }
        for (name, args) in binaries.iter() {
            programs.push(bochs::Program {
                name: (*name).to_owned(),
                path: built.test(name)?.clone(),
                args: args.iter().map(|arg| (*arg).to_owned()).collect(),
            });
        }
        guests.push(programs);
    }

    let target = workspace::Metadata::load()?.target_dir()?.join("bochs");
    let kernel = bochs::prepare(&target.join("kernel"))?;
    let outputs = shell::on_workers(&guests, guests.len(), |index, programs| {
        let work = target.join(format!("guest-{}", index + 1));
        bochs::run(programs, &kernel, &work, &format!("[{}] ", index + 1))
    });
    let (mut output, mut errors) = (String::new(), Vec::new());
    for (index, run) in outputs.into_iter().enumerate() {
        match run {
            Ok(printed) => output += &printed,
            Err(error) => errors.push(format!("guest {}: {error}", index + 1)),
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\n").into());
    }
    if !output.contains(TIGER_LAKE_BACKEND) {
        return Err(format!(
            "on {} the AES backend should be \"{TIGER_LAKE_BACKEND}\"",
            bochs::MODEL
        )
        .into());
    }
    println!("{}: {}", bochs::MODEL, TestCounts::parse(&output));
    Ok(())
}
