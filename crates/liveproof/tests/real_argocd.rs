//! The stories on Argo CD's real controllers: the application-controller and the repo-server
//! built from the pinned module (`e2e/build-peers.sh`), a real Redis, and the project's git
//! server, run as processes beside the real control plane (crates/testkit/src/e2e/argocd.rs),
//! which is registered with Argo CD as a destination cluster by its URL. Argo CD moves the
//! objects; the tests only do what a person or a pipeline does (push a commit, let the push
//! webhook ask for a hard refresh) and verify. Every wait is bounded; a failed story shows the
//! Application, the cluster's state and every component's log.
//!
//! A missing peer fails these tests with the command that builds it; they never skip.

use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world;

use std::time::Duration;

use liveproof_evidence::{Check, Status, Verdict};
use liveproof_testkit::e2e::argocd::{self, ArgoCd};
use liveproof_testkit::e2e::control_plane::raw;
use liveproof_testkit::e2e::controllers::GitServer;
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
    client: liveproof_testkit::e2e::kube::Client,
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
        self.push(
            &[
                ("shop/deployment.yaml", deployment),
                ("shop/service.yaml", &service("")),
            ],
            message,
        )
    }

    /// Commits `files` (path under the repository, content) now and pushes the commit; its SHA.
    fn push(&self, files: &[(&str, &str)], message: &str) -> String {
        let now = jiff::Timestamp::now().to_string();
        for (path, content) in files {
            self.repo.file(path, content);
        }
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

    /// The committer time of `commit`, as liveproof reports times.
    fn committed(&self, commit: &str) -> String {
        git_at(
            &self.repo.path(),
            &["show", "-s", "--format=%cI", commit],
            "2026-07-12T10:00:00Z",
        )
        .parse::<jiff::Timestamp>()
        .expect("a committer time")
        .to_string()
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
        self.liveproof(&[
            "application/shop",
            "-n",
            argocd::NAMESPACE,
            "--commit",
            commit,
            "--image",
            image,
        ])
        .run()
        .await
    }

    /// `liveproof verify ARGS --repo R -o json` against the cluster, run in the repository (so
    /// that `-f` names its files).
    fn liveproof(&self, args: &[&str]) -> liveproof_testkit::cli::Cli {
        let repo = self.repo.path();
        common::liveproof()
            .arg("verify")
            .args(args)
            .args(&["--repo", repo.to_str().expect("utf-8")])
            .json()
            .current_dir(&repo)
            .on(&self.world)
    }

    /// What a hard refresh makes Argo CD write now: refreshes `shop` and waits until the
    /// controller has written the comparison and the health it made for it (it removes the
    /// refresh annotation as it writes them); the Application then.
    async fn assessed(&self) -> Value {
        argocd::refresh(&self.world.plane, "shop").unwrap_or_else(|e| panic!("{e:#}"));
        self.poll(
            "Argo CD's assessment of application/shop after a hard refresh",
            SYNCED_WITHIN,
            || async {
                let app = self.app().await;
                app.pointer("/metadata/annotations/argocd.argoproj.io~1refresh")
                    .is_none()
                    .then_some(app)
            },
        )
        .await
    }

    /// The pods of `app=NAME` in apps now.
    async fn pods(&self, name: &str) -> Vec<Value> {
        let path = format!("/api/v1/namespaces/apps/pods?labelSelector=app%3D{name}");
        match raw(&self.client, "GET", &path, None).await {
            Ok((200, list)) => list
                .first()
                .and_then(|l| l["items"].as_array())
                .cloned()
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// Waits until the pods of `app=NAME` are three, all Ready and running `image`: the old
    /// ones gone (Argo CD reports the app Healthy while they terminate).
    async fn running(&self, name: &str, image: &str) {
        self.running_pods(name, image, 3).await;
    }

    /// Waits until the pods of `app=NAME` are `count`, all Ready and running `image`, and no
    /// other.
    async fn running_pods(&self, name: &str, image: &str, count: usize) {
        let what = format!("{count} Ready pods of {name}, all running {image}, and no other");
        self.poll(&what, Duration::from_secs(60), || async {
            let pods = self.pods(name).await;
            let running = |pod: &Value| pod_image(pod) == image && ready(pod);
            (pods.len() == count && pods.iter().all(running)).then_some(())
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

/// Service `shop` in apps, with `labels` (a flow mapping's entries, or nothing).
fn service(labels: &str) -> String {
    let labels = if labels.is_empty() {
        String::new()
    } else {
        format!("\n  labels: {{{labels}}}")
    };
    format!(
        "apiVersion: v1
kind: Service
metadata:
  name: shop
  namespace: apps{labels}
spec:
  selector: {{app: shop}}
  ports:
  - {{name: http, port: 80, targetPort: 8080}}
"
    )
}

/// The image of a pod's first container.
fn pod_image(pod: &Value) -> &str {
    pod["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap_or_default()
}

/// Whether a pod is Ready.
fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Whether a pod is being deleted (its grace period under way).
fn terminating(pod: &Value) -> bool {
    pod.pointer("/metadata/deletionTimestamp").is_some()
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

/// Story 2 (issue 38) on the real Argo CD: commits queue behind the change. B (the change,
/// build v2) is synced; then C, which only labels the Service, is synced: C descends from B
/// and leaves the Deployment as B wrote it, so B is live — by the Application (`--commit B
/// --image v2`) and by B's manifest (`-f shop/deployment.yaml --commit B`). Then D changes the
/// same field (v2 → v3) and is synced: B is `superseded` (exit 4), not `not_live` (which would
/// roll D back), and the report names D, its image and its time, and says D is live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_2_a_later_commit_keeps_the_change_live_unless_it_replaced_it() {
    let argo = ArgoWorld::start().await;
    let (v1, v2) = argo.world.two_builds("acme/shop").await;
    let v3 = argo.world.build("acme/shop", "v3", "build-3").await;
    let first = argo.push_shop(&v1, "shop v1");
    argo.world
        .apply(&argocd::application("shop", &argo.remote, "shop", "apps"));
    argo.synced_to(&first).await;
    argo.running("shop", &v1).await;
    world::change_time().await;

    // B, the change: synced, its pods replace the old.
    let b = argo.push_shop(&v2, "shop v2");
    argocd::refresh(&argo.world.plane, "shop").unwrap_or_else(|e| panic!("{e:#}"));
    argo.synced_to(&b).await;
    argo.running("shop", &v2).await;
    world::change_time().await;

    // C labels the Service only: synced, the Deployment untouched.
    let c = argo.push(
        &[
            ("shop/deployment.yaml", &deployment("shop", &v2, "")),
            ("shop/service.yaml", &service("tier: web")),
        ],
        "shop: label the Service",
    );
    argocd::refresh(&argo.world.plane, "shop").unwrap_or_else(|e| panic!("{e:#}"));
    argo.synced_to(&c).await;
    argo.running("shop", &v2).await;
    let by_app = argo.verify(&b, &v2).await;
    let by_file = argo
        .liveproof(&["-f", "shop/deployment.yaml", "--commit", &b])
        .run()
        .await;
    for run in [&by_app, &by_file] {
        argo.world.expect_exit(run, 0);
        let report = run.report();
        assert_eq!(report.verdict, Verdict::Live, "{}", run.stdout);
        assert!(
            report.targets.iter().all(|t| t.superseded_by.is_none()),
            "{}",
            run.stdout
        );
    }
    // The Application's revision is C, which contains B.
    let revision = evidence(&by_app, Check::GitopsRevision);
    assert_eq!(revision.status, Status::Pass, "{}", by_app.stdout);
    assert!(
        revision.observed.contains(&c[..7]) || revision.observed.contains(&c),
        "{revision:?}"
    );
    world::change_time().await;

    // D changes the image again: synced, v3 replaces v2. B is superseded by D.
    let d = argo.push_shop(&v3, "shop v3");
    argocd::refresh(&argo.world.plane, "shop").unwrap_or_else(|e| panic!("{e:#}"));
    argo.synced_to(&d).await;
    argo.running("shop", &v3).await;
    let d_time = argo.committed(&d);
    let by_app = argo.verify(&b, &v2).await;
    let by_file = argo
        .liveproof(&["-f", "shop/deployment.yaml", "--commit", &b])
        .run()
        .await;
    for run in [&by_app, &by_file] {
        argo.world.expect_exit(run, 4);
        let report = run.report();
        assert_eq!(report.verdict, Verdict::Superseded, "{}", run.stdout);
        let shop = report
            .targets
            .iter()
            .find(|t| t.kind.name() == "Deployment")
            .expect("Deployment apps/shop");
        assert_eq!(shop.verdict, Verdict::Superseded, "{}", run.stdout);
        let by = shop.superseded_by.as_ref().expect("what superseded it");
        assert_eq!(by.commit.as_deref(), Some(&d[..7]), "{by:#?}");
        assert_eq!(by.images, std::slice::from_ref(&v3), "{by:#?}");
        assert_eq!(by.at.as_deref(), Some(d_time.as_str()), "{by:#?}");
        assert_eq!(by.live, Some(true), "D's pods run v3: {by:#?}");
    }
    let owner = by_app.report().targets[0].clone();
    assert_eq!(owner.kind.name(), "Application", "{}", by_app.stdout);
    let by = owner.superseded_by.expect("the Application names D");
    assert_eq!(by.revision.as_deref(), Some(d.as_str()), "{by:#?}");
    assert_eq!(by.commit.as_deref(), Some(&d[..7]), "{by:#?}");
}

/// Story 3 (issue 38) on the real Argo CD: an Application without an automated sync policy.
/// Argo CD compares the cluster with git and says OutOfSync, but syncs nothing until asked.
/// After the push and the webhook's refresh, Argo CD has found B (`sync.revision` B,
/// OutOfSync) and the cluster still runs A: `verify --commit B` is not live, and waiting does
/// not make it so — a bounded `--wait` runs out `not_live`. Then a sync is started through the
/// API, as `argocd app sync shop` does (the Application's `operation` set): a `--wait` under way
/// ends live once the operation has run and B's pods have replaced A's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_3_without_automated_sync_a_commit_is_live_only_after_a_sync_through_the_api() {
    let argo = ArgoWorld::start().await;
    let (v1, v2) = argo.world.two_builds("acme/shop").await;
    let first = argo.push_shop(&v1, "shop v1");
    argo.world.apply(&argocd::manual_application(
        "shop",
        &argo.remote,
        "shop",
        "apps",
    ));
    // Nothing is synced by itself: the app is OutOfSync, its resources missing.
    let what = format!("application/shop OutOfSync at {first}, no operation");
    let app = argo
        .poll(&what, SYNCED_WITHIN, || async {
            let app = argo.app().await;
            let at = |p: &str| app.pointer(p).and_then(Value::as_str);
            (at("/status/sync/status") == Some("OutOfSync")
                && at("/status/sync/revision") == Some(first.as_str()))
            .then_some(app)
        })
        .await;
    assert!(
        app.pointer("/status/operationState").is_none(),
        "Argo CD synced an app with no automated policy\n{}",
        argo.state().await
    );
    argocd::sync(&argo.world.plane, "shop", &first).unwrap_or_else(|e| panic!("{e:#}"));
    argo.synced_to(&first).await;
    argo.running("shop", &v1).await;
    world::change_time().await;

    // B pushed and found by Argo CD, not synced: OutOfSync at B.
    let second = argo.push_shop(&v2, "shop v2");
    argocd::refresh(&argo.world.plane, "shop").unwrap_or_else(|e| panic!("{e:#}"));
    let what = format!("application/shop OutOfSync at {second}");
    let app = argo
        .poll(&what, SYNCED_WITHIN, || async {
            let app = argo.app().await;
            let at = |p: &str| app.pointer(p).and_then(Value::as_str);
            (at("/status/sync/status") == Some("OutOfSync")
                && at("/status/sync/revision") == Some(second.as_str()))
            .then_some(app)
        })
        .await;
    assert_eq!(
        app.pointer("/status/operationState/syncResult/revision")
            .and_then(Value::as_str),
        Some(first.as_str()),
        "{}",
        argo.state().await
    );
    // Not live, and waiting does not make it so: nothing will sync it.
    let waited = argo
        .liveproof(&[
            "application/shop",
            "-n",
            argocd::NAMESPACE,
            "--commit",
            &second,
            "--image",
            &v2,
            "--wait",
            "--timeout",
            "15s",
        ])
        .run()
        .await;
    argo.world.expect_exit(&waited, 1);
    let report = waited.report();
    assert_eq!(report.verdict, Verdict::NotLive, "{}", waited.stdout);
    assert!(
        report.wait.as_ref().is_some_and(|w| w.timed_out),
        "{:?}",
        report.wait
    );
    let revision = evidence(&waited, Check::GitopsRevision);
    assert_eq!(revision.status, Status::Fail, "{}", waited.stdout);
    assert!(revision.observed.contains("OutOfSync"), "{revision:?}");
    // What to do: sync it (nothing else will), not look at the source, which has the commit.
    let step = report.targets[0]
        .next_step
        .as_ref()
        .map(|s| s.to_string())
        .unwrap_or_default();
    assert!(
        step.contains("only when asked")
            && step.contains("argocd app sync shop --app-namespace argocd"),
        "{step}"
    );
    // The cluster still runs A, all of it: the template and the pods are A's.
    for check in [Check::SpecReadback, Check::PodSpec] {
        assert_eq!(
            evidence(&waited, check).status,
            Status::Fail,
            "{check:?}: {}",
            waited.stdout
        );
    }

    // `argocd app sync shop`, while a verify waits.
    let waiting = argo
        .liveproof(&[
            "application/shop",
            "-n",
            argocd::NAMESPACE,
            "--commit",
            &second,
            "--image",
            &v2,
            "--wait",
            "--timeout",
            "3m",
        ])
        .timeout(Duration::from_secs(240))
        .run();
    let sync = async {
        // Once verify is watching.
        tokio::time::sleep(Duration::from_secs(3)).await;
        argocd::sync(&argo.world.plane, "shop", &second).unwrap_or_else(|e| panic!("{e:#}"));
    };
    let (run, ()) = tokio::join!(waiting, sync);
    argo.world.expect_exit(&run, 0);
    let report = run.report();
    assert_eq!(report.verdict, Verdict::Live, "{}", run.stdout);
    assert!(
        report.wait.as_ref().is_some_and(|w| !w.timed_out),
        "{:?}",
        report.wait
    );
    // The operation that made it live is the one the API started.
    let app = argo.app().await;
    let at = |p: &str| app.pointer(p).and_then(Value::as_str);
    assert_eq!(
        (
            at("/status/operationState/operation/initiatedBy/username"),
            at("/status/operationState/syncResult/revision"),
            at("/status/operationState/phase"),
        ),
        (Some("admin"), Some(second.as_str()), Some("Succeeded")),
        "{}",
        argo.state().await
    );
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

/// DaemonSet `shop` in apps running `image`, rolled only when its pods are deleted
/// (`OnDelete`); `env` is the container's env list (a flow sequence), or nothing.
fn daemonset(image: &str, env: &str) -> String {
    let env = if env.is_empty() {
        String::new()
    } else {
        format!("\n        env: {env}")
    };
    format!(
        "apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: shop
  namespace: apps
spec:
  updateStrategy:
    type: OnDelete
  selector:
    matchLabels: {{app: shop}}
  template:
    metadata:
      labels: {{app: shop}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: {image}{env}
"
    )
}

/// The container env that makes the kubelet stand-in crash-loop the container.
fn crashing() -> String {
    format!(
        "[{{name: {}, value: \"1\"}}]",
        liveproof_testkit::e2e::kubelet::CRASH_ENV
    )
}

/// Whether a pod's first container is waiting in `CrashLoopBackOff` after a restart.
fn crash_looping(pod: &Value) -> bool {
    let status = &pod["status"]["containerStatuses"][0];
    status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        && status["restartCount"].as_i64().unwrap_or_default() >= 1
}

/// What Argo CD says of `app`: sync status, synced revision, operation phase, health.
fn argo_says(app: &Value) -> [&str; 4] {
    [
        "/status/sync/status",
        "/status/sync/revision",
        "/status/operationState/phase",
        "/status/health/status",
    ]
    .map(|p| app.pointer(p).and_then(Value::as_str).unwrap_or_default())
}

/// Story 5 (issue 38) on the real Argo CD, a crash loop Argo CD calls Healthy: DaemonSet `shop`
/// rolls on delete (`OnDelete`), and Argo CD's health of such a DaemonSet is Healthy whatever
/// its pods do (gitops-engine's `health_daemonset.go`; argo-cd#11473). B (v2, whose container
/// crash-loops) is synced: Synced, Succeeded, Healthy, while both pods still run A. Not live:
/// old pods serve. An operator deletes one pod to roll it; the new pod crash-loops. Argo CD,
/// asked again, still says Synced and Healthy; liveproof says not live with the pods' evidence
/// (an old pod serving, the new one in CrashLoopBackOff), and `--wait` stops at once on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_5_a_crash_loop_argo_cd_reports_healthy_is_not_live() {
    let argo = ArgoWorld::start().await;
    let (v1, v2) = argo.world.two_builds("acme/shop").await;
    let files = |ds: &str| {
        [
            ("shop/daemonset.yaml", ds.to_string()),
            ("shop/service.yaml", service("")),
        ]
    };
    let push = |ds: String, message: &str| {
        let files = files(&ds);
        let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
        argo.push(&files, message)
    };
    let first = push(daemonset(&v1, ""), "shop v1");
    argo.world
        .apply(&argocd::application("shop", &argo.remote, "shop", "apps"));
    argo.synced_to(&first).await;
    argo.running_pods("shop", &v1, 2).await;
    world::change_time().await;

    // B: synced, and Healthy by Argo CD at once; no pod of B runs yet.
    let b = push(daemonset(&v2, &crashing()), "shop v2");
    argocd::refresh(&argo.world.plane, "shop").unwrap_or_else(|e| panic!("{e:#}"));
    argo.synced_to(&b).await;
    let app = argo.assessed().await;
    assert_eq!(
        argo_says(&app),
        ["Synced", b.as_str(), "Succeeded", "Healthy"],
        "{}",
        argo.state().await
    );
    let pods = argo.pods("shop").await;
    assert!(
        pods.len() == 2 && pods.iter().all(|p| pod_image(p) == v1 && ready(p)),
        "{}",
        argo.state().await
    );
    let unrolled = argo.verify(&b, &v2).await;
    argo.world.expect_exit(&unrolled, 1);
    assert_eq!(unrolled.report().verdict, Verdict::NotLive);
    let current = evidence(&unrolled, Check::PodsCurrent);
    assert_eq!(current.status, Status::Fail, "{}", unrolled.stdout);
    assert!(current.detail.contains("old revision"), "{current:?}");

    // An operator rolls one pod; B's pod crash-loops.
    let rolled = pods[0]["metadata"]["name"]
        .as_str()
        .expect("a pod name")
        .to_string();
    argo.world
        .kubectl(&["-n", "apps", "delete", "pod", &rolled, "--wait=false"]);
    let crashing_pod = argo
        .poll(
            "a pod of B crash-looping",
            Duration::from_secs(60),
            || async {
                argo.pods("shop")
                    .await
                    .into_iter()
                    .find(|p| pod_image(p) == v2 && crash_looping(p))
            },
        )
        .await;
    let crashing_name = crashing_pod["metadata"]["name"]
        .as_str()
        .unwrap_or_default();
    // Argo CD, asked after the crash loop began: still Synced and Healthy.
    let app = argo.assessed().await;
    assert_eq!(
        argo_says(&app),
        ["Synced", b.as_str(), "Succeeded", "Healthy"],
        "Argo CD no longer calls the crash loop Healthy: the story's premise is gone\n{}",
        argo.state().await
    );
    let run = argo.verify(&b, &v2).await;
    argo.world.expect_exit(&run, 1);
    assert_eq!(run.report().verdict, Verdict::NotLive, "{}", run.stdout);
    let current = evidence(&run, Check::PodsCurrent);
    assert_eq!(current.status, Status::Fail, "{}", run.stdout);
    assert!(
        current.detail.contains(crashing_name) && current.detail.contains("CrashLoopBackOff"),
        "{current:?}"
    );
    // Argo CD's Healthy was read, and is not the proof.
    let health = run
        .report()
        .targets
        .iter()
        .find(|t| t.kind.name() == "Application")
        .and_then(|t| {
            t.evidence
                .iter()
                .find(|e| e.check == Check::RolloutComplete)
                .cloned()
        })
        .expect("the Application's health");
    assert_eq!(health.status, Status::Pass, "{health:?}");
    assert!(health.observed.contains("Healthy"), "{health:?}");

    // Waiting will not fix a crash loop: `--wait` stops at once.
    let waited = argo
        .liveproof(&[
            "application/shop",
            "-n",
            argocd::NAMESPACE,
            "--commit",
            &b,
            "--image",
            &v2,
            "--wait",
            "--timeout",
            "3m",
        ])
        .run()
        .await;
    argo.world.expect_exit(&waited, 1);
    let report = waited.report();
    assert_eq!(report.verdict, Verdict::NotLive, "{}", waited.stdout);
    assert!(
        report.wait.as_ref().is_some_and(|w| !w.timed_out),
        "{:?}\n{}",
        report.wait,
        waited.stderr
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("--wait stopped") && n.contains("CrashLoopBackOff")),
        "{:?}",
        report.notes
    );
}

/// Story 5 (issue 38) on the real Argo CD, old pods Argo CD no longer counts (argo-cd#17408):
/// Argo CD's health of a Deployment counts the replicas the Deployment counts, and a pod in
/// its grace period is not one of them. With a 60-second grace period, B's rollout completes
/// while A's pods still terminate, running and Ready: Argo CD says Synced and Healthy, and
/// liveproof says not live, naming them (`Terminating, still running`); a `--wait` then ends
/// live once they are gone. Then C (v3) crash-loops: its rollout (maxSurge 1, maxUnavailable
/// 0) stops at the first new pod while B's keep serving; Argo CD says Progressing, liveproof
/// not live, and `--wait` stops at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_5_old_pods_argo_cd_no_longer_counts_are_not_live() {
    let argo = ArgoWorld::start().await;
    let (v1, v2) = argo.world.two_builds("acme/shop").await;
    let v3 = argo.world.build("acme/shop", "v3", "build-3").await;
    let slow_to_stop = |image: &str| {
        deployment("shop", image, "").replace(
            "terminationGracePeriodSeconds: 2",
            "terminationGracePeriodSeconds: 60",
        )
    };
    let first = argo.push_shop_manifest(&slow_to_stop(&v1), "shop v1");
    argo.world
        .apply(&argocd::application("shop", &argo.remote, "shop", "apps"));
    argo.synced_to(&first).await;
    argo.running("shop", &v1).await;
    world::change_time().await;

    // B: synced and Healthy by Argo CD while A's pods terminate, still running and Ready.
    let b = argo.push_shop_manifest(&slow_to_stop(&v2), "shop v2");
    argocd::refresh(&argo.world.plane, "shop").unwrap_or_else(|e| panic!("{e:#}"));
    let what = format!("application/shop Synced to {b} and Healthy while pods of A terminate");
    let app = argo
        .poll(&what, SYNCED_WITHIN, || async {
            let app = argo.app().await;
            let pods = argo.pods("shop").await;
            let new_ready = pods
                .iter()
                .filter(|p| pod_image(p) == v2 && ready(p) && !terminating(p))
                .count();
            let old_leaving = pods
                .iter()
                .any(|p| pod_image(p) == v1 && ready(p) && terminating(p));
            (synced(&app, &b) && new_ready == 3 && old_leaving).then_some(app)
        })
        .await;
    assert_eq!(
        argo_says(&app),
        ["Synced", b.as_str(), "Succeeded", "Healthy"]
    );
    let run = argo.verify(&b, &v2).await;
    let leaving: Vec<String> = argo
        .pods("shop")
        .await
        .iter()
        .filter(|p| pod_image(p) == v1 && terminating(p))
        .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    argo.world.expect_exit(&run, 1);
    assert_eq!(run.report().verdict, Verdict::NotLive, "{}", run.stdout);
    let current = evidence(&run, Check::PodsCurrent);
    assert_eq!(current.status, Status::Fail, "{}", run.stdout);
    assert!(
        current.detail.contains("Terminating, still running")
            && leaving.iter().any(|p| current.detail.contains(p.as_str())),
        "{current:?}\n{leaving:?}"
    );
    // Once they are gone, live: the wait ends there.
    let waited = argo
        .liveproof(&[
            "application/shop",
            "-n",
            argocd::NAMESPACE,
            "--commit",
            &b,
            "--image",
            &v2,
            "--wait",
            "--timeout",
            "3m",
        ])
        .timeout(Duration::from_secs(240))
        .run()
        .await;
    argo.world.expect_exit(&waited, 0);
    assert_eq!(waited.report().verdict, Verdict::Live, "{}", waited.stdout);
    world::change_time().await;

    // C crash-loops: B's pods keep serving; Argo CD says Progressing.
    let crash = deployment("shop", &v3, "").replace(
        "        image: ",
        &format!("        env: {}\n        image: ", crashing()),
    );
    let c = argo.push_shop_manifest(&crash, "shop v3");
    argocd::refresh(&argo.world.plane, "shop").unwrap_or_else(|e| panic!("{e:#}"));
    argo.poll("a pod of C crash-looping", SYNCED_WITHIN, || async {
        argo.pods("shop")
            .await
            .into_iter()
            .find(|p| pod_image(p) == v3 && crash_looping(p))
    })
    .await;
    let app = argo.assessed().await;
    assert_eq!(
        argo_says(&app),
        ["Synced", c.as_str(), "Succeeded", "Progressing"],
        "{}",
        argo.state().await
    );
    let waited = argo
        .liveproof(&[
            "application/shop",
            "-n",
            argocd::NAMESPACE,
            "--commit",
            &c,
            "--image",
            &v3,
            "--wait",
            "--timeout",
            "3m",
        ])
        .run()
        .await;
    argo.world.expect_exit(&waited, 1);
    let report = waited.report();
    assert_eq!(report.verdict, Verdict::NotLive, "{}", waited.stdout);
    assert!(
        report.wait.as_ref().is_some_and(|w| !w.timed_out),
        "{:?}",
        report.wait
    );
    let current = evidence(&waited, Check::PodsCurrent);
    assert_eq!(current.status, Status::Fail, "{}", waited.stdout);
    assert!(
        current.detail.contains("old revision") && current.detail.contains("CrashLoopBackOff"),
        "{current:?}"
    );
}

/// Story 6 (issue 38) on the real Argo CD: `selfHeal`. Someone changes the running image by
/// hand (`kubectl set image`, after T); the Deployment rolls a ReplicaSet of it, Argo CD sees
/// the Deployment differ from git and syncs it back (a self-heal: an automated sync of that
/// resource alone). Verifying the hand-made change (`verify deployment/shop --image …:hand
/// --since T`) is never live: `not_live`, and not `superseded`, since git's template brings A's
/// ReplicaSet, made before T, back — an undo, as `kubectl rollout undo` is — and the evidence
/// says the change was written and put back (naming both ReplicaSets), not that nothing wrote
/// it, with the rollout history to look at rather than an apply that Argo CD would undo again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_6_a_hand_made_change_self_heal_reverted_is_never_live() {
    let argo = ArgoWorld::start().await;
    let (v1, _) = argo.world.two_builds("acme/shop").await;
    let hand = argo.world.build("acme/shop", "hand", "build-hand").await;
    let first = argo.push_shop(&v1, "shop v1");
    let app = argocd::application("shop", &argo.remote, "shop", "apps") + "      selfHeal: true\n";
    argo.world.apply(&app);
    argo.synced_to(&first).await;
    argo.running("shop", &v1).await;
    let before = argo.app().await;
    let since = world::change_time().await;

    argo.world.kubectl(&[
        "-n",
        "apps",
        "set",
        "image",
        "deployment/shop",
        &format!("app={hand}"),
    ]);
    // Argo CD syncs it back: a new operation, git's template, git's pods.
    let what = "application/shop self-healed: a new operation synced it back";
    let healed = argo
        .poll(what, SYNCED_WITHIN, || async {
            let app = argo.app().await;
            let started = app
                .pointer("/status/operationState/startedAt")
                .and_then(Value::as_str)?;
            let earlier = before
                .pointer("/status/operationState/startedAt")
                .and_then(Value::as_str)?;
            (synced(&app, &first) && started != earlier).then_some(app)
        })
        .await;
    argo.running("shop", &v1).await;
    // The hand-made change did roll out: a ReplicaSet of its own, made after T.
    let made = argo.world.kubectl(&[
        "-n",
        "apps",
        "get",
        "rs",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name} {.spec.template.spec.containers[0].image}{\"\\n\"}{end}",
    ]);
    let by_hand = made
        .lines()
        .find_map(|line| {
            let (name, image) = line.split_once(' ')?;
            (image == hand).then(|| name.to_string())
        })
        .unwrap_or_else(|| {
            panic!("the hand-made change never made a ReplicaSet: the story tells nothing\n{made}")
        });

    let run = common::liveproof()
        .args(&["verify", "deployment/shop", "-n", "apps", "--image", &hand])
        .since(&since)
        .json()
        .on(&argo.world)
        .run()
        .await;
    // Not live, and not superseded either: Argo CD put git's template back, and the Deployment
    // controller brought A's ReplicaSet (made before T) back with it — an undo, not a later
    // change (`kubectl rollout undo` does the same). The evidence says the change was written
    // and put back, and why not to apply it again.
    argo.world.expect_exit(&run, 1);
    let report = run.report();
    assert_eq!(report.verdict, Verdict::NotLive, "{}", run.stdout);
    let shop = &report.targets[0];
    assert!(shop.superseded_by.is_none(), "{}", run.stdout);
    let readback = evidence(&run, Check::SpecReadback);
    assert_eq!(readback.status, Status::Fail, "{}", run.stdout);
    assert!(readback.observed.contains(&v1), "{readback:?}");
    assert!(
        readback
            .detail
            .starts_with("the Deployment carried the change and was put back: ReplicaSet ")
            && readback.detail.contains(&format!("apps/{by_hand} "))
            && readback.detail.contains("serves again"),
        "{readback:?}\n{}",
        argo.state().await
    );
    assert_eq!(evidence(&run, Check::PodSpec).status, Status::Fail);
    let step = shop
        .next_step
        .as_ref()
        .map(|s| s.to_string())
        .unwrap_or_default();
    assert!(
        step.starts_with("do not apply it again by hand")
            && step.contains("-n apps rollout history deployment/shop"),
        "{step}"
    );
    // What Argo CD did: a self-heal, an automated sync of the Deployment alone at A.
    let op = &healed["status"]["operationState"]["operation"];
    assert_eq!(
        (
            op["initiatedBy"]["automated"].as_bool(),
            op["sync"]["revision"].as_str(),
            op["sync"]["resources"][0]["kind"].as_str(),
        ),
        (Some(true), Some(first.as_str()), Some("Deployment")),
        "{}",
        argo.state().await
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
    use liveproof_testkit::e2e::control_plane::client_for;
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

/// Story 8: an Application whose manifests include a Verification is Healthy only once that
/// Verification's status says Ready — the Argo CD health check shipped in
/// `deploy/integrations/argocd/`, run by the real application-controller. Not judged yet and
/// waiting are Progressing, Ready is Healthy, a final failure is Degraded; the statuses are
/// written by hand, as `status_from` makes them (no liveproof controller runs here). Argo CD
/// 3 keeps each resource's health message out of the Application (it is not persisted), so the
/// messages are checked in tests/controller_deploy.rs with `argocd admin`; here the
/// Application's own health, which without the check would be Healthy at once (Argo CD knows
/// no health for a custom resource).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_8_an_application_holding_a_verification_is_healthy_only_once_it_is_ready() {
    use liveproof::controller::{status_from, status_refused, Refusal, RefusalReason};

    let argo = ArgoWorld::start().await;
    let root = liveproof_testkit::e2e::control_plane::repo_root();
    argo.world
        .install_crds(&root.join("deploy/verification-crd.yaml"));
    // The shipped snippet, merged into Argo CD's settings as its README says.
    let snippet: serde_norway::Value = serde_norway::from_str(
        &std::fs::read_to_string(root.join("deploy/integrations/argocd/argocd-cm.yaml"))
            .expect("the snippet"),
    )
    .expect("YAML");
    let data = serde_json::to_value(&snippet["data"]).expect("JSON");
    let patch = serde_json::json!({ "data": data }).to_string();
    argo.world.kubectl(&[
        "-n",
        argocd::NAMESPACE,
        "patch",
        "configmap",
        "argocd-cm",
        "--type=merge",
        "-p",
        &patch,
    ]);

    let verification = "apiVersion: liveproof.dev/v1alpha1
kind: Verification
metadata:
  name: shop-v1
  namespace: apps
spec:
  targets: [deploy/shop]
  since: \"2026-07-12T10:00:00Z\"
";
    let commit = argo.push(&[("shop/verification.yaml", verification)], "shop's proof");
    argo.world
        .apply(&argocd::application("shop", &argo.remote, "shop", "apps"));

    let health_is = |want: &'static str| {
        let argo = &argo;
        let commit = commit.clone();
        async move {
            argo.poll(
                &format!("application/shop synced to {commit}, its Verification {want}"),
                SYNCED_WITHIN,
                || async {
                    let app = argo.app().await;
                    let synced = app.pointer("/status/sync/revision").and_then(Value::as_str)
                        == Some(commit.as_str());
                    let health = app.pointer("/status/health/status").and_then(Value::as_str);
                    (synced && health == Some(want)).then_some(())
                },
            )
            .await
        }
    };
    // Not judged yet: the CRD's default status. Progressing, not Healthy.
    health_is("Progressing").await;

    let write = |status: &liveproof::controller::VerificationStatus| {
        let body = serde_json::json!({ "status": status }).to_string();
        argo.world.kubectl(&[
            "-n",
            "apps",
            "patch",
            "verification",
            "shop-v1",
            "--subresource=status",
            "--type=merge",
            "-p",
            &body,
        ]);
    };
    let report = |verdict: &str| -> liveproof_evidence::Report {
        let mut target = serde_json::json!({
            "kind": "Deployment", "namespace": "apps", "name": "shop", "verdict": verdict,
            "evidence": [{
                "check": "pods_current", "status": if verdict == "live" { "pass" } else { "fail" },
                "observed": "o", "expected": "e", "source": "apps/Pod/shop-1 .metadata.labels",
                "detail": "2 pods of an old revision serve",
                "source_ref": {"apiVersion": "v1", "kind": "Pod", "namespace": "apps",
                               "name": "shop-1", "field": ".metadata.labels"}
            }],
        });
        if verdict == "live" {
            target["live_since"] = serde_json::json!("2026-07-12T10:03:10Z");
        }
        serde_json::from_value(serde_json::json!({
            "schema": "liveproof/v1", "verdict": verdict, "change": {}, "targets": [target],
        }))
        .expect("a report")
    };
    let now = jiff::Timestamp::now();

    // Waiting: still Progressing, the reason from the Ready condition.
    let waiting = status_from(&report("not_live"), 1, now, None);
    write(&waiting);
    // Still Progressing while it waits.
    health_is("Progressing").await;

    // Live: the Application turns Healthy.
    let live = status_from(&report("live"), 1, now, Some(&waiting));
    write(&live);
    health_is("Healthy").await;

    // A final failure: Degraded, with the Stalled condition's message.
    let stalled = status_refused(
        &Refusal {
            reason: RefusalReason::TargetNotFound { timed_out: true },
            message: "deployment shop not found in namespace apps".into(),
            hint: None,
        },
        1,
        now,
        Some(&live),
    );
    write(&stalled);
    health_is("Degraded").await;
}
