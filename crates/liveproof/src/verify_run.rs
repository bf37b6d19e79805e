//! The command's configuration as gather reads it: the cluster connected within `--timeout`,
//! what completing a pass needs (the change, `--repo`, limits, the command's caches), the
//! session of one cluster, and the targets `-l` selected. The verifier orchestrates with these.

use liveproof_evidence::hint::HintedMessage;
use liveproof_evidence::{Change, Judgement, Observed, Report, Settled, Target, Verdict};
use liveproof_gather::complete::{Completion, Wait};
use liveproof_gather::session::{select, Session};
use liveproof_gather::{Cluster, ClusterOptions, GatherError};

use crate::config::VerifyConfig;

/// Connects to the cluster `options` name, within the command's `--timeout` (an exec
/// credential plugin run while connecting ends by then too), its Helm releases decoded within
/// the command's limits and into its cache.
pub(crate) async fn connect(
    options: &ClusterOptions,
    config: &VerifyConfig,
) -> Result<Cluster, GatherError> {
    let bounded = ClusterOptions {
        deadline: config.wait.map(|d| d.at.into_std()),
        ..options.clone()
    };
    Ok(Cluster::connect(&bounded).await?.with_release_limits(
        completion(config).release_limits(),
        config.decode_cache.clone(),
    ))
}

/// What completing a snapshot needs of the command: its change, `--repo`, limits and caches.
pub(crate) fn completion(config: &VerifyConfig) -> Completion<'_> {
    Completion {
        change: &config.change,
        repo: &config.repo,
        wait: config.wait.map(|d| Wait {
            work_until: d.work_until().into_std(),
            timeout: d.timeout,
        }),
        max_release_size: config.max_release_size,
        request_timeout: config.request_timeout,
        insecure_registries: &config.insecure_registries,
        reach: config.version_reach.as_ref(),
        decode_cache: &config.decode_cache,
        containment: &config.containment,
        chart_facts: &config.chart_facts,
        manifests: &config.history.manifests,
        later: &config.history.later,
    }
}

/// The session that reads `cluster` for `config`'s targets.
pub(crate) fn session<'a>(config: &'a VerifyConfig, cluster: &'a Cluster) -> Session<'a> {
    Session {
        cluster,
        completion: completion(config),
        targets: &config.targets,
        all_namespaces: config.all_namespaces,
    }
}

/// The configuration with the workloads `-l` selects in the `--from` dump `observed` (in the
/// namespace `ns` its targets default to, or with `-A` in every one) added to its targets.
pub(crate) fn selected_in(
    config: &VerifyConfig,
    observed: &Observed,
    ns: &str,
) -> anyhow::Result<VerifyConfig> {
    let selected = config.selector.as_ref().map(|(text, selector)| {
        let scope = (!config.all_namespaces).then_some(ns);
        (text, scope, observed.workloads_matching(selector, scope))
    });
    with_selected(config, selected)
}

/// The configuration with the workloads `-l` selects on `cluster` (in its default namespace,
/// or with `-A` in every one) added to its targets.
pub(crate) async fn selected_on(
    config: &VerifyConfig,
    cluster: &Cluster,
) -> anyhow::Result<VerifyConfig> {
    let selected = match &config.selector {
        Some((text, _)) => {
            let ns = (!config.all_namespaces).then_some(cluster.default_namespace());
            let found = cluster.workloads_in(ns, Some(text)).await?;
            Some((text, ns, found))
        }
        None => None,
    };
    with_selected(config, selected)
}

/// The configuration with the workloads `-l` selected (`(selector, namespace or None for
/// -A, what matched)`) added to its targets; an error when the selector matched nothing.
fn with_selected(
    config: &VerifyConfig,
    selected: Option<(&String, Option<&str>, Vec<Target>)>,
) -> anyhow::Result<VerifyConfig> {
    let mut config = config.clone();
    if let Some((selector, namespace, found)) = selected {
        config.targets = select(&config.targets, selector, namespace, found)?;
        crate::config::check_target_count(config.targets.len())?;
    }
    Ok(config)
}

/// `--wait` for live refuses a request that can never be live ([`liveproof_evidence::unprovable`]):
/// an error (exit 2) naming the target and why, the ways to state the change as its hint. Not
/// a verdict: waiting cannot fix it, and exit 1 or 3 would say something of the cluster.
pub(crate) fn refuse(unprovable: Option<Settled>) -> Result<(), HintedMessage> {
    match unprovable {
        Some(Settled::Unprovable { message, hint }) => Err(HintedMessage::new(message, hint)),
        _ => Ok(()),
    }
}

/// Whether a wait refuses a request that can never be live: a wait for live does; a
/// rollback's, which waits for the old template back (no change stated), does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refuse {
    Unprovable,
    Nothing,
}

/// What `--wait` waits for: every target live, or live or superseded — a later change replaced
/// the stated one, and waiting cannot make it live as such.
pub(crate) fn live_or_superseded(report: &Report) -> bool {
    report.verdict >= Verdict::Superseded
}

/// When, by which version and from where: what a report read later (a CI artifact, an agent's
/// transcript) needs to be weighed.
pub fn stamp(report: &mut Report, cluster: liveproof_evidence::ClusterRef) {
    let now = jiff::Timestamp::now();
    report.generated_at = Some(
        jiff::Timestamp::from_second(now.as_second())
            .unwrap_or(now)
            .to_string(),
    );
    report.liveproof_version = Some(env!("CARGO_PKG_VERSION").to_string());
    report.cluster = Some(cluster);
}

/// Judges one complete pass, once ([`liveproof_evidence::judgement`]): the checks read nothing
/// but it. The change as the command states it, with where its time came from.
pub(crate) fn judge_pass(
    config: &VerifyConfig,
    observed: &Observed,
    targets: &[Target],
    default_ns: &str,
) -> Judgement {
    let change = Change {
        since_source: config.since_origin.clone(),
        ..config.change.clone()
    };
    liveproof_evidence::judgement(
        observed,
        &change,
        targets,
        default_ns,
        config.logs.is_some(),
    )
}
