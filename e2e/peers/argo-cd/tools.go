//go:build tools

// Package peers pins Argo CD, whose application-controller and repo-server the Argo CD stories
// (crates/liveproof/tests/real_argocd.rs) run against: one binary (`./cmd`) that is each by the
// name it is started under (ARGOCD_BINARY_NAME). e2e/build-peers.sh builds it and copies its
// Application and AppProject CRDs (manifests/crds) out of the same module.
package peers

import _ "github.com/argoproj/argo-cd/v3/cmd"
