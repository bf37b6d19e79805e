//! `-o name`: kubectl's habit — one line per object, `KIND.GROUP/NAME` (`deployment.apps/web`,
//! `helmrelease.helm.toolkit.fluxcd.io/shop`; a core kind has no group), and the verdict in
//! the exit code only. Every target verified is listed, in report order: a Helm or GitOps
//! target, then the workloads reached through it. Two rows are not API objects and follow
//! their own rule: a Helm release (read from its storage Secrets) prints as liveproof's own
//! target, `release/NAME`, which `liveproof verify` takes back; a `--version-url` row names
//! no object and prints nothing. As kubectl's, the lines carry no namespace.

use std::io::{self, Write};

use liveproof_evidence::TargetReport;

use crate::textutil::terminal_safe;

/// One `KIND.GROUP/NAME` line per object target (see the module's rules).
pub fn render_names(targets: &[TargetReport], out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    for name in targets.iter().filter_map(object_name) {
        writeln!(out, "{name}")?;
    }
    out.flush()
}

/// `deployment.apps/web`, `release/shop`; none for a row that is no object.
pub(crate) fn object_name(target: &TargetReport) -> Option<String> {
    let spec = target.kind.target()?.spec();
    // The table's rows say it: a kind read as another resource (a release, as its storage
    // Secrets) is no API object of its own.
    let resource = spec.resource;
    let kind = match resource.group() {
        _ if resource.kind_name() != spec.kind_name => spec.cli_name.to_string(),
        "" => spec.cli_name.to_string(),
        group => format!("{}.{group}", spec.cli_name),
    };
    // Names come from the cluster or a dump: one line each, whatever they hold.
    Some(format!("{kind}/{}", terminal_safe(&target.name)))
}
