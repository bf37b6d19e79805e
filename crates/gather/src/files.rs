//! Opening the files a user names (`--from`, `-f`, `--kubeconfig`, `KUBECONFIG`): regular
//! files only. A FIFO given as `--from` blocked liveproof forever (over MCP, one such call
//! stalled the whole server), `/dev/zero` never ends, a socket cannot be read: each is refused
//! with an error naming the path, before a byte is read and without blocking on the open.
//! And the file `--record` appends to, checked before any work ([`check_record`]): opened as
//! it will be, never through a symlink, a FIFO no process reads given up on after
//! [`SPECIAL_FILE_WAIT`] (liveproof's writes share these opens).

use std::fs::{File, FileType, OpenOptions};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::OFlags;

/// A path that is not a regular file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {kind}, not a regular file: not read (reading it could block forever or never end)", path.display())]
pub struct NotRegular {
    pub path: PathBuf,
    /// `a FIFO (named pipe)`, `a character device`, …
    pub kind: &'static str,
}

/// Why a named file could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    NotRegular(#[from] NotRegular),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What `file_type` is, when it is not a regular file.
pub fn special_kind(file_type: &FileType) -> Option<&'static str> {
    if file_type.is_file() {
        return None;
    }
    Some(if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO (named pipe)"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a file"
    })
}

/// Opens `path` (symlinks followed) for reading when it is a regular file. The open itself
/// never blocks (`O_NONBLOCK`: opening a FIFO without a writer would), and the type is read
/// from the opened file, so a file swapped for a FIFO after the first look is refused too.
pub fn open_regular(path: &Path) -> Result<File, OpenError> {
    let io = |source| OpenError::Io {
        path: path.to_path_buf(),
        source,
    };
    let refuse = |kind| NotRegular {
        path: path.to_path_buf(),
        kind,
    };
    // Looked at first: opening a socket fails with a message that says nothing useful.
    if let Some(kind) = special_kind(&std::fs::metadata(path).map_err(io)?.file_type()) {
        return Err(refuse(kind).into());
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    if let Some(kind) = special_kind(&file.metadata().map_err(io)?.file_type()) {
        return Err(refuse(kind).into());
    }
    Ok(file)
}

/// The text of the regular file `path` ([`open_regular`]); not UTF-8 is an `InvalidData`
/// error.
pub fn read_to_string(path: &Path) -> Result<String, OpenError> {
    use std::io::Read as _;
    let mut text = String::new();
    open_regular(path)?
        .read_to_string(&mut text)
        .map_err(|source| OpenError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(text)
}

/// Fails when `path` exists and is not a regular file (for a reader that opens it itself,
/// such as kube's kubeconfig loader). A missing path is left to that reader to report.
pub fn check_regular(path: &Path) -> Result<(), NotRegular> {
    match std::fs::metadata(path) {
        Ok(meta) => match special_kind(&meta.file_type()) {
            Some(kind) => Err(NotRegular {
                path: path.to_path_buf(),
                kind,
            }),
            None => Ok(()),
        },
        Err(_) => Ok(()),
    }
}

/// How long a FIFO or a device liveproof was told to write to (`--report`, `--record`) may
/// take, from the open to the last byte: a FIFO that no process opens for reading, or one
/// whose reader never reads, ends the write with an error when it has passed.
pub const SPECIAL_FILE_WAIT: Duration = Duration::from_secs(10);

/// Whether `path` names one of this process's open files: a link (`/dev/stdout`, `/dev/fd/1`,
/// `/proc/self/fd/1`) into `/proc/PID/fd`, as the caller's shell gave it.
pub fn names_an_open_file(path: &Path) -> bool {
    let mut path = path.to_path_buf();
    // A few links deep at most: /dev/stdout → /proc/self/fd/1.
    for _ in 0..8 {
        let dir = path.parent().and_then(|d| std::fs::canonicalize(d).ok());
        if dir.is_some_and(|d| d.starts_with("/proc") && d.ends_with("fd")) {
            return true;
        }
        match std::fs::read_link(&path) {
            Ok(target) => {
                path = path
                    .parent()
                    .map_or_else(|| target.clone(), |p| p.join(&target));
            }
            Err(_) => return false,
        }
    }
    false
}

/// Opens `path` with `options` and `flags`, without blocking: a FIFO no process has opened for
/// reading yet (`ENXIO` without blocking) is tried again until `deadline`.
pub fn open_before(
    options: &OpenOptions,
    flags: OFlags,
    path: &Path,
    deadline: Instant,
) -> std::io::Result<File> {
    let mut options = options.clone();
    // open(2)'s flags are an int; every O_ flag fits in one.
    options.custom_flags((OFlags::NONBLOCK | flags).bits() as i32);
    loop {
        match options.open(path) {
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => {
                if Instant::now() >= deadline {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "it is a FIFO, and no process opened it for reading within {}s",
                            SPECIAL_FILE_WAIT.as_secs()
                        ),
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// Fails when `--record PATH` could not be appended to, checked before any work: a regular file
/// is opened (created when missing) as `--record` appends to it, never through a symlink; a
/// FIFO or a device is left unopened (its reader may come later), and written to within
/// [`SPECIAL_FILE_WAIT`] at the end.
pub fn check_record(path: &Path) -> std::io::Result<()> {
    if names_an_open_file(path) {
        return Ok(());
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        let kind = meta.file_type();
        if kind.is_symlink() {
            return Err(symlink_refused());
        }
        if kind.is_fifo() || kind.is_char_device() {
            return Ok(());
        }
    }
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    open_before(&options, OFlags::NOFOLLOW, path, Instant::now())
        .map_err(not_through_a_link)
        .map(drop)
}

fn symlink_refused() -> std::io::Error {
    std::io::Error::other("it is a symbolic link, and --record never writes through one")
}

/// An `O_NOFOLLOW` open refused for a link (`ELOOP`), said as such.
pub fn not_through_a_link(e: std::io::Error) -> std::io::Error {
    if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        symlink_refused()
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo.yaml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        for (path, kind) in [
            (fifo.as_path(), "a FIFO (named pipe)"),
            (Path::new("/dev/zero"), "a character device"),
            (dir.path(), "a directory"),
        ] {
            match open_regular(path) {
                Err(OpenError::NotRegular(e)) => {
                    assert_eq!(e.kind, kind);
                    assert!(e.to_string().contains(&path.display().to_string()), "{e}");
                }
                other => panic!("{}: {other:?}", path.display()),
            }
            assert!(check_regular(path).is_err());
        }
        let file = dir.path().join("ok.yaml");
        std::fs::write(&file, "a: 1\n").expect("write");
        assert!(open_regular(&file).is_ok());
        assert!(check_regular(&file).is_ok());
        assert!(matches!(
            open_regular(&dir.path().join("missing")),
            Err(OpenError::Io { .. })
        ));
    }
}
