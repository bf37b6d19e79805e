//! `liveproof stale`: which workloads run an older build than their tag names now, and
//! (`--restart`) restart exactly those (seed 001).

use std::io::Write;

use jiff::Timestamp;
use liveproof_evidence::digest::DigestPolicy;
use liveproof_evidence::{digest_rows, Change, DigestRow, RowVerdict, Target, Verdict};
use liveproof_gather::Cluster;

use crate::cli::{StaleArgs, StaleFormat};
use crate::config::{self, Source, VerifyConfig};
use crate::deadline::{within, Deadline};
use crate::digests::RegistryFacts;
use liveproof_report::RestartOutcome;

#[derive(Debug, thiserror::Error)]
pub enum StaleError {
    #[error(
        "target `{0}`: only deployment/, statefulset/ and daemonset/ targets run pods to compare"
    )]
    NotAWorkload(String),
    #[error("{}: declares no Deployment, StatefulSet or DaemonSet\nhint: -f takes the manifests the repository applies (plain YAML, not Helm templates)", .0.display())]
    NoWorkloads(std::path::PathBuf),
}

pub async fn run(args: &StaleArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    // With --wait, --timeout bounds the whole command from here; without, each request is
    // bounded by --request-timeout.
    let deadline = if args.wait {
        Some(Deadline::starting_now(config::parse_duration(
            &args.timeout,
        )?))
    } else {
        None
    };
    let options = config::cluster_options(&args.cluster)?;
    let request_timeout = config::request_timeout(&args.cluster)?;
    let cluster = Cluster::connect(&options).await?;
    let server = cluster.server().to_string();
    let ns = cluster.default_namespace().to_string();
    let targets = within(
        deadline,
        &server,
        "listing the workloads to check",
        scope(args, &cluster, &ns),
    )
    .await?;
    let policy = if args.check_digests {
        DigestPolicy::AllTags
    } else {
        DigestPolicy::Mutable
    };
    let mut observed = within(
        deadline,
        &server,
        "reading the workloads and their pods",
        async {
            let observed = cluster.gather(&targets, false).await?;
            cluster.check_namespaces(&observed, &targets).await?;
            Ok::<_, liveproof_gather::GatherError>(observed)
        },
    )
    .await?;
    let facts = within(
        deadline,
        &server,
        "reading what the images' tags resolve to",
        RegistryFacts::gather(
            policy,
            &args.insecure_registry,
            request_timeout,
            Some(&cluster),
            &observed,
            &[],
        ),
    )
    .await?;
    facts.apply(&mut observed);
    let rows: Vec<DigestRow> = targets
        .iter()
        .flat_map(|t| digest_rows(&observed, t, t.namespace_or(&ns), policy))
        .collect();
    let stale: Vec<&Target> = targets
        .iter()
        .filter(|t| {
            rows.iter().any(|r| {
                r.verdict == RowVerdict::Stale
                    && r.workload == t.name
                    && r.kind == t.kind.kind_name()
                    && Some(r.namespace.as_str()) == t.namespace.as_deref()
            })
        })
        .collect();
    let unknown = rows.iter().any(|r| r.verdict == RowVerdict::Unknown);
    let untouched_code = if !stale.is_empty() {
        1
    } else if unknown {
        3
    } else {
        0
    };
    let (code, restart) = if args.restart {
        let on = Reach {
            cluster: &cluster,
            options,
            namespace: &ns,
            deadline,
            request_timeout,
        };
        let (code, outcome) = restart(args, &on, &stale, unknown, policy).await?;
        (
            if stale.is_empty() {
                untouched_code
            } else {
                code
            },
            Some(outcome),
        )
    } else {
        (untouched_code, None)
    };
    match args.output {
        StaleFormat::Text => liveproof_report::render_stale_text(
            &rows,
            restart.as_ref(),
            liveproof_report::TextStyle::plain(),
            out,
        )?,
        StaleFormat::Json => liveproof_report::render_stale_json(&rows, restart.as_ref(), out)?,
    }
    Ok(code)
}

/// The cluster a restart writes to and the bounds it runs within.
struct Reach<'a> {
    cluster: &'a Cluster,
    options: liveproof_gather::ClusterOptions,
    namespace: &'a str,
    deadline: Option<Deadline>,
    request_timeout: std::time::Duration,
}

/// `--restart`: patch exactly the stale workloads (or say what would be patched), then with
/// `--wait` verify them. Returns the exit code and what was done; prints nothing itself.
async fn restart(
    args: &StaleArgs,
    on: &Reach<'_>,
    stale: &[&Target],
    unknown: bool,
    policy: DigestPolicy,
) -> anyhow::Result<(u8, RestartOutcome)> {
    let (cluster, ns, deadline, request_timeout) =
        (on.cluster, on.namespace, on.deadline, on.request_timeout);
    let options = on.options.clone();
    let mut outcome = RestartOutcome {
        dry_run: args.dry_run,
        ..RestartOutcome::default()
    };
    // Never a request when nothing is stale: a redeploy that changed no image is a no-op.
    if stale.is_empty() {
        outcome.output.push(format!(
            "nothing to restart: every checked workload runs what its tag resolves to now{}",
            if unknown {
                " (or could not be compared: see above)"
            } else {
                ""
            }
        ));
        return Ok((0, outcome));
    }
    let at = Timestamp::from_second(Timestamp::now().as_second())?;
    outcome.at = Some(at.to_string());
    if args.dry_run {
        for t in stale {
            outcome.patched.push(t.to_string());
            outcome.output.push(format!(
                "would PATCH {} {}/{} (strategic merge):",
                t.kind,
                t.namespace.as_deref().unwrap_or(ns),
                t.name
            ));
            outcome
                .output
                .push(format!("  {}", liveproof_gather::restart_patch(at)));
        }
        outcome.output.push("dry run: nothing was sent".into());
        return Ok((1, outcome));
    }
    // Kubernetes records startedAt in whole seconds: a pod the restart starts within the
    // second of `at` would record `at` itself and never count as started after it (found on
    // the real control plane, where a pod can start in under a second). So the PATCHes are
    // sent in the next second: every pod they start records a time after `at`.
    let next_second = at.checked_add(jiff::SignedDuration::from_secs(1))?;
    let left = next_second.duration_since(Timestamp::now());
    if left.is_positive() {
        tokio::time::sleep(left.unsigned_abs()).await;
    }
    let mut restarted = Vec::new();
    for t in stale {
        match cluster.restart(t, at).await {
            Ok(patch) => {
                outcome.output.push(format!("restarted {t}: {patch}"));
                outcome.patched.push(t.to_string());
                restarted.push((*t).clone());
            }
            Err(e) => {
                outcome.output.push(format!("could not restart {t}: {e}"));
                outcome.failed.push(format!("{t}: {e}"));
            }
        }
    }
    let failed = !outcome.failed.is_empty();
    let Some(deadline) = deadline else {
        return Ok((u8::from(failed), outcome));
    };
    let config = VerifyConfig {
        targets: restarted,
        change: Change {
            since: Some(at),
            digests: policy,
            // The change is the restart itself; image_digest_current holds the new pods to it.
            stated_by: Some("the restart `liveproof stale` made".into()),
            ..Change::default()
        },
        source: Source::Live(options),
        all_namespaces: false,
        namespace: Some(ns.to_string()),
        wait: Some(deadline),
        request_timeout,
        format: liveproof_report::Format::Text,
        style: liveproof_report::TextStyle::plain(),
        since_origin: Some("the restart".into()),
        max_release_size: liveproof_helm::DEFAULT_MAX_RELEASE_SIZE,
        repo: ".".into(),
        insecure_registries: args.insecure_registry.clone(),
        versions: Vec::new(),
        logs: None,
        snapshot: None,
        report: None,
    };
    let report = crate::verify::produce(&config).await?;
    let live = report.verdict == Verdict::Live;
    outcome.report = Some(report);
    Ok((if failed || !live { 1 } else { 0 }, outcome))
}

/// The workloads to check: the targets, what `-f` declares, or all in the namespace(s).
async fn scope(args: &StaleArgs, cluster: &Cluster, ns: &str) -> anyhow::Result<Vec<Target>> {
    if let Some(path) = &args.manifests {
        return declared_workloads(path, ns);
    }
    if !args.targets.is_empty() {
        return args
            .targets
            .iter()
            .map(|given| {
                let t = Target::parse(given)?;
                if !t.kind.is_workload() {
                    return Err(StaleError::NotAWorkload(given.clone()).into());
                }
                let target_ns = t.namespace.clone().unwrap_or_else(|| ns.to_string());
                Ok(Target::new(t.kind, Some(&target_ns), &t.name))
            })
            .collect();
    }
    let namespace = (!args.cluster.all_namespaces).then_some(ns);
    Ok(cluster.workloads_in(namespace).await?)
}

/// The Deployments, StatefulSets and DaemonSets a folder of manifests declares — only what the
/// repository manages, never what it does not (seed 001).
pub fn declared_workloads(path: &std::path::Path, ns: &str) -> anyhow::Result<Vec<Target>> {
    let declared = liveproof_gather::offline::load(path)?;
    let mut targets: Vec<Target> = declared
        .workloads()
        .map(|(kind, m, _)| (kind, m))
        .filter_map(|(kind, m)| {
            let name = m.name.as_deref()?;
            Some(Target::new(
                kind,
                Some(m.namespace.as_deref().unwrap_or(ns)),
                name,
            ))
        })
        .collect();
    targets.sort();
    targets.dedup();
    if targets.is_empty() {
        return Err(StaleError::NoWorkloads(path.to_path_buf()).into());
    }
    Ok(targets)
}
