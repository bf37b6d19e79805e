//! `liveproof snapshot`: what was recorded (or kept) and where it was published.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::{Format, Outcome, Render, TextStyle};

/// What `snapshot` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotTaken {
    /// A snapshot of `commit` was already there (taken at `taken_at`): kept, and published.
    Kept {
        commit: String,
        taken_at: String,
        current: PathBuf,
    },
    /// A new snapshot, published as `current`.
    Taken {
        commit: String,
        workloads: usize,
        releases: usize,
        current: PathBuf,
    },
}

impl Render for SnapshotTaken {
    const FORMATS: &'static [Format] = &[Format::Text];

    fn render(&self, format: Format, _: TextStyle, out: &mut dyn Write) -> io::Result<()> {
        if format != Format::Text {
            return Err(crate::unsupported("a snapshot", format, Self::FORMATS));
        }
        match self {
            SnapshotTaken::Kept {
                commit,
                taken_at,
                current,
            } => writeln!(
                out,
                "kept the snapshot of commit {commit} taken at {taken_at} and published it as {}: a snapshot \
                 taken again (a retried job, after the apply) would record the new state, not the \
                 way back; --overwrite replaces it",
                current.display()
            ),
            SnapshotTaken::Taken {
                commit,
                workloads,
                releases,
                current,
            } => writeln!(
                out,
                "snapshot of {workloads} workload(s) and {releases} Helm release(s) for commit {commit} published as {}",
                current.display()
            ),
        }
    }
}

impl Outcome for SnapshotTaken {
    /// A snapshot that could not be written is an error (exit 2), not an outcome.
    fn exit_code(&self) -> u8 {
        0
    }
}
