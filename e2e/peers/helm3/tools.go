//go:build tools

// Package peers pins the Helm 3 CLI the liveproof end-to-end tests install releases with.
package peers

import _ "helm.sh/helm/v3/cmd/helm"
