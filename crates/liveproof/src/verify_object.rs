//! `liveproof verify verification/NAME` (and `NAMESPACE/verification/NAME`): the Verification
//! object is read from the live cluster and verify runs with what its spec states — the same
//! arguments the controller judges it with ([`Verification::args`], checked as
//! [`Verification::request`] checks them) — so the report is the one `verify` gives for the
//! equivalent flags. The command line keeps what is about this run only (the output, the
//! cluster's access, `--wait`/`--timeout`, `--report`, `--record`, `--logs`); a change flag, or
//! another way to name targets, is refused: the object states the change.

use std::time::Duration;

use liveproof_evidence::hint::{Hinted as _, HintedMessage};
use liveproof_gather::{Cluster, ClusterOptions};

use crate::cli::VerifyArgs;
use crate::controller::Verification;

/// How a target names the Verification kind: its kind, plural, short name, and
/// `kubectl get`'s fully qualified forms.
const SPELLINGS: [&str; 5] = [
    "verification",
    "verifications",
    "verif",
    "verification.liveproof.dev",
    "verifications.liveproof.dev",
];

fn is_verification_kind(word: &str) -> bool {
    SPELLINGS.contains(&word.to_ascii_lowercase().as_str())
}

/// The Verification a target names, as (namespace, name): `verification/NAME` or
/// `NAMESPACE/verification/NAME`.
fn named(target: &str) -> Option<(Option<String>, String)> {
    let parts: Vec<&str> = target.split('/').collect();
    let (ns, kind, name) = match parts.as_slice() {
        [kind, name] => (None, *kind, *name),
        [ns, kind, name] => (Some((*ns).to_string()), *kind, *name),
        _ => return None,
    };
    (is_verification_kind(kind) && !name.is_empty()).then(|| (ns, name.to_string()))
}

/// The one Verification the targets name, if they name one: `verification/NAME`,
/// `NS/verification/NAME`, or kubectl's `verification NAME`. Named with other targets (or two
/// Verifications), refused: a Verification's spec names its targets.
fn which(args: &VerifyArgs) -> Result<Option<(Option<String>, String)>, HintedMessage> {
    if let Some(bare) = args.targets.iter().find(|t| {
        let parts: Vec<&str> = t.split('/').collect();
        matches!(parts.as_slice(), [kind, ""] | [_, kind, ""] if is_verification_kind(kind))
    }) {
        return Err(HintedMessage::new(
            format!("target `{bare}`: a Verification needs its name"),
            "verify verification/NAME (kubectl get verifications -A lists them)",
        ));
    }
    if let [kind, name] = args.targets.as_slice() {
        if is_verification_kind(kind) && !name.contains('/') {
            return Ok(Some((None, name.clone())));
        }
    }
    let found: Vec<(usize, (Option<String>, String))> = args
        .targets
        .iter()
        .enumerate()
        .filter_map(|(i, t)| named(t).map(|n| (i, n)))
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [(_, one)] if args.targets.len() == 1 => Ok(Some(one.clone())),
        [(i, _), ..] => {
            let others: Vec<&str> = args
                .targets
                .iter()
                .enumerate()
                .filter(|(j, _)| j != i)
                .map(|(_, t)| t.as_str())
                .collect();
            Err(HintedMessage::new(
                format!(
                    "{} is verified on its own, not with {}: a Verification's spec names its targets",
                    args.targets[*i],
                    others.join(", ")
                ),
                "run verify once for the Verification and once for the other targets, or add them to its spec.targets",
            ))
        }
    }
}

/// The flags given that the object states instead (or that cannot apply to it), as typed.
fn stated_by_the_object(args: &VerifyArgs) -> Vec<String> {
    let mut given: Vec<String> = Vec::new();
    for (flag, _) in args.change.flags() {
        let flag = format!("--{flag}");
        if !given.contains(&flag) {
            given.push(flag);
        }
    }
    let others = [
        ("-l/--selector", args.selector.is_some()),
        ("-f/--filename", !args.manifests.is_empty()),
        ("-k/--kustomize", !args.kustomize.is_empty()),
        ("--snapshot", args.snapshot.is_some()),
        ("--from", args.from.is_some()),
        ("-A/--all-namespaces", args.cluster.all_namespaces),
        ("--all-contexts", args.all_contexts),
    ];
    given.extend(
        others
            .into_iter()
            .filter(|(_, on)| *on)
            .map(|(flag, _)| flag.to_string()),
    );
    given
}

/// When `args` name a Verification: the arguments its spec states, with this run's own
/// settings from the command line (read from the live cluster; a bounded read). `None` when
/// they name none, and verify runs as given.
pub(crate) fn object_args(
    args: &VerifyArgs,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<Option<VerifyArgs>> {
    let Some((namespace, name)) = which(args)? else {
        return Ok(None);
    };
    let given = stated_by_the_object(args);
    if !given.is_empty() {
        return Err(HintedMessage::new(
            format!(
                "{} with verification/{name}: the Verification states the change and its targets",
                given.join(", ")
            ),
            format!(
                "drop {}, or change the Verification's spec (kubectl edit verification/{name})",
                if given.len() == 1 { "it" } else { "them" }
            ),
        )
        .into());
    }
    let object = runtime.block_on(read(args, namespace.as_deref(), &name))?;
    Ok(Some(from_object(&object, args)?))
}

/// Reads the Verification, within the request timeout.
async fn read(
    args: &VerifyArgs,
    namespace: Option<&str>,
    name: &str,
) -> anyhow::Result<Verification> {
    let options = ClusterOptions::try_from(&args.cluster)?;
    let cluster = Cluster::connect(&options).await?;
    let ns = namespace.unwrap_or(cluster.default_namespace()).to_string();
    let api: kube::Api<Verification> = kube::Api::namespaced(cluster.client(), &ns);
    let limit = cluster.request_timeout() + Duration::from_secs(1);
    let what = format!("verification {ns}/{name}");
    match tokio::time::timeout(limit, api.get(name)).await {
        Ok(Ok(object)) => Ok(object),
        Ok(Err(kube::Error::Api(status))) if status.code == 404 => {
            // The object missing names itself; a type the server does not serve does not.
            let served = status.message.contains(&format!("\"{name}\""));
            Err(if served {
                HintedMessage::new(
                    format!(
                        "verification {name} not found in namespace {ns} (on {})",
                        cluster.server()
                    ),
                    format!("kubectl get verifications -n {ns} lists the Verifications there"),
                )
            } else {
                HintedMessage::new(
                    format!(
                        "the API server ({}) does not serve verifications.liveproof.dev",
                        cluster.server()
                    ),
                    "install the CRD: kubectl apply -f deploy/verification-crd.yaml",
                )
            }
            .into())
        }
        Ok(Err(err)) => Err(cluster.kube_error(&what, err).into()),
        Err(_) => Err(HintedMessage::new(
            format!("{what}: no answer within --request-timeout"),
            "check the API server is reachable (kubectl get verifications), or raise --request-timeout",
        )
        .into()),
    }
}

/// The arguments `object` states, with `given`'s settings of this run.
fn from_object(object: &Verification, given: &VerifyArgs) -> Result<VerifyArgs, HintedMessage> {
    let which = format!(
        "verification {}/{}",
        object.metadata.namespace.as_deref().unwrap_or_default(),
        object.metadata.name.as_deref().unwrap_or_default()
    );
    // The spec checked as the controller checks it: refused in verify's own words.
    let refused = |message: String, hint: Option<std::borrow::Cow<'_, str>>| {
        HintedMessage::new(
            format!("{which}: its spec is refused: {message}"),
            hint.map_or_else(
                || "fix the Verification's spec (kubectl edit verification)".to_string(),
                |h| h.into_owned(),
            ),
        )
    };
    object
        .request()
        .map_err(|err| refused(err.to_string(), err.hint()))?;
    let mut args = object
        .args()
        .map_err(|err| refused(err.to_string(), err.hint()))?;
    // What is this run's, not the change's.
    args.wait = given.wait;
    if given.wait {
        args.timeout = given.timeout.clone();
    }
    args.output = given.output.clone();
    args.report = given.report.clone();
    args.record = given.record.clone();
    args.report_format = given.report_format;
    args.superseded_ok = given.superseded_ok;
    args.logs = given.logs;
    args.log = given.log;
    args.colour = given.colour;
    args.max_concurrency = given.max_concurrency;
    args.max_release_size = given.max_release_size;
    // The cluster reached as given, in the Verification's namespace (where its targets are
    // looked up when they name none).
    let namespace = args.cluster.namespace.take();
    args.cluster = crate::cli::ClusterArgs {
        namespace,
        all_namespaces: false,
        ..given.cluster.clone()
    };
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_names_a_verification_in_kubectls_spellings() {
        assert_eq!(named("verification/web"), Some((None, "web".into())));
        assert_eq!(named("verif/web"), Some((None, "web".into())));
        assert_eq!(
            named("apps/verifications.liveproof.dev/web"),
            Some((Some("apps".into()), "web".into()))
        );
        assert_eq!(named("deploy/web"), None);
        assert_eq!(named("verification/"), None);
        assert_eq!(named("apps/deploy/verification"), None);
    }
}
