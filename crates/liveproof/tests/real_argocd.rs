//! The stories on Argo CD's real controllers: the application-controller and the repo-server
//! built from the pinned module (`e2e/build-peers.sh`), a real Redis, and the project's git
//! server, run as processes beside the real control plane (crates/e2e/src/argocd.rs), which is
//! registered with Argo CD as a destination cluster by its URL. Argo CD moves the objects; the
//! tests only do what a person or a pipeline does (push a commit, let the push webhook ask for
//! a hard refresh) and verify. Every wait is bounded; a failed story shows the Application,
//! the cluster's state and every component's log.
//!
//! A missing peer fails these tests with the command that builds it; they never skip.

mod common;
mod world;

use std::time::Duration;

use liveproof_e2e::argocd::{self, ArgoCd};
use liveproof_e2e::control_plane::raw;
use liveproof_e2e::controllers::GitServer;
use liveproof_evidence::{Check, Status, Verdict};
use liveproof_testkit::git::{git_at, Repo};
use serde_json::Value;
use world::{deployment, evidence, World};

/// How long Argo CD may take to sync what it was asked to, and report it Healthy.
const SYNCED_WITHIN: Duration = Duration::from_secs(180);

/// A world running Argo CD, with a repository `R` on the git server that Application `shop`
/// (automated sync) follows at `main`, path `shop/`, into namespace `apps`.
struct ArgoWorld {
    world: World,
    repo: Repo,
    remote: String,
    client: liveproof_e2e::kube::Client,
}

impl ArgoWorld {
    async fn start() -> ArgoWorld {
        let world = World::start().await;
        let git_root = world.plane.dir.path().join("git-server");
        let server = GitServer::start(&world.plane, &git_root).unwrap_or_else(|e| panic!("{e:#}"));
        let remote = format!("{}/apps.git", server.url);
        world.keep(Ok(server.process));
        let argo = ArgoCd::start(&world.plane).unwrap_or_else(|e| panic!("Argo CD: {e:#}"));
        for process in argo.into_processes() {
            world.keep(Ok(process));
        }
        world.kubectl(&["create", "namespace", "apps"]);
        let client = world.plane.client().await.expect("admin client");
        ArgoWorld {
            world,
            repo: Repo::new(),
            remote,
            client,
        }
    }

    /// Commits `shop/` (Deployment `shop` running `image`, Service `shop`) now — the committer
    /// time is the change time `--commit` gives — and pushes it; the commit's SHA.
    fn push_shop(&self, image: &str, message: &str) -> String {
        self.push_shop_manifest(&deployment("shop", image, ""), message)
    }

    /// [`push_shop`](Self::push_shop) with the Deployment's manifest as given.
    fn push_shop_manifest(&self, deployment: &str, message: &str) -> String {
        let now = jiff::Timestamp::now().to_string();
        self.repo.file("shop/deployment.yaml", deployment);
        self.repo.file(
            "shop/service.yaml",
            "apiVersion: v1
kind: Service
metadata:
  name: shop
  namespace: apps
spec:
  selector: {app: shop}
  ports:
  - {name: http, port: 80, targetPort: 8080}
",
        );
        let path = self.repo.path();
        for args in [
            &["add", "-A"][..],
            &["commit", "-q", "-m", message],
            &["push", "-q", &self.remote, "main"],
        ] {
            git_at(&path, args, &now);
        }
        git_at(&path, &["rev-parse", "HEAD"], &now)
    }

    /// Application `shop` as the API server has it now.
    async fn app(&self) -> Value {
        let path = format!(
            "/apis/argoproj.io/v1alpha1/namespaces/{}/applications/shop",
            argocd::NAMESPACE
        );
        let (code, mut body) = raw(&self.client, "GET", &path, None)
            .await
            .expect("GET application/shop");
        assert_eq!(code, 200, "GET application/shop: {body:?}");
        body.pop().unwrap_or_default()
    }

    /// Polls `probe` (the testkit's bounded wait) until it answers, for up to `within`; fails
    /// the test with the Application and the cluster's state when it has not.
    async fn poll<T, F: std::future::Future<Output = Option<T>>>(
        &self,
        what: &str,
        within: Duration,
        probe: impl FnMut() -> F,
    ) -> T {
        // The testkit's own bound is a little longer, so that this one, which says more, ends
        // the wait.
        let wait = liveproof_testkit::wait::wait_for(what, within + Duration::from_secs(5), probe);
        match tokio::time::timeout(within, wait).await {
            Ok(found) => found,
            Err(_) => panic!("not within {within:?}: {what}\n{}", self.state().await),
        }
    }

    /// Waits until Argo CD reports `shop` synced to `commit` by a Succeeded operation and
    /// Healthy; the Application then.
    async fn synced_to(&self, commit: &str) -> Value {
        let what = format!("application/shop Synced to {commit} and Healthy");
        self.poll(&what, SYNCED_WITHIN, || async {
            let app = self.app().await;
            synced(&app, commit).then_some(app)
        })
        .await
    }

    /// `verify application/shop -n argocd --commit COMMIT --repo R --image IMAGE -o json`.
    async fn verify(&self, commit: &str, image: &str) -> common::Run {
        let repo = self.repo.path();
        common::liveproof()
            .args(&["verify", "application/shop", "-n", argocd::NAMESPACE])
            .args(&["--commit", commit, "--repo", repo.to_str().expect("utf-8")])
            .args(&["--image", image])
            .json()
            .on(&self.world)
            .run()
            .await
    }

    /// Waits until the pods of `app=NAME` are three, all Ready and running `image`: the old
    /// ones gone (Argo CD reports the app Healthy while they terminate).
    async fn running(&self, name: &str, image: &str) {
        let what = format!("three Ready pods of {name}, all running {image}, and no other");
        let path = format!("/api/v1/namespaces/apps/pods?labelSelector=app%3D{name}");
        self.poll(&what, Duration::from_secs(60), || async {
            let (_, list) = raw(&self.client, "GET", &path, None).await.ok()?;
            let pods = list.first()?["items"].as_array()?.clone();
            let ready = |pod: &Value| {
                pod["spec"]["containers"][0]["image"] == image
                    && pod["status"]["conditions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
            };
            (pods.len() == 3 && pods.iter().all(ready)).then_some(())
        })
        .await;
    }

    /// The Application and the cluster's state, for a failure message.
    async fn state(&self) -> String {
        format!(
            "application/shop:\n{}\n{}",
            serde_json::to_string_pretty(&self.app().await).unwrap_or_default(),
            self.world.state()
        )
    }
}

/// Whether `app` is synced to `commit` by a Succeeded operation and Healthy.
fn synced(app: &Value, commit: &str) -> bool {
    let at = |p: &str| app.pointer(p).and_then(Value::as_str);
    at("/status/sync/status") == Some("Synced")
        && at("/status/sync/revision") == Some(commit)
        && at("/status/operationState/phase") == Some("Succeeded")
        && at("/status/operationState/syncResult/revision") == Some(commit)
        && at("/status/health/status") == Some("Healthy")
}

/// Story 1 (issue 38) on the real Argo CD: a commit is pushed to the git server the Application follows.
/// Until Argo CD has looked (the push webhook's hard refresh has not come), the change is
/// merged but not deployed: `verify application/shop --commit B` is not live — the synced
/// revision is the commit before it, the last sync finished before it, and the Deployment runs
/// the old build. The webhook comes (`argocd.argoproj.io/refresh=hard`): Argo CD finds B, syncs
/// it (automated sync), the kubelet stand-in runs the new pods, and once Argo CD reports B
/// Synced and Healthy and the old pods are gone, verify — read once, no `--wait` — judges what
/// Argo CD and the cluster wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_1_argo_cd_syncs_a_pushed_commit_on_the_real_controllers() {
    let argo = ArgoWorld::start().await;
    let (v1, v2) = argo.world.two_builds("acme/shop").await;
    let first = argo.push_shop(&v1, "shop v1");
    argo.world
        .apply(&argocd::application("shop", &argo.remote, "shop", "apps"));
    argo.synced_to(&first).await;
    argo.running("shop", &v1).await;
    // The next commit comes in a later second than anything of the first deploy.
    world::change_time().await;

    // Pushed, not yet seen by Argo CD: not live.
    let second = argo.push_shop(&v2, "shop v2");
    let pushed = argo.verify(&second, &v2).await;
    argo.world.expect_exit(&pushed, 1);
    assert_eq!(pushed.report().verdict, Verdict::NotLive);
    for check in [
        Check::GitopsRevision,
        Check::ConditionFresh,
        Check::SpecReadback,
    ] {
        assert_eq!(
            evidence(&pushed, check).status,
            Status::Fail,
            "{check:?}: {}",
            pushed.stdout
        );
    }
    let app = argo.app().await;
    assert_eq!(
        app.pointer("/status/sync/revision").and_then(Value::as_str),
        Some(first.as_str()),
        "Argo CD compared with git before the webhook: this proves nothing of a pushed, \
         unsynced commit\n{}",
        argo.state().await
    );

    // The push webhook: a hard refresh. Argo CD syncs B; the new pods replace the old.
    argocd::refresh(&argo.world.plane, "shop").unwrap_or_else(|e| panic!("{e:#}"));
    let app = argo.synced_to(&second).await;
    argo.running("shop", &v2).await;
    let synced = argo.verify(&second, &v2).await;
    for check in [
        Check::GitopsRevision,
        Check::SpecReadback,
        Check::PodsCurrent,
        Check::PodSpec,
        Check::PodRestarted,
        Check::RolloutComplete,
    ] {
        assert_eq!(
            evidence(&synced, check).status,
            Status::Pass,
            "{check:?}: {}\n{}",
            synced.stdout,
            argo.state().await
        );
    }
    synced_verdict(&argo, &synced, &app).await;
}

/// What liveproof answers once Argo CD reports the pushed commit Synced and Healthy and only
/// the new pods run: live. Argo CD stamps `operationState.finishedAt` in whole seconds, as git
/// stamps the commit, and a sync often finishes in the commit's own second (a webhook and a
/// sync within the second, on a quiet machine): a sync of the commit came after it all the
/// same — causality orders them, not the clock (issue 38) — so `condition_fresh` passes either
/// way, and it says which ordered it.
async fn synced_verdict(argo: &ArgoWorld, run: &common::Run, app: &Value) {
    let finished = app
        .pointer("/status/operationState/finishedAt")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let committed = run.report().change.since;
    argo.world.expect_exit(run, 0);
    assert_eq!(run.report().verdict, Verdict::Live, "{}", run.stdout);
    let fresh = evidence(run, Check::ConditionFresh);
    assert_eq!(fresh.status, Status::Pass, "{}", run.stdout);
    if committed.as_deref() == Some(finished) {
        assert!(fresh.detail.contains("causality orders them"), "{fresh:?}");
    }
}

/// Story 4 (issue 33) on the real Argo CD: a commit whose manifest the API server rejects
/// (`replicas: "x"`). `verify application/shop --commit X --wait --timeout 4m` is under way
/// before the push webhook's refresh; Argo CD finds X, its automated sync fails (and its one
/// retry), and the operation ends Failed with Argo CD's message — and the wait ends there,
/// not_live, with that message (the harness's two-minute bound on a run fails the test if it
/// waits the timeout out). A retry under way (phase Running) keeps it waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_4_argo_cd_fails_to_sync_an_invalid_commit_and_the_wait_ends_with_its_message() {
    let argo = ArgoWorld::start().await;
    let (v1, v2) = argo.world.two_builds("acme/shop").await;
    let first = argo.push_shop(&v1, "shop v1");
    // One retry, soon: a failed sync is retried as phase Running, then ends Failed.
    let app = argocd::application("shop", &argo.remote, "shop", "apps")
        + "    retry:\n      limit: 1\n      backoff: {duration: 1s, factor: 1}\n";
    argo.world.apply(&app);
    argo.synced_to(&first).await;
    argo.running("shop", &v1).await;

    let invalid = deployment("shop", &v2, "").replace("replicas: 3", "replicas: \"x\"");
    let bad = argo.push_shop_manifest(&invalid, "shop: replicas x");
    let repo = argo.repo.path();
    let waiting = common::liveproof()
        .args(&["verify", "application/shop", "-n", argocd::NAMESPACE])
        .args(&["--commit", &bad, "--repo", repo.to_str().expect("utf-8")])
        .args(&["--wait", "--timeout", "4m"])
        .json()
        .on(&argo.world)
        .run();
    let webhook = async {
        // Once verify is watching, the push webhook's hard refresh.
        tokio::time::sleep(Duration::from_secs(3)).await;
        argocd::refresh(&argo.world.plane, "shop").unwrap_or_else(|e| panic!("{e:#}"));
    };
    let (run, ()) = tokio::join!(waiting, webhook);
    let app = argo.app().await;
    let at = |p: &str| {
        app.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let phase = at("/status/operationState/phase");
    assert!(
        matches!(phase.as_str(), "Failed" | "Error"),
        "{}\n{}",
        run.stdout,
        argo.state().await
    );
    argo.world.expect_exit(&run, 1);
    let report = run.report();
    assert_eq!(report.verdict, Verdict::NotLive);
    assert!(
        report.wait.is_some_and(|w| !w.timed_out),
        "{:?}",
        report.wait
    );
    let message = at("/status/operationState/message");
    let note = format!(
        "--wait stopped at a failure waiting will not fix: {}/Application/shop: sync operation {phase} syncing {bad}: {}",
        argocd::NAMESPACE,
        message.trim_end()
    );
    assert!(
        report.notes.contains(&note),
        "{:?}\nwant: {note}\n{}",
        report.notes,
        run.stderr
    );
    // The evidence says it too, with where to look next.
    let fresh = evidence(&run, Check::ConditionFresh);
    assert_eq!(fresh.status, Status::Fail);
    assert!(fresh.detail.contains(message.trim_end()), "{fresh:?}");
    assert!(
        report.targets[0]
            .next_step
            .as_ref()
            .is_some_and(|s| s.to_string().contains("--show-operation")),
        "{:?}",
        report.targets[0].next_step
    );
}

/// Argo CD's values of the fields that have a fixed set (what a fixture may say differs
/// from this story's, but must be one Argo CD writes).
const SYNC_STATUSES: &[&str] = &["Synced", "OutOfSync", "Unknown"];
const PHASES: &[&str] = &["Running", "Terminating", "Failed", "Error", "Succeeded"];
const HEALTH: &[&str] = &[
    "Healthy",
    "Progressing",
    "Degraded",
    "Suspended",
    "Missing",
    "Unknown",
];
const RESULT_CODES: &[&str] = &["Synced", "SyncFailed", "Pruned", "PruneSkipped"];

/// What a value is, for comparing a fixture with what Argo CD wrote: a commit SHA, a time as
/// Argo CD stamps it (whole seconds, UTC), one of a field's known values, or a JSON type.
fn shape_of(value: Option<&Value>, known: Option<&[&str]>) -> String {
    let Some(value) = value else {
        return "absent".into();
    };
    let Some(text) = value.as_str() else {
        return match value {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::String(_) => "string",
        }
        .into();
    };
    if let Some(known) = known {
        return if known.contains(&text) {
            "a value Argo CD writes".into()
        } else {
            format!("{text:?}, which Argo CD never writes")
        };
    }
    let sha = text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit());
    // `2026-07-12T10:01:07Z`: no fraction, no offset but Z.
    let whole_seconds =
        text.len() == 20 && text.ends_with('Z') && text.parse::<jiff::Timestamp>().is_ok();
    if sha {
        "a commit SHA".into()
    } else if whole_seconds {
        "a time, whole seconds, UTC".into()
    } else if text.is_empty() {
        "empty string".into()
    } else {
        "string".into()
    }
}

/// The shape of every field of an Application that liveproof reads, and of the ones the
/// judge's change time is read against (history), as [`shape_of`] says it. A list of resources
/// is told by the kind of entry: a core kind's (no API group) and a grouped kind's.
fn application_shape(app: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut field = |path: &str, known: Option<&[&str]>| {
        out.push((path.to_string(), shape_of(app.pointer(path), known)));
    };
    field("/spec/destination/namespace", None);
    field("/metadata/generation", None);
    field("/status/sync/status", Some(SYNC_STATUSES));
    field("/status/sync/revision", None);
    field("/status/health/status", Some(HEALTH));
    field("/status/reconciledAt", None);
    field("/status/operationState/phase", Some(PHASES));
    field("/status/operationState/message", None);
    field("/status/operationState/startedAt", None);
    field("/status/operationState/finishedAt", None);
    field("/status/operationState/operation/sync/revision", None);
    field("/status/operationState/syncResult/revision", None);
    field("/status/history", None);
    let entries = |path: &str| -> Vec<&Value> {
        app.pointer(path)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect()
    };
    // The newest history entry (Argo CD appends).
    if let Some(last) = entries("/status/history").last() {
        for key in ["revision", "deployStartedAt", "deployedAt", "id"] {
            out.push((
                format!("/status/history[last]/{key}"),
                shape_of(last.get(key), None),
            ));
        }
    }
    for (list, keys, codes) in [
        (
            "/status/resources",
            &["group", "version", "kind", "namespace", "name", "status"][..],
            SYNC_STATUSES,
        ),
        (
            "/status/operationState/syncResult/resources",
            &[
                "group",
                "version",
                "kind",
                "namespace",
                "name",
                "status",
                "message",
            ][..],
            RESULT_CODES,
        ),
    ] {
        let items = entries(list);
        out.push((list.to_string(), format!("{} entries", items.len().min(1))));
        for (class, core) in [("core kind", true), ("grouped kind", false)] {
            let item = items.iter().find(|r| {
                let group = r.get("group").and_then(Value::as_str).unwrap_or_default();
                group.is_empty() == core
            });
            let Some(item) = item else {
                out.push((format!("{list}[{class}]"), "absent".into()));
                continue;
            };
            for key in keys {
                let known = (*key == "status").then_some(codes);
                out.push((
                    format!("{list}[{class}]/{key}"),
                    shape_of(item.get(*key), known),
                ));
            }
        }
    }
    out
}

/// Story 7 (issue 38): the simulator's Argo CD objects are what the real application-controller writes,
/// where liveproof reads them. Argo CD syncs a commit on the real control plane; the
/// Application it wrote is compared, field by field liveproof reads (sync, operation,
/// health, the resources it followed, the history), with the Application of every Argo CD
/// story of the corpus as the simulator serves it: the same fields present, of the same
/// shape — a commit SHA, a whole-second UTC time, a value Argo CD writes — not the same
/// values, which differ by story. And the API: Argo CD's Application CRD has no `/status`
/// subresource, so status is written (and moves the generation) through the main endpoint on
/// the real server and on the simulator alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_7_the_simulators_argo_cd_objects_are_what_the_real_controller_writes() {
    use liveproof_e2e::control_plane::client_for;
    use serde_json::json;

    let argo = ArgoWorld::start().await;
    let (v1, _) = argo.world.two_builds("acme/shop").await;
    let first = argo.push_shop(&v1, "shop v1");
    argo.world
        .apply(&argocd::application("shop", &argo.remote, "shop", "apps"));
    let real = argo.synced_to(&first).await;
    let want: std::collections::BTreeMap<String, String> =
        application_shape(&real).into_iter().collect();

    let stories: Vec<_> = liveproof_testkit::story::Story::all()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter(|s| s.name.contains("argocd"))
        .collect();
    assert!(stories.len() >= 4, "the corpus's Argo CD stories are gone");
    for story in stories {
        let ns = story.namespace();
        let sim = liveproof_testkit::SimCluster::from_file(&story.cluster_yaml(), &ns).await;
        let client = client_for(&sim.kubeconfig).await.expect("sim client");
        let name = story.args[0]
            .split_once('/')
            .map(|(_, n)| n.to_string())
            .expect("application/NAME");
        let path = format!("/apis/argoproj.io/v1alpha1/namespaces/{ns}/applications/{name}");
        let (code, mut body) = raw(&client, "GET", &path, None).await.expect("GET");
        assert_eq!(code, 200, "{}: GET {path}: {body:?}", story.name);
        let served = body.pop().unwrap_or_default();
        let got: std::collections::BTreeMap<String, String> =
            application_shape(&served).into_iter().collect();
        let differ: Vec<String> = got
            .keys()
            .chain(want.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter(|path| got.get(*path) != want.get(*path))
            .map(|path| {
                let absent = String::from("absent");
                let say = |m: &std::collections::BTreeMap<String, String>| {
                    m.get(path).unwrap_or(&absent).clone()
                };
                format!("{path}: {}, Argo CD wrote {}", say(&got), say(&want))
            })
            .collect();
        assert!(
            differ.is_empty(),
            "{}: the simulator's Application is not shaped as Argo CD v3.1.16 wrote it:\n{}\n\
             what Argo CD wrote:\n{}",
            story.name,
            differ.join("\n"),
            serde_json::to_string_pretty(&real["status"]).unwrap_or_default()
        );
    }

    // The API: status through the main endpoint, in a namespace Argo CD does not watch.
    let sim = liveproof_testkit::SimCluster::serve(
        liveproof_sim::Simulator::new()
            .with_objects(vec![
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "elsewhere"}}),
            ])
            .with_gitops_crds(),
        "elsewhere",
    )
    .await;
    argo.world.kubectl(&["create", "namespace", "elsewhere"]);
    let simulated = client_for(&sim.kubeconfig).await.expect("sim client");
    let apps = "/apis/argoproj.io/v1alpha1/namespaces/elsewhere/applications";
    let app = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "shop", "namespace": "elsewhere"},
        "spec": real["spec"].clone()});
    let status = json!({"status": real["status"].clone()});
    let mut answers = Vec::new();
    for client in [&argo.client, &simulated] {
        let post = raw(client, "POST", apps, Some(("application/json", &app)))
            .await
            .expect("POST");
        let patch = raw(
            client,
            "PATCH",
            &format!("{apps}/shop"),
            Some(("application/merge-patch+json", &status)),
        )
        .await
        .expect("PATCH");
        let subresource = raw(
            client,
            "PATCH",
            &format!("{apps}/shop/status"),
            Some(("application/merge-patch+json", &status)),
        )
        .await
        .expect("PATCH /status");
        let (_, discovery) = raw(client, "GET", "/apis/argoproj.io/v1alpha1", None)
            .await
            .expect("discovery");
        let served: Vec<Value> = discovery[0]["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| {
                r["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("applications"))
            })
            .map(|r| {
                json!([
                    r["name"],
                    r["singularName"],
                    r["namespaced"],
                    r["kind"],
                    r["shortNames"]
                ])
            })
            .collect();
        let created = &post.1[0];
        let patched = &patch.1[0];
        answers.push(json!({
            "POST": post.0,
            "generation after POST": created["metadata"]["generation"],
            "PATCH": patch.0,
            "generation after PATCH of status": patched["metadata"]["generation"],
            "status kept": application_shape(patched).into_iter().collect::<std::collections::BTreeMap<_, _>>() == want,
            "PATCH /status": subresource.0,
            "discovery": served,
        }));
    }
    assert_eq!(
        answers[1], answers[0],
        "the simulator (left) and the real API server (right) answer Argo CD's writes differently"
    );
}
