#!/usr/bin/env bash
# Packages the static binaries ci/build-static.sh installed into the release assets:
#   OUT/liveproof-vVERSION-x86_64-unknown-linux-musl.tar.gz   liveproof, kubectl-liveproof, kubectl_complete-liveproof, LICENSE
#   OUT/liveproof-vVERSION-x86_64-unknown-linux-musl.tar.gz.sha256
#   OUT/liveproof.yaml                                        plugins/liveproof.yaml rendered for it (krew)
#
#   ci/package-release.sh BIN_DIR OUT_DIR
#
# VERSION is the workspace version (Cargo.toml). The archive is reproducible (sorted names,
# fixed owner and mtime), so its sha256, which the krew manifest pins, does not depend on when
# or where it was packed. Run by .github/workflows/release.yml and by the krew manifest test.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -ne 2 ]; then
  echo "usage: ci/package-release.sh BIN_DIR OUT_DIR   (BIN_DIR: where ci/build-static.sh installed)" >&2
  exit 2
fi
bin="$1"
out="$2"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml")"
[ -n "$version" ] || { echo "no version in [workspace.package] of $repo/Cargo.toml" >&2; exit 1; }
for f in "$bin/liveproof" "$bin/kubectl-liveproof" "$repo/LICENSE"; do
  [ -f "$f" ] || { echo "error: $f is missing" >&2; echo "hint: run ci/build-static.sh --root DIR and pass DIR/bin" >&2; exit 2; }
done

name="liveproof-v$version-x86_64-unknown-linux-musl"
mkdir -p "$out"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
install -m 0755 "$bin/liveproof" "$bin/kubectl-liveproof" "$repo/plugins/kubectl_complete-liveproof" "$stage/"
install -m 0644 "$repo/LICENSE" "$stage/"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
  -C "$stage" -cf - LICENSE kubectl-liveproof kubectl_complete-liveproof liveproof | gzip -n -9 > "$out/$name.tar.gz"
sha="$(sha256sum "$out/$name.tar.gz" | cut -d' ' -f1)"
echo "$sha  $name.tar.gz" > "$out/$name.tar.gz.sha256"
sed -e "s/@VERSION@/$version/g" -e "s/@SHA256_LINUX_AMD64@/$sha/g" \
  "$repo/plugins/liveproof.yaml" > "$out/liveproof.yaml"
if grep -n '@[A-Z0-9_]*@' "$out/liveproof.yaml" >&2; then
  echo "plugins/liveproof.yaml has a placeholder this script does not fill" >&2; exit 1
fi
echo "$out/$name.tar.gz"
