//! The read-only role in `deploy/rbac-readonly.yaml` is enough for `liveproof verify`, and exact.
//!
//! Real `liveproof verify` runs (one per kind of target, several with `--wait`, one with `-A`,
//! one that asks a registry about a `:latest` image with a pull secret) go against the
//! simulator; every request it recorded is mapped to `(verb, apiGroup, resource)` the way the
//! API server's authorizer does, and must be allowed by the ClusterRole `liveproof-verify`.
//! No write verb may ever be sent. Conversely, every `(verb, group, resource)` the role grants
//! must have been sent by one of these runs, or be listed in the role's
//! `liveproof.dev/used-by` annotation (a JSON map `"VERB RESOURCE[.GROUP]"` → the commands that
//! need it) — so the role can neither lack a permission nor keep one nobody uses.

use liveproof_testkit::binary as common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use liveproof_sim::{SimHandle, Simulator};
use serde_json::{json, Value};

const ROLE_FILE: &str = "deploy/rbac-readonly.yaml";
const RESTART_ROLE_FILE: &str = "deploy/rbac-restart.yaml";
const USED_BY: &str = "liveproof.dev/used-by";
const WRITE_VERBS: [&str; 6] = [
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "unknown",
];

/// One RBAC permission: `(verb, apiGroup, resource)`.
type Perm = (String, String, String);

fn perm(verb: &str, group: &str, resource: &str) -> Perm {
    (verb.to_string(), group.to_string(), resource.to_string())
}

/// `VERB RESOURCE[.GROUP]`, as the annotation (and `kubectl auth can-i`) spells a permission.
fn spell((verb, group, resource): &Perm) -> String {
    if group.is_empty() {
        format!("{verb} {resource}")
    } else {
        format!("{verb} {resource}.{group}")
    }
}

#[derive(Debug)]
struct Rule {
    groups: Vec<String>,
    resources: Vec<String>,
    verbs: Vec<String>,
}

impl Rule {
    fn allows(&self, (verb, group, resource): &Perm) -> bool {
        let any = |list: &[String], x: &str| list.iter().any(|v| v == x || v == "*");
        any(&self.verbs, verb) && any(&self.groups, group) && any(&self.resources, resource)
    }

    fn perms(&self) -> Vec<Perm> {
        let mut out = Vec::new();
        for g in &self.groups {
            for r in &self.resources {
                for v in &self.verbs {
                    out.push(perm(v, g, r));
                }
            }
        }
        out
    }
}

struct Role {
    rules: Vec<Rule>,
    /// `"VERB RESOURCE[.GROUP]"` → commands, from the used-by annotation.
    used_by: BTreeMap<String, Vec<String>>,
}

impl Role {
    fn allows(&self, p: &Perm) -> bool {
        self.rules.iter().any(|r| r.allows(p))
    }

    fn perms(&self) -> BTreeSet<Perm> {
        self.rules.iter().flat_map(Rule::perms).collect()
    }
}

fn strings(v: &Value, field: &str) -> Vec<String> {
    v.get(field)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().expect("a list of strings").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Every document of a multi-document YAML file.
fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_norway::Deserializer::from_str(&text)
        .map(|doc| {
            let v: serde_norway::Value = serde::Deserialize::deserialize(doc)
                .unwrap_or_else(|e| panic!("{path:?} does not parse: {e}"));
            serde_json::to_value(v).expect("YAML as JSON")
        })
        .filter(|v| !v.is_null())
        .collect()
}

fn cluster_role(path: &Path, name: &str) -> Role {
    role_of(path, "ClusterRole", name)
}

/// The `kind` (ClusterRole or Role) called `name` in the file at `path`.
fn role_of(path: &Path, kind: &str, name: &str) -> Role {
    let docs = documents(path);
    let role = docs
        .iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{path:?} has no {kind} {name}"));
    let rules = role["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| {
            assert!(
                r.get("nonResourceURLs").is_none() && r.get("resourceNames").is_none(),
                "keep the rules plain: {r}"
            );
            Rule {
                groups: strings(r, "apiGroups"),
                resources: strings(r, "resources"),
                verbs: strings(r, "verbs"),
            }
        })
        .collect();
    let used_by = match role["metadata"]["annotations"][USED_BY].as_str() {
        Some(text) => serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("{USED_BY} is not a JSON map of lists: {e}")),
        None => BTreeMap::new(),
    };
    Role { rules, used_by }
}

fn repo_file(path: &str) -> PathBuf {
    liveproof_testkit::story::repo_root().join(path)
}

/// What the authorizer sees in a request path: `Some((group, resource))` for a resource
/// request, `None` for a non-resource URL (which must then be discovery).
fn resource_of(path: &str) -> Option<(String, String)> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    // /api/v1/..., /apis/GROUP/VERSION/...
    let (group, rest) = match segs.as_slice() {
        ["api", _version, rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => return None,
    };
    // namespaces/NS/RESOURCE[/NAME[/SUB]] or RESOURCE[/NAME[/SUB]]
    let resource = match rest {
        [] => return None,
        ["namespaces", _ns, resource, tail @ ..] => tail
            .get(1)
            .map_or(resource.to_string(), |sub| format!("{resource}/{sub}")),
        [resource, tail @ ..] => tail
            .get(1)
            .map_or(resource.to_string(), |sub| format!("{resource}/{sub}")),
    };
    Some((group.to_string(), resource))
}

/// The non-resource URLs system:discovery grants (get): `/api`, `/api/v1`, `/apis`,
/// `/apis/GROUP`, `/apis/GROUP/VERSION`, `/version`, `/openapi/...`.
fn is_discovery(path: &str) -> bool {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    matches!(
        segs.as_slice(),
        ["api"]
            | ["api", _]
            | ["apis"]
            | ["apis", _]
            | ["apis", _, _]
            | ["version"]
            | ["openapi", ..]
    )
}

#[test]
fn paths_map_to_what_the_authorizer_checks() {
    let r = |p: &str| resource_of(p).map(|(g, r)| format!("{g}:{r}"));
    assert_eq!(r("/api/v1/namespaces/apps/pods").as_deref(), Some(":pods"));
    assert_eq!(r("/api/v1/nodes").as_deref(), Some(":nodes"));
    assert_eq!(
        r("/api/v1/namespaces/apps/secrets/regcred").as_deref(),
        Some(":secrets")
    );
    assert_eq!(
        r("/apis/apps/v1/namespaces/apps/deployments/api/status").as_deref(),
        Some("apps:deployments/status")
    );
    assert_eq!(
        r("/apis/apps/v1/deployments").as_deref(),
        Some("apps:deployments")
    );
    assert_eq!(r("/api/v1/namespaces").as_deref(), Some(":namespaces"));
    assert_eq!(r("/api/v1/namespaces/apps").as_deref(), Some(":namespaces"));
    for discovery in [
        "/api",
        "/api/v1",
        "/apis",
        "/apis/apps",
        "/apis/apps/v1",
        "/version",
    ] {
        assert_eq!(r(discovery), None, "{discovery}");
        assert!(is_discovery(discovery), "{discovery}");
    }
    assert!(!is_discovery("/api/v1/pods"));
}

/// A simulator serving a scenario's objects (with the Flux and Argo CD types installed, so
/// every request reaches its resource and is recorded with its real verb).
struct Sim {
    sim: SimHandle,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

async fn sim(objects: Vec<Value>, namespace: &str) -> Sim {
    let sim = Simulator::new()
        .with_objects(objects)
        .with_gitops_crds()
        .start()
        .await
        .expect("simulator starts");
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig, namespace)
        .expect("kubeconfig");
    Sim {
        sim,
        kubeconfig,
        _dir: dir,
    }
}

fn scenario_objects(story: &str) -> Vec<Value> {
    let path = liveproof_testkit::story::scenarios_dir()
        .join(story)
        .join("cluster.yaml");
    liveproof_gather::offline::read_objects(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// One `liveproof verify` run: a scenario (possibly edited), its arguments, the namespace
/// its kubeconfig defaults to.
struct Case {
    name: &'static str,
    objects: Vec<Value>,
    namespace: &'static str,
    args: Vec<&'static str>,
    /// Words stderr must hold when the run is a usage error (exit 2) on purpose.
    usage_error: Option<&'static str>,
}

fn case(
    name: &'static str,
    story: &'static str,
    namespace: &'static str,
    args: &[&'static str],
) -> Case {
    Case {
        name,
        objects: scenario_objects(story),
        namespace,
        args: args.to_vec(),
        usage_error: None,
    }
}

const SINCE: [&str; 2] = ["--since", "2026-07-12T10:00:00Z"];
const WAIT: [&str; 3] = ["--wait", "--timeout", "3s"];

/// Seed 001's `:latest` story, with its image moved to a registry on a closed loopback port
/// and its pods naming a pull Secret: verify then lists the nodes (for their platforms) and
/// GETs the pull Secret before asking the registry (which refuses: the check is `unknown`).
fn latest_tag_with_pull_secret() -> Vec<Value> {
    let text = serde_json::to_string(&scenario_objects(
        "latest-tag-rebuild-template-identical-pods-old",
    ))
    .expect("JSON");
    let mut objects: Vec<Value> =
        serde_json::from_str(&text.replace("registry.acme.dev", "127.0.0.1:9")).expect("JSON");
    for o in &mut objects {
        if o["kind"] == "Pod" {
            o["spec"]["imagePullSecrets"] = json!([{"name": "regcred"}]);
        }
    }
    objects.push(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "regcred", "namespace": "bots"},
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": "eyJhdXRocyI6e319"}
    }));
    objects.push(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-1", "labels": {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
        "status": {"nodeInfo": {"operatingSystem": "linux", "architecture": "amd64"}}
    }));
    objects
}

fn cases() -> Vec<Case> {
    let with = |base: &[&'static str], extra: &[&[&'static str]]| -> Vec<&'static str> {
        let mut v = base.to_vec();
        for e in extra {
            v.extend_from_slice(e);
        }
        v
    };
    vec![
        case(
            "deployment, live",
            "gitops-reconciled-new-tag-rolled-out",
            "apps",
            &with(
                &[
                    "deployment/inventory",
                    "-n",
                    "apps",
                    "--image",
                    "ghcr.io/acme/inventory:1.4.0",
                ],
                &[&SINCE],
            ),
        ),
        case(
            "deployment, --wait",
            "gitops-never-reconciled-template-on-old-tag",
            "apps",
            &with(
                &[
                    "deployment/inventory",
                    "-n",
                    "apps",
                    "--image",
                    "ghcr.io/acme/inventory:1.4.0",
                ],
                &[&SINCE, &WAIT],
            ),
        ),
        case(
            "deployment, -A",
            "two-targets-each-with-its-own-image",
            "default",
            &with(
                &["deployment/inventory", "deployment/billing", "-A"],
                &[&SINCE],
            ),
        ),
        case(
            "statefulset, --wait",
            "statefulset-partitioned-canary",
            "payments",
            &with(
                &[
                    "statefulset/ledger",
                    "-n",
                    "payments",
                    "--image",
                    "ghcr.io/acme/ledger:3.2.0",
                ],
                &[&SINCE, &WAIT],
            ),
        ),
        case(
            "daemonset, --wait",
            "daemonset-newest-revision-not-current-template",
            "observability",
            &with(
                &[
                    "daemonset/log-shipper",
                    "-n",
                    "observability",
                    "--image",
                    "ghcr.io/acme/log-shipper:2.1.0",
                ],
                &[&SINCE, &WAIT],
            ),
        ),
        case(
            "rollout, --wait",
            "argo-rollout-canary-paused-at-20-percent",
            "shop",
            &with(
                &[
                    "rollout/checkout",
                    "-n",
                    "shop",
                    "--image",
                    "ghcr.io/acme/checkout:2.4.0",
                ],
                &[&SINCE, &WAIT],
            ),
        ),
        case(
            "canary, --wait",
            "flagger-canary-analysis-at-20-percent",
            "test",
            &with(
                &[
                    "canary/podinfo",
                    "-n",
                    "test",
                    "--image",
                    "ghcr.io/stefanprodan/podinfo:6.5.1",
                ],
                &[&SINCE, &WAIT],
            ),
        ),
        case(
            "ksvc, --wait",
            "knative-service-split-80-20-old-revision",
            "web",
            &with(
                &[
                    "ksvc/hello",
                    "-n",
                    "web",
                    "--image",
                    "ghcr.io/acme/hello:1.1.0",
                ],
                &[&SINCE, &WAIT],
            ),
        ),
        case(
            "release in a Secret, --wait",
            "helm-upgrade-pending",
            "apps",
            &with(
                &[
                    "release/inventory",
                    "-n",
                    "apps",
                    "--chart-version",
                    "0.4.3",
                ],
                &[&SINCE, &WAIT],
            ),
        ),
        case(
            "release in a ConfigMap",
            "release-stored-in-configmap",
            "apps",
            &with(&["release/inventory", "-n", "apps"], &[&SINCE]),
        ),
        case(
            "helmrelease, --wait",
            "helmrelease-not-yet-observed",
            "apps",
            &with(&["helmrelease/inventory", "-n", "apps"], &[&SINCE, &WAIT]),
        ),
        case(
            "kustomization, --wait",
            "flux-kustomization-stale",
            "flux-system",
            &with(
                &[
                    "kustomization/apps",
                    "-n",
                    "flux-system",
                    "--commit",
                    "7453f92",
                ],
                &[&SINCE, &WAIT],
            ),
        ),
        case(
            "application, --wait",
            "argocd-synced-but-pods-old",
            "argocd",
            &with(
                &[
                    "application/inventory",
                    "-n",
                    "argocd",
                    "--commit",
                    "7453f92",
                ],
                &[&SINCE, &WAIT],
            ),
        ),
        Case {
            name: "a :latest image checked against its registry, with a pull secret",
            objects: latest_tag_with_pull_secret(),
            namespace: "bots",
            args: with(
                &[
                    "deployment/userbot-panel",
                    "-n",
                    "bots",
                    "--insecure-registry",
                    "127.0.0.1:9",
                ],
                &[&SINCE],
            ),
            usage_error: None,
        },
        // A namespace misspelt: verify GETs it, finds it absent, and LISTs the namespaces for
        // the did-you-mean (exit 2).
        Case {
            usage_error: Some("did you mean"),
            ..case(
                "a target in a namespace that does not exist",
                "gitops-reconciled-new-tag-rolled-out",
                "apps",
                &with(&["deployment/inventory", "-n", "aps"], &[&SINCE]),
            )
        },
    ]
}

/// What one run sent: `(verb, path)` pairs.
struct Sent {
    name: &'static str,
    usage_error: Option<&'static str>,
    code: i32,
    stderr: String,
    requests: Vec<(String, String)>,
}

async fn run(case: Case) -> Sent {
    let s = sim(case.objects, case.namespace).await;
    let mut args = vec!["verify"];
    args.extend(case.args.iter().copied());
    let kubeconfig = s.kubeconfig.to_str().expect("utf-8 path").to_string();
    args.extend(["--kubeconfig", &kubeconfig, "-o", "json"]);
    let out = common::liveproof().args(&args).run().await;
    let requests = s
        .sim
        .requests()
        .snapshot()
        .into_iter()
        .map(|(verb, path, _)| (verb, path))
        .collect();
    s.sim.shutdown().await;
    Sent {
        name: case.name,
        usage_error: case.usage_error,
        code: out.code,
        stderr: out.stderr,
        requests,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn verify_needs_exactly_the_read_only_role() {
    let role = cluster_role(&repo_file(ROLE_FILE), "liveproof-verify");
    let runs = futures::future::join_all(cases().into_iter().map(run)).await;

    let mut problems = Vec::new();
    let mut exercised: BTreeMap<Perm, BTreeSet<&str>> = BTreeMap::new();
    for sent in &runs {
        if let Some(words) = sent.usage_error {
            if sent.code != 2 || !sent.stderr.contains(words) {
                problems.push(format!(
                    "{}: verify exited {}, not 2 with `{words}`:\n{}",
                    sent.name, sent.code, sent.stderr
                ));
            }
        } else if !(0..=3).contains(&sent.code) || sent.code == 2 {
            problems.push(format!(
                "{}: verify exited {} (an error, not a verdict):\n{}",
                sent.name, sent.code, sent.stderr
            ));
        }
        if !sent.requests.iter().any(|(_, p)| resource_of(p).is_some()) {
            problems.push(format!("{}: no resource request was sent", sent.name));
        }
        for (verb, path) in &sent.requests {
            if WRITE_VERBS.contains(&verb.as_str()) {
                problems.push(format!("{}: a write was sent: {verb} {path}", sent.name));
                continue;
            }
            match resource_of(path) {
                Some((group, resource)) => {
                    let p = perm(verb, &group, &resource);
                    if !role.allows(&p) {
                        problems.push(format!(
                            "{}: {verb} {path} needs `{}`, which the role does not grant",
                            sent.name,
                            spell(&p)
                        ));
                    }
                    exercised.entry(p).or_default().insert(sent.name);
                }
                None if is_discovery(path) && verb == "get" => {}
                None => problems.push(format!(
                    "{}: {verb} {path} is a non-resource URL outside discovery",
                    sent.name
                )),
            }
        }
    }

    problems.extend(unexplained(&role, &exercised));
    let sent: Vec<String> = exercised
        .iter()
        .map(|(p, runs)| format!("{} ({})", spell(p), runs.len()))
        .collect();
    assert!(
        problems.is_empty(),
        "{}\n\nsent: {}",
        problems.join("\n"),
        sent.join(", ")
    );
}

/// The converse: every permission the role grants was sent by a run (`exercised`) or is
/// explained by the used-by annotation; and the annotation names only granted permissions.
fn unexplained<T>(role: &Role, exercised: &BTreeMap<Perm, T>) -> Vec<String> {
    let mut problems = Vec::new();
    let granted = role.perms();
    for p in &granted {
        if !exercised.contains_key(p) && !role.used_by.contains_key(&spell(p)) {
            problems.push(format!(
                "the role grants `{}`, but no verify run sent it and {USED_BY} names no command \
                 that needs it: drop it, or annotate it",
                spell(p)
            ));
        }
    }
    for (spelled, commands) in &role.used_by {
        if !granted.iter().any(|p| &spell(p) == spelled) {
            problems.push(format!(
                "{USED_BY} names `{spelled}`, which the role does not grant"
            ));
        }
        if commands.is_empty() {
            problems.push(format!("{USED_BY}: `{spelled}` names no command"));
        }
    }
    problems
}

#[test]
fn an_unused_grant_is_flagged_unless_annotated() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("role.yaml");
    std::fs::write(
        &path,
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: r
  annotations:
    liveproof.dev/used-by: '{"get secrets": ["stale"], "get configmaps": ["nothing"]}'
rules:
  - apiGroups: [""]
    resources: ["pods", "secrets"]
    verbs: ["list", "get"]
"#,
    )
    .expect("write");
    let role = cluster_role(&path, "r");
    let exercised: BTreeMap<Perm, ()> = [(perm("list", "", "pods"), ())].into();
    let problems = unexplained(&role, &exercised);
    let flagged = |s: &str| problems.iter().any(|p| p.contains(s));
    assert!(flagged("grants `get pods`"), "{problems:?}");
    assert!(flagged("grants `list secrets`"), "{problems:?}");
    assert!(!flagged("grants `get secrets`"), "annotated: {problems:?}");
    assert!(!flagged("grants `list pods`"), "exercised: {problems:?}");
    assert!(
        flagged("`get configmaps`, which the role does not grant"),
        "{problems:?}"
    );
    assert_eq!(problems.len(), 3, "{problems:?}");
}

#[test]
fn the_restart_role_adds_only_patch_on_workloads() {
    let restart = cluster_role(&repo_file(RESTART_ROLE_FILE), "liveproof-restart");
    let perms: BTreeSet<Perm> = restart.perms();
    let expected: BTreeSet<Perm> = ["deployments", "statefulsets", "daemonsets"]
        .into_iter()
        .map(|r| perm("patch", "apps", r))
        .collect();
    assert_eq!(perms, expected);
    let read_only = cluster_role(&repo_file(ROLE_FILE), "liveproof-verify");
    assert!(
        read_only
            .perms()
            .iter()
            .all(|(verb, _, _)| !WRITE_VERBS.contains(&verb.as_str())),
        "the read-only role grants a write"
    );
}

const NO_SECRETS_ROLE_FILE: &str = "deploy/rbac-no-secrets.yaml";
const NAMESPACED_ROLE_FILE: &str = "deploy/rbac-namespaced/role/role.yaml";

/// The two narrower variants are the read-only role less exactly what they leave out: Secrets
/// (rbac-no-secrets.yaml), the cluster-scoped reads (rbac-namespaced/, a Role), so a rule
/// added to the read-only role is added to them too.
#[test]
fn the_variants_are_the_read_only_role_less_what_they_leave_out() {
    let full = cluster_role(&repo_file(ROLE_FILE), "liveproof-verify").perms();
    let less = |drop: &[&str]| -> BTreeSet<Perm> {
        full.iter()
            .filter(|(_, group, resource)| !(group.is_empty() && drop.contains(&resource.as_str())))
            .cloned()
            .collect()
    };
    let no_secrets = cluster_role(
        &repo_file(NO_SECRETS_ROLE_FILE),
        "liveproof-verify-no-secrets",
    );
    assert_eq!(no_secrets.perms(), less(&["secrets"]));
    let namespaced = role_of(&repo_file(NAMESPACED_ROLE_FILE), "Role", "liveproof-verify");
    assert_eq!(namespaced.perms(), less(&["nodes", "namespaces"]));
    for role in [&no_secrets, &namespaced] {
        assert!(role
            .perms()
            .iter()
            .all(|(verb, _, _)| !WRITE_VERBS.contains(&verb.as_str())));
        assert!(unexplained(role, &exercised_by_full(&full)).is_empty());
    }
    // Each binds the liveproof ServiceAccount, and the namespaced one puts it in apps.
    for (path, kind, name) in [
        (
            NO_SECRETS_ROLE_FILE,
            "ClusterRoleBinding",
            "liveproof-verify-no-secrets",
        ),
        (NAMESPACED_ROLE_FILE, "RoleBinding", "liveproof-verify"),
    ] {
        let docs = documents(&repo_file(path));
        let binding = docs
            .iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{path}: no {kind} {name}"));
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": "liveproof", "namespace": "liveproof"}]),
            "{path}"
        );
    }
    let apps = documents(&repo_file("deploy/rbac-namespaced/apps/kustomization.yaml"));
    assert_eq!(apps[0]["namespace"], "apps");
    assert_eq!(apps[0]["resources"], json!(["../role"]));
    let top = documents(&repo_file("deploy/rbac-namespaced/kustomization.yaml"));
    assert_eq!(top[0]["resources"], json!(["serviceaccount.yaml", "apps"]));
}

/// What the full role's test runs exercise, as far as a narrower role is concerned: every
/// permission of the full role but the annotated ones.
fn exercised_by_full(full: &BTreeSet<Perm>) -> BTreeMap<Perm, ()> {
    full.iter()
        .filter(|p| spell(p) != "get pods/log")
        .map(|p| (p.clone(), ()))
        .collect()
}

/// Every YAML file under deploy/ parses, and the objects the examples need are there and agree
/// with each other (the Job runs as the ServiceAccount the bindings name).
#[test]
fn deploy_examples_parse_and_agree() {
    let dir = repo_file("deploy");
    let mut objects = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("deploy/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            for doc in documents(&path) {
                assert!(
                    doc["apiVersion"].is_string() && doc["kind"].is_string(),
                    "{path:?}: every document has apiVersion and kind: {doc}"
                );
                objects.push(doc);
            }
        }
    }
    let find = |kind: &str, name: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name} under deploy/"))
    };
    let sa = find("ServiceAccount", "liveproof");
    assert_eq!(sa["metadata"]["namespace"], "liveproof");
    for (binding, role) in [
        ("liveproof-verify", "liveproof-verify"),
        ("liveproof-restart", "liveproof-restart"),
    ] {
        let b = find("ClusterRoleBinding", binding);
        assert_eq!(b["roleRef"]["kind"], "ClusterRole");
        assert_eq!(b["roleRef"]["name"], role);
        assert!(
            b["subjects"].as_array().expect("subjects").iter().any(|s| {
                s["kind"] == "ServiceAccount"
                    && s["name"] == "liveproof"
                    && s["namespace"] == "liveproof"
            }),
            "{binding} binds the liveproof ServiceAccount"
        );
    }
    // The plain Job of deploy/verify-job.yaml (the Argo CD hook and the Flux post-deploy Job
    // share its name and are checked by ci_templates.rs).
    let job = documents(&dir.join("verify-job.yaml"))
        .into_iter()
        .find(|o| o["kind"] == "Job")
        .expect("deploy/verify-job.yaml holds the Job");
    let spec = &job["spec"]["template"]["spec"];
    assert_eq!(spec["serviceAccountName"], "liveproof");
    assert_eq!(spec["restartPolicy"], "Never");
    assert_eq!(job["spec"]["backoffLimit"], 0);
    let container = &spec["containers"][0];
    let args: Vec<&str> = container["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("string arg"))
        .collect();
    assert_eq!(args.first(), Some(&"verify"));
    for flag in ["--commit", "--wait", "--timeout", "-o"] {
        assert!(args.contains(&flag), "the Job passes {flag}: {args:?}");
    }
    let sc = &container["securityContext"];
    assert_eq!(sc["runAsNonRoot"], true);
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["capabilities"]["drop"], json!(["ALL"]));
    assert!(container["resources"]["requests"].is_object());
}

/// The pipeline's read-only half — `snapshot`, then `verify --snapshot` — stays inside the
/// read-only role too (rollback's one write is what deploy/rbac-restart.yaml adds).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_and_verify_snapshot_need_only_the_read_only_role() {
    let role = cluster_role(&repo_file(ROLE_FILE), "liveproof-verify");
    let s = sim(
        scenario_objects("flux-chartversion-bumped-v35-live"),
        "apps",
    )
    .await;
    let kubeconfig = s.kubeconfig.to_str().expect("utf-8 path").to_string();
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path().to_str().expect("utf-8").to_string();
    let commit = "3f2c1ab9d04e";
    let snap = common::liveproof()
        .args(&["snapshot", "--dir", &dir, "--commit", commit])
        .kubeconfig(&kubeconfig)
        .run()
        .await;
    assert_eq!(snap.code, 0, "{}", snap.stderr);
    let verify = common::liveproof()
        .args(&["verify", "--snapshot", &dir, "--commit", commit])
        .kubeconfig(&kubeconfig)
        .run()
        .await;
    assert!(verify.code != 2, "{}", verify.stderr);
    for (verb, path, _) in s.sim.requests().snapshot() {
        assert!(
            !WRITE_VERBS.contains(&verb.as_str()),
            "a write: {verb} {path}"
        );
        match resource_of(&path) {
            Some((group, resource)) => {
                let p = perm(&verb, &group, &resource);
                assert!(
                    role.allows(&p),
                    "{verb} {path} needs `{}`, which the role does not grant",
                    spell(&p)
                );
            }
            None => assert!(
                is_discovery(&path) && verb == "get",
                "{verb} {path}: a non-resource URL outside discovery"
            ),
        }
    }
}
