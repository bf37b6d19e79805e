//go:build tools

// Package peers pins the Kubernetes control plane the liveproof end-to-end tests run against,
// and the kubectl of the same release the CLI and simulator tests compare with.
package peers

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
