//! The story corpus: each folder of `test-data/scenarios` holds `cluster.yaml` (what the
//! cluster holds) and `story.yaml` (what happened, the `verify` arguments, and what liveproof
//! must find: the verdict, the failing and the unknown checks, and the modes it runs in).

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One story of the corpus.
#[derive(Debug, Clone, Deserialize)]
pub struct Story {
    /// The folder's name.
    #[serde(skip)]
    pub name: String,
    /// The folder.
    #[serde(skip)]
    pub dir: PathBuf,
    /// What happened, in words.
    #[serde(default)]
    pub story: String,
    /// The `verify` arguments (targets and change flags).
    pub args: Vec<String>,
    /// `live`, `not_live`, `unproven` or `superseded`.
    pub verdict: String,
    /// The checks that must fail.
    #[serde(default)]
    pub fail: Vec<String>,
    /// The checks that must be unknown.
    #[serde(default)]
    pub unknown: Vec<String>,
    /// `offline` (`--from cluster.yaml`) and/or `live` (the simulator serving it).
    #[serde(default)]
    pub modes: Vec<String>,
    /// The `live_since` each target must report, by `Kind/namespace/name`
    /// (`StatefulSet/payments/ledger`); a target not named may carry none only when not live.
    #[serde(default)]
    pub live_since: std::collections::BTreeMap<String, String>,
    /// The verdict each target the story names must have, by `Kind/namespace/name` (a
    /// workload reached through a Helm or GitOps target too: every object is reported once).
    #[serde(default)]
    pub verdicts: std::collections::BTreeMap<String, String>,
    /// When the change's commit was made: the corpus commits at that time in a repository of
    /// its own and adds `--commit SHA --repo DIR` to `args`.
    #[serde(default)]
    pub committed_at: Option<String>,
    /// The report's `lead_time_seconds`, to the second (none when not given).
    #[serde(default)]
    pub lead_time_seconds: Option<i64>,
    /// What superseded each target the story names, by `Kind/namespace/name`: each field given
    /// must be the report's `superseded_by` (a target named must have one).
    #[serde(default)]
    pub superseded_by: std::collections::BTreeMap<String, SupersededBy>,
    /// Commits made in order in a repository of the story's own, each at its time by the
    /// testkit's author ([`crate::git`]), so their SHAs are the same on every machine and the
    /// cluster can name them (a GitOps revision after the change). The one marked `change` is
    /// given as `--commit`, and the repository as `--repo` ([`Story::repository`]).
    #[serde(default)]
    pub history: Vec<StoryCommit>,
    /// The answer is settled (a failure final for the change, an unknown nothing later
    /// decides): on the simulator, `--wait` ends at once with the story's verdict, not at its
    /// `--timeout`, and the report's note says why, with this text in it (the controller's own
    /// message, or the tie).
    #[serde(default)]
    pub wait_stops: Option<String>,
}

/// What a story says superseded a target: the fields it gives of the report's `superseded_by`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SupersededBy {
    /// `apps/inventory-6c8dq9zr2m (revision 36)`, `apps/inventory.v36 (chart inventory-0.4.4)`.
    #[serde(default)]
    pub revision: Option<String>,
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(default)]
    pub images: Option<Vec<String>>,
    #[serde(default)]
    pub at: Option<String>,
    #[serde(default)]
    pub live: Option<bool>,
}

impl SupersededBy {
    /// How `got` (a report's `superseded_by`) differs from what the story says, if it does.
    pub fn differences(&self, got: Option<&liveproof_evidence::SupersededBy>) -> Vec<String> {
        let Some(got) = got else {
            return vec!["no superseded_by".to_string()];
        };
        let mut out = Vec::new();
        let mut field = |name: &str, want: Option<String>, got: Option<String>| {
            if want.is_some() && want != got {
                out.push(format!("{name}: {got:?}, the story says {want:?}"));
            }
        };
        field("revision", self.revision.clone(), got.revision.clone());
        field("commit", self.commit.clone(), got.commit.clone());
        field(
            "images",
            self.images.as_ref().map(|i| i.join(", ")),
            Some(got.images.join(", ")),
        );
        field("at", self.at.clone(), got.at.clone());
        field(
            "live",
            self.live.map(|l| l.to_string()),
            got.live.map(|l| l.to_string()),
        );
        out
    }
}

/// One commit of a story's [`Story::history`].
#[derive(Debug, Clone, Deserialize)]
pub struct StoryCommit {
    /// The committer (and author) time, RFC 3339.
    pub at: String,
    pub message: String,
    /// Whether this is the change verified (`--commit`).
    #[serde(default)]
    pub change: bool,
    /// The files written before committing, by their path in the repository.
    #[serde(default)]
    pub files: std::collections::BTreeMap<String, String>,
}

/// The workspace's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `test-data/scenarios`.
pub fn scenarios_dir() -> PathBuf {
    repo_root().join("test-data/scenarios")
}

impl Story {
    /// The story in `test-data/scenarios/NAME`.
    pub fn load(name: &str) -> Result<Story, String> {
        Story::from_dir(&scenarios_dir().join(name))
    }

    /// Every story of the corpus, by name.
    pub fn all() -> Result<Vec<Story>, String> {
        let dir = scenarios_dir();
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("story.yaml").exists())
            .collect();
        dirs.sort();
        dirs.iter().map(|d| Story::from_dir(d)).collect()
    }

    fn from_dir(dir: &Path) -> Result<Story, String> {
        let path = dir.join("story.yaml");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut story: Story =
            serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        story.name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        story.dir = dir.to_path_buf();
        Ok(story)
    }

    /// The story's repository with its [`history`](Story::history) committed, and the SHA of
    /// the commit marked `change` (else of the last); `None` without a history.
    pub fn repository(&self) -> Option<(crate::git::Repo, String)> {
        if self.history.is_empty() {
            return None;
        }
        let repo = crate::git::Repo::new();
        let path = repo.path();
        let mut shas = Vec::new();
        for commit in &self.history {
            for (file, text) in &commit.files {
                repo.file(file, text);
            }
            crate::git::git_at(&path, &["add", "-A"], &commit.at);
            let message = ["commit", "-q", "--allow-empty", "-m", &commit.message];
            crate::git::git_at(&path, &message, &commit.at);
            shas.push(crate::git::git_at(
                &path,
                &["rev-parse", "HEAD"],
                &commit.at,
            ));
        }
        let change = self
            .history
            .iter()
            .position(|c| c.change)
            .unwrap_or(shas.len() - 1);
        let sha = shas.swap_remove(change);
        Some((repo, sha))
    }

    /// What the cluster holds: `cluster.yaml`.
    pub fn cluster_yaml(&self) -> PathBuf {
        self.dir.join("cluster.yaml")
    }

    /// Whether the story runs in `mode` (`offline` or `live`).
    pub fn runs(&self, mode: &str) -> bool {
        self.modes.iter().any(|m| m == mode)
    }

    /// The namespace its arguments name (`-n`), or `default`.
    pub fn namespace(&self) -> String {
        self.args
            .windows(2)
            .find(|w| w[0] == "-n" || w[0] == "--namespace")
            .map(|w| w[1].clone())
            .unwrap_or_else(|| "default".to_string())
    }
}

/// The names of the checks of `report` with `status`: what a story's `fail` and `unknown`
/// lists are compared with.
pub fn checks_with(
    report: &liveproof_evidence::Report,
    status: liveproof_evidence::Status,
) -> std::collections::BTreeSet<String> {
    report
        .targets
        .iter()
        .flat_map(|t| t.evidence.iter())
        .filter(|e| e.status == status)
        .map(|e| e.check.name().to_string())
        .collect()
}
