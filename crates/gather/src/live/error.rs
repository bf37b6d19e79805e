//! Why the live gather could not produce a snapshot. RBAC refusals are not here: they are
//! evidence ([`Denied`](liveproof_evidence::Denied)), not failures.

use std::path::PathBuf;

use liveproof_redacted::DisplaySafeUrl;

/// The hint every "cannot reach" error ends with.
const REACH_HINT: &str =
    "hint: is the cluster reachable? check `kubectl cluster-info` with the same kubeconfig and context";

#[derive(Debug, thiserror::Error)]
pub enum GatherError {
    // Kubeconfig errors carry a reason, never the library's error: its message quotes the
    // file's lines, and `--kubeconfig .env` would print the passwords in it.
    #[error("cannot use the kubeconfig {}: {reason}\nhint: check the file and the --context name (`kubectl config get-contexts`)", path.display())]
    Kubeconfig { path: PathBuf, reason: String },
    #[error("cannot load the kubeconfig (KUBECONFIG or ~/.kube/config){}: {reason}\nhint: check `kubectl config get-contexts`, or pass --kubeconfig PATH", context.as_ref().map(|c| format!(" for context `{c}`")).unwrap_or_default())]
    Config {
        context: Option<String>,
        reason: String,
    },
    #[error("KUBECONFIG lists no file that exists: {}\nhint: fix KUBECONFIG (files separated by `:`), or pass --kubeconfig PATH", paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    KubeconfigListMissing { paths: Vec<PathBuf> },
    #[error("no cluster configured: not in a pod with a service account, and {reason}\nhint: set KUBECONFIG or pass --kubeconfig as for kubectl, run in a pod with a service account, or read a dump with --from PATH")]
    NoConfig { reason: String },
    // `cause` is made safe to show (see `safe_cause`); the client error itself is not kept: an
    // exec plugin's failure quotes its command line, environment and output.
    #[error("cannot set up a client for the API server at {server}: {cause}\nhint: check the certificate-authority, client certificate and proxy settings in the kubeconfig")]
    Client {
        server: DisplaySafeUrl,
        cause: String,
    },
    #[error("cannot reach the API server at {server} (reading {what}): {cause}\n{REACH_HINT}")]
    Unreachable {
        server: DisplaySafeUrl,
        what: String,
        cause: String,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("the API server at {server} did not answer within {} (reading {what})\nhint: a server that accepts connections and never answers is overloaded, or something between (a proxy, a VPN, a firewall) holds the connection; check `kubectl cluster-info`, or allow longer with --request-timeout (e.g. --request-timeout 2m)", humanize(*after))]
    Timeout {
        server: DisplaySafeUrl,
        what: String,
        after: std::time::Duration,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("namespace `{namespace}` does not exist on the API server at {server}{}\nhint: {}", if target.is_empty() { String::new() } else { format!(" (looking for {target})") }, match (suggestion, known) {
        (Some(s), _) => format!("did you mean `{s}`? (kubectl get namespaces)"),
        (None, Some(k)) if !k.is_empty() => format!("the namespaces are: {}", k.join(", ")),
        _ => "check the namespace (kubectl get namespaces), the target's NAMESPACE/ part and -n".to_string(),
    })]
    NoNamespace {
        server: DisplaySafeUrl,
        namespace: String,
        /// What was looked for there (`deployment inventory`); empty for a namespace alone.
        target: String,
        /// The closest namespace that exists, when they could be listed.
        suggestion: Option<String>,
        /// Every namespace that exists, when they could be listed (and are few).
        known: Option<Vec<String>>,
    },
    #[error("{what} not found on the API server at {server} (looked {where_})\nhint: {hint}")]
    NotFound {
        server: DisplaySafeUrl,
        /// What was looked for: `deployment apps/inventroy`.
        what: String,
        /// `in namespace apps`, `in every namespace`.
        where_: String,
        /// The did-you-mean, the names there, or why the kind is not there at all.
        hint: String,
    },
    #[error("TLS with the API server at {server} failed (reading {what}): {cause}\nhint: the server's certificate does not match the kubeconfig's certificate-authority or server name; check --context and the cluster entry")]
    Tls {
        server: DisplaySafeUrl,
        what: String,
        cause: String,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("the API server at {server} rejected the credentials (401 Unauthorized) reading {what}\nhint: the token or certificate is expired or wrong; log in again and check `kubectl auth whoami`")]
    Unauthorized {
        server: DisplaySafeUrl,
        what: String,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("cannot authenticate to the API server at {server}: {cause}\nhint: check the kubeconfig user's credentials (exec plugin, token file, client certificate)")]
    Auth {
        server: DisplaySafeUrl,
        cause: String,
    },
    #[error("the API server at {server} answered 404 Not Found reading {what}, without naming the object, while discovery says it serves that resource: {message}\nhint: something between liveproof and the API server (a proxy, a gateway, a wrong server path in the kubeconfig) may be answering; this is not taken as \"does not exist\": check `kubectl get --raw /version` with the same kubeconfig")]
    UnexplainedNotFound {
        server: DisplaySafeUrl,
        what: String,
        message: String,
    },
    #[error("the API server at {server} answered {code} reading {what}: {message}")]
    Api {
        server: DisplaySafeUrl,
        what: String,
        code: u16,
        message: String,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("cannot read {what} from the API server at {server}: {cause}")]
    Other {
        server: DisplaySafeUrl,
        what: String,
        cause: String,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("{target}: the snapshot's pod template cannot be sent as a patch: {reason}")]
    BadPatch { target: String, reason: String },
    #[error("{target} cannot be restarted: only Deployments, StatefulSets and DaemonSets have a pod template to restart")]
    NotRestartable { target: String },
    #[error("watching {what} on the API server at {server} keeps failing: {cause}\n{REACH_HINT}")]
    Watch {
        server: DisplaySafeUrl,
        what: String,
        cause: String,
        #[source]
        source: Box<kube::runtime::watcher::Error>,
    },
}

impl GatherError {
    /// Turns a client error met while reading `what` into the error a person can act on.
    pub(crate) fn from_kube(
        server: &DisplaySafeUrl,
        timeout: std::time::Duration,
        what: &str,
        err: kube::Error,
    ) -> GatherError {
        let server = server.clone();
        let what = what.to_string();
        let cause = root_cause(&err);
        match &err {
            _ if is_timeout(&err) => GatherError::Timeout {
                server,
                what,
                after: timeout,
                source: Box::new(err),
            },
            kube::Error::Api(status) if status.code == 401 => GatherError::Unauthorized {
                server,
                what,
                source: Box::new(err),
            },
            kube::Error::Api(status) => GatherError::Api {
                server,
                what,
                code: status.code,
                message: status.message.clone(),
                source: Box::new(err),
            },
            kube::Error::Auth(_) => GatherError::Auth {
                server,
                cause: safe_cause(&err),
            },
            kube::Error::HyperError(_) | kube::Error::Service(_) if is_tls(&err) => {
                GatherError::Tls {
                    server,
                    what,
                    cause,
                    source: Box::new(err),
                }
            }
            kube::Error::HyperError(_) | kube::Error::Service(_) => GatherError::Unreachable {
                server,
                what,
                cause,
                source: Box::new(err),
            },
            _ => GatherError::Other {
                server,
                what,
                cause,
                source: Box::new(err),
            },
        }
    }
}

/// The innermost message of an error chain ("Connection refused (os error 111)"), which is
/// what a person needs; the outer layers say "client error (Connect)".
/// What went wrong with a kubeconfig, without quoting the file: a file that is not a
/// kubeconfig may be anything (`--kubeconfig .env`), and none of its lines may be printed.
pub(crate) fn kubeconfig_reason(err: &kube::config::KubeconfigError) -> String {
    use kube::config::KubeconfigError as E;
    match err {
        E::Parse(_) => {
            "it is not a kubeconfig (not YAML of a kubeconfig's shape; its content is not shown)"
                .to_string()
        }
        E::ReadConfig(io, path) => format!("cannot read {}: {}", path.display(), io.kind()),
        // The rest name contexts, clusters and files, never their content.
        other => other.to_string(),
    }
}

/// [`kubeconfig_reason`] of why no configuration could be inferred.
pub(crate) fn infer_reason(err: &kube::config::InferConfigError) -> String {
    match std::error::Error::source(err)
        .and_then(|s| s.downcast_ref::<kube::config::KubeconfigError>())
    {
        Some(kubeconfig) => format!("the kubeconfig: {}", kubeconfig_reason(kubeconfig)),
        None => "no kubeconfig was found".to_string(),
    }
}

/// The cause of a client error, safe to print: an exec credential plugin's failure quotes its
/// command line (arguments, environment) and its output, any of which can be a credential.
pub(crate) fn safe_cause(err: &(dyn std::error::Error + 'static)) -> String {
    use kube::client::AuthError as A;
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(auth) = e.downcast_ref::<A>() {
            return match auth {
                A::AuthExecRun { out, .. } => format!(
                    "the kubeconfig's exec credential plugin failed ({}); its command line, environment and output are not shown: they can hold credentials",
                    out.status
                ),
                A::AuthExecStart(io) => format!(
                    "the kubeconfig's exec credential plugin could not be started: {}",
                    io.kind()
                ),
                A::AuthExecParse(_) | A::AuthExec(_) => "the kubeconfig's exec credential plugin did not print an ExecCredential (its output is not shown: it can hold credentials)".to_string(),
                A::ReadTokenFile(io, path) => {
                    format!("cannot read the token file {}: {}", path.display(), io.kind())
                }
                A::InvalidBasicAuth(_) | A::InvalidBearerToken(_) => {
                    "the kubeconfig's credentials are not valid in an HTTP header (not shown)".to_string()
                }
                other => other.to_string(),
            };
        }
        current = e.source();
    }
    root_cause(err)
}

pub(crate) fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut last = err;
    while let Some(next) = last.source() {
        last = next;
    }
    let root = last.to_string();
    let top = err.to_string();
    if std::ptr::addr_eq(last, err) || top.contains(&root) {
        top
    } else {
        root
    }
}

/// A request given up by the client's connect, read or write timeout (hyper-timeout reports
/// `io::ErrorKind::TimedOut`).
pub(crate) fn is_timeout(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::TimedOut {
                return true;
            }
        }
        if e.is::<tokio::time::error::Elapsed>() {
            return true;
        }
        current = e.source();
    }
    false
}

/// `30s`, `1m 30s`: a duration as a person writes it.
pub fn humanize(d: std::time::Duration) -> String {
    jiff::SignedDuration::try_from(d)
        .map(|d| format!("{d:#}"))
        .unwrap_or_else(|_| format!("{}s", d.as_secs()))
}

fn is_tls(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(err);
    while let Some(e) = current {
        let text = e.to_string().to_ascii_lowercase();
        if text.contains("certificate") || text.contains("tls") || text.contains("handshake") {
            return true;
        }
        current = e.source();
    }
    false
}
