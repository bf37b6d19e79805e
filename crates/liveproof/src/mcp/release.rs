//! The release_show tool's arguments, made into the CLI's own [`ReleaseShowArgs`] in plain
//! Rust: never `--show-values` (the tool has no way to ask for it).

use std::path::PathBuf;

use serde::Deserialize;

use crate::cli::{ClusterArgs, ReleaseShowArgs, Verbosity, DEFAULT_REQUEST_TIMEOUT};

/// What `release_show` shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    /// Chart, version, status and times (`helm get metadata`).
    #[default]
    Metadata,
    /// The rendered manifest (`helm get manifest`; rendered Secrets redacted).
    Manifest,
    /// The user-supplied values, always redacted over MCP.
    Values,
    /// Every revision (`helm history`).
    History,
}

/// `release_show`'s arguments (never a way to show values).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseInput {
    /// The release name.
    pub name: String,
    /// The release's namespace (default: the kubeconfig context's).
    pub namespace: Option<String>,
    /// A revision other than the newest.
    #[schemars(range(min = 1))]
    pub revision: Option<i64>,
    /// What to show.
    #[serde(default)]
    pub section: Section,
    /// Path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    pub context: Option<String>,
    /// Read objects from this file or directory of YAML/JSON (what `kubectl get -o yaml`
    /// prints) instead of a cluster.
    pub from: Option<PathBuf>,
}

impl ReleaseInput {
    /// What `liveproof release show` with the same flags would be given; never
    /// `--show-values`: over MCP, values are always redacted.
    pub fn into_args(self) -> ReleaseShowArgs {
        ReleaseShowArgs {
            log: Verbosity::default(),
            name: self.name,
            revision: self.revision,
            manifest: self.section == Section::Manifest,
            metadata: self.section == Section::Metadata,
            values: self.section == Section::Values,
            history: self.section == Section::History,
            show_values: false,
            max_release_size: liveproof_helm::DEFAULT_MAX_RELEASE_SIZE,
            from: self.from,
            cluster: ClusterArgs {
                namespace: self.namespace,
                all_namespaces: false,
                kubeconfig: self.kubeconfig,
                context: self.context.into_iter().collect(),
                request_timeout: DEFAULT_REQUEST_TIMEOUT.to_string(),
                max_response_size: None,
            },
        }
    }
}

/// A release_show call as the command line it stands for, for the server's log.
pub fn shown(args: &ReleaseShowArgs) -> String {
    let mut words = vec!["release".to_string(), "show".into()];
    let k = &args.cluster;
    let options = [
        ("namespace", k.namespace.clone()),
        (
            "kubeconfig",
            k.kubeconfig.as_ref().map(|p| p.display().to_string()),
        ),
        ("context", k.context.first().cloned()),
        ("revision", args.revision.map(|r| r.to_string())),
        ("from", args.from.as_ref().map(|p| p.display().to_string())),
    ];
    for (flag, value) in options {
        if let Some(v) = value {
            words.push(format!("--{flag}={v}"));
        }
    }
    for (flag, on) in [
        ("metadata", args.metadata),
        ("manifest", args.manifest),
        ("values", args.values),
        ("history", args.history),
    ] {
        if on {
            words.push(format!("--{flag}"));
        }
    }
    words.extend(["--".to_string(), args.name.clone()]);
    words.join(" ")
}
