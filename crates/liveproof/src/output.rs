//! Where liveproof writes: stdout, and the files it is told to write (`--report`, `sim
//! --kubeconfig-out`, snapshots). A write that fails is an error naming where (`--report
//! /dev/full` and `-o json > /dev/full` once exited 0), and a write never follows a link
//! planted where it writes: a file is written beside its destination under a random name
//! created exclusively (`O_CREAT|O_EXCL`, which does not follow a symlink), then renamed over
//! it (which replaces a symlink there instead of writing through it).

use std::borrow::Cow;
use std::fs::Permissions;
use std::io::Write;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

/// A write to stdout that failed. The `io::Error` carrying it keeps the original kind, so a
/// closed pipe (`liveproof … | head`) is still told apart: the commands whose output is not a
/// verdict let it pass (see `run_on`); for a verdict it is exit 2, as any report not delivered.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to stdout: {source}")]
pub(crate) struct StdoutFailed {
    #[source]
    source: std::io::Error,
}

impl StdoutFailed {
    /// Whether `cause` is stdout's pipe closed by its reader.
    pub(crate) fn is_closed_pipe(cause: &(dyn std::error::Error + 'static)) -> bool {
        cause
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .and_then(|inner| inner.downcast_ref::<StdoutFailed>())
            .or_else(|| cause.downcast_ref::<StdoutFailed>())
            .is_some_and(|failed| failed.source.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

impl liveproof_evidence::hint::Hinted for StdoutFailed {
    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(
            if self.source.kind() == std::io::ErrorKind::BrokenPipe {
                "whatever reads stdout closed it before the report was written whole, so the verdict was not delivered (exit 2, not the verdict's code): let the reader read to the end, or write the report with --report FILE"
            } else {
                "check where stdout goes (a full disk, a closed file)"
            },
        ))
    }
}

/// stdout, whose errors name it.
pub struct Stdout(std::io::Stdout);

impl Stdout {
    pub fn new() -> Stdout {
        Stdout(std::io::stdout())
    }
}

fn named(source: std::io::Error) -> std::io::Error {
    std::io::Error::new(source.kind(), StdoutFailed { source })
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(named)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(named)
    }
}

/// Who may read a file liveproof writes.
#[derive(Debug, Clone, Copy)]
pub enum Readable {
    /// A report: anyone the directory lets in (0644, less the umask).
    ByAll,
    /// A snapshot (pod templates), a kubeconfig: its owner only (0600).
    ByOwner,
}

/// Writes `bytes` to the file `path` names, whole or not at all: a temp file beside it (a
/// random name, created exclusively: a planted link is never followed), synced, renamed over
/// `path` (a symlink there is replaced, not written through), the directory synced. Temp files
/// are named `.NAME.tmp-PID.RANDOM`, so a later run can tell what a killed run left.
pub fn replace_file(path: &Path, bytes: &[u8], readable: Readable) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let mode = match readable {
        Readable::ByAll => 0o644,
        Readable::ByOwner => 0o600,
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}{TMP_MARK}{}.", std::process::id()))
        .permissions(Permissions::from_mode(mode))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    std::fs::File::open(dir)?.sync_all()
}

/// What temp files carry before their writer's PID (see [`replace_file`]).
pub const TMP_MARK: &str = ".tmp-";

/// Writes `bytes` where the user asked (`--report PATH`): a regular file (or a new one) is
/// replaced whole ([`replace_file`]; a symlink there is replaced, not followed); a character
/// device or a FIFO (`/dev/stdout`, `/dev/full`, a process substitution's `/dev/fd/63`), which
/// cannot be replaced, is written in place — where the kernel's protected_symlinks keeps
/// another user's link in a shared directory from being followed — and a write that fails
/// there is an error. A directory, a block device or a socket is refused.
pub fn write_requested(path: &Path, bytes: &[u8], readable: Readable) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt as _;
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return replace_file(path, bytes, readable)
        }
        Err(e) => return Err(e),
    };
    let kind = meta.file_type();
    if kind.is_file() {
        return replace_file(path, bytes, readable);
    }
    if !(kind.is_char_device() || kind.is_fifo()) {
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_block_device() {
            "a block device"
        } else {
            "not a file liveproof writes to"
        };
        return Err(std::io::Error::other(format!("it is {what}")));
    }
    let mut target = std::fs::OpenOptions::new().write(true).open(path)?;
    target.write_all(bytes)?;
    target.flush()
}

/// `--report PATH` could not be written.
#[derive(Debug, thiserror::Error)]
#[error("--report {}: cannot write it: {source}", path.display())]
pub struct ReportUnwritable {
    path: std::path::PathBuf,
    #[source]
    source: std::io::Error,
}

impl liveproof_evidence::hint::Hinted for ReportUnwritable {
    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(
            "give --report a writable path whose directory exists",
        ))
    }
}

/// `--report PATH`: the report written there ([`write_requested`]), or an error naming it.
pub fn write_report(path: &Path, bytes: &[u8]) -> Result<(), ReportUnwritable> {
    write_requested(path, bytes, Readable::ByAll).map_err(|source| ReportUnwritable {
        path: path.to_path_buf(),
        source,
    })
}

/// `--record PATH` could not be appended to.
#[derive(Debug, thiserror::Error)]
#[error("--record {}: cannot append to it: {source}", path.display())]
pub struct RecordUnwritable {
    path: std::path::PathBuf,
    #[source]
    source: std::io::Error,
}

impl liveproof_evidence::hint::Hinted for RecordUnwritable {
    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(
            "give --record a file you can write, in a directory that exists",
        ))
    }
}

/// `--record PATH`: `line` appended whole. One `write` of the whole line to a file opened with
/// O_APPEND, under an exclusive advisory lock, so two runs appending at once never interleave
/// their lines (the lock also covers filesystems where O_APPEND alone is not atomic).
pub fn append_record(path: &Path, line: &str) -> Result<(), RecordUnwritable> {
    let append = || -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)?;
        file.lock()?;
        let written = file.write_all(line.as_bytes()).and_then(|()| file.flush());
        // Closing the file releases the lock too; unlocking first says when.
        let unlocked = file.unlock();
        written.and(unlocked)
    };
    append().map_err(|source| RecordUnwritable {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_symlink_is_replaced_never_written_through() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").expect("write");
        let report = dir.path().join("report.json");
        std::os::unix::fs::symlink(&victim, &report).expect("symlink");
        write_requested(&report, b"{}", Readable::ByAll).expect("written");
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "precious");
        assert_eq!(std::fs::read_to_string(&report).expect("read"), "{}");
        assert!(!std::fs::symlink_metadata(&report)
            .expect("meta")
            .file_type()
            .is_symlink());
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 2, "no temp file left: {left:?}");
    }

    #[test]
    fn a_failed_write_is_an_error() {
        let err = write_requested(Path::new("/dev/full"), b"x", Readable::ByAll)
            .expect_err("/dev/full is full");
        assert_eq!(err.raw_os_error(), Some(28), "{err}");
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(write_requested(dir.path(), b"x", Readable::ByAll).is_err());
        assert!(write_requested(&dir.path().join("no/such/dir/f"), b"x", Readable::ByAll).is_err());
    }
}
