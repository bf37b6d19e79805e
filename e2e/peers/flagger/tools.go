//go:build tools

// Package peers pins the Flagger controller the real-controller stories
// (crates/liveproof/tests/real_controllers.rs) run against with the `kubernetes` provider (no
// mesh); e2e/build-peers.sh builds it and copies its CRDs (artifacts/flagger/crd.yaml) out of
// the same module.
package peers

import _ "github.com/fluxcd/flagger/cmd/flagger"
