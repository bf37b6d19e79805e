//! Issue 20, point 2: a GitOps revision that moved past the change's commit still carries the
//! change. A revision passes `gitops_revision` when it contains `--commit` (the commit or a
//! descendant, decided in a real git repository with `--repo`); one that does not (older,
//! another branch) fails; history that cannot tell is unknown with the fetch to run. `--commit`
//! takes refs (`HEAD`, a branch, `main~1`) and resolves them in `--repo`.

use liveproof_testkit::binary as common;

use std::path::Path;

use common::liveproof;
use liveproof_evidence::{Check, Evidence, Report, Status};
use liveproof_testkit::git::git_at;
use serde_json::json;

/// A repository where main moved on: `base` ← `change` ← `later` on main, and `side`, a branch
/// off `base`. Returns the repository and the four SHAs.
struct History {
    dir: tempfile::TempDir,
    base: String,
    change: String,
    later: String,
    side: String,
}

fn history() -> History {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path();
    git_at(repo, &["init", "-q", "-b", "main"], "2026-07-12T09:00:00Z");
    let commit = |message: &str, date: &str| {
        git_at(
            repo,
            &["commit", "-q", "--allow-empty", "-m", message],
            date,
        );
        git_at(repo, &["rev-parse", "HEAD"], date)
    };
    let base = commit("base", "2026-07-12T09:00:00Z");
    let change = commit("the change: image 1.4.0", "2026-07-12T10:00:00Z");
    let later = commit("someone else's change", "2026-07-12T10:05:00Z");
    git_at(
        repo,
        &["checkout", "-q", "-b", "side", &base],
        "2026-07-12T10:10:00Z",
    );
    let side = commit("a branch that never merged", "2026-07-12T10:10:00Z");
    git_at(repo, &["checkout", "-q", "main"], "2026-07-12T10:10:00Z");
    History {
        dir,
        base,
        change,
        later,
        side,
    }
}

impl History {
    fn repo(&self) -> &str {
        self.dir.path().to_str().expect("utf-8 path")
    }
}

/// An Argo CD Application and a Flux Kustomization (with its GitRepository), each synced to
/// `revision`, written as a dump in `dir`.
fn dump_at(dir: &Path, revision: &str) -> String {
    let objects = json!({"apiVersion": "v1", "kind": "List", "items": [
        {
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "inventory", "namespace": "argocd", "generation": 3},
            "spec": {"source": {"repoURL": "https://git.example.invalid/acme/apps", "targetRevision": "main", "path": "apps"}},
            "status": {
                "sync": {"status": "Synced", "revision": revision},
                "health": {"status": "Healthy"},
                "operationState": {"phase": "Succeeded", "finishedAt": "2026-07-12T10:06:00Z",
                                   "syncResult": {"revision": revision}}
            }
        },
        {
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system", "generation": 2},
            "spec": {"sourceRef": {"kind": "GitRepository", "name": "flux-system"}, "path": "./apps"},
            "status": {
                "observedGeneration": 2,
                "lastAppliedRevision": format!("main@sha1:{revision}"),
                "lastAttemptedRevision": format!("main@sha1:{revision}"),
                "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                                "message": format!("Applied revision: main@sha1:{revision}"),
                                "lastTransitionTime": "2026-07-12T10:06:00Z"}]
            }
        },
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
            "metadata": {"name": "flux-system", "namespace": "flux-system"},
            "status": {"artifact": {"revision": format!("main@sha1:{revision}")}}
        }
    ]});
    let path = dir.join(format!("synced-to-{}.json", &revision[..7]));
    std::fs::write(&path, objects.to_string()).expect("write the dump");
    path.to_str().expect("utf-8 path").to_string()
}

/// `gitops_revision` of each target (the Application, then the Kustomization) verified from
/// `dump` with `--commit COMMIT --repo REPO`.
async fn revisions(dump: &str, commit: &str, repo: &str) -> (Report, Vec<Evidence>) {
    revisions_with(dump, commit, repo, &[]).await
}

async fn revisions_with(
    dump: &str,
    commit: &str,
    repo: &str,
    extra: &[&str],
) -> (Report, Vec<Evidence>) {
    let mut found = Vec::new();
    let mut last = None;
    for (target, ns) in [
        ("application/inventory", "argocd"),
        ("kustomization/apps", "flux-system"),
    ] {
        let mut args = vec![
            "verify", target, "-n", ns, "--from", dump, "--commit", commit, "--repo", repo, "-o",
            "json",
        ];
        args.extend_from_slice(extra);
        let run = liveproof().args(&args).run().await;
        assert_ne!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        let report = run.report();
        let e = report.targets[0]
            .evidence
            .iter()
            .find(|e| e.check == Check::GitopsRevision)
            .cloned()
            .unwrap_or_else(|| panic!("gitops_revision in {report:#?}"));
        found.push(e);
        last = Some(report);
    }
    (last.expect("two targets"), found)
}

#[tokio::test]
async fn a_revision_that_moved_past_the_change_contains_it() {
    let h = history();
    let dump = dump_at(h.dir.path(), &h.later);
    let (_, found) = revisions(&dump, &h.change[..7], h.repo()).await;
    for e in &found {
        assert_eq!(e.status, Status::Pass, "{e:?}");
        assert!(
            e.detail.contains("a descendant of the change's commit"),
            "{e:?}"
        );
    }
}

#[tokio::test]
async fn an_older_revision_or_another_branch_lacks_it() {
    let h = history();
    for revision in [&h.base, &h.side] {
        let dump = dump_at(h.dir.path(), revision);
        let (report, found) = revisions(&dump, &h.change, h.repo()).await;
        for e in &found {
            assert_eq!(e.status, Status::Fail, "{revision}: {e:?}");
            assert!(e.detail.contains("does not contain"), "{e:?}");
        }
        assert_eq!(report.verdict.name(), "not_live");
    }
}

#[tokio::test]
async fn history_that_cannot_tell_is_unknown_with_the_fetch_to_run() {
    let h = history();
    let elsewhere = "0123456789abcdef0123456789abcdef01234567";
    let dump = dump_at(h.dir.path(), elsewhere);
    let (report, found) = revisions(&dump, &h.change, h.repo()).await;
    for e in &found {
        assert_eq!(e.status, Status::Unknown, "{e:?}");
        assert!(
            e.detail.contains("is not in the repository") && e.detail.contains("git -C"),
            "{e:?}"
        );
    }
    assert_ne!(
        report.verdict.name(),
        "not_live",
        "never a rollback on a guess"
    );
    // No repository at all (the change time given instead): unknown too, saying how to give one.
    let not_a_repo = tempfile::tempdir().expect("tempdir");
    let dump = dump_at(h.dir.path(), &h.later);
    let (_, found) = revisions_with(
        &dump,
        &h.change,
        not_a_repo.path().to_str().expect("utf-8"),
        &["--since", "2026-07-12T10:00:00Z"],
    )
    .await;
    for e in &found {
        assert_eq!(e.status, Status::Unknown, "{e:?}");
        assert!(e.detail.contains("--repo"), "{e:?}");
    }
}

#[tokio::test]
async fn commit_refs_resolve_in_the_repository() {
    let h = history();
    let dump = dump_at(h.dir.path(), &h.later);
    for (given, sha) in [("HEAD", &h.later), ("main~1", &h.change), ("side", &h.side)] {
        let (report, _) = revisions(&dump, given, h.repo()).await;
        assert_eq!(
            report.change.commit.as_deref(),
            Some(sha.as_str()),
            "--commit {given}"
        );
        // Its committer time is the change time.
        assert!(report.change.since.is_some(), "--commit {given}");
    }
    let run = liveproof()
        .args(&[
            "verify",
            "application/inventory",
            "-n",
            "argocd",
            "--from",
            &dump,
            "--commit",
            "no-such-branch",
            "--repo",
            h.repo(),
        ])
        .run()
        .await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("no-such-branch") && run.stderr.contains("hint:"),
        "{}",
        run.stderr
    );
}
