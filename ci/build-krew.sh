#!/usr/bin/env bash
# Builds krew itself (`kubectl krew`, the binary kubectl-krew) from its pinned Go module in
# e2e/krew, into a cache keyed by that pin, the way e2e/build-peers.sh builds the peers:
#
#   ci/build-krew.sh           build it if missing; print its bin directory (last line)
#   ci/build-krew.sh --check   print the bin directory if built, else fail saying so
#
# crates/liveproof/tests/release.rs calls it: krew's validator (validate-krew-manifest, a peer)
# installs the rendered krew manifest with it, for every platform. It is kept out of
# e2e/peers so that its pin is not part of the peers' cache key. Cold: about 50 CPU-seconds of Go
# build after the peers (most of its packages are already in Go's build cache) and its modules
# from the Go module proxy; warm: instant.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
mod="$here/e2e/krew"
export GOTOOLCHAIN=go1.27.3
key="$( { cd "$mod" && sha256sum go.mod go.sum tools.go; echo "GOTOOLCHAIN=$GOTOOLCHAIN"; } | sha256sum | cut -c1-16)"
cache="${LIVEPROOF_PEERS_CACHE:-$HOME/.cache/liveproof-peers}"
bin="$cache/krew-$key/bin"

case "${1:-}" in
  --check)
    if [ -x "$bin/kubectl-krew" ]; then echo "$bin"; exit 0; fi
    echo "missing: $bin/kubectl-krew (built from e2e/krew with Go); run ci/build-krew.sh" >&2
    exit 1
    ;;
  "") ;;
  *) echo "ci/build-krew.sh: unknown argument '$1'" >&2
     echo "usage: ci/build-krew.sh [--check]" >&2
     exit 2 ;;
esac

if [ -x "$bin/kubectl-krew" ]; then echo "$bin"; exit 0; fi
command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "error: go is not installed (krew is built from its Go module)" >&2; echo "hint: install Go 1.26 or newer and put it on PATH" >&2; exit 2; }
mkdir -p "$cache/krew-$key"
tmp="$(mktemp -d "$cache/krew-$key/build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
started=$SECONDS
(cd "$mod" && GOFLAGS="-trimpath -mod=readonly" go build -ldflags="-s -w" -o "$tmp/kubectl-krew" sigs.k8s.io/krew/cmd/krew)
echo "built kubectl-krew in $((SECONDS - started))s" >&2
mkdir -p "$bin"
# Atomic for a concurrent run: whichever rename lands, the binary is whole.
mv -f "$tmp/kubectl-krew" "$bin/kubectl-krew"
echo "$bin"
