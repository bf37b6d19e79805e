//! Next steps a user can paste: every `liveproof …` and `kubectl …` command a report suggests
//! gets the flags the user gave (cluster, change, expectations), the program's own name
//! (`kubectl liveproof` when run as the plugin), and after a wait that ran out, a longer
//! timeout instead of the same `--wait` again.

use std::time::Duration;

use liveproof_evidence::server::WAIT_FOR_IT;
use liveproof_evidence::Report;
use liveproof_gather::live::humanize;

use crate::config::{Source, VerifyConfig};

/// What a suggested command must carry to mean what the user's own command meant.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    /// `liveproof`, or `kubectl liveproof` when run as the kubectl plugin.
    program: String,
    /// `--kubeconfig`/`--context`, for every command that reaches the cluster.
    cluster: Vec<String>,
    /// The change and its expectations, for `verify`.
    change: Vec<String>,
    /// `--insecure-registry`, for `verify` and `stale`: without it, a pasted command would
    /// speak HTTPS to a registry that serves plain HTTP.
    registries: Vec<String>,
    /// The `--timeout` of a `--wait` that has just ended.
    waited: Option<Duration>,
}

/// `liveproof`, or `kubectl liveproof` when this process is the `kubectl-liveproof` plugin.
pub fn program_name() -> String {
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let stem = std::path::Path::new(&argv0)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if stem == "kubectl-liveproof" {
        "kubectl liveproof".into()
    } else {
        "liveproof".into()
    }
}

impl Invocation {
    pub fn of(config: &VerifyConfig) -> Invocation {
        let mut cluster = Vec::new();
        if let Source::Live(options) = &config.source {
            if let Some(path) = &options.kubeconfig {
                cluster.extend(["--kubeconfig".into(), path.display().to_string()]);
            }
            if let Some(context) = &options.context {
                cluster.extend(["--context".into(), context.clone()]);
            }
        }
        let c = &config.change;
        let mut change = Vec::new();
        // The resolved time, not `10m`: a duration would mean a different time when pasted.
        if let Some(since) = c.since {
            change.extend(["--since".into(), since.to_string()]);
        }
        if let Some(commit) = &c.commit {
            change.extend(["--commit".into(), commit.clone()]);
            if config.repo != std::path::Path::new(".") {
                change.extend(["--repo".into(), config.repo.display().to_string()]);
            }
        }
        // -f states the change: a suggestion without it could never be live.
        let mut manifests: Vec<&str> = c.declared.iter().map(|d| d.given.as_str()).collect();
        manifests.dedup();
        for path in manifests {
            change.extend(["-f".into(), path.to_string()]);
        }
        let mut pairs = |flag: &str, values: Vec<String>| {
            for v in values {
                change.extend([flag.to_string(), v]);
            }
        };
        pairs(
            "--image",
            c.images.iter().map(|i| i.given.clone()).collect(),
        );
        pairs("--expect-env", c.env.clone());
        pairs(
            "--expect-secret-ref",
            c.secret_refs.iter().map(ToString::to_string).collect(),
        );
        pairs(
            "--expect",
            c.manifest.iter().map(|m| m.given.clone()).collect(),
        );
        pairs("--chart-version", c.chart_version.iter().cloned().collect());
        // Each URL with its own version (and field): the server_version check the verdict
        // waited on. A URL's password and query are shown masked, as everywhere: the pasted
        // command then says where to fill them in rather than printing them.
        for v in &c.versions {
            change.extend(["--version-url".into(), v.url.to_string()]);
            change.extend(["--expect-version".into(), v.expect.clone()]);
            if let Some(path) = &v.json_path {
                change.extend(["--version-json".into(), path.clone()]);
            }
        }
        // How the registry is asked is part of what the verdict meant.
        match c.digests {
            liveproof_evidence::digest::DigestPolicy::Off => change.push("--no-registry".into()),
            liveproof_evidence::digest::DigestPolicy::AllTags => {
                change.push("--check-digests".into())
            }
            liveproof_evidence::digest::DigestPolicy::Mutable => {}
        }
        let registries = config
            .insecure_registries
            .iter()
            .flat_map(|r| ["--insecure-registry".to_string(), r.clone()])
            .collect();
        Invocation {
            program: program_name(),
            cluster,
            change,
            registries,
            waited: config.wait.map(|d| d.timeout),
        }
    }

    /// Rewrites every target's next step (the report's own is drawn from them).
    pub fn apply(&self, report: &mut Report) {
        for target in &mut report.targets {
            if let Some(step) = &target.next_step {
                target.next_step = Some(self.rewrite(&self.after_wait(step)));
            }
        }
    }

    /// A server still not reporting its version after a wait that ran out: waiting again
    /// would end the same way, so the step says to find what serves the old build.
    fn after_wait(&self, step: &str) -> String {
        match (self.waited, step.strip_suffix(WAIT_FOR_IT)) {
            (Some(waited), Some(head)) => format!(
                "{head} (it did not within --timeout {}: find what still serves the old build before waiting longer)",
                humanize(waited)
            ),
            _ => step.to_string(),
        }
    }

    /// Each command in `step` made whole: it runs from `liveproof`/`kubectl` to the first `)`,
    /// `` ` `` or `;`, or the end.
    pub fn rewrite(&self, step: &str) -> String {
        let mut out = String::new();
        let mut rest = step;
        while let Some((at, kind)) = next_command(rest) {
            out.push_str(&rest[..at]);
            let tail = &rest[at..];
            let end = tail.find([')', '`', ';']).unwrap_or(tail.len());
            let (command, trailing) = tail[..end].split_at(tail[..end].trim_end().len());
            out.push_str(&self.complete(kind, command));
            out.push_str(trailing);
            rest = &tail[end..];
        }
        out.push_str(rest);
        out
    }

    fn complete(&self, kind: Command, command: &str) -> String {
        let mut words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
        let extra: Vec<&String> = match kind {
            Command::Kubectl => {
                // After `kubectl`, before the verb: kubectl takes global flags anywhere.
                let mut out = vec![words.remove(0)];
                out.extend(self.cluster.iter().cloned());
                out.extend(words);
                return out.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
            }
            Command::Verify => self
                .cluster
                .iter()
                .chain(&self.change)
                .chain(&self.registries)
                .collect(),
            Command::Stale => self.cluster.iter().chain(&self.registries).collect(),
        };
        // `liveproof` → the program's name; the user's flags the command does not set yet.
        words[0] = self.program.clone();
        let present: Vec<String> = words.clone();
        let mut pending = extra.into_iter().peekable();
        while let Some(flag) = pending.next() {
            let value = pending.next_if(|v| !v.starts_with("--"));
            let repeatable = matches!(
                flag.as_str(),
                "--image"
                    | "--expect-env"
                    | "--expect-secret-ref"
                    | "--expect"
                    | "--insecure-registry"
                    | "--version-url"
                    | "--expect-version"
                    | "--version-json"
            );
            if !repeatable && present.contains(flag) {
                continue;
            }
            words.push(flag.clone());
            if let Some(v) = value {
                words.push(v.clone());
            }
        }
        if let Some(waited) = self.waited {
            // The wait just ran out: the same --wait again would end the same way. Suggest
            // twice the time that was not enough (the report says what blocks).
            if let Some(i) = words.iter().position(|w| w == "--timeout") {
                if let Some(t) = words.get_mut(i + 1) {
                    // As every message writes a duration; `quote` keeps `1m 30s` one word.
                    *t = humanize(waited * 2);
                }
            }
        }
        let (program, args) = words
            .split_first()
            .map_or((String::new(), &[][..]), |(p, a)| (p.clone(), a));
        std::iter::once(program)
            .chain(args.iter().map(|w| quote(w)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Verify,
    Stale,
    Kubectl,
}

/// Where the next suggested command starts in `text`, and which it is.
fn next_command(text: &str) -> Option<(usize, Command)> {
    [
        ("liveproof verify ", Command::Verify),
        ("liveproof stale ", Command::Stale),
        ("kubectl ", Command::Kubectl),
    ]
    .iter()
    .filter_map(|(needle, kind)| {
        text.match_indices(needle)
            // A word of its own: not `kubectl-liveproof`, not `kubectl.kubernetes.io/…`.
            .find(|(at, _)| {
                *at == 0 || !text[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '-')
            })
            .map(|(at, _)| (at, *kind))
    })
    .min_by_key(|(at, _)| *at)
}

/// A word as a POSIX shell reads it back: as is when it is plain, else single-quoted.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,…".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of a command `quote` wrote, read back as a POSIX shell reads them.
    fn shell_words(command: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        let mut in_word = false;
        let mut chars = command.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\'' => {
                    quoted = !quoted;
                    in_word = true;
                }
                '\\' if !quoted => {
                    word.extend(chars.next());
                    in_word = true;
                }
                ' ' if !quoted => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                c => {
                    word.push(c);
                    in_word = true;
                }
            }
        }
        if in_word {
            words.push(word);
        }
        words
    }

    /// A suggested `liveproof verify`, pasted, states the same change as the command that
    /// suggested it: every statement, the digest policy and the registries carried over. A
    /// statement added to the CLI and forgotten here fails this test.
    #[test]
    fn a_pasted_verify_suggestion_states_the_same_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        let manifest = dir.path().join("web deploy.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: app\n        image: ghcr.io/acme/web:1.4.0\n",
        )
        .expect("manifest");
        let repo = dir.path().to_str().expect("utf-8");
        let manifest = manifest.to_str().expect("utf-8");
        let given = [
            "liveproof",
            "verify",
            "deploy/web",
            "-n",
            "apps",
            "--since",
            "2026-07-12T10:00:00Z",
            "-f",
            manifest,
            "--image",
            "ghcr.io/acme/web:1.4.0",
            "--expect-env",
            "DB_URL",
            "--expect-secret-ref",
            "web-db/password",
            "--expect",
            "re:replicas: [0-9]+",
            "--version-url",
            "https://web.example/version",
            "--expect-version",
            "1.4.0",
            "--version-json",
            ".build.tag",
            "--check-digests",
            "--insecure-registry",
            "registry.local:5000",
        ];
        // The command `args` make, its suggestion `verify TARGET -n apps`, and the configuration
        // that suggestion makes when pasted.
        let round_trip = |args: &[&str], target: &str| {
            let config = crate::config::verify_config(args);
            let suggested =
                Invocation::of(&config).rewrite(&format!("liveproof verify {target} -n apps"));
            let mut pasted = shell_words(&suggested);
            pasted[0] = "liveproof".into();
            let words: Vec<&str> = pasted.iter().map(String::as_str).collect();
            (config, crate::config::verify_config(&words), suggested)
        };
        let (config, again, suggested) = round_trip(&given, "deploy/web");
        assert_eq!(again.change, config.change, "{suggested}");
        assert_eq!(again.repo, config.repo, "{suggested}");
        assert_eq!(
            again.insecure_registries, config.insecure_registries,
            "{suggested}"
        );
        // A commit and its repository (-f is then read from the commit, so left out here).
        let mut committed = given.to_vec();
        committed.retain(|w| !["-f", manifest].contains(w));
        committed[2] = "release/web";
        committed.extend([
            "--chart-version",
            "1.2.3",
            "--commit",
            "0123456789abcdef0123456789abcdef01234567",
            "--repo",
            repo,
        ]);
        let (config, again, suggested) = round_trip(&committed, "release/web");
        assert_eq!(again.change, config.change, "{suggested}");
        assert_eq!(again.repo, config.repo, "{suggested}");
        // And the other digest policy, carried as its own flag.
        let mut off = given.to_vec();
        off.retain(|w| *w != "--check-digests");
        off.push("--no-registry");
        let (config, again, suggested) = round_trip(&off, "deploy/web");
        assert_eq!(again.change.digests, config.change.digests, "{suggested}");
    }

    fn invocation(waited: Option<Duration>) -> Invocation {
        Invocation {
            program: "kubectl liveproof".into(),
            cluster: vec!["--kubeconfig".into(), "/home/me/.kube/prod config".into()],
            change: vec![
                "--since".into(),
                "2026-07-12T10:00:00Z".into(),
                "--image".into(),
                "ghcr.io/acme/api:2".into(),
                "--expect".into(),
                "re:secretKeyRef:\\s+name".into(),
            ],
            registries: vec!["--insecure-registry".into(), "localhost:5000".into()],
            waited,
        }
    }

    /// A suggested verify carries the server versions the verdict waited on, each URL with
    /// its own version and field, the URL's password and query masked.
    #[test]
    fn verify_keeps_the_server_versions_it_was_given() {
        let config = crate::config::verify_config(&[
            "liveproof",
            "verify",
            "deploy/api",
            "--since",
            "2026-07-12T10:00:00Z",
            "--image",
            "a/b:2",
            "--version-url",
            "https://ops:s3cret@shop.example/version?token=t0ken",
            "--version-url",
            "https://api.example/info",
            "--expect-version",
            "1.4.0",
            "--expect-version",
            "2.0",
            "--version-json",
            ".version",
            "--version-json",
            ".build.tag",
        ]);
        let got = Invocation::of(&config).rewrite("wait (liveproof verify deployment/api --wait)");
        assert!(
            got.contains("--version-url 'https://ops:***@shop.example/version?token=***' --expect-version 1.4.0 --version-json .version --version-url https://api.example/info --expect-version 2.0 --version-json .build.tag"),
            "{got}"
        );
        assert!(!got.contains("s3cret") && !got.contains("t0ken"), "{got}");
    }

    #[test]
    fn commands_carry_the_users_flags_and_name() {
        let step = "wait for the rollout (liveproof verify deployment/api -n apps --wait --timeout 5m); or see kubectl -n apps describe deployment/api";
        let got = invocation(None).rewrite(step);
        assert_eq!(
            got,
            "wait for the rollout (kubectl liveproof verify deployment/api -n apps --wait --timeout 5m \
             --kubeconfig '/home/me/.kube/prod config' --since 2026-07-12T10:00:00Z --image ghcr.io/acme/api:2 \
             --expect 're:secretKeyRef:\\s+name' --insecure-registry localhost:5000); or see kubectl --kubeconfig '/home/me/.kube/prod config' -n apps describe deployment/api"
        );
    }

    #[test]
    fn after_a_wait_ran_out_the_timeout_is_longer() {
        let step = "wait for it: liveproof verify deployment/api -n apps --wait --timeout 5m";
        let got = invocation(Some(Duration::from_secs(600))).rewrite(step);
        assert!(got.contains("--timeout 20m"), "{got}");
        assert!(!got.contains("--timeout 5m"), "{got}");
        // A time that is not whole minutes is written as every message writes it, quoted as
        // one word, and --timeout reads it back.
        let got = invocation(Some(Duration::from_secs(45))).rewrite(step);
        assert!(got.contains("--timeout '1m 30s'"), "{got}");
        assert_eq!(
            crate::config::parse_duration("1m 30s").expect("a duration"),
            Duration::from_secs(90)
        );
    }

    #[test]
    fn a_server_not_reporting_after_a_wait_is_not_told_to_wait_again() {
        let step = format!("the server at https://shop.example/version does not report 1.4.0 yet: check which build serves it{WAIT_FOR_IT}");
        assert_eq!(invocation(None).after_wait(&step), step);
        let got = invocation(Some(Duration::from_secs(300))).after_wait(&step);
        assert_eq!(
            got,
            "the server at https://shop.example/version does not report 1.4.0 yet: check which build serves it \
             (it did not within --timeout 5m: find what still serves the old build before waiting longer)"
        );
    }

    #[test]
    fn verify_keeps_the_insecure_registry_it_was_given() {
        let got = invocation(None).rewrite("see liveproof verify deployment/api -n apps --wait");
        assert!(got.contains("--insecure-registry localhost:5000"), "{got}");
    }

    #[test]
    fn stale_gets_cluster_and_registry_flags_only() {
        let got = invocation(None).rewrite(
            "restart only what is stale: liveproof stale deployment/api -n apps --restart",
        );
        assert!(got.contains("--insecure-registry localhost:5000"), "{got}");
        assert!(
            !got.contains("--since"),
            "stale takes no change flags: {got}"
        );
    }

    #[test]
    fn words_that_only_contain_kubectl_are_left_alone() {
        let step =
            "the kubectl.kubernetes.io/restartedAt annotation; kubectl-liveproof is the plugin";
        assert_eq!(invocation(None).rewrite(step), step);
    }
}
