# syntax=docker/dockerfile:1
# liveproof as a container image: a static (musl) binary on distroless/static, run as a
# non-root numeric user, no shell. Published as ghcr.io/liveproof/liveproof:<version> by
# .github/workflows/release.yml; deploy/*.yaml run it.
#
#   docker build -t liveproof .
#   docker run --rm liveproof demo
#   docker run --rm -v ~/.kube:/kube:ro -e KUBECONFIG=/kube/config liveproof verify deploy/web --since 10m --image …
#
# The builder stage builds exactly as CI and users do (ci/build-static.sh: cargo install
# --locked for x86_64-unknown-linux-musl), and the script's own checks run there: the binary is
# static and `liveproof demo` passes, or the image is not built.

ARG RUST_VERSION=1.95

FROM docker.io/library/rust:${RUST_VERSION}-bookworm AS builder
# musl-tools: musl-gcc compiles ring's C and assembly for the musl target; file and binutils
# (readelf) are what the script's static check reads the binary with.
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools file binutils \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN ci/build-static.sh --path /src --root /out

# distroless/static: CA certificates (registry TLS, an API server with a public CA), /etc/passwd
# with the nonroot user, tzdata; no shell, no package manager, no libc (none is needed).
FROM gcr.io/distroless/static-debian12:nonroot AS runtime
COPY --from=builder /out/bin/liveproof /usr/local/bin/liveproof
# The kubectl plugin name too: `kubectl liveproof` in an image that brings its own kubectl.
COPY --from=builder /out/bin/kubectl-liveproof /usr/local/bin/kubectl-liveproof
# Numeric, so a pod's runAsNonRoot admits it without reading /etc/passwd (65532 = nonroot).
USER 65532:65532
LABEL org.opencontainers.image.source="https://github.com/liveproof/liveproof" \
      org.opencontainers.image.description="Prove a change is live in a Kubernetes cluster" \
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["/usr/local/bin/liveproof"]
CMD ["--help"]
