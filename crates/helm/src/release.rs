//! The release record as Helm stores it (`helm.sh/helm/v3/pkg/release`), reduced to the fields
//! liveproof reads. Unknown fields are ignored; missing ones take their empty value, as Go's
//! `encoding/json` would give them.

use std::fmt;
use std::str::FromStr;

use jiff::Timestamp;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::values::Values;

/// One revision of a release. Read from JSON as a [`Record`] that keeps every part.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(from = "Record<String, Values, Vec<Hook>>")]
pub struct Release {
    pub name: String,
    pub namespace: String,
    /// The revision: the `N` in `sh.helm.release.v1.NAME.vN`.
    pub version: i64,
    pub info: Info,
    pub chart: Chart,
    /// The values the user supplied (not the chart's defaults).
    pub config: Values,
    /// Every rendered template (hooks excluded), `---`-separated: what `helm get manifest` prints.
    pub manifest: String,
    pub hooks: Vec<Hook>,
}

impl From<Record<String, Values, Vec<Hook>>> for Release {
    fn from(mut record: Record<String, Values, Vec<Hook>>) -> Release {
        let manifest = std::mem::take(&mut record.manifest);
        record.with_manifest(manifest)
    }
}

/// A release as decoded from storage, with `M`, `C` and `H` standing for how its manifest,
/// config and hooks are read: as [`Release`] holds them, or [`Skipped`] when the reader does
/// not need them. The one place the fields' reading rules are written: [`Release`] is read
/// through it.
#[derive(Deserialize)]
#[serde(bound(
    deserialize = "M: Deserialize<'de> + Default, C: Deserialize<'de> + Default, H: Deserialize<'de> + Default"
))]
pub(crate) struct Record<M, C, H> {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    pub version: i64,
    #[serde(default, deserialize_with = "nullable")]
    pub info: Info,
    #[serde(default, deserialize_with = "nullable")]
    pub chart: Chart,
    #[serde(default)]
    pub config: C,
    #[serde(default, deserialize_with = "nullable")]
    pub manifest: M,
    #[serde(default, deserialize_with = "nullable")]
    pub hooks: H,
}

/// A part of the release its reader does not keep: checked to be JSON, never stored.
#[derive(Default)]
pub(crate) struct Skipped;

impl<'de> Deserialize<'de> for Skipped {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer)?;
        Ok(Self)
    }
}

impl Record<Skipped, Skipped, Skipped> {
    /// The summary as a [`Release`] whose manifest, config and hooks are empty.
    pub(crate) fn into_release(self) -> Release {
        Release {
            name: self.name,
            namespace: self.namespace,
            version: self.version,
            info: self.info,
            chart: self.chart,
            config: Values::default(),
            manifest: String::new(),
            hooks: Vec::new(),
        }
    }
}

impl<M> Record<M, Values, Vec<Hook>> {
    /// The whole [`Release`], with its manifest read apart.
    pub(crate) fn with_manifest(self, manifest: String) -> Release {
        Release {
            name: self.name,
            namespace: self.namespace,
            version: self.version,
            info: self.info,
            chart: self.chart,
            config: self.config,
            manifest,
            hooks: self.hooks,
        }
    }
}

// The manifest may render Secrets, so Debug gives its size, not its text.
impl fmt::Debug for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Release")
            .field("name", &self.name)
            .field("namespace", &self.namespace)
            .field("version", &self.version)
            .field("info", &self.info)
            .field("chart", &self.chart)
            .field("config", &self.config)
            .field("manifest", &format_args!("<{} bytes>", self.manifest.len()))
            .field("hooks", &self.hooks)
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
pub struct Info {
    /// `None` when Helm wrote its zero time: `""` (Helm 3), omitted (Helm 4), or
    /// `0001-01-01T00:00:00Z`.
    #[serde(default, deserialize_with = "helm_time", serialize_with = "rfc3339")]
    pub first_deployed: Option<Timestamp>,
    #[serde(default, deserialize_with = "helm_time", serialize_with = "rfc3339")]
    pub last_deployed: Option<Timestamp>,
    #[serde(default, deserialize_with = "helm_time", serialize_with = "rfc3339")]
    pub deleted: Option<Timestamp>,
    #[serde(default, deserialize_with = "nullable")]
    pub status: ReleaseStatus,
    /// Helm's one-line log entry, e.g. "Upgrade complete".
    #[serde(default, deserialize_with = "nullable")]
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
pub struct Chart {
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: ChartMetadata,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
pub struct ChartMetadata {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// The chart version (`Chart.yaml` `version`), which `reconcileStrategy: ChartVersion` keys on.
    #[serde(default, deserialize_with = "nullable")]
    pub version: String,
    /// `None` when the chart sets no `appVersion` (Helm omits it, or older charts wrote `""`).
    #[serde(
        default,
        rename = "appVersion",
        deserialize_with = "non_empty",
        skip_serializing_if = "Option::is_none"
    )]
    pub app_version: Option<String>,
}

/// A hook of the release. Hooks are not part of `manifest`.
#[derive(Clone, PartialEq, Default, Deserialize)]
pub struct Hook {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// The Kubernetes kind, e.g. `Job`.
    #[serde(default, deserialize_with = "nullable")]
    pub kind: String,
    /// The chart-relative template path.
    #[serde(default, deserialize_with = "nullable")]
    pub path: String,
    /// The hook's rendered manifest; kept for completeness, never needed by the checks.
    #[serde(default, deserialize_with = "nullable")]
    pub manifest: String,
    /// e.g. `pre-upgrade`, `post-install`.
    #[serde(default, deserialize_with = "nullable")]
    pub events: Vec<String>,
}

impl fmt::Debug for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hook")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("path", &self.path)
            .field("manifest", &format_args!("<{} bytes>", self.manifest.len()))
            .field("events", &self.events)
            .finish()
    }
}

/// `info.status` (`helm.sh/helm/v3/pkg/release/status.go`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum ReleaseStatus {
    Deployed,
    Superseded,
    Failed,
    PendingInstall,
    PendingUpgrade,
    PendingRollback,
    Uninstalling,
    Uninstalled,
    /// Helm's own `unknown`, and what a missing or empty status reads as.
    #[default]
    Unknown,
    /// A status this version does not know (e.g. a newer Helm's), kept verbatim.
    Other(String),
}

impl ReleaseStatus {
    pub fn as_str(&self) -> &str {
        match self {
            Self::Deployed => "deployed",
            Self::Superseded => "superseded",
            Self::Failed => "failed",
            Self::PendingInstall => "pending-install",
            Self::PendingUpgrade => "pending-upgrade",
            Self::PendingRollback => "pending-rollback",
            Self::Uninstalling => "uninstalling",
            Self::Uninstalled => "uninstalled",
            Self::Unknown => "unknown",
            Self::Other(other) => other,
        }
    }

    /// An install, upgrade or rollback is under way (or died half-way): the revision is not
    /// what the cluster runs yet.
    pub fn is_pending(&self) -> bool {
        matches!(
            self,
            Self::PendingInstall | Self::PendingUpgrade | Self::PendingRollback
        )
    }
}

impl FromStr for ReleaseStatus {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "deployed" => Self::Deployed,
            "superseded" => Self::Superseded,
            "failed" => Self::Failed,
            "pending-install" => Self::PendingInstall,
            "pending-upgrade" => Self::PendingUpgrade,
            "pending-rollback" => Self::PendingRollback,
            "uninstalling" => Self::Uninstalling,
            "uninstalled" => Self::Uninstalled,
            "unknown" | "" => Self::Unknown,
            other => Self::Other(other.to_owned()),
        })
    }
}

impl fmt::Display for ReleaseStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ReleaseStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ReleaseStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        let Ok(status) = s.parse::<Self>();
        Ok(status)
    }
}

/// What a stored time that does not parse is, in a decode error.
pub(crate) const NOT_A_TIME: &str = "is not an RFC 3339 time";

/// Go's zero `time.Time`, 0001-01-01T00:00:00Z, which Helm uses for "never".
fn is_go_zero_time(ts: Timestamp) -> bool {
    ts.as_second() == -62_135_596_800 && ts.subsec_nanosecond() == 0
}

/// Helm 3 marshals a zero time as `""` (`pkg/time/time.go`), Helm 4 omits it, and a plain Go
/// `time.Time` would write `0001-01-01T00:00:00Z`: all three mean "no time". Anything else must
/// be RFC 3339 (Go writes RFC3339Nano, with the writer's offset).
fn helm_time<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Timestamp>, D::Error> {
    let Some(text) = Option::<String>::deserialize(deserializer)? else {
        return Ok(None);
    };
    if text.is_empty() {
        return Ok(None);
    }
    // Never the text: the error is printed, and a stored string can be anything.
    let ts = text
        .parse::<Timestamp>()
        .map_err(|_| serde::de::Error::custom(NOT_A_TIME))?;
    Ok((!is_go_zero_time(ts)).then_some(ts))
}

fn rfc3339<S: Serializer>(ts: &Option<Timestamp>, serializer: S) -> Result<S::Ok, S::Error> {
    match ts {
        Some(ts) => serializer.collect_str(ts),
        None => serializer.serialize_none(),
    }
}

/// `null` reads as the empty value, as Go's `encoding/json` leaves the zero value in place.
fn nullable<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

fn non_empty<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.filter(|s| !s.is_empty()))
}
