//! `liveproof controller`: its flags, checked before anything is read (a bad one is exit 2
//! naming it), and the settings they make.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use liveproof_evidence::hint::HintedMessage;

pub const CONTROLLER_LONG_ABOUT: &str = "\
Keep every Verification's status true: judge each one's targets with the checks `liveproof
verify` makes (the same judge, so the CLI and the object never disagree on the same state),
write .status (Ready True only while live, Reconciling while it can still go live, Stalled on a
final failure) and an Event when Ready changes, and judge again whenever a watched object its
targets live beside changes, and at least every --resync-period.

One watch per kind (Deployments, StatefulSets, DaemonSets, ReplicaSets, Pods, EndpointSlices;
metadata only) and namespace scope is shared by all Verifications: 500 of them cost the watches
one does. A change to a watched object triggers only the Verifications in its namespace (or
naming it as NAMESPACE/TYPE/NAME).

RBAC it needs: what deploy/rbac-readonly.yaml grants (get, list, watch on what verify reads),
plus get, list, watch on verifications.liveproof.dev, patch on verifications/status, create
and patch on events.k8s.io events, and with --leader-elect get, create, update, patch on its
coordination.k8s.io Lease.

In a pod it uses the service account; outside, a kubeconfig (--kubeconfig, $KUBECONFIG,
~/.kube/config), for development:

  kubectl apply -f deploy/verification-crd.yaml
  liveproof controller --metrics-address 127.0.0.1:8080 -v

It serves /metrics (Prometheus), /healthz and /readyz on --metrics-address. SIGTERM or Ctrl-C
stops it cleanly (the Lease released). It reads; it writes only Verification statuses, Events
and its Lease. It never writes a secret's value anywhere.";

/// `liveproof controller`.
#[derive(Debug, Args)]
pub struct ControllerArgs {
    /// Watch and judge the Verifications of this namespace only (default: every namespace).
    #[arg(short, long, value_name = "NS")]
    pub namespace: Option<String>,

    /// Path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config; in a pod, the service account).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,

    /// Bound on each API request (connect, TLS, answer): 10s, 1m, 5 (s) [default: 30s].
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "30s",
        hide_default_value = true,
        allow_hyphen_values = true
    )]
    pub request_timeout: String,

    /// Where /metrics, /healthz and /readyz are served (HOST:PORT; port 0 picks a free one).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:8080")]
    pub metrics_address: String,

    /// Judge only while holding a coordination.k8s.io Lease: one replica writes, the others wait.
    #[arg(long)]
    pub leader_elect: bool,

    /// The Lease's name (with --leader-elect).
    #[arg(long, value_name = "NAME", default_value = "liveproof-controller")]
    pub lease_name: String,

    /// The Lease's namespace (default: $POD_NAMESPACE, else the kubeconfig context's).
    #[arg(long, value_name = "NS")]
    pub lease_namespace: Option<String>,

    /// Judge every Verification again at least this often, even when nothing watched moved
    /// (what no watch triggers: Helm storage, GitOps objects, registries, version URLs).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "60s",
        allow_hyphen_values = true
    )]
    pub resync_period: String,

    /// More output on stderr (-v: each API request, Ready change and Lease step; -vv: more).
    #[arg(short, long, action = clap::ArgAction::Count, help_heading = "Output")]
    pub verbose: u8,
}

/// What the flags say, checked.
#[derive(Debug, Clone)]
pub struct Settings {
    pub namespace: Option<String>,
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub request_timeout: Duration,
    pub metrics_address: SocketAddr,
    /// `--leader-elect`: the Lease's name and, when given or in `$POD_NAMESPACE`, namespace.
    pub lease: Option<(String, Option<String>)>,
    pub resync: Duration,
}

fn refused(message: String, hint: &str) -> HintedMessage {
    HintedMessage::new(message, hint)
}

/// A duration flag: positive, as `--timeout` takes it.
fn duration(flag: &str, given: &str) -> Result<Duration, HintedMessage> {
    match crate::duration::parse(given) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err(refused(
            format!("{flag} `{given}`: must be more than zero"),
            "give a duration such as 30s, 1m or 2m30s",
        )),
        Err(reason) => Err(refused(
            format!("{flag} `{given}`: {reason}"),
            "give a duration such as 30s, 1m or 2m30s",
        )),
    }
}

/// A Kubernetes object name (a DNS-1123 label, as namespaces and Leases take it).
fn dns_label(flag: &str, given: &str) -> Result<String, HintedMessage> {
    let ok = !given.is_empty()
        && given.len() <= 63
        && given
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !given.starts_with('-')
        && !given.ends_with('-');
    if ok {
        Ok(given.to_string())
    } else {
        Err(refused(
            format!("{flag} `{given}`: not a valid name (lowercase letters, digits and '-', at most 63, starting and ending with a letter or digit)"),
            "give a name such as liveproof-controller",
        ))
    }
}

impl ControllerArgs {
    /// The settings, or the first flag that is wrong and how to fix it (exit 2).
    pub fn settings(&self) -> Result<Settings, HintedMessage> {
        let namespace = self
            .namespace
            .as_deref()
            .map(|ns| dns_label("-n/--namespace", ns))
            .transpose()?;
        let request_timeout = duration("--request-timeout", &self.request_timeout)?;
        let resync = duration("--resync-period", &self.resync_period)?;
        let metrics_address = self.metrics_address.parse::<SocketAddr>().map_err(|e| {
            refused(
                format!("--metrics-address `{}`: {e}", self.metrics_address),
                "give an address and a port, such as 0.0.0.0:8080 or 127.0.0.1:0 (a free port)",
            )
        })?;
        let lease = if self.leader_elect {
            let name = dns_label("--lease-name", &self.lease_name)?;
            let namespace = self
                .lease_namespace
                .clone()
                .or_else(|| {
                    std::env::var("POD_NAMESPACE")
                        .ok()
                        .filter(|s| !s.is_empty())
                })
                .map(|ns| dns_label("--lease-namespace", &ns))
                .transpose()?;
            Some((name, namespace))
        } else {
            for (flag, given) in [
                ("--lease-namespace", self.lease_namespace.is_some()),
                ("--lease-name", self.lease_name != "liveproof-controller"),
            ] {
                if given {
                    return Err(refused(
                        format!("{flag} is given without --leader-elect"),
                        "add --leader-elect, or leave the flag out",
                    ));
                }
            }
            None
        };
        Ok(Settings {
            namespace,
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            request_timeout,
            metrics_address,
            lease,
            resync,
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    /// The flags alone, as clap parses them after `liveproof controller`.
    #[derive(Debug, clap::Parser)]
    struct Flags {
        #[command(flatten)]
        args: ControllerArgs,
    }

    fn settings(words: &[&str]) -> Result<Settings, HintedMessage> {
        let argv = ["controller"].iter().chain(words);
        match Flags::try_parse_from(argv) {
            Ok(flags) => flags.args.settings(),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn the_defaults_watch_every_namespace_and_serve_metrics_on_8080() {
        let s = settings(&[]).expect("defaults");
        assert_eq!(s.namespace, None);
        assert_eq!(s.metrics_address.to_string(), "0.0.0.0:8080");
        assert_eq!(s.request_timeout, Duration::from_secs(30));
        assert!(s.lease.is_none());
    }

    #[test]
    fn a_bad_flag_is_refused_naming_it_with_a_hint() {
        for (words, flag) in [
            (&["--request-timeout", "soon"][..], "--request-timeout"),
            (&["--request-timeout", "0"][..], "--request-timeout"),
            (&["--metrics-address", "8080"][..], "--metrics-address"),
            (&["-n", "Apps_1"][..], "-n/--namespace"),
            (
                &["--leader-elect", "--lease-name", "A B"][..],
                "--lease-name",
            ),
            (&["--lease-namespace", "ops"][..], "--lease-namespace"),
            (&["--resync-period", "-1s"][..], "--resync-period"),
        ] {
            let err = settings(words).expect_err("refused");
            assert!(err.message.starts_with(flag), "{words:?}: {}", err.message);
            assert!(!err.hint.is_empty());
        }
    }

    #[test]
    fn leader_election_takes_the_lease_flags() {
        let s = settings(&[
            "--leader-elect",
            "--lease-name",
            "lp",
            "--lease-namespace",
            "ops",
        ])
        .expect("valid");
        assert_eq!(s.lease, Some(("lp".into(), Some("ops".into()))));
    }
}
