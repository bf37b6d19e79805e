//! The one verifier: gathers what the checks need, judges it, and with `--wait` watches until
//! the verdict is final. Every command that verifies (verify, verify --snapshot, stale
//! --restart --wait, rollback, demo, mcp) goes through [`produce`] or [`wait`]; the commands
//! render what they return. It knows no command: `verify --snapshot` calls it, never the
//! other way round. It orchestrates: gather reads one complete pass, evidence judges it once,
//! and only a report that is not live is diagnosed after.

use futures::StreamExt;
use liveproof_evidence::hint::{Hinted as _, HintedMessage};
use liveproof_evidence::{Observed, Report, SeenLive, Settled, Touched};
use liveproof_gather::live::humanize;
use liveproof_gather::offline::namespace::DumpNamespace;
use liveproof_gather::registry::RegistryFacts;
pub use liveproof_gather::session::cluster_ref;
use liveproof_gather::session::dump_ref;
use liveproof_gather::{Cluster, Snapshot};

use crate::config::{Source, VerifyConfig};
use crate::deadline::{Deadline, OutOfTime};
use crate::progress::Progress;
pub use crate::verify_run::stamp;
use crate::verify_run::{
    completion, connect, judge_pass, live_or_superseded, refuse, selected_in, selected_on, session,
    Refuse, WaitJudge,
};

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
            let observed = liveproof_gather::offline::load_off_runtime(path).await?;
            let namespace = DumpNamespace::choose(
                config.namespace.as_deref(),
                config.namespace_origin.as_deref(),
                config.all_namespaces,
                &config.targets,
                &observed,
            );
            namespace.log();
            let ns = namespace.namespace();
            let config = &selected_in(config, &observed, ns)?;
            let pass = completion(config)
                .pass(None, observed, &config.targets, ns, config.all_namespaces)
                .await?;
            let mut report = judge_pass(config, &pass.observed, &pass.targets, ns).report;
            namespace.explain(&mut report, path);
            stamp(&mut report, dump_ref(path));
            Ok(report)
        }
        Source::Live(options) => {
            // What the flags alone show can never be live is refused before anything is read.
            if config.wait.is_some() {
                refuse(liveproof_evidence::unprovable_by_flags(
                    &config.change,
                    &config.targets,
                ))?;
            }
            let cluster = connect(options, config).await?;
            let config = &selected_on(config, &cluster).await?;
            let done = &live_or_superseded;
            let mut report = match config.wait {
                None => verify_once(config, &cluster).await?,
                Some(at) => watch(config, &cluster, at, done, Refuse::Unprovable).await?,
            };
            tracing::info!("{} API requests", cluster.request_count());
            stamp(&mut report, cluster_ref(&cluster));
            Ok(report)
        }
    }
}

/// One verification of a cluster, in its three steps: one complete pass (the cluster's
/// objects, what the images' tags resolve to, what the version URLs answer), judge, then for
/// the targets that are not live a second read, for their diagnostics.
async fn verify_once(config: &VerifyConfig, cluster: &Cluster) -> anyhow::Result<Report> {
    let session = session(config, cluster);
    let mut pass = session.pass().await?;
    let ns = session.default_namespace();
    let mut report = judge_pass(config, &pass.observed, &pass.targets, ns).report;
    session
        .diagnostics(&mut pass.observed, &mut report, config.logs)
        .await;
    Ok(report)
}

/// How often `--wait` asks a `--version-url` again when nothing in the cluster moved.
const VERSION_RECHECK: std::time::Duration = std::time::Duration::from_secs(2);

/// Watches until `done` holds for the judgement, a failure is final, or the deadline; returns
/// the last judgement. The deadline bounds everything here: the first gather and the registry
/// reads (past it: [`OutOfTime`](crate::deadline::OutOfTime), exit 2), the watch (past it: the
/// last judgement), and the diagnostics read at the end. `done` is not live (a rollback's wait
/// for the old template): a request that can never be live is waited on as any other.
pub async fn wait(
    config: &VerifyConfig,
    cluster: &Cluster,
    deadline: Deadline,
    done: &(dyn Fn(&Report) -> bool + Sync),
) -> anyhow::Result<Report> {
    watch(config, cluster, deadline, done, Refuse::Nothing).await
}

/// [`wait`], and with `refuse`, the first judgement that shows the request can never be live
/// ([`liveproof_evidence::unprovable`]: what a Helm or GitOps target reaches, known only once
/// read) ends it at once with that error, rather than at the `--timeout`.
async fn watch(
    config: &VerifyConfig,
    cluster: &Cluster,
    deadline: Deadline,
    done: &(dyn Fn(&Report) -> bool + Sync),
    refuse_unprovable: Refuse,
) -> anyhow::Result<Report> {
    // The watch stops a little early, so the diagnostics of a target that is not live can
    // still be read before the deadline.
    let watch_until = deadline.work_until();
    let mut progress = Progress::start("gathering", config.progress.clone());
    let session = session(config, cluster);
    let ns = session.default_namespace();
    let server = cluster.server();
    let gathering = format!("gathering {}", session.describe());
    // Registry facts are asked once, on the first snapshot, and laid onto every later one.
    let mut facts = RegistryFacts::default();
    deadline.before_first_read(server, &gathering)?;
    let first = deadline.bound(server, &gathering, session.watch()).await;
    let mut updates = Box::pin(first.map_err(
        |e| match session.decoding_ran_out(deadline.timeout) {
            // The deadline cut the gather short while a Helm release was being decoded: the time
            // went to the release, and the server is not to blame.
            Some(decoding) if e.is::<OutOfTime>() => decoding.into(),
            _ => e,
        },
    )?);
    // A server's reported version moves without any Kubernetes event: while one is expected,
    // the last snapshot is judged again on a tick (the cluster is still watched, not polled).
    let mut tick = tokio::time::interval(VERSION_RECHECK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut latest: Option<Observed> = None;
    let mut watch_failing = None;
    // A failure waiting cannot fix, or an unknown nothing later decides, ends the wait early:
    // that is not the --timeout running out.
    let mut stopped: Option<Settled> = None;
    let mut seen_live = SeenLive::default();
    let mut judging = WaitJudge::default();
    loop {
        let event = tokio::select! {
            next = tokio::time::timeout_at(watch_until, updates.next()) => next.ok().flatten().map(Some),
            _ = tick.tick(), if !config.change.versions.is_empty() && latest.is_some() => Some(None),
        };
        let (observed, touched) = match event {
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
                let Snapshot { observed, touched } = observed;
                (latest.insert(observed), touched)
            }
            Some(None) => match latest.as_mut() {
                Some(o) => (o, Touched::All),
                None => continue,
            },
            // The stream ended or the time is up: report what was seen last.
            None => {
                let Some(last) = judging.report() else {
                    return Err(deadline.ran_out(server, &gathering).into());
                };
                if let Some(failure) = watch_failing.take() {
                    if !done(last) {
                        return Err(failure.into());
                    }
                }
                if !done(last) {
                    tracing::warn!(
                        "--timeout {} ended before the change was live",
                        humanize(deadline.timeout)
                    );
                }
                break;
            }
        };
        let targets = session.complete_by(&facts, observed, deadline.at).await?;
        let stop = judging.pass(config, observed, &targets, ns, &touched, done);
        let Some(report) = judging.report() else {
            continue;
        };
        if refuse_unprovable == Refuse::Unprovable {
            if let Some(Settled::Unprovable { message, hint }) =
                liveproof_evidence::unprovable(report)
            {
                progress.finish();
                return Err(HintedMessage::new(message, hint).into());
            }
        }
        let absent = session.absent(observed);
        seen_live.observe(report, jiff::Timestamp::now());
        progress.say(&liveproof_report::progress::waiting_line(report, &absent));
        let finished = done(report);
        if let Some(settled) = stop.filter(|_| !finished) {
            tracing::warn!("{}", settled.stopping());
            stopped = Some(settled);
            break;
        }
        if finished || tokio::time::Instant::now() >= watch_until {
            break;
        }
    }
    progress.finish();
    let mut last = judging
        .finish(config, latest.as_ref(), ns)
        .ok_or_else(|| anyhow::anyhow!("no observation was made before the timeout"))?;
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
    last.wait = Some(liveproof_evidence::WaitRecord {
        timed_out: !done(&last) && stopped.is_none(),
        elapsed_seconds: deadline.elapsed_seconds(),
    });
    Ok(last)
}

#[cfg(test)]
mod tests {
    use liveproof_evidence::Verdict;

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
