#!/usr/bin/env bash
# Builds liveproof as a static Linux binary (musl) exactly the way a user installs it without a
# clone — `cargo install --locked --git URL liveproof` — then proves the result is static and
# that it runs: `--version` reports the workspace version and `demo` comes out as it should.
#
#   ci/build-static.sh                    install this repository's HEAD into target/static
#   ci/build-static.sh --root DIR         install into DIR (DIR/bin/liveproof, kubectl-liveproof)
#   ci/build-static.sh --git URL --rev R  install from another repository or commit
#   ci/build-static.sh --path DIR         install from a source tree without .git (the
#                                         Dockerfile's builder stage: same flags, same checks)
#
# The default URL is this repository itself (file://…), so CI proves the git-URL install works
# on every change. The C and assembly parts of `ring` (TLS, through kube and reqwest) are
# compiled for the musl target by cc-rs, which looks for `x86_64-linux-musl-gcc` and does not
# fall back to the host gcc: Debian/Ubuntu's `musl-tools` provides it (musl-gcc and that name).
# Prerequisites: Rust (rustup), git, gcc, musl-tools, file, binutils (readelf).
# Output: the bin directory, on the last line.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
target=x86_64-unknown-linux-musl
url="file://$repo"
rev=""
path=""
root="$repo/target/static"

usage() { echo "usage: ci/build-static.sh [--root DIR] [--git URL [--rev REV] | --path DIR]" >&2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root="${2:?--root needs a directory}"; shift 2 ;;
    --git) url="${2:?--git needs a URL}"; shift 2 ;;
    --rev) rev="${2:?--rev needs a commit}"; shift 2 ;;
    --path) path="${2:?--path needs the source tree}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "ci/build-static.sh: unknown argument '$1'" >&2; usage; exit 2 ;;
  esac
done
# From this repository, exactly the checked-out commit (not whatever its default branch is);
# uncommitted edits are not in a git install, so say so rather than test something else.
if [ -z "$path" ] && [ -z "$rev" ] && [ "$url" = "file://$repo" ]; then
  rev="$(git -C "$repo" rev-parse HEAD)"
  if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
    echo "note: uncommitted changes are not installed; building commit $rev" >&2
  fi
fi

musl_cc="${CC_x86_64_unknown_linux_musl:-x86_64-linux-musl-gcc}"
if ! command -v "$musl_cc" >/dev/null; then
  echo "error: no C compiler for $target ($musl_cc): ring's C and assembly need one" >&2
  echo "hint: apt-get install musl-tools (Debian/Ubuntu), or set CC_x86_64_unknown_linux_musl" >&2
  exit 2
fi
if ! rustup target list --installed | grep -qx "$target"; then
  rustup target add "$target"
fi

started=$SECONDS
if [ -n "$path" ]; then
  source_args=(--path "$path/crates/liveproof")
else
  source_args=(--git "$url" ${rev:+--rev "$rev"} liveproof)
fi
cargo install --locked --force "${source_args[@]}" --target "$target" --root "$root"
echo "cargo install took $((SECONDS - started))s" >&2

# Static: no program interpreter (ld.so) and no shared libraries needed. `file` says
# "static-pie linked" or "statically linked"; readelf is the check, file and ldd the account.
for exe in liveproof kubectl-liveproof; do
  path="$root/bin/$exe"
  [ -x "$path" ] || { echo "$path was not installed" >&2; exit 1; }
  file "$path" >&2
  ldd "$path" >&2 || true
  if readelf -lW "$path" | grep -q 'INTERP'; then
    echo "$path asks for a program interpreter: not static" >&2; exit 1
  fi
  if readelf -dW "$path" | grep -q '(NEEDED)'; then
    echo "$path needs shared libraries: not static" >&2; readelf -dW "$path" | grep NEEDED >&2; exit 1
  fi
done

bin="$root/bin"
want="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml")"
got="$("$bin/liveproof" --version)"
[ "$got" = "liveproof $want" ] || { echo "--version says '$got', expected 'liveproof $want'" >&2; exit 1; }
# `liveproof version` where the CLI has that subcommand.
if "$bin/liveproof" help version >/dev/null 2>&1; then "$bin/liveproof" version >&2; fi
# The demo needs no cluster and no network; it exits 0 only when both verdicts are right.
timeout 300 "$bin/liveproof" demo >/dev/null
echo "static liveproof $want: demo passed" >&2
echo "$bin"
