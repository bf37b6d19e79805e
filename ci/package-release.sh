#!/usr/bin/env bash
# Packs the release assets, one flat directory that .github/workflows/release.yml attaches to
# the GitHub release as it is (gh release create … OUT/*):
#
#   ci/package-release.sh BIN_DIR OUT_DIR [TARGET]
#     the static binaries ci/build-static.sh --target TARGET installed into BIN_DIR/..:
#     OUT/liveproof-vVERSION-TARGET.tar.gz          liveproof, kubectl-liveproof,
#                                                   kubectl_complete-liveproof, LICENSE
#     OUT/liveproof-vVERSION-TARGET.tar.gz.sha256
#     TARGET: x86_64-unknown-linux-musl (default, krew's linux/amd64) or
#     aarch64-unknown-linux-musl (linux/arm64); the binary must be built for that CPU.
#
#   ci/package-release.sh --manifests OUT_DIR
#     once both archives are in OUT_DIR, what a user installs or applies without a clone:
#     OUT/liveproof.yaml                plugins/liveproof.yaml rendered for the archives (krew)
#     OUT/<name>.yaml                   each deploy/*.yaml, as it is (kubectl apply -f URL)
#     OUT/liveproof-deploy-vVERSION.tar.gz   all of deploy/ (integrations/ included)
#     OUT/liveproof-chart-VERSION.tgz   the Helm chart charts/liveproof (helm install URL)
#
# VERSION is the workspace version (Cargo.toml). Every archive is reproducible (sorted names,
# fixed owner and mtime, gzip without a name or time), so its sha256, which the krew manifest
# pins, does not depend on when or where it was packed. Run by .github/workflows/release.yml
# and by crates/liveproof/tests/release.rs.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
usage() {
  echo "usage: ci/package-release.sh BIN_DIR OUT_DIR [TARGET]   (BIN_DIR: where ci/build-static.sh installed)" >&2
  echo "       ci/package-release.sh --manifests OUT_DIR        (after both archives)" >&2
}
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml")"
[ -n "$version" ] || { echo "no version in [workspace.package] of $repo/Cargo.toml" >&2; exit 1; }

# The krew platforms: target triple, the template's placeholder for its sha256.
targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
declare -A placeholder=(
  [x86_64-unknown-linux-musl]=@SHA256_LINUX_AMD64@
  [aarch64-unknown-linux-musl]=@SHA256_LINUX_ARM64@
)
declare -A elf_machine=(
  [x86_64-unknown-linux-musl]="Advanced Micro Devices X86-64"
  [aarch64-unknown-linux-musl]="AArch64"
)
archive() { echo "liveproof-v$version-$1.tar.gz"; }

# tar DIR NAMES... > stdout, reproducibly.
pack() {
  local dir="$1"; shift
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --mode=go-w \
    -C "$dir" -cf - "$@" | gzip -n -9
}

if [ "${1:-}" = "--manifests" ]; then
  [ $# -eq 2 ] || { usage; exit 2; }
  out="$2"
  sed_args=(-e "s/@VERSION@/$version/g")
  for t in "${targets[@]}"; do
    a="$out/$(archive "$t")"
    if [ ! -f "$a" ]; then
      echo "error: $a is missing: the krew manifest pins every platform's archive" >&2
      echo "hint: ci/package-release.sh BIN_DIR $out $t first" >&2
      exit 2
    fi
    sed_args+=(-e "s/${placeholder[$t]}/$(sha256sum "$a" | cut -d' ' -f1)/g")
  done
  sed "${sed_args[@]}" "$repo/plugins/liveproof.yaml" > "$out/liveproof.yaml"
  if grep -n '@[A-Z0-9_]*@' "$out/liveproof.yaml" >&2; then
    echo "plugins/liveproof.yaml has a placeholder this script does not fill" >&2; exit 1
  fi
  # deploy/*.yaml one by one (release download URLs are flat: no directories), and the whole
  # of deploy/ as one archive for what sits in its subdirectories.
  for f in "$repo"/deploy/*.yaml; do
    install -m 0644 "$f" "$out/"
  done
  pack "$repo" deploy > "$out/liveproof-deploy-v$version.tar.gz"
  # As `helm package` lays a chart out (liveproof/Chart.yaml, …); the chart's version is the
  # workspace version (crates/liveproof/tests/controller_deploy.rs holds it so).
  pack "$repo/charts" liveproof > "$out/liveproof-chart-$version.tgz"
  echo "$out/liveproof.yaml"
  exit 0
fi

if [ $# -lt 2 ] || [ $# -gt 3 ]; then usage; exit 2; fi
bin="$1"
out="$2"
target="${3:-x86_64-unknown-linux-musl}"
if [ -z "${elf_machine[$target]:-}" ]; then
  echo "error: unknown TARGET '$target'" >&2
  echo "hint: one of ${targets[*]}" >&2
  exit 2
fi
exes=(liveproof kubectl-liveproof kubectl_complete-liveproof)
for f in "${exes[@]/#/$bin/}" "$repo/LICENSE"; do
  [ -f "$f" ] || { echo "error: $f is missing" >&2; echo "hint: run ci/build-static.sh --target $target --root DIR and pass DIR/bin" >&2; exit 2; }
done
# The archive is named for the CPU its binaries run on: an amd64 binary in the arm64 archive
# would install, then fail to start, on every arm64 machine.
for exe in "${exes[@]}"; do
  if ! readelf -hW "$bin/$exe" 2>/dev/null | grep -q "Machine: *${elf_machine[$target]}\$"; then
    echo "error: $bin/$exe is not a $target binary:" >&2
    readelf -hW "$bin/$exe" 2>&1 | grep -m1 'Machine\|Error' >&2 || true
    echo "hint: pass the bin directory of ci/build-static.sh --target $target" >&2
    exit 2
  fi
done

name="$(archive "$target")"
mkdir -p "$out"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
install -m 0755 "${exes[@]/#/$bin/}" "$stage/"
install -m 0644 "$repo/LICENSE" "$stage/"
pack "$stage" LICENSE "${exes[@]}" > "$out/$name"
sha="$(sha256sum "$out/$name" | cut -d' ' -f1)"
echo "$sha  $name" > "$out/$name.sha256"
echo "$out/$name"
