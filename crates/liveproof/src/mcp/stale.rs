//! The stale and restart_stale tools' arguments, made into the CLI's own [`StaleArgs`] in
//! plain Rust.

use std::path::PathBuf;

use serde::Deserialize;

use crate::cli::{ClusterArgs, StaleArgs, Verbosity, DEFAULT_REQUEST_TIMEOUT, DEFAULT_TIMEOUT};

/// `stale`'s arguments: its scope.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StaleInput {
    /// Workloads to check: KIND/NAME or NAMESPACE/KIND/NAME (deployment, statefulset,
    /// daemonset).
    #[serde(default)]
    pub targets: Vec<String>,
    /// The namespace to check (default: the kubeconfig context's).
    pub namespace: Option<String>,
    /// Check every workload in every namespace.
    #[serde(default)]
    pub all_namespaces: bool,
    /// Check only the workloads these manifests declare (a file or a directory of YAML/JSON).
    pub manifests: Option<PathBuf>,
    /// Check every tagged image, not only mutable ones (no tag, `:latest`).
    #[serde(default)]
    pub check_digests: bool,
    /// Registries (HOST[:PORT]) spoken to over plain HTTP.
    #[serde(default)]
    pub insecure_registry: Vec<String>,
    /// Path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    pub context: Option<String>,
}

/// `restart_stale`'s arguments: `stale`'s scope, and `dry_run`. (Not `deny_unknown_fields`,
/// which serde cannot with `flatten`: `decode` refuses a field the schema does not have.)
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct RestartInput {
    #[serde(flatten)]
    pub scope: StaleInput,
    /// Say what would be patched, without sending anything.
    #[serde(default)]
    pub dry_run: bool,
}

impl StaleInput {
    /// What `liveproof stale -o json` with the same flags would be given; `restart`:
    /// `Some(dry_run)` for restart_stale (`--restart`, and `--dry-run` when asked).
    pub fn into_args(self, restart: Option<bool>) -> StaleArgs {
        StaleArgs {
            log: Verbosity::default(),
            targets: self.targets,
            selector: None,
            manifests: self.manifests,
            cluster: ClusterArgs {
                namespace: self.namespace,
                all_namespaces: self.all_namespaces,
                kubeconfig: self.kubeconfig,
                context: self.context.into_iter().collect(),
                request_timeout: DEFAULT_REQUEST_TIMEOUT.to_string(),
                max_response_size: None,
            },
            check_digests: self.check_digests,
            insecure_registry: self.insecure_registry,
            restart: restart.is_some(),
            dry_run: restart == Some(true),
            wait: false,
            timeout: DEFAULT_TIMEOUT.to_string(),
            output: liveproof_report::Format::Json,
        }
    }
}

impl RestartInput {
    pub fn into_args(self) -> StaleArgs {
        self.scope.into_args(Some(self.dry_run))
    }
}

/// A stale call as the command line it stands for, for the server's log.
pub fn shown(args: &StaleArgs) -> String {
    let mut words = vec!["stale".to_string(), "--output=json".into()];
    let k = &args.cluster;
    let mut options = vec![
        ("namespace", k.namespace.clone()),
        (
            "kubeconfig",
            k.kubeconfig.as_ref().map(|p| p.display().to_string()),
        ),
        ("context", k.context.first().cloned()),
        (
            "filename",
            args.manifests.as_ref().map(|p| p.display().to_string()),
        ),
    ];
    options.extend(
        args.insecure_registry
            .iter()
            .map(|r| ("insecure-registry", Some(r.clone()))),
    );
    for (flag, value) in options {
        if let Some(v) = value {
            words.push(format!("--{flag}={v}"));
        }
    }
    for (flag, on) in [
        ("all-namespaces", k.all_namespaces),
        ("check-digests", args.check_digests),
        ("restart", args.restart),
        ("dry-run", args.dry_run),
    ] {
        if on {
            words.push(format!("--{flag}"));
        }
    }
    if !args.targets.is_empty() {
        words.push("--".into());
        words.extend(args.targets.iter().cloned());
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::mcp::tools::tests::ready;
    use crate::mcp::tools::{run, Prepared};

    /// What clap refuses on the command line, release_show and stale refuse too, in its
    /// words with a hint: stale would otherwise check the manifests' workloads and silently
    /// drop the targets given with them.
    #[tokio::test]
    async fn clap_rules_hold_for_release_show_and_stale_too() {
        let nowhere = liveproof_gather::reach::Reach::allow_list(Vec::new());
        for (tool, arguments, said) in [
            (
                "stale",
                json!({"targets": ["deploy/web"], "manifests": "k8s/"}),
                "the argument '[TARGET]...' cannot be used with '--filename <PATH>'",
            ),
            (
                "release_show",
                json!({"name": "web", "from": "/nonexistent", "kubeconfig": "/nonexistent"}),
                "the argument '--from <PATH>' cannot be used with '--kubeconfig <PATH>'",
            ),
            (
                "release_show",
                json!({"name": "web", "from": "/nonexistent", "context": "prod"}),
                "the argument '--from <PATH>' cannot be used with '--context <NAME>'",
            ),
        ] {
            let result = run(ready(tool, arguments.clone()), &nowhere, true, None).await;
            assert_eq!(result["isError"], true, "{tool} {arguments}: {result}");
            let text = result["content"][0]["text"].as_str().expect("text");
            assert!(
                text.starts_with(&format!("{said}\nhint: ")),
                "{tool} {arguments}: {text}"
            );
        }
        // One that parses is not refused by a rule.
        assert!(matches!(
            crate::mcp::tools::prepare("stale", json!({"manifests": "k8s/"}), false),
            Prepared::Ready(_)
        ));
    }
}
