//! `traffic_current`: the Services that select a workload's pods route only to its current
//! pods, as their EndpointSlices (`discovery.k8s.io/v1`) say.
//!
//! Which Services: those in the workload's namespace whose selector is not empty and matches
//! the labels of one of its pods (of any revision: a Service that selects old pods by a label
//! the new template dropped counts) or of its current template. A Service without a selector
//! has hand-written slices, which say nothing of what the workload's controller did: it is left
//! out. An Argo Rollout's own Services (stable, canary, active, preview) are judged by its
//! status (`pods_current`); the Services outside it are judged here.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;

use super::workload::{Revision, Workload};
use super::{pods, Finding};
use crate::suggestion::{Command, Suggestion};
use crate::{Check, Observed, ResourceKind, SourceRef, Status};

/// The label the endpointslice controller puts on each slice: the Service it belongs to.
pub(crate) const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

const EXPECTED: &str = "every ready endpoint of the Services that select its pods is a current pod";

pub(crate) fn traffic_current(
    observed: &Observed,
    w: &Workload,
    revision: &Revision,
    pods: &[&Pod],
    readable: &Result<(), (String, Suggestion)>,
) -> Finding {
    let ns = w.namespace;
    let slices_source =
        SourceRef::objects(ResourceKind::EndpointSlice, ns).field(".endpoints[].targetRef");
    if let Some(d) = observed.denial(ns, ResourceKind::Service) {
        return refused(w, ResourceKind::Service, &d.message);
    }
    let listed = observed.is_complete(ns, ResourceKind::Service);
    if !listed && observed.services.is_empty() && observed.endpoint_slices.is_empty() {
        return Finding::new(
            Check::TrafficCurrent,
            Status::Skip,
            "the input holds no Services",
            EXPECTED,
        )
        .source(SourceRef::objects(ResourceKind::Service, ns))
        .detail(format!(
            "the dump holds no Service or EndpointSlice, so what routes traffic to the pods was not checked (include them: kubectl -n {ns} get services,endpointslices -o yaml)"
        ));
    }
    let services = selecting(observed, w, pods);
    if services.is_empty() {
        let own = w.status.own_services();
        let besides = if own.is_empty() {
            String::new()
        } else {
            format!(" besides its own ({})", own.join(", "))
        };
        return Finding::new(
            Check::TrafficCurrent,
            Status::Skip,
            format!("no Service in {ns} selects its pods{besides}"),
            EXPECTED,
        )
        .source(SourceRef::objects(ResourceKind::Service, ns).field(".spec.selector"))
        .detail("no Service with a selector routes to this workload's pods, so there is no endpoint to check");
    }
    let names: Vec<&str> = services.iter().map(|s| service_name(s)).collect();
    if let Err((why, next)) = readable {
        return Finding::new(
            Check::TrafficCurrent,
            Status::Unknown,
            "pods not read",
            EXPECTED,
        )
        .source(slices_source)
        .detail(format!(
            "cannot tell which endpoints of {} are current pods: {why}",
            names.join(", ")
        ))
        .next(next.clone());
    }
    let Revision::Current(current) = revision else {
        return Finding::new(
            Check::TrafficCurrent,
            Status::Unknown,
            "current revision unknown",
            EXPECTED,
        )
        .source(slices_source)
        .detail(format!(
            "the current revision is unknown (see pods_current), so the endpoints of {} cannot be told current or old",
            names.join(", ")
        ));
    };
    if let Some(d) = observed.denial(ns, ResourceKind::EndpointSlice) {
        return refused(w, ResourceKind::EndpointSlice, &d.message);
    }
    let slices_listed = observed.is_complete(ns, ResourceKind::EndpointSlice);
    let mut report = Report::default();
    for service in &services {
        let name = service_name(service);
        let slices: Vec<&EndpointSlice> = observed
            .endpoint_slices
            .iter()
            .map(|s| &**s)
            .filter(|s| s.metadata.namespace.as_deref().unwrap_or(ns) == ns)
            .filter(|s| {
                s.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(SERVICE_NAME_LABEL))
                    .is_some_and(|n| n == name)
            })
            .collect();
        if slices.is_empty() && !slices_listed {
            report.unknown.push(format!(
                "the input holds no EndpointSlice of Service {name}"
            ));
            report.fix_dump = true;
            continue;
        }
        let mut ready = 0usize;
        let mut unknown_here = false;
        for slice in &slices {
            let slice_name = slice.metadata.name.as_deref().unwrap_or("?");
            for endpoint in &slice.endpoints {
                // A nil `ready` is to be read as ready (the EndpointConditions API doc).
                let is_ready = endpoint
                    .conditions
                    .as_ref()
                    .and_then(|c| c.ready)
                    .unwrap_or(true);
                if !is_ready {
                    continue;
                }
                ready += 1;
                let address = endpoint.addresses.first().map_or("?", String::as_str);
                let pod_name = endpoint
                    .target_ref
                    .as_ref()
                    .filter(|r| r.kind.as_deref() == Some("Pod"))
                    .and_then(|r| r.name.as_deref());
                let Some(pod_name) = pod_name else {
                    report.unknown.push(format!(
                        "Service {name}: endpoint {address} in EndpointSlice {slice_name} names no pod (no targetRef), so what it routes to cannot be told"
                    ));
                    unknown_here = true;
                    continue;
                };
                match pods.iter().find(|p| pods::name(p) == pod_name) {
                    Some(pod) if current.is_current(pod) => report.current += 1,
                    Some(pod) => report.wrong.push(Wrong {
                        service: name.to_string(),
                        slice: slice_name.to_string(),
                        pod: pod_name.to_string(),
                        why: format!(
                            "old revision {}",
                            pods::label(pod, current.label).unwrap_or("without a revision label")
                        ),
                        old: true,
                    }),
                    None if observed.is_complete(ns, ResourceKind::Pod)
                        || observed.pods.iter().any(|p| {
                            pods::name(p) == pod_name
                                && p.metadata.namespace.as_deref().unwrap_or(ns) == ns
                        }) =>
                    {
                        report.wrong.push(Wrong {
                            service: name.to_string(),
                            slice: slice_name.to_string(),
                            pod: pod_name.to_string(),
                            why: format!("not a pod of {}", w.source()),
                            old: false,
                        });
                    }
                    None => {
                        report.unknown.push(format!(
                            "Service {name}: pod {pod_name} (EndpointSlice {slice_name}) is not in the input"
                        ));
                        report.fix_dump = true;
                        unknown_here = true;
                    }
                }
            }
        }
        if ready == 0 && !unknown_here {
            report.empty.push(name.to_string());
        }
        report.ready.insert(name.to_string(), ready);
    }
    report.judge(w, slices_source)
}

/// A ready endpoint that is not a current pod of the workload.
struct Wrong {
    service: String,
    slice: String,
    pod: String,
    why: String,
    /// Of the workload, on an old revision (else another workload's pod).
    old: bool,
}

#[derive(Default)]
struct Report {
    /// Ready endpoints per Service.
    ready: BTreeMap<String, usize>,
    /// Ready endpoints that are current pods.
    current: usize,
    wrong: Vec<Wrong>,
    /// Services with no ready endpoint at all.
    empty: Vec<String>,
    unknown: Vec<String>,
    /// An unknown the dump could settle by holding more.
    fix_dump: bool,
}

impl Report {
    fn judge(self, w: &Workload, source: SourceRef) -> Finding {
        let ns = w.namespace;
        let counts: Vec<String> = self
            .ready
            .iter()
            .map(|(s, n)| format!("Service {s}: {n} ready endpoint(s)"))
            .collect();
        if let Some(first) = self.wrong.first() {
            let wrong: Vec<String> = self
                .wrong
                .iter()
                .map(|x| {
                    format!(
                        "Service {} → pod {} ({}, EndpointSlice {})",
                        x.service, x.pod, x.why, x.slice
                    )
                })
                .collect();
            let slices = Command::kubectl([
                "-n",
                ns,
                "get",
                "endpointslices",
                "-l",
                &format!("{SERVICE_NAME_LABEL}={}", first.service),
                "-o",
                "yaml",
            ]);
            let next = if first.old {
                Suggestion::text(format!(
                    "Service {} selects pods by a label the old pods carry: make its selector match only what the current template sets, or remove the old pods (",
                    first.service
                ))
                .command(slices)
                .then(" shows where it routes)")
            } else {
                Suggestion::text(format!(
                    "Service {} selects pods beyond {}: narrow its selector to this workload's labels (",
                    first.service,
                    w.source()
                ))
                .command(slices)
                .then(" shows where it routes)")
            };
            return Finding::new(
                Check::TrafficCurrent,
                Status::Fail,
                wrong.join("; "),
                EXPECTED,
            )
            .source(source.clone())
            .detail(format!(
                "traffic still reaches pods that are not a current pod of {}: {} of the ready endpoints",
                w.source(),
                self.wrong.len()
            ))
            .next(next);
        }
        if let Some(first) = self.empty.first() {
            return Finding::new(
                Check::TrafficCurrent,
                Status::Fail,
                counts.join("; "),
                EXPECTED,
            )
            .source(source)
            .detail(format!(
                "Service {} has no ready endpoint: no current pod receives its traffic",
                self.empty.join(", ")
            ))
            .next(
                Suggestion::text("see why: ")
                    .command(Command::kubectl(["-n", ns, "describe", "service", first])),
            );
        }
        if !self.unknown.is_empty() {
            let next =
                if self.fix_dump {
                    Suggestion::text("include the Services' slices and pods in the dump: ").command(
                        Command::kubectl([
                            "-n",
                            ns,
                            "get",
                            "services,endpointslices,pods",
                            "-o",
                            "yaml",
                        ]),
                    )
                } else {
                    Suggestion::text("see what the endpoints route to: ").command(Command::kubectl(
                        ["-n", ns, "get", "endpointslices", "-o", "yaml"],
                    ))
                };
            return Finding::new(
                Check::TrafficCurrent,
                Status::Unknown,
                self.unknown.join("; "),
                EXPECTED,
            )
            .source(source)
            .detail("part of what the Services route to cannot be told (see observed)")
            .next(next);
        }
        Finding::new(
            Check::TrafficCurrent,
            Status::Pass,
            format!("{}, all current", counts.join("; ")),
            EXPECTED,
        )
        .source(source)
        .detail(format!(
            "every ready endpoint of the Services that select its pods is a current pod of {}",
            w.source()
        ))
    }
}

fn refused(w: &Workload, resource: ResourceKind, message: &str) -> Finding {
    let ns = w.namespace;
    Finding::new(
        Check::TrafficCurrent,
        Status::Unknown,
        format!("{} not read", resource.plural()),
        EXPECTED,
    )
    .source(SourceRef::objects(resource, ns))
    .detail(format!(
        "listing {} was refused: {message}",
        resource.plural()
    ))
    .next(
        Suggestion::text(format!(
            "grant list on {} in {ns} (check: ",
            resource.plural()
        ))
        .command(Command::kubectl([
            "auth",
            "can-i",
            "list",
            resource.plural(),
            "-n",
            ns,
        ]))
        .then(")"),
    )
}

fn service_name(service: &Service) -> &str {
    service.metadata.name.as_deref().unwrap_or("?")
}

/// The Services of `w`'s namespace that route to its pods (see the module doc), sorted by name.
fn selecting<'a>(observed: &'a Observed, w: &Workload, pods: &[&Pod]) -> Vec<&'a Service> {
    let own = w.status.own_services();
    let template_labels = w.template.metadata.as_ref().and_then(|m| m.labels.as_ref());
    let mut out: Vec<&Service> = observed
        .services
        .iter()
        .map(|s| &**s)
        .filter(|s| s.metadata.namespace.as_deref().unwrap_or(w.namespace) == w.namespace)
        .filter(|s| !own.contains(&service_name(s)))
        .filter(|s| {
            let Some(selector) = s.spec.as_ref().and_then(|spec| spec.selector.as_ref()) else {
                return false;
            };
            !selector.is_empty()
                && (selects(selector, template_labels)
                    || pods
                        .iter()
                        .any(|p| selects(selector, p.metadata.labels.as_ref())))
        })
        .collect();
    out.sort_by_key(|s| service_name(s));
    out
}

/// A Service's selector (equality on every key) against `labels`.
fn selects(selector: &BTreeMap<String, String>, labels: Option<&BTreeMap<String, String>>) -> bool {
    let Some(labels) = labels else {
        return false;
    };
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::{Change, Denied, Evidence, Target, TargetKind};

    fn story(name: &str) -> Observed {
        Observed::of_story(name)
    }

    const LIVE: &str = "service-routes-only-to-current-pods";

    fn traffic(observed: &Observed) -> Evidence {
        let target = Target::new(TargetKind::Deployment, Some("apps"), "inventory");
        let report = crate::judge(observed, &Change::default(), &[target], "apps");
        report
            .targets
            .iter()
            .flat_map(|t| &t.evidence)
            .find(|e| e.check == Check::TrafficCurrent)
            .cloned()
            .expect("a traffic_current item")
    }

    /// `observed` as a live gather would hold it: every kind read in full in `apps`.
    fn listed(mut observed: Observed) -> Observed {
        for kind in [
            ResourceKind::Pod,
            ResourceKind::ReplicaSet,
            ResourceKind::Service,
            ResourceKind::EndpointSlice,
        ] {
            observed.mark_complete("apps", kind);
        }
        observed
    }

    fn edit_slices(observed: &mut Observed, edit: impl Fn(&mut EndpointSlice)) {
        for slice in &mut observed.endpoint_slices {
            edit(Arc::make_mut(slice));
        }
    }

    #[test]
    fn ready_endpoints_all_on_current_pods_pass() {
        let e = traffic(&story(LIVE));
        assert_eq!(e.status, Status::Pass, "{e:#?}");
        assert_eq!(
            e.observed,
            "Service inventory: 3 ready endpoint(s), all current"
        );
    }

    #[test]
    fn an_orphaned_pod_a_leftover_label_selects_fails_naming_service_slice_and_pod() {
        for observed in [
            story("service-selects-old-pod-by-leftover-label"),
            listed(story("service-selects-old-pod-by-leftover-label")),
        ] {
            let e = traffic(&observed);
            assert_eq!(e.status, Status::Fail, "{e:#?}");
            assert_eq!(
                e.observed,
                "Service inventory → pod inventory-5d8f7c6b9-x7k2p (not a pod of apps/Deployment/inventory, EndpointSlice inventory-7xq2d)"
            );
        }
    }

    #[test]
    fn an_endpoint_on_an_old_revision_of_the_workload_fails_as_old() {
        let mut observed = story(LIVE);
        let pod = Arc::make_mut(&mut observed.pods[0]);
        pod.metadata
            .labels
            .as_mut()
            .expect("labels")
            .insert("pod-template-hash".into(), "wglrtkpcjz".into());
        let e = traffic(&observed);
        assert_eq!(e.status, Status::Fail, "{e:#?}");
        assert!(
            e.observed
                .contains("(old revision wglrtkpcjz, EndpointSlice inventory-7xq2d)"),
            "{}",
            e.observed
        );
    }

    #[test]
    fn an_endpoint_that_names_no_pod_is_unknown() {
        let e = traffic(&story("service-endpoint-without-targetref"));
        assert_eq!(e.status, Status::Unknown, "{e:#?}");
        assert!(
            e.observed
                .contains("endpoint 10.0.9.15 in EndpointSlice inventory-legacy-vm names no pod"),
            "{}",
            e.observed
        );
    }

    #[test]
    fn not_ready_endpoints_do_not_count_and_unset_ready_counts_as_ready() {
        let mut observed = story("service-selects-old-pod-by-leftover-label");
        // The orphan's endpoint not ready: it gets no traffic.
        edit_slices(&mut observed, |s| {
            for e in &mut s.endpoints {
                let orphan = e
                    .target_ref
                    .as_ref()
                    .and_then(|r| r.name.as_deref())
                    .is_some_and(|n| n.starts_with("inventory-5d8f7c6b9"));
                let conditions = e.conditions.get_or_insert_with(Default::default);
                conditions.ready = if orphan { Some(false) } else { None };
            }
        });
        let e = traffic(&observed);
        assert_eq!(e.status, Status::Pass, "{e:#?}");
        assert_eq!(
            e.observed,
            "Service inventory: 3 ready endpoint(s), all current"
        );
    }

    #[test]
    fn a_selecting_service_without_a_ready_endpoint_fails() {
        let mut observed = listed(story(LIVE));
        observed.endpoint_slices.clear();
        let e = traffic(&observed);
        assert_eq!(e.status, Status::Fail, "{e:#?}");
        assert!(e.detail.contains("no ready endpoint"), "{}", e.detail);
    }

    #[test]
    fn a_dump_with_services_but_no_slices_is_unknown_never_pass() {
        let mut observed = story(LIVE);
        observed.endpoint_slices.clear();
        let e = traffic(&observed);
        assert_eq!(e.status, Status::Unknown, "{e:#?}");
        assert_eq!(
            e.observed,
            "the input holds no EndpointSlice of Service inventory"
        );
    }

    #[test]
    fn a_dump_without_services_or_slices_skips_and_says_how_to_dump_them() {
        let e = traffic(&story("expect-env-present-rolled-out"));
        assert_eq!(e.status, Status::Skip, "{e:#?}");
        assert_eq!(e.observed, "the input holds no Services");
        assert!(
            e.detail
                .contains("kubectl -n apps get services,endpointslices -o yaml"),
            "{}",
            e.detail
        );
    }

    #[test]
    fn no_service_selecting_the_pods_skips() {
        let mut observed = listed(story(LIVE));
        let service = Arc::make_mut(&mut observed.services[0]);
        let spec = service.spec.as_mut().expect("spec");
        spec.selector = Some([("app".to_string(), "billing".to_string())].into());
        let e = traffic(&observed);
        assert_eq!(e.status, Status::Skip, "{e:#?}");
        assert_eq!(e.observed, "no Service in apps selects its pods");
        // Nor does a Service without a selector (its slices are written by hand).
        Arc::make_mut(&mut observed.services[0])
            .spec
            .as_mut()
            .expect("spec")
            .selector = None;
        assert_eq!(traffic(&observed).status, Status::Skip);
    }

    #[test]
    fn slices_the_cluster_refused_are_unknown() {
        let mut observed = listed(story(LIVE));
        observed.endpoint_slices.clear();
        observed
            .complete
            .remove(&("apps".to_string(), ResourceKind::EndpointSlice));
        observed.denied.push(Denied {
            namespace: Some("apps".into()),
            resource: ResourceKind::EndpointSlice,
            verb: "list".into(),
            message: "endpointslices.discovery.k8s.io is forbidden".into(),
        });
        let e = traffic(&observed);
        assert_eq!(e.status, Status::Unknown, "{e:#?}");
        assert!(e.detail.contains("refused"), "{}", e.detail);
    }

    /// An Argo Rollout's own Services are judged through its status (`pods_current`): left
    /// out here. A Service outside it selecting every pod by `app=` still reaches the old pods
    /// idling under scaleDownDelaySeconds: that one fails.
    #[test]
    fn a_rollouts_own_services_are_left_out_and_one_outside_it_is_judged() {
        let mut observed = story("argo-rollout-canary-promoted-old-pods-idle");
        for kind in [
            ResourceKind::Pod,
            ResourceKind::ReplicaSet,
            ResourceKind::Service,
            ResourceKind::EndpointSlice,
        ] {
            observed.mark_complete("shop", kind);
        }
        let service = |name: &str, selector: serde_json::Value| {
            serde_json::json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": "shop"},
                "spec": {"selector": selector}})
        };
        let old_pod = observed
            .pods
            .iter()
            .find(|p| pods::label(p, "rollouts-pod-template-hash") == Some("5c6d7f8b9"))
            .map(|p| pods::name(p).to_string())
            .expect("an old pod");
        let stable = service(
            "checkout-stable",
            serde_json::json!({"app": "checkout", "rollouts-pod-template-hash": "5c6d7f8b9"}),
        );
        observed.add_value(stable, "test").expect("a Service");
        let judge = |o: &Observed| {
            let target = Target::new(TargetKind::Rollout, Some("shop"), "checkout");
            let report = crate::judge(o, &Change::default(), &[target], "shop");
            report
                .targets
                .iter()
                .flat_map(|t| &t.evidence)
                .find(|e| e.check == Check::TrafficCurrent)
                .cloned()
                .expect("traffic_current")
        };
        let e = judge(&observed);
        assert_eq!(e.status, Status::Skip, "{e:#?}");
        assert!(
            e.observed
                .contains("besides its own (checkout-stable, checkout-canary)"),
            "{}",
            e.observed
        );

        observed
            .add_value(
                service("checkout", serde_json::json!({"app": "checkout"})),
                "test",
            )
            .expect("a Service");
        observed
            .add_value(
                serde_json::json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"name": "checkout-x1", "namespace": "shop",
                                 "labels": {"kubernetes.io/service-name": "checkout"}},
                    "addressType": "IPv4",
                    "endpoints": [{"addresses": ["10.0.0.9"], "conditions": {"ready": true},
                                   "targetRef": {"kind": "Pod", "name": old_pod, "namespace": "shop"}}]}),
                "test",
            )
            .expect("a slice");
        let e = judge(&observed);
        assert_eq!(e.status, Status::Fail, "{e:#?}");
        assert!(
            e.observed.contains("old revision 5c6d7f8b9"),
            "{}",
            e.observed
        );
    }

    #[test]
    fn a_knative_service_is_not_taken_for_a_core_service() {
        let mut observed = Observed::default();
        observed
            .add_value(
                serde_json::json!({
                    "apiVersion": "serving.knative.dev/v1", "kind": "Service",
                    "metadata": {"name": "checkout", "namespace": "shop"},
                    "spec": {"template": {}}
                }),
                "test",
            )
            .expect("an object");
        assert!(observed.services.is_empty());
        assert_eq!(observed.others.len(), 1);
    }
}
