//go:build tools

// Package peers pins the Argo Rollouts controller the real-controller stories
// (crates/liveproof/tests/real_controllers.rs) run against; e2e/build-peers.sh builds it and
// copies its CRDs (manifests/crds) out of the same module.
package peers

import _ "github.com/argoproj/argo-rollouts/cmd/rollouts-controller"
