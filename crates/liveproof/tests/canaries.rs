//! The canary matrix: a value planted in every place a secret can live — Secret data, Helm
//! values and rendered Secrets in every document shape, env values, termination messages, pull
//! secrets, kubeconfig tokens and exec env, a file passed as a kubeconfig, URL userinfo and
//! query, git remotes — is looked for in everything every command prints (stdout, stderr) at
//! every log level and in every format, in every file it writes, and in every MCP tool result:
//! raw and base64 — also what looks like a credential outside a Secret: a DSN's password in a
//! ConfigMap the release renders, a literal env password in a `-f` manifest. Expected: 0 hits. The one exception is stated and asserted: `snapshot.json`
//! (mode 0600) holds pod templates whole, so a value written literally in a template's env —
//! config, by the template's own choice — is in it, as rollback needs it.

use liveproof_testkit::binary as common;

use liveproof_testkit::git::git;

use liveproof_testkit::SimCluster;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{json, Value};

const NS: &str = "vault";

/// Each planted value names where it was planted, so a hit says what leaked.
const PLACES: [&str; 14] = [
    "secretdata",
    "stringdata",
    "helmvalues",
    "manifestsecret",
    "manifestlist",
    "manifestspaced",
    "manifestbroken",
    "envvalue",
    "termination",
    "pullsecret",
    "kubetoken",
    "urlquery",
    "manifestdsn",
    "fliteral",
];

fn canary(place: &str) -> String {
    format!("canary-{place}-7d3e")
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// Every canary found in `text`, raw or base64 (whole, or as the middle of a longer base64).
fn hits(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let extra = ["kubeexec", "dotenv", "urluser", "gitremote"];
    for place in PLACES.iter().chain(extra.iter()) {
        let c = canary(place);
        // Base64 of the canary at any alignment inside a longer encoded string.
        let aligned: Vec<String> = (0..3)
            .map(|pad| {
                let encoded = b64(&format!("{}{c}", "x".repeat(pad)));
                encoded[4..encoded.len() - 4].to_string()
            })
            .collect();
        if text.contains(&c) || aligned.iter().any(|a| text.contains(a.as_str())) {
            found.insert((*place).to_string());
        }
    }
    found
}

fn release_manifest() -> String {
    format!(
        "---\n# Source: web/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: web-db\ndata:\n  password: {}\nstringData:\n  token: {}\n\
         --- \n# Source: web/templates/spaced.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: web-spaced\nstringData:\n  key: {}\n\
         ---\n# Source: web/templates/list.yaml\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: web-listed\n  stringData:\n    key: {}\n\
         ---\n# Source: web/templates/broken.yaml\napiVersion: v1\nkind: Secret\nkind: Secret\nmetadata:\n  name: web-broken\nstringData:\n  key: {}\n\
         ---\n# Source: web/templates/config.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  DATABASE_URL: postgres://web:{}@db.vault.svc/web\n  LOG_LEVEL: info\n\
         ---\n# Source: web/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n",
        b64(&canary("manifestsecret")),
        canary("manifestsecret"),
        canary("manifestspaced"),
        canary("manifestlist"),
        canary("manifestbroken"),
        canary("manifestdsn"),
    )
}

/// A manifest for `-f` that writes a password into the Deployment's env, literally.
fn literal_env_manifest(dir: &Path) -> PathBuf {
    let path = dir.join("declared").join("api.yaml");
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(
        &path,
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: {NS}\nspec:\n  selector:\n    matchLabels: {{app: api}}\n  template:\n    metadata:\n      labels: {{app: api}}\n    spec:\n      containers:\n      - name: api\n        image: 127.0.0.1:9/acme/api:latest\n        env:\n        - name: DB_PASSWORD\n          value: {}\n",
            canary("fliteral")
        ),
    )
    .expect("write");
    path
}

fn objects() -> Vec<Value> {
    let started = "2026-07-12T10:06:00Z";
    let template = json!({
        "metadata": {"labels": {"app": "api", "pod-template-hash": "5d8f7"}},
        "spec": {
            "imagePullSecrets": [{"name": "regcred"}],
            "containers": [{
                "name": "api", "image": "127.0.0.1:9/acme/api:latest",
                "env": [
                    {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "app-creds", "key": "password"}}},
                    {"name": "DB_URL", "value": format!("postgres://app:{}@db", canary("envvalue"))}
                ]
            }]
        }
    });
    let pod = |suffix: &str, ready: bool| {
        let mut status = json!({
            "name": "api", "ready": ready, "restartCount": if ready { 0 } else { 3 },
            "image": "127.0.0.1:9/acme/api:latest",
            "imageID": "127.0.0.1:9/acme/api@sha256:1111111111111111111111111111111111111111111111111111111111111111",
            "state": if ready { json!({"running": {"startedAt": started}}) }
                     else { json!({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}}) }
        });
        if !ready {
            status["lastState"] = json!({"terminated": {"exitCode": 1, "reason": "Error",
                "message": format!("panic: cannot connect with {}", canary("termination")),
                "finishedAt": "2026-07-12T10:07:00Z"}});
        }
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": format!("api-5d8f7-{suffix}"), "namespace": NS,
                            "labels": {"app": "api", "pod-template-hash": "5d8f7"}},
               "spec": template["spec"].clone(),
               "status": {"phase": "Running",
                          "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
                          "containerStatuses": [status]}})
    };
    let docker = json!({"auths": {"127.0.0.1:9": {"auth": b64(&format!("puller:{}", canary("pullsecret")))}}});
    let mut release = liveproof_helm::encode_secret(&json!({
        "name": "web", "namespace": NS, "version": 1,
        "info": {"first_deployed": "2026-07-12T10:01:00Z", "last_deployed": "2026-07-12T10:01:00Z",
                 "deleted": "", "description": "Install complete", "status": "deployed"},
        "chart": {"metadata": {"name": "web", "version": "1.0.0", "apiVersion": "v2"},
                  "values": {"password": canary("helmvalues")}},
        "config": {"password": canary("helmvalues")},
        "manifest": release_manifest(),
        "hooks": []
    }));
    release["metadata"]["namespace"] = json!(NS);
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
               "metadata": {"name": "app-creds", "namespace": NS},
               "data": {"password": b64(&canary("secretdata"))},
               "stringData": {"other": canary("stringdata")}}),
        json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
               "metadata": {"name": "regcred", "namespace": NS},
               "data": {".dockerconfigjson": b64(&docker.to_string())}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "api", "namespace": NS, "uid": "uid-api", "generation": 2},
               "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}}, "template": template},
               "status": {"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2,
                          "readyReplicas": 1, "availableReplicas": 1}}),
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
               "metadata": {"name": "api-5d8f7", "namespace": NS, "generation": 1,
                            "labels": {"app": "api", "pod-template-hash": "5d8f7"},
                            "annotations": {"deployment.kubernetes.io/revision": "2"},
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "uid": "uid-api"}]},
               "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api", "pod-template-hash": "5d8f7"}},
                        "template": template},
               "status": {"observedGeneration": 1, "replicas": 2}}),
        pod("a1", true),
        pod("b2", false),
        release,
    ]
}

/// A repository whose remote URL carries a credential, with a manifest declaring `api`.
fn repo(dir: &Path) -> (PathBuf, String) {
    let root = dir.join("repo");
    std::fs::create_dir_all(root.join("k8s")).expect("mkdir");
    git(&root, &["init", "-q", "-b", "main"]);
    git(
        &root,
        &[
            "remote",
            "add",
            "origin",
            &format!("https://git:{}@example.invalid/r.git", canary("gitremote")),
        ],
    );
    std::fs::write(
        root.join("k8s/api.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: vault\nspec:\n  selector:\n    matchLabels: {app: api}\n  template:\n    metadata:\n      labels: {app: api}\n    spec:\n      containers:\n      - name: api\n        image: 127.0.0.1:9/acme/api:latest\n",
    )
    .expect("write");
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "api"]);
    let sha = git(&root, &["rev-parse", "HEAD"]);
    (root, sha)
}

/// A kubeconfig for the simulator whose user carries a token canary.
fn kubeconfig_with_token(sim_url: &str, path: &Path) {
    std::fs::write(
        path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: {sim_url}\n\
             contexts:\n- name: sim\n  context:\n    cluster: sim\n    user: u\n    namespace: {NS}\n\
             current-context: sim\nusers:\n- name: u\n  user:\n    token: {}\n",
            canary("kubetoken")
        ),
    )
    .expect("kubeconfig");
}

struct Matrix {
    runs: usize,
    leaks: Vec<String>,
}

impl Matrix {
    fn check(&mut self, what: &str, text: &str, allowed: &[&str]) {
        self.runs += 1;
        for place in hits(text) {
            if !allowed.contains(&place.as_str()) {
                self.leaks.push(format!("{what}: `{place}` leaked"));
            }
        }
    }

    fn check_run(&mut self, what: &str, run: &common::Run) {
        assert!(
            !run.stderr.contains("panicked"),
            "{what} panicked:\n{}",
            run.stderr
        );
        self.check(&format!("{what} (stdout)"), &run.stdout, &[]);
        self.check(&format!("{what} (stderr)"), &run.stderr, &[]);
    }
}

async fn liveproof_env(args: &[&str], log: Option<&str>) -> common::Run {
    match log {
        Some(level) => {
            common::liveproof()
                .args(args)
                .env("LIVEPROOF_LOG", level)
                .run()
                .await
        }
        None => common::liveproof().args(args).run().await,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_planted_secret_leaves_any_command_format_log_level_or_file() {
    let cluster = SimCluster::start(objects(), NS).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    kubeconfig_with_token(cluster.sim.url().trim_end_matches('/'), &kc);
    let kc = kc.to_str().expect("utf-8").to_string();
    let (repo, sha) = repo(dir.path());
    let repo = repo.to_str().expect("utf-8").to_string();
    let version_url = format!(
        "http://ops:{}@127.0.0.1:9/version?token={}",
        canary("urluser"),
        canary("urlquery")
    );
    let mut m = Matrix {
        runs: 0,
        leaks: Vec::new(),
    };

    let verify_base: Vec<String> = [
        "verify",
        "deploy/api",
        "--kubeconfig",
        &kc,
        "--since",
        "2026-07-12T10:00:00Z",
        "--image",
        "127.0.0.1:9/acme/api:latest",
        "--expect-secret-ref",
        "app-creds/password",
        "--expect-env",
        "DB_URL",
        "--version-url",
        &version_url,
        "--expect-version",
        "1.0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for verbosity in [None, Some("-v"), Some("-vv")] {
        for format in ["text", "json", "markdown", "junit"] {
            let report = dir.path().join(format!(
                "report-{format}.{}",
                match format {
                    "json" => "json",
                    "markdown" => "md",
                    "junit" => "xml",
                    _ => "txt",
                }
            ));
            let mut args: Vec<&str> = verbosity.into_iter().collect();
            args.extend(verify_base.iter().map(String::as_str));
            args.extend(["-o", format, "--report", report.to_str().expect("utf-8")]);
            let run = common::liveproof().args(&args).run().await;
            m.check_run(&format!("verify -o {format} {verbosity:?}"), &run);
            let written = std::fs::read_to_string(&report).unwrap_or_default();
            m.check(
                &format!("verify --report {}", report.display()),
                &written,
                &[],
            );
        }
    }
    // The most verbose logging there is.
    let mut args: Vec<&str> = verify_base.iter().map(String::as_str).collect();
    args.extend(["--wait", "--timeout", "2s"]);
    m.check_run(
        "verify --wait LIVEPROOF_LOG=trace",
        &liveproof_env(&args, Some("trace")).await,
    );

    for extra in [
        &["--expect", "kind: Secret"][..],
        &["--chart-version", "1.0.0"][..],
    ] {
        for format in ["text", "json"] {
            let mut args = vec![
                "-vv",
                "verify",
                "release/web",
                "--kubeconfig",
                &kc,
                "--since",
                "2026-07-12T10:00:00Z",
                "-o",
                format,
            ];
            args.extend_from_slice(extra);
            m.check_run(
                &format!("verify release/web {extra:?} -o {format}"),
                &common::liveproof().args(&args).run().await,
            );
        }
    }
    // `-f` with a manifest that writes a password into the env literally: the difference is
    // said, by field, and neither the declared nor the live value is shown.
    let declared = literal_env_manifest(dir.path());
    let declared = declared.to_str().expect("utf-8").to_string();
    for format in ["text", "json", "markdown", "junit"] {
        let run = common::liveproof()
            .args(&["-vv", "verify", "-f", &declared, "--kubeconfig", &kc])
            .args(&[
                "--since",
                "2026-07-12T10:00:00Z",
                "--no-registry",
                "-o",
                format,
            ])
            .run()
            .await;
        assert!(
            !matches!(format, "text" | "json") || run.stdout.contains("env[DB_PASSWORD]"),
            "-f -o {format}: the difference is named:\n{}\n{}",
            run.stdout,
            run.stderr
        );
        m.check_run(
            &format!("verify -f (literal env password) -o {format}"),
            &run,
        );
    }
    for section in [
        None,
        Some("--manifest"),
        Some("--values"),
        Some("--metadata"),
        Some("--history"),
    ] {
        let mut args = vec!["-vv", "release", "show", "web", "--kubeconfig", &kc];
        args.extend(section);
        m.check_run(
            &format!("release show {section:?}"),
            &common::liveproof().args(&args).run().await,
        );
    }
    for format in ["text", "json"] {
        let run = common::liveproof()
            .args(&["-vv", "stale"])
            .kubeconfig(&kc)
            .args(&["-o", format, "--check-digests"])
            .run()
            .await;
        m.check_run(&format!("stale -o {format}"), &run);
    }

    // Snapshot, verify --snapshot, rollback --dry-run; and what the snapshot file holds.
    let snapshots = dir.path().join("snapshots");
    let snapshots = snapshots.to_str().expect("utf-8");
    m.check_run(
        "snapshot",
        &common::liveproof()
            .args(&["-vv", "snapshot", "--dir", snapshots, "--commit", &sha])
            .kubeconfig(&kc)
            .run()
            .await,
    );
    let file = Path::new(snapshots).join(&sha).join("snapshot.json");
    let held = std::fs::read_to_string(&file).expect("snapshot.json written");
    m.check("snapshot.json", &held, &["envvalue"]);
    assert!(
        hits(&held).contains("envvalue"),
        "the template is held whole, as documented"
    );
    m.check_run(
        "verify --snapshot",
        &common::liveproof()
            .args(&["-vv", "verify", "--snapshot", snapshots, "--commit", &sha])
            .kubeconfig(&kc)
            .json()
            .run()
            .await,
    );
    m.check_run(
        "rollback --dry-run",
        &common::liveproof()
            .args(&["-vv", "rollback", "--snapshot", snapshots, "--commit", &sha])
            .kubeconfig(&kc)
            .args(&["--dry-run"])
            .run()
            .await,
    );

    // --commit read from a repository whose remote carries a credential; lint of it.
    m.check_run(
        "verify --commit --repo",
        &common::liveproof()
            .args(&["-vv", "verify", "deploy/api"])
            .kubeconfig(&kc)
            .args(&[
                "--commit",
                &sha,
                "--repo",
                &repo,
                "--image",
                "127.0.0.1:9/acme/api:latest",
            ])
            .run()
            .await,
    );
    for format in ["text", "json", "sarif"] {
        m.check_run(
            &format!("lint -o {format}"),
            &common::liveproof()
                .args(&["-vv", "lint", &repo, "-o", format])
                .run()
                .await,
        );
    }

    // Files that are not kubeconfigs, and a kubeconfig whose exec plugin carries a secret.
    let dotenv = dir.path().join(".env");
    std::fs::write(
        &dotenv,
        format!(
            "DB_PASSWORD={}\nAPI_KEY: {}\n",
            canary("dotenv"),
            canary("dotenv")
        ),
    )
    .expect("write");
    let exec = dir.path().join("exec-kubeconfig");
    std::fs::write(&exec, format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: 'https://127.0.0.1:9'}}\n\
         contexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/false\n      args: ['--token', '{}']\n      env:\n      - name: TOKEN\n        value: {}\n",
        canary("kubeexec"), canary("kubeexec"))).expect("write");
    for (what, path) in [(".env as kubeconfig", &dotenv), ("exec kubeconfig", &exec)] {
        for command in [
            &["verify", "deploy/api", "--since", "1h", "--image", "a/b:1"][..],
            &["stale"][..],
            &["release", "show", "web"][..],
        ] {
            let mut args = vec!["-vv"];
            args.extend_from_slice(command);
            args.extend(["--kubeconfig", path.to_str().expect("utf-8")]);
            m.check_run(
                &format!("{what}: {command:?}"),
                &common::liveproof().args(&args).run().await,
            );
            let with_env = common::liveproof()
                .args(&args[..args.len() - 2])
                .env("KUBECONFIG", path.to_str().expect("utf-8"))
                .run()
                .await;
            m.check_run(&format!("{what} via KUBECONFIG: {command:?}"), &with_env);
        }
    }

    // MCP: the same reads as tools.
    let calls = [
        json!({"name": "verify", "arguments": {"targets": ["deploy/api"], "kubeconfig": kc, "since": "2026-07-12T10:00:00Z", "image": ["127.0.0.1:9/acme/api:latest"], "expect_secret_ref": ["app-creds/password"]}}),
        json!({"name": "verify", "arguments": {"targets": ["release/web"], "kubeconfig": kc, "since": "2026-07-12T10:00:00Z", "expect": ["kind: Secret"]}}),
        // An argument holding a secret (not URL-shaped: log lines mask URLs anyway): rmcp logs
        // tool arguments whole at debug (-vv), and the refusal once echoed it.
        json!({"name": "verify", "arguments": {"targets": ["deploy/api"], "kubeconfig": kc, "since": "2026-07-12T10:00:00Z", "expect_env": [format!("DB_PASSWORD={}", canary("envvalue"))]}}),
        json!({"name": "release_show", "arguments": {"name": "web", "namespace": NS, "kubeconfig": kc, "section": "manifest"}}),
        json!({"name": "release_show", "arguments": {"name": "web", "namespace": NS, "kubeconfig": kc, "section": "values"}}),
        json!({"name": "stale", "arguments": {"namespace": NS, "kubeconfig": kc, "check_digests": true}}),
        json!({"name": "verify", "arguments": {"targets": ["deploy/api"], "kubeconfig": dotenv.to_str(), "since": "1h", "image": ["a/b:1"]}}),
        // A file outside the server's --allow-from, as a dump: refused unread.
        json!({"name": "verify", "arguments": {"targets": ["deploy/api"], "from": dotenv.to_str(), "since": "1h", "image": ["a/b:1"]}}),
    ];
    // The handshake, then every call, at -vv: common::mcp.
    let (mcp, _) = common::mcp(&["-vv", "--kubeconfig", &kc], &calls).await;
    let answered = mcp
        .stdout
        .lines()
        .filter(|l| l.contains("\"result\"") || l.contains("\"error\""))
        .count();
    assert_eq!(
        answered,
        calls.len() + 1,
        "every call answered:\n{}\n{}",
        mcp.stdout,
        mcp.stderr
    );
    m.check_run("mcp tools", &mcp);
    // The call naming a file the operator did not configure as a kubeconfig is refused unread;
    // so is the one naming a file outside --allow-from.
    assert!(
        mcp.stdout
            .contains("is not one this server was started with"),
        "{}",
        mcp.stdout
    );
    assert!(
        mcp.stdout.contains("started without --allow-from"),
        "{}",
        mcp.stdout
    );

    // MCP with `manifests` allowed: the same `-f`, and release_show of the DSN's ConfigMap.
    let allowed = Path::new(&declared).parent().expect("a parent");
    let calls = [
        json!({"name": "verify", "arguments": {"manifests": [declared], "kubeconfig": kc, "since": "2026-07-12T10:00:00Z", "no_registry": true}}),
        json!({"name": "release_show", "arguments": {"name": "web", "namespace": NS, "kubeconfig": kc, "section": "manifest"}}),
    ];
    let (mcp, replies) = common::mcp(
        &[
            "-vv",
            "--kubeconfig",
            &kc,
            "--allow-from",
            allowed.to_str().expect("utf-8"),
        ],
        &calls,
    )
    .await;
    assert!(
        common::tool_text(&replies[0]).contains("env[DB_PASSWORD]"),
        "{}",
        replies[0]
    );
    assert!(
        common::tool_text(&replies[1]).contains("postgres://web:***@db.vault.svc/web"),
        "{}",
        replies[1]
    );
    m.check_run("mcp -f and release_show", &mcp);

    assert!(m.runs >= 60, "only {} outputs checked", m.runs);
    assert!(
        m.leaks.is_empty(),
        "{} leak(s) over {} outputs:\n{}",
        m.leaks.len(),
        m.runs,
        m.leaks.join("\n")
    );
}

/// What a verify answered, with the expectation's own text taken out: what a probe learns.
fn answer(run: &common::Run, probe: &str) -> String {
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    format!("exit {} {}", run.code, learnt(&report, probe))
}

/// What a report tells of an expectation: the verdict and the evidence it is matched in, the
/// expectation's own text taken out.
fn learnt(report: &Value, probe: &str) -> String {
    let evidence: Vec<Value> = report["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["evidence"].as_array().cloned().unwrap_or_default())
        .filter(|e| e["check"] == "manifest_contains" || e["check"] == "spec_readback")
        .map(|e| json!([e["check"], e["status"], e["observed"], e["detail"]]))
        .collect();
    format!("{} {}", report["verdict"], json!(evidence)).replace(probe, "PROBE")
}

/// Issue 21, point 2: no yes/no oracle over what is redacted. `--expect re:…` once passed or
/// failed on a rendered Secret's value (a read-only MCP client binary-searched one out in 134
/// calls), and the same on pod-template env values; issue 32, point 11: and on a DSN's password
/// in a ConfigMap the release renders. For every planted value an expectation could reach, a
/// regex that matches it and one that does not get the same answer, and neither is a pass —
/// from the CLI and from an MCP client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expectation_is_no_oracle_over_redacted_values() {
    let cluster = SimCluster::start(objects(), NS).await;
    let kc = cluster.kubeconfig().to_string();
    let mut probes = 0;
    let places = [
        ("release/web", "manifestsecret"),
        ("release/web", "manifestspaced"),
        ("release/web", "manifestlist"),
        ("release/web", "manifestdsn"),
        ("deploy/api", "envvalue"),
    ];
    // The value is `canary-PLACE-7d3e`: `[a-f]` holds its last letter, `[g-z]` does not.
    let probe = |place: &str, class: &str| format!("re:canary-{place}-7d3{class}");
    for (target, place) in places {
        let mut answers = Vec::new();
        for class in ["[a-f]", "[g-z]"] {
            let probe = probe(place, class);
            let run = common::liveproof()
                .args(&["verify", target])
                .kubeconfig(&kc)
                .since("2026-07-12T10:00:00Z")
                .args(&["--no-registry", "--expect", &probe])
                .json()
                .run()
                .await;
            probes += 1;
            assert!(
                !answer(&run, &probe).contains("\"pass\""),
                "{target} {probe}: an expectation passed on a redacted value:\n{}",
                run.stdout
            );
            answers.push(answer(&run, &probe));
        }
        assert_eq!(
            answers[0], answers[1],
            "{target}: the answer depends on the redacted value `{place}`"
        );
    }
    // The same probes from an MCP client, in one session.
    let calls: Vec<Value> = places
        .iter()
        .flat_map(|(target, place)| {
            ["[a-f]", "[g-z]"].map(|class| {
                json!({"name": "verify", "arguments": {"targets": [target], "kubeconfig": kc,
                    "since": "2026-07-12T10:00:00Z", "no_registry": true,
                    "expect": [probe(place, class)]}})
            })
        })
        .collect();
    let (run, replies) = common::mcp(&["--kubeconfig", &kc], &calls).await;
    for (i, (target, place)) in places.iter().enumerate() {
        let [matching, not_matching] = ["[a-f]", "[g-z]"].map(|class| {
            let reply = &replies[2 * i + usize::from(class == "[g-z]")];
            assert_eq!(reply["isError"], false, "{reply}\n{}", run.stderr);
            learnt(&reply["structuredContent"], &probe(place, class))
        });
        probes += 2;
        assert!(!matching.contains("\"pass\""), "MCP {target}: {matching}");
        assert_eq!(
            matching, not_matching,
            "MCP {target}: the answer depends on the redacted value `{place}`"
        );
    }
    #[expect(clippy::print_stderr, reason = "the matrix's summary is its output")]
    {
        eprintln!("expectation oracle: {probes} probes, 0 answers that depend on a redacted value");
    }
}

/// A URL carrying a password and a token in its query, as a kubeconfig's server may.
fn with_credentials(scheme: &str, addr: &str) -> String {
    format!(
        "{scheme}://user:{}@{addr}/?token={}",
        canary("urluser"),
        canary("urlquery")
    )
}

/// A kubeconfig with one context per `(name, server)`, the first current.
fn fleet_kubeconfig(path: &Path, servers: &[(&str, String)]) {
    let mut text = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, server) in servers {
        text.push_str(&format!(
            "- name: {name}\n  cluster:\n    server: '{server}'\n"
        ));
    }
    text.push_str("contexts:\n");
    for (name, _) in servers {
        text.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: u\n    namespace: {NS}\n"
        ));
    }
    text.push_str(&format!(
        "current-context: {}\nusers:\n- name: u\n  user:\n    token: not-a-secret\n",
        servers[0].0
    ));
    std::fs::write(path, text).expect("kubeconfig");
}

/// The API server's URL with a password and a query token, on every path an error can take
/// (unreachable, silent, 404, a Status 500, a body that is not JSON, a redirect, TLS against a
/// plain-HTTP server) and on success at every log level: neither canary is in anything
/// printed, in any format, for one cluster or a fleet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_server_url_never_shows_its_credentials_on_any_path() {
    use common::{canned_server, http_response};
    let cluster = SimCluster::start(objects(), NS).await;
    let sim = cluster.sim.url();
    let sim = sim
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let status = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcdserver: request timed out","reason":"InternalError","code":500}"#;
    let redirect = format!("Location: {}", with_credentials("https", "login.example"));
    let servers: Vec<(&str, String)> = vec![
        ("success", with_credentials("http", &sim)),
        ("unreachable", with_credentials("http", "127.0.0.1:1")),
        ("silent", with_credentials("http", &canned_server(None))),
        (
            "notfound",
            with_credentials(
                "http",
                &canned_server(Some(http_response(
                    "404 Not Found",
                    &["Content-Type: text/plain"],
                    b"404 page not found",
                ))),
            ),
        ),
        (
            "status",
            with_credentials(
                "http",
                &canned_server(Some(http_response(
                    "500 Internal Server Error",
                    &["Content-Type: application/json"],
                    status,
                ))),
            ),
        ),
        (
            "garbage",
            with_credentials(
                "http",
                &canned_server(Some(http_response(
                    "200 OK",
                    &["Content-Type: text/html"],
                    b"<html>sign in</html>",
                ))),
            ),
        ),
        (
            "redirect",
            with_credentials(
                "http",
                &canned_server(Some(http_response("302 Found", &[&redirect], b""))),
            ),
        ),
        ("tls", with_credentials("https", &sim)),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let mut m = Matrix {
        runs: 0,
        leaks: Vec::new(),
    };
    let verify = |kc: &str| -> Vec<String> {
        [
            "verify",
            "deploy/api",
            "--kubeconfig",
            kc,
            "--since",
            "2026-07-12T10:00:00Z",
            "--image",
            "127.0.0.1:9/acme/api:latest",
            "--no-registry",
            "--request-timeout",
            "1s",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    for (name, server) in &servers {
        let kc = dir.path().join(format!("kubeconfig-{name}"));
        fleet_kubeconfig(&kc, &[(name, server.clone())]);
        let kc = kc.to_str().expect("utf-8");
        for verbosity in [None, Some("-v"), Some("-vv")] {
            for format in ["text", "json", "markdown", "junit"] {
                let mut args: Vec<String> = verbosity.iter().map(|v| v.to_string()).collect();
                args.extend(verify(kc));
                args.extend(["-o".to_string(), format.to_string()]);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let run = common::liveproof().args(&args).run().await;
                if *name == "success" {
                    assert_ne!(run.code, 2, "{}{}", run.stdout, run.stderr);
                } else {
                    assert_eq!(run.code, 2, "{name}: {}{}", run.stdout, run.stderr);
                }
                m.check_run(&format!("{name}: verify -o {format} {verbosity:?}"), &run);
            }
        }
        let mut args = verify(kc);
        args.extend(["--wait", "--timeout", "2s", "-o", "json"].map(String::from));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        m.check_run(
            &format!("{name}: verify --wait LIVEPROOF_LOG=trace"),
            &liveproof_env(&args, Some("trace")).await,
        );
        for command in [
            &["stale", "--request-timeout", "1s"][..],
            &["stale", "--request-timeout", "1s", "-o", "json"][..],
            &["release", "show", "web", "--request-timeout", "1s"][..],
        ] {
            let mut args = vec!["-vv"];
            args.extend_from_slice(command);
            args.extend(["--kubeconfig", kc]);
            m.check_run(
                &format!("{name}: {command:?}"),
                &common::liveproof().args(&args).run().await,
            );
        }
    }
    // A fleet of all of them: each cluster's error is in the fleet's report, on stdout.
    let fleet = dir.path().join("kubeconfig-fleet");
    fleet_kubeconfig(&fleet, &servers);
    for format in ["text", "json"] {
        let mut args = vec!["-vv".to_string()];
        args.extend(verify(fleet.to_str().expect("utf-8")));
        args.extend(["--all-contexts", "-o", format].map(String::from));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = common::liveproof().args(&args).run().await;
        assert!(
            run.stdout.contains("127.0.0.1:1"),
            "the fleet names each cluster's server: {}",
            run.stdout
        );
        m.check_run(&format!("fleet -o {format}"), &run);
    }
    #[expect(clippy::print_stderr, reason = "the matrix's summary is its output")]
    {
        eprintln!(
            "server URL canaries: {} outputs over {} servers, {} leaks",
            m.runs,
            servers.len(),
            m.leaks.len()
        );
    }
    assert!(m.runs >= 250, "only {} outputs checked", m.runs);
    assert!(
        m.leaks.is_empty(),
        "{} leak(s) over {} outputs:\n{}",
        m.leaks.len(),
        m.runs,
        m.leaks.join("\n")
    );
}
