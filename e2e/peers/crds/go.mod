module liveproof.invalid/e2e/peers/crds

go 1.26.0

require (
	github.com/argoproj/argo-rollouts v1.10.1
	github.com/fluxcd/kustomize-controller v1.9.6
)
