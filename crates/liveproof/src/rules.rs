//! The rules clap declares between a command's arguments (`conflicts_with`, `requires`,
//! `required_unless_present_any`), checked on the typed arguments: a request built without
//! clap — an MCP tool call, deserialised into the CLI's own argument structs — is held to the
//! same rules, refused in clap's own words. On the command line clap has refused first, so
//! this finds nothing there.
//!
//! Conflicts are read from the command's clap definition (no copy of them is kept here);
//! clap keeps `requires` and `required_unless_present_any` to itself, so those are listed
//! beside each argument struct ([`Stated`]), and a test holds the lists to what clap refuses.

use std::borrow::Cow;

use clap::{Arg, Args, Command};
use liveproof_evidence::hint::Hinted;

use crate::cli::{ReleaseShowArgs, StaleArgs, VerifyArgs};

/// A rule clap declares, broken: exit 2, in clap's words.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// Two arguments given that cannot go together.
    #[error("the argument '{arg}' cannot be used with '{other}'")]
    Conflict { arg: String, other: String },
    /// Arguments missing: required by one given, or required unless others are given.
    #[error("the following required arguments were not provided:{}", args.iter().map(|a| format!("\n  {a}")).collect::<String>())]
    Missing { args: Vec<String> },
}

impl Hinted for RuleError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(match self {
            RuleError::Conflict { .. } => "they cannot be given together: leave one of them out",
            RuleError::Missing { .. } => "add it (what it is, and what needs it, is in --help)",
        }))
    }
}

/// A command's arguments as typed values, and the rules clap does not let us read back.
pub trait Stated: Args {
    /// The subcommand, as typed after `liveproof` (for the definition clap builds).
    const COMMAND: &'static str;
    /// `(argument, what it needs)`: clap's `requires`, by argument id.
    const REQUIRES: &'static [(&'static str, &'static str)];
    /// `(argument, unless any of)`: clap's `required_unless_present_any` (a required
    /// argument: unless none), by argument id.
    const REQUIRED_UNLESS: &'static [(&'static str, &'static [&'static str])];

    /// Whether the argument with clap id `id` was given, as clap counts it: set to other than
    /// its default. `None` for an id these arguments do not have.
    fn given(&self, id: &str) -> Option<bool>;
}

/// The first rule `args` breaks, in clap's words and clap's order (conflicts, then what is
/// required).
pub fn check<A: Stated>(args: &A) -> Result<(), RuleError> {
    check_given::<A>(&|id| args.given(id) == Some(true))
}

/// [`check`], with what was given said by `given`.
pub(crate) fn check_given<A: Stated>(given: &dyn Fn(&str) -> bool) -> Result<(), RuleError> {
    let command = definition::<A>();
    let find = |id: &str| command.get_arguments().find(|a| a.get_id() == id);
    for arg in command.get_arguments() {
        if !given(arg.get_id().as_str()) {
            continue;
        }
        if let Some(other) = command
            .get_arg_conflicts_with(arg)
            .into_iter()
            .find(|other| given(other.get_id().as_str()))
        {
            return Err(RuleError::Conflict {
                arg: arg.to_string(),
                other: other.to_string(),
            });
        }
    }
    // Then every argument missing, as clap lists them: what a given one needs (and what that
    // needs in turn), then a positional required unless others are given.
    let mut missing: Vec<&Arg> = Vec::new();
    for (id, needs) in A::REQUIRES {
        if given(id) && !given(needs) {
            for required in unrolled::<A>(needs).into_iter().chain([*needs]) {
                if let Some(arg) = find(required) {
                    if !given(required) && !missing.iter().any(|m| m.get_id() == required) {
                        missing.push(arg);
                    }
                }
            }
        }
    }
    for (id, unless) in A::REQUIRED_UNLESS {
        if !given(id) && !unless.iter().any(|u| given(u)) {
            missing.extend(find(id));
        }
    }
    missing.sort_by_key(|arg| arg.is_positional());
    if missing.is_empty() {
        return Ok(());
    }
    Err(RuleError::Missing {
        args: missing.into_iter().map(required).collect(),
    })
}

/// What `id` requires in turn, in the order clap unrolls it (`Command::unroll_arg_requires`).
fn unrolled<A: Stated>(id: &'static str) -> Vec<&'static str> {
    let mut processed: Vec<&str> = Vec::new();
    let mut to_do = vec![id];
    let mut out = Vec::new();
    while let Some(next) = to_do.pop() {
        if processed.contains(&next) {
            continue;
        }
        processed.push(next);
        for (_, needs) in A::REQUIRES.iter().filter(|(a, _)| *a == next) {
            if A::REQUIRES.iter().any(|(a, _)| a == needs) {
                to_do.push(needs);
            }
            out.push(*needs);
        }
    }
    out
}

/// The command's clap definition, built (so each argument is shown as clap shows it).
pub(crate) fn definition<A: Stated>() -> Command {
    let mut command = A::augment_args(Command::new(A::COMMAND));
    command.build();
    command
}

/// An argument as clap names a required one: `--commit <SHA>`, `<TARGET>...`.
fn required(arg: &Arg) -> String {
    if !arg.is_positional() {
        return arg.to_string();
    }
    let name = arg
        .get_value_names()
        .and_then(|names| names.first())
        .map_or_else(|| arg.get_id().to_string(), ToString::to_string);
    let many = arg
        .get_num_args()
        .is_some_and(|n| n.max_values() == usize::MAX);
    format!("<{name}>{}", if many { "..." } else { "" })
}

impl Stated for VerifyArgs {
    const COMMAND: &'static str = "verify";
    const REQUIRES: &'static [(&'static str, &'static str)] = &[
        ("snapshot", "commit"),
        ("timeout", "wait"),
        ("report_format", "report"),
        ("record_format", "record"),
        ("record_repo_url", "record"),
        ("record_env", "record"),
        ("version_url", "expect_version"),
        ("expect_version", "version_url"),
        ("version_json", "version_url"),
    ];
    const REQUIRED_UNLESS: &'static [(&'static str, &'static [&'static str])] = &[(
        "targets",
        &["snapshot", "manifests", "kustomize", "selector"],
    )];

    fn given(&self, id: &str) -> Option<bool> {
        use crate::cli::{DEFAULT_REQUEST_TIMEOUT, DEFAULT_TIMEOUT};
        let c = &self.change;
        let k = &self.cluster;
        Some(match id {
            "targets" => !self.targets.is_empty(),
            "selector" => self.selector.is_some(),
            "manifests" => !self.manifests.is_empty(),
            "recursive" => self.recursive,
            "kustomize" => !self.kustomize.is_empty(),
            "snapshot" => self.snapshot.is_some(),
            "since" => c.since.is_some(),
            "commit" => c.commit.is_some(),
            "repo" => c.repo != std::path::Path::new(crate::cli::DEFAULT_REPO),
            "image" => !c.image.is_empty(),
            "expect_env" => !c.expect_env.is_empty(),
            "expect_secret_ref" => !c.expect_secret_ref.is_empty(),
            "chart_version" => c.chart_version.is_some(),
            "expect" => !c.expect.is_empty(),
            "check_digests" => c.check_digests,
            "no_registry" => c.no_registry,
            "insecure_registry" => !c.insecure_registry.is_empty(),
            "version_url" => !c.version_url.is_empty(),
            "expect_version" => !c.expect_version.is_empty(),
            "version_json" => !c.version_json.is_empty(),
            "wait" => self.wait,
            "timeout" => self.timeout != DEFAULT_TIMEOUT,
            "output" => self.output != liveproof_report::Format::Text,
            "report" => !self.report.is_empty(),
            "record" => self.record.is_some(),
            "record_format" => self.record_format != crate::cli::RecordFormat::Liveproof,
            "record_repo_url" => self.record_repo_url.is_some(),
            "record_env" => self.record_env.is_some(),
            "superseded_ok" => self.superseded_ok,
            "quiet" => self.quiet,
            "report_format" => self.report_format.is_some(),
            "logs" => self.logs.is_some(),
            "verbose" => self.log.verbose > 0,
            "color" => self.colour.color != crate::cli::ColorChoice::Auto,
            "namespace" => k.namespace.is_some(),
            "all_namespaces" => k.all_namespaces,
            "kubeconfig" => k.kubeconfig.is_some(),
            "context" => !k.context.is_empty(),
            "request_timeout" => k.request_timeout != DEFAULT_REQUEST_TIMEOUT,
            "max_response_size" => k.max_response_size.is_some(),
            "all_contexts" => self.all_contexts,
            "max_concurrency" => self.max_concurrency.is_some(),
            "from" => self.from.is_some(),
            "max_release_size" => self.max_release_size != liveproof_helm::DEFAULT_MAX_RELEASE_SIZE,
            _ => return None,
        })
    }
}

impl Stated for ReleaseShowArgs {
    const COMMAND: &'static str = "release show";
    const REQUIRES: &'static [(&'static str, &'static str)] = &[("show_values", "values")];
    const REQUIRED_UNLESS: &'static [(&'static str, &'static [&'static str])] = &[("name", &[])];

    fn given(&self, id: &str) -> Option<bool> {
        use crate::cli::DEFAULT_REQUEST_TIMEOUT;
        let k = &self.cluster;
        Some(match id {
            // Required: clap refuses a command line without it, and a tool's input has it.
            "name" => true,
            "revision" => self.revision.is_some(),
            "manifest" => self.manifest,
            "metadata" => self.metadata,
            "values" => self.values,
            "history" => self.history,
            "show_values" => self.show_values,
            "max_release_size" => self.max_release_size != liveproof_helm::DEFAULT_MAX_RELEASE_SIZE,
            "from" => self.from.is_some(),
            "verbose" => self.log.verbose > 0,
            "namespace" => k.namespace.is_some(),
            "all_namespaces" => k.all_namespaces,
            "kubeconfig" => k.kubeconfig.is_some(),
            "context" => !k.context.is_empty(),
            "request_timeout" => k.request_timeout != DEFAULT_REQUEST_TIMEOUT,
            "max_response_size" => k.max_response_size.is_some(),
            _ => return None,
        })
    }
}

impl Stated for StaleArgs {
    const COMMAND: &'static str = "stale";
    const REQUIRES: &'static [(&'static str, &'static str)] = &[
        ("dry_run", "restart"),
        ("wait", "restart"),
        ("timeout", "wait"),
    ];
    const REQUIRED_UNLESS: &'static [(&'static str, &'static [&'static str])] = &[];

    fn given(&self, id: &str) -> Option<bool> {
        use crate::cli::{DEFAULT_REQUEST_TIMEOUT, DEFAULT_TIMEOUT};
        let k = &self.cluster;
        Some(match id {
            "targets" => !self.targets.is_empty(),
            "selector" => self.selector.is_some(),
            "manifests" => self.manifests.is_some(),
            "check_digests" => self.check_digests,
            "insecure_registry" => !self.insecure_registry.is_empty(),
            "restart" => self.restart,
            "dry_run" => self.dry_run,
            "wait" => self.wait,
            "timeout" => self.timeout != DEFAULT_TIMEOUT,
            "output" => self.output != liveproof_report::Format::Text,
            "verbose" => self.log.verbose > 0,
            "namespace" => k.namespace.is_some(),
            "all_namespaces" => k.all_namespaces,
            "kubeconfig" => k.kubeconfig.is_some(),
            "context" => !k.context.is_empty(),
            "request_timeout" => k.request_timeout != DEFAULT_REQUEST_TIMEOUT,
            "max_response_size" => k.max_response_size.is_some(),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::cli::{Cli, Command as Sub, ReleaseCommand};

    /// Each command's arguments, parsed by clap from `liveproof WORDS…`.
    trait Parsed: Stated + Sized + std::fmt::Debug {
        /// The words that make a command line clap takes with nothing else given.
        const BASE: &'static [&'static str];
        fn parsed(words: &[String]) -> Result<Self, clap::Error>;
    }

    impl Parsed for VerifyArgs {
        const BASE: &'static [&'static str] = &["verify"];
        fn parsed(words: &[String]) -> Result<Self, clap::Error> {
            match Cli::try_parse_from(
                std::iter::once("liveproof".to_string()).chain(words.iter().cloned()),
            )?
            .command
            {
                Sub::Verify(args) => Ok(*args),
                _ => unreachable!("verify parses as verify"),
            }
        }
    }

    impl Parsed for ReleaseShowArgs {
        const BASE: &'static [&'static str] = &["release", "show"];
        fn parsed(words: &[String]) -> Result<Self, clap::Error> {
            match Cli::try_parse_from(
                std::iter::once("liveproof".to_string()).chain(words.iter().cloned()),
            )?
            .command
            {
                Sub::Release(ReleaseCommand::Show(args)) => Ok(args),
                _ => unreachable!("release show parses as release show"),
            }
        }
    }

    impl Parsed for StaleArgs {
        const BASE: &'static [&'static str] = &["stale"];
        fn parsed(words: &[String]) -> Result<Self, clap::Error> {
            match Cli::try_parse_from(
                std::iter::once("liveproof".to_string()).chain(words.iter().cloned()),
            )?
            .command
            {
                Sub::Stale(args) => Ok(args),
                _ => unreachable!("stale parses as stale"),
            }
        }
    }

    /// A value clap takes for the argument `id`, other than its default.
    fn sample(id: &str) -> &'static str {
        match id {
            "targets" => "deploy/web",
            "name" => "web",
            "since" => "1h",
            "timeout" => "90s",
            "request_timeout" => "5s",
            "output" | "report_format" => "json",
            "record_format" => "datadog",
            "color" => "never",
            "max_release_size" => "1024",
            "max_response_size" => "256Mi",
            "max_concurrency" => "2",
            "logs" | "revision" => "5",
            _ => "x",
        }
    }

    /// The words that give the argument `arg`: `--long=VALUE`, `--long`, or the value.
    fn words(arg: &Arg) -> Vec<String> {
        let id = arg.get_id().as_str();
        if arg.is_positional() {
            return vec![sample(id).to_string()];
        }
        let long = arg.get_long().unwrap_or(id);
        if arg.get_action().takes_values() {
            vec![format!("--{long}={}", sample(id))]
        } else {
            vec![format!("--{long}")]
        }
    }

    /// What clap says first (its message, without `error: `, the usage or the tip).
    fn said(err: &clap::Error) -> String {
        let rendered = err.render().to_string();
        let first = rendered.split("\n\n").next().unwrap_or_default();
        first.trim().trim_start_matches("error: ").to_string()
    }

    fn arguments<A: Stated>() -> Vec<Arg> {
        definition::<A>()
            .get_arguments()
            .filter(|a| a.get_id() != "help")
            .cloned()
            .collect()
    }

    /// The words giving `ids` (each as [`words`] gives it), after the command's base.
    fn argv<A: Parsed>(ids: &[String]) -> Vec<String> {
        let all = arguments::<A>();
        let mut argv: Vec<String> = A::BASE.iter().map(|w| w.to_string()).collect();
        for id in ids {
            let arg = all.iter().find(|a| a.get_id() == id).expect("an argument");
            argv.extend(words(arg));
        }
        argv
    }

    /// `id` and what it needs (clap's `requires`, in turn), and, unless `only_what_it_needs`,
    /// an argument required unless others are given: what clap takes together.
    fn with_needs<A: Stated>(id: &str, only_what_it_needs: bool) -> Vec<String> {
        let mut out = vec![id.to_string()];
        let mut i = 0;
        while i < out.len() {
            for (a, b) in A::REQUIRES {
                if *a == out[i] && !out.iter().any(|o| o == b) {
                    out.push(b.to_string());
                }
            }
            i += 1;
        }
        if only_what_it_needs {
            out.truncate(1);
        }
        for (required, unless) in A::REQUIRED_UNLESS {
            if !out
                .iter()
                .any(|o| o == required || unless.contains(&o.as_str()))
            {
                out.push(required.to_string());
            }
        }
        out
    }

    /// Whether `id` is among `ids`.
    fn among(ids: &[String], id: &str) -> bool {
        ids.iter().any(|i| i == id)
    }

    /// Every argument clap defines is one `given` knows, and it says given exactly what clap
    /// was given: the typed view the rules are checked on is clap's own.
    fn given_is_what_clap_was_given<A: Parsed>() {
        for arg in arguments::<A>() {
            let ids = with_needs::<A>(arg.get_id().as_str(), false);
            let args = A::parsed(&argv::<A>(&ids))
                .unwrap_or_else(|e| panic!("{} {ids:?}: {}", A::COMMAND, e.render()));
            for other in arguments::<A>() {
                let other = other.get_id().as_str();
                assert_eq!(
                    args.given(other),
                    Some(among(&ids, other)),
                    "{} given {ids:?}: `{other}`",
                    A::COMMAND
                );
            }
            assert_eq!(
                check(&args).map_err(|e| e.to_string()),
                Ok(()),
                "{} {ids:?}",
                A::COMMAND
            );
        }
    }

    #[test]
    fn the_typed_view_is_what_clap_was_given() {
        given_is_what_clap_was_given::<VerifyArgs>();
        given_is_what_clap_was_given::<ReleaseShowArgs>();
        given_is_what_clap_was_given::<StaleArgs>();
    }

    /// Every conflict clap declares between two arguments of verify (release show, stale) is
    /// refused by [`check`] too, in clap's words: walked from clap's definition, so a
    /// `conflicts_with` added later is held here without a line more.
    fn conflicts_are_refused<A: Parsed>() -> usize {
        let command = definition::<A>();
        let mut pairs = 0;
        for arg in command.get_arguments() {
            for other in command.get_arg_conflicts_with(arg) {
                let (a, b) = (arg.get_id().as_str(), other.get_id().as_str());
                let ids = [a.to_string(), b.to_string()];
                let ours = check_given::<A>(&|id| among(&ids, id))
                    .expect_err("refused")
                    .to_string();
                let clap_says: Vec<String> = [[a, b], [b, a]]
                    .iter()
                    .map(|order| {
                        let order = order.map(str::to_string);
                        let err = A::parsed(&argv::<A>(&order)).expect_err("clap refuses it");
                        assert_eq!(
                            err.kind(),
                            clap::error::ErrorKind::ArgumentConflict,
                            "{a} {b}"
                        );
                        said(&err)
                    })
                    .collect();
                assert!(
                    clap_says.contains(&ours),
                    "{} {a} with {b}: we say {ours:?}, clap {clap_says:?}",
                    A::COMMAND
                );
                pairs += 1;
            }
        }
        pairs
    }

    #[test]
    fn every_clap_conflict_is_refused_without_clap() {
        // verify: -l, -f, -k, targets with --snapshot; -k with --commit; --from with --wait and
        // --max-response-size; --all-contexts with --context, --from, --snapshot;
        // --check-digests with --no-registry.
        assert!(conflicts_are_refused::<VerifyArgs>() >= 12);
        assert!(conflicts_are_refused::<ReleaseShowArgs>() >= 3);
        assert!(conflicts_are_refused::<StaleArgs>() >= 4);
    }

    /// What clap requires (an argument another needs, a target unless -f/-k/-l/--snapshot)
    /// is listed beside the arguments (clap keeps `requires` to itself) and refused by
    /// [`check`] in clap's words: each argument alone, as clap takes or refuses it.
    fn requirements_are_listed<A: Parsed>() {
        for arg in arguments::<A>() {
            // The argument with only the target it may need: clap refuses it when it needs more.
            let ids = with_needs::<A>(arg.get_id().as_str(), true);
            let ours = check_given::<A>(&|id| among(&ids, id)).map_err(|e| e.to_string());
            match A::parsed(&argv::<A>(&ids)) {
                Ok(_) => assert_eq!(ours, Ok(()), "{} {ids:?}", A::COMMAND),
                Err(err) => {
                    assert_eq!(
                        err.kind(),
                        clap::error::ErrorKind::MissingRequiredArgument,
                        "{ids:?}"
                    );
                    assert_eq!(ours, Err(said(&err)), "{} {ids:?}", A::COMMAND);
                }
            }
        }
        // And the argument required unless others are given, with none of them.
        for (id, _) in A::REQUIRED_UNLESS {
            let err = A::parsed(&argv::<A>(&[])).expect_err("clap refuses it");
            let ours = check_given::<A>(&|id| among(&[], id))
                .expect_err("refused")
                .to_string();
            assert_eq!(ours, said(&err), "{} without {id}", A::COMMAND);
        }
    }

    #[test]
    fn every_clap_requirement_is_refused_without_clap() {
        requirements_are_listed::<VerifyArgs>();
        requirements_are_listed::<ReleaseShowArgs>();
        requirements_are_listed::<StaleArgs>();
    }
}
