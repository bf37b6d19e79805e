//! `liveproof lint`: the CLI face of `liveproof-lint` (gather, judge); the report crate renders
//! its report, whose exit code is 1 when an error-level finding exists, else 0.

use crate::cli::LintArgs;

/// Lints what `args` names; errors (exit 2) are returned.
pub fn run(args: &LintArgs) -> anyhow::Result<liveproof_lint::Linted> {
    let options = liveproof_lint::Options {
        path: args.path.clone(),
        base: args.base.clone(),
        head: args.head.clone(),
    };
    let input = liveproof_lint::gather(&options)?;
    Ok(liveproof_lint::lint(&input))
}
