//go:build tools

// Package krew pins krew itself, the `kubectl krew` plugin: ci/build-krew.sh builds
// kubectl-krew from it, and crates/liveproof/tests/release.rs has krew's validator
// (validate-krew-manifest, a peer from e2e/peers/krew, the same krew version) install the
// rendered manifest on every platform with it. It lives outside e2e/peers so that it is not
// part of the peers' cache key: changing it rebuilds this one binary, not every peer.
package krew

import _ "sigs.k8s.io/krew/cmd/krew"
