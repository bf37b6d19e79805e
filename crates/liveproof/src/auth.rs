//! `liveproof auth`: kubectl's `auth can-i` habit for what liveproof reads. For the current
//! identity, each read verify sends (evidence's `rbac::reads`, from the kind table) is asked
//! of the API server (`SelfSubjectAccessReview`, the request `kubectl auth can-i` makes) in
//! each namespace given, and listed allowed or denied with the checks it feeds and, when
//! denied, the rule that would allow it. The controller asks its writes the same way
//! ([`review`]).

use std::io::{self, Write};

use futures::StreamExt as _;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::PostParams;
use kube::{Api, Client};
use liveproof_evidence::hint::HintedMessage;
use liveproof_evidence::kinds::Scope;
use liveproof_evidence::rbac::{self, Read};
use liveproof_evidence::{Target, TargetKind};
use liveproof_report::{Format, Outcome, Render, TextStyle};
use serde::Serialize;

use crate::cli::AuthArgs;

/// One access question: `VERB RESOURCE[/SUB].GROUP` in a namespace (`None`: every namespace,
/// or a cluster-scoped resource).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub subresource: Option<String>,
    pub namespace: Option<String>,
}

/// The API server's answer to one [`Ask`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub allowed: bool,
    /// The authorizer's words, when it gave any.
    pub reason: Option<String>,
}

/// Asks the API server whether the current identity may do `ask` (a
/// `SelfSubjectAccessReview`). An error is the review itself failing (not served, refused,
/// unreachable), not a "no".
pub async fn review(client: &Client, ask: &Ask) -> Result<Answer, kube::Error> {
    let reviews: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                verb: Some(ask.verb.clone()),
                group: Some(ask.group.clone()),
                resource: Some(ask.resource.clone()),
                subresource: ask.subresource.clone(),
                namespace: ask.namespace.clone(),
                ..ResourceAttributes::default()
            }),
            ..SelfSubjectAccessReviewSpec::default()
        },
        ..SelfSubjectAccessReview::default()
    };
    let answer = reviews.create(&PostParams::default(), &review).await?;
    let status = answer.status.unwrap_or_default();
    Ok(Answer {
        allowed: status.allowed,
        reason: status.reason.filter(|r| !r.is_empty()),
    })
}

/// Who the API server says this is (`SelfSubjectReview`, `kubectl auth whoami`), when it
/// says.
pub async fn whoami(client: &Client) -> Option<String> {
    let api: Api<SelfSubjectReview> = Api::all(client.clone());
    match api
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
    {
        Ok(review) => review.status?.user_info?.username,
        Err(e) => {
            tracing::debug!("the API server did not say who this is: {e}");
            None
        }
    }
}

/// The answer of `liveproof auth`.
#[derive(Debug, Clone, Serialize)]
pub struct AuthReport {
    pub schema: &'static str,
    /// The identity asked about, when the API server said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    pub server: String,
    /// The target kinds asked for (empty: every kind).
    pub kinds: Vec<String>,
    pub reads: Vec<ReadAnswer>,
    /// Whether every required read is allowed (exit 0).
    pub allowed: bool,
}

/// One read, in one namespace, and the answer.
#[derive(Debug, Clone, Serialize)]
pub struct ReadAnswer {
    /// Where it was asked; absent: cluster-scoped, or every namespace (-A).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub verb: &'static str,
    pub group: &'static str,
    pub resource: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subresource: Option<&'static str>,
    /// As `kubectl auth can-i` takes it.
    pub can_i: String,
    pub allowed: bool,
    /// Every verify of the targets sends it; otherwise `only` says when.
    pub required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub only: Option<&'static str>,
    /// The target kinds that need it (empty: every kind).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<&'static str>,
    pub feeds: &'static str,
    /// The rule that allows it.
    pub rule: String,
    /// The authorizer's reason, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Runs `liveproof auth`.
pub async fn check(args: &AuthArgs) -> anyhow::Result<AuthReport> {
    let targets = Target::parse_all(&args.targets).map_err(|e| {
        HintedMessage::new(
            e.to_string(),
            format!(
                "name each target KIND/NAME or NS/KIND/NAME (kinds: {})",
                TargetKind::accepted()
            ),
        )
    })?;
    let cluster_args = crate::cli::ClusterArgs {
        namespace: args.namespace.first().cloned(),
        all_namespaces: args.all_namespaces,
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.iter().cloned().collect(),
        request_timeout: args.request_timeout.clone(),
        max_response_size: None,
    };
    let options = liveproof_gather::ClusterOptions::try_from(&cluster_args)?;
    let cluster = liveproof_gather::Cluster::connect(&options).await?;
    let client = cluster.client();
    let kinds: Vec<TargetKind> = targets.iter().map(|t| t.kind).collect();
    // Where namespaced reads are asked: -A (every namespace at once), the targets' and -n's
    // namespaces, else the context's.
    let namespaces: Vec<Option<String>> = if args.all_namespaces {
        vec![None]
    } else {
        let mut all: Vec<String> = args.namespace.clone();
        for t in &targets {
            if let Some(ns) = &t.namespace {
                all.push(ns.clone());
            }
        }
        let unplaced = targets.iter().any(|t| t.namespace.is_none());
        if all.is_empty() || (unplaced && args.namespace.is_empty()) {
            all.push(cluster.default_namespace().to_string());
        }
        let mut seen = std::collections::BTreeSet::new();
        all.retain(|ns| seen.insert(ns.clone()));
        all.into_iter().map(Some).collect()
    };
    let reads: Vec<Read> = rbac::reads()
        .into_iter()
        .filter(|r| r.needed_by(&kinds))
        .collect();
    let mut asks: Vec<(Read, Option<String>)> = Vec::new();
    for read in &reads {
        match read.scope {
            Scope::Cluster => asks.push((*read, None)),
            Scope::Namespaced => {
                for ns in &namespaces {
                    asks.push((*read, ns.clone()));
                }
            }
        }
    }
    let server = cluster.server().to_string();
    let answers: Vec<Result<Answer, kube::Error>> =
        futures::stream::iter(asks.iter().map(|(read, ns)| {
            let ask = Ask {
                verb: read.verb.to_string(),
                group: read.group.to_string(),
                resource: read.resource.to_string(),
                subresource: read.subresource.map(str::to_string),
                namespace: ns.clone(),
            };
            let client = client.clone();
            async move { review(&client, &ask).await }
        }))
        .buffered(8)
        .collect()
        .await;
    let mut rows = Vec::new();
    for ((read, ns), answer) in asks.into_iter().zip(answers) {
        let answer = answer.map_err(|e| {
            HintedMessage::new(
                format!(
                    "the API server at {server} could not answer whether this identity may {}: {}",
                    read.can_i(),
                    cluster.kube_error("a SelfSubjectAccessReview", e)
                ),
                "liveproof auth asks with SelfSubjectAccessReview (authorization.k8s.io/v1), which every authenticated user may create; check the cluster is reachable (`kubectl auth can-i --list` with the same kubeconfig)",
            )
        })?;
        rows.push(ReadAnswer {
            namespace: ns,
            verb: read.verb,
            group: read.group,
            resource: read.resource,
            subresource: read.subresource,
            can_i: read.can_i(),
            allowed: answer.allowed,
            required: read.required_by(&kinds),
            only: read.only,
            kinds: read.kinds.iter().map(|k| k.cli_name()).collect(),
            feeds: read.feeds,
            rule: read.rule(),
            reason: answer.reason,
        });
    }
    let allowed = rows.iter().all(|r| r.allowed || !r.required);
    let identity = whoami(&client).await;
    Ok(AuthReport {
        schema: "liveproof/auth/v1",
        identity,
        server,
        kinds: kinds.iter().map(|k| k.cli_name().to_string()).collect(),
        reads: rows,
        allowed,
    })
}

impl Outcome for AuthReport {
    /// 0 every required read allowed; 1 one is denied.
    fn exit_code(&self) -> u8 {
        u8::from(!self.allowed)
    }
}

impl Render for AuthReport {
    const FORMATS: &'static [Format] = &[Format::Text, Format::Json];

    fn render(&self, format: Format, _style: TextStyle, out: &mut dyn Write) -> io::Result<()> {
        match format {
            Format::Text => self.text(out),
            Format::Json => {
                serde_json::to_writer_pretty(&mut *out, self).map_err(io::Error::other)?;
                writeln!(out)
            }
            _ => Err(liveproof_report::unsupported(
                "auth's list",
                format,
                Self::FORMATS,
            )),
        }
    }
}

impl AuthReport {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "identity: {} on {}",
            self.identity
                .as_deref()
                .unwrap_or("(the API server did not say)"),
            self.server
        )?;
        let cells: Vec<[String; 5]> = self
            .reads
            .iter()
            .map(|r| {
                [
                    r.namespace.clone().unwrap_or_else(|| "*".to_string()),
                    r.can_i.clone(),
                    if r.allowed { "yes" } else { "no" }.to_string(),
                    match (r.required, r.only) {
                        (true, _) => "always".to_string(),
                        (false, Some(when)) => when.to_string(),
                        (false, None) => format!("for {} targets", r.kinds.join(", ")),
                    },
                    r.feeds.to_string(),
                ]
            })
            .collect();
        let head = ["NAMESPACE", "READ", "ALLOWED", "NEEDED", "FEEDS"];
        let mut width = head.map(str::len);
        for row in &cells {
            for (w, c) in width.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |out: &mut dyn Write, row: [&str; 5]| -> io::Result<()> {
            let mut s = String::new();
            for (i, (c, w)) in row.iter().zip(width).enumerate() {
                if i == row.len() - 1 {
                    s.push_str(c);
                } else {
                    s.push_str(&format!("{c:<w$}  "));
                }
            }
            writeln!(out, "{}", s.trim_end())
        };
        line(out, head)?;
        for row in &cells {
            line(out, [&row[0], &row[1], &row[2], &row[3], &row[4]])?;
        }
        let denied: Vec<&ReadAnswer> = self.reads.iter().filter(|r| !r.allowed).collect();
        let required = denied.iter().filter(|r| r.required).count();
        writeln!(out)?;
        if denied.is_empty() {
            writeln!(out, "every read liveproof needs is allowed")?;
            return Ok(());
        }
        writeln!(
            out,
            "{} denied ({required} that every verify of {} needs); a rule that allows each:",
            denied.len(),
            if self.kinds.is_empty() {
                "any target".to_string()
            } else {
                self.kinds.join(", ")
            }
        )?;
        for r in denied {
            let (scope, binding) = match &r.namespace {
                Some(ns) => (format!(" -n {ns}"), "Role"),
                None => (String::new(), "ClusterRole"),
            };
            writeln!(out, "  {}{scope}: {binding} rule {}", r.can_i, r.rule)?;
        }
        writeln!(
            out,
            "deploy/rbac-readonly.yaml grants every one cluster-wide; deploy/rbac-namespaced/ per namespace; deploy/rbac-no-secrets.yaml all but Secrets"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(can_i: &str, ns: Option<&str>, allowed: bool, required: bool) -> ReadAnswer {
        let read = rbac::reads()
            .into_iter()
            .find(|r| r.can_i() == can_i)
            .unwrap_or_else(|| panic!("no read {can_i}"));
        ReadAnswer {
            namespace: ns.map(str::to_string),
            verb: read.verb,
            group: read.group,
            resource: read.resource,
            subresource: read.subresource,
            can_i: read.can_i(),
            allowed,
            required,
            only: read.only,
            kinds: read.kinds.iter().map(|k| k.cli_name()).collect(),
            feeds: read.feeds,
            rule: read.rule(),
            reason: None,
        }
    }

    /// The text names who was asked about, a line per read, and each denied one's rule; the
    /// exit code is 1 only for a denied read every run needs.
    #[test]
    fn the_list_says_each_read_and_the_rule_of_each_denied_one() {
        let mut report = AuthReport {
            schema: "liveproof/auth/v1",
            identity: Some("system:serviceaccount:liveproof:liveproof".into()),
            server: "https://10.0.0.1:6443".into(),
            kinds: Vec::new(),
            reads: vec![
                row("list pods", Some("apps"), true, true),
                row("list nodes", None, false, false),
            ],
            allowed: true,
        };
        assert_eq!(report.exit_code(), 0);
        let mut out = Vec::new();
        report
            .render(Format::Text, TextStyle::plain(), &mut out)
            .expect("renders");
        let text = String::from_utf8(out).expect("utf-8");
        assert!(
            text.starts_with("identity: system:serviceaccount:liveproof:liveproof on https://10.0.0.1:6443\nNAMESPACE  READ"),
            "{text}"
        );
        assert!(
            text.contains("\napps       list pods   yes      always"),
            "{text}"
        );
        assert!(
            text.contains("  list nodes: ClusterRole rule {apiGroups: [\"\"], resources: [\"nodes\"], verbs: [\"list\"]}"),
            "{text}"
        );
        report.allowed = false;
        assert_eq!(report.exit_code(), 1);
    }
}
