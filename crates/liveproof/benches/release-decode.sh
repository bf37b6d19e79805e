#!/usr/bin/env bash
# `liveproof release show --manifest` on a release with a 5 MB rendered manifest, against the
# pipeline people reach for without it:
#
#   jq -r .data.release FILE | base64 -d | base64 -d | gunzip | jq -r .manifest
#
# Prints wall time (hyperfine, mean ± σ), CPU time, peak RSS (GNU time) and the ratios. Figures
# only: nothing here passes or fails on a time. On a busy machine read the CPU column too: a
# single process gets a smaller share of contended cores than a five-process pipeline does.
#
# Run: crates/liveproof/benches/release-decode.sh [MANIFEST_MB] (default 5)
# Needs: jq, hyperfine, GNU time (/usr/bin/time), gzip, base64, awk.
# LIVEPROOF=/path/to/liveproof skips the release build (CARGO_TARGET_DIR is honoured);
# LIVEPROOF_BEFORE=/path/to/another/liveproof adds a row for it (say, a build of main).
#
# The Secret is built with gzip and base64 (not with liveproof's own encoder), so the decoder is
# measured on what other tools write: a Secret's data.release is base64 of Helm's base64 of the
# gzipped release JSON, which carries the chart (templates, values) besides the manifest.
set -euo pipefail

megabytes=${1:-5}
for tool in jq hyperfine gzip base64 awk; do
    command -v "$tool" >/dev/null || { echo "release-decode: needs $tool" >&2; exit 2; }
done
[[ -x /usr/bin/time ]] || { echo "release-decode: needs GNU time at /usr/bin/time" >&2; exit 2; }

root=$(cd "$(dirname "$0")/../../.." && pwd)
if [[ -z ${LIVEPROOF:-} ]]; then
    (cd "$root" && cargo build --release --quiet -p liveproof --bin liveproof)
    target=${CARGO_TARGET_DIR:-target}
    [[ $target == /* ]] || target=$root/$target
    LIVEPROOF=$target/release/liveproof
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The rendered manifest: a Secret, then ConfigMaps and Deployments (with the checksum
# annotations charts add, so it does not compress unrealistically well) up to the size asked.
awk -v limit=$((megabytes * 1000 * 1000)) '
function hex(n,   s, i) { s = ""; for (i = 0; i < n; i++) s = s substr("0123456789abcdef", int(rand() * 16) + 1, 1); return s }
BEGIN {
    srand(13)
    out = "---\n# Source: big/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: big-db\n  labels:\n    app.kubernetes.io/name: big\ntype: Opaque\nstringData:\n  password: \"canary-" hex(24) "\"\n"
    printf "%s", out; size = length(out)
    for (i = 0; size < limit; i++) {
        doc = sprintf("---\n# Source: big/templates/configmap.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-config-%d\n  labels:\n    app.kubernetes.io/name: big\n    app.kubernetes.io/instance: big\n    app.kubernetes.io/managed-by: Helm\n    helm.sh/chart: big-1.2.3\ndata:\n  settings.yaml: |\n    shard: %d\n    replicas: %d\n    endpoint: https://shard-%d.internal.example:8443\n    token_ref: %s\n", i, i, i % 7 + 1, i, hex(16))
        doc = doc sprintf("---\n# Source: big/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: big-worker-%d\n  labels:\n    app.kubernetes.io/name: big\n    app.kubernetes.io/instance: big\n    app.kubernetes.io/managed-by: Helm\nspec:\n  replicas: %d\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: big-worker-%d\n  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: big-worker-%d\n      annotations:\n        checksum/config: %s\n    spec:\n      containers:\n        - name: worker\n          image: registry.example/big/worker:1.2.%d@sha256:%s\n          args: [\"--shard=%d\", \"--config=/etc/big/settings.yaml\"]\n          resources:\n            limits: {cpu: 500m, memory: 256Mi}\n          volumeMounts:\n            - name: config\n              mountPath: /etc/big\n      volumes:\n        - name: config\n          configMap:\n            name: big-config-%d\n", i, i % 5 + 1, i, i, hex(64), i % 40, hex(64), i, i)
        printf "%s", doc; size += length(doc)
    }
}' >"$work/manifest.yaml"

# The release as Helm stores it, chart templates (base64, as Helm marshals []byte) included.
template=$(head -c 4000 "$work/manifest.yaml" | base64 -w0)
jq -n --rawfile manifest "$work/manifest.yaml" --arg template "$template" '{
  name: "big", namespace: "bench", version: 7,
  info: {first_deployed: "2026-07-01T08:00:00.123456789Z", last_deployed: "2026-07-12T10:30:00.5+02:00",
         deleted: "", description: "Upgrade complete", status: "deployed"},
  chart: {metadata: {name: "big", version: "1.2.3", appVersion: "1.2.0", apiVersion: "v2"},
          templates: [range(40) | {name: "templates/t\(.).yaml", data: $template}],
          values: {replicas: 1, image: {repository: "registry.example/big/worker"}}},
  config: {database: {password: "hunter2-s3cr3t"}},
  manifest: $manifest,
  hooks: [{name: "big-migrate", kind: "Job", path: "big/templates/migrate.yaml",
           manifest: "apiVersion: batch/v1\nkind: Job\n", events: ["pre-upgrade"]}]
}' >"$work/release.json"
gzip -9 -n <"$work/release.json" | base64 -w0 | base64 -w0 >"$work/data"
jq -n --rawfile data "$work/data" '{
  apiVersion: "v1", kind: "Secret", type: "helm.sh/release.v1",
  metadata: {name: "sh.helm.release.v1.big.v7", namespace: "bench",
             labels: {name: "big", owner: "helm", status: "deployed", version: "7"}},
  data: {release: $data}
}' >"$work/secret.json"
# The same object as `kubectl get -o yaml` prints it (base64 is a plain scalar).
cat >"$work/secret.yaml" <<EOF
apiVersion: v1
kind: Secret
type: helm.sh/release.v1
metadata:
  name: sh.helm.release.v1.big.v7
  namespace: bench
  labels:
    name: big
    owner: helm
    status: deployed
    version: "7"
data:
  release: $(cat "$work/data")
EOF

liveproof_cmd() { echo "$LIVEPROOF release show big -n bench --from $1 --manifest"; }
pipeline="jq -r .data.release $work/secret.json | base64 -d | base64 -d | gunzip | jq -r .manifest"

# The same manifest out of both: liveproof re-serializes the Secret with its data redacted, and
# prints every other document as rendered.
"$LIVEPROOF" release show big -n bench --from "$work/secret.json" --manifest >"$work/liveproof.out"
sh -c "$pipeline" >"$work/jq.out"
after_secret() { sed -n '\|^# Source: big/templates/configmap.yaml|,$p' "$1"; }
# (jq -r adds a newline after the manifest's own last one.)
if ! diff -q -B <(after_secret "$work/liveproof.out") <(after_secret "$work/jq.out") >/dev/null \
    || grep -q canary- "$work/liveproof.out"; then
    echo "release-decode: liveproof and the pipeline print different manifests" >&2
    diff <(after_secret "$work/liveproof.out") <(after_secret "$work/jq.out") | head -20 >&2
    exit 1
fi

# name → command; LIVEPROOF_BEFORE=/path/to/an/older/liveproof adds it as a row, to compare.
declare -A commands=(
    [liveproof]=$(liveproof_cmd "$work/secret.json")
    [liveproof-yaml]=$(liveproof_cmd "$work/secret.yaml")
    [jq-pipeline]=$pipeline
)
names=(liveproof liveproof-yaml jq-pipeline)
if [[ -n ${LIVEPROOF_BEFORE:-} ]]; then
    commands[before]="$LIVEPROOF_BEFORE release show big -n bench --from $work/secret.json --manifest"
    names+=(before)
fi
runs=()
for name in "${names[@]}"; do
    runs+=(-n "$name" "${commands[$name]}")
done
hyperfine --style basic --warmup 3 --min-runs 30 --shell=sh \
    --export-json "$work/times.json" "${runs[@]}" >&2

# Seconds → milliseconds, of hyperfine's mean wall time, its σ, and the CPU time (user + system).
field() {
    jq -r --arg n "$1" ".results[] | select(.command == \$n) | $2 * 1000" "$work/times.json"
}
# Peak RSS in KiB, the most of three runs; for the pipeline, that of its largest process (what
# wait4 reports), not their sum.
rss() {
    for _ in 1 2 3; do /usr/bin/time -f %M sh -c "$1 >/dev/null" 2>&1 >/dev/null | tail -1; done \
        | sort -n | tail -1
}

printf '\nrelease show --manifest: %s MB manifest, %s bytes of Secret JSON, %s\n' \
    "$(awk -v b="$(wc -c <"$work/manifest.yaml")" 'BEGIN { printf "%.1f", b / 1e6 }')" \
    "$(wc -c <"$work/secret.json")" "$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/load /')"
printf '%-15s %16s %14s %11s\n' "" "wall (mean±σ)" "CPU (usr+sys)" "peak RSS"
declare -A wall cpu rss_kib
for name in "${names[@]}"; do
    wall[$name]=$(field "$name" .mean)
    cpu[$name]=$(field "$name" '(.user + .system)')
    rss_kib[$name]=$(rss "${commands[$name]}")
    printf '%-15s %9.1f±%4.1f ms %11.1f ms %8.1f MB\n' "$name" "${wall[$name]}" \
        "$(field "$name" .stddev)" "${cpu[$name]}" \
        "$(awk -v k="${rss_kib[$name]}" 'BEGIN { print k / 1024 }')"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf '\nthe pipeline / liveproof (JSON): wall %sx, CPU %sx; peak RSS liveproof / pipeline: %sx\n' \
    "$(ratio "${wall[jq-pipeline]}" "${wall[liveproof]}")" \
    "$(ratio "${cpu[jq-pipeline]}" "${cpu[liveproof]}")" \
    "$(ratio "${rss_kib[liveproof]}" "${rss_kib[jq-pipeline]}")"
if [[ -n ${LIVEPROOF_BEFORE:-} ]]; then
    printf 'before / now: wall %sx, CPU %sx, peak RSS %sx\n' \
        "$(ratio "${wall[before]}" "${wall[liveproof]}")" \
        "$(ratio "${cpu[before]}" "${cpu[liveproof]}")" \
        "$(ratio "${rss_kib[before]}" "${rss_kib[liveproof]}")"
fi
