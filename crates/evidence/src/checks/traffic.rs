//! `traffic_current`: what routes traffic to a workload's pods routes it only to its current
//! pods, as the EndpointSlices (`discovery.k8s.io/v1`) of its Services say, and as the weights
//! its controller set on a traffic router add up.
//!
//! Which Services: those in the workload's namespace whose selector is not empty and matches
//! the labels of one of its pods (of any revision: a Service that selects old pods by a label
//! the new template dropped counts) or of its current template; and every Service the
//! workload's own controller names (an Argo Rollout's active, preview, stable and canary
//! Services), whatever its selector matches — traffic reaches the Rollout through them, so
//! their endpoints, never the Rollout's status, say which pods serve. A named Service that was
//! not read is `unknown`; one a full listing lacks fails. A Service without a selector that
//! nothing names has hand-written slices, which say nothing of what the workload's controller
//! did: it is left out.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;

use crate::pod::Pod;
use k8s_openapi::api::discovery::v1::EndpointSlice;

use super::{pods, Finding};
use crate::kinds::workload::{CurrentRevision, Revision, Workload};
use crate::kinds::workload::{NamedService, Share, TrafficSplit};
use crate::suggestion::{Command, Suggestion};
use crate::{Check, Observed, ResourceKind, SourceRef, Status};

/// The label the endpointslice controller puts on each slice: the Service it belongs to.
pub(crate) const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

const EXPECTED: &str = "every ready endpoint of the Services that select its pods is a current pod";

/// What the check holds `w` to: the endpoints, and the weights when its controller sets some.
fn expected(w: &Workload, split: Option<&TrafficSplit>) -> String {
    let named = w.status.named_services();
    let mut out = if named.is_empty() {
        EXPECTED.to_string()
    } else {
        let names: Vec<&str> = named.iter().map(|n| n.name).collect();
        format!(
            "every ready endpoint of the Services it names ({}) and of those that select its pods is a current pod",
            names.join(", ")
        )
    };
    if let Some(split) = split {
        out.push_str(&format!(
            "; {} total 100%, all on the current revision",
            split.source.trim_start_matches('.')
        ));
    }
    out
}

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
    let named = w.status.named_services();
    let split = w.status.traffic_split();
    let expected = expected(w, split.as_ref());
    if let Some(d) = observed.denial(ns, ResourceKind::Service) {
        return refused(w, d, &expected);
    }
    let listed = observed.is_complete(ns, ResourceKind::Service);
    if named.is_empty()
        && split.is_none()
        && !listed
        && observed.services.is_empty()
        && observed.endpoint_slices.is_empty()
    {
        return Finding::new(
            Check::TrafficCurrent,
            Status::Skip,
            "the input holds no Services",
            expected,
        )
        .source(SourceRef::objects(ResourceKind::Service, ns))
        .detail(format!(
            "the dump holds no Service or EndpointSlice, so what routes traffic to the pods was not checked (include them: kubectl -n {ns} get services,endpointslices -o yaml)"
        ));
    }
    let mut services = selecting(observed, w, pods);
    let mut absent: Vec<&NamedService> = Vec::new();
    for n in &named {
        match find_service(observed, ns, n.name) {
            Some(found) => services.push(found),
            None => absent.push(n),
        }
    }
    services.sort_by_key(|s| service_name(s));
    services.dedup_by_key(|s| service_name(s));
    if services.is_empty() && absent.is_empty() && split.is_none() {
        return Finding::new(
            Check::TrafficCurrent,
            Status::Skip,
            format!("no Service in {ns} selects its pods"),
            expected,
        )
        .source(SourceRef::objects(ResourceKind::Service, ns).field(".spec.selector"))
        .detail("no Service with a selector routes to this workload's pods, so there is no endpoint to check");
    }
    let names: Vec<&str> = services
        .iter()
        .map(|s| service_name(s))
        .chain(absent.iter().map(|n| n.name))
        .collect();
    let what = if names.is_empty() {
        "its traffic weights".to_string()
    } else {
        names.join(", ")
    };
    if let Err((why, next)) = readable {
        return Finding::new(
            Check::TrafficCurrent,
            Status::Unknown,
            "pods not read",
            expected,
        )
        .source(slices_source)
        .detail(format!(
            "cannot tell which endpoints of {what} are current pods: {why}"
        ))
        .next(next.clone());
    }
    let Revision::Current(current) = revision else {
        return Finding::new(
            Check::TrafficCurrent,
            Status::Unknown,
            "current revision unknown",
            expected,
        )
        .source(slices_source)
        .detail(format!(
            "the current revision is unknown (see pods_current), so where {what} route cannot be told current or old"
        ));
    };
    if !services.is_empty() {
        if let Some(d) = observed.denial(ns, ResourceKind::EndpointSlice) {
            return refused(w, d, &expected);
        }
    }
    let mut routing = Routing {
        expected,
        current_hash: current.hash.clone(),
        ..Routing::default()
    };
    for n in absent {
        if listed {
            routing.missing_source.get_or_insert_with(|| {
                SourceRef::object(ResourceKind::Service, ns, n.name).field(".metadata.name")
            });
            routing.missing.push(format!(
                "Service {} ({}) does not exist",
                n.name,
                n.field.trim_start_matches('.')
            ));
        } else {
            routing.unknown.push(format!(
                "the input holds no Service {}, which {} names ({})",
                n.name,
                w.source(),
                n.field.trim_start_matches('.')
            ));
            routing.fix_dump = true;
        }
    }
    if let Some(split) = &split {
        routing.weigh(w, split, current);
    }
    let slices_listed = observed.is_complete(ns, ResourceKind::EndpointSlice);
    for service in &services {
        let name = service_name(service);
        let named_as = named.iter().find(|n| n.name == name);
        if let Some(n) = named_as {
            routing
                .named
                .insert(name.to_string(), (n.field, selector_text(service)));
        }
        // A Service its controller's router gives no traffic (a ping-pong canary's idle side)
        // routes nothing, whatever it selects; one whose share is not recorded cannot fail.
        let doubt = match named_as.map(|n| &n.share) {
            Some(Share::Idle(why)) => {
                routing.idle.push(format!(
                    "Service {name} ({}) gets no traffic: {why}",
                    selector_text(service)
                ));
                continue;
            }
            Some(Share::NotRecorded(why)) => Some(why.as_str()),
            Some(Share::Routed) | None => None,
        };
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
            routing.unknown.push(format!(
                "the input holds no EndpointSlice of Service {name}"
            ));
            routing.fix_dump = true;
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
                    routing.unknown.push(format!(
                        "Service {name}: endpoint {address} in EndpointSlice {slice_name} names no pod (no targetRef), so what it routes to cannot be told"
                    ));
                    unknown_here = true;
                    continue;
                };
                match pods.iter().find(|p| pods::name(p) == pod_name) {
                    Some(pod) if current.is_current(pod) => routing.current += 1,
                    Some(pod) => {
                        unknown_here |= routing.route_wrong(
                            Wrong {
                                service: name.to_string(),
                                slice: slice_name.to_string(),
                                pod: pod_name.to_string(),
                                why: format!(
                                    "old revision {}",
                                    pods::label(pod, current.label)
                                        .unwrap_or("without a revision label")
                                ),
                                old: true,
                            },
                            doubt,
                        )
                    }
                    None if observed.is_complete(ns, ResourceKind::Pod)
                        || observed.pods.iter().any(|p| {
                            pods::name(p) == pod_name
                                && p.metadata.namespace.as_deref().unwrap_or(ns) == ns
                        }) =>
                    {
                        unknown_here |= routing.route_wrong(
                            Wrong {
                                service: name.to_string(),
                                slice: slice_name.to_string(),
                                pod: pod_name.to_string(),
                                why: format!("not a pod of {}", w.source()),
                                old: false,
                            },
                            doubt,
                        );
                    }
                    None => {
                        routing.unknown.push(format!(
                            "Service {name}: pod {pod_name} (EndpointSlice {slice_name}) is not in the input"
                        ));
                        routing.fix_dump = true;
                        unknown_here = true;
                    }
                }
            }
        }
        if ready == 0 && !unknown_here {
            match doubt {
                Some(why) => routing
                    .unknown
                    .push(format!("Service {name} has no ready endpoint, and {why}")),
                None => routing.empty.push(name.to_string()),
            }
        }
        routing.ready.insert(name.to_string(), ready);
    }
    routing.judge(w, slices_source)
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

/// Where the workload's Services route, tallied before `traffic_current` is judged on it.
#[derive(Default)]
struct Routing {
    expected: String,
    /// The current revision's hash.
    current_hash: String,
    /// Ready endpoints per Service.
    ready: BTreeMap<String, usize>,
    /// Ready endpoints that are current pods.
    current: usize,
    wrong: Vec<Wrong>,
    /// The Services the workload names, read: the field naming each and its selector.
    named: BTreeMap<String, (&'static str, String)>,
    /// Services the workload names that a full listing lacks.
    missing: Vec<String>,
    /// The weights, as read: `stable 100% to 7b9f4d6c8, …`.
    weights: Option<String>,
    /// Weights giving a share to a revision that is not current.
    weighted_old: Vec<String>,
    /// Services with no ready endpoint at all.
    empty: Vec<String>,
    /// Named Services that get no traffic, and why: shown, never held.
    idle: Vec<String>,
    unknown: Vec<String>,
    /// An unknown the dump could settle by holding more.
    fix_dump: bool,
    /// How many of `unknown` are about the weights themselves.
    weights_unknown: usize,
    /// Where the weights were read: the workload's status field.
    weights_source: Option<SourceRef>,
    /// The Services the workload names that a full listing lacks, as sources.
    missing_source: Option<SourceRef>,
}

/// One failing part of the routing: what was seen, why it fails, and the step that fixes it.
struct Failing {
    observed: String,
    detail: String,
    next: Suggestion,
    /// Where it was read, when not the EndpointSlices.
    source: Option<SourceRef>,
}

impl Routing {
    /// A ready endpoint that is not a current pod: a failure, or unknown when whether its
    /// Service gets traffic is not recorded (`doubt` says why). True when unknown.
    fn route_wrong(&mut self, wrong: Wrong, doubt: Option<&str>) -> bool {
        match doubt {
            None => {
                self.wrong.push(wrong);
                false
            }
            Some(why) => {
                self.unknown.push(format!(
                    "Service {} → pod {} ({}, EndpointSlice {}), and {why}",
                    wrong.service, wrong.pod, wrong.why, wrong.slice
                ));
                true
            }
        }
    }

    /// Holds the weights of `split` to add up to 100 (each 0–100) and to give a share to the
    /// current revision alone.
    fn weigh(&mut self, w: &Workload, split: &TrafficSplit, current: &CurrentRevision) {
        self.weights_source = Some(w.source().field(split.source));
        let field = split.source.trim_start_matches('.');
        let shown: Vec<String> = split
            .destinations
            .iter()
            .map(|d| {
                let hash = if d.hash.is_empty() {
                    "no recorded revision"
                } else {
                    d.hash.as_str()
                };
                let through = d
                    .service
                    .as_ref()
                    .map(|s| format!(" (Service {s})"))
                    .unwrap_or_default();
                format!("{} {}% to {hash}{through}", d.role, d.weight)
            })
            .collect();
        let total: i64 = split.destinations.iter().map(|d| i64::from(d.weight)).sum();
        self.weights = Some(format!("{field}: {} (total {total}%)", shown.join(", ")));
        let mut out_of_range = Vec::new();
        for (d, shown) in split.destinations.iter().zip(&shown) {
            if !(0..=100).contains(&d.weight) {
                out_of_range.push(shown.clone());
            } else if d.weight > 0 && d.hash.is_empty() {
                self.unknown.push(format!(
                    "{field}.{}: {}% to no recorded revision",
                    d.role, d.weight
                ));
                self.weights_unknown += 1;
            } else if d.weight > 0 && d.hash != current.hash {
                let through = d
                    .service
                    .as_ref()
                    .map(|s| format!(" (Service {s})"))
                    .unwrap_or_default();
                self.weighted_old.push(format!(
                    "{field}.{}: {}% to {}{through}, not the current revision {}",
                    d.role, d.weight, d.hash, current.hash
                ));
            }
        }
        if !out_of_range.is_empty() {
            self.unknown.push(format!(
                "{field}: {} — a weight outside 0–100% is no share of the traffic",
                out_of_range.join(", ")
            ));
            self.weights_unknown += 1;
        } else if total != 100 {
            self.unknown.push(format!(
                "{field}: {} add up to {total}%, not 100%: where the rest of the traffic goes is not recorded",
                shown.join(", ")
            ));
            self.weights_unknown += 1;
        }
    }

    fn judge(self, w: &Workload, source: SourceRef) -> Finding {
        let ns = w.namespace;
        let mut counts: Vec<String> = self
            .ready
            .iter()
            .map(|(s, n)| format!("Service {s}: {n} ready endpoint(s)"))
            .collect();
        let failing = self.failing(w, &counts);
        if let Some(first) = failing.first() {
            let observed: Vec<&str> = failing.iter().map(|f| f.observed.as_str()).collect();
            let detail: Vec<&str> = failing.iter().map(|f| f.detail.as_str()).collect();
            let source = first.source.clone().unwrap_or(source);
            return Finding::new(
                Check::TrafficCurrent,
                Status::Fail,
                observed.join("; "),
                self.expected,
            )
            .source(source)
            .detail(detail.join("; "))
            .next(first.next.clone());
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
                } else if self.weights_unknown > 0 {
                    Suggestion::text(format!(
                        "see the weights {} recorded: ",
                        w.kind.actor().name
                    ))
                    .command(w.kubectl(&["get"], &["-o", "yaml"]))
                } else {
                    Suggestion::text("see what the endpoints route to: ").command(Command::kubectl(
                        ["-n", ns, "get", "endpointslices", "-o", "yaml"],
                    ))
                };
            let source = match &self.weights_source {
                Some(weights) if self.weights_unknown == self.unknown.len() => weights.clone(),
                _ => source,
            };
            return Finding::new(
                Check::TrafficCurrent,
                Status::Unknown,
                self.unknown.join("; "),
                self.expected,
            )
            .source(source)
            .detail("part of what routes its traffic cannot be told (see observed)")
            .next(next);
        }
        let detail = if self.named.is_empty() && self.weights.is_none() {
            format!(
                "every ready endpoint of the Services that select its pods is a current pod of {}",
                w.source()
            )
        } else {
            format!(
                "every ready endpoint of the Services that route to {} is a current pod{}",
                w.source(),
                if self.weights.is_some() {
                    ", and the traffic router's weights give the current revision all of it"
                } else {
                    ""
                }
            )
        };
        counts.extend(self.weights);
        let idle: String = self.idle.iter().map(|i| format!("; {i}")).collect();
        Finding::new(
            Check::TrafficCurrent,
            Status::Pass,
            format!("{}, all current{idle}", counts.join("; ")),
            self.expected,
        )
        .source(source)
        .detail(detail)
    }

    /// What fails, worst first: endpoints on pods that are not current, weights on an old
    /// revision, named Services that do not exist, Services with no ready endpoint.
    fn failing(&self, w: &Workload, counts: &[String]) -> Vec<Failing> {
        let ns = w.namespace;
        let mut out = Vec::new();
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
            let mut routed_by: Vec<String> = Vec::new();
            for service in self.wrong.iter().map(|x| x.service.as_str()) {
                if let Some((field, selector)) = self.named.get(service) {
                    let line = format!(
                        "Service {service}, its {}, selects {selector}",
                        field.rsplit('.').next().unwrap_or(field)
                    );
                    if !routed_by.contains(&line) {
                        routed_by.push(line);
                    }
                }
            }
            // The controller's status may say the current revision has it all: say that it is
            // the status's word, which is not what routes.
            let claimed = w
                .status
                .routed()
                .filter(|r| {
                    !routed_by.is_empty()
                        && r.weights
                            .iter()
                            .all(|(h, weight)| *weight <= 0 || *h == self.current_hash)
                })
                .map(|r| {
                    format!(
                        " (its {} names only the current revision: the status's word, not what routes)",
                        r.source.trim_start_matches('.')
                    )
                })
                .unwrap_or_default();
            let mut detail = format!(
                "traffic still reaches pods that are not a current pod of {}: {} of the ready endpoints",
                w.source(),
                self.wrong.len()
            );
            if !routed_by.is_empty() {
                detail.push_str(&format!(" — {}{claimed}", routed_by.join("; ")));
            }
            let next = if self.named.contains_key(&first.service) {
                Suggestion::text(format!(
                    "Service {} is switched between revisions by {}, which has not pointed it at the current one: see why (",
                    first.service,
                    w.kind.actor().name
                ))
                .command(w.kubectl(&["describe"], &[]))
                .then("), and where the Service routes (")
                .command(slices)
                .then(")")
            } else if first.old {
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
            out.push(Failing {
                observed: wrong.join("; "),
                detail,
                next,
                source: None,
            });
        }
        if !self.weighted_old.is_empty() {
            out.push(Failing {
                observed: self.weighted_old.join("; "),
                detail: "the traffic router's weights still send a share of the traffic to a revision that is not current".to_string(),
                next: Suggestion::text("see where the rollout stands: ")
                    .command(w.kubectl(&["describe"], &[])),
                source: self.weights_source.clone(),
            });
        }
        if !self.missing.is_empty() {
            out.push(Failing {
                observed: self.missing.join("; "),
                detail: format!(
                    "{} names a Service that does not exist, so no traffic reaches its pods through it",
                    w.source()
                ),
                next: Suggestion::text("create the Service, or name an existing one (")
                    .command(w.kubectl(&["describe"], &[]))
                    .then(" shows what its controller reports)"),
                source: self.missing_source.clone(),
            });
        }
        if let Some(first) = self.empty.first() {
            // Alone, every Service's count; after other failures, the empty ones.
            let observed = if out.is_empty() {
                counts.join("; ")
            } else {
                let empty: Vec<String> = self
                    .empty
                    .iter()
                    .map(|s| format!("Service {s}: 0 ready endpoint(s)"))
                    .collect();
                empty.join("; ")
            };
            out.push(Failing {
                observed,
                detail: format!(
                    "Service {} has no ready endpoint: no current pod receives its traffic",
                    self.empty.join(", ")
                ),
                next: Suggestion::text("see why: ")
                    .command(Command::kubectl(["-n", ns, "describe", "service", first])),
                source: None,
            });
        }
        out
    }
}

fn refused(w: &Workload, d: &crate::Denied, expected: &str) -> Finding {
    let ns = w.namespace;
    let resource = d.resource;
    let message = &d.message;
    Finding::new(
        Check::TrafficCurrent,
        Status::Unknown,
        format!("{} not read", resource.plural()),
        expected,
    )
    .source(SourceRef::objects(resource, ns))
    .detail(format!(
        "listing {} was refused: {message}",
        resource.plural()
    ))
    .next(d.next_step())
}

fn service_name(service: &Service) -> &str {
    service.metadata.name.as_deref().unwrap_or("?")
}

/// The Service `name` of namespace `ns`, when the input holds it.
fn find_service<'a>(observed: &'a Observed, ns: &str, name: &str) -> Option<&'a Service> {
    observed.services.iter().map(|s| &**s).find(|s| {
        s.metadata.name.as_deref() == Some(name)
            && s.metadata.namespace.as_deref().unwrap_or(ns) == ns
    })
}

/// A Service's selector as `k=v,k=v` (`no selector` without one).
fn selector_text(service: &Service) -> String {
    match service.spec.as_ref().and_then(|s| s.selector.as_ref()) {
        Some(selector) if !selector.is_empty() => selector
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(","),
        _ => "no selector".to_string(),
    }
}

/// The Services of `w`'s namespace whose selector matches its pods or its template (see the
/// module doc).
fn selecting<'a>(observed: &'a Observed, w: &Workload, pods: &[&Pod]) -> Vec<&'a Service> {
    let template_labels = w.template.metadata.as_ref().and_then(|m| m.labels.as_ref());
    observed
        .services
        .iter()
        .map(|s| &**s)
        .filter(|s| s.metadata.namespace.as_deref().unwrap_or(w.namespace) == w.namespace)
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
        .collect()
}

/// A Service's selector (equality on every key) against `labels`.
pub(crate) fn selects<L: crate::selector::LabelMap + ?Sized>(
    selector: &BTreeMap<String, String>,
    labels: Option<&L>,
) -> bool {
    let Some(labels) = labels else {
        return false;
    };
    selector
        .iter()
        .all(|(k, v)| labels.label(k) == Some(v.as_str()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::kinds::argo_rollout::CanaryStatus;
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

    /// `observed` as a live gather would hold it in `ns`.
    fn listed_in(mut observed: Observed, ns: &str) -> Observed {
        for kind in [
            ResourceKind::Pod,
            ResourceKind::ReplicaSet,
            ResourceKind::Service,
            ResourceKind::EndpointSlice,
        ] {
            observed.mark_complete(ns, kind);
        }
        observed
    }

    /// The traffic_current of Rollout shop/checkout.
    fn rollout_traffic(observed: &Observed) -> Evidence {
        let target = Target::new(TargetKind::Rollout, Some("shop"), "checkout");
        let report = crate::judge(observed, &Change::default(), &[target], "shop");
        report
            .targets
            .iter()
            .flat_map(|t| &t.evidence)
            .find(|e| e.check == Check::TrafficCurrent)
            .cloned()
            .expect("traffic_current")
    }

    fn edit_rollout(observed: &mut Observed, edit: impl Fn(&mut crate::Rollout)) {
        edit(Arc::make_mut(
            &mut observed.workloads.of_mut::<crate::Rollout>()[0],
        ));
    }

    fn weights(observed: &mut Observed, stable: i32, canary: i32, additional: &[(i32, &str)]) {
        use crate::kinds::argo_rollout::{TrafficWeights, WeightDestination};
        let to = |weight: i32, hash: &str| WeightDestination {
            weight,
            pod_template_hash: hash.into(),
            service_name: String::new(),
        };
        let w = TrafficWeights {
            stable: to(stable, NEW_HASH),
            canary: to(canary, NEW_HASH),
            additional: additional.iter().map(|(w, h)| to(*w, h)).collect(),
        };
        edit_rollout(observed, |r| {
            r.status
                .as_mut()
                .and_then(|s| s.canary.as_mut())
                .expect("canary status")
                .weights = Some(w.clone());
        });
    }

    const NEW_HASH: &str = "7b9f4d6c8";
    const OLD_HASH: &str = "5c6d7f8b9";

    /// A blue-green whose status says the new hash is active while its active Service still
    /// selects the old one fails, naming the Service and the old pods: the Service routes, not
    /// the status.
    #[test]
    fn an_active_service_on_the_old_hash_fails_whatever_the_status_says() {
        let story = story("argo-rollout-bluegreen-active-service-selects-old-hash");
        for observed in [story.clone(), listed_in(story, "shop")] {
            let e = rollout_traffic(&observed);
            assert_eq!(e.status, Status::Fail, "{e:#?}");
            for pod in ["ax0q", "bx1q", "cx2q"] {
                assert!(
                    e.observed.contains(&format!(
                        "Service checkout-active → pod checkout-5c6d7f8b9-{pod} (old revision 5c6d7f8b9"
                    )),
                    "{}",
                    e.observed
                );
            }
            assert!(!e.observed.contains("checkout-preview"), "{}", e.observed);
            assert!(
                e.detail.contains(
                    "Service checkout-active, its activeService, selects app=checkout,rollouts-pod-template-hash=5c6d7f8b9"
                ) && e.detail.contains("status.blueGreen.activeSelector names only the current revision"),
                "{}",
                e.detail
            );
        }
    }

    #[test]
    fn a_stable_service_on_the_old_hash_fails() {
        let e = rollout_traffic(&story(
            "argo-rollout-canary-stable-service-selects-old-hash",
        ));
        assert_eq!(e.status, Status::Fail, "{e:#?}");
        assert!(
            e.observed.starts_with(
                "Service checkout-stable → pod checkout-5c6d7f8b9-ax0q (old revision 5c6d7f8b9"
            ),
            "{}",
            e.observed
        );
    }

    /// The Services a Rollout names, on the current hash, pass with the weights; a Service
    /// outside it selecting every pod by `app=` still reaches the old pods idling under
    /// scaleDownDelaySeconds: that one fails.
    #[test]
    fn a_rollouts_services_and_one_outside_it_are_all_judged() {
        let mut observed = listed_in(story("argo-rollout-canary-promoted-old-pods-idle"), "shop");
        let e = rollout_traffic(&observed);
        assert_eq!(e.status, Status::Pass, "{e:#?}");
        assert_eq!(
            e.observed,
            "Service checkout-canary: 3 ready endpoint(s); Service checkout-stable: 3 ready endpoint(s); status.canary.weights: stable 100% to 7b9f4d6c8, canary 0% to 7b9f4d6c8 (total 100%), all current"
        );
        observed
            .add_value(
                serde_json::json!({"apiVersion": "v1", "kind": "Service",
                    "metadata": {"name": "checkout", "namespace": "shop"},
                    "spec": {"selector": {"app": "checkout"}}}),
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
                                   "targetRef": {"kind": "Pod", "name": "checkout-5c6d7f8b9-ax0q", "namespace": "shop"}}]}),
                "test",
            )
            .expect("a slice");
        let e = rollout_traffic(&observed);
        assert_eq!(e.status, Status::Fail, "{e:#?}");
        assert_eq!(
            e.observed,
            "Service checkout → pod checkout-5c6d7f8b9-ax0q (old revision 5c6d7f8b9, EndpointSlice checkout-x1)"
        );
    }

    /// A Service the Rollout names is read or the check cannot pass: absent from a dump it is
    /// unknown, absent from a full listing it fails, refused it is unknown.
    #[test]
    fn a_named_service_not_read_is_unknown_and_one_that_does_not_exist_fails() {
        let mut observed = story("argo-rollout-bluegreen-promoted-old-pods-idle");
        assert_eq!(rollout_traffic(&observed).status, Status::Pass);
        observed
            .services
            .retain(|s| s.metadata.name.as_deref() != Some("checkout-active"));
        let e = rollout_traffic(&observed);
        assert_eq!(e.status, Status::Unknown, "{e:#?}");
        assert_eq!(
            e.observed,
            "the input holds no Service checkout-active, which shop/Rollout/checkout names (spec.strategy.blueGreen.activeService)"
        );

        let mut listed = listed_in(observed.clone(), "shop");
        let e = rollout_traffic(&listed);
        assert_eq!(e.status, Status::Fail, "{e:#?}");
        assert_eq!(
            e.observed,
            "Service checkout-active (spec.strategy.blueGreen.activeService) does not exist"
        );
        assert_eq!(e.source_ref.kind, "Service");
        assert_eq!(e.source_ref.name, "checkout-active");

        listed.services.clear();
        listed
            .complete
            .remove(&("shop".to_string(), ResourceKind::Service));
        listed.denied.push(Denied {
            namespace: Some("shop".into()),
            resource: ResourceKind::Service,
            verb: "list".into(),
            message: "services is forbidden".into(),
        });
        assert_eq!(rollout_traffic(&listed).status, Status::Unknown);

        // Nothing at all in the dump but the Rollout and its pods: still not a skip.
        let mut bare = story("argo-rollout-bluegreen-promoted-old-pods-idle");
        bare.services.clear();
        bare.endpoint_slices.clear();
        assert_eq!(rollout_traffic(&bare).status, Status::Unknown);
    }

    /// Every weight counts (stable, canary, each additional destination), each is a share of
    /// 0–100, and together they make 100: a share on an old hash fails; a total other than
    /// 100, or a weight out of range, is unknown.
    #[test]
    fn the_weights_add_up_to_100_all_on_the_current_revision() {
        let base = listed_in(story("argo-rollout-canary-promoted-old-pods-idle"), "shop");
        let judged = |stable, canary, additional: &[(i32, &str)]| {
            let mut observed = base.clone();
            weights(&mut observed, stable, canary, additional);
            rollout_traffic(&observed)
        };
        assert_eq!(judged(100, 0, &[]).status, Status::Pass);
        assert_eq!(
            judged(60, 40, &[]).status,
            Status::Pass,
            "both on the new hash"
        );

        let e = judged(50, 0, &[(50, OLD_HASH)]);
        assert_eq!(e.status, Status::Fail, "{e:#?}");
        assert_eq!(
            e.observed,
            "status.canary.weights.additional[0]: 50% to 5c6d7f8b9, not the current revision 7b9f4d6c8"
        );
        assert_eq!(e.source_ref.kind, "Rollout");
        assert_eq!(e.source_ref.field, ".status.canary.weights");

        let e = judged(50, 0, &[]);
        assert_eq!(e.status, Status::Unknown, "{e:#?}");
        assert!(
            e.observed.contains("add up to 50%, not 100%"),
            "{}",
            e.observed
        );
        assert_eq!(
            judged(100, 0, &[(20, NEW_HASH)]).status,
            Status::Unknown,
            "120%"
        );
        let e = judged(150, -50, &[]);
        assert_eq!(e.status, Status::Unknown, "{e:#?}");
        assert!(e.observed.contains("outside 0–100%"), "{}", e.observed);
        let e = judged(100, 0, &[(0, OLD_HASH)]);
        assert_eq!(
            e.status,
            Status::Pass,
            "a 0% destination carries nothing: {e:#?}"
        );
        let e = judged(50, 0, &[(50, "")]);
        assert_eq!(e.status, Status::Unknown, "{e:#?}");
        assert!(
            e.observed.contains("to no recorded revision"),
            "{}",
            e.observed
        );
    }

    const PING_PONG: &str = "argo-rollout-canary-pingpong-promoted-old-pods-idle";

    fn edit_canary_status(observed: &mut Observed, edit: impl Fn(&mut CanaryStatus)) {
        edit_rollout(observed, |r| {
            edit(
                r.status
                    .as_mut()
                    .and_then(|s| s.canary.as_mut())
                    .expect("canary status"),
            )
        });
    }

    /// A ping-pong canary after its promotion: the ALB sends everything to the stable side
    /// (`stablePingPong`), and the other side, still selecting the old hash until the next
    /// rollout, gets 0% — its old pods idle under scaleDownDelaySeconds serve nothing. Judged
    /// by what the router routes to: the stable side's endpoints are all current, the idle
    /// side is shown, not held.
    #[test]
    fn a_ping_pong_canary_is_judged_by_the_side_the_router_sends_to() {
        let story = story(PING_PONG);
        for observed in [story.clone(), listed_in(story.clone(), "shop")] {
            let e = rollout_traffic(&observed);
            assert_eq!(e.status, Status::Pass, "{e:#?}");
            assert!(
                e.observed.starts_with("Service checkout-ping: 3 ready endpoint(s); status.canary.weights: stable 100% to 7b9f4d6c8 (Service checkout-ping), canary 0% to 7b9f4d6c8 (Service checkout-pong) (total 100%), all current; Service checkout-pong (app=checkout,rollouts-pod-template-hash=5c6d7f8b9) gets no traffic"),
                "{}",
                e.observed
            );
        }

        // The side selecting the old hash is the stable one: the router sends it everything.
        let mut flipped = story.clone();
        edit_canary_status(&mut flipped, |c| c.stable_ping_pong = Some("pong".into()));
        let e = rollout_traffic(&flipped);
        assert_eq!(e.status, Status::Fail, "{e:#?}");
        assert!(
            e.observed.starts_with(
                "Service checkout-pong → pod checkout-5c6d7f8b9-ax0q (old revision 5c6d7f8b9"
            ),
            "{}",
            e.observed
        );
        assert!(
            e.detail
                .contains("Service checkout-pong, its pongService, selects"),
            "{}",
            e.detail
        );

        // The canary side carrying a share routes to its old pods.
        let mut shifting = story.clone();
        edit_canary_status(&mut shifting, |c| {
            let w = c.weights.as_mut().expect("weights");
            w.canary.weight = 30;
            w.stable.weight = 70;
        });
        assert_eq!(rollout_traffic(&shifting).status, Status::Fail);

        // Which side is stable, or what the router gives the canary side, not recorded: the
        // old pods behind pong may or may not get traffic — unknown, never a fail.
        let mut unsaid = story.clone();
        edit_canary_status(&mut unsaid, |c| c.stable_ping_pong = None);
        let e = rollout_traffic(&unsaid);
        assert_eq!(e.status, Status::Unknown, "{e:#?}");
        assert!(
            e.observed.contains("stablePingPong does not say"),
            "{}",
            e.observed
        );
        let mut unweighed = story.clone();
        edit_canary_status(&mut unweighed, |c| c.weights = None);
        assert_eq!(rollout_traffic(&unweighed).status, Status::Unknown);

        // Ping and pong are Services the Rollout names: not read is unknown, absent fails.
        let mut dump = story;
        dump.services
            .retain(|s| s.metadata.name.as_deref() != Some("checkout-ping"));
        assert_eq!(rollout_traffic(&dump).status, Status::Unknown);
        let e = rollout_traffic(&listed_in(dump, "shop"));
        assert_eq!(e.status, Status::Fail, "{e:#?}");
        assert_eq!(
            e.observed,
            "Service checkout-ping (spec.strategy.canary.pingPong.pingService) does not exist"
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
