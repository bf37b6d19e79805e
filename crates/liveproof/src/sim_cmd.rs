//! `liveproof sim`: serve a simulated Kubernetes API until interrupted, with the built-in
//! Deployment controller on so `kubectl set image`/`apply`/`rollout undo` roll out as on a
//! cluster. [`start`] returns what is serving ([`SimServing`], which the CLI prints) and
//! [`Running::until_interrupted`] serves it until Ctrl-C.

use liveproof_report::{DemoImages, SimServing};
use liveproof_sim::{SimHandle, Simulator, WatchExpiry};

use crate::cli::SimArgs;

/// A simulator serving, and what it needs kept until it stops.
pub struct Running {
    /// What the CLI says about it.
    pub serving: SimServing,
    handle: SimHandle,
    /// The directory of a kubeconfig not written to `--kubeconfig-out`: removed on exit.
    _scratch: Option<tempfile::TempDir>,
}

impl Running {
    /// Serves until Ctrl-C, then stops.
    pub async fn until_interrupted(self) -> anyhow::Result<()> {
        tokio::signal::ctrl_c().await?;
        self.handle.shutdown().await;
        Ok(())
    }
}

/// Starts the simulator `args` describe and writes its kubeconfig.
pub async fn start(args: &SimArgs) -> anyhow::Result<Running> {
    // Whole seconds, as the API server writes times: the printed --since must parse back.
    // (rounded down, so a pod started in this very second is still after it).
    // One second earlier still: a `kubectl set image` in the same second as the start rolls
    // pods whose startedAt (whole seconds) would otherwise equal it, and equal is not after.
    let started = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second() - 1)?;
    // Served as on a cluster with Flux and Argo CD installed, so `kubectl get hr` works empty too.
    let mut sim = Simulator::new()
        .with_port(args.port)
        .with_gitops_crds()
        .with_controllers();
    if let Some(dir) = &args.fixtures {
        sim = sim.with_objects(liveproof_gather::offline::read_objects(dir)?);
    }
    if args.demo {
        sim = sim.with_objects(crate::demo::story_before(
            started - jiff::SignedDuration::from_hours(96),
        ));
    }
    // The demo's objects live in its namespace: a kubeconfig pointing elsewhere shows nothing.
    let namespace = match (&args.namespace, args.demo) {
        (Some(ns), _) => ns.clone(),
        (None, true) => crate::demo::NS.to_owned(),
        (None, false) => "default".to_owned(),
    };
    // Without --kubeconfig-out the kubeconfig lives in a directory removed on exit.
    let (kubeconfig, scratch) = match &args.kubeconfig_out {
        Some(path) => (path.clone(), None),
        None => {
            let scratch = tempfile::Builder::new()
                .prefix("liveproof-sim-")
                .tempdir()?;
            (scratch.path().join("kubeconfig"), Some(scratch))
        }
    };
    let handle = sim.start().await?;
    let faults = handle.faults();
    let mut injected = Vec::new();
    if let Some(latency) = args.latency {
        faults.set_latency(latency);
        injected.push(format!("every response delayed {latency:?}"));
    }
    if let Some(fail) = args.fail_requests {
        let retry_after = (fail.code == 429).then_some(1);
        faults.fail_next(fail.count, fail.code, retry_after);
        injected.push(format!(
            "the next {} request(s) answer {}",
            fail.count, fail.code
        ));
    }
    if let Some(n) = args.close_watches_after {
        faults.close_watches_after(n);
        injected.push(format!("watches closed after {n} event(s)"));
    }
    if args.expire_watches {
        faults.expire_watches(u64::MAX, WatchExpiry::InStream);
        injected.push("every watch expires (410)".to_owned());
    }
    crate::output::write_requested(
        &kubeconfig,
        handle.kubeconfig_yaml(&namespace).as_bytes(),
        crate::output::Readable::ByOwner,
    )
    .map_err(|e| {
        liveproof_evidence::hint::HintedMessage::new(
            format!(
                "cannot write the kubeconfig to {}: {e}",
                kubeconfig.display()
            ),
            "pass --kubeconfig-out PATH in a writable directory",
        )
    })?;
    if !injected.is_empty() {
        tracing::warn!("fault injection: {}", injected.join("; "));
    }
    let serving = SimServing {
        url: handle.url().to_string(),
        kubeconfig,
        namespace,
        started: started.to_string(),
        demo: args.demo.then(|| DemoImages {
            old: crate::demo::OLD_IMAGE.to_owned(),
            new: crate::demo::NEW_IMAGE.to_owned(),
        }),
    };
    Ok(Running {
        serving,
        handle,
        _scratch: scratch,
    })
}
