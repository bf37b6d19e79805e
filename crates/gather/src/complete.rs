//! What the judge reads besides the cluster's objects, gathered before it: the Helm releases
//! decoded, what the registries say the images' tags resolve to, what each `--version-url`
//! answers, and with `--commit` what `--repo` says (whether each GitOps revision contains the
//! commit, what it did to each chart, what the repository holds after it). Git is asked on a
//! blocking thread and each question once per command: a `--wait` completes many snapshots.
//! After [`Completion::complete`] the judge needs no further read.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use liveproof_evidence::hint::Hinted as _;
use liveproof_evidence::history;
use liveproof_evidence::{
    resolve_targets, Change, ChartChange, Containment, Observed, ReleaseHistory, Target,
};
use liveproof_helm::StorageObject;

use crate::reach::Reach;
use crate::registry::{FactsError, RegistryFacts};
use crate::releases::DecodeCache;

/// With `--wait`: the command's `--timeout`, and when work whose result must still be reported
/// stops (its deadline's `work_until`).
#[derive(Debug, Clone, Copy)]
pub struct Wait {
    pub work_until: std::time::Instant,
    pub timeout: Duration,
}

/// What completing a snapshot needs from the command: the change, `--repo`, the limits, and
/// the command's caches (shared by every snapshot it judges).
pub struct Completion<'a> {
    pub change: &'a Change,
    /// `--repo`: where `--commit` is read from.
    pub repo: &'a Path,
    pub wait: Option<Wait>,
    /// `--max-release-size`.
    pub max_release_size: usize,
    /// `--request-timeout`.
    pub request_timeout: Duration,
    /// `--insecure-registry`.
    pub insecure_registries: &'a [String],
    /// What a `--version-url` read may reach (`None`: the URLs the user typed).
    pub reach: Option<&'a Reach>,
    pub decode_cache: &'a DecodeCache,
    /// Whether each GitOps revision contains `--commit`.
    pub containment: &'a Mutex<BTreeMap<String, Containment>>,
    /// What `--commit` did to each chart (`None`: git has no such facts).
    pub chart_facts: &'a Mutex<BTreeMap<String, Option<ChartChange>>>,
    /// The manifests as of a commit under a path.
    pub manifests: &'a Mutex<BTreeMap<String, history::CommitManifests>>,
    /// The later commits that touched each `-f` path.
    pub later: &'a Mutex<BTreeMap<String, Result<Vec<String>, String>>>,
}

/// A snapshot that cannot be judged: the one release asked about cannot be read. Each
/// variant is an error of its own (with its hint) once handed on.
#[derive(Debug, thiserror::Error)]
pub enum Incomplete {
    #[error(transparent)]
    Unreadable(#[from] UnreadableRelease),
    #[error(transparent)]
    OutOfTime(#[from] DecodeOutOfTime),
}

/// A release whose storage cannot be decoded, when it is all that was asked about: an
/// operational error (exit 2) rather than a report that can only say "unproven".
#[derive(Debug, thiserror::Error)]
#[error("{target}: the release storage cannot be read: {error}")]
pub struct UnreadableRelease {
    pub target: String,
    /// The kubectl command that shows the storage object.
    pub inspect: String,
    pub error: String,
}

impl liveproof_evidence::hint::Hinted for UnreadableRelease {
    fn hint(&self) -> Option<Cow<'_, str>> {
        let UnreadableRelease { inspect, .. } = self;
        Some(Cow::Owned(format!(
            "inspect it with `{inspect}`; `liveproof release show` decodes it the same way"
        )))
    }
}

/// The `--timeout` ran out while a release was still being decoded: nothing about it could
/// be judged in time.
#[derive(Debug, thiserror::Error)]
#[error("{target}: --timeout {} ran out while decoding the release in {object}", crate::live::humanize(*timeout))]
pub struct DecodeOutOfTime {
    pub target: String,
    pub object: StorageObject,
    pub timeout: std::time::Duration,
}

impl liveproof_evidence::hint::Hinted for DecodeOutOfTime {
    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed("a release this large takes a while to read; give a longer --timeout (or check `--max-release-size`)"))
    }
}

impl Completion<'_> {
    /// How Helm releases are decoded: `--max-release-size`, and with `--wait` the deadline, so
    /// a large release stops being read (and is then unknown) when `--timeout` runs out.
    pub fn release_limits(&self) -> liveproof_helm::Limits {
        liveproof_helm::Limits {
            max_decompressed: self.max_release_size,
            // Decoding stops early enough that what was decoded can still be judged and
            // reported before the command's deadline.
            deadline: self.wait.map(|w| w.work_until),
            ..liveproof_helm::Limits::default()
        }
    }

    /// What the registries say about the images `observed` runs (live, the cluster is asked
    /// for nodes and pull secrets too); asked once per command and laid onto each snapshot.
    pub async fn registry_facts(
        &self,
        cluster: Option<&crate::Cluster>,
        observed: &Observed,
    ) -> Result<RegistryFacts, FactsError> {
        RegistryFacts::gather(
            self.change.digests,
            self.insecure_registries,
            self.request_timeout,
            cluster,
            observed,
            &self
                .change
                .digest_images()
                .map(|i| i.given.clone())
                .collect::<Vec<_>>(),
        )
        .await
    }

    /// The gather step of `server_version`: what each `--version-url` answers now, into
    /// `observed` (nothing is asked when none is given).
    pub async fn read_versions(&self, observed: &mut Observed) {
        if self.change.versions.is_empty() {
            return;
        }
        let typed;
        let reach = match self.reach {
            Some(reach) => reach,
            None => {
                typed = Reach::typed(self.change.versions.iter().map(|v| v.url.expose()));
                &typed
            }
        };
        observed.versions =
            crate::version::read_versions(&self.change.versions, self.request_timeout, 2, reach)
                .await;
    }

    /// Completes one snapshot with what the flags say about decoding and about the commit
    /// (Helm releases decoded, `facts` laid on, git asked, both off the runtime and each once
    /// per command): after it, the judge reads nothing but `observed`. The targets as the
    /// checks judge them; an error when the one release asked about cannot be read.
    pub async fn complete(
        &self,
        facts: &RegistryFacts,
        observed: &mut Observed,
        given: &[Target],
        default_ns: &str,
        all_namespaces: bool,
    ) -> Result<Vec<Target>, Incomplete> {
        let limits = self.release_limits();
        crate::releases::decode(observed, limits, self.decode_cache).await;
        facts.apply(observed);
        let targets = resolve_targets(observed, given, default_ns, all_namespaces);
        observed.chart_changes = self.chart_changes(observed, &targets, default_ns).await;
        observed.containment = self.containment(observed).await;
        observed.history = self.history(observed, &targets, default_ns).await;
        if let [only] = targets.as_slice() {
            if let Some((object, error)) = unreadable_release(observed, only, default_ns) {
                // Past the deadline decoding was given (`work_until`, before the command's own).
                if let (Some(wait), true) = (self.wait, limits.out_of_time()) {
                    return Err(DecodeOutOfTime {
                        target: only.to_string(),
                        object,
                        timeout: wait.timeout,
                    }
                    .into());
                }
                return Err(UnreadableRelease {
                    target: only.to_string(),
                    inspect: kubectl_get(&object),
                    error,
                }
                .into());
            }
        }
        Ok(targets)
    }

    /// With `--commit`: whether each GitOps revision the objects name contains the commit (the
    /// commit or a descendant), from `--repo`'s history; each revision is asked of git once per
    /// command.
    pub async fn containment(
        &self,
        observed: &Observed,
    ) -> std::collections::BTreeMap<String, liveproof_evidence::Containment> {
        let Some(commit) = &self.change.commit else {
            return Default::default();
        };
        let revisions = liveproof_evidence::revisions_to_trace(observed, commit);
        let (repo, commit) = (self.repo.to_path_buf(), commit.clone());
        // A revision git could not be asked about is left out: judged by equality alone.
        ask_git_once(self.containment, &revisions, move |rev| {
            crate::git::containment(&repo, &commit, rev)
        })
        .await
    }

    /// With `--commit`: what `--repo` holds after it, for `superseded` — the manifests under each
    /// GitOps target's path as of the commit and as of its applied revision when that strictly
    /// descends from it, and for each `-f` path read as of the commit, the later commits that
    /// touched it (at most [`history::LATER_COMMITS`]) with the manifests there as of each. Asked
    /// of git once per command; nothing more is asked once the `--timeout` (with `--wait`) is
    /// near, and what was not read then is said to be unread.
    pub async fn history(
        &self,
        observed: &Observed,
        targets: &[Target],
        default_ns: &str,
    ) -> history::History {
        let Some(commit) = &self.change.commit else {
            return Default::default();
        };
        let until = self.wait.map(|w| w.work_until);
        let out_of_time = move || until.is_some_and(|at| std::time::Instant::now() >= at);
        const LATE: &str = "the --timeout ran out before git was asked";
        let mut paths: Vec<history::RepoPath> = self
            .change
            .declared
            .iter()
            .filter_map(|d| d.repo_path.clone())
            .collect();
        paths.sort();
        paths.dedup();
        let path_key =
            |p: &history::RepoPath| format!("{}\0{}\0{}", p.path, p.recursive, p.from_top);
        let by_key: std::collections::BTreeMap<String, history::RepoPath> =
            paths.iter().map(|p| (path_key(p), p.clone())).collect();
        let keys: Vec<String> = by_key.keys().cloned().collect();
        let (repo, asked) = (self.repo.to_path_buf(), commit.clone());
        let listed = ask_git_once(self.later, &keys, move |key| {
            if out_of_time() {
                return Err(LATE.to_string());
            }
            let Some(path) = by_key.get(key) else {
                return Err("not asked".to_string());
            };
            crate::git::later_commits(&repo, &asked, path, history::LATER_COMMITS)
                .map_err(|e| e.with_hint().to_string())
        })
        .await;
        let later: Vec<(history::RepoPath, Result<Vec<String>, String>)> = paths
            .iter()
            .filter_map(|p| Some((p.clone(), listed.get(&path_key(p))?.clone())))
            .collect();
        let mut wanted =
            liveproof_evidence::manifests_to_read(observed, self.change, targets, default_ns);
        for (path, commits) in &later {
            for sha in commits.iter().flatten() {
                wanted.push((sha.clone(), path.clone()));
            }
        }
        let manifest_key =
            |(commit, path): &(String, history::RepoPath)| format!("{commit}\0{}", path_key(path));
        let requests: std::collections::BTreeMap<String, (String, history::RepoPath)> = wanted
            .iter()
            .map(|w| (manifest_key(w), w.clone()))
            .collect();
        // Asked in the order wanted (the GitOps targets' commits, then each path's later commits
        // newest first), so a budget that runs out leaves the oldest unread.
        let mut keys: Vec<String> = Vec::new();
        for key in wanted.iter().map(manifest_key) {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let repo = self.repo.to_path_buf();
        let budget = std::sync::atomic::AtomicU64::new(history::MAX_TOTAL_BYTES);
        let read = ask_git_once(self.manifests, &keys, move |key| {
            let Some((commit, path)) = requests.get(key) else {
                return history::CommitManifests {
                    commit: String::new(),
                    path: history::RepoPath::new("", false, false),
                    read: Err("not asked".into()),
                };
            };
            if out_of_time() {
                return history::CommitManifests {
                    commit: commit.to_ascii_lowercase(),
                    path: path.clone(),
                    read: Err(LATE.into()),
                };
            }
            let left = budget.load(std::sync::atomic::Ordering::Relaxed);
            if left == 0 {
                return history::CommitManifests {
                    commit: commit.to_ascii_lowercase(),
                    path: path.clone(),
                    read: Err(format!(
                        "the {} bytes of manifests one judgement reads were read already",
                        history::MAX_TOTAL_BYTES
                    )),
                };
            }
            let read =
                crate::git::manifests_within(&repo, commit, path, left.min(history::MAX_BYTES));
            if let Ok(r) = &read.read {
                budget.store(
                    left.saturating_sub(r.bytes),
                    std::sync::atomic::Ordering::Relaxed,
                );
            }
            read
        })
        .await;
        history::History {
            manifests: keys.iter().filter_map(|k| read.get(k).cloned()).collect(),
            later,
        }
    }

    /// For the targets that deploy a chart from a source (a HelmRelease), with `--commit`: what
    /// the commit did to the chart, from `--repo`.
    /// Without a repository that holds the commit, there is simply no such fact.
    pub async fn chart_changes(
        &self,
        observed: &Observed,
        targets: &[Target],
        default_ns: &str,
    ) -> Vec<ChartChange> {
        let Some(commit) = &self.change.commit else {
            return Vec::new();
        };
        let charts: Vec<String> = targets
            .iter()
            .filter_map(|t| liveproof_evidence::releases::chart_path(observed, t, default_ns))
            .collect();
        let (repo, commit) = (self.repo.to_path_buf(), commit.clone());
        let known =
            ask_git_once(
                self.chart_facts,
                &charts,
                move |chart| match crate::git::chart_change(&repo, &commit, chart) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        tracing::info!("no chart facts for {chart} from git: {}", e.with_hint());
                        None
                    }
                },
            )
            .await;
        charts
            .iter()
            .filter_map(|chart| known.get(chart).cloned().flatten())
            .collect()
    }
}

/// `apps/Secret/NAME` → `kubectl -n apps get secret NAME -o yaml`.
pub fn kubectl_get(object: &StorageObject) -> String {
    let kind = object.driver.kind().to_ascii_lowercase();
    match object.namespace.as_str() {
        "" => format!("kubectl get {kind} {} -o yaml", object.name),
        ns => format!("kubectl -n {ns} get {kind} {} -o yaml", object.name),
    }
}

/// The newest revision's storage error of the Helm release a target installs, if any.
fn unreadable_release(
    observed: &Observed,
    target: &Target,
    default_ns: &str,
) -> Option<(StorageObject, String)> {
    let (storage_ns, name) =
        liveproof_evidence::releases::installed_by(observed, target, default_ns)?;
    let history = ReleaseHistory::read(observed, &storage_ns, &name);
    history
        .newest_unreadable()
        .map(|(object, _, error)| (object.clone(), error.clone()))
}

/// Each of `keys` that `cache` does not hold yet, asked of git with `ask` on a blocking
/// thread (git is a process, and a slow one must not stall the runtime), then the cache: a
/// command asks git about each key once, however many snapshots name it. The answers for
/// `keys`; a key whose question failed to run is left out.
pub async fn ask_git_once<V: Clone + Send + 'static>(
    cache: &std::sync::Mutex<std::collections::BTreeMap<String, V>>,
    keys: &[String],
    ask: impl Fn(&str) -> V + Send + 'static,
) -> std::collections::BTreeMap<String, V> {
    let unknown: Vec<String> = {
        let known = lock(cache);
        keys.iter()
            .filter(|key| !known.contains_key(*key))
            .cloned()
            .collect()
    };
    if !unknown.is_empty() {
        let asked = tokio::task::spawn_blocking(move || {
            unknown
                .into_iter()
                .map(|key| {
                    let answer = ask(&key);
                    (key, answer)
                })
                .collect::<Vec<_>>()
        })
        .await;
        match asked {
            Ok(asked) => lock(cache).extend(asked),
            Err(e) => tracing::warn!("asking git failed: {e}"),
        }
    }
    let known = lock(cache);
    keys.iter()
        .filter_map(|key| Some((key.clone(), known.get(key)?.clone())))
        .collect()
}

/// A command's cache, even if a thread that held it panicked (what it holds stays true).
fn lock<T>(cache: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use liveproof_evidence::TargetKind;

    /// The command's caches, as a `Completion` borrows them.
    #[derive(Default)]
    struct Caches {
        decode: DecodeCache,
        containment: Mutex<BTreeMap<String, Containment>>,
        chart_facts: Mutex<BTreeMap<String, Option<ChartChange>>>,
        manifests: Mutex<BTreeMap<String, history::CommitManifests>>,
        later: Mutex<BTreeMap<String, Result<Vec<String>, String>>>,
    }

    fn completion<'a>(
        change: &'a Change,
        repo: &'a Path,
        caches: &'a Caches,
        wait: Option<Wait>,
    ) -> Completion<'a> {
        Completion {
            change,
            repo,
            wait,
            max_release_size: liveproof_helm::Limits::default().max_decompressed,
            request_timeout: Duration::from_secs(5),
            insecure_registries: &[],
            reach: None,
            decode_cache: &caches.decode,
            containment: &caches.containment,
            chart_facts: &caches.chart_facts,
            manifests: &caches.manifests,
            later: &caches.later,
        }
    }

    /// `--commit SHA --since …`: the change time stated, so the commit's own is not asked.
    fn change(commit: &str) -> Change {
        Change {
            commit: Some(commit.to_string()),
            since: Some("2026-07-12T10:00:00Z".parse().expect("a time")),
            ..Change::default()
        }
    }

    /// Chart facts are read from git once per command and kept, answers and failures alike:
    /// a `--wait` judges many snapshots, and ran about six git processes per HelmRelease on
    /// each. Shown with a `--repo` that is not a repository: what is known is used, and a
    /// chart git could not answer for is not asked about again.
    #[tokio::test]
    async fn chart_facts_are_read_once_per_command() {
        let dir = tempfile::tempdir().expect("tempdir");
        let change = change("0123456789abcdef0123456789abcdef01234567");
        let caches = Caches::default();
        let completion = completion(&change, dir.path(), &caches, None);
        let release = |name: &str, chart: &str| {
            serde_json::json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": name, "namespace": "apps"},
                "spec": {"chart": {"spec": {"chart": chart}}}})
        };
        let observed = Observed {
            others: vec![release("web", "charts/web"), release("api", "charts/api")],
            ..Observed::default()
        };
        let known = ChartChange {
            commit: "0123456".into(),
            chart_path: "charts/web".into(),
            files: vec!["charts/web/values.yaml".into()],
            version_changed: false,
        };
        lock(&caches.chart_facts).insert("charts/web".into(), Some(known.clone()));
        let web = [Target::new(TargetKind::HelmRelease, Some("apps"), "web")];
        assert_eq!(
            completion.chart_changes(&observed, &web, "apps").await,
            [known]
        );

        let api = [Target::new(TargetKind::HelmRelease, Some("apps"), "api")];
        assert!(completion
            .chart_changes(&observed, &api, "apps")
            .await
            .is_empty());
        assert_eq!(
            lock(&caches.chart_facts).get("charts/api"),
            Some(&None),
            "a chart git could not answer for is remembered as such"
        );
    }

    /// What `--repo` holds after the commit is read from git once per command and kept, what
    /// git could not answer too: a `--wait` judges many snapshots naming the same revision.
    /// Shown with a `--repo` that is not a repository: the manifests already known are used
    /// and not asked again; those git could not read are remembered as unread.
    #[tokio::test]
    async fn history_is_read_once_per_command() {
        use liveproof_evidence::history::{CommitManifests, ReadManifests, RepoPath};
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().to_str().expect("utf-8");
        let (b, c) = ("b".repeat(40), "c".repeat(40));
        let change = change(&b);
        let caches = Caches::default();
        let completion = completion(&change, dir.path(), &caches, None);
        let mut observed = Observed::default();
        observed
            .add_value(
                serde_json::json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
                    "kind": "Kustomization", "metadata": {"name": "apps", "namespace": "flux-system"},
                    "spec": {"path": "./apps", "sourceRef": {"kind": "GitRepository", "name": "apps"}},
                    "status": {"lastAppliedRevision": format!("main@sha1:{c}")}}),
                "test",
            )
            .expect("a Kustomization");
        observed
            .containment
            .insert(c.clone(), Containment::Contains);
        let path = RepoPath::new("apps", true, true);
        let known = CommitManifests {
            commit: c.clone(),
            path: path.clone(),
            read: Ok(ReadManifests {
                sha: c.clone(),
                committed: "2026-07-12T10:05:00Z".parse().expect("a time"),
                files: Vec::new(),
                bytes: 0,
            }),
        };
        let key = format!("{c}\0apps\0true\0true");
        lock(&caches.manifests).insert(key.clone(), known.clone());
        let targets = [Target::new(
            TargetKind::Kustomization,
            Some("flux-system"),
            "apps",
        )];
        let read = completion.history(&observed, &targets, "flux-system").await;
        assert_eq!(read.manifests.len(), 2, "{read:#?}");
        assert!(read.manifests.contains(&known), "the one known is used");
        let unread = read
            .manifests
            .iter()
            .find(|m| m.commit == b)
            .expect("B's manifests asked");
        assert!(
            unread.read.as_ref().is_err_and(|e| e.contains(repo)),
            "{unread:#?}"
        );
        let cache = lock(&caches.manifests);
        assert_eq!(cache.len(), 2, "both answers kept for the next snapshot");
        assert_eq!(cache.get(&key), Some(&known));
    }

    /// Decoding stops at the wait's `work_until`, before the command's own deadline: a
    /// release cut off there is the deadline's doing (DecodeOutOfTime, naming --timeout), not
    /// storage that "cannot be read".
    #[tokio::test]
    async fn a_release_cut_off_by_the_decoding_deadline_is_out_of_time() {
        let change = Change {
            since: Some("2026-07-12T10:00:00Z".parse().expect("a time")),
            ..Change::default()
        };
        let caches = Caches::default();
        // Decoding's deadline has passed; the command's has not.
        let wait = Wait {
            work_until: std::time::Instant::now(),
            timeout: Duration::from_secs(600),
        };
        let completion = completion(&change, Path::new("."), &caches, Some(wait));
        let mut observed = Observed::default();
        observed
            .add_value(
                liveproof_helm::encode_secret(&serde_json::json!({
                    "name": "web", "namespace": "apps", "version": 1,
                    "info": {"status": "deployed"},
                    "chart": {"metadata": {"name": "web", "version": "1.0.0"}},
                    "manifest": "",
                })),
                "test",
            )
            .expect("a storage Secret");
        let web = [Target::new(TargetKind::Release, Some("apps"), "web")];
        let error = completion
            .complete(
                &RegistryFacts::default(),
                &mut observed,
                &web,
                "apps",
                false,
            )
            .await
            .expect_err("nothing could be judged");
        assert!(matches!(error, Incomplete::OutOfTime(_)), "{error}");
        assert!(error.to_string().contains("--timeout 10m"), "{error}");
    }
}
