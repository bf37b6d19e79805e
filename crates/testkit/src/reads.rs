//! What each check reads, as a table: for every check and every kind that produces it, a
//! corpus story where the check passes and the inputs it passes on (issue 33: a check passes only
//! on what it read). The evidence crate's `fail_closed` takes each input away — from a dump, by a
//! refused read, by a full listing without it — and holds the check to never `pass`;
//! liveproof's `fail_closed_live` forbids reading it on the simulator (RBAC) and holds the
//! real command to the same. A new check or target kind adds its rows here: `fail_closed` fails
//! while a check or a kind has none.
//!
//! Inputs a check reads without needing them (it passes on what else it read) are listed apart
//! ([`not_needed`]), each with why, so the table says so instead of leaving them out.

use liveproof_evidence::digest::{DigestPolicy, ResolvedTag};
use liveproof_evidence::server::{VersionExpectation, VersionReading};
use liveproof_evidence::{
    Change, Check, Containment, Denied, ExpectedImage, ManifestExpectation, Observed, ResourceKind,
    SecretRefExpectation, Status, Target, TargetKind,
};

/// One input a check reads, which a row takes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Every object of this resource the story holds.
    Objects(ResourceKind),
    /// One object of this resource, by name.
    Named(ResourceKind, &'static str),
    /// What the registry answered for the images' tags and digests (`Observed::tags`).
    RegistryAnswers,
    /// What each `--version-url` answered (`Observed::versions`).
    ServerAnswers,
    /// What `--repo`'s history says of the GitOps revisions (`Observed::containment`).
    GitHistory,
}

impl Input {
    /// The API resource a live read of it would be refused on; `None` for what is not read
    /// from the API server.
    pub fn resource(self) -> Option<ResourceKind> {
        match self {
            Input::Objects(r) | Input::Named(r, _) => Some(r),
            Input::RegistryAnswers | Input::ServerAnswers | Input::GitHistory => None,
        }
    }
}

impl std::fmt::Display for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Input::Objects(r) => write!(f, "every {}", r.kind_name()),
            Input::Named(r, name) => write!(f, "{} {name}", r.kind_name()),
            Input::RegistryAnswers => f.write_str("the registry's answers"),
            Input::ServerAnswers => f.write_str("the server's version answer"),
            Input::GitHistory => f.write_str("the repository's history"),
        }
    }
}

/// How an input was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// A `--from` dump without it: nothing was listed in full.
    Dump,
    /// A live cluster that refused reading it (RBAC 403); everything else listed in full.
    Refused,
    /// A live cluster listed it in full and it is not there.
    Absent,
}

impl Unread {
    pub const ALL: [Unread; 3] = [Unread::Dump, Unread::Refused, Unread::Absent];
}

/// A check, a story where it passes, and what it passes on.
#[derive(Debug, Clone)]
pub struct Row {
    pub check: Check,
    pub story: &'static str,
    /// What is verified, as the story's `args` name it.
    pub target: Target,
    /// The report row that carries the check: the target's own, or a workload reached through
    /// it (`Kind/namespace/name`, as reports name rows).
    pub report: &'static str,
    /// The change the story states (its `args`), for the judge.
    pub change: Change,
    /// What the story lacks that the gather would add (a registry's answer, a server's), and
    /// the expectation that goes with it.
    pub prepare: Option<fn(&mut Observed, &mut Change)>,
    /// What the check passes on: taking any one away must leave it short of `pass`.
    pub inputs: &'static [Input],
}

impl Row {
    /// The report row's kind, as reports name it (`Deployment`, `Canary`, `Service`, `Server`).
    pub fn report_kind(&self) -> &'static str {
        self.report.split('/').next().unwrap_or_default()
    }

    /// The namespaces the story's objects and the target live in: what a live gather lists.
    pub fn namespaces(&self, observed: &Observed) -> Vec<String> {
        let mut out: Vec<String> = namespaces_of(observed);
        out.extend(self.target.namespace.clone());
        out.sort();
        out.dedup();
        out
    }
}

/// An input a check reads but does not need: without it the check still ends as `holds` says,
/// for the reason given.
#[derive(Debug, Clone)]
pub struct NotNeeded {
    pub row: Row,
    pub input: Input,
    /// How the check ends when the input is not read in each way listed.
    pub holds: &'static [(Unread, Status)],
    pub why: &'static str,
}

fn at(time: &str) -> Option<jiff::Timestamp> {
    Some(time.parse().expect("a time"))
}

const SINCE: &str = "2026-07-12T10:00:00Z";

fn images(images: &[&str]) -> Vec<ExpectedImage> {
    images
        .iter()
        .map(|i| ExpectedImage::parse(i).expect("an image"))
        .collect()
}

/// `--since SINCE --image …` (tags are not resolved: `--no-registry`, as a dump is judged).
fn stated(image: &[&str]) -> Change {
    Change {
        since: at(SINCE),
        images: images(image),
        digests: DigestPolicy::Off,
        ..Change::default()
    }
}

/// `--commit 7453f92 --since SINCE --image …`.
fn committed(image: &[&str]) -> Change {
    Change {
        commit: Some("7453f92".into()),
        ..stated(image)
    }
}

/// The Helm stories' statement: `--chart-version V --expect secretKeyRef --expect-secret-ref
/// inventory-db/password`.
fn charted(version: &str) -> Change {
    Change {
        since: at(SINCE),
        chart_version: Some(version.into()),
        manifest: vec![ManifestExpectation::parse("secretKeyRef").expect("an expectation")],
        secret_refs: vec![SecretRefExpectation::parse("inventory-db/password").expect("a ref")],
        digests: DigestPolicy::Off,
        ..Change::default()
    }
}

fn target(kind: TargetKind, namespace: &str, name: &str) -> Target {
    Target::new(kind, Some(namespace), name)
}

use Input::{GitHistory, Named, Objects, RegistryAnswers, ServerAnswers};
use ResourceKind as R;

const DEPLOYMENT_STORY: &str = "service-routes-only-to-current-pods";
const DEPLOYMENT: &str = "Deployment/apps/inventory";

fn deployment(check: Check, inputs: &'static [Input]) -> Row {
    Row {
        check,
        story: DEPLOYMENT_STORY,
        target: target(TargetKind::Deployment, "apps", "inventory"),
        report: DEPLOYMENT,
        change: Change {
            env: vec!["FEATURE_RESERVATIONS".into()],
            ..stated(&["ghcr.io/acme/inventory:1.4.0"])
        },
        prepare: None,
        inputs,
    }
}

/// The digest each pod of `gitops-reconciled-new-tag-rolled-out` records for 1.4.0.
const INVENTORY_DIGEST: &str =
    "sha256:2dc7ac3690538cfc3066f742c59f6b3ad37d711d3c2dd2b2da532bf6cd873f35";

fn digest_row() -> Row {
    Row {
        check: Check::ImageDigestCurrent,
        story: "gitops-reconciled-new-tag-rolled-out",
        target: target(TargetKind::Deployment, "apps", "inventory"),
        report: DEPLOYMENT,
        change: Change {
            digests: DigestPolicy::AllTags,
            ..stated(&["ghcr.io/acme/inventory:1.4.0"])
        },
        // The registry says the tag is what the pods run.
        prepare: Some(|observed, _| {
            observed.tags.insert(
                "ghcr.io/acme/inventory:1.4.0".into(),
                Ok(ResolvedTag {
                    digest: INVENTORY_DIGEST.into(),
                    platforms: Vec::new(),
                }),
            );
        }),
        inputs: &[RegistryAnswers, Objects(R::Pod)],
    }
}

fn statefulset(check: Check, inputs: &'static [Input]) -> Row {
    Row {
        check,
        story: "statefulset-rolled-out",
        target: target(TargetKind::StatefulSet, "payments", "ledger"),
        report: "StatefulSet/payments/ledger",
        change: stated(&["ghcr.io/acme/ledger:3.2.0"]),
        prepare: None,
        inputs,
    }
}

fn daemonset(check: Check, inputs: &'static [Input]) -> Row {
    Row {
        check,
        story: "daemonset-rolled-out",
        target: target(TargetKind::DaemonSet, "observability", "log-shipper"),
        report: "DaemonSet/observability/log-shipper",
        change: stated(&["ghcr.io/acme/log-shipper:2.1.0"]),
        prepare: None,
        inputs,
    }
}

fn rollout(story: &'static str, check: Check, inputs: &'static [Input]) -> Row {
    Row {
        check,
        story,
        target: target(TargetKind::Rollout, "shop", "checkout"),
        report: "Rollout/shop/checkout",
        change: stated(&["ghcr.io/acme/checkout:2.4.0"]),
        prepare: None,
        inputs,
    }
}

const BLUE_GREEN: &str = "argo-rollout-bluegreen-promoted-old-pods-idle";
const ROLLOUT_CANARY: &str = "argo-rollout-canary-promoted-old-pods-idle";

fn canary(report: &'static str, check: Check, inputs: &'static [Input]) -> Row {
    Row {
        check,
        story: "flagger-canary-promoted-primary-current",
        target: target(TargetKind::Canary, "test", "podinfo"),
        report,
        change: stated(&["ghcr.io/stefanprodan/podinfo:6.5.1"]),
        prepare: None,
        inputs,
    }
}

const CANARY: &str = "Canary/test/podinfo";
const PRIMARY: &str = "Deployment/test/podinfo-primary";

fn ksvc(report: &'static str, check: Check, inputs: &'static [Input]) -> Row {
    Row {
        check,
        story: "knative-service-latest-revision-serves-all",
        target: target(TargetKind::KnativeService, "web", "hello"),
        report,
        change: stated(&["ghcr.io/acme/hello:1.1.0"]),
        prepare: None,
        inputs,
    }
}

const KSVC: &str = "Service/web/hello";

fn kustomization(check: Check, inputs: &'static [Input]) -> Row {
    Row {
        check,
        story: "flux-kustomization-applied-live",
        target: target(TargetKind::Kustomization, "flux-system", "apps"),
        report: "Kustomization/flux-system/apps",
        change: committed(&["ghcr.io/acme/inventory:1.4.0"]),
        prepare: None,
        inputs,
    }
}

fn helmrelease(story: &'static str, change: Change, check: Check, inputs: &'static [Input]) -> Row {
    Row {
        check,
        story,
        target: target(TargetKind::HelmRelease, "apps", "inventory"),
        report: "HelmRelease/apps/inventory",
        change,
        prepare: None,
        inputs,
    }
}

fn application(check: Check, inputs: &'static [Input]) -> Row {
    Row {
        check,
        story: "argocd-synced-live",
        target: target(TargetKind::Application, "argocd", "inventory"),
        report: "Application/argocd/inventory",
        change: committed(&["ghcr.io/acme/inventory:1.4.0"]),
        prepare: None,
        inputs,
    }
}

fn release(check: Check, inputs: &'static [Input]) -> Row {
    Row {
        check,
        story: "release-stored-in-configmap",
        target: target(TargetKind::Release, "apps", "inventory"),
        report: "Release/apps/inventory",
        change: charted("0.4.3"),
        prepare: None,
        inputs,
    }
}

/// A commit of which the Application's synced revision `c0530af…` is a descendant, as `--repo`
/// would say: the revision passes only on what git said of it.
const ANCESTOR: &str = "1b2c3d4";

/// The newest revision of `release-stored-in-configmap`'s release.
const NEWEST_INVENTORY_CM: Input = Named(R::ConfigMap, "sh.helm.release.v1.inventory.v35");

const VERSION_URL: &str = "https://inventory.apps.example/version";

/// Every check with every kind that produces it, and what it passes on.
pub fn rows() -> Vec<Row> {
    let server = Row {
        check: Check::ServerVersion,
        story: DEPLOYMENT_STORY,
        target: target(TargetKind::Deployment, "apps", "inventory"),
        report: "Server",
        change: stated(&["ghcr.io/acme/inventory:1.4.0"]),
        prepare: Some(|observed, change| {
            let url = liveproof_redacted::DisplaySafeUrl::new(VERSION_URL);
            change.versions.push(VersionExpectation {
                url: url.clone(),
                expect: "1.4.0".into(),
                json_path: None,
            });
            observed
                .versions
                .push((url, VersionReading::Body("{\"version\": \"1.4.0\"}".into())));
        }),
        inputs: &[ServerAnswers],
    };
    let mut descendant = application(
        Check::GitopsRevision,
        &[GitHistory, Objects(R::Application)],
    );
    descendant.change.commit = Some(ANCESTOR.into());
    descendant.prepare = Some(|observed, _| {
        observed.containment.insert(
            "7453f92d3435604ac532ef811d34be70bcc29dae".into(),
            Containment::Contains,
        );
    });
    vec![
        // Workloads: the object, its revisions, its pods, what routes to them.
        deployment(Check::SpecReadback, &[Objects(R::Deployment)]),
        deployment(Check::ObservedGeneration, &[Objects(R::Deployment)]),
        deployment(Check::RolloutComplete, &[Objects(R::Deployment)]),
        deployment(
            Check::PodsCurrent,
            &[
                Objects(R::Deployment),
                Objects(R::ReplicaSet),
                Objects(R::Pod),
            ],
        ),
        deployment(Check::PodSpec, &[Objects(R::Deployment), Objects(R::Pod)]),
        deployment(
            Check::PodRestarted,
            &[Objects(R::Deployment), Objects(R::Pod)],
        ),
        deployment(
            Check::TrafficCurrent,
            &[
                Objects(R::Deployment),
                Objects(R::ReplicaSet),
                Objects(R::Pod),
                Objects(R::EndpointSlice),
            ],
        ),
        digest_row(),
        statefulset(
            Check::PodsCurrent,
            &[Objects(R::StatefulSet), Objects(R::Pod)],
        ),
        statefulset(Check::PodRestarted, &[Objects(R::Pod)]),
        statefulset(Check::RolloutComplete, &[Objects(R::StatefulSet)]),
        daemonset(
            Check::PodsCurrent,
            &[
                Objects(R::DaemonSet),
                Objects(R::ControllerRevision),
                Objects(R::Pod),
            ],
        ),
        daemonset(Check::PodSpec, &[Objects(R::Pod)]),
        rollout(
            BLUE_GREEN,
            Check::PodsCurrent,
            &[Objects(R::Rollout), Objects(R::ReplicaSet), Objects(R::Pod)],
        ),
        rollout(
            BLUE_GREEN,
            Check::TrafficCurrent,
            &[
                Named(R::Service, "checkout-active"),
                Named(R::Service, "checkout-preview"),
                Objects(R::EndpointSlice),
                Objects(R::ReplicaSet),
                Objects(R::Pod),
            ],
        ),
        rollout(
            ROLLOUT_CANARY,
            Check::TrafficCurrent,
            &[
                Named(R::Service, "checkout-stable"),
                Named(R::Service, "checkout-canary"),
                Objects(R::EndpointSlice),
            ],
        ),
        rollout(
            ROLLOUT_CANARY,
            Check::RolloutComplete,
            &[Objects(R::Rollout)],
        ),
        rollout(
            "argo-rollout-canary-pingpong-promoted-old-pods-idle",
            Check::TrafficCurrent,
            &[
                Objects(R::Rollout),
                Named(R::Service, "checkout-ping"),
                Named(R::Service, "checkout-pong"),
                Objects(R::EndpointSlice),
            ],
        ),
        // A Flagger Canary: itself, its target and primary, the apex Service.
        canary(CANARY, Check::ConditionFresh, &[Objects(R::Canary)]),
        canary(CANARY, Check::RolloutComplete, &[Objects(R::Canary)]),
        canary(
            CANARY,
            Check::SpecReadback,
            &[
                Objects(R::Canary),
                Named(R::Deployment, "podinfo"),
                Named(R::Deployment, "podinfo-primary"),
            ],
        ),
        canary(
            CANARY,
            Check::TrafficCurrent,
            &[
                Objects(R::Canary),
                Named(R::Service, "podinfo"),
                Named(R::Deployment, "podinfo-primary"),
            ],
        ),
        canary(
            PRIMARY,
            Check::PodsCurrent,
            &[Objects(R::Canary), Objects(R::ReplicaSet), Objects(R::Pod)],
        ),
        canary(
            PRIMARY,
            Check::TrafficCurrent,
            &[
                Objects(R::Canary),
                Objects(R::EndpointSlice),
                Objects(R::Pod),
            ],
        ),
        // A Knative Service: itself, the Revision made from the change, its Deployment's pods.
        ksvc(
            KSVC,
            Check::ObservedGeneration,
            &[Objects(R::KnativeService)],
        ),
        ksvc(KSVC, Check::ConditionFresh, &[Objects(R::KnativeService)]),
        ksvc(KSVC, Check::RolloutComplete, &[Objects(R::KnativeService)]),
        ksvc(
            KSVC,
            Check::SpecReadback,
            &[
                Objects(R::KnativeService),
                Named(R::KnativeRevision, "hello-00002"),
            ],
        ),
        ksvc(KSVC, Check::TrafficCurrent, &[Objects(R::KnativeService)]),
        ksvc(
            "Deployment/web/hello-00002-deployment",
            Check::PodSpec,
            &[
                Objects(R::KnativeService),
                Named(R::KnativeRevision, "hello-00002"),
                Objects(R::Pod),
            ],
        ),
        // Flux: the object, its source, the Helm storage it installed.
        kustomization(Check::ObservedGeneration, &[Objects(R::Kustomization)]),
        kustomization(Check::ConditionFresh, &[Objects(R::Kustomization)]),
        kustomization(Check::GitopsRevision, &[Objects(R::Kustomization)]),
        kustomization(Check::PodsCurrent, &[Objects(R::Kustomization)]).reporting(DEPLOYMENT),
        helmrelease(
            "flux-chartversion-bumped-v35-live",
            charted("0.4.3"),
            Check::GitopsRevision,
            &[Objects(R::HelmRelease)],
        ),
        helmrelease(
            "flux-revision-strategy-template-change-live",
            Change {
                commit: Some("7453f92".into()),
                ..charted_without_version()
            },
            Check::GitopsRevision,
            &[Objects(R::HelmRelease), Objects(R::GitRepository)],
        ),
        helmrelease(
            "flux-chartversion-bumped-v35-live",
            charted("0.4.3"),
            Check::ReleaseRevision,
            &[
                Objects(R::HelmRelease),
                Objects(R::Secret),
                Named(R::Secret, "sh.helm.release.v1.inventory.v35"),
            ],
        ),
        helmrelease(
            "flux-chartversion-bumped-v35-live",
            charted("0.4.3"),
            Check::ManifestContains,
            &[
                Objects(R::HelmRelease),
                Objects(R::Secret),
                Named(R::Secret, "sh.helm.release.v1.inventory.v35"),
            ],
        ),
        helmrelease(
            "flux-chartversion-bumped-v35-live",
            charted("0.4.3"),
            Check::ReleaseVersion,
            &[
                Objects(R::HelmRelease),
                Named(R::Secret, "sh.helm.release.v1.inventory.v35"),
            ],
        ),
        helmrelease(
            "flux-chartversion-bumped-v35-live",
            charted("0.4.3"),
            Check::ConditionFresh,
            &[Objects(R::HelmRelease)],
        ),
        // Argo CD: the Application, and git's word on a revision that is not the commit.
        application(Check::GitopsRevision, &[Objects(R::Application)]),
        application(Check::ConditionFresh, &[Objects(R::Application)]),
        application(Check::RolloutComplete, &[Objects(R::Application)]),
        descendant,
        // A Helm release: its storage (the ConfigMap driver here, the Secret one below).
        release(
            Check::ReleaseRevision,
            &[Objects(R::ConfigMap), NEWEST_INVENTORY_CM],
        ),
        release(
            Check::ReleaseVersion,
            &[Objects(R::ConfigMap), NEWEST_INVENTORY_CM],
        ),
        release(
            Check::ManifestContains,
            &[Objects(R::ConfigMap), NEWEST_INVENTORY_CM],
        ),
        Row {
            check: Check::ReleaseRevision,
            story: "release-uncompressed-json",
            target: target(TargetKind::Release, "billing", "payments"),
            report: "Release/billing/payments",
            change: Change {
                chart_version: Some("3.2.0".into()),
                manifest: vec![ManifestExpectation::parse(
                    "registry.acme.example/payments-api:2.8.0",
                )
                .expect("an expectation")],
                ..stated(&["registry.acme.example/payments-api:2.8.0"])
            },
            prepare: None,
            inputs: &[
                Objects(R::Secret),
                Named(R::Secret, "sh.helm.release.v1.payments.v12"),
            ],
        },
        server,
    ]
}

fn charted_without_version() -> Change {
    Change {
        chart_version: None,
        ..charted("0.4.3")
    }
}

impl Row {
    /// The same row, read off another report row (a workload the target reaches).
    fn reporting(mut self, report: &'static str) -> Row {
        self.report = report;
        self
    }
}

/// Inputs checks read but pass without, and why.
pub fn not_needed() -> Vec<NotNeeded> {
    vec![
        NotNeeded {
            row: deployment(Check::RolloutComplete, &[]),
            input: Objects(R::ReplicaSet),
            holds: &[(Unread::Dump, Status::Pass), (Unread::Refused, Status::Pass)],
            why: "a status-tier check of the Deployment's own counts (it never makes a target live): the current ReplicaSet is read only to tell counts its controller computed before it caught up",
        },
        NotNeeded {
            row: statefulset(Check::PodsCurrent, &[]),
            input: Objects(R::ControllerRevision),
            holds: &[(Unread::Dump, Status::Pass), (Unread::Refused, Status::Pass)],
            why: "with observedGeneration caught up, status.updateRevision names the revision of the current template (the StatefulSet controller computes it from spec.template) and the pods carry it; the ControllerRevision is read to date it and, when listed, to prove it was not pruned",
        },
        NotNeeded {
            row: digest_row(),
            input: Objects(R::Node),
            holds: &[(Unread::Dump, Status::Pass), (Unread::Refused, Status::Pass)],
            why: "a running digest that is the tag's, or any entry of its index, is the build the tag names now; the node's platform only says which entry to expect",
        },
        NotNeeded {
            row: kustomization(Check::GitopsRevision, &[]),
            input: Objects(R::GitRepository),
            holds: &[(Unread::Dump, Status::Pass), (Unread::Refused, Status::Pass)],
            why: "lastAppliedRevision is what kustomize-controller applied; the GitRepository is read to tell a source that moved off the commit, not to establish it",
        },
        NotNeeded {
            row: deployment(Check::TrafficCurrent, &[]),
            input: Objects(R::Service),
            holds: &[(Unread::Absent, Status::Skip), (Unread::Dump, Status::Skip)],
            why: "a plain worker Deployment no Service selects: nothing routes to it, so there is no endpoint to check (skip, which is no pass and never makes a target live on its own)",
        },
    ]
}

/// The story's objects as `--from` reads them, with its release storage decoded.
pub fn observed(story: &str) -> Observed {
    let path = crate::story::scenarios_dir()
        .join(story)
        .join("cluster.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut observed = Observed::default();
    for doc in serde_norway::Deserializer::from_str(&text) {
        let value: serde_json::Value = serde::Deserialize::deserialize(doc).expect("YAML");
        if !value.is_null() {
            observed
                .add_value(value, &path.to_string_lossy())
                .expect("an object");
        }
    }
    decode(&mut observed);
    observed
}

/// Decodes the release storage `observed` holds, as the gatherer does.
pub fn decode(observed: &mut Observed) {
    observed.decode_releases_with(|obj| {
        liveproof_evidence::releases::decoded(liveproof_helm::read_release(
            obj,
            &liveproof_helm::Limits::default(),
        ))
    });
}

/// Every namespace the objects of `observed` name.
fn namespaces_of(observed: &Observed) -> Vec<String> {
    let mut out: Vec<String> = observed
        .workloads()
        .filter_map(|(_, meta, _)| meta.namespace.clone())
        .chain(
            observed
                .pods
                .iter()
                .filter_map(|p| p.metadata.namespace.clone()),
        )
        .chain(
            observed
                .services
                .iter()
                .filter_map(|s| s.metadata.namespace.clone()),
        )
        .chain(
            observed
                .others
                .iter()
                .filter_map(|o| o.pointer("/metadata/namespace")?.as_str().map(String::from)),
        )
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The resources a live gather lists or gets in a namespace, all marked read in full.
const LISTED: &[ResourceKind] = &[
    R::Deployment,
    R::StatefulSet,
    R::DaemonSet,
    R::Rollout,
    R::ReplicaSet,
    R::ControllerRevision,
    R::Pod,
    R::Secret,
    R::ConfigMap,
    R::HelmRelease,
    R::Kustomization,
    R::GitRepository,
    R::Application,
    R::Canary,
    R::KnativeService,
    R::KnativeRevision,
    R::Service,
    R::EndpointSlice,
];

/// `observed` without `input`, not read the way `unread` says.
pub fn without(
    observed: &Observed,
    namespaces: &[String],
    input: Input,
    unread: Unread,
) -> Observed {
    let mut out = observed.clone();
    remove(&mut out, input);
    if unread != Unread::Dump {
        for ns in namespaces {
            for kind in LISTED {
                out.mark_complete(ns, *kind);
            }
        }
        out.mark_complete("", R::Node);
    }
    if let (Unread::Refused, Some(resource)) = (unread, input.resource()) {
        let scoped: Vec<Option<String>> = match resource {
            R::Node => vec![None],
            _ => namespaces.iter().cloned().map(Some).collect(),
        };
        for ns in scoped {
            if let Some(ns) = &ns {
                out.complete.remove(&(ns.clone(), resource));
            }
            out.denied.push(Denied {
                namespace: ns,
                resource,
                verb: "list".into(),
                message: format!(
                    "{} is forbidden: User \"liveproof\" cannot list resource \"{}\"",
                    resource.plural(),
                    resource.plural()
                ),
            });
        }
        out.complete.remove(&(String::new(), resource));
    }
    // A refused registry, server or repository answers with why it could not.
    match (unread, input) {
        (Unread::Refused, RegistryAnswers) => {
            for key in observed.tags.keys() {
                out.tags.insert(
                    key.clone(),
                    Err("401 Unauthorized from the registry".into()),
                );
            }
        }
        (Unread::Refused, ServerAnswers) => {
            for (url, _) in &observed.versions {
                out.versions.push((
                    url.clone(),
                    VersionReading::Failed("connection refused".into()),
                ));
            }
        }
        (Unread::Refused, GitHistory) => {
            for key in observed.containment.keys() {
                out.containment.insert(
                    key.clone(),
                    Containment::Unknown {
                        why: "the clone is shallow".into(),
                        fix: "git fetch --unshallow".into(),
                    },
                );
            }
        }
        _ => {}
    }
    decode(&mut out);
    out
}

/// Takes `input` out of `observed`.
fn remove(observed: &mut Observed, input: Input) {
    let (resource, name) = match input {
        Objects(r) => (r, None),
        Named(r, name) => (r, Some(name)),
        RegistryAnswers => return observed.tags.clear(),
        ServerAnswers => return observed.versions.clear(),
        GitHistory => return observed.containment.clear(),
    };
    let named = |n: Option<&str>| name.is_none_or(|want| n == Some(want));
    let keep = |n: Option<&str>| !named(n);
    match resource {
        R::Deployment => observed
            .workloads
            .of_mut::<k8s_openapi::api::apps::v1::Deployment>()
            .retain(|o| keep(o.metadata.name.as_deref())),
        R::StatefulSet => observed
            .workloads
            .of_mut::<k8s_openapi::api::apps::v1::StatefulSet>()
            .retain(|o| keep(o.metadata.name.as_deref())),
        R::DaemonSet => observed
            .workloads
            .of_mut::<k8s_openapi::api::apps::v1::DaemonSet>()
            .retain(|o| keep(o.metadata.name.as_deref())),
        R::Rollout => observed
            .workloads
            .of_mut::<liveproof_evidence::Rollout>()
            .retain(|o| keep(o.metadata.name.as_deref())),
        R::ReplicaSet => observed
            .replicasets
            .retain(|o| keep(o.metadata.name.as_deref())),
        R::ControllerRevision => observed
            .controller_revisions
            .retain(|o| keep(o.metadata.name.as_deref())),
        R::Pod => observed.pods.retain(|o| keep(o.metadata.name.as_deref())),
        R::Node => observed.nodes.retain(|o| keep(o.metadata.name.as_deref())),
        R::Service => observed
            .services
            .retain(|o| keep(o.metadata.name.as_deref())),
        R::EndpointSlice => observed
            .endpoint_slices
            .retain(|o| keep(o.metadata.name.as_deref())),
        _ => {
            let group = resource.group();
            observed.others.retain(|o| {
                let of_kind = o.get("kind").and_then(serde_json::Value::as_str)
                    == Some(resource.kind_name())
                    && o.get("apiVersion")
                        .and_then(serde_json::Value::as_str)
                        .map(liveproof_evidence::api_group)
                        == Some(group);
                !(of_kind && named(o.pointer("/metadata/name").and_then(|n| n.as_str())))
            });
        }
    }
}
