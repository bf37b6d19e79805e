//! `liveproof sim`: where the simulated API serves and how to try it.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::{Format, Outcome, Render, TextStyle};

/// A simulator serving, said once before it waits for Ctrl-C.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimServing {
    /// The API's URL.
    pub url: String,
    /// The kubeconfig written for it, and its default namespace.
    pub kubeconfig: PathBuf,
    pub namespace: String,
    /// A time just before the start, as `--since` takes it (whole seconds).
    pub started: String,
    /// With `--demo`: the story's images, old and new.
    pub demo: Option<DemoImages>,
}

/// The demo story's images.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoImages {
    pub old: String,
    pub new: String,
}

impl Render for SimServing {
    const FORMATS: &'static [Format] = &[Format::Text];

    fn render(&self, format: Format, _: TextStyle, out: &mut dyn Write) -> io::Result<()> {
        if format != Format::Text {
            return Err(crate::unsupported(
                "the simulator's banner",
                format,
                Self::FORMATS,
            ));
        }
        let kc = self.kubeconfig.display();
        let (namespace, started) = (&self.namespace, &self.started);
        writeln!(
            out,
            "serving a simulated Kubernetes API at {}\n\
             kubeconfig: {kc} (namespace {namespace})\n\
             Deployments changed through the API roll out as on a cluster (new ReplicaSet, pods \
             started now, old pods terminated).\n",
            self.url
        )?;
        match &self.demo {
            Some(DemoImages { old, new }) => writeln!(
                out,
                "Try it (the demo: inventory still runs {old}):\n\
                 \x20 export KUBECONFIG={kc}\n\
                 \x20 kubectl get deploy,pods\n\
                 \x20 liveproof verify deploy/inventory --image {new} --since {started}        # not_live\n\
                 \x20 kubectl set image deploy/inventory app={new}\n\
                 \x20 liveproof verify deploy/inventory --image {new} --since {started} --wait --timeout 60s   # live\n\
                 \x20 kubectl rollout undo deploy/inventory\n",
            )?,
            None => writeln!(
                out,
                "Try it:\n\
                 \x20 export KUBECONFIG={kc}\n\
                 \x20 kubectl get deploy,pods\n\
                 \x20 kubectl set image deploy/NAME CONTAINER=IMAGE\n\
                 \x20 liveproof verify deploy/NAME --image IMAGE --since {started} --wait --timeout 60s\n"
            )?,
        }
        writeln!(out, "press Ctrl-C to stop")
    }
}

impl Outcome for SimServing {
    /// Serving until interrupted is the simulator's success.
    fn exit_code(&self) -> u8 {
        0
    }
}
