//! The real Kubernetes control plane and Helm, for tests: see `control_plane` (etcd,
//! kube-apiserver, kube-controller-manager built from pinned Go modules by
//! `e2e/build-peers.sh`) and `kubelet` (the stand-in for the kubelet and the scheduler that
//! these machines cannot run). The stories are in `tests/`.

pub mod control_plane;
pub mod kubelet;
/// The real registry (CNCF distribution, built by `cargo xtask`) and a pusher, from the testkit.
pub use liveproof_testkit::registry;

pub use control_plane::{ControlPlane, Peers};
pub use kube;
pub use kubelet::Kubelet;
