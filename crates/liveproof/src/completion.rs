//! Completion from the cluster: `verify deploy/<TAB>` offers the Deployments there, `-n <TAB>`
//! the namespaces, `--context <TAB>` the kubeconfig's contexts. clap's engine asks a completer
//! for one value at a time and tells it nothing else typed, so the words of the command line
//! are noted first ([`note_words`]: `-n`, `--kubeconfig`, `--context`, a kind word) and the
//! completers read them.
//!
//! Reads only (metadata LISTs, the kubeconfig file), each bounded by [`BOUND`]; whatever fails
//! (no kubeconfig, an unreachable server, a denied list) offers nothing and says nothing: a
//! completion is a suggestion under the prompt, never an error there.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use clap_complete::engine::CompletionCandidate;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use liveproof_evidence::TargetKind;
use liveproof_gather::{Cluster, ClusterOptions};

/// How long a completion may spend on the cluster: each request, and all of them together.
pub const BOUND: Duration = Duration::from_secs(2);

/// At most this many names are listed (one page): a completion lists what one can read.
const MOST: u32 = 500;

/// What the command line being completed says, besides the word being completed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Typed {
    pub namespace: Option<String>,
    pub all_namespaces: bool,
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// `verify deploy <TAB>`, `verify deploy,sts web <TAB>`: the kinds a bare kind word named.
    pub kinds: Vec<TargetKind>,
}

static TYPED: OnceLock<Typed> = OnceLock::new();

/// Notes what `words` (the command line, the word being completed last) says, for the
/// completers of this process; `command` is the CLI's, which says which flags take a value.
/// The first call wins.
pub fn note_words(words: &[OsString], command: &clap::Command) {
    let _ = TYPED.set(typed(words, &value_flags(command)));
}

fn noted() -> Typed {
    TYPED.get().cloned().unwrap_or_default()
}

/// The flags whose value is the next word (`-n NS`), as clap knows them: their values are not
/// positionals, and never read as a kind word or a verbosity level.
pub(crate) fn value_flags(command: &clap::Command) -> BTreeSet<String> {
    fn walk(command: &clap::Command, into: &mut BTreeSet<String>) {
        for arg in command.get_arguments() {
            if !arg.get_action().takes_values() {
                continue;
            }
            if let Some(short) = arg.get_short() {
                into.insert(format!("-{short}"));
            }
            for long in arg
                .get_long()
                .into_iter()
                .chain(arg.get_all_aliases().unwrap_or_default())
            {
                into.insert(format!("--{long}"));
            }
        }
        for sub in command.get_subcommands() {
            walk(sub, into);
        }
    }
    let mut flags = BTreeSet::new();
    walk(command, &mut flags);
    flags
}

/// What `words` says (the last word, the one being completed, left out).
pub fn typed(words: &[OsString], takes_value: &BTreeSet<String>) -> Typed {
    let words: Vec<String> = words
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let before = words.split_last().map_or(&[][..], |(_, rest)| rest);
    let mut typed = Typed::default();
    let mut positionals = Vec::new();
    let mut i = 0;
    while i < before.len() {
        let word = before[i].as_str();
        let next = before.get(i + 1).cloned();
        if word == "--" {
            positionals.extend(before[i + 1..].iter().cloned());
            break;
        }
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_string())),
            _ => match word
                .strip_prefix("-n")
                .filter(|v| !v.is_empty() && !word.starts_with("--"))
            {
                Some(value) => ("-n", Some(value.to_string())),
                None => (word, None),
            },
        };
        let consumes = inline.is_none() && takes_value.contains(flag);
        let value = inline.or_else(|| consumes.then_some(next).flatten());
        match flag {
            "-n" | "--namespace" => typed.namespace = value,
            "--kubeconfig" => typed.kubeconfig = value.map(PathBuf::from),
            "--context" => typed.context = typed.context.take().or(value),
            "-A" | "--all-namespaces" => typed.all_namespaces = true,
            _ if !word.starts_with('-') || word == "-" => positionals.push(word.to_string()),
            _ => {}
        }
        i += if consumes { 2 } else { 1 };
    }
    // `verify deploy a b`: the first positional after the program and the subcommand, a
    // kind word alone.
    if let Some(first) = positionals.get(2) {
        if !first.contains('/') {
            typed.kinds = first
                .split(',')
                .map(TargetKind::parse)
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default();
        }
    }
    typed
}

/// `-n <TAB>`: the cluster's namespaces.
pub fn namespaces(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    let typed = noted();
    let names = list(&typed, |cluster| async move {
        let api: Api<DynamicObject> = Api::all_with(cluster.client(), &namespace_resource());
        let Ok(list) = api.list_metadata(&ListParams::default().limit(MOST)).await else {
            return Vec::new();
        };
        let mut names: Vec<String> = list
            .items
            .into_iter()
            .filter_map(|o| o.metadata.name)
            .collect();
        names.sort();
        names
    });
    candidates(names, &current, "")
}

/// `--context <TAB>`: the contexts of the kubeconfig kubectl would read (nothing is sent).
pub fn contexts(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    let typed = noted();
    let options = ClusterOptions {
        kubeconfig: typed.kubeconfig,
        ..options()
    };
    let names = liveproof_gather::live::kubeconfig_contexts(&options).unwrap_or_default();
    candidates(names, &current, "")
}

/// A target: a kind's spelling then `/` (`deploy/`), or after one (`deploy/<TAB>`,
/// `NS/deploy/<TAB>`) the names of that kind in the cluster; after a kind word alone (`verify
/// deploy <TAB>`), the names of that kind.
pub fn targets(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy().into_owned();
    let typed = noted();
    if let Some((prefix, partial)) = current.rsplit_once('/') {
        let mut parts = prefix.rsplitn(2, '/');
        let kind_word = parts.next().unwrap_or_default();
        let namespace = parts.next().map(str::to_string);
        // `apps/deploy/` is the group or the namespace `apps`; either way kubectl's forms read
        // it first as what it names, and a namespace is what lists names.
        let Some(kind) = TargetKind::parse(kind_word) else {
            return Vec::new();
        };
        let names = names_of(&typed, kind, namespace);
        return candidates(names, partial, &format!("{prefix}/"));
    }
    if !typed.kinds.is_empty() {
        let mut names = Vec::new();
        for kind in &typed.kinds {
            names.extend(names_of(&typed, *kind, None));
        }
        names.sort();
        names.dedup();
        return candidates(names, &current, "");
    }
    liveproof_evidence::kind::target_prefixes()
        .into_iter()
        .filter(|p| p.starts_with(current.as_str()))
        .map(CompletionCandidate::new)
        .collect()
}

/// The names of `kind`'s objects in `namespace` (else `-n`, else the context's; every
/// namespace with `-A`).
fn names_of(typed: &Typed, kind: TargetKind, namespace: Option<String>) -> Vec<String> {
    let typed = Typed {
        namespace: namespace.or_else(|| typed.namespace.clone()),
        all_namespaces: typed.all_namespaces && typed.namespace.is_none(),
        ..typed.clone()
    };
    let all = typed.all_namespaces;
    list(&typed, move |cluster| async move {
        let namespace = (!all).then(|| cluster.default_namespace().to_string());
        cluster
            .listed_names(
                kind.resource(),
                liveproof_evidence::kind::lister(kind),
                namespace.as_deref(),
            )
            .await
    })
}

/// Connects as the command would (within [`BOUND`]) and runs `read`; nothing on any failure.
fn list<F, Fut>(typed: &Typed, read: F) -> Vec<String>
where
    F: FnOnce(Cluster) -> Fut,
    Fut: std::future::Future<Output = Vec<String>>,
{
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    let options = ClusterOptions {
        kubeconfig: typed.kubeconfig.clone(),
        context: typed.context.clone(),
        namespace: typed.namespace.clone(),
        ..options()
    };
    let names = runtime.block_on(async move {
        let work = async move {
            match Cluster::connect(&options).await {
                Ok(cluster) => read(cluster).await,
                Err(_) => Vec::new(),
            }
        };
        tokio::time::timeout(BOUND, work).await.unwrap_or_default()
    });
    // A request still running past the bound is not waited for.
    runtime.shutdown_background();
    names
}

/// The cluster options of a completion: every request bounded by [`BOUND`].
fn options() -> ClusterOptions {
    ClusterOptions {
        kubeconfig: None,
        context: None,
        namespace: None,
        request_timeout: Some(BOUND),
        deadline: Some(std::time::Instant::now() + BOUND),
        response_budget: liveproof_gather::ResponseBudget::default(),
    }
}

fn namespace_resource() -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: "Namespace".into(),
        plural: "namespaces".into(),
    }
}

/// `names` that start with `typed`, each after `prefix`.
fn candidates(names: Vec<String>, typed: &str, prefix: &str) -> Vec<CompletionCandidate> {
    names
        .into_iter()
        .filter(|n| n.starts_with(typed))
        .map(|n| CompletionCandidate::new(format!("{prefix}{n}")))
        .collect()
}
