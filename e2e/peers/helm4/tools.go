//go:build tools

// Package peers pins the Helm 4 CLI the liveproof end-to-end tests install releases with.
package peers

import _ "helm.sh/helm/v4/cmd/helm"
