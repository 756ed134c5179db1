//! Running commands: every command is echoed before it runs, the first failure ends the task
//! with the command that failed, and missing tools are installed where CI can install them.

use std::env;
use std::error::Error;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every task returns this; the message is printed by `main`.
pub type Result<T = ()> = std::result::Result<T, Box<dyn Error>>;

/// Announces a step: `== name`.
pub fn step(name: &str) {
    println!("\n== {name}");
}

/// `cargo` of the toolchain that runs the xtask (cargo sets `CARGO` for the programs it runs).
pub fn cargo() -> Command {
    Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// The command as a shell line: changed environment first, then the program and its arguments.
pub fn display(command: &Command) -> String {
    let mut line = String::new();
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            line.push_str(&format!("{}={} ", key.display(), quote(value)));
        }
    }
    // Show `cargo`, not the toolchain path in `CARGO`: the line is meant to be copied.
    let program = Path::new(command.get_program());
    if env::var_os("CARGO").is_some_and(|cargo| program == Path::new(&cargo)) {
        line.push_str("cargo");
    } else {
        line.push_str(&quote(command.get_program()));
    }
    for arg in command.get_args() {
        line.push(' ');
        line.push_str(&quote(arg));
    }
    line
}

fn quote(word: &OsStr) -> String {
    let word = word.to_string_lossy();
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=+:,@%".contains(c));
    if plain {
        word.into_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn failed(command: &Command, status: std::process::ExitStatus) -> Box<dyn Error> {
    format!("command failed ({status}):\n    {}", display(command)).into()
}

fn spawn_error(command: &Command, error: std::io::Error) -> Box<dyn Error> {
    format!("cannot run ({error}):\n    {}", display(command)).into()
}

/// Runs `command` with its output going to the terminal; an error if it does not succeed.
pub fn run(command: &mut Command) -> Result {
    println!("$ {}", display(command));
    let start = Instant::now();
    let status = command
        .status()
        .map_err(|error| spawn_error(command, error))?;
    took(start, "");
    if status.success() {
        Ok(())
    } else {
        Err(failed(command, status))
    }
}

/// As [`run`], also returning what the command wrote to stdout (it is still shown, line by line).
pub fn run_tee(command: &mut Command) -> Result<String> {
    run_tee_as(command, "")
}

/// As [`run_tee`], each line shown after `label` (for commands run side by side).
pub fn run_tee_as(command: &mut Command, label: &str) -> Result<String> {
    println!("{label}$ {}", display(command));
    let start = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|error| spawn_error(command, error))?;
    let mut captured = String::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line?;
            println!("{label}{line}");
            captured.push_str(&line);
            captured.push('\n');
        }
    }
    let status = child.wait()?;
    took(start, label);
    if status.success() {
        Ok(captured)
    } else {
        Err(failed(command, status))
    }
}

/// Runs `job` on every item (`job` gets the item's index too) with `workers` threads, each
/// taking the next item not yet taken, so list the longest first; as many workers as items run
/// them all at once. The results in the items' order, errors as text, a job that panicked
/// giving one too.
pub fn on_workers<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    job: impl Fn(usize, &T) -> Result<R> + Sync,
) -> Vec<std::result::Result<R, String>> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<std::result::Result<R, String>>>> =
        Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, items.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else { break };
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        job(index, item).map_err(|error| error.to_string())
                    }))
                    .unwrap_or_else(|_| Err("its job panicked".into()));
                    results.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|result| result.unwrap_or_else(|| Err("it did not run".into())))
        .collect()
}

/// Shows how long a command took, when that is worth a line.
fn took(start: Instant, label: &str) {
    let elapsed = start.elapsed();
    if elapsed >= Duration::from_secs(5) {
        println!("{label}  ({})", human(elapsed));
    }
}

/// Runs `command` quietly and returns its stdout; an error (with its stderr) if it fails.
pub fn read(command: &mut Command) -> Result<String> {
    let output = command
        .stderr(Stdio::piped())
        .output()
        .map_err(|error| spawn_error(command, error))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "{}\n{}",
            failed(command, output.status),
            String::from_utf8_lossy(&output.stderr).trim_end()
        )
        .into())
    }
}

/// Whether `program` is an executable file on `PATH`.
pub fn have(program: &str) -> bool {
    find_on_path(program).is_some()
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH").unwrap_or_default();
    env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Adds the rustup targets that are not installed yet (one `rustup` call, none if all are).
pub fn ensure_targets(targets: &[&str]) -> Result {
    let installed = read(Command::new("rustup").args(["target", "list", "--installed"]))?;
    let missing: Vec<&str> = targets
        .iter()
        .copied()
        .filter(|target| !installed.lines().any(|line| line.trim() == *target))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    run(Command::new("rustup")
        .args(["target", "add"])
        .args(&missing))
}

/// Adds a rustup component (`rustfmt`, `clippy`) unless `probe` (e.g. `cargo fmt --version`) works.
pub fn ensure_component(component: &str, probe: &mut Command) -> Result {
    let works = probe
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if works {
        return Ok(());
    }
    run(Command::new("rustup").args(["component", "add", component]))
}

/// Installs Debian packages with apt-get: as root (CI) directly, otherwise through `sudo`;
/// `release` picks a suite such as `bookworm-backports`. Without apt-get it stops and says
/// what to install.
pub fn apt_install(packages: &[&str], release: Option<&str>) -> Result {
    let how = || format!("install the Debian/Ubuntu packages {}", packages.join(" "));
    if !have("apt-get") || !(is_root() || have("sudo")) {
        return Err(how().into());
    }
    println!("installing {}", packages.join(" "));
    run(&mut apt(&["update", "-q"]))?;
    let mut install = apt(&["install", "-y", "-q", "--no-install-recommends"]);
    if let Some(release) = release {
        install.args(["-t", release]);
    }
    run(install.args(packages))
}

/// Adds an apt source (one `deb …` line) as `/etc/apt/sources.list.d/NAME.list`, unless that
/// file exists; only as root, where CI runs: a developer's machine keeps its sources.
pub fn add_apt_source(name: &str, line: &str) -> Result<bool> {
    let file = Path::new("/etc/apt/sources.list.d").join(format!("{name}.list"));
    if file.exists() {
        return Ok(true);
    }
    if !is_root() {
        return Ok(false);
    }
    println!("adding apt source {}: {line}", file.display());
    std::fs::write(&file, format!("{line}\n"))?;
    Ok(true)
}

/// `apt-get ARGS`, through `sudo` unless run as root.
pub fn apt(args: &[&str]) -> Command {
    let mut command = if is_root() {
        Command::new("apt-get")
    } else {
        let mut sudo = Command::new("sudo");
        sudo.arg("apt-get");
        sudo
    };
    command.args(args).env("DEBIAN_FRONTEND", "noninteractive");
    command
}

fn is_root() -> bool {
    read(Command::new("id").arg("-u")).is_ok_and(|uid| uid.trim() == "0")
}

/// `VERSION_CODENAME` of `/etc/os-release` (`bookworm`, `trixie` …).
pub fn os_codename() -> Option<String> {
    let release = std::fs::read_to_string("/etc/os-release").ok()?;
    release.lines().find_map(|line| {
        let value = line.strip_prefix("VERSION_CODENAME=")?;
        Some(value.trim_matches('"').to_owned())
    })
}

/// `1m05s`, `4.2s`.
pub fn human(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds < 60.0 {
        format!("{seconds:.1}s")
    } else {
        let whole = duration.as_secs();
        format!("{}m{:02}s", whole / 60, whole % 60)
    }
}

/// Runs named steps and records how long each took, in wall-clock and CPU time.
#[derive(Debug, Default)]
pub struct Timings(Vec<(String, Duration, Option<Duration>)>);

impl Timings {
    pub fn step(&mut self, name: &str, task: impl FnOnce() -> Result) -> Result {
        step(name);
        let (start, cpu) = (Instant::now(), children_cpu());
        let result = task();
        let cpu = children_cpu()
            .zip(cpu)
            .map(|(after, before)| after - before);
        self.0.push((name.to_owned(), start.elapsed(), cpu));
        result.map_err(|error| format!("step `{name}`: {error}").into())
    }

    pub fn print(&self, title: &str) {
        let total: Duration = self.0.iter().map(|(_, wall, _)| *wall).sum();
        println!("\n== {title} in {}", human(total));
        println!("   {:<12} {:>8} {:>8}", "step", "wall", "CPU");
        for (name, wall, cpu) in &self.0 {
            let cpu = cpu.map_or_else(|| "?".to_owned(), human);
            println!("   {name:<12} {:>8} {cpu:>8}", human(*wall));
        }
    }
}

/// User plus system time of the finished child processes and their descendants
/// (`cutime` + `cstime` of `/proc/self/stat`, in the kernel's 100 Hz clock ticks).
fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |index: usize| fields.get(index)?.parse::<u64>().ok();
    Some(Duration::from_millis((ticks(13)? + ticks(14)?) * 10))
}

/// Sums the `test result: ok. N passed; M failed; K ignored` lines of libtest's output.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TestCounts {
    pub binaries: usize,
    /// Criterion benchmarks run once in test mode (`Testing group/name` … `Success`).
    pub benchmarks: usize,
    pub passed: usize,
    pub failed: usize,
    pub ignored: usize,
}

impl TestCounts {
    pub fn parse(output: &str) -> Self {
        let mut counts = TestCounts::default();
        for line in output.lines() {
            if line.starts_with("Testing ") {
                counts.benchmarks += 1;
            }
            let Some(summary) = line.trim().strip_prefix("test result: ") else {
                continue;
            };
            counts.binaries += 1;
            for part in summary.split([';', '.']) {
                let mut words = part.split_whitespace();
                if let (Some(number), Some(what)) = (words.next(), words.next())
                    && let Ok(number) = number.parse::<usize>()
                {
                    match what {
                        "passed" => counts.passed += number,
                        "failed" => counts.failed += number,
                        "ignored" => counts.ignored += number,
                        _ => {}
                    }
                }
            }
        }
        counts
    }
}

impl std::fmt::Display for TestCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} tests passed, {} failed, {} ignored ({} test binaries and doctest runs)",
            self.passed, self.failed, self.ignored, self.binaries
        )?;
        if self.benchmarks > 0 {
            write!(f, "; {} benchmarks run once in test mode", self.benchmarks)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_sum_every_test_binary() {
        let output = "\
running 3 tests
test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s

test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 2 filtered out; finished in 1.20s
Testing latency-encrypt/Riffpe n=10 b=18/6
Success
";
        assert_eq!(
            TestCounts::parse(output),
            TestCounts {
                binaries: 2,
                benchmarks: 1,
                passed: 15,
                failed: 0,
                ignored: 1
            }
        );
    }

    #[test]
    fn commands_are_shown_as_shell_lines() {
        let mut command = Command::new("qemu-aarch64");
        command
            .args(["-cpu", "cortex-a72", "it's"])
            .env("RUSTDOCFLAGS", "-D warnings");
        assert_eq!(
            display(&command),
            r"RUSTDOCFLAGS='-D warnings' qemu-aarch64 -cpu cortex-a72 'it'\''s'"
        );
    }
}
