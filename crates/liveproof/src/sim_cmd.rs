//! `liveproof sim`: serve a simulated Kubernetes API until interrupted.

use std::io::Write;

use liveproof_sim::Simulator;

use crate::cli::SimArgs;

pub async fn run(args: &SimArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    // Served as on a cluster with Flux and Argo CD installed, so `kubectl get hr` works empty too.
    let mut sim = Simulator::new().with_port(args.port).with_gitops_crds();
    if let Some(dir) = &args.fixtures {
        sim = sim.with_fixtures_dir(dir)?;
    }
    if args.demo {
        sim = sim.with_objects(crate::demo::story_before(
            jiff::Timestamp::now() - jiff::SignedDuration::from_hours(96),
        ));
    }
    let handle = sim.start().await?;
    writeln!(
        out,
        "serving a simulated Kubernetes API at {}",
        handle.url()
    )?;
    if let Some(path) = &args.kubeconfig_out {
        handle.write_kubeconfig(path, &args.namespace)?;
        writeln!(
            out,
            "kubeconfig written to {} (export KUBECONFIG={})",
            path.display(),
            path.display()
        )?;
    } else {
        write!(out, "{}", handle.kubeconfig_yaml(&args.namespace))?;
    }
    writeln!(out, "press Ctrl-C to stop")?;
    out.flush()?;
    tokio::signal::ctrl_c().await?;
    handle.shutdown().await;
    Ok(0)
}
