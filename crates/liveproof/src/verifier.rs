//! The one verifier: gathers what the checks need, judges it, and with `--wait` watches until
//! the verdict is final. Every command that verifies (verify, verify --snapshot, stale
//! --restart --wait, rollback, demo, mcp) goes through [`produce`] or [`wait`]; the commands
//! render what they return. It knows no command: `verify --snapshot` calls it, never the
//! other way round.

use futures::StreamExt;
use liveproof_evidence::hint::Hinted as _;
use liveproof_evidence::{judge, settled, Observed, Report, Settled, Target, Verdict};
use liveproof_gather::complete::{Completion, DecodeOutOfTime, Wait};
use liveproof_gather::offline::namespace::DumpNamespace;
use liveproof_gather::registry::RegistryFacts;
use liveproof_gather::session::{select, PassError, Session};
use liveproof_gather::Cluster;

use crate::config::{Source, VerifyConfig};
use crate::deadline::Deadline;
use crate::progress::Progress;

/// Gathers and judges: the report `verify` renders. Offline, from the `--from` files; live,
/// once ([`verify_once`]) or, with `--wait`, until the verdict is final ([`wait`]).
pub async fn produce(config: &VerifyConfig) -> anyhow::Result<Report> {
    if let Some(origin) = &config.since_origin {
        tracing::info!(
            "change time {} ({origin})",
            config
                .change
                .since
                .map(|t| t.to_string())
                .unwrap_or_default()
        );
    }
    match &config.source {
        Source::Offline(path) => {
            let mut observed = liveproof_gather::offline::load_off_runtime(path).await?;
            let namespace = DumpNamespace::choose(
                config.namespace.as_deref(),
                config.namespace_origin.as_deref(),
                config.all_namespaces,
                &config.targets,
                &observed,
            );
            namespace.log();
            let default_ns = namespace.namespace();
            let selected = config.selector.as_ref().map(|(text, selector)| {
                let ns = (!config.all_namespaces).then_some(default_ns);
                (text, ns, observed.workloads_matching(selector, ns))
            });
            let config = &with_selected(config, selected)?;
            let facts = completion(config).registry_facts(None, &observed).await?;
            completion(config).read_versions(&mut observed).await;
            let targets = completion(config)
                .complete(
                    &facts,
                    &mut observed,
                    &config.targets,
                    default_ns,
                    config.all_namespaces,
                )
                .await
                .map_err(|e| handed_on(e.into()))?;
            let mut report = judge_pass(config, &observed, &targets, default_ns).0;
            namespace.explain(&mut report, path);
            let from = Some(path.display().to_string());
            stamp(
                &mut report,
                liveproof_evidence::ClusterRef {
                    from,
                    ..Default::default()
                },
            );
            Ok(report)
        }
        Source::Live(options) => {
            let cluster = Cluster::connect(&bounded(options, config))
                .await?
                .with_release_limits(
                    completion(config).release_limits(),
                    config.decode_cache.clone(),
                );
            let selected = match &config.selector {
                Some((text, _)) => {
                    let ns = (!config.all_namespaces).then_some(cluster.default_namespace());
                    let found = cluster.workloads_in(ns, Some(text)).await?;
                    Some((text, ns, found))
                }
                None => None,
            };
            let config = &with_selected(config, selected)?;
            let mut report = match config.wait {
                None => verify_once(config, &cluster).await?,
                Some(deadline) => wait(config, &cluster, deadline, &live_or_superseded).await?,
            };
            tracing::info!("{} API requests", cluster.request_count());
            stamp(&mut report, cluster_ref(&cluster));
            Ok(report)
        }
    }
}

/// What `--wait` waits for: every target live, or live or superseded — a later change replaced
/// the stated one, and waiting cannot make it live as such.
fn live_or_superseded(report: &Report) -> bool {
    report.verdict >= Verdict::Superseded
}

/// `options` with the command's `--timeout` (an exec credential plugin run while connecting
/// ends by then too).
pub(crate) fn bounded(
    options: &liveproof_gather::ClusterOptions,
    config: &VerifyConfig,
) -> liveproof_gather::ClusterOptions {
    liveproof_gather::ClusterOptions {
        deadline: config.wait.map(|d| d.at.into_std()),
        ..options.clone()
    }
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

/// One verification of a cluster, in its three steps: one complete pass (the cluster's
/// objects, what the images' tags resolve to, what the version URLs answer), judge, then for
/// the targets that are not live a second read, for their diagnostics.
async fn verify_once(config: &VerifyConfig, cluster: &Cluster) -> anyhow::Result<Report> {
    let session = session(config, cluster);
    let mut pass = session.pass().await.map_err(handed_on)?;
    let ns = session.default_namespace();
    let (mut report, _) = judge_pass(config, &pass.observed, &pass.targets, ns);
    session
        .diagnostics(&mut pass.observed, &mut report, config.logs)
        .await;
    Ok(report)
}

/// The session that reads `cluster` for `config`'s targets.
fn session<'a>(config: &'a VerifyConfig, cluster: &'a Cluster) -> Session<'a> {
    Session {
        cluster,
        completion: completion(config),
        targets: &config.targets,
        all_namespaces: config.all_namespaces,
    }
}

/// A pass that could not be made, as its own error (each names its hint).
fn handed_on(error: PassError) -> anyhow::Error {
    match error {
        PassError::Gather(e) => e.into(),
        PassError::Facts(e) => e.into(),
        PassError::Unreadable(e) => e.into(),
        PassError::OutOfTime(e) => e.into(),
    }
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

/// The cluster as a report names it: context and server URL, never credentials.
pub fn cluster_ref(cluster: &Cluster) -> liveproof_evidence::ClusterRef {
    liveproof_evidence::ClusterRef {
        context: cluster.context().map(str::to_string),
        // Masked, and without a query: the cluster's URL as it may be shown.
        server: Some(cluster.server().to_string()),
        from: None,
    }
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

/// `error`, or, when it is the deadline cutting a gather short while a Helm release was being
/// decoded, that: the time went to the release, and the server is not to blame.
fn decoding_ran_out(
    config: &VerifyConfig,
    deadline: Deadline,
    error: anyhow::Error,
) -> anyhow::Error {
    let Some(object) = config.decode_cache.decoding() else {
        return error;
    };
    if error.downcast_ref::<crate::deadline::OutOfTime>().is_none() {
        return error;
    }
    DecodeOutOfTime {
        target: describe(&config.targets),
        object,
        timeout: deadline.timeout,
    }
    .into()
}

/// Judges one complete snapshot: the checks read nothing but it. Also says whether the answer
/// is settled (for `--wait`: a final failure, an unknown nothing later decides).
fn judge_pass(
    config: &VerifyConfig,
    observed: &Observed,
    targets: &[Target],
    default_ns: &str,
) -> (Report, Option<Settled>) {
    let mut change = config.change.clone();
    change.since_source.clone_from(&config.since_origin);
    // A manifest that names no namespace declares its workload in the default one.
    for d in &mut change.declared {
        if d.target.namespace.is_none() {
            d.target.namespace = Some(default_ns.to_string());
        }
    }
    let mut report = judge(observed, &change, targets, default_ns);
    liveproof_gather::diagnostics::explain(
        &mut report,
        observed,
        config.change.since,
        config.logs.is_some(),
    );
    let settled = settled(observed, &change, targets, default_ns, &report);
    (report, settled)
}

/// How often `--wait` asks a `--version-url` again when nothing in the cluster moved.
const VERSION_RECHECK: std::time::Duration = std::time::Duration::from_secs(2);

/// Watches until `done` holds for the judgement (for verify: live), a failure is final, or the
/// deadline; returns the last judgement. The deadline bounds everything here: the first gather
/// and the registry reads (past it: [`OutOfTime`](crate::deadline::OutOfTime), exit 2), the
/// watch (past it: the last judgement), and the diagnostics read at the end.
pub async fn wait(
    config: &VerifyConfig,
    cluster: &Cluster,
    deadline: Deadline,
    done: &(dyn Fn(&Report) -> bool + Sync),
) -> anyhow::Result<Report> {
    // The watch stops a little early, so the diagnostics of a target that is not live can
    // still be read before the deadline.
    let watch_until = deadline.work_until();
    let mut progress = Progress::start("gathering", config.progress.clone());
    let session = session(config, cluster);
    let ns = session.default_namespace();
    let server = cluster.server();
    let gathering = format!("gathering {}", describe(&config.targets));
    // Registry facts are asked once, on the first snapshot, and laid onto every later one.
    let mut facts = RegistryFacts::default();
    deadline.before_first_read(server, &gathering)?;
    let first = deadline.bound(server, &gathering, session.watch()).await;
    let mut updates = Box::pin(first.map_err(|e| decoding_ran_out(config, deadline, e))?);
    // A server's reported version moves without any Kubernetes event: while one is expected,
    // the last snapshot is judged again on a tick (the cluster is still watched, not polled).
    let mut tick = tokio::time::interval(VERSION_RECHECK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut latest: Option<Observed> = None;
    let mut last: Option<Report> = None;
    let mut watch_failing = None;
    // A failure waiting cannot fix, or an unknown nothing later decides, ends the wait early:
    // that is not the --timeout running out.
    let mut stopped: Option<Settled> = None;
    let mut seen_live = SeenLive::default();
    loop {
        let event = tokio::select! {
            next = tokio::time::timeout_at(watch_until, updates.next()) => next.ok().flatten().map(Some),
            _ = tick.tick(), if !config.change.versions.is_empty() && latest.is_some() => Some(None),
        };
        let observed = match event {
            Some(Some(observed)) => {
                // Watches that keep failing go on retrying (with backoff) until the deadline:
                // only the deadline or a final verdict ends the wait. Still failing then is
                // an error (exit 2); a snapshot in between clears it.
                let observed = match observed {
                    Ok(observed) => {
                        watch_failing = None;
                        observed
                    }
                    Err(e) => {
                        tracing::warn!("{}; still retrying until the --timeout", e.with_hint());
                        watch_failing = Some(e);
                        continue;
                    }
                };
                if latest.is_none() {
                    deadline
                        .bound(server, &gathering, session.check_namespaces(&observed))
                        .await?;
                    facts = deadline
                        .bound(
                            server,
                            "reading what the images' tags resolve to",
                            session.facts(&observed),
                        )
                        .await?;
                }
                // Kept once and judged in place: a clone per event held every watched
                // object twice for the length of the wait.
                latest.insert(observed)
            }
            Some(None) => match latest.as_mut() {
                Some(o) => o,
                None => continue,
            },
            // The stream ended or the time is up: report what was seen last.
            None => {
                if last.is_none() {
                    return Err(crate::deadline::OutOfTime {
                        server: server.clone(),
                        what: gathering,
                        timeout: deadline.timeout,
                        too_short: deadline.timeout < crate::deadline::TOO_SHORT,
                    }
                    .into());
                }
                if let Some(failure) = watch_failing.take() {
                    if last.as_ref().is_some_and(|r| !done(r)) {
                        return Err(failure.into());
                    }
                }
                if last.as_ref().is_some_and(|r| !done(r)) {
                    tracing::warn!(
                        "--timeout {} ended before the change was live",
                        humanize(deadline.timeout)
                    );
                }
                break;
            }
        };
        // A version not read by the deadline stays unread: its server is then unknown, and
        // the report is not live (it never is on the workloads alone).
        let _ =
            tokio::time::timeout_at(deadline.at, session.completion.read_versions(observed)).await;
        let targets = session
            .complete(&facts, observed)
            .await
            .map_err(|e| handed_on(e.into()))?;
        let (report, final_reason) = judge_pass(config, observed, &targets, ns);
        let absent = session.absent(observed);
        seen_live.observe(&report, jiff::Timestamp::now());
        progress.say(&liveproof_report::progress::waiting_line(&report, &absent));
        let finished = done(&report);
        last = Some(report);
        if let Some(settled) = final_reason.filter(|_| !finished) {
            tracing::warn!("{}", settled.stopping());
            stopped = Some(settled);
            break;
        }
        if finished || tokio::time::Instant::now() >= watch_until {
            break;
        }
    }
    progress.finish();
    let mut last =
        last.ok_or_else(|| anyhow::anyhow!("no observation was made before the timeout"))?;
    // A target that never appeared while waiting for its first deploy is still not there:
    // an input error (a typo waits the whole --timeout, then says so), not a verdict.
    if let (false, Some(observed)) = (done(&last), &latest) {
        session.check_found(observed).await?;
    }
    if let Some(mut observed) = latest {
        facts.apply(&mut observed);
        let explained = tokio::time::timeout_at(
            deadline.at,
            session.diagnostics(&mut observed, &mut last, config.logs),
        )
        .await;
        if explained.is_err() {
            tracing::warn!("the diagnostics could not be read before --timeout ran out");
        }
    }
    seen_live.record(&mut last);
    last.notes.extend(stopped.as_ref().map(Settled::note));
    // Whole seconds, rounded: a 2s --timeout stops its watch a little early to explain.
    let elapsed = deadline.elapsed().as_millis().saturating_add(500) / 1000;
    last.wait = Some(liveproof_evidence::WaitRecord {
        timed_out: !done(&last) && stopped.is_none(),
        elapsed_seconds: u64::try_from(elapsed).unwrap_or(u64::MAX),
    });
    Ok(last)
}

/// When `--wait` first saw each target live, in its latest unbroken run of live judgements
/// (a target that fell back is seen anew): sharper than what the cluster dates after the fact
/// when the cluster dates nothing.
#[derive(Default)]
struct SeenLive(std::collections::BTreeMap<String, jiff::Timestamp>);

impl SeenLive {
    fn observe(&mut self, report: &Report, now: jiff::Timestamp) {
        for t in &report.targets {
            if t.verdict == Verdict::Live {
                self.0.entry(t.key()).or_insert(now);
            } else {
                self.0.remove(&t.key());
            }
        }
    }

    /// Each target seen live gets its `observed_live` moment; the lead time is worked out
    /// again with them.
    fn record(&self, report: &mut Report) {
        for t in &mut report.targets {
            if let Some(at) = self.0.get(&t.key()) {
                t.observed_live(*at);
            }
        }
        report.date_lead_time();
    }
}

/// `deploy/api, sts/db` for messages.
fn describe(targets: &[Target]) -> String {
    if targets.is_empty() {
        return "the targets".to_string();
    }
    targets
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

use liveproof_gather::live::humanize;

#[cfg(test)]
mod tests {
    use super::*;

    /// `--wait` ends on live and on superseded (waiting cannot undo a later change), never on
    /// not live or unproven.
    #[test]
    fn a_wait_ends_on_live_or_superseded() {
        let report = |verdict: Verdict| Report {
            verdict,
            ..Report::new(Default::default(), Vec::new())
        };
        for (verdict, done) in [
            (Verdict::Live, true),
            (Verdict::Superseded, true),
            (Verdict::Unproven, false),
            (Verdict::NotLive, false),
        ] {
            assert_eq!(live_or_superseded(&report(verdict)), done, "{verdict:?}");
        }
    }
}
