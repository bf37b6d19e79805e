//! Next steps a user can paste: every `liveproof …` and `kubectl …` command a report suggests
//! gets the flags the user gave (cluster, change, expectations), the program's own name
//! (`kubectl liveproof` when run as the plugin), and after a wait that ran out, a longer
//! timeout instead of the same `--wait` again. The steps hold their commands as commands
//! ([`Suggestion`]): completing one edits its words, it never searches the prose.

use std::time::Duration;

use liveproof_evidence::suggestion::{Command, Part, Program, Suggestion};
use liveproof_evidence::Report;
use liveproof_gather::live::humanize;

use crate::cli::ChangeArgs;
use crate::config::{Source, VerifyConfig};

/// What a suggested command must carry to mean what the user's own command meant.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// liveproof, or `kubectl liveproof` when run as the kubectl plugin.
    program: Program,
    /// `--kubeconfig`/`--context`, for every command that reaches the cluster.
    cluster: Vec<Flag>,
    /// The change and its expectations, for `verify`.
    change: Vec<Flag>,
    /// `--insecure-registry`, for `verify` and `stale`: without it, a pasted command would
    /// speak HTTPS to a registry that serves plain HTTP.
    registries: Vec<Flag>,
    /// The `--timeout` of a `--wait` that has just ended.
    waited: Option<Duration>,
}

/// A flag as given (`--since`, `-f`) and its value, if it takes one.
type Flag = (String, Option<String>);

/// liveproof, or `kubectl liveproof` when this process is the `kubectl-liveproof` plugin.
fn program() -> Program {
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let stem = std::path::Path::new(&argv0)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if stem == "kubectl-liveproof" {
        Program::KubectlPlugin
    } else {
        Program::Liveproof
    }
}

/// The statement a configuration verifies, as the CLI's own change flags: the resolved time
/// (not `10m`, which would mean a different time when pasted), the commit, each expectation as
/// the user gave it, and how the registry is asked.
fn stated(config: &VerifyConfig) -> ChangeArgs {
    let c = &config.change;
    let digests = c.digests;
    let versions = &c.versions;
    ChangeArgs {
        since: c.since.map(|t| t.to_string()),
        commit: c.commit.clone(),
        repo: if c.commit.is_some() {
            config.repo.clone()
        } else {
            ".".into()
        },
        image: c.images.iter().map(|i| i.given.clone()).collect(),
        expect_env: c.env.clone(),
        expect_secret_ref: c.secret_refs.iter().map(ToString::to_string).collect(),
        chart_version: c.chart_version.clone(),
        expect: c.manifest.iter().map(|m| m.given.clone()).collect(),
        check_digests: digests == liveproof_evidence::digest::DigestPolicy::AllTags,
        no_registry: digests == liveproof_evidence::digest::DigestPolicy::Off,
        insecure_registry: config.insecure_registries.clone(),
        // Each URL with its own version (and field): the server_version check the verdict
        // waited on. A URL's password and query are shown masked, as everywhere: the pasted
        // command then says where to fill them in rather than printing them.
        version_url: versions.iter().map(|v| v.url.to_string()).collect(),
        expect_version: versions.iter().map(|v| v.expect.clone()).collect(),
        // One per URL or none: a single one would apply to every URL.
        version_json: if versions.iter().all(|v| v.json_path.is_some()) {
            versions
                .iter()
                .filter_map(|v| v.json_path.clone())
                .collect()
        } else {
            Vec::new()
        },
    }
}

impl Invocation {
    pub fn of(config: &VerifyConfig) -> Invocation {
        let mut cluster = Vec::new();
        if let Source::Live(options) = &config.source {
            if let Some(path) = &options.kubeconfig {
                cluster.push(("--kubeconfig".into(), Some(path.display().to_string())));
            }
            if let Some(context) = &options.context {
                cluster.push(("--context".into(), Some(context.clone())));
            }
        }
        let mut change = Vec::new();
        let mut registries = Vec::new();
        for (flag, value) in stated(config).flags() {
            let into = if flag == "insecure-registry" {
                &mut registries
            } else {
                &mut change
            };
            into.push((format!("--{flag}"), value));
        }
        // -f states the change: a suggestion without it could never be live.
        let mut manifests: Vec<&str> = config
            .change
            .declared
            .iter()
            .map(|d| d.given.as_str())
            .collect();
        manifests.dedup();
        for path in manifests {
            change.push(("-f".into(), Some(path.to_string())));
        }
        Invocation {
            program: program(),
            cluster,
            change,
            registries,
            waited: config.wait.map(|d| d.timeout),
        }
    }

    /// Completes every target's next step (the report's own is drawn from them).
    pub fn apply(&self, report: &mut Report) {
        for step in report
            .targets
            .iter_mut()
            .filter_map(|t| t.next_step.as_mut())
        {
            self.complete(step);
        }
    }

    /// Each command in `step` made whole, and a wait that ran out said so.
    pub fn complete(&self, step: &mut Suggestion) {
        for part in step.parts_mut() {
            match part {
                Part::Command(command) => self.complete_command(command),
                // A server still not reporting its version after a wait that ran out: waiting
                // again would end the same way, so the step says to find what serves the old
                // build.
                Part::WaitForIt => {
                    if let Some(waited) = self.waited {
                        *part = Part::Text(format!(
                            " (it did not within --timeout {}: find what still serves the old build before waiting longer)",
                            humanize(waited)
                        ));
                    }
                }
                Part::Text(_) => {}
            }
        }
    }

    fn complete_command(&self, command: &mut Command) {
        let extra: Vec<&Flag> = match command.program {
            Program::Kubectl => {
                // After `kubectl`, before the verb: kubectl takes global flags anywhere.
                let cluster = self.cluster.iter().flat_map(|(f, v)| [Some(f), v.as_ref()]);
                command.args.splice(0..0, cluster.flatten().cloned());
                return;
            }
            Program::Liveproof | Program::KubectlPlugin => {
                command.program = self.program;
                match command.subcommand() {
                    // A later change's verify states that change: the user's statement would
                    // hold it to the change it replaced. How the registry is asked still holds,
                    // and so does where a commit is read; a command that dates nothing keeps
                    // the user's change time (the later change came after it).
                    Some("verify") if command.states_own_change => {
                        let has = |flag: &str| command.args.iter().any(|a| a == flag);
                        let dated = has("--commit") || has("--since");
                        let keeps = |flag: &str| match flag {
                            "--check-digests" | "--no-registry" => true,
                            "--repo" => has("--commit"),
                            "--since" => !dated,
                            _ => false,
                        };
                        self.cluster
                            .iter()
                            .chain(self.change.iter().filter(|(f, _)| keeps(f)))
                            .chain(&self.registries)
                            .collect()
                    }
                    Some("verify") => self
                        .cluster
                        .iter()
                        .chain(&self.change)
                        .chain(&self.registries)
                        .collect(),
                    Some("stale") => self.cluster.iter().chain(&self.registries).collect(),
                    _ => return,
                }
            }
        };
        // The user's flags the command does not set yet.
        let present = command.args.clone();
        for (flag, value) in extra {
            let repeatable = matches!(
                flag.as_str(),
                "-f" | "--image"
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
            command.args.push(flag.clone());
            command.args.extend(value.iter().cloned());
        }
        if let Some(waited) = self.waited {
            // The wait just ran out: the same --wait again would end the same way. Suggest
            // twice the time that was not enough (the report says what blocks).
            if let Some(i) = command.args.iter().position(|w| w == "--timeout") {
                if let Some(t) = command.args.get_mut(i + 1) {
                    // As every message writes a duration; quoting keeps `1m 30s` one word.
                    *t = humanize(waited * 2);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use liveproof_evidence::suggestion::WAIT_FOR_IT;

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
            let suggested = completed(
                &Invocation::of(&config),
                Command::liveproof(["verify", target, "-n", "apps"]).into(),
            );
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

    fn flag(flag: &str, value: &str) -> Flag {
        (flag.into(), Some(value.into()))
    }

    fn invocation(waited: Option<Duration>) -> Invocation {
        Invocation {
            program: Program::KubectlPlugin,
            cluster: vec![flag("--kubeconfig", "/home/me/.kube/prod config")],
            change: vec![
                flag("--since", "2026-07-12T10:00:00Z"),
                flag("--image", "ghcr.io/acme/api:2"),
                flag("--expect", "re:secretKeyRef:\\s+name"),
                ("--check-digests".into(), None),
                flag("-f", "k8s/api.yaml"),
            ],
            registries: vec![flag("--insecure-registry", "localhost:5000")],
            waited,
        }
    }

    /// `step` as the CLI prints it after completing it.
    fn completed(invocation: &Invocation, mut step: Suggestion) -> String {
        invocation.complete(&mut step);
        step.to_string()
    }

    /// `liveproof verify deployment/api -n apps --wait --timeout 5m`, as the checks suggest it.
    fn verify_api() -> Command {
        liveproof_evidence::verify_again("deployment", "apps", "api")
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
        let got = completed(&Invocation::of(&config), verify_api().into());
        assert!(
            got.contains("--version-url 'https://ops:***@shop.example/version?token=***' --version-url https://api.example/info --expect-version 1.4.0 --expect-version 2.0 --version-json .version --version-json .build.tag"),
            "{got}"
        );
        assert!(!got.contains("s3cret") && !got.contains("t0ken"), "{got}");
    }

    #[test]
    fn commands_carry_the_users_flags_and_name() {
        let step = Suggestion::text("wait for the rollout (")
            .command(verify_api())
            .then("); or see ")
            .command(Command::kubectl([
                "-n",
                "apps",
                "describe",
                "deployment/api",
            ]));
        let got = completed(&invocation(None), step);
        // A switch takes no value: -f after --check-digests stays a flag of its own.
        assert_eq!(
            got,
            "wait for the rollout (kubectl liveproof verify deployment/api -n apps --wait --timeout 5m \
             --kubeconfig '/home/me/.kube/prod config' --since 2026-07-12T10:00:00Z --image ghcr.io/acme/api:2 \
             --expect 're:secretKeyRef:\\s+name' --check-digests -f k8s/api.yaml --insecure-registry localhost:5000); \
             or see kubectl --kubeconfig '/home/me/.kube/prod config' -n apps describe deployment/api"
        );
    }

    #[test]
    fn after_a_wait_ran_out_the_timeout_is_longer() {
        let step = Suggestion::text("wait for it: ").command(verify_api());
        let got = completed(&invocation(Some(Duration::from_secs(600))), step.clone());
        assert!(got.contains("--timeout 20m"), "{got}");
        assert!(!got.contains("--timeout 5m"), "{got}");
        // A time that is not whole minutes is written as every message writes it, quoted as
        // one word, and --timeout reads it back.
        let got = completed(&invocation(Some(Duration::from_secs(45))), step);
        assert!(got.contains("--timeout '1m 30s'"), "{got}");
        assert_eq!(
            crate::config::parse_duration("1m 30s").expect("a duration"),
            Duration::from_secs(90)
        );
    }

    #[test]
    fn a_server_not_reporting_after_a_wait_is_not_told_to_wait_again() {
        let step = Suggestion::text(
            "the server at https://shop.example/version does not report 1.4.0 yet: check which build serves it",
        )
        .wait_for_it();
        // Without a wait, the step still says to wait.
        assert_eq!(completed(&invocation(None), step.clone()), step.to_string());
        assert!(step.to_string().ends_with(WAIT_FOR_IT), "{step}");
        let got = completed(&invocation(Some(Duration::from_secs(300))), step);
        assert_eq!(
            got,
            "the server at https://shop.example/version does not report 1.4.0 yet: check which build serves it \
             (it did not within --timeout 5m: find what still serves the old build before waiting longer)"
        );
    }

    /// The verify a superseded target suggests states the later change: pasted, it carries the
    /// user's cluster, registry and digest policy, and the repository its commit is read in,
    /// but none of the user's change (which the later change replaced).
    #[test]
    fn a_later_changes_verify_keeps_its_own_statement() {
        let mut invocation = invocation(None);
        invocation.change.push(flag("--repo", "/src/shop"));
        let later = |args: &[&str]| {
            let mut words = vec!["verify", "deployment/api", "-n", "apps"];
            words.extend(args);
            completed(
                &invocation,
                Command::liveproof(words).stating_its_own_change().into(),
            )
        };
        let got = later(&[
            "--since",
            "2026-07-12T11:00:00Z",
            "--image",
            "ghcr.io/acme/api:3",
        ]);
        assert_eq!(
            got,
            "kubectl liveproof verify deployment/api -n apps --since 2026-07-12T11:00:00Z \
             --image ghcr.io/acme/api:3 --kubeconfig '/home/me/.kube/prod config' --check-digests \
             --insecure-registry localhost:5000"
        );
        // Its commit is read where the user's was.
        let got = later(&["--commit", "9b1e2f3"]);
        assert!(got.ends_with("--commit 9b1e2f3 --kubeconfig '/home/me/.kube/prod config' --check-digests --repo /src/shop --insecure-registry localhost:5000"), "{got}");
        // Dated by nothing of its own: the user's change time still bounds it from below.
        let got = later(&["--image", "ghcr.io/acme/api:3"]);
        assert!(got.contains("--since 2026-07-12T10:00:00Z"), "{got}");
        assert!(
            !got.contains("ghcr.io/acme/api:2") && !got.contains("k8s/api.yaml"),
            "{got}"
        );
    }

    #[test]
    fn verify_keeps_the_insecure_registry_it_was_given() {
        let got = completed(&invocation(None), verify_api().into());
        assert!(got.contains("--insecure-registry localhost:5000"), "{got}");
    }

    #[test]
    fn stale_gets_cluster_and_registry_flags_only() {
        let got = completed(
            &invocation(None),
            Command::liveproof(["stale", "deployment/api", "-n", "apps", "--restart"]).into(),
        );
        assert!(got.contains("--insecure-registry localhost:5000"), "{got}");
        assert!(
            !got.contains("--since"),
            "stale takes no change flags: {got}"
        );
    }
}
