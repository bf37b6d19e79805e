//! The controller's `/metrics` (Prometheus text format), `/healthz` and `/readyz`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// Every verdict a status can carry, and `refused` for a status with none (spec refused,
/// target not found).
const VERDICTS: [&str; 5] = ["live", "not_live", "unproven", "superseded", "refused"];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct VerdictLabels {
    pub namespace: String,
    pub name: String,
    pub verdict: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub kind: String,
}

/// What the controller counts.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Mutex<Registry>>,
    /// `liveproof_verification_verdict{namespace,name,verdict}`: 1 for the verdict the
    /// status says, absent for the others.
    pub verdict: Family<VerdictLabels, Gauge>,
    /// `liveproof_verification_lead_time_seconds`: commit to live, observed when a
    /// Verification turns live and its status knows the lead time.
    pub lead_time: Histogram,
    pub reconciles: Counter,
    pub reconcile_errors: Counter,
    pub status_writes: Counter,
    pub watch_errors: Family<KindLabels, Counter>,
    pub watch_restarts: Family<KindLabels, Counter>,
    pub leader: Gauge,
    ready: Arc<AtomicBool>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("liveproof");
        let verdict = Family::<VerdictLabels, Gauge>::default();
        registry.register(
            "verification_verdict",
            "The verdict each Verification's status says (1), by namespace, name and verdict",
            verdict.clone(),
        );
        let lead_time = Histogram::new(exponential_buckets(15.0, 2.0, 12));
        registry.register(
            "verification_lead_time_seconds",
            "Seconds from the commit to live, observed as each Verification turns live",
            lead_time.clone(),
        );
        let reconciles = Counter::default();
        registry.register(
            "controller_reconciles",
            "Verifications judged",
            reconciles.clone(),
        );
        let reconcile_errors = Counter::default();
        registry.register(
            "controller_reconcile_errors",
            "Judgements that failed on a read or a write (retried)",
            reconcile_errors.clone(),
        );
        let status_writes = Counter::default();
        registry.register(
            "controller_status_writes",
            "Statuses written (only when they changed)",
            status_writes.clone(),
        );
        let watch_errors = Family::<KindLabels, Counter>::default();
        registry.register(
            "controller_watch_errors",
            "Errors of the shared watches, by kind (each retried with backoff)",
            watch_errors.clone(),
        );
        let watch_restarts = Family::<KindLabels, Counter>::default();
        registry.register(
            "controller_watch_restarts",
            "Times a shared watch listed its objects again (its start included), by kind",
            watch_restarts.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "controller_leader",
            "1 while this replica judges (holds the Lease, or runs without --leader-elect)",
            leader.clone(),
        );
        Metrics {
            registry: Arc::new(Mutex::new(registry)),
            verdict,
            lead_time,
            reconciles,
            reconcile_errors,
            status_writes,
            watch_errors,
            watch_restarts,
            leader,
            ready: Arc::default(),
        }
    }

    /// The verdict `namespace/name` has now (`None`: refused), the others removed.
    pub fn set_verdict(&self, namespace: &str, name: &str, verdict: Option<&str>) {
        let now = verdict.unwrap_or("refused");
        for v in VERDICTS {
            let labels = VerdictLabels {
                namespace: namespace.to_string(),
                name: name.to_string(),
                verdict: v.to_string(),
            };
            if v == now {
                self.verdict.get_or_create(&labels).set(1);
            } else {
                self.verdict.remove(&labels);
            }
        }
    }

    /// A Verification deleted: its series go.
    pub fn forget(&self, namespace: &str, name: &str) {
        for v in VERDICTS {
            self.verdict.remove(&VerdictLabels {
                namespace: namespace.to_string(),
                name: name.to_string(),
                verdict: v.to_string(),
            });
        }
    }

    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// The metrics in Prometheus' text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let registry = self.registry.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &registry) {
            tracing::warn!("the metrics could not be encoded: {e}");
        }
        out
    }

    /// The HTTP routes: /metrics, /healthz, /readyz.
    pub fn router(&self) -> axum::Router {
        use axum::http::StatusCode;
        use axum::routing::get;
        let metrics = self.clone();
        let ready = self.ready.clone();
        axum::Router::new()
            .route(
                "/metrics",
                get(move || {
                    let body = metrics.encode();
                    async move {
                        (
                            [(
                                axum::http::header::CONTENT_TYPE,
                                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                            )],
                            body,
                        )
                    }
                }),
            )
            .route("/healthz", get(|| async { "ok\n" }))
            .route(
                "/readyz",
                get(move || {
                    let ready = ready.load(Ordering::Acquire);
                    async move {
                        if ready {
                            (StatusCode::OK, "ok\n")
                        } else {
                            (StatusCode::SERVICE_UNAVAILABLE, "starting\n")
                        }
                    }
                }),
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verification_has_one_verdict_series_at_a_time() {
        let m = Metrics::new();
        m.set_verdict("apps", "web", Some("not_live"));
        m.set_verdict("apps", "web", Some("live"));
        m.lead_time.observe(120.0);
        let text = m.encode();
        assert!(
            text.contains(
                r#"liveproof_verification_verdict{namespace="apps",name="web",verdict="live"} 1"#
            ),
            "{text}"
        );
        assert!(!text.contains(r#"verdict="not_live""#), "{text}");
        assert!(
            text.contains("liveproof_verification_lead_time_seconds_count 1"),
            "{text}"
        );
        m.forget("apps", "web");
        assert!(!m.encode().contains(r#"name="web""#));
    }
}
