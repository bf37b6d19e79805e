//! What ships `liveproof controller` and what consumes its Verifications, each checked with the
//! real tool where one is here:
//!
//! - `deploy/controller.yaml`: its ClusterRole is exactly the read-only role of
//!   `deploy/rbac-readonly.yaml` plus the controller's own rules (a drift fails, printing the
//!   difference); the Deployment is locked down; the real API server takes the file (after the
//!   Verification CRD) and its ServiceAccount may do what the controller does and no more.
//! - `charts/liveproof`: `helm lint --strict` with the real Helm 3 and Helm 4, `helm template`
//!   renders deploy/controller.yaml's objects for the default values (labels and the Namespace
//!   aside: the RBAC rules and the pod's security settings compared field by field), its CRD is
//!   byte-identical to deploy's, its values schema refuses what it should.
//! - `deploy/integrations/`: the Argo CD health Lua run by the real `argocd`'s own evaluator on
//!   statuses `status_from` writes; the Kargo AnalysisTemplate dry-run on the real API server
//!   with the real AnalysisTemplate CRD; the OCM feedback paths walked in the CRD's schema; the
//!   Prometheus rules' metric names held to the controller's.
//!
//! A missing peer fails these tests with the command that builds it; they never skip.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use liveproof::controller::{status_from, status_refused, Refusal, RefusalReason};
use liveproof_testkit::e2e::control_plane::repo_root;
use liveproof_testkit::e2e::{ControlPlane, Peers};
use serde_json::{json, Value};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const IMAGE: &str = "ghcr.io/liveproof/liveproof";

fn read(path: &str) -> String {
    let full = repo_root().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// Every document of a (multi-document) YAML text, as JSON values.
fn documents(text: &str) -> Vec<Value> {
    serde_norway::Deserializer::from_str(text)
        .map(|doc| {
            let v: serde_norway::Value =
                serde::Deserialize::deserialize(doc).expect("the YAML parses");
            serde_json::to_value(v).expect("YAML as JSON")
        })
        .filter(|v| !v.is_null())
        .collect()
}

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} among {docs:#?}"))
}

fn only<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    let of: Vec<&Value> = docs.iter().filter(|d| d["kind"] == kind).collect();
    assert_eq!(of.len(), 1, "one {kind}: {of:#?}");
    of[0]
}

/// A role's rules as (apiGroup, resource, verb) grants, each rule spelled out.
fn grants(rules: &Value) -> BTreeSet<(String, String, String)> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap_or_else(|| panic!("a list: {v}"))
            .iter()
            .map(|s| s.as_str().expect("a string").to_string())
            .collect()
    };
    let mut out = BTreeSet::new();
    for rule in rules.as_array().expect("rules") {
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    assert!(
                        out.insert((group.clone(), resource.clone(), verb)),
                        "a grant given twice: {rule}"
                    );
                }
            }
        }
    }
    out
}

/// The controller's own grants, beyond what verify reads.
fn controller_extras() -> BTreeSet<(String, String, String)> {
    [
        ("liveproof.dev", "verifications", "get"),
        ("liveproof.dev", "verifications", "list"),
        ("liveproof.dev", "verifications", "watch"),
        ("liveproof.dev", "verifications/status", "patch"),
        ("liveproof.dev", "verifications/status", "update"),
        ("", "events", "create"),
        ("", "events", "patch"),
        ("events.k8s.io", "events", "create"),
        ("events.k8s.io", "events", "patch"),
    ]
    .into_iter()
    .map(|(g, r, v)| (g.to_string(), r.to_string(), v.to_string()))
    .collect()
}

fn read_only_rules() -> Value {
    let docs = documents(&read("deploy/rbac-readonly.yaml"));
    find(&docs, "ClusterRole", "liveproof-verify")["rules"].clone()
}

/// `ours` must be exactly `want`; the difference is printed when not.
fn assert_grants(
    what: &str,
    ours: &BTreeSet<(String, String, String)>,
    want: &BTreeSet<(String, String, String)>,
) {
    let missing: Vec<_> = want.difference(ours).collect();
    let extra: Vec<_> = ours.difference(want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what} drifted from deploy/rbac-readonly.yaml plus the controller's own rules\n\
         missing (apiGroup, resource, verb): {missing:#?}\nnot expected: {extra:#?}"
    );
}

/// The ClusterRole is the read-only role's rules, rule for rule and in order (so its comments
/// stay next to the same rules), then the controller's extras; the Lease is a namespaced Role.
#[test]
fn the_controller_role_is_the_read_only_role_plus_its_own() {
    let docs = documents(&read("deploy/controller.yaml"));
    let role = find(&docs, "ClusterRole", "liveproof-controller");
    let read_only = read_only_rules();
    let mut want = grants(&read_only);
    want.extend(controller_extras());
    assert_grants(
        "deploy/controller.yaml's ClusterRole",
        &grants(&role["rules"]),
        &want,
    );
    let rules = role["rules"].as_array().expect("rules");
    let read_only = read_only.as_array().expect("rules");
    assert_eq!(
        &rules[..read_only.len()],
        &read_only[..],
        "the read-only role's rules come first, unchanged"
    );

    let lease = find(&docs, "Role", "liveproof-controller-leader-election");
    assert_eq!(lease["metadata"]["namespace"], "liveproof");
    let want: BTreeSet<_> = ["get", "create", "update", "patch"]
        .into_iter()
        .map(|v| {
            (
                "coordination.k8s.io".to_string(),
                "leases".to_string(),
                v.to_string(),
            )
        })
        .collect();
    assert_grants("the leader-election Role", &grants(&lease["rules"]), &want);

    // Both are bound to the Deployment's ServiceAccount.
    let deployment = only(&docs, "Deployment");
    let sa = deployment["spec"]["template"]["spec"]["serviceAccountName"].clone();
    for (kind, name, role_kind) in [
        ("ClusterRoleBinding", "liveproof-controller", "ClusterRole"),
        (
            "RoleBinding",
            "liveproof-controller-leader-election",
            "Role",
        ),
    ] {
        let binding = find(&docs, kind, name);
        assert_eq!(binding["roleRef"]["kind"], role_kind, "{binding}");
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": sa, "namespace": "liveproof"}]),
        );
    }
}

/// The drift check above fails on a drifted role, and says what drifted.
#[test]
fn a_drifted_controller_role_is_named() {
    let docs = documents(&read("deploy/controller.yaml"));
    let mut rules = find(&docs, "ClusterRole", "liveproof-controller")["rules"].clone();
    rules.as_array_mut().expect("rules").push(json!(
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["patch"]}
    ));
    let mut want = grants(&read_only_rules());
    want.extend(controller_extras());
    let ours = grants(&rules);
    let failed = std::panic::catch_unwind(|| assert_grants("the role", &ours, &want))
        .expect_err("a write on Deployments is drift");
    let said = failed.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        said.contains("\"deployments\"") && said.contains("\"patch\""),
        "{said}"
    );
}

/// What the pod must be, whatever renders it (deploy/controller.yaml or the chart).
fn assert_locked_down(deployment: &Value) {
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true, "{pod:#}");
    assert_eq!(pod["securityContext"]["runAsUser"], 65532);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let containers = pod["containers"].as_array().expect("containers");
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    assert_eq!(c["image"], format!("{IMAGE}:{VERSION}"));
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(c["securityContext"]["capabilities"]["drop"], json!(["ALL"]));
    assert!(
        c["securityContext"]["privileged"].is_null() || c["securityContext"]["privileged"] == false
    );
    let args = c["args"].as_array().expect("args");
    assert_eq!(args[..2], [json!("controller"), json!("--leader-elect")]);
    assert_eq!(
        c["env"],
        json!([{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}])
    );
    assert_eq!(
        c["ports"],
        json!([{"name": "metrics", "containerPort": 8080, "protocol": "TCP"}])
    );
    assert_eq!(
        c["livenessProbe"]["httpGet"],
        json!({"path": "/healthz", "port": "metrics"})
    );
    assert_eq!(
        c["readinessProbe"]["httpGet"],
        json!({"path": "/readyz", "port": "metrics"})
    );
    assert!(c["resources"]["requests"]["memory"].is_string(), "{c:#}");
    assert!(c["resources"]["limits"]["memory"].is_string(), "{c:#}");
}

#[test]
fn the_controller_deployment_is_locked_down() {
    let docs = documents(&read("deploy/controller.yaml"));
    assert_locked_down(only(&docs, "Deployment"));
    // The Service selects the Deployment's pods, on the metrics port.
    let deployment = only(&docs, "Deployment");
    let service = only(&docs, "Service");
    let labels = &deployment["spec"]["template"]["metadata"]["labels"];
    for (key, value) in service["spec"]["selector"].as_object().expect("a selector") {
        assert_eq!(&labels[key], value, "{service:#}");
    }
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "metrics");
}

fn kubectl(plane: &ControlPlane, args: &[&str], stdin: Option<&str>) -> String {
    liveproof_testkit::kubectl::run(&plane.kubeconfig, args, stdin)
}

fn can_i(plane: &ControlPlane, question: &[&str], sa: &str) -> String {
    let out = std::process::Command::new(liveproof_testkit::kubectl::kubectl_path())
        .arg("--kubeconfig")
        .arg(&plane.kubeconfig)
        .args(["auth", "can-i"])
        .args(question)
        .args(["--as", sa])
        .output()
        .expect("kubectl runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// deploy/controller.yaml, the chart's rendering and the Kargo template on the real API server:
/// applied (the CRD first), and the controller's ServiceAccount may do exactly its job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_api_server_takes_the_controller_the_chart_and_the_kargo_template() {
    let peers = Peers::locate().unwrap_or_else(|e| panic!("{e:#}"));
    let plane = ControlPlane::start()
        .await
        .unwrap_or_else(|e| panic!("the real control plane: {e:#}"));
    let crd = repo_root().join("deploy/verification-crd.yaml");
    let analysis = peers.path("analysis-template-crd.yaml");
    assert!(
        analysis.is_file(),
        "{} is missing\nhint: cargo xtask peers",
        analysis.display()
    );
    for file in [&crd, &analysis] {
        kubectl(
            &plane,
            &[
                "apply",
                "--server-side",
                "-f",
                file.to_str().expect("utf-8"),
            ],
            None,
        );
    }
    kubectl(
        &plane,
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/verifications.liveproof.dev",
            "crd/analysistemplates.argoproj.io",
        ],
        None,
    );
    let text = read("deploy/controller.yaml");
    // A dry run creates no Namespace for the objects in it to go to: the Namespace first.
    kubectl(&plane, &["create", "namespace", "liveproof"], None);
    let out = kubectl(
        &plane,
        &["apply", "--dry-run=server", "-f", "-"],
        Some(&text),
    );
    assert!(
        out.contains("deployment.apps/liveproof-controller created (server dry run)"),
        "{out}"
    );
    let out = kubectl(&plane, &["apply", "-f", "-"], Some(&text));
    assert!(
        out.contains("clusterrole.rbac.authorization.k8s.io/liveproof-controller created"),
        "{out}"
    );
    assert!(
        out.contains("namespace/liveproof unchanged")
            || out.contains("namespace/liveproof configured"),
        "{out}"
    );

    let sa = "system:serviceaccount:liveproof:liveproof-controller";
    for (question, answer) in [
        (&["watch", "verifications.liveproof.dev", "-A"][..], "yes"),
        (
            &[
                "patch",
                "verifications.liveproof.dev",
                "--subresource=status",
                "-n",
                "apps",
            ][..],
            "yes",
        ),
        (
            &["patch", "verifications.liveproof.dev", "-n", "apps"][..],
            "no",
        ),
        (&["create", "events", "-n", "apps"][..], "yes"),
        (&["create", "events.events.k8s.io", "-n", "apps"][..], "yes"),
        (
            &["update", "leases.coordination.k8s.io", "-n", "liveproof"][..],
            "yes",
        ),
        (
            &["update", "leases.coordination.k8s.io", "-n", "kube-system"][..],
            "no",
        ),
        (&["list", "pods", "-A"][..], "yes"),
        (&["patch", "deployments", "-n", "apps"][..], "no"),
        (
            &["delete", "verifications.liveproof.dev", "-n", "apps"][..],
            "no",
        ),
    ] {
        assert_eq!(can_i(&plane, question, sa), answer, "can-i {question:?}");
    }

    // The chart's rendering, in another namespace and under another release name.
    kubectl(&plane, &["create", "namespace", "proof"], None);
    let rendered = helm(
        &peers,
        "helm",
        &["template", "ops", &chart_dir(), "-n", "proof"],
    );
    let out = kubectl(
        &plane,
        &["apply", "--dry-run=server", "-f", "-"],
        Some(&rendered),
    );
    assert!(
        out.contains("deployment.apps/ops-liveproof-controller created (server dry run)"),
        "{out}"
    );

    // The Kargo verification template, against the real AnalysisTemplate schema.
    kubectl(&plane, &["create", "namespace", "shop"], None);
    let out = kubectl(
        &plane,
        &["apply", "--dry-run=server", "-n", "shop", "-f", "-"],
        Some(&read("deploy/integrations/kargo/analysis-template.yaml")),
    );
    assert!(
        out.contains(
            "analysistemplate.argoproj.io/liveproof-verification created (server dry run)"
        ),
        "{out}"
    );

    // The job's own command, its arguments filled in as an AnalysisRun fills them, run with the
    // real kubectl: it fails while the Verification is unjudged, and passes once it is Ready.
    let template = documents(&read("deploy/integrations/kargo/analysis-template.yaml")).remove(0);
    let container = &template["spec"]["metrics"][0]["provider"]["job"]["spec"]["template"]["spec"]
        ["containers"][0];
    let args: Vec<String> = container["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| {
            a.as_str()
                .expect("a string")
                .replace("{{args.timeout}}", "3s")
                .replace("{{args.namespace}}", "shop")
                .replace("{{args.verification}}", "web-1-4")
        })
        .collect();
    kubectl(
        &plane,
        &["apply", "-f", "-"],
        Some("apiVersion: liveproof.dev/v1alpha1\nkind: Verification\nmetadata: {name: web-1-4, namespace: shop}\nspec: {targets: [deploy/web], since: \"2026-07-12T10:00:00Z\"}\n"),
    );
    let job = || {
        std::process::Command::new(liveproof_testkit::kubectl::kubectl_path())
            .arg("--kubeconfig")
            .arg(&plane.kubeconfig)
            .args(&args)
            .output()
            .expect("kubectl runs")
    };
    let unjudged = job();
    assert!(
        !unjudged.status.success(),
        "an unjudged Verification must not pass"
    );
    let live = status_from(&report("live", None), 1, jiff::Timestamp::now(), None);
    kubectl(
        &plane,
        &[
            "patch",
            "verification",
            "web-1-4",
            "-n",
            "shop",
            "--subresource=status",
            "--type=merge",
            "-p",
            &json!({"status": live}).to_string(),
        ],
        None,
    );
    let ready = job();
    assert!(
        ready.status.success(),
        "{}",
        String::from_utf8_lossy(&ready.stderr)
    );
}

// The chart

fn chart_dir() -> String {
    repo_root()
        .join("charts/liveproof")
        .to_str()
        .expect("utf-8")
        .to_string()
}

/// The real `helm` (Helm 4) or `helm3`, which must succeed.
fn helm(peers: &Peers, which: &str, args: &[&str]) -> String {
    let out = helm_run(peers, which, args);
    assert!(
        out.status.success(),
        "{which} {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn helm_run(peers: &Peers, which: &str, args: &[&str]) -> std::process::Output {
    let home = tempfile::tempdir().expect("a temp dir");
    std::process::Command::new(peers.path(which))
        .args(args)
        .env("HELM_CACHE_HOME", home.path().join("cache"))
        .env("HELM_CONFIG_HOME", home.path().join("config"))
        .env("HELM_DATA_HOME", home.path().join("data"))
        .output()
        .unwrap_or_else(|e| panic!("{which}: {e}"))
}

#[test]
fn the_chart_holds_the_crd_byte_for_byte() {
    assert!(
        read("charts/liveproof/crds/verification-crd.yaml") == read("deploy/verification-crd.yaml"),
        "charts/liveproof/crds/verification-crd.yaml differs from deploy/verification-crd.yaml\n\
         hint: cp deploy/verification-crd.yaml charts/liveproof/crds/"
    );
    let chart = documents(&read("charts/liveproof/Chart.yaml")).remove(0);
    assert_eq!(chart["version"], VERSION);
    assert_eq!(chart["appVersion"], VERSION);
    let values = documents(&read("charts/liveproof/values.yaml")).remove(0);
    assert_eq!(values["image"]["repository"], IMAGE);
}

#[test]
fn helm_lint_passes_strict_with_helm_3_and_4() {
    let peers = Peers::locate().unwrap_or_else(|e| panic!("{e:#}"));
    for which in ["helm", "helm3"] {
        let out = helm(&peers, which, &["lint", "--strict", &chart_dir()]);
        assert!(out.contains("0 chart(s) failed"), "{which}: {out}");
    }
}

/// Labels and names a chart must have aside (and the Namespace, which a chart leaves to
/// `--create-namespace`), `helm template` with default values renders deploy/controller.yaml's
/// objects: the same kinds and names for a release named liveproof, the same RBAC rules, the
/// same pod and container settings.
#[test]
fn helm_template_renders_the_controller_yaml_objects() {
    let peers = Peers::locate().unwrap_or_else(|e| panic!("{e:#}"));
    let ours = documents(&read("deploy/controller.yaml"));
    for which in ["helm", "helm3"] {
        let rendered = documents(&helm(
            &peers,
            which,
            &["template", "liveproof", &chart_dir(), "-n", "liveproof"],
        ));
        let names = |docs: &[Value]| -> BTreeSet<(String, String, String)> {
            docs.iter()
                .map(|d| {
                    (
                        d["kind"].as_str().unwrap_or_default().to_string(),
                        d["metadata"]["namespace"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        d["metadata"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                    )
                })
                .collect()
        };
        let mut want = names(&ours);
        want.remove(&("Namespace".into(), String::new(), "liveproof".into()));
        assert_eq!(names(&rendered), want, "{which}");

        for (kind, name) in [
            ("ClusterRole", "liveproof-controller"),
            ("Role", "liveproof-controller-leader-election"),
        ] {
            assert_eq!(
                find(&rendered, kind, name)["rules"],
                find(&ours, kind, name)["rules"],
                "{which}: {kind} {name}"
            );
        }
        for (kind, name) in [
            ("ClusterRoleBinding", "liveproof-controller"),
            ("RoleBinding", "liveproof-controller-leader-election"),
        ] {
            let (a, b) = (find(&rendered, kind, name), find(&ours, kind, name));
            assert_eq!(a["roleRef"], b["roleRef"], "{which}: {kind} {name}");
            assert_eq!(a["subjects"], b["subjects"], "{which}: {kind} {name}");
        }
        let (a, b) = (only(&rendered, "Deployment"), only(&ours, "Deployment"));
        assert_locked_down(a);
        assert_eq!(a["spec"]["replicas"], b["spec"]["replicas"], "{which}");
        let (pa, pb) = (
            &a["spec"]["template"]["spec"],
            &b["spec"]["template"]["spec"],
        );
        for field in ["securityContext", "serviceAccountName"] {
            assert_eq!(pa[field], pb[field], "{which}: pod {field}");
        }
        let (ca, cb) = (&pa["containers"][0], &pb["containers"][0]);
        for field in [
            "name",
            "image",
            "imagePullPolicy",
            "args",
            "env",
            "ports",
            "livenessProbe",
            "readinessProbe",
            "resources",
            "securityContext",
        ] {
            assert_eq!(ca[field], cb[field], "{which}: container {field}");
        }
        let (sa, sb) = (only(&rendered, "Service"), only(&ours, "Service"));
        assert_eq!(sa["spec"]["ports"], sb["spec"]["ports"], "{which}");
        // The Service still selects the pods.
        let labels = &a["spec"]["template"]["metadata"]["labels"];
        for (key, value) in sa["spec"]["selector"].as_object().expect("a selector") {
            assert_eq!(&labels[key], value, "{which}");
        }
    }
}

/// The values that change what is rendered: one namespace, no leader election, another port;
/// and the schema refuses what no controller could run with.
#[test]
fn helm_values_scope_the_controller_and_the_schema_refuses_bad_ones() {
    let peers = Peers::locate().unwrap_or_else(|e| panic!("{e:#}"));
    let dir = chart_dir();
    let docs = documents(&helm(
        &peers,
        "helm",
        &[
            "template",
            "liveproof",
            &dir,
            "-n",
            "liveproof",
            "--set",
            "watchNamespace=apps",
            "--set",
            "leaderElection.enabled=false",
            "--set",
            "replicaCount=1",
            "--set",
            "metrics.port=9090",
        ],
    ));
    let c = &only(&docs, "Deployment")["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        c["args"],
        json!([
            "controller",
            "-n",
            "apps",
            "--metrics-address",
            "0.0.0.0:9090"
        ])
    );
    assert_eq!(c["ports"][0]["containerPort"], 9090);
    assert!(docs
        .iter()
        .all(|d| d["kind"] != "ClusterRoleBinding" && d["kind"] != "Role"));
    let binding = only(&docs, "RoleBinding");
    assert_eq!(binding["metadata"]["namespace"], "apps");
    assert_eq!(binding["roleRef"]["kind"], "ClusterRole");

    for bad in [
        "replicaCount=0",
        "metrics.port=0",
        "watchNamespace=Not_A_Namespace",
        "imag.tag=x",
    ] {
        let out = helm_run(
            &peers,
            "helm",
            &["template", "liveproof", &dir, "--set", bad],
        );
        assert!(!out.status.success(), "--set {bad} must be refused");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("values don't meet the specifications of the schema"),
            "{bad}: {said}"
        );
    }
}

// Integrations

/// A Verification of generation 2 with `status`.
fn verification(status: Value) -> Value {
    json!({
        "apiVersion": "liveproof.dev/v1alpha1",
        "kind": "Verification",
        "metadata": {"name": "web-1-4", "namespace": "apps", "generation": 2},
        "spec": {"targets": ["deploy/web"], "since": "2026-07-12T10:00:00Z"},
        "status": status,
    })
}

/// A report as `verify -o json --wait` writes it for deployment apps/web.
fn report(verdict: &str, wait: Option<Value>) -> liveproof_evidence::Report {
    let mut report = json!({
        "schema": "liveproof/v1", "verdict": verdict, "change": {},
        "targets": [{
            "kind": "Deployment", "namespace": "apps", "name": "web", "verdict": verdict,
            "evidence": [{
                "check": "pods_current", "status": if verdict == "live" { "pass" } else { "fail" },
                "observed": "o", "expected": "e", "source": "apps/Pod/web-1 .metadata.labels",
                "detail": if verdict == "live" { "3 pods of revision 4 serve" } else { "2 pods of an old revision serve" },
                "source_ref": {"apiVersion": "v1", "kind": "Pod", "namespace": "apps",
                               "name": "web-1", "field": ".metadata.labels"},
            }],
        }],
    });
    if verdict == "live" {
        report["targets"][0]["live_since"] = json!("2026-07-12T10:03:10Z");
    }
    if let Some(wait) = wait {
        report["wait"] = wait;
    }
    serde_json::from_value(report).expect("a report")
}

/// `argocd admin settings resource-overrides health` (the real Argo CD's Lua evaluator, with
/// the argocd-cm of deploy/integrations/argocd) on `object`: (status, message).
fn argocd_health(peers: &Peers, object: &Value) -> (String, String) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("verification.json");
    std::fs::write(&file, object.to_string()).expect("written");
    let cm = repo_root().join("deploy/integrations/argocd/argocd-cm.yaml");
    let out = std::process::Command::new(peers.path("argocd"))
        .args(["admin", "settings", "resource-overrides", "health"])
        .arg(&file)
        .arg("--argocd-cm-path")
        .arg(&cm)
        .env("HOME", dir.path())
        .output()
        .expect("argocd runs");
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let field = |name: &str| {
        said.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {said}"))
            .trim()
            .to_string()
    };
    (field("STATUS:"), field("MESSAGE:"))
}

#[test]
fn the_argocd_health_check_follows_the_conditions() {
    let peers = Peers::locate().unwrap_or_else(|e| panic!("{e:#}"));
    // The snippet and the standalone script are one script.
    let cm = documents(&read("deploy/integrations/argocd/argocd-cm.yaml")).remove(0);
    assert_eq!(
        cm["data"]["resource.customizations.health.liveproof.dev_Verification"],
        read("deploy/integrations/argocd/health.lua"),
    );
    let now: jiff::Timestamp = "2026-07-12T10:05:00Z".parse().expect("a time");
    let to_json =
        |s: &liveproof::controller::VerificationStatus| serde_json::to_value(s).expect("JSON");

    // Not judged yet (the CRD's default status), or judged for the previous generation.
    let (status, _) = argocd_health(&peers, &verification(json!({"observedGeneration": 0})));
    assert_eq!(status, "Progressing");
    let live = status_from(&report("live", None), 1, now, None);
    let (status, _) = argocd_health(&peers, &verification(to_json(&live)));
    assert_eq!(
        status, "Progressing",
        "live for generation 1 says nothing of generation 2"
    );

    // Waiting (Reconciling), with the reason from the Ready condition.
    let waiting = status_from(&report("not_live", None), 2, now, None);
    let (status, message) = argocd_health(&peers, &verification(to_json(&waiting)));
    assert_eq!(status, "Progressing");
    assert!(
        message.contains("2 pods of an old revision serve"),
        "{message}"
    );

    // Live.
    let live = status_from(&report("live", None), 2, now, Some(&waiting));
    let (status, _) = argocd_health(&peers, &verification(to_json(&live)));
    assert_eq!(status, "Healthy");

    // No longer live after a rollout undo: back to Progressing.
    let undone = status_from(&report("not_live", None), 2, now, Some(&live));
    let (status, _) = argocd_health(&peers, &verification(to_json(&undone)));
    assert_eq!(status, "Progressing");

    // Final failures: Degraded, with Stalled's message.
    let refused = status_refused(
        &Refusal {
            reason: RefusalReason::InvalidSpec,
            message: "--image `web:` is not an image reference: empty tag".into(),
            hint: None,
        },
        2,
        now,
        None,
    );
    let (status, message) = argocd_health(&peers, &verification(to_json(&refused)));
    assert_eq!(status, "Degraded");
    assert!(message.contains("not an image reference"), "{message}");
    let not_found = status_refused(
        &Refusal {
            reason: RefusalReason::TargetNotFound { timed_out: true },
            message: "deployment web not found in namespace apps".into(),
            hint: None,
        },
        2,
        now,
        None,
    );
    let (status, message) = argocd_health(&peers, &verification(to_json(&not_found)));
    assert_eq!(status, "Degraded");
    assert!(message.contains("not found"), "{message}");
}

/// The CRD's schema of `.status`, walked by a simple JSON path (`.a.b`, `.a[?(...)].b`).
fn schema_has(crd: &Value, path: &str) -> bool {
    let mut at = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let cleaned = path
        .trim_start_matches('.')
        .split('.')
        .map(|p| p.split('[').next().unwrap_or_default())
        .filter(|p| !p.is_empty() && !p.contains('"') && !p.contains(')'))
        .collect::<Vec<_>>();
    for part in cleaned {
        let next = if at["type"] == "array" {
            &at["items"]["properties"][part]
        } else {
            &at["properties"][part]
        };
        if next.is_null() {
            return false;
        }
        at = next;
    }
    true
}

#[test]
fn the_ocm_feedback_paths_name_fields_of_the_verification_status() {
    let crd = documents(&read("deploy/verification-crd.yaml")).remove(0);
    let work = documents(&read("deploy/integrations/ocm/manifestwork.yaml")).remove(0);
    assert_eq!(work["apiVersion"], "work.open-cluster-management.io/v1");
    assert_eq!(work["kind"], "ManifestWork");
    // The manifest it places is a Verification whose spec the CLI's own rules accept.
    let placed = &work["spec"]["workload"]["manifests"][0];
    let object: liveproof::controller::Verification =
        serde_json::from_value(placed.clone()).expect("a Verification");
    object.request().expect("a valid spec");
    let config = &work["spec"]["manifestConfigs"][0];
    assert_eq!(
        config["resourceIdentifier"],
        json!({"group": "liveproof.dev", "resource": "verifications",
               "name": placed["metadata"]["name"], "namespace": placed["metadata"]["namespace"]})
    );
    let paths: Vec<&str> = config["feedbackRules"][0]["jsonPaths"]
        .as_array()
        .expect("jsonPaths")
        .iter()
        .map(|p| p["path"].as_str().expect("a path"))
        .collect();
    for need in [".status.verdict", ".status.conditions"] {
        assert!(paths.contains(&need), "{need} in {paths:?}");
    }
    for path in &paths {
        assert!(
            schema_has(&crd, path),
            "{path} is not in the Verification CRD's schema"
        );
    }
    assert!(
        !schema_has(&crd, ".status.verdicts"),
        "the walk tells a wrong path"
    );
}

/// Every metric the alert rules name is one the controller serves.
#[test]
fn the_prometheus_rules_name_only_the_controllers_metrics() {
    let served = [
        "liveproof_verification_verdict",
        "liveproof_verification_lead_time_seconds_bucket",
        "liveproof_verification_lead_time_seconds_sum",
        "liveproof_verification_lead_time_seconds_count",
        "liveproof_watch_errors_total",
        "liveproof_reconcile_errors_total",
    ];
    let rules = documents(&read("deploy/integrations/prometheus/liveproof-rules.yaml")).remove(0);
    let mut named = BTreeSet::new();
    let mut alerts = BTreeSet::new();
    for group in rules["groups"].as_array().expect("groups") {
        for rule in group["rules"].as_array().expect("rules") {
            let expr = rule["expr"].as_str().expect("an expr");
            let metrics = metric_names(expr);
            assert!(!metrics.is_empty(), "{expr} names no liveproof metric");
            for m in &metrics {
                assert!(
                    served.contains(&m.as_str()),
                    "{m} in `{expr}` is not a metric the controller serves"
                );
            }
            named.extend(metrics);
            if let Some(alert) = rule["alert"].as_str() {
                assert!(rule["labels"]["severity"].is_string(), "{alert}");
                assert!(rule["annotations"]["summary"].is_string(), "{alert}");
                alerts.insert(alert.to_string());
            } else {
                assert!(rule["record"].is_string(), "{rule}");
            }
        }
    }
    for m in [
        "liveproof_verification_verdict",
        "liveproof_watch_errors_total",
    ] {
        assert!(named.contains(m), "{m} has no rule");
    }
    assert!(alerts.contains("LiveproofVerificationNoLongerLive"));
}

/// The `liveproof_…` identifiers in a PromQL expression.
fn metric_names(expr: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while let Some(at) = expr[i..].find("liveproof_") {
        let start = i + at;
        let boundary = start == 0
            || !(bytes[start - 1].is_ascii_alphanumeric()
                || bytes[start - 1] == b'_'
                || bytes[start - 1] == b':');
        let end = expr[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .map_or(expr.len(), |e| start + e);
        if boundary {
            out.insert(expr[start..end].to_string());
        }
        i = end;
    }
    out
}

#[test]
fn every_integration_has_a_readme() {
    for dir in ["argocd", "kargo", "ocm", "prometheus"] {
        let path: PathBuf = repo_root()
            .join("deploy/integrations")
            .join(dir)
            .join("README.md");
        assert!(Path::new(&path).is_file(), "{}", path.display());
    }
}
