//! What to read for the workload half of a gather, before anything is sent: pure functions of
//! the targets and of the workloads found, so the request plan can be tested without a server.
//!
//! Requests grow with kinds and namespaces, not with targets: from [`BATCH_AT`] targets of one
//! kind in one namespace the kind is LISTed there once (and the named objects kept), and from
//! [`BATCH_AT`] pod selectors in one namespace its pods are LISTed once (and the pods some
//! selector matches kept). Below that, a GET per target and a LIST per selector are cheaper.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use liveproof_evidence::{selector, Observed, ResourceKind, Target, TargetKind};

use super::objects::{workload_resource, Meta};

/// From this many targets of a kind in a namespace (or pod selectors in a namespace), one
/// LIST of the namespace is sent instead of one request each.
pub(crate) const BATCH_AT: usize = 3;

/// Objects per page of a LIST (`limit`): 10,000 pods come in two requests, and no response
/// holds more than this many objects. A page's body is held once while it is decoded, each
/// object kept or dropped as soon as it is whole (`page.rs`), so a larger page costs its body
/// only, not a list of decoded objects beside it.
pub(crate) const PAGE_SIZE: u32 = 5_000;

/// Where a workload target is looked up: one namespace (a GET) or all of them (a LIST with
/// `fieldSelector=metadata.name=NAME`, for `-A`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Lookup {
    pub(crate) resource: ResourceKind,
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
}

/// How a group of lookups is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LookupRead {
    /// One request for one object.
    One(Lookup),
    /// One (paginated) LIST of the kind in the namespace (`None`: every namespace), keeping
    /// the objects named by the lookups.
    Batch {
        resource: ResourceKind,
        namespace: Option<String>,
        lookups: Vec<Lookup>,
    },
}

/// The lookups the workload targets need, one per distinct (kind, namespace, name), in order.
pub(crate) fn plan_lookups(
    targets: &[Target],
    default_ns: &str,
    all_namespaces: bool,
) -> Vec<Lookup> {
    let lookups: BTreeSet<Lookup> = targets
        .iter()
        .filter_map(|t| {
            let resource = workload_resource(t.kind)?;
            let namespace = match (&t.namespace, all_namespaces) {
                (Some(ns), _) => Some(ns.clone()),
                (None, true) => None,
                (None, false) => Some(default_ns.to_string()),
            };
            Some(Lookup {
                resource,
                namespace,
                name: t.name.clone(),
            })
        })
        .collect();
    lookups.into_iter().collect()
}

/// The lookups grouped by (kind, namespace): a group of `batch_at` ([`BATCH_AT`]) or more is
/// one LIST.
pub(crate) fn plan_reads(lookups: Vec<Lookup>, batch_at: usize) -> Vec<LookupRead> {
    let mut groups: BTreeMap<(ResourceKind, Option<String>), Vec<Lookup>> = BTreeMap::new();
    for lookup in lookups {
        groups
            .entry((lookup.resource, lookup.namespace.clone()))
            .or_default()
            .push(lookup);
    }
    let mut reads = Vec::new();
    for ((resource, namespace), lookups) in groups {
        if lookups.len() >= batch_at {
            reads.push(LookupRead::Batch {
                resource,
                namespace,
                lookups,
            });
        } else {
            reads.extend(lookups.into_iter().map(LookupRead::One));
        }
    }
    reads
}

/// Which objects of a LIST are kept (the rest are dropped page by page, never held).
#[derive(Debug, Clone, Default)]
pub(crate) enum Keep {
    #[default]
    All,
    /// Objects with one of these names.
    Named(BTreeSet<String>),
    /// Objects one of these selectors matches.
    Selected(Selectors),
}

/// Label selectors (one per workload), indexed by one `matchLabels` term of each
/// ([`selector::Terms`]): which of 2,000 select an object is a lookup per indexed label key,
/// not 2,000 matches. `--wait` asks this of every ReplicaSet and pod on every snapshot, and
/// widens the set on every snapshot: a selector held already is known by its rendering.
#[derive(Debug, Clone, Default)]
pub(crate) struct Selectors {
    all: Vec<LabelSelector>,
    terms: selector::Terms,
    /// The selectors held, rendered; one that does not render is compared with each.
    rendered: HashSet<String>,
}

impl Selectors {
    pub(crate) fn new(selectors: impl IntoIterator<Item = LabelSelector>) -> Self {
        let mut out = Selectors::default();
        out.extend(selectors);
        out
    }

    /// Adds the selectors it does not hold yet.
    fn extend(&mut self, selectors: impl IntoIterator<Item = LabelSelector>) {
        for selector in selectors {
            let held = match selector::render(&selector) {
                Ok(rendered) => !self.rendered.insert(rendered),
                Err(_) => self.all.contains(&selector),
            };
            if held {
                continue;
            }
            self.terms.push(self.all.len(), &selector);
            self.all.push(selector);
        }
    }

    /// Whether one of them selects `meta`.
    fn select(&self, meta: Meta<'_>) -> bool {
        self.terms
            .candidates(|key| meta.label(key))
            .any(|i| meta.selected_by(&self.all[i]))
    }
}

impl Keep {
    /// Keeps what `more` keeps too.
    pub(crate) fn widen(&mut self, more: Keep) {
        match (self, more) {
            (Keep::All, _) => {}
            (this, Keep::All) => *this = Keep::All,
            (Keep::Named(names), Keep::Named(more)) => names.extend(more),
            (Keep::Selected(selectors), Keep::Selected(more)) => selectors.extend(more.all),
            // Names and selectors of one scope: keep everything rather than lose either.
            (this, _) => *this = Keep::All,
        }
    }

    pub(crate) fn keeps(&self, meta: Meta<'_>) -> bool {
        match self {
            Keep::All => true,
            Keep::Named(names) => names.contains(meta.name().unwrap_or_default()),
            Keep::Selected(selectors) => selectors.select(meta),
        }
    }
}

/// What to LIST once the workloads are known.
#[derive(Debug, Default)]
pub(crate) struct RelatedPlan {
    /// `(ReplicaSet | ControllerRevision, namespace)`.
    pub(crate) revisions: BTreeSet<(ResourceKind, String)>,
    /// `(Service | EndpointSlice, namespace)`: what routes traffic to the workloads' pods
    /// (`traffic_current`), one LIST of each per namespace.
    pub(crate) routing: BTreeSet<(ResourceKind, String)>,
    /// Per namespace, each distinct pod selector (rendered, and as given).
    pub(crate) pods: BTreeMap<String, BTreeMap<String, LabelSelector>>,
    /// Namespaces with a workload whose selector cannot be listed by.
    pub(crate) pods_incomplete: BTreeSet<String>,
}

/// How the pods of one namespace are read.
#[derive(Debug, Clone)]
pub(crate) enum PodRead {
    /// One LIST by this rendered selector.
    Selector(String),
    /// One (paginated) LIST of the namespace's pods, keeping those these selectors match.
    Namespace(Vec<LabelSelector>),
}

impl RelatedPlan {
    /// What is LISTed whole, per namespace: the revisions and what routes traffic.
    pub(crate) fn namespace_lists(&self) -> impl Iterator<Item = &(ResourceKind, String)> {
        self.revisions.iter().chain(&self.routing)
    }

    /// The pod LISTs of each namespace: one per selector, or one for the namespace from
    /// `batch_at` ([`BATCH_AT`]) selectors.
    pub(crate) fn pod_reads(&self, batch_at: usize) -> Vec<(String, PodRead)> {
        let mut out = Vec::new();
        for (ns, selectors) in &self.pods {
            if selectors.len() >= batch_at {
                out.push((
                    ns.clone(),
                    PodRead::Namespace(selectors.values().cloned().collect()),
                ));
            } else {
                out.extend(
                    selectors
                        .keys()
                        .map(|rendered| (ns.clone(), PodRead::Selector(rendered.clone()))),
                );
            }
        }
        out
    }
}

/// What to LIST for the workloads `observed` holds (read in place: they are not copied).
pub(crate) fn plan_related(observed: &Observed) -> RelatedPlan {
    let mut plan = RelatedPlan::default();
    for (kind, meta, selector) in observed.workload_selectors() {
        plan.add(kind, meta, selector);
    }
    plan
}

impl RelatedPlan {
    /// A workload's revisions (of the kind `KINDS` says records them) and pods.
    fn add(&mut self, kind: TargetKind, meta: &ObjectMeta, selector: Option<&LabelSelector>) {
        let Some(revisions) = kind.spec().revisions else {
            return;
        };
        let ns = meta.namespace.as_deref().unwrap_or("default").to_string();
        self.revisions.insert((revisions, ns.clone()));
        for routing in [ResourceKind::Service, ResourceKind::EndpointSlice] {
            self.routing.insert((routing, ns.clone()));
        }
        let Some(selector) = selector else {
            self.pods_incomplete.insert(ns);
            return;
        };
        match liveproof_evidence::selector::render(selector) {
            Ok(rendered) => {
                self.pods
                    .entry(ns)
                    .or_default()
                    .insert(rendered, selector.clone());
            }
            Err(err) => {
                tracing::warn!(
                    "{} {ns}/{}: pods not read: {err}",
                    kind.kind_name(),
                    meta.name.as_deref().unwrap_or_default()
                );
                self.pods_incomplete.insert(ns);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::objects::AnyObject;
    use super::*;
    use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use liveproof_evidence::pod::{Pod, PodMeta};
    use liveproof_evidence::TargetKind;

    fn deploy(ns: &str, name: &str) -> Target {
        Target::new(TargetKind::Deployment, Some(ns), name)
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    fn workload(ns: &str, name: &str, app: &str) -> AnyObject {
        AnyObject::Deployment(std::sync::Arc::new(Deployment {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                ..ObjectMeta::default()
            },
            spec: Some(DeploymentSpec {
                selector: LabelSelector {
                    match_labels: Some(labels(&[("app", app)])),
                    ..LabelSelector::default()
                },
                ..DeploymentSpec::default()
            }),
            ..Deployment::default()
        }))
    }

    fn holding(workloads: Vec<AnyObject>) -> Observed {
        let mut observed = Observed::default();
        for w in workloads {
            w.push_into(&mut observed);
        }
        observed
    }

    /// The index answers as matching every selector one by one does: multi-label selectors,
    /// expressions only, the empty selector, and objects with and without labels.
    #[test]
    fn indexed_selectors_select_what_matching_each_selects() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
        let by = |pairs: &[(&str, &str)]| LabelSelector {
            match_labels: Some(labels(pairs)),
            ..LabelSelector::default()
        };
        let expression = LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "tier".into(),
                operator: "In".into(),
                values: Some(vec!["edge".into()]),
            }]),
            ..LabelSelector::default()
        };
        let sets = [
            vec![by(&[("app", "a")]), by(&[("app", "b"), ("tier", "web")])],
            vec![by(&[("team", "x")]), expression.clone()],
            vec![LabelSelector::default()],
            vec![],
        ];
        let objects = [
            vec![("app", "a")],
            vec![("app", "b")],
            vec![("app", "b"), ("tier", "web")],
            vec![("tier", "edge")],
            vec![("team", "x"), ("app", "c")],
            vec![],
        ];
        for set in sets {
            let indexed = Keep::Selected(Selectors::new(set.clone()));
            for pairs in &objects {
                let mut object = pod("p", "unused");
                if let AnyObject::Pod(p) = &mut object {
                    std::sync::Arc::make_mut(p).metadata.labels = Some(labels(pairs).into());
                }
                let one_by_one = set.iter().any(|s| object.meta().selected_by(s));
                assert_eq!(
                    indexed.keeps(object.meta()),
                    one_by_one,
                    "{set:?} on {pairs:?}"
                );
            }
        }
    }

    fn pod(name: &str, app: &str) -> AnyObject {
        AnyObject::Pod(std::sync::Arc::new(Pod {
            metadata: PodMeta {
                name: Some(name.into()),
                namespace: Some("apps".into()),
                labels: Some(labels(&[("app", app)]).into()),
                ..PodMeta::default()
            },
            ..Pod::default()
        }))
    }

    #[test]
    fn two_targets_of_a_kind_in_a_namespace_are_two_gets_three_are_one_list() {
        let two = plan_reads(
            plan_lookups(
                &[deploy("apps", "a"), deploy("apps", "b"), deploy("web", "c")],
                "default",
                false,
            ),
            BATCH_AT,
        );
        assert!(
            two.iter().all(|r| matches!(r, LookupRead::One(_))),
            "{two:?}"
        );
        assert_eq!(two.len(), 3);

        let three = plan_reads(
            plan_lookups(
                &[
                    deploy("apps", "a"),
                    deploy("apps", "b"),
                    deploy("apps", "c"),
                    deploy("apps", "c"),
                    deploy("web", "d"),
                ],
                "default",
                false,
            ),
            BATCH_AT,
        );
        assert_eq!(three.len(), 2, "{three:?}");
        let LookupRead::Batch {
            resource,
            namespace,
            lookups,
        } = &three[0]
        else {
            panic!("apps is one LIST: {three:?}")
        };
        assert_eq!(*resource, ResourceKind::Deployment);
        assert_eq!(namespace.as_deref(), Some("apps"));
        let names: Vec<&str> = lookups.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"], "a duplicate target is read once");
        assert!(matches!(&three[1], LookupRead::One(l) if l.name == "d"));
    }

    #[test]
    fn kinds_are_batched_apart_and_all_namespaces_is_one_group() {
        let targets = [
            Target::new(TargetKind::StatefulSet, None, "db"),
            Target::new(TargetKind::Deployment, None, "a"),
            Target::new(TargetKind::Deployment, None, "b"),
            Target::new(TargetKind::Deployment, None, "c"),
        ];
        let reads = plan_reads(plan_lookups(&targets, "default", true), BATCH_AT);
        assert_eq!(reads.len(), 2, "{reads:?}");
        assert!(matches!(
            &reads[0],
            LookupRead::Batch { resource: ResourceKind::Deployment, namespace: None, lookups } if lookups.len() == 3
        ));
        assert!(matches!(&reads[1], LookupRead::One(l) if l.resource == ResourceKind::StatefulSet));
    }

    #[test]
    fn pods_are_listed_per_selector_below_the_batch_and_per_namespace_from_it() {
        let few = plan_related(&holding(vec![
            workload("apps", "a", "a"),
            workload("apps", "b", "b"),
        ]));
        let reads = few.pod_reads(BATCH_AT);
        assert_eq!(reads.len(), 2);
        assert!(reads
            .iter()
            .all(|(ns, r)| ns == "apps" && matches!(r, PodRead::Selector(_))));

        let many = plan_related(&holding(vec![
            workload("apps", "a", "a"),
            workload("apps", "b", "b"),
            workload("apps", "c", "c"),
            workload("apps", "c2", "c"),
            workload("web", "w", "w"),
        ]));
        let reads = many.pod_reads(BATCH_AT);
        assert_eq!(reads.len(), 2, "{reads:?}");
        let PodRead::Namespace(selectors) = &reads[0].1 else {
            panic!("apps's pods in one LIST: {reads:?}")
        };
        assert_eq!(
            selectors.len(),
            3,
            "one selector shared by two workloads counts once"
        );
        assert!(matches!(&reads[1], (ns, PodRead::Selector(s)) if ns == "web" && s == "app=w"));
        assert_eq!(
            many.revisions
                .iter()
                .map(|(_, ns)| ns.as_str())
                .collect::<Vec<_>>(),
            ["apps", "web"]
        );
        // What routes traffic: one LIST of Services and one of EndpointSlices per namespace,
        // however many workloads it holds.
        assert_eq!(
            many.routing.iter().cloned().collect::<Vec<_>>(),
            [
                (ResourceKind::Service, "apps".to_string()),
                (ResourceKind::Service, "web".to_string()),
                (ResourceKind::EndpointSlice, "apps".to_string()),
                (ResourceKind::EndpointSlice, "web".to_string()),
            ]
        );
    }

    /// A Rollout's active/preview or stable/canary Services live in its namespace: its
    /// Services and their EndpointSlices are read whole there, as a Deployment's are, so
    /// `traffic_current` reads what the Rollout names (and knows a missing one is missing).
    #[test]
    fn a_rollouts_namespace_has_its_services_and_slices_listed() {
        let rollout: liveproof_evidence::Rollout = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "checkout", "namespace": "shop"},
            "spec": {"selector": {"matchLabels": {"app": "checkout"}},
                     "strategy": {"blueGreen": {"activeService": "checkout-active"}}}
        }))
        .expect("a Rollout");
        let plan = plan_related(&holding(vec![AnyObject::Rollout(std::sync::Arc::new(
            rollout,
        ))]));
        assert_eq!(
            plan.namespace_lists().cloned().collect::<Vec<_>>(),
            [
                (ResourceKind::ReplicaSet, "shop".to_string()),
                (ResourceKind::Service, "shop".to_string()),
                (ResourceKind::EndpointSlice, "shop".to_string()),
            ]
        );
    }

    #[test]
    fn keep_drops_what_no_target_names_or_selects() {
        let named = Keep::Named(["a".to_string()].into());
        assert!(named.keeps(workload("apps", "a", "x").meta()));
        assert!(!named.keeps(workload("apps", "b", "x").meta()));

        let plan = plan_related(&holding(vec![
            workload("apps", "a", "a"),
            workload("apps", "b", "b"),
        ]));
        let selected = Keep::Selected(Selectors::new(plan.pods["apps"].values().cloned()));
        assert!(selected.keeps(pod("a-1", "a").meta()));
        assert!(selected.keeps(pod("b-1", "b").meta()));
        assert!(!selected.keeps(pod("other-1", "other").meta()));
        assert!(Keep::All.keeps(pod("other-1", "other").meta()));
    }
}
