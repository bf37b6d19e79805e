//! Inside a pod: the ServiceAccount the pod runs as, read as kubectl (client-go's
//! `rest.InClusterConfig`) reads it when there is no kubeconfig at all.
//!
//! `KUBERNETES_SERVICE_HOST`/`KUBERNETES_SERVICE_PORT` name the API server; the token, the CA
//! bundle and the namespace are the files the kubelet mounts under
//! `/var/run/secrets/kubernetes.io/serviceaccount`. The token is handed to kube as a file, which
//! it reads again as the kubelet rotates it (bound tokens expire within the hour): a long
//! `--wait` keeps working. Its value is never read here.

use std::path::{Path, PathBuf};

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::CertificateDer;

use super::GatherError;

/// Where the kubelet mounts a pod's ServiceAccount credentials.
const MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// For tests only: the directory holding `token`, `ca.crt` and `namespace` instead of
/// [`MOUNT`], so the real API server can be reached with a real ServiceAccount token from a
/// test that is not in a pod. Nothing else reads it.
const TEST_MOUNT_ENV: &str = "LIVEPROOF_TEST_SERVICEACCOUNT_DIR";

/// The pod's API server address when both variables are set (client-go requires both).
pub(super) fn service_env() -> Option<(String, String)> {
    let host = std::env::var("KUBERNETES_SERVICE_HOST").ok()?;
    let port = std::env::var("KUBERNETES_SERVICE_PORT").ok()?;
    (!host.is_empty() && !port.is_empty()).then_some((host, port))
}

fn mount() -> PathBuf {
    std::env::var_os(TEST_MOUNT_ENV)
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from(MOUNT), PathBuf::from)
}

/// The client configuration of the pod's ServiceAccount at `host:port`.
pub(super) fn config(host: &str, port: &str) -> Result<kube::Config, GatherError> {
    let dir = mount();
    let refuse = |reason: String| GatherError::InCluster {
        dir: dir.clone(),
        reason,
    };
    let port: u16 = port.parse().map_err(|_| {
        refuse(format!(
            "KUBERNETES_SERVICE_PORT `{port}` is not a port number"
        ))
    })?;
    // An IPv6 address goes in brackets; 443 is left out as client-go leaves it out.
    let authority = match (host.parse::<std::net::IpAddr>(), port) {
        (Ok(std::net::IpAddr::V6(ip)), 443) => format!("[{ip}]"),
        (Ok(std::net::IpAddr::V6(ip)), p) => format!("[{ip}]:{p}"),
        (_, 443) => host.to_owned(),
        (_, p) => format!("{host}:{p}"),
    };
    let url: http::Uri = format!("https://{authority}").parse().map_err(|_| {
        refuse(format!(
            "KUBERNETES_SERVICE_HOST `{host}` does not make an https URL"
        ))
    })?;
    let token = dir.join("token");
    readable(&token).map_err(|e| refuse(format!("cannot read the token file: {e}")))?;
    let ca = dir.join("ca.crt");
    let roots = ca_bundle(&ca).map_err(refuse)?;
    let namespace = mounted_namespace(&dir.join("namespace")).map_err(refuse)?;
    let mut config = kube::Config::new(url);
    config.default_namespace = namespace;
    config.root_cert = Some(roots);
    config.root_cert_file = Some(ca);
    config.auth_info.token_file = Some(token.display().to_string());
    Ok(config)
}

/// The namespace the kubelet mounted, or `default` (client-go's fallback) when there is none.
/// A regular file only, as the token and the CA bundle: a FIFO there blocked the read forever.
fn mounted_namespace(path: &Path) -> Result<String, String> {
    match crate::files::read_to_string(path) {
        Ok(ns) if !ns.trim().is_empty() => Ok(ns.trim().to_owned()),
        Ok(_) => Ok("default".to_owned()),
        Err(crate::files::OpenError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            Ok("default".to_owned())
        }
        Err(e) => Err(format!("cannot read the namespace file: {e}")),
    }
}

fn readable(path: &Path) -> std::io::Result<()> {
    crate::files::check_regular(path).map_err(|e| {
        std::io::Error::other(format!(
            "{} is {}, not a regular file",
            path.display(),
            e.kind
        ))
    })?;
    std::fs::File::open(path).map(drop)
}

/// The DER certificates of the CA bundle at `path`.
fn ca_bundle(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    readable(path).map_err(|e| format!("cannot read the CA bundle: {e}"))?;
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("the CA bundle {} is not PEM: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "the CA bundle {} holds no certificate",
            path.display()
        ));
    }
    Ok(certs.into_iter().map(|c| c.to_vec()).collect())
}
