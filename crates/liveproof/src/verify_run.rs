//! The command's configuration as gather reads it: the cluster connected within `--timeout`,
//! what completing a pass needs (the change, `--repo`, limits, the command's caches), the
//! session of one cluster, and the targets `-l` selected. The verifier orchestrates with these.

use liveproof_evidence::hint::HintedMessage;
use liveproof_evidence::{
    Change, Judgement, Observed, Rejudge, Report, Settled, Target, Touched, Verdict,
};
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

/// `--wait`'s judge from snapshot to snapshot: between them only the targets a watch event
/// touched are judged again ([`Rejudge`]: CPU in proportion to what changed, no diagnosis of
/// every target not live yet). A pass that would end the wait (live, superseded, or a failure
/// waiting will not fix) is confirmed by the full judgement ([`judge_pass`]) first, and ends
/// on that; if they disagree, the full one stands and the next pass starts from it again.
#[derive(Default)]
pub(crate) struct WaitJudge {
    rejudge: Option<Rejudge>,
    /// The full judgement of the last pass, when it was confirmed; the incremental report is
    /// the judge's own, borrowed, never copied per pass (at 2,000 targets a report is tens of
    /// MB, and a copy per snapshot was a third of the wait's memory).
    full: Option<Report>,
    /// Target judgements of a judge dropped at a confirmation that ended the wait.
    judged_by_dropped: usize,
    passes: usize,
    confirmed: usize,
}

impl WaitJudge {
    /// Judges `observed` after `touched`; what settles the wait, if anything. The report is
    /// [`WaitJudge::report`].
    pub(crate) fn pass(
        &mut self,
        config: &VerifyConfig,
        observed: &Observed,
        targets: &[Target],
        ns: &str,
        touched: &Touched,
        done: &(dyn Fn(&Report) -> bool + Sync),
    ) -> Option<Settled> {
        self.passes += 1;
        self.full = None;
        let rejudge = match self.rejudge.as_mut() {
            Some(rejudge) => {
                rejudge.update(observed, targets, touched);
                rejudge
            }
            None => self
                .rejudge
                .insert(Rejudge::new(observed, &stated(config), targets, ns)),
        };
        let stop = rejudge.settled(observed);
        if stop.is_none() && !done(rejudge.report()) {
            return stop;
        }
        self.confirmed += 1;
        // The incremental report goes before the full one is made: two reports of 2,000
        // targets at once were the peak of the wait's memory. Where the full judgement agrees
        // and ends the wait, nothing needs the judge again; otherwise it starts anew from it.
        let (verdict, judged) = (rejudge.report().verdict, rejudge.judged);
        self.rejudge = None;
        let full = judge_pass(config, observed, targets, ns);
        let agrees = full.stop == stop && full.report.verdict == verdict;
        if !agrees || (full.stop.is_none() && !done(&full.report)) {
            if !agrees {
                tracing::debug!(
                    "the full judgement differs from the incremental one; judging anew"
                );
            }
            let rejudge = Rejudge::new(observed, &stated(config), targets, ns);
            self.rejudge.insert(rejudge).judged += judged;
        }
        self.judged_by_dropped = judged;
        self.full = Some(full.report);
        full.stop
    }

    /// The last pass's report: the full judgement when it was confirmed, else the incremental
    /// one. `None` before the first pass.
    pub(crate) fn report(&self) -> Option<&Report> {
        self.full
            .as_ref()
            .or_else(|| self.rejudge.as_ref().map(Rejudge::report))
    }

    /// Once the wait is over: says what its judging cost (`-v`), and gives the report it ends
    /// on — always a full judgement: when the last pass gave the incremental report (the
    /// `--timeout` ran out on it), the full judgement of `latest`, so a target the incremental
    /// judge left stale is never what a wait that ran out reports. `None` before any pass.
    /// It ends the judge: what it held is freed before the report is explained and written.
    pub(crate) fn finish(
        mut self,
        config: &VerifyConfig,
        latest: Option<&Observed>,
        ns: &str,
    ) -> Option<Report> {
        let judged = self
            .rejudge
            .as_ref()
            .map_or(self.judged_by_dropped, |r| r.judged);
        tracing::info!(
            "judged {} snapshots: {judged} target judgements, {} full judgements to confirm",
            self.passes,
            self.confirmed
        );
        if let Some(full) = self.full.take() {
            return Some(full);
        }
        let (observed, rejudge) = (latest?, self.rejudge.as_ref()?);
        Some(judge_pass(config, observed, rejudge.targets(), ns).report)
    }
}

/// The change as the command states it, with where its time came from.
fn stated(config: &VerifyConfig) -> Change {
    Change {
        since_source: config.since_origin.clone(),
        ..config.change.clone()
    }
}

/// Judges one complete pass, once ([`liveproof_evidence::judgement`]): the checks read nothing
/// but it. The change as the command states it, with where its time came from.
pub(crate) fn judge_pass(
    config: &VerifyConfig,
    observed: &Observed,
    targets: &[Target],
    default_ns: &str,
) -> Judgement {
    liveproof_evidence::judgement(
        observed,
        &stated(config),
        targets,
        default_ns,
        config.logs.is_some(),
    )
}

#[cfg(test)]
mod tests {
    use liveproof_evidence::{ExpectedImage, ObjectKind, ObjectRef, TargetKind};
    use liveproof_testkit::fleet::{self, observed, touched};
    use serde_json::{json, Value};

    use super::*;
    use crate::config::Source;

    const NEW: &str = "registry.local/bench-app:2";

    fn object<'v>(values: &'v mut [Value], kind: &str, name: &str) -> &'v mut Value {
        values
            .iter_mut()
            .find(|v| v["kind"] == kind && v["metadata"]["name"] == name)
            .expect("object")
    }

    /// svc-`d` rolled out whole: its template, ReplicaSet and pods run the new image, its pods
    /// started after the change (`image` the old one again undoes it).
    fn roll(values: &mut [Value], d: usize, image: &str, started: &str) -> Vec<ObjectRef> {
        let mut refs = Vec::new();
        for (kind, name, object_kind) in [
            ("Deployment", format!("svc-{d}"), ObjectKind::Workload),
            ("ReplicaSet", format!("svc-{d}-h1"), ObjectKind::ReplicaSet),
        ] {
            let v = object(values, kind, &name);
            v["spec"]["template"]["spec"]["containers"][0]["image"] = json!(image);
            refs.push(touched(object_kind, v));
        }
        for p in 0..2 {
            let v = object(values, "Pod", &format!("svc-{d}-h1-{p}"));
            v["spec"]["containers"][0]["image"] = json!(image);
            v["status"]["containerStatuses"][0]["image"] = json!(image);
            v["status"]["startTime"] = json!(started);
            v["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = json!(started);
            refs.push(touched(ObjectKind::Pod, v));
        }
        refs
    }

    /// Deployments svc-0 … svc-(n-1) in `bench` as targets, and a verify of them that states
    /// the image [`NEW`] since the fleet's change time.
    fn stated_rollout(n: usize) -> (Vec<Target>, VerifyConfig) {
        let change = Change {
            since: Some(fleet::CHANGE_AT.parse().expect("time")),
            images: vec![ExpectedImage::parse(NEW).expect("image")],
            ..Change::default()
        };
        let targets: Vec<Target> = (0..n)
            .map(|d| Target::new(TargetKind::Deployment, Some("bench"), &format!("svc-{d}")))
            .collect();
        let config = VerifyConfig::new(
            targets.clone(),
            change,
            Source::Offline(std::path::PathBuf::from("cluster.yaml")),
        );
        (targets, config)
    }

    /// A pass the incremental judge would end on is confirmed by the full judgement first: a
    /// change the touched set missed (here svc-0 rolled back, its events not named) never
    /// ends a wait as live, and the next pass judges from the full judgement again.
    #[test]
    fn a_stale_incremental_live_never_ends_a_wait() {
        let (targets, config) = stated_rollout(2);
        let mut judge = WaitJudge::default();
        let mut values = fleet::deployments("bench", 2, 2, true);
        let after = "2026-07-12T10:05:00Z";

        let rolled = roll(&mut values, 0, NEW, after);
        judge.pass(
            &config,
            &observed(&values),
            &targets,
            "bench",
            &Touched::Objects(rolled),
            &live_or_superseded,
        );
        assert_eq!(
            judge.report().expect("judged").verdict,
            Verdict::NotLive,
            "svc-1 has not rolled"
        );

        // svc-1 rolls out, and svc-0 goes back to the old image, but the touched set names
        // only svc-1's objects.
        let old = fleet::IMAGE;
        roll(&mut values, 0, old, after);
        let rolled = roll(&mut values, 1, NEW, after);
        let now = observed(&values);
        judge.pass(
            &config,
            &now,
            &targets,
            "bench",
            &Touched::Objects(rolled),
            &live_or_superseded,
        );
        let second = judge.report().expect("judged");
        assert_eq!(second.verdict, Verdict::NotLive, "{:#?}", second.targets[0]);
        let svc0 = &second.targets[0];
        assert_eq!(
            (svc0.name.as_str(), svc0.verdict),
            ("svc-0", Verdict::NotLive)
        );

        // Resynced: a pass with nothing touched stays what the full judgement said.
        judge.pass(
            &config,
            &now,
            &targets,
            "bench",
            &Touched::Objects(Vec::new()),
            &live_or_superseded,
        );
        assert_eq!(judge.report().expect("judged").verdict, Verdict::NotLive);
        assert_eq!(
            judge.confirmed, 1,
            "only the pass that looked live was confirmed"
        );
    }

    /// A wait that runs out on an incremental pass reports the full judgement of its last
    /// snapshot: here svc-0 rolled out too, but the touched set named only svc-1, so the
    /// incremental report still says svc-0 is not live (a false not_live, had it been kept).
    #[test]
    fn a_wait_that_runs_out_reports_the_full_judgement_of_its_last_snapshot() {
        let (targets, config) = stated_rollout(3);
        let mut judge = WaitJudge::default();
        let mut values = fleet::deployments("bench", 3, 2, true);
        let after = "2026-07-12T10:05:00Z";
        let all = Touched::All;
        judge.pass(
            &config,
            &observed(&values),
            &targets,
            "bench",
            &all,
            &live_or_superseded,
        );
        roll(&mut values, 0, NEW, after);
        let rolled = roll(&mut values, 1, NEW, after);
        let now = observed(&values);
        let touched = Touched::Objects(rolled);
        judge.pass(
            &config,
            &now,
            &targets,
            "bench",
            &touched,
            &live_or_superseded,
        );
        assert_eq!(
            judge.report().expect("judged").targets[0].verdict,
            Verdict::NotLive,
            "stale, as the test means"
        );
        let last = judge
            .finish(&config, Some(&now), "bench")
            .expect("a report");
        let verdicts: Vec<Verdict> = last.targets.iter().map(|t| t.verdict).collect();
        assert_eq!(
            verdicts,
            [Verdict::Live, Verdict::Live, Verdict::NotLive],
            "svc-2 has not rolled"
        );
    }
}
