//! The world the stories on the real control plane run in (`crates/liveproof/tests/real_*`):
//! the control plane, the real registry, the kubelet stand-in and any controllers a story
//! starts, with kubectl against it and bounded waits that show the cluster's state and every
//! component's log when they run out.

use std::time::Duration;

use liveproof_evidence::Check;

use super::controllers::Controller;
use super::{ControlPlane, Kubelet};
use crate::registry::RegistryServer;
use crate::Run;

/// A control plane, a registry and the kubelet stand-in resolving images in it.
pub struct World {
    /// Dropped (killed) first, before the plane they talk to.
    controllers: std::sync::Mutex<Vec<Controller>>,
    pub plane: ControlPlane,
    pub registry: RegistryServer,
    _kubelet: Kubelet,
}

impl World {
    pub async fn start() -> World {
        World::start_with(&[]).await
    }

    /// With more kube-apiserver flags.
    pub async fn start_with(apiserver_args: &[&str]) -> World {
        let plane = ControlPlane::start_with(apiserver_args)
            .await
            .unwrap_or_else(|e| panic!("the real control plane: {e:#}"));
        let registry = RegistryServer::start();
        let client = plane.client().await.expect("admin client");
        let kubelet = Kubelet::start(
            client.clone(),
            registry.client(Default::default()),
            vec![registry.host.clone()],
        )
        .await
        .unwrap_or_else(|e| panic!("kubelet stand-in: {e:#}"));
        World {
            controllers: std::sync::Mutex::new(Vec::new()),
            plane,
            registry,
            _kubelet: kubelet,
        }
    }

    /// Keeps `controller` running until the world ends; its log is part of [`World::state`].
    pub fn keep(&self, controller: anyhow::Result<Controller>) {
        let controller = controller.unwrap_or_else(|e| panic!("{e:#}"));
        self.controllers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(controller);
    }

    /// Two builds of `repo` pushed to the registry (`v1` = build-1, `v2` = build-2, each
    /// for two platforms): the before and after of a change, as image references.
    pub async fn two_builds(&self, repo: &str) -> (String, String) {
        (
            self.build(repo, "v1", "build-1").await,
            self.build(repo, "v2", "build-2").await,
        )
    }

    /// Build `build` of `repo` pushed to the registry as `tag` (for two platforms), as an
    /// image reference.
    pub async fn build(&self, repo: &str, tag: &str, build: &str) -> String {
        let pusher = self.registry.pusher();
        crate::registry::push_multiarch(&pusher, repo, tag, build).await;
        format!("{}/{repo}:{tag}", self.registry.host)
    }

    pub fn kubeconfig(&self) -> &str {
        self.plane.kubeconfig.to_str().expect("utf-8 path")
    }

    /// The real kubectl against this cluster; fails the test when it fails.
    pub fn kubectl(&self, args: &[&str]) -> String {
        self.kubectl_stdin(args, None)
    }

    pub fn kubectl_stdin(&self, args: &[&str], stdin: Option<&str>) -> String {
        crate::kubectl::run(&self.plane.kubeconfig, args, stdin)
    }

    pub fn apply(&self, yaml: &str) {
        self.kubectl_stdin(&["apply", "-f", "-"], Some(yaml));
    }

    /// Installs the CRDs in the file at `path` and waits until they are served. Server-side:
    /// the Rollout CRD is larger than client-side apply's annotation allows.
    pub fn install_crds(&self, path: &std::path::Path) {
        let path = path.to_str().expect("utf-8 path");
        self.kubectl(&["apply", "--server-side", "-f", path]);
        self.kubectl(&[
            "wait",
            "--for=condition=established",
            "--timeout=60s",
            "-f",
            path,
        ]);
    }

    /// Fails the test unless `run` exited `code`, showing its output and the cluster's state.
    pub fn expect_exit(&self, run: &Run, code: i32) {
        assert_eq!(
            run.code,
            code,
            "{}\n{}\n{}",
            run.stdout,
            run.stderr,
            self.state()
        );
    }

    /// `kubectl -n apps set image deploy/NAME app=IMAGE`.
    pub fn set_image(&self, deployment: &str, image: &str) {
        self.kubectl(&[
            "-n",
            "apps",
            "set",
            "image",
            &format!("deploy/{deployment}"),
            &format!("app={image}"),
        ]);
    }

    /// What the cluster holds, for a failure message: workloads, pods and events.
    pub fn state(&self) -> String {
        let mut out = String::new();
        for args in [
            &[
                "get",
                "nodes,deploy,sts,ds,rs,controllerrevisions,pods",
                "-A",
                "-o",
                "wide",
            ][..],
            &["get", "nodes,ds,pods", "-A", "-o", "yaml"][..],
            &["get", "events", "-A"][..],
        ] {
            out.push_str(&format!(
                "$ kubectl {}\n{}\n",
                args.join(" "),
                self.kubectl(args)
            ));
        }
        out.push_str(&format!(
            "kube-controller-manager log:\n{}",
            self.plane.log_tail("kube-controller-manager")
        ));
        let mut controllers = self.controllers.lock().unwrap_or_else(|e| e.into_inner());
        for controller in controllers.iter_mut() {
            let tail = controller.log_tail();
            out.push_str(&format!("\n{} log:\n{tail}", controller.name));
        }
        out
    }

    /// Waits (up to 60 s) until `target` in namespace apps reports `want` Ready replicas.
    pub async fn wait_ready(&self, target: &str, want: &str) {
        self.wait_field(
            target,
            "{.status.readyReplicas}",
            want,
            Duration::from_secs(60),
        )
        .await;
    }

    /// `kubectl -n apps get OBJECT -o jsonpath=JSONPATH` (`OBJECT` as `KIND/NAME`).
    pub fn field(&self, object: &str, jsonpath: &str) -> String {
        self.kubectl(&[
            "-n",
            "apps",
            "get",
            object,
            "-o",
            &format!("jsonpath={jsonpath}"),
        ])
    }

    /// Waits (up to `within`) until [`World::field`] prints `want`.
    pub async fn wait_field(&self, object: &str, jsonpath: &str, want: &str, within: Duration) {
        let jsonpath = format!("jsonpath={jsonpath}");
        self.wait_for(
            &["-n", "apps", "get", object, "-o", &jsonpath],
            want,
            within,
        )
        .await;
    }

    /// `ITEM` (a jsonpath on one pod) of each pod of `app=APP` in apps, a line each.
    pub fn pods(&self, app: &str, item: &str) -> String {
        self.kubectl(&[
            "-n",
            "apps",
            "get",
            "pods",
            "-l",
            &format!("app={app}"),
            "-o",
            &format!("jsonpath={{range .items[*]}}{item}{{\"\\n\"}}{{end}}"),
        ])
    }

    /// The image of the first container of each pod of `app=APP` in apps, a line each.
    pub fn pod_images(&self, app: &str) -> String {
        self.pods(app, "{.spec.containers[0].image}")
    }

    /// Polls `what` (a jsonpath of `kubectl get`) until it prints `want`, for up to `within`.
    pub async fn wait_for(&self, args: &[&str], want: &str, within: Duration) {
        let printed = crate::within_async(within, Duration::from_millis(250), || {
            std::future::ready((self.kubectl(args).trim() == want).then_some(()))
        })
        .await;
        if printed.is_none() {
            panic!(
                "kubectl {args:?} printed {:?}, not {want:?}, within {within:?}\n{}",
                self.kubectl(args),
                self.state()
            );
        }
    }
}

impl crate::cli::Kubeconfig for World {
    fn kubeconfig_path(&self) -> &std::path::Path {
        &self.plane.kubeconfig
    }
}

/// Now, in whole seconds (what Kubernetes records), as RFC 3339; a second later, so that
/// what starts after it is strictly after it.
pub async fn change_time() -> String {
    let now = jiff::Timestamp::now();
    let now = jiff::Timestamp::from_second(now.as_second()).expect("a time");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    now.to_string()
}

pub fn deployment(name: &str, image: &str, extra_spec: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: apps
spec:
  replicas: 3
  {extra_spec}
  strategy:
    type: RollingUpdate
    rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: {image}
"
    )
}

pub fn evidence(run: &Run, check: Check) -> liveproof_evidence::Evidence {
    let report = run.report();
    report
        .targets
        .iter()
        .flat_map(|t| t.evidence.iter())
        .find(|e| e.check == check)
        .cloned()
        .unwrap_or_else(|| panic!("no {check:?} in {}", run.stdout))
}
