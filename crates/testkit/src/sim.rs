//! The Kubernetes API simulator as a test's cluster: a [`Simulator`] serving objects, and a
//! kubeconfig pointing at it that liveproof, kubectl or the gatherer read.

use std::path::{Path, PathBuf};

use liveproof_sim::{SimHandle, Simulator};

use crate::cli::Kubeconfig;

/// A running simulator and a kubeconfig for it (token auth, `namespace` as its namespace).
pub struct SimCluster {
    pub sim: SimHandle,
    pub kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl SimCluster {
    /// A simulator serving `objects`.
    pub async fn start(objects: Vec<serde_json::Value>, namespace: &str) -> SimCluster {
        SimCluster::serve(Simulator::new().with_objects(objects), namespace).await
    }

    /// A simulator serving what `path` holds (a file or folder of manifests, as `--from`
    /// reads them).
    pub async fn from_file(path: &Path, namespace: &str) -> SimCluster {
        let objects = liveproof_gather::offline::read_objects(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        SimCluster::start(objects, namespace).await
    }

    /// `simulator` as the test configured it (faults, controllers, objects), started.
    pub async fn serve(simulator: Simulator, namespace: &str) -> SimCluster {
        let sim = simulator.start().await.expect("simulator starts");
        SimCluster::of(sim, namespace)
    }

    /// A kubeconfig for a simulator already running.
    pub fn of(sim: SimHandle, namespace: &str) -> SimCluster {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig, namespace)
            .expect("kubeconfig written");
        SimCluster {
            sim,
            kubeconfig,
            _dir: dir,
        }
    }

    /// The kubeconfig's path, as an argument.
    pub fn kubeconfig(&self) -> &str {
        self.kubeconfig.to_str().expect("utf-8 path")
    }
}

impl Kubeconfig for SimCluster {
    fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }
}
