//! Where results go: stdout, or a file written beside its final path and renamed into place only
//! once everything succeeded.
//!
//! A run that fails (bad input, full disk, Ctrl-C aside) leaves no partial output file and never
//! touches a file that was already at `--output`. A new output file gets mode 0600 (it may hold
//! decrypted data); a replaced one keeps its permissions. A symbolic link is followed (its target
//! is replaced, the link stays), and an output that is not a regular file (`/dev/null`, a named
//! pipe) is written to directly, as it cannot be replaced.

use std::fs;
use std::io::{self, BufWriter, StdoutLock, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use tempfile::NamedTempFile;

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

/// A file written under a temporary name in the directory of `path`, renamed to `path` by
/// [`AtomicFile::commit`]. Dropped without a commit, the temporary file is removed.
#[derive(Debug)]
pub struct AtomicFile {
    /// The path given, for messages.
    path: PathBuf,
    /// Where the file goes: `path`, or the file a symbolic link at `path` points to.
    target: PathBuf,
    writer: BufWriter<NamedTempFile>,
}

impl AtomicFile {
    /// Creates the temporary file (`.riffpe-XXXXXX.tmp` beside `path`, or beside the target of
    /// a symbolic link at `path`).
    pub fn create(path: &Path) -> Result<Self> {
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
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let temp = tempfile::Builder::new()
            .prefix(".riffpe-")
            .suffix(".tmp")
            .tempfile_in(dir)
            .with_context(|| {
                format!(
                    "cannot create a temporary file for output {shown} in {}",
                    dir.display()
                )
            })?;
        if let Some(metadata) = existing {
            temp.as_file()
                .set_permissions(metadata.permissions())
                .with_context(|| format!("cannot copy the permissions of {shown}"))?;
        }
        Ok(AtomicFile {
            path: path.to_path_buf(),
            target,
            writer: BufWriter::with_capacity(BUFFER, temp),
        })
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(self) -> Result<()> {
        let shown = self.path.display();
        let temp = self
            .writer
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("cannot write {shown}"))?;
        temp.as_file()
            .sync_all()
            .with_context(|| format!("cannot write {shown}"))?;
        temp.persist(&self.target)
            .map_err(|e| e.error)
            .with_context(|| format!("cannot rename the temporary file to {shown}"))?;
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
