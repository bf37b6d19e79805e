//go:build tools

// Package peers pins Flux's source-controller, which the real-controller stories
// (crates/liveproof/tests/real_controllers.rs) run against; e2e/build-peers.sh builds it and
// copies its CRDs (config/crd/bases) out of the same module.
package peers

import _ "github.com/fluxcd/source-controller"
