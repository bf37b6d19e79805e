//! `--commit` read in `--repo`: the SHA a ref names now, and the committer time the change is
//! measured from when nothing else gives one.

use std::path::Path;

use jiff::Timestamp;

use super::{ChangeRead, ResolveError};

/// `--commit` read in `--repo`: a ref becomes the SHA it names now, and without `--since` (or
/// a snapshot's time) the commit's committer time becomes the change time.
pub(super) fn resolve_commit(
    given: Option<&String>,
    repo: &Path,
    change: &mut ChangeRead,
    commit_time_known: bool,
    now: Timestamp,
) -> Result<(), ResolveError> {
    let Some(c) = given else {
        return Ok(());
    };
    let by_ref = !liveproof_evidence::is_commit_sha(c);
    // A snapshot supplies the change time itself: a SHA is then only matched, and its time
    // read for the lead time when the repository has it.
    if !by_ref && commit_time_known {
        change.commit_time = crate::git::commit_time(repo, c)
            .ok()
            .map(|info| info.committed);
        return Ok(());
    }
    match crate::git::commit_time(repo, c) {
        Ok(info) => {
            change.commit_time = Some(info.committed);
            if change.since.is_none() && !commit_time_known {
                if info.committed > now {
                    return Err(ResolveError::CommitFuture {
                        commit: c.clone(),
                        at: info.committed.to_string(),
                        now: Timestamp::from_second(now.as_second())
                            .unwrap_or(now)
                            .to_string(),
                    });
                }
                change.since = Some(info.committed);
                change.since_origin = Some(format!(
                    "committer time of {} in {}",
                    info.sha,
                    repo.display()
                ));
            }
            // A ref moves: the change is the commit it names now, by its SHA.
            if by_ref {
                change.commit = Some(info.sha);
            }
            Ok(())
        }
        // An explicit --since makes the commit's time unnecessary; a SHA still names it.
        Err(_) if change.since.is_some() && !by_ref => Ok(()),
        Err(source) => Err(ResolveError::CommitTime {
            commit: c.clone(),
            source,
        }),
    }
}
