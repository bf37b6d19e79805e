//! `liveproof sim`: serve a simulated Kubernetes API until interrupted, with the built-in
//! Deployment controller on so `kubectl set image`/`apply`/`rollout undo` roll out as on a
//! cluster.

use std::io::Write;

use liveproof_sim::{Simulator, WatchExpiry};

use crate::cli::SimArgs;

pub async fn run(args: &SimArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
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
    let scratch;
    let kubeconfig = match &args.kubeconfig_out {
        Some(path) => path.clone(),
        None => {
            scratch = tempfile::Builder::new()
                .prefix("liveproof-sim-")
                .tempdir()?;
            scratch.path().join("kubeconfig")
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
            anyhow::anyhow!(
                "cannot write the kubeconfig to {}: {e}\nhint: pass --kubeconfig-out PATH in a writable directory",
                kubeconfig.display()
            )
        })?;
    let kc = kubeconfig.display();
    if !injected.is_empty() {
        tracing::warn!("fault injection: {}", injected.join("; "));
    }
    writeln!(
        out,
        "serving a simulated Kubernetes API at {}\n\
         kubeconfig: {kc} (namespace {namespace})\n\
         Deployments changed through the API roll out as on a cluster (new ReplicaSet, pods \
         started now, old pods terminated).\n",
        handle.url()
    )?;
    if args.demo {
        let new_image = crate::demo::NEW_IMAGE;
        writeln!(
            out,
            "Try it (the demo: inventory still runs {old}):\n\
             \x20 export KUBECONFIG={kc}\n\
             \x20 kubectl get deploy,pods\n\
             \x20 liveproof verify deploy/inventory --image {new_image} --since {started}        # not_live\n\
             \x20 kubectl set image deploy/inventory app={new_image}\n\
             \x20 liveproof verify deploy/inventory --image {new_image} --since {started} --wait --timeout 60s   # live\n\
             \x20 kubectl rollout undo deploy/inventory\n",
            old = crate::demo::OLD_IMAGE,
        )?;
    } else {
        writeln!(
            out,
            "Try it:\n\
             \x20 export KUBECONFIG={kc}\n\
             \x20 kubectl get deploy,pods\n\
             \x20 kubectl set image deploy/NAME CONTAINER=IMAGE\n\
             \x20 liveproof verify deploy/NAME --image IMAGE --since {started} --wait --timeout 60s\n"
        )?;
    }
    writeln!(out, "press Ctrl-C to stop")?;
    out.flush()?;
    tokio::signal::ctrl_c().await?;
    handle.shutdown().await;
    Ok(0)
}
