//! Where results go: stdout, or a file written beside its final path and renamed into place only
//! once everything succeeded.
//!
//! A run that fails (bad input, full disk, SIGINT, SIGTERM, SIGHUP) leaves no partial output
//! file and never touches a file that was already at `--output`; see [`AtomicFile`]. A new output file gets mode 0600 (it may hold
//! decrypted data); a replaced one keeps its permissions. A symbolic link is followed (its target
//! is replaced, the link stays), and an output that is not a regular file (`/dev/null`, a named
//! pipe) is written to directly, as it cannot be replaced.

use std::fs;
use std::io::{self, BufWriter, StdoutLock, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use tempfile::TempPath;

/// Bytes buffered before a write reaches the OS.
const BUFFER: usize = 1 << 20;

/// The output of a run.
#[derive(Debug)]
pub enum Sink {
    /// Standard output, buffered.
    Stdout(BufWriter<StdoutLock<'static>>),
    /// A device or a named pipe, written in place.
    Special(PathBuf, BufWriter<fs::File>),
    /// A file replaced on [`Sink::commit`].
    File(AtomicFile),
}

impl Sink {
    /// Buffered standard output.
    pub fn stdout() -> Self {
        Sink::Stdout(BufWriter::with_capacity(BUFFER, io::stdout().lock()))
    }

    /// A temporary file beside `path` that becomes `path` on [`Sink::commit`]; or, for a
    /// device or a named pipe, `path` itself.
    pub fn file(path: &Path) -> Result<Self> {
        let special = fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        if special {
            let file = fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("cannot open output {}", path.display()))?;
            return Ok(Sink::Special(
                path.to_path_buf(),
                BufWriter::with_capacity(BUFFER, file),
            ));
        }
        AtomicFile::create(path).map(Sink::File)
    }

    /// Flushes everything; for a file, syncs it and renames it into place.
    pub fn commit(self) -> Result<()> {
        match self {
            Sink::Stdout(mut out) => out.flush().context("cannot write to stdout"),
            Sink::Special(path, mut out) => out
                .flush()
                .with_context(|| format!("cannot write {}", path.display())),
            Sink::File(file) => file.commit(),
        }
    }

    /// The name of the output, for messages.
    pub fn name(&self) -> String {
        match self {
            Sink::Stdout(_) => "stdout".into(),
            Sink::Special(path, _) => path.display().to_string(),
            Sink::File(file) => file.path.display().to_string(),
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(out) => out.write(buf),
            Sink::Special(_, out) => out.write(buf),
            Sink::File(file) => file.writer.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Sink::Stdout(out) => out.write_all(buf),
            Sink::Special(_, out) => out.write_all(buf),
            Sink::File(file) => file.writer.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(out) => out.flush(),
            Sink::Special(_, out) => out.flush(),
            Sink::File(file) => file.writer.flush(),
        }
    }
}

/// A file written beside `path` and put in its place by [`AtomicFile::commit`]; dropped without
/// a commit, or ended by SIGINT, SIGTERM or SIGHUP, it leaves the directory as it was.
///
/// On Linux the file is unnamed (`O_TMPFILE`): it appears in the directory only when linked
/// there on commit, so even SIGKILL leaves nothing. Elsewhere, or on a file system without
/// `O_TMPFILE`, it is a named temporary file (`.riffpe-XXXXXX.tmp`) that a signal handler
/// removes before the process dies of the signal.
#[derive(Debug)]
pub struct AtomicFile {
    /// The path given, for messages.
    path: PathBuf,
    /// Where the file goes: `path`, or the file a symbolic link at `path` points to.
    target: PathBuf,
    /// The directory of `target`.
    dir: PathBuf,
    writer: BufWriter<fs::File>,
    temp: Temp,
}

/// How the file being written is named until the commit.
#[derive(Debug)]
enum Temp {
    /// Not at all (`O_TMPFILE`); `/proc/self/fd/N` names it for `linkat`.
    #[cfg(target_os = "linux")]
    Unnamed,
    /// A temporary name, removed on drop and on a signal.
    Named(TempPath, signals::Pending),
}

impl AtomicFile {
    /// Creates the file to write: unnamed where the system allows, else `.riffpe-XXXXXX.tmp`
    /// beside `path` (or beside the target of a symbolic link at `path`).
    pub fn create(path: &Path) -> Result<Self> {
        Self::create_in(path, true)
    }

    /// As [`AtomicFile::create`], but always with a named temporary file: the portable path,
    /// which the signal handler cleans up.
    pub fn create_named(path: &Path) -> Result<Self> {
        Self::create_in(path, false)
    }

    fn create_in(path: &Path, unnamed: bool) -> Result<Self> {
        let shown = path.display();
        let existing = fs::metadata(path).ok();
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            bail!("output {shown} is a directory");
        }
        let target = match existing {
            Some(_) => {
                fs::canonicalize(path).with_context(|| format!("cannot resolve output {shown}"))?
            }
            None => path.to_path_buf(),
        };
        let dir = match target.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        signals::install().context("cannot watch for interrupting signals")?;
        let (file, temp) = match unnamed.then(|| open_unnamed(&dir)).flatten() {
            Some(unnamed) => unnamed,
            None => {
                // Registered under the lock, so a signal cannot come between the two.
                let mut pending = signals::lock();
                let (file, temp) = tempfile::Builder::new()
                    .prefix(".riffpe-")
                    .suffix(".tmp")
                    .tempfile_in(&dir)
                    .with_context(|| {
                        format!(
                            "cannot create a temporary file for output {shown} in {}",
                            dir.display()
                        )
                    })?
                    .into_parts();
                let registered = signals::Pending::register(&mut pending, &temp);
                (file, Temp::Named(temp, registered))
            }
        };
        if let Some(metadata) = existing {
            file.set_permissions(metadata.permissions())
                .with_context(|| format!("cannot copy the permissions of {shown}"))?;
        }
        Ok(AtomicFile {
            path: path.to_path_buf(),
            target,
            dir,
            writer: BufWriter::with_capacity(BUFFER, file),
            temp,
        })
    }

    /// Flushes, syncs and puts the file in place, replacing any file there atomically.
    pub fn commit(self) -> Result<()> {
        let shown = self.path.display();
        let file = self
            .writer
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("cannot write {shown}"))?;
        file.sync_all()
            .with_context(|| format!("cannot write {shown}"))?;
        match self.temp {
            #[cfg(target_os = "linux")]
            Temp::Unnamed => link_unnamed(&file, &self.dir, &self.target)
                .with_context(|| format!("cannot link the new file into place as {shown}")),
            Temp::Named(temp, registered) => {
                // Under the lock, so a signal's cleanup sees the file before or after, not during.
                let mut pending = signals::lock();
                let renamed = temp.persist(&self.target);
                registered.forget(&mut pending);
                renamed
                    .map_err(|e| e.error)
                    .with_context(|| format!("cannot rename the temporary file to {shown}"))
            }
        }
    }
}

/// A new unnamed file (mode 0600) in `dir`, or `None` where that is not supported.
#[cfg(target_os = "linux")]
fn open_unnamed(dir: &Path) -> Option<(fs::File, Temp)> {
    use rustix::fs::{CWD, Mode, OFlags};
    // linkat needs the file's name under /proc; without /proc, the named path is taken.
    if !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    let flags = OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC;
    // Any refusal (no O_TMPFILE on this file system, a missing directory …) falls back to the
    // named path, whose error message is the one users know.
    let fd = rustix::fs::openat(CWD, dir, flags, Mode::RUSR | Mode::WUSR).ok()?;
    Some((fs::File::from(fd), Temp::Unnamed))
}

#[cfg(not(target_os = "linux"))]
fn open_unnamed(_: &Path) -> Option<(fs::File, Temp)> {
    None
}

/// Gives the unnamed `file` the name `target` in `dir`.
#[cfg(target_os = "linux")]
fn link_unnamed(file: &fs::File, dir: &Path, target: &Path) -> io::Result<()> {
    use rustix::fs::{AtFlags, CWD};
    use std::os::fd::AsRawFd;
    let name = format!("/proc/self/fd/{}", file.as_raw_fd());
    let link = |to: &Path| {
        rustix::fs::linkat(CWD, name.as_str(), CWD, to, AtFlags::SYMLINK_FOLLOW)
            .map_err(io::Error::from)
    };
    match link(target) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        linked => return linked,
    }
    // linkat never replaces: link under a temporary name, then rename over, which is atomic.
    // The lock keeps a signal's handler waiting until the temporary name is gone.
    let _pending = signals::lock();
    let temp = tempfile::Builder::new()
        .prefix(".riffpe-")
        .suffix(".tmp")
        .make_in(dir, |path| link(path))?;
    temp.persist(target).map_err(|e| e.error)
}

/// Removing temporary files when SIGINT, SIGTERM or SIGHUP (Ctrl-C on Windows) ends the run.
mod signals {
    use std::io;
    use std::path::PathBuf;
    use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

    use tempfile::TempPath;

    /// Temporary files a signal must remove.
    static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    /// The list, held while files are created, renamed or removed so a signal never races them.
    pub(super) fn lock() -> MutexGuard<'static, Vec<PathBuf>> {
        PENDING.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One file on the list until it is renamed or dropped.
    #[derive(Debug)]
    pub(super) struct Pending(PathBuf);

    impl Pending {
        pub(super) fn register(pending: &mut Vec<PathBuf>, temp: &TempPath) -> Self {
            pending.push(temp.to_path_buf());
            Pending(temp.to_path_buf())
        }

        /// Takes the file off the list (its name is gone or about to be).
        pub(super) fn forget(self, pending: &mut Vec<PathBuf>) {
            pending.retain(|path| *path != self.0);
            std::mem::forget(self);
        }
    }

    impl Drop for Pending {
        fn drop(&mut self) {
            lock().retain(|path| *path != self.0);
        }
    }

    /// Removes every pending file; the lock stays held so none is added after.
    fn clean_up() {
        let mut pending = lock();
        for path in pending.drain(..) {
            let _ = std::fs::remove_file(path);
        }
        std::mem::forget(pending);
    }

    /// Starts the handler once per process.
    pub(super) fn install() -> io::Result<()> {
        static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
        INSTALLED
            .get_or_init(|| start().map_err(|e| e.to_string()))
            .clone()
            .map_err(io::Error::other)
    }

    /// A thread that waits for the signals, cleans up and then dies of the signal it got, so
    /// the exit status says which.
    #[cfg(unix)]
    fn start() -> io::Result<()> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        use signal_hook::iterator::Signals;
        use signal_hook::low_level::emulate_default_handler;

        let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    clean_up();
                    let _ = emulate_default_handler(signal);
                    // Reached only if the signal's default action did not end the process.
                    std::process::exit(128 + signal);
                }
            })?;
        Ok(())
    }

    #[cfg(windows)]
    fn start() -> io::Result<()> {
        ctrlc::set_handler(|| {
            clean_up();
            // STATUS_CONTROL_C_EXIT, what an unhandled Ctrl-C ends a process with.
            std::process::exit(0xC000013Au32 as i32);
        })
        .map_err(|e| io::Error::other(e.to_string()))
    }

    #[cfg(not(any(unix, windows)))]
    fn start() -> io::Result<()> {
        Ok(())
    }
}

/// Whether `a` and `b` name the same existing regular file (through links, `..`, hard links).
/// Devices and pipes are never "the same file": `/dev/stdin` and `/dev/stdout` may both be the
/// terminal.
pub fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) else {
        return false;
    };
    if !ma.is_file() || !mb.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if ma.dev() == mb.dev() && ma.ino() == mb.ino() {
            return true;
        }
    }
    #[cfg(not(unix))]
    let _ = (ma, mb);
    matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(ca), Ok(cb)) if ca == cb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_left_without_a_commit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        fs::write(&path, b"before").unwrap();
        let mut sink = Sink::file(&path).unwrap();
        sink.write_all(b"partial").unwrap();
        drop(sink);
        assert_eq!(fs::read(&path).unwrap(), b"before");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);

        let mut sink = Sink::file(&path).unwrap();
        sink.write_all(b"after").unwrap();
        sink.commit().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"after");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("fresh");
        Sink::file(&fresh).unwrap().commit().unwrap();
        let mode = fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);

        let replaced = dir.path().join("replaced");
        fs::write(&replaced, b"x").unwrap();
        fs::set_permissions(&replaced, fs::Permissions::from_mode(0o640)).unwrap();
        Sink::file(&replaced).unwrap().commit().unwrap();
        let mode = fs::metadata(&replaced).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_and_devices_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut sink = Sink::file(&link).unwrap();
        sink.write_all(b"new").unwrap();
        sink.commit().unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&target).unwrap(), b"new");

        let null = Path::new("/dev/null");
        let mut sink = Sink::file(null).unwrap();
        assert!(matches!(sink, Sink::Special(..)));
        sink.write_all(b"nothing").unwrap();
        sink.commit().unwrap();
        assert!(!fs::metadata(null).unwrap().is_file());
    }

    #[test]
    fn same_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::write(&a, b"x").unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(same_file(&a, &dir.path().join("sub/../a")));
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&a, &link).unwrap();
            assert!(same_file(&a, &link));
            let hard = dir.path().join("hard");
            fs::hard_link(&a, &hard).unwrap();
            assert!(same_file(&hard, &a));
        }
        assert!(!same_file(&a, &dir.path().join("missing")));
        fs::write(dir.path().join("b"), b"x").unwrap();
        assert!(!same_file(&a, &dir.path().join("b")));
    }
}
