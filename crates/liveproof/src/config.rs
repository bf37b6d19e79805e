//! Arguments validated into what the commands run on: every bad flag is caught here, with
//! the flag named, before any I/O.

use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;
use liveproof_evidence::digest::DigestPolicy;
use liveproof_evidence::{
    Change, ExpectedImage, ManifestExpectation, SecretRefExpectation, Target,
};
use liveproof_gather::live::ClusterOptions;
use liveproof_report::{Format, TextStyle};

use crate::cli::{ChangeArgs, ClusterArgs, ColorChoice, OutputFormat, VerifyArgs};

/// A usage error: exit 2, message names the flag.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Target(#[from] liveproof_evidence::TargetError),
    #[error("--since `{given}` is not an RFC 3339 time: {reason}\nhint: e.g. --since 2026-07-12T10:00:00Z (a time and a zone are required)")]
    Since { given: String, reason: String },
    #[error(
        "--commit `{given}` is not a commit: give 7 to 40 hex digits\nhint: e.g. --commit 3f2c1ab"
    )]
    Commit { given: String },
    #[error("--commit {commit}: {source}")]
    CommitTime {
        commit: String,
        #[source]
        source: liveproof_gather::git::GitError,
    },
    #[error("--image `{given}` is not an image reference\nhint: e.g. --image ghcr.io/acme/inventory:1.4.0 or --image ghcr.io/acme/inventory@sha256:…")]
    Image { given: String },
    #[error("--expect `{given}`: {reason}\nhint: plain text is matched as is; `re:` starts a regular expression, e.g. --expect 're:secretKeyRef:\\s+name: inventory-db'")]
    Expect { given: String, reason: String },
    #[error("--chart-version `{given}` is empty or has spaces")]
    ChartVersion { given: String },
    #[error("--version-url/--expect-version/--version-json: {0}\nhint: give one --expect-version for all URLs or one per --version-url, in the same order")]
    Versions(String),
    #[error("--expect-env `{given}` is not an env var name")]
    Env { given: String },
    #[error("--expect-secret-ref `{given}` is not SECRET or SECRET/KEY")]
    SecretRef { given: String },
    #[error(
        "--timeout `{given}` is not a duration: {reason}\nhint: e.g. --timeout 90s, 5m or 1h30m"
    )]
    Timeout { given: String, reason: String },
    #[error("--request-timeout `{given}` is not a duration: {reason}\nhint: e.g. --request-timeout 10s or 1m (0 is refused: every request is bounded)")]
    RequestTimeout { given: String, reason: String },
    #[error("--from {}: no such file or directory", path.display())]
    FromMissing { path: PathBuf },
}

/// Where objects come from.
#[derive(Debug, Clone)]
pub enum Source {
    Live(ClusterOptions),
    Offline(PathBuf),
}

#[derive(Debug, Clone)]
pub struct VerifyConfig {
    pub targets: Vec<Target>,
    pub change: Change,
    pub source: Source,
    pub all_namespaces: bool,
    /// `-n`: the namespace for targets that name none (offline; live asks the kubeconfig too).
    pub namespace: Option<String>,
    /// `--wait --timeout`: when the whole command must be done.
    pub wait: Option<crate::deadline::Deadline>,
    /// `--request-timeout`: bounds each API, registry and --version-url request.
    pub request_timeout: Duration,
    pub format: Format,
    pub style: TextStyle,
    /// `--max-release-size`.
    pub max_release_size: usize,
    /// `--repo`: where `--commit` is read from.
    pub repo: std::path::PathBuf,
    /// `--insecure-registry`: registries spoken to over plain HTTP.
    pub insecure_registries: Vec<String>,
    /// `--version-url` / `--expect-version` / `--version-json`, paired.
    pub versions: Vec<liveproof_evidence::server::VersionExpectation>,
    /// `--logs N`: log lines per not-ready container in the diagnostics (off when `None`).
    pub logs: Option<i64>,
    /// `--snapshot DIR`: verify what changed since the snapshot there.
    pub snapshot: Option<std::path::PathBuf>,
    /// `--report FILE`, and the format written there.
    pub report: Option<(std::path::PathBuf, Format)>,
    /// What the change time was taken from, for the verbose log.
    pub since_origin: Option<String>,
}

pub fn text_style(choice: ColorChoice, stdout_is_terminal: bool) -> TextStyle {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    TextStyle {
        color: match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => stdout_is_terminal && !no_color,
        },
    }
}

pub fn format(output: OutputFormat) -> Format {
    match output {
        OutputFormat::Text => Format::Text,
        OutputFormat::Json => Format::Json,
        OutputFormat::Markdown => Format::Markdown,
        OutputFormat::Junit => Format::Junit,
    }
}

impl VerifyConfig {
    pub fn from_args(args: &VerifyArgs, style: TextStyle) -> Result<VerifyConfig, ConfigError> {
        let targets = args
            .targets
            .iter()
            .map(|t| Target::parse(t))
            .collect::<Result<Vec<_>, _>>()?;
        // With --snapshot the change time is the snapshot's; the commit is only matched.
        let (change, since_origin) = change(&args.change, args.snapshot.is_some())?;
        let source = match &args.from {
            Some(path) if !path.exists() => {
                return Err(ConfigError::FromMissing { path: path.clone() })
            }
            Some(path) => Source::Offline(path.clone()),
            None => Source::Live(cluster_options(&args.cluster)?),
        };
        let request_timeout = request_timeout(&args.cluster)?;
        // The clock starts now: --timeout bounds the whole command, the first gather included.
        let wait = if args.wait {
            Some(crate::deadline::Deadline::starting_now(parse_duration(
                &args.timeout,
            )?))
        } else {
            None
        };
        Ok(VerifyConfig {
            targets,
            change,
            source,
            all_namespaces: args.cluster.all_namespaces,
            namespace: namespace(&args.cluster),
            wait,
            request_timeout,
            format: format(args.output),
            style,
            since_origin,
            max_release_size: args.max_release_size,
            repo: args.change.repo.clone(),
            insecure_registries: args.change.insecure_registry.clone(),
            versions: versions(&args.change)?,
            logs: args.logs.filter(|n| *n > 0),
            snapshot: args.snapshot.clone(),
            report: args.report.as_ref().map(|path| {
                let by_extension = match path.extension().and_then(|e| e.to_str()) {
                    Some("json") => Format::Json,
                    Some("xml") => Format::Junit,
                    Some("md" | "markdown") => Format::Markdown,
                    _ => Format::Text,
                };
                (
                    path.clone(),
                    args.report_format.map_or(by_extension, format),
                )
            }),
        })
    }
}

/// `--request-timeout`, checked.
pub fn request_timeout(args: &ClusterArgs) -> Result<Duration, ConfigError> {
    positive_duration(&args.request_timeout).map_err(|reason| ConfigError::RequestTimeout {
        given: args.request_timeout.clone(),
        reason,
    })
}

/// `-n`, unless `-A` is given: as kubectl, `--all-namespaces` wins over `--namespace`.
pub fn namespace(args: &ClusterArgs) -> Option<String> {
    if args.all_namespaces {
        if let Some(ns) = &args.namespace {
            tracing::info!("-n {ns} ignored: -A looks in every namespace (as kubectl)");
        }
        return None;
    }
    args.namespace.clone()
}

/// How to reach the cluster, from the kubectl-style flags (the request timeout checked).
pub fn cluster_options(args: &ClusterArgs) -> Result<ClusterOptions, ConfigError> {
    Ok(ClusterOptions {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        namespace: namespace(args),
        request_timeout: Some(request_timeout(args)?),
    })
}

pub fn parse_duration(given: &str) -> Result<Duration, ConfigError> {
    positive_duration(given).map_err(|reason| ConfigError::Timeout {
        given: given.to_string(),
        reason,
    })
}

/// A duration such as `90s` or `1h30m`, more than zero.
fn positive_duration(given: &str) -> Result<Duration, String> {
    let d: jiff::SignedDuration = given
        .trim()
        .parse()
        .map_err(|e: jiff::Error| e.to_string())?;
    if d.is_negative() || d.is_zero() {
        return Err("it must be positive".into());
    }
    Duration::try_from(d).map_err(|e| e.to_string())
}

/// Pairs the version flags: one value for all URLs, or one per URL in order.
fn versions(
    args: &ChangeArgs,
) -> Result<Vec<liveproof_evidence::server::VersionExpectation>, ConfigError> {
    let urls = &args.version_url;
    let pick = |values: &[String], what: &str, i: usize| -> Result<Option<String>, ConfigError> {
        match values.len() {
            0 => Ok(None),
            1 => Ok(Some(values[0].clone())),
            n if n == urls.len() => Ok(Some(values[i].clone())),
            n => Err(ConfigError::Versions(format!(
                "{n} {what} for {} URL(s)",
                urls.len()
            ))),
        }
    };
    urls.iter()
        .enumerate()
        .map(|(i, url)| {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(ConfigError::Versions(format!(
                    "`{url}` is not an http(s) URL"
                )));
            }
            let expect = pick(&args.expect_version, "--expect-version", i)?.unwrap_or_default();
            let json_path = pick(&args.version_json, "--version-json", i)?;
            if let Some(path) = &json_path {
                liveproof_evidence::server::parse_json_path(path)
                    .map_err(|e| ConfigError::Versions(format!("--version-json `{path}`: {e}")))?;
            }
            Ok(liveproof_evidence::server::VersionExpectation {
                url: url.clone(),
                expect,
                json_path,
            })
        })
        .collect()
}

pub fn parse_since(given: &str) -> Result<Timestamp, ConfigError> {
    given
        .trim()
        .parse::<Timestamp>()
        .map_err(|e| ConfigError::Since {
            given: given.to_string(),
            reason: e.to_string(),
        })
}

fn change(
    args: &ChangeArgs,
    commit_time_known: bool,
) -> Result<(Change, Option<String>), ConfigError> {
    let mut since = args.since.as_deref().map(parse_since).transpose()?;
    let mut origin = since.map(|_| "--since".to_string());
    let commit = match &args.commit {
        None => None,
        Some(c) => {
            let valid = (7..=40).contains(&c.len()) && c.bytes().all(|b| b.is_ascii_hexdigit());
            if !valid {
                return Err(ConfigError::Commit { given: c.clone() });
            }
            // A snapshot supplies the change time itself: the commit is then only matched.
            let lookup =
                (!commit_time_known).then(|| liveproof_gather::git::commit_time(&args.repo, c));
            match lookup {
                None => {}
                Some(Ok(info)) if since.is_none() => {
                    since = Some(info.committed);
                    origin = Some(format!(
                        "committer time of {} in {}",
                        info.sha,
                        args.repo.display()
                    ));
                }
                Some(Ok(_)) => {}
                // An explicit --since makes the commit's time unnecessary.
                Some(Err(_)) if since.is_some() => {}
                Some(Err(source)) => {
                    return Err(ConfigError::CommitTime {
                        commit: c.clone(),
                        source,
                    })
                }
            }
            Some(c.to_ascii_lowercase())
        }
    };
    let images = args
        .image
        .iter()
        .map(|i| ExpectedImage::parse(i).ok_or_else(|| ConfigError::Image { given: i.clone() }))
        .collect::<Result<Vec<_>, _>>()?;
    for e in &args.expect_env {
        let valid = !e.is_empty() && !e.contains('=') && !e.contains(char::is_whitespace);
        if !valid {
            return Err(ConfigError::Env { given: e.clone() });
        }
    }
    let secret_refs = args
        .expect_secret_ref
        .iter()
        .map(|s| {
            SecretRefExpectation::parse(s)
                .ok_or_else(|| ConfigError::SecretRef { given: s.clone() })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let manifest = args
        .expect
        .iter()
        .map(|e| {
            ManifestExpectation::parse(e).map_err(|reason| ConfigError::Expect {
                given: e.clone(),
                reason,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let chart_version = match &args.chart_version {
        Some(v) if v.trim().is_empty() || v.contains(char::is_whitespace) => {
            return Err(ConfigError::ChartVersion { given: v.clone() })
        }
        Some(v) => Some(v.clone()),
        None => None,
    };
    Ok((
        Change {
            since,
            commit,
            images,
            env: args.expect_env.clone(),
            secret_refs,
            chart_version,
            manifest,
            digests: if args.no_registry {
                DigestPolicy::Off
            } else if args.check_digests {
                DigestPolicy::AllTags
            } else {
                DigestPolicy::Mutable
            },
        },
        origin,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("90s").expect("parses"),
            Duration::from_secs(90)
        );
        assert_eq!(
            parse_duration("1h30m").expect("parses"),
            Duration::from_secs(5400)
        );
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("0s").is_err());
    }

    #[test]
    fn since_needs_time_and_zone() {
        assert!(parse_since("2026-07-12T10:00:00Z").is_ok());
        let err = parse_since("2026-07-12")
            .expect_err("date only")
            .to_string();
        assert!(err.contains("--since") && err.contains("hint:"), "{err}");
    }
}
