//! Why the live gather could not produce a snapshot. RBAC refusals are not here: they are
//! evidence ([`Denied`](liveproof_evidence::Denied)), not failures.

use std::borrow::Cow;
use std::path::PathBuf;

use liveproof_redacted::DisplaySafeUrl;

/// The hint of every "cannot reach" error.
const REACH_HINT: &str =
    "is the cluster reachable? check `kubectl cluster-info` with the same kubeconfig and context";

#[derive(Debug, thiserror::Error)]
pub enum GatherError {
    // Kubeconfig errors carry a reason, never the library's error: its message quotes the
    // file's lines, and `--kubeconfig .env` would print the passwords in it.
    #[error("cannot use the kubeconfig {}: {reason}", path.display())]
    Kubeconfig { path: PathBuf, reason: String },
    #[error("cannot load the kubeconfig (KUBECONFIG or ~/.kube/config){}: {reason}", context.as_ref().map(|c| format!(" for context `{c}`")).unwrap_or_default())]
    Config {
        context: Option<String>,
        reason: String,
    },
    #[error("cannot use the kubeconfig {}: it is {kind}, not a regular file, and is not read (reading it could block forever)", path.display())]
    NotRegularKubeconfig { path: PathBuf, kind: &'static str },
    #[error("cannot use the kubeconfig: its {field} {} is {kind}, not a regular file, and is not read (reading it could block forever)", path.display())]
    NotRegularKubeconfigFile {
        /// `certificate-authority`, `client-certificate`, `client-key`, `tokenFile`.
        field: &'static str,
        path: PathBuf,
        kind: &'static str,
    },
    #[error("KUBECONFIG lists no file that exists: {}", paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    KubeconfigListMissing { paths: Vec<PathBuf> },
    #[error("cannot use the pod's ServiceAccount (KUBERNETES_SERVICE_HOST is set and there is no kubeconfig) from {}: {reason}", dir.display())]
    InCluster { dir: PathBuf, reason: String },
    #[error("no cluster configured: not in a pod with a service account, and {reason}")]
    NoConfig { reason: String },
    // `cause` is made safe to show (see `safe_cause`); the client error itself is not kept: an
    // exec plugin's failure quotes its command line, environment and output.
    #[error("cannot set up a client for the API server at {server}: {cause}")]
    Client {
        server: DisplaySafeUrl,
        cause: String,
    },
    #[error("cannot reach the API server at {server} (reading {what}): {cause}")]
    Unreachable {
        server: DisplaySafeUrl,
        what: String,
        cause: String,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("the API server at {server} did not answer within {} (reading {what})", humanize(*after))]
    Timeout {
        server: DisplaySafeUrl,
        what: String,
        after: std::time::Duration,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("namespace `{namespace}` does not exist on the API server at {server}{}", if target.is_empty() { String::new() } else { format!(" (looking for {target})") })]
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
    #[error("{what} not found on the API server at {server} (looked {where_})")]
    NotFound {
        server: DisplaySafeUrl,
        /// What was looked for: `deployment apps/inventroy`.
        what: String,
        /// `in namespace apps`, `in every namespace`.
        where_: String,
        /// The did-you-mean, the names there, or why the kind is not there at all.
        hint: String,
    },
    #[error("TLS with the API server at {server} failed (reading {what}): {cause}")]
    Tls {
        server: DisplaySafeUrl,
        what: String,
        cause: String,
        #[source]
        source: Box<kube::Error>,
    },
    #[error(
        "the API server at {server} rejected the credentials (401 Unauthorized) reading {what}"
    )]
    Unauthorized {
        server: DisplaySafeUrl,
        what: String,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("cannot authenticate to the API server at {server}: {cause}")]
    Auth {
        server: DisplaySafeUrl,
        cause: String,
    },
    #[error("the API server at {server} answered {status} reading {what} and asked to be retried after {} (Retry-After: {}), more than the {} this request has left of --request-timeout: it is down for this run", humanize(*asked), asked.as_secs(), humanize(*left))]
    RetryAfter {
        server: DisplaySafeUrl,
        what: String,
        status: u16,
        asked: std::time::Duration,
        left: std::time::Duration,
    },
    /// `cause` is an [`ExecPluginError`](super::ExecPluginError)'s message: it names the
    /// plugin's program, never its arguments, environment or output.
    #[error("cannot get credentials for the API server at {server}: {cause}")]
    ExecPlugin {
        server: DisplaySafeUrl,
        cause: String,
    },
    #[error("the API server at {server} answered 404 Not Found reading {what}, without naming the object, while discovery says it serves that resource: {message}")]
    UnexplainedNotFound {
        server: DisplaySafeUrl,
        what: String,
        message: String,
    },
    #[error(
        "the API server at {server} answered more than {limit} reading {what}: not read further"
    )]
    TooLarge {
        server: DisplaySafeUrl,
        what: String,
        /// What it answered more than ([`ResponseTooLarge::limit`](super::service::ResponseTooLarge::limit)).
        limit: String,
    },
    #[error("the API server at {server} never completed the list of {what}: {why}")]
    IncompleteList {
        server: DisplaySafeUrl,
        what: String,
        why: String,
    },
    // The Status is told in words (never kube's `Status { … }` Debug), its message cut to
    // [`SHOWN_BYTES`]: a server (or what stands in its place) may send megabytes.
    #[error("the API server at {server} answered {} reading {what}: {}{}", status_line(*code), shown(message), if reason.is_empty() { String::new() } else { format!(" (reason: {})", shown(reason)) })]
    Api {
        server: DisplaySafeUrl,
        what: String,
        code: u16,
        /// The Status's `reason` (`InternalError`), empty when the body was not a Status.
        reason: String,
        /// The Status's `message`, or the body that was not a Status; shown cut.
        message: String,
    },
    #[error("the API server at {server} answered {} reading {what}, redirecting to {}: not followed", status_line(*code), location.as_ref().map_or_else(|| "no Location".to_string(), ToString::to_string))]
    Redirected {
        server: DisplaySafeUrl,
        what: String,
        code: u16,
        location: Option<DisplaySafeUrl>,
    },
    #[error("the API server at {server} answered something that is not Kubernetes JSON reading {what}: {problem}")]
    Undecodable {
        server: DisplaySafeUrl,
        what: String,
        /// Where and how it is not, quoting none of it.
        problem: String,
    },
    #[error("cannot reach the proxy {proxy} on the way to the API server at {server} (reading {what}): {cause}")]
    ProxyUnreachable {
        proxy: DisplaySafeUrl,
        server: DisplaySafeUrl,
        what: String,
        cause: String,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("the proxy {proxy} would not connect to the API server at {server} (reading {what}): {cause}")]
    ProxyRefused {
        proxy: DisplaySafeUrl,
        server: DisplaySafeUrl,
        what: String,
        cause: String,
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
    #[error(
        "{target} cannot be restarted: only Deployments, StatefulSets and DaemonSets are restarted by writing their pod template (an Argo Rollout restarts through its own controller: `kubectl argo rollouts restart NAME`)"
    )]
    NotRestartable { target: String },
    #[error("watching {what} on the API server at {server} keeps failing: {cause}")]
    Watch {
        server: DisplaySafeUrl,
        what: String,
        cause: String,
        #[source]
        source: Box<kube::runtime::watcher::Error>,
    },
}

impl liveproof_evidence::hint::Hinted for GatherError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            GatherError::Kubeconfig { .. } => Some(Cow::Borrowed("check the file and the --context name (`kubectl config get-contexts`)")),
            GatherError::Config { .. } => Some(Cow::Borrowed("check `kubectl config get-contexts`, or pass --kubeconfig PATH")),
            GatherError::NotRegularKubeconfig { .. } => Some(Cow::Borrowed("give --kubeconfig (or KUBECONFIG) a regular file; save a generated kubeconfig to a file first")),
            GatherError::NotRegularKubeconfigFile { field, .. } => Some(Cow::Owned(format!("point {field} at a regular file (kubectl config view --minify shows which the context uses)"))),
            GatherError::KubeconfigListMissing { .. } => Some(Cow::Borrowed("fix KUBECONFIG (files separated by `:`), or pass --kubeconfig PATH")),
            GatherError::InCluster { .. } => Some(Cow::Borrowed("in a pod, the kubelet sets KUBERNETES_SERVICE_HOST/PORT and mounts the token, ca.crt and namespace (automountServiceAccountToken: true, the default); or point KUBECONFIG/--kubeconfig at a kubeconfig")),
            GatherError::NoConfig { .. } => Some(Cow::Borrowed("set KUBECONFIG or pass --kubeconfig as for kubectl, run in a pod with a service account, or read a dump with --from PATH")),
            GatherError::Client { .. } => Some(Cow::Borrowed("check the certificate-authority, client certificate and proxy settings in the kubeconfig")),
            GatherError::Unreachable { .. } => Some(Cow::Borrowed(REACH_HINT)),
            GatherError::Timeout { .. } => Some(Cow::Borrowed("a server that accepts connections and never answers is overloaded, or something between (a proxy, a VPN, a firewall) holds the connection; check `kubectl cluster-info`, or allow longer with --request-timeout (e.g. --request-timeout 2m)")),
            GatherError::NoNamespace { known, suggestion, .. } => Some(match (suggestion, known) {
                (Some(s), _) => Cow::Owned(format!("did you mean `{s}`? (kubectl get namespaces)")),
                (None, Some(k)) if !k.is_empty() => Cow::Owned(format!("the namespaces are: {}", k.join(", "))),
                _ => Cow::Borrowed("check the namespace (kubectl get namespaces), the target's NAMESPACE/ part and -n"),
            }),
            GatherError::NotFound { hint, .. } => Some(Cow::Borrowed(hint)),
            GatherError::Tls { .. } => Some(Cow::Borrowed("the server's certificate does not match the kubeconfig's certificate-authority or server name; check --context and the cluster entry")),
            GatherError::Unauthorized { .. } => Some(Cow::Borrowed("the token or certificate is expired or wrong; log in again and check `kubectl auth whoami`")),
            GatherError::Auth { .. } => Some(Cow::Borrowed("check the kubeconfig user's credentials (exec plugin, token file, client certificate)")),
            GatherError::RetryAfter { .. } => Some(Cow::Borrowed("the server is overloaded or rate-limits this client; try again later, or allow a longer wait with --request-timeout")),
            GatherError::ExecPlugin { .. } => Some(Cow::Borrowed("run the plugin by hand (or `kubectl get --raw /version` with the same kubeconfig) to see what it needs: a login, the network, a terminal; each run of it is bounded by --request-timeout and --timeout")),
            GatherError::UnexplainedNotFound { .. } => Some(Cow::Borrowed("something between liveproof and the API server (a proxy, a gateway, a wrong server path in the kubeconfig) may be answering; this is not taken as \"does not exist\": check `kubectl get --raw /version` with the same kubeconfig")),
            GatherError::TooLarge { .. } => Some(Cow::Borrowed("no object or page of a list is this large (a page holds at most 5,000 objects): something between liveproof and the API server may be answering (check `kubectl get --raw /version` with the same kubeconfig); if its objects really are, allow more with --max-response-size (e.g. --max-response-size 1Gi)")),
            GatherError::IncompleteList { .. } => Some(Cow::Owned(format!("a list is taken whole or not at all (a partial one could leave out an old pod that still serves); --request-timeout bounds each page and {} times it the whole list; check the API server, or a proxy between it and liveproof, with `kubectl get --raw` and the same kubeconfig", super::pager::LIST_FACTOR))),
            GatherError::Api { code, .. } => Some(Cow::Borrowed(api_hint(*code))),
            GatherError::Redirected { .. } => Some(Cow::Borrowed("an API server does not redirect: a proxy, a load balancer or a sign-in page answers at this address, or the kubeconfig's server URL is outdated (http for https, an old host); check the cluster's server in the kubeconfig")),
            GatherError::Undecodable { .. } => Some(Cow::Borrowed("something between liveproof and the API server (a proxy, a sign-in page, a wrong server path in the kubeconfig) may be answering; check `kubectl get --raw /version` with the same kubeconfig")),
            GatherError::ProxyUnreachable { .. } => Some(Cow::Borrowed("the proxy (proxy-url in the kubeconfig's cluster, or HTTPS_PROXY/HTTP_PROXY) does not answer: check that it runs and its address")),
            GatherError::ProxyRefused { .. } => Some(Cow::Borrowed("the proxy answered but refused the tunnel: check that it lets this host through, and the credentials in the proxy URL")),
            GatherError::Watch { .. } => Some(Cow::Borrowed(REACH_HINT)),
            GatherError::Other { .. }
            | GatherError::BadPatch { .. }
            | GatherError::NotRestartable { .. } => None,
        }
    }
}

impl GatherError {
    /// Turns a client error met while reading `what` into the error a person can act on.
    pub(crate) fn from_kube(
        endpoint: &Endpoint,
        timeout: std::time::Duration,
        what: &str,
        err: kube::Error,
    ) -> GatherError {
        let server = endpoint.server.clone();
        let what = what.to_string();
        let cause = root_cause(&err);
        if let Some(busy) = find::<super::service::RetryAfterTooLong>(&err) {
            return GatherError::RetryAfter {
                server,
                what,
                status: busy.status,
                asked: busy.asked,
                left: busy.left,
            };
        }
        if let Some(large) = find::<super::service::ResponseTooLarge>(&err) {
            return GatherError::TooLarge {
                server,
                what,
                limit: large.limit(),
            };
        }
        if let Some(plugin) = find::<super::ExecPluginError>(&err) {
            return GatherError::ExecPlugin {
                server,
                cause: plugin.to_string(),
            };
        }
        if let Some(redirect) = find::<super::service::Redirected>(&err) {
            return GatherError::Redirected {
                server,
                what,
                code: redirect.status.as_u16(),
                location: redirect.location.clone(),
            };
        }
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
                // kube's own word for a body that is not a Status, not the server's.
                reason: if status.reason == NOT_A_STATUS {
                    String::new()
                } else {
                    status.reason.clone()
                },
                message: status.message.clone(),
            },
            kube::Error::SerdeError(e) => GatherError::Undecodable {
                server,
                what,
                problem: liveproof_redacted::parse::json_problem(e),
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
            // Through a proxy, every connection is to the proxy: one that cannot be made is
            // the proxy's, and a tunnel it will not open is its answer, not the server's.
            kube::Error::HyperError(_) | kube::Error::Service(_) if endpoint.proxy.is_some() => {
                let proxy = endpoint.proxy.clone().unwrap_or_default();
                // hyper-util's words for a CONNECT the proxy answered with an error status
                // (407 included); a connection it could not make is "failed to create …".
                if chain_mentions(&err, "tunnel error: unsuccessful")
                    || chain_mentions(&err, "tunnel error: proxy authorization required")
                {
                    GatherError::ProxyRefused {
                        proxy,
                        server,
                        what,
                        cause,
                        source: Box::new(err),
                    }
                } else {
                    GatherError::ProxyUnreachable {
                        proxy,
                        server,
                        what,
                        cause,
                        source: Box::new(err),
                    }
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

/// Where requests go: the API server, and the proxy in between when there is one.
#[derive(Debug, Clone, Default)]
pub(crate) struct Endpoint {
    pub(crate) server: DisplaySafeUrl,
    pub(crate) proxy: Option<DisplaySafeUrl>,
}

/// The most of a server's message shown: a Status (or a page in its place) can be megabytes.
pub const SHOWN_BYTES: usize = 1024;

/// The `reason` kube gives a Status it made up from a body that was not one.
const NOT_A_STATUS: &str = "Failed to parse error data";

/// `text` on one line, cut to [`SHOWN_BYTES`] with a note saying so.
fn shown(text: &str) -> String {
    let flat: String = text
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.len() <= SHOWN_BYTES {
        return flat;
    }
    let mut cut = SHOWN_BYTES;
    while !flat.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}… (cut: {} bytes, the first {} shown)",
        &flat[..cut],
        text.len(),
        SHOWN_BYTES
    )
}

/// `500 Internal Server Error`.
fn status_line(code: u16) -> String {
    match http::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
    {
        Some(reason) => format!("{code} {reason}"),
        None => code.to_string(),
    }
}

fn api_hint(code: u16) -> &'static str {
    match code {
        429 => "the API server is limiting requests; try again later, or with fewer targets at once",
        500..=599 => "the API server (or a proxy in front of it) failed, and kept failing when asked again: check its health with `kubectl get --raw '/readyz?verbose'` with the same kubeconfig",
        _ => "check the same read with kubectl and the same kubeconfig (`kubectl get --raw /version`, `kubectl auth can-i`)",
    }
}

/// The Status an error chain carries (a refused request, a failed watch), however wrapped.
fn find_status<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a kube::core::Status> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(kube::Error::Api(status)) = e.downcast_ref::<kube::Error>() {
            return Some(status);
        }
        if let Some(kube::runtime::watcher::Error::WatchError(status)) =
            e.downcast_ref::<kube::runtime::watcher::Error>()
        {
            return Some(status);
        }
        if let Some(status) = e.downcast_ref::<kube::core::Status>() {
            return Some(status);
        }
        if let Some(status) = e.downcast_ref::<Box<kube::core::Status>>() {
            return Some(status);
        }
        current = e.source();
    }
    None
}

fn chain_mentions(err: &(dyn std::error::Error + 'static), word: &str) -> bool {
    let mut current = Some(err);
    while let Some(e) = current {
        if e.to_string().to_ascii_lowercase().contains(word) {
            return true;
        }
        current = e.source();
    }
    false
}

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

/// The innermost message of an error chain ("Connection refused (os error 111)"), which is
/// what a person needs; the outer layers say "client error (Connect)". A Status is told in
/// words, cut; a URL in it is masked (kube's proxy errors print the proxy URL whole).
pub(crate) fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    if let Some(status) = find_status(err) {
        return format!("{}: {}", status_line(status.code), shown(&status.message));
    }
    if let Some(redirect) = find::<super::service::Redirected>(err) {
        return redirect.to_string();
    }
    let mut last = err;
    while let Some(next) = last.source() {
        last = next;
    }
    let root = last.to_string();
    let top = err.to_string();
    let cause = if std::ptr::addr_eq(last, err) || top.contains(&root) {
        top
    } else {
        root
    };
    liveproof_redacted::mask_urls(&shown(&cause)).into_owned()
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

/// The first error of type `E` in `err`'s chain.
pub(crate) fn find<'a, E: std::error::Error + 'static>(
    err: &'a (dyn std::error::Error + 'static),
) -> Option<&'a E> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<E>() {
            return Some(found);
        }
        current = e.source();
    }
    None
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
