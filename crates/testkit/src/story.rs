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
    /// `live`, `not_live` or `unproven`.
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
    /// When the change's commit was made: the corpus commits at that time in a repository of
    /// its own and adds `--commit SHA --repo DIR` to `args`.
    #[serde(default)]
    pub committed_at: Option<String>,
    /// The report's `lead_time_seconds`, to the second (none when not given).
    #[serde(default)]
    pub lead_time_seconds: Option<i64>,
    /// The answer is settled (a failure final for the change, an unknown nothing later
    /// decides): on the simulator, `--wait` ends at once with the story's verdict, not at its
    /// `--timeout`, and the report's note says why, with this text in it (the controller's own
    /// message, or the tie).
    #[serde(default)]
    pub wait_stops: Option<String>,
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
