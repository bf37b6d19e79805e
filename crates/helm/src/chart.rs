//! A chart's `Chart.yaml`, as far as Flux's `reconcileStrategy: ChartVersion` reads it: a new
//! chart artifact is built only when its `version` changes. The one rule lint (before the
//! merge) and verify (the diagnosis after it) share; they disagreed before (verify looked for
//! a `+version:` line in the diff, so re-quoting the same version counted as a bump).

use serde_norway::Value;

use crate::yaml::{check_nesting, MAX_NESTING};

/// The chart's version as Helm reads it: `version: 1.0.0`, `version: "1.0.0"` and
/// `version: 1.0.0 # bumped` are one version. A Chart.yaml that does not parse falls back to
/// its first top-level `version:` line; `None` when there is none.
pub fn chart_version(text: &str) -> Option<String> {
    if check_nesting(text, MAX_NESTING).is_ok() {
        if let Ok(doc) = serde_norway::from_str::<Value>(text) {
            match &doc["version"] {
                Value::String(s) => return Some(s.clone()),
                Value::Number(n) => return Some(n.to_string()),
                _ => {}
            }
        }
    }
    text.lines().find_map(|line| {
        let value = line.strip_prefix("version:")?;
        let value = value.split(" #").next().unwrap_or(value).trim();
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)))
            .unwrap_or(value);
        Some(unquoted.to_owned())
    })
}

/// Whether going from `before` to `after` (the Chart.yaml texts; `None` where the file did not
/// exist) builds a new chart under ChartVersion: the versions differ, or either side has none
/// to compare (a new chart is built from its first version).
pub fn chart_version_changed(before: Option<&str>, after: Option<&str>) -> bool {
    match (
        before.and_then(chart_version),
        after.and_then(chart_version),
    ) {
        (Some(before), Some(after)) => before != after,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_version_written_differently_is_no_bump() {
        let base = "apiVersion: v2\nname: web\nversion: 0.4.2\n";
        for same in [
            "apiVersion: v2\nname: web\nversion: \"0.4.2\"\n",
            "apiVersion: v2\nname: web\nversion: '0.4.2'  # still\n",
            "name: web\nversion: 0.4.2\napiVersion: v2\ndescription: moved\n",
        ] {
            assert!(!chart_version_changed(Some(base), Some(same)), "{same}");
        }
        assert!(chart_version_changed(
            Some(base),
            Some("apiVersion: v2\nname: web\nversion: 0.4.3\n")
        ));
        // New, deleted, or without a version: a new chart is built.
        assert!(chart_version_changed(None, Some(base)));
        assert!(chart_version_changed(Some(base), None));
        assert!(chart_version_changed(Some("name: web\n"), Some(base)));
        // A Chart.yaml with a template in it still has its version line read.
        assert_eq!(
            chart_version("name: {{ .x }}\nversion: \"1.2.3\" # x\n").as_deref(),
            Some("1.2.3")
        );
    }
}
