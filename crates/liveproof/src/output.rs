//! Where liveproof writes: stdout, and the files it is told to write (`--report`, `--record`,
//! `sim --kubeconfig-out`, snapshots, man pages). A write that fails is an error naming where
//! (`--report /dev/full` and `-o json > /dev/full` once exited 0), and a write never follows a
//! link planted where it writes: a file is written beside its destination under a random name
//! created exclusively (`O_CREAT|O_EXCL`, which does not follow a symlink), then renamed over
//! it (which replaces a symlink there instead of writing through it); a file appended to is
//! opened with `O_NOFOLLOW`. A FIFO or a device is written in place, within
//! [`SPECIAL_FILE_WAIT`]: a FIFO nobody reads once held `--report` and `--record` forever.

use std::borrow::Cow;
use std::fs::{File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _};
use std::path::Path;
use std::time::{Duration, Instant};

pub use liveproof_gather::files::SPECIAL_FILE_WAIT;
use liveproof_gather::files::{names_an_open_file, not_through_a_link, open_before};
use rustix::fs::OFlags;

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
/// cannot be replaced, is written in place within [`SPECIAL_FILE_WAIT`] — where the kernel's
/// protected_symlinks keeps another user's link in a shared directory from being followed —
/// and a write that fails there is an error. One of the process's own open files named through
/// `/dev/stdout`, `/dev/fd/N` is appended to, never replaced (renaming over `/dev/stdout`
/// would replace the link itself). A directory, a block device or a socket is refused.
pub fn write_requested(path: &Path, bytes: &[u8], readable: Readable) -> std::io::Result<()> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return replace_file(path, bytes, readable)
        }
        Err(e) => return Err(e),
    };
    let kind = meta.file_type();
    let own_fd = names_an_open_file(path);
    if kind.is_file() && !own_fd {
        return replace_file(path, bytes, readable);
    }
    if !(kind.is_file() || kind.is_char_device() || kind.is_fifo()) {
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_block_device() {
            "a block device"
        } else {
            "not a file liveproof writes to"
        };
        return Err(std::io::Error::other(format!("it is {what}")));
    }
    let deadline = Instant::now() + SPECIAL_FILE_WAIT;
    let mut options = OpenOptions::new();
    options.write(true).append(kind.is_file());
    let target = open_before(&options, OFlags::empty(), path, deadline)?;
    write_before(&target, bytes, deadline)
}

/// Writes all of `bytes` to `file` (opened non-blocking) by `deadline`: a reader that takes
/// nothing ends the write with an error instead of holding it.
fn write_before(mut file: &File, mut bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match file.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "its reader did not take the whole report within {}s",
                            SPECIAL_FILE_WAIT.as_secs()
                        ),
                    ));
                }
                let timeout = rustix::event::Timespec::try_from(left)
                    .map_err(|_| std::io::Error::other("a wait too long"))?;
                let mut fds = [rustix::event::PollFd::new(
                    &file,
                    rustix::event::PollFlags::OUT,
                )];
                match rustix::event::poll(&mut fds, Some(&timeout)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
/// their lines (the lock also covers filesystems where O_APPEND alone is not atomic). A
/// symlink at `path` is refused (`O_NOFOLLOW`: a planted link once made it append to its
/// target, a dangling one create it), but for one of this process's open files
/// (`/dev/stderr`); a FIFO or a device is written within [`SPECIAL_FILE_WAIT`], and so is the
/// lock waited for.
pub fn append_record(path: &Path, line: &str) -> Result<(), RecordUnwritable> {
    let append = || -> std::io::Result<()> {
        let deadline = Instant::now() + SPECIAL_FILE_WAIT;
        let mut options = OpenOptions::new();
        options.append(true);
        let flags = if names_an_open_file(path) {
            OFlags::empty()
        } else {
            options.create(true);
            OFlags::NOFOLLOW
        };
        let file = open_before(&options, flags, path, deadline).map_err(not_through_a_link)?;
        let kind = file.metadata()?.file_type();
        if kind.is_fifo() || kind.is_char_device() {
            return write_before(&file, line.as_bytes(), deadline);
        }
        if !kind.is_file() {
            return Err(std::io::Error::other(
                "it is not a file liveproof writes to",
            ));
        }
        lock_before(&file, deadline)?;
        let written = write_before(&file, line.as_bytes(), deadline);
        // Closing the file releases the lock too; unlocking first says when.
        let unlocked = file.unlock();
        written.and(unlocked)
    };
    append().map_err(|source| RecordUnwritable {
        path: path.to_path_buf(),
        source,
    })
}

/// Takes `file`'s exclusive lock by `deadline`: a process that holds it without end (a stuck
/// run, a tool that locked the log) does not hold this one.
fn lock_before(file: &File, deadline: Instant) -> std::io::Result<()> {
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "another process held its lock for {}s",
                        SPECIAL_FILE_WAIT.as_secs()
                    ),
                ))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
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
