module liveproof.invalid/e2e/peers/crds

go 1.26.1

require (
	github.com/argoproj/argo-rollouts v1.10.1
	github.com/fluxcd/flagger v1.36.1
	github.com/fluxcd/kustomize-controller v1.9.6
	knative.dev/serving v0.51.0
)
