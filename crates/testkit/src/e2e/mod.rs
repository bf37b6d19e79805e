//! The real Kubernetes control plane and Helm, for tests (feature `e2e`, so that the crates
//! whose tests do not run them do not compile them): see `control_plane` (etcd, kube-apiserver,
//! kube-controller-manager built from pinned Go modules by `e2e/build-peers.sh`) and `kubelet`
//! (the stand-in for the kubelet and the scheduler that these machines cannot run),
//! `controllers` (Argo Rollouts, Flagger, Flux's source- and kustomize-controller and its test
//! git server, run as processes against it) and `argocd` (Argo CD's application-controller and
//! repo-server with a real Redis), and `world`, all of them together as a story runs in them.
//! The real registry is the testkit's [`crate::registry`]. The stories are in
//! `crates/liveproof/tests/real_*`.

pub mod argocd;
pub mod control_plane;
pub mod controllers;
pub mod kubelet;
pub mod world;

pub use control_plane::{ControlPlane, Peers};
pub use kube;
pub use kubelet::Kubelet;
