//go:build tools

// Package peers pins the upstream modules whose CustomResourceDefinitions the CI templates in
// deploy/ are dry-run against: Argo Rollouts (AnalysisTemplate) and Flux's kustomize-controller
// (Kustomization); and those the simulator serves (crates/sim/crds, held byte-identical to
// these): Argo Rollouts' Rollout, Flagger's Canary, Knative Serving's Service. e2e/build-peers.sh copies the CRD files out of them; nothing is built, and
// nothing is imported (their packages would pull all of Kubernetes into go.sum).
package peers
