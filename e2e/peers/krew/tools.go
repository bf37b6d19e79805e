//go:build tools

// Package peers pins krew's own manifest validator (the one krew-index runs on every plugin
// manifest): e2e/build-peers.sh builds validate-krew-manifest from it, and the CI template
// tests validate plugins/liveproof.yaml, rendered with a real archive's sha256, with it.
package peers

import _ "sigs.k8s.io/krew/cmd/validate-krew-manifest"
