//! A kubeconfig user's `exec` credential plugin, run by us under bounds.
//!
//! kube-rs runs the plugin itself, with `std::process` and no timeout, several times while a
//! client is built and again on each refresh: `exec: {command: /bin/sleep, args: ["1000"]}`
//! held verify, `--wait --timeout` and `release show` past every bound. So the plugin is taken
//! out of the configuration kube sees: we run it once when connecting, within
//! `--request-timeout` (in its own process group, killed whole at the bound; its output
//! capped — see [`liveproof_process`]), and hand kube what it issued: a client certificate
//! goes into the TLS configuration, a token into each request's `Authorization` header through
//! [`ExecAuthLayer`], which runs the plugin again (bounded the same way) when the token nears
//! its `expirationTimestamp`, as client-go does.
//!
//! Nothing the plugin is given or prints (arguments, environment, output) is ever shown: any
//! of it can be a credential. Its name (`aws`, `gke-gcloud-auth-plugin`) is.

use std::io::IsTerminal as _;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use base64::Engine as _;
use futures::future::BoxFuture;
use http::{HeaderValue, Request};
use jiff::{SignedDuration, Timestamp};
use kube::config::{ExecConfig, ExecInteractiveMode};
use liveproof_process::{Bounds, ProgramError};
use serde::Deserialize;
use tower::{BoxError, Layer, Service};

/// A token this close to its expiry is refreshed before it is sent (client-go and kube-rs
/// use the same margin).
const REFRESH_MARGIN: SignedDuration = SignedDuration::from_secs(60);

/// Why the exec credential plugin issued no credential. Names the plugin's program, never its
/// arguments, environment or output.
#[derive(Debug, thiserror::Error)]
pub enum ExecPluginError {
    #[error("the kubeconfig user's exec credential plugin names no command")]
    NoCommand,
    #[error("the kubeconfig's exec credential plugin `{program}`: {source}")]
    Program {
        program: String,
        #[source]
        source: ProgramError,
    },
    #[error("the kubeconfig's exec credential plugin `{program}` exited with {status} (its arguments, environment and output are not shown: they can hold credentials)")]
    Failed { program: String, status: String },
    #[error("the kubeconfig's exec credential plugin `{program}` did not print an ExecCredential with status.token, or status.clientCertificateData and status.clientKeyData (its output is not shown: it can hold credentials)")]
    NotACredential { program: String },
    #[error("the kubeconfig's exec credential plugin `{program}` printed an expirationTimestamp that is not an RFC 3339 time")]
    BadExpiry { program: String },
    #[error("the kubeconfig's exec credential plugin `{program}` has interactiveMode: Always, and liveproof's stdin is not a terminal")]
    NeedsTerminal { program: String },
    #[error("the kubeconfig's exec credential plugin `{program}` issued a client certificate when asked to refresh its token; liveproof cannot switch credentials mid-run")]
    SwitchedToCertificate { program: String },
    #[error("the kubeconfig's exec credential plugin `{program}` could not be run: {reason}")]
    Internal { program: String, reason: String },
    #[error("the kubeconfig user's `auth-provider: gcp` runs its `cmd-path` with no bound on how long it takes; kubectl removed this provider in 1.26, and liveproof does not run it either: use the exec plugin `gke-gcloud-auth-plugin` (`gcloud components install gke-gcloud-auth-plugin`, then `gcloud container clusters get-credentials CLUSTER` writes it into the kubeconfig)")]
    GcpProviderRemoved,
}

/// What a plugin issued.
enum Issued {
    Token {
        /// `Bearer …`, marked sensitive (its `Debug` shows no value).
        header: HeaderValue,
        expires: Option<Timestamp>,
    },
    Certificate {
        certificate_pem: String,
        key_pem: String,
    },
}

/// The plugin of a kubeconfig user, and how long one run of it may take.
#[derive(Debug, Clone)]
struct ExecPlugin {
    exec: ExecConfig,
    timeout: Duration,
}

impl ExecPlugin {
    /// The program's name, safe to show.
    fn program(&self) -> String {
        self.exec
            .command
            .as_deref()
            .map(|c| {
                std::path::Path::new(c)
                    .file_name()
                    .map_or_else(|| c.to_string(), |n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_default()
    }

    /// Runs the plugin on a blocking thread (never on the runtime's workers), within its
    /// timeout.
    async fn issue(&self) -> Result<Issued, ExecPluginError> {
        let plugin = self.clone();
        tokio::task::spawn_blocking(move || plugin.issue_blocking())
            .await
            .map_err(|e| ExecPluginError::Internal {
                program: self.program(),
                reason: e.to_string(),
            })?
    }

    fn issue_blocking(&self) -> Result<Issued, ExecPluginError> {
        let program = self.program();
        let command = self
            .exec
            .command
            .as_ref()
            .ok_or(ExecPluginError::NoCommand)?;
        // As client-go: interactive only with a terminal on stdin, unless the plugin says never.
        let terminal = std::io::stdin().is_terminal();
        let interactive = match self.exec.interactive_mode {
            Some(ExecInteractiveMode::Never) => false,
            Some(ExecInteractiveMode::Always) if !terminal => {
                return Err(ExecPluginError::NeedsTerminal { program })
            }
            _ => terminal,
        };
        let mut cmd = std::process::Command::new(command);
        if let Some(args) = &self.exec.args {
            cmd.args(args);
        }
        for env in self.exec.env.iter().flatten() {
            if let (Some(name), Some(value)) = (env.get("name"), env.get("value")) {
                cmd.env(name, value);
            }
        }
        let mut spec = serde_json::json!({ "interactive": interactive });
        if self.exec.provide_cluster_info {
            if let Some(cluster) = &self.exec.cluster {
                spec["cluster"] = serde_json::to_value(cluster).unwrap_or_default();
            }
        }
        let info = serde_json::json!({
            "apiVersion": self.exec.api_version,
            "kind": "ExecCredential",
            "spec": spec,
        });
        cmd.env("KUBERNETES_EXEC_INFO", info.to_string());
        for name in self.exec.drop_env.iter().flatten() {
            cmd.env_remove(name);
        }
        // Its stderr is the user's, as with kubectl: a login prompt or a plugin's own error.
        cmd.stdin(if interactive {
            std::process::Stdio::inherit()
        } else {
            std::process::Stdio::null()
        });
        let out = liveproof_process::run(
            cmd,
            Bounds {
                stdin: None,
                capture_stderr: false,
                timeout: self.timeout,
                max_output: liveproof_process::MAX_OUTPUT,
            },
        )
        .map_err(|source| ExecPluginError::Program {
            program: program.clone(),
            source,
        })?;
        if !out.status.success() {
            return Err(ExecPluginError::Failed {
                program,
                status: out.status.to_string(),
            });
        }
        parse(&out.stdout, &program)
    }
}

#[derive(Deserialize)]
struct ExecCredential {
    status: Option<ExecCredentialStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredentialStatus {
    token: Option<String>,
    expiration_timestamp: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
}

/// An ExecCredential, JSON or YAML (client-go decodes either).
fn parse(stdout: &[u8], program: &str) -> Result<Issued, ExecPluginError> {
    let not_one = || ExecPluginError::NotACredential {
        program: program.to_string(),
    };
    let credential: ExecCredential = serde_json::from_slice(stdout)
        .or_else(|_| serde_norway::from_slice(stdout))
        .map_err(|_| not_one())?;
    let status = credential.status.ok_or_else(not_one)?;
    if let (Some(certificate_pem), Some(key_pem)) =
        (status.client_certificate_data, status.client_key_data)
    {
        return Ok(Issued::Certificate {
            certificate_pem,
            key_pem,
        });
    }
    let token = status.token.filter(|t| !t.is_empty()).ok_or_else(not_one)?;
    let expires = status
        .expiration_timestamp
        .map(|t| t.parse::<Timestamp>())
        .transpose()
        .map_err(|_| ExecPluginError::BadExpiry {
            program: program.to_string(),
        })?;
    let mut header = HeaderValue::try_from(format!("Bearer {token}")).map_err(|_| not_one())?;
    header.set_sensitive(true);
    Ok(Issued::Token { header, expires })
}

/// The token a plugin issued, shared by every client of a cluster, refreshed when it nears
/// its expiry.
#[derive(Clone)]
pub(crate) struct ExecToken {
    plugin: Arc<ExecPlugin>,
    current: Arc<tokio::sync::Mutex<(HeaderValue, Option<Timestamp>)>>,
}

impl std::fmt::Debug for ExecToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecToken")
            .field("program", &self.plugin.program())
            .finish_non_exhaustive()
    }
}

impl ExecToken {
    /// The same token, refreshed within `timeout` from now on.
    pub(crate) fn with_timeout(&self, timeout: Duration) -> ExecToken {
        ExecToken {
            plugin: Arc::new(ExecPlugin {
                exec: self.plugin.exec.clone(),
                timeout,
            }),
            current: Arc::clone(&self.current),
        }
    }

    /// The `Authorization` header to send now.
    async fn header(&self) -> Result<HeaderValue, ExecPluginError> {
        let mut current = self.current.lock().await;
        let expiring = current
            .1
            .is_some_and(|at| Timestamp::now() + REFRESH_MARGIN >= at);
        if expiring {
            match self.plugin.issue().await? {
                Issued::Token { header, expires } => *current = (header, expires),
                Issued::Certificate { .. } => {
                    return Err(ExecPluginError::SwitchedToCertificate {
                        program: self.plugin.program(),
                    })
                }
            }
        }
        Ok(current.0.clone())
    }
}

/// Runs the exec plugin of `config`'s user, if kube would use it (client-go's order: an auth
/// provider, a user and password, a token and a token file all come first), within
/// `first_run`. The plugin is taken out of `config`; a certificate it issued is put in; a
/// token is returned for [`ExecAuthLayer`], refreshed within `refresh` each time.
pub(crate) async fn authenticate(
    config: &mut kube::Config,
    first_run: Duration,
    refresh: Duration,
) -> Result<Option<ExecToken>, ExecPluginError> {
    let auth = &config.auth_info;
    // kube would run the gcp provider's command itself, unbounded (a command that never
    // ends hangs every read): refused, as kubectl does.
    if auth
        .auth_provider
        .as_ref()
        .is_some_and(|p| p.name == "gcp" && p.config.contains_key("cmd-path"))
    {
        return Err(ExecPluginError::GcpProviderRemoved);
    }
    let other_credentials = auth.auth_provider.is_some()
        || (auth.username.is_some() && auth.password.is_some())
        || auth.token.is_some()
        || auth.token_file.is_some();
    if other_credentials {
        return Ok(None);
    }
    let Some(exec) = config.auth_info.exec.take() else {
        return Ok(None);
    };
    let plugin = ExecPlugin {
        exec,
        timeout: first_run,
    };
    match plugin.issue().await? {
        Issued::Token { header, expires } => Ok(Some(ExecToken {
            plugin: Arc::new(ExecPlugin {
                timeout: refresh,
                ..plugin
            }),
            current: Arc::new(tokio::sync::Mutex::new((header, expires))),
        })),
        Issued::Certificate {
            certificate_pem,
            key_pem,
        } => {
            // kube reads `*-data` as base64 of the PEM, as a kubeconfig holds it.
            let b64 = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem);
            config.auth_info.client_certificate_data = Some(b64(&certificate_pem));
            config.auth_info.client_key_data = Some(b64(&key_pem).into());
            Ok(None)
        }
    }
}

/// Puts the exec plugin's token (refreshed when it nears expiry) on each request; without a
/// token, passes requests on as they are.
#[derive(Clone, Debug)]
pub(crate) struct ExecAuthLayer {
    pub(crate) token: Option<ExecToken>,
}

impl<S> Layer<S> for ExecAuthLayer {
    type Service = ExecAuth<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ExecAuth {
            inner,
            token: self.token.clone(),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct ExecAuth<S> {
    inner: S,
    token: Option<ExecToken>,
}

impl<S, B> Service<Request<B>> for ExecAuth<S>
where
    S: Service<Request<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<S::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        // The service made ready is the one called (tower's clone-and-swap).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let token = self.token.clone();
        Box::pin(async move {
            if let Some(token) = token {
                // Boxed as itself, so the error chain finds it (`GatherError::from_kube`).
                let header = token
                    .header()
                    .await
                    .map_err(|e| -> BoxError { Box::new(e) })?;
                req.headers_mut()
                    .insert(http::header::AUTHORIZATION, header);
            }
            inner.call(req).await.map_err(Into::into)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exec_credential_is_read_as_json_or_yaml_and_never_quoted() {
        let json = br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t0k","expirationTimestamp":"2030-01-01T00:00:00Z"}}"#;
        let Ok(Issued::Token { header, expires }) = parse(json, "p") else {
            panic!("a token");
        };
        assert_eq!(header.to_str().ok(), Some("Bearer t0k"));
        assert!(header.is_sensitive());
        assert_eq!(expires, Some("2030-01-01T00:00:00Z".parse().expect("time")));
        let yaml =
            b"kind: ExecCredential\nstatus:\n  clientCertificateData: CERT\n  clientKeyData: KEY\n";
        assert!(matches!(parse(yaml, "p"), Ok(Issued::Certificate { .. })));
        for garbage in [&b"hunter2-typed"[..], b"{\"status\": {}}", b"{}"] {
            let err = parse(garbage, "p")
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains("did not print an ExecCredential"), "{err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
    }
}
