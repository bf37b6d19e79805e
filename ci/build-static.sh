#!/usr/bin/env bash
# Builds liveproof as a static Linux binary (musl) exactly the way a user installs it without a
# clone — `cargo install --locked --git URL liveproof` — then proves the result is static, built
# for the CPU asked, and that it runs: `--version` reports the workspace version and `demo` comes
# out as it should (an arm64 binary built on x86_64 runs under qemu-user).
#
#   ci/build-static.sh                    install this repository's HEAD into target/static/TARGET
#   ci/build-static.sh --root DIR         install into DIR (DIR/bin/liveproof, kubectl-liveproof,
#                                         kubectl_complete-liveproof)
#   ci/build-static.sh --git URL --rev R  install from another repository or commit
#   ci/build-static.sh --path DIR         install from a source tree without .git (the
#                                         Dockerfile's builder stage: same flags, same checks)
#   ci/build-static.sh --target T         x86_64-unknown-linux-musl (default) or
#                                         aarch64-unknown-linux-musl (linux arm64)
#
# The default URL is this repository itself (file://…), so CI proves the git-URL install works
# on every change. The C and assembly parts of `ring` (TLS, through kube and reqwest; the only
# crate of the tree that compiles C) are compiled for the target by cc-rs, which does not fall
# back to the host gcc:
# - x86_64: it looks for `x86_64-linux-musl-gcc`, which Debian/Ubuntu's `musl-tools` provides.
# - aarch64 (cross-compiled): Debian's cross compiler `gcc-aarch64-linux-gnu` compiles ring's C
#   and links (rustc brings musl's crt and libc itself: the glibc of the cross toolchain is not
#   linked in, the readelf checks below hold that); `qemu-user-static` runs the result here.
#   Override with CC_aarch64_unknown_linux_musl / CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER
#   (e.g. a musl cross gcc, or `cargo zigbuild`'s zig cc).
# Prerequisites: Rust (rustup), git, gcc, file, binutils (readelf); musl-tools for x86_64;
# gcc-aarch64-linux-gnu and qemu-user-static for aarch64 on an x86_64 machine.
# Output: the bin directory, on the last line.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
target=x86_64-unknown-linux-musl
url="file://$repo"
rev=""
path=""
root=""

usage() { echo "usage: ci/build-static.sh [--root DIR] [--git URL [--rev REV] | --path DIR]" >&2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root="${2:?--root needs a directory}"; shift 2 ;;
    --git) url="${2:?--git needs a URL}"; shift 2 ;;
    --rev) rev="${2:?--rev needs a commit}"; shift 2 ;;
    --path) path="${2:?--path needs the source tree}"; shift 2 ;;
    --target) target="${2:?--target needs a target triple}"; shift 2 ;;
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

# What the target needs: a C compiler (and for a cross build, a linker), the ELF machine the
# binary must be, and how to run it on this machine.
host_arch="$(uname -m)"
case "$target" in
  x86_64-unknown-linux-musl)
    arch=x86_64; elf_machine="Advanced Micro Devices X86-64"
    musl_cc="${CC_x86_64_unknown_linux_musl:-x86_64-linux-musl-gcc}"
    cc_hint="apt-get install musl-tools (Debian/Ubuntu), or set CC_x86_64_unknown_linux_musl"
    ;;
  aarch64-unknown-linux-musl)
    arch=aarch64; elf_machine="AArch64"
    if [ "$host_arch" = aarch64 ]; then default_cc=gcc; else default_cc=aarch64-linux-gnu-gcc; fi
    musl_cc="${CC_aarch64_unknown_linux_musl:-$default_cc}"
    cc_hint="apt-get install gcc-aarch64-linux-gnu (Debian/Ubuntu), or set CC_aarch64_unknown_linux_musl"
    export CC_aarch64_unknown_linux_musl="$musl_cc"
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER="${CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER:-$musl_cc}"
    ;;
  *)
    echo "error: unsupported --target '$target'" >&2
    echo "hint: x86_64-unknown-linux-musl or aarch64-unknown-linux-musl" >&2
    exit 2
    ;;
esac
if ! command -v "$musl_cc" >/dev/null; then
  echo "error: no C compiler for $target ($musl_cc): ring's C and assembly need one" >&2
  echo "hint: $cc_hint" >&2
  exit 2
fi
# Run the result natively, or under qemu-user when it is built for another CPU.
run=()
if [ "$arch" != "$host_arch" ]; then
  for q in "qemu-$arch-static" "qemu-$arch"; do
    if command -v "$q" >/dev/null; then run=("$q"); break; fi
  done
  if [ ${#run[@]} -eq 0 ]; then
    echo "error: cannot run a $arch binary on this $host_arch machine to check it" >&2
    echo "hint: apt-get install qemu-user-static (Debian/Ubuntu)" >&2
    exit 2
  fi
fi
[ -n "$root" ] || root="$repo/target/static/$target"
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
for exe in liveproof kubectl-liveproof kubectl_complete-liveproof; do
  path="$root/bin/$exe"
  [ -x "$path" ] || { echo "$path was not installed" >&2; exit 1; }
  file "$path" >&2
  ldd "$path" >&2 || true
  if ! readelf -hW "$path" | grep -q "Machine: *$elf_machine\$"; then
    echo "$path is not built for $arch:" >&2; readelf -hW "$path" | grep Machine >&2; exit 1
  fi
  if readelf -lW "$path" | grep -q 'INTERP'; then
    echo "$path asks for a program interpreter: not static" >&2; exit 1
  fi
  if readelf -dW "$path" | grep -q '(NEEDED)'; then
    echo "$path needs shared libraries: not static" >&2; readelf -dW "$path" | grep NEEDED >&2; exit 1
  fi
done

bin="$root/bin"
want="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml")"
got="$("${run[@]}" "$bin/liveproof" --version)"
[ "$got" = "liveproof $want" ] || { echo "--version says '$got', expected 'liveproof $want'" >&2; exit 1; }
# `liveproof version` where the CLI has that subcommand.
if "${run[@]}" "$bin/liveproof" help version >/dev/null 2>&1; then "${run[@]}" "$bin/liveproof" version >&2; fi
# The demo needs no cluster and no network; it exits 0 only when both verdicts are right.
timeout 300 "${run[@]}" "$bin/liveproof" demo >/dev/null
echo "static liveproof $want for $target: demo passed${run[*]:+ (under ${run[*]})}" >&2
echo "$bin"
