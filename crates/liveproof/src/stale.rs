//! `liveproof stale`: which workloads run an older build than their tag names now, and
//! (`--restart`) restart exactly those (seed 001).

use jiff::Timestamp;
use liveproof_evidence::digest::DigestPolicy;
use liveproof_evidence::hint::Hinted as _;
use liveproof_evidence::{digest_rows, Change, DeclaredTemplate, DigestRow, RowVerdict, Target};
use liveproof_gather::Cluster;

use crate::cli::StaleArgs;
use crate::config::{self, Source, VerifyConfig};
use crate::deadline::{within, Deadline};
use liveproof_gather::registry::RegistryFacts;
use liveproof_report::{RestartOutcome, RestartStep, StaleOutcome};

#[derive(Debug, thiserror::Error)]
pub enum StaleError {
    #[error(
        "target `{0}`: only deployment/, statefulset/ and daemonset/ targets run pods to compare"
    )]
    NotAWorkload(String),
}

/// Compares, and with `--restart` restarts: what `stale` found and did (its exit code is the
/// model's, [`StaleOutcome`]); the CLI and the MCP tool print it.
pub async fn check(args: &StaleArgs) -> anyhow::Result<StaleOutcome> {
    // clap's rules, for arguments built without it (an MCP tool call).
    crate::rules::check(args)?;
    // With --wait, --timeout bounds the whole command from here; without, each request is
    // bounded by --request-timeout.
    let deadline = if args.wait {
        Some(Deadline::starting_now(config::parse_duration(
            &args.timeout,
        )?))
    } else {
        None
    };
    let options = liveproof_gather::ClusterOptions::try_from(&args.cluster)?;
    let request_timeout = config::request_timeout(&args.cluster)?;
    let cluster = Cluster::connect(&options).await?;
    let server = cluster.server().clone();
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
    let restart = if args.restart {
        let on = Reach {
            cluster: &cluster,
            options,
            namespace: &ns,
            deadline,
            request_timeout,
        };
        Some(restart(args, &on, &stale, unknown, policy).await?)
    } else {
        None
    };
    Ok(StaleOutcome { rows, restart })
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
/// `--wait` verify them. Returns what was done; prints nothing itself.
async fn restart(
    args: &StaleArgs,
    on: &Reach<'_>,
    stale: &[&Target],
    unknown: bool,
    policy: DigestPolicy,
) -> anyhow::Result<RestartOutcome> {
    let (cluster, ns, deadline, request_timeout) =
        (on.cluster, on.namespace, on.deadline, on.request_timeout);
    let options = on.options.clone();
    let mut outcome = RestartOutcome::default();
    outcome.dry_run = args.dry_run;
    // Never a request when nothing is stale: a redeploy that changed no image is a no-op.
    if stale.is_empty() {
        outcome.record(RestartStep::NothingStale { unknown });
        return Ok(outcome);
    }
    // To the millisecond, and written into each template it restarts: the new pods' template
    // then shows the restart, which orders a pod started in the same second as `at` (start
    // times are recorded to the second) without waiting for the next second to send.
    let at = Timestamp::from_millisecond(Timestamp::now().as_millisecond())?;
    outcome.at = Some(at.to_string());
    if args.dry_run {
        for t in stale {
            outcome.record(RestartStep::WouldPatch {
                target: t.to_string(),
                kind: t.kind.to_string(),
                namespace: t.namespace.as_deref().unwrap_or(ns).to_string(),
                name: t.name.clone(),
                patch: liveproof_gather::restart_patch(at).to_string(),
            });
        }
        outcome.record(RestartStep::DryRunEnd);
        return Ok(outcome);
    }
    let mut restarted = Vec::new();
    for t in stale {
        match cluster.restart(t, at).await {
            Ok(patch) => {
                outcome.record(RestartStep::Restarted {
                    target: t.to_string(),
                    patch: patch.to_string(),
                });
                restarted.push((*t).clone());
            }
            Err(e) => outcome.record(RestartStep::Failed {
                target: t.to_string(),
                error: e.with_hint().to_string(),
            }),
        }
    }
    let Some(deadline) = deadline else {
        return Ok(outcome);
    };
    let change = Change {
        since: Some(at),
        digests: policy,
        // The change is the restart itself; image_digest_current holds the new pods to it.
        stated_by: Some("the restart `liveproof stale` made".into()),
        // What the restart wrote: each template must carry it (spec_readback), and that is
        // what shows the change in the restarted pods.
        declared: restarted
            .iter()
            .map(|t| DeclaredTemplate {
                target: Target::new(t.kind, Some(t.namespace.as_deref().unwrap_or(ns)), &t.name),
                template: liveproof_gather::restart_template(at),
                source: format!("the restart at {at}"),
                given: String::new(),
                repo_path: None,
            })
            .collect(),
        ..Change::default()
    };
    let config = VerifyConfig {
        namespace: Some(ns.to_string()),
        wait: Some(deadline),
        request_timeout,
        since_origin: Some("the restart".into()),
        insecure_registries: args.insecure_registry.clone(),
        ..VerifyConfig::new(restarted, change, Source::Live(options))
    };
    outcome.report = Some(crate::verifier::produce(&config).await?);
    Ok(outcome)
}

/// The workloads to check: the targets, what `-f` declares, or all in the namespace(s).
async fn scope(args: &StaleArgs, cluster: &Cluster, ns: &str) -> anyhow::Result<Vec<Target>> {
    if let Some(path) = &args.manifests {
        return Ok(liveproof_gather::offline::declared_workloads_off_runtime(path, ns).await?);
    }
    if !args.targets.is_empty() {
        return Target::parse_all(&args.targets)?
            .into_iter()
            .map(|t| {
                if !t.kind.is_workload() {
                    return Err(StaleError::NotAWorkload(t.to_string()).into());
                }
                let target_ns = t.namespace.clone().unwrap_or_else(|| ns.to_string());
                Ok(Target::new(t.kind, Some(&target_ns), &t.name))
            })
            .collect();
    }
    let namespace = (!args.cluster.all_namespaces).then_some(ns);
    let Some(selector) = &args.selector else {
        return Ok(cluster.workloads_in(namespace, None).await?);
    };
    liveproof_evidence::selector::parse(selector).map_err(crate::ConfigError::Selector)?;
    let found = cluster.workloads_in(namespace, Some(selector)).await?;
    if found.is_empty() {
        return Err(liveproof_gather::session::NothingSelected::new(selector, namespace).into());
    }
    Ok(found)
}
