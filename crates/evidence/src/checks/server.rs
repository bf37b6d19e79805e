//! The `server_version` check: the version the server itself reports.
//!
//! A rollout that finished, a Deployment whose image was read back, a GitOps controller that
//! says "applied" — none of them is the server saying which build answers. This check is: the
//! gather phase GETs each `--version-url` (see `liveproof_gather::version`) and hands the
//! response to [`judge`], which passes only when the server reports the expected version.
//!
//! Matching is by whole token, so `1.4.0` is found in `inventory 1.4.0 (build 7f3c)` but not in
//! `1.4.01`, `11.4.0`, `1.4.0-rc1` or `1.4.0+dirty` (those are other builds). An optional leading
//! `v`/`V` is accepted on either side (`v1.4.0` reports `1.4.0`, and `--expect-version v1.4.0` is
//! met by `1.4.0`), because both spellings of the same release are common and neither is a
//! different build. A sentence-ending period (`… version 1.4.0.`) is not part of the token.

use liveproof_redacted::DisplaySafeUrl;
use serde_json::Value;

use crate::model::{Check, Evidence, SourceRef, Status, TargetReport, Verdict};
use crate::{Change, Observed};

pub use crate::facts::{VersionExpectation, VersionReading};

/// The largest body the fetcher reads, and so the most [`judge`] ever sees.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// `observed` is cut to about this many characters, on one line.
const OBSERVED_CHARS: usize = 120;

/// Parses a `--version-json` path into its steps, so a bad path is a usage error up front.
/// Each step is an object key, or an array index when it is all digits and the value there
/// is an array.
///
/// Accepted: `.version`, `version`, `$.version`, `.build.version`, `.items.0.version`,
/// `.items[0].version`; `.` (or `$`) alone is the whole document.
pub fn parse_json_path(path: &str) -> Result<Vec<String>, String> {
    let trimmed = path.trim();
    let body = trimmed.strip_prefix('$').unwrap_or(trimmed);
    if body.is_empty() || body == "." {
        return if trimmed.is_empty() {
            Err("the JSON path is empty; write it like .version or .build.version".to_string())
        } else {
            Ok(Vec::new())
        };
    }
    let body = body.strip_prefix('.').unwrap_or(body);
    // `items[0]` is `items.0`.
    let normalized = body.replace('[', ".").replace(']', "");
    let mut segments = Vec::new();
    for part in normalized.split('.') {
        if part.is_empty() {
            return Err(format!(
                "the JSON path {path:?} has an empty step; write it like .version or .items.0.version"
            ));
        }
        segments.push(part.to_string());
    }
    Ok(segments)
}

/// Looks `path` up in `document`: `Ok(Some(text))` for a string, number or boolean,
/// `Ok(None)` when absent or `null`, `Err` when the path is malformed or names an object or
/// array (not a version).
pub fn lookup_json(document: &Value, path: &str) -> Result<Option<String>, String> {
    let segments = parse_json_path(path)?;
    let mut current = document;
    for key in &segments {
        let next = match current {
            Value::Object(map) => map.get(key),
            Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        match next {
            Some(value) => current = value,
            None => return Ok(None),
        }
    }
    match current {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        Value::Object(_) => Err(format!(
            "the field {path} is an object, not a version; point the path at the version field inside it"
        )),
        Value::Array(_) => Err(format!(
            "the field {path} is an array, not a version; add the index, e.g. {path}.0"
        )),
    }
}

/// The `server_version` check: one `Server` target per expectation of `change`, judged from
/// what `observed` read from its URL. No expectation, no target. A URL that was not read
/// (say the time ran out) is `unknown`, so the target is never live without its reading.
pub fn reports(observed: &Observed, change: &Change) -> Vec<TargetReport> {
    let evidence = judge(&change.versions, &observed.versions);
    change
        .versions
        .iter()
        .zip(evidence)
        .map(|(expectation, item)| {
            let verdict = match item.status {
                Status::Pass => Verdict::Live,
                Status::Fail => Verdict::NotLive,
                _ => Verdict::Unproven,
            };
            let next_step = (verdict != Verdict::Live).then(|| {
                crate::Suggestion::text(format!(
                    "the server at {} does not report {} yet: check which build serves it",
                    expectation.url, expectation.expect,
                ))
                .wait_for_it()
            });
            TargetReport {
                kind: crate::ReportKind::Server,
                namespace: String::new(),
                name: expectation.url.to_string(),
                verdict,
                via: None,
                evidence: vec![item],
                next_step,
                live_since: None,
                // An answer says what serves now, not since when; --wait dates when it saw it.
                live_since_unknown: (verdict == Verdict::Live).then(|| {
                    "a server's answer shows the version it serves when asked, not since when (--wait records when it saw it)".to_string()
                }),
                timeline: Vec::new(),
                superseded_by: None,
                pods: Default::default(),
                diagnostics: Vec::new(),
            }
        })
        .collect()
}

/// Judges each expectation against what was read from its URL: one `server_version` evidence
/// item per expectation, in order.
///
/// Readings are paired with expectations by URL; when one URL is given several times (say with
/// two JSON paths), the n-th expectation for it takes the n-th reading for it. An expectation
/// with no reading is `unknown`.
pub fn judge(
    expectations: &[VersionExpectation],
    readings: &[(DisplaySafeUrl, VersionReading)],
) -> Vec<Evidence> {
    let mut used = vec![false; readings.len()];
    expectations
        .iter()
        .map(|expectation| {
            let found = readings
                .iter()
                .enumerate()
                .find(|(i, (url, _))| !used[*i] && *url == expectation.url);
            let reading = found.map(|(i, (_, reading))| {
                used[i] = true;
                reading
            });
            judge_one(expectation, reading)
        })
        .collect()
}

fn judge_one(expectation: &VersionExpectation, reading: Option<&VersionReading>) -> Evidence {
    let url = expectation.url.to_string();
    let source = match &expectation.json_path {
        Some(path) => SourceRef::url(&expectation.url).field(path.trim()),
        None => SourceRef::url(&expectation.url),
    };
    let expect = expectation.expect.trim();
    let evidence = |status: Status, observed: String, detail: String| Evidence {
        check: Check::ServerVersion,
        status,
        observed,
        expected: expect.to_string(),
        source_ref: source.clone(),
        detail,
    };
    if bare_version(expect).is_empty() {
        return evidence(
            Status::Unknown,
            String::new(),
            format!("no version to expect was given for {url}; pass --expect-version"),
        );
    }
    let Some(reading) = reading else {
        return evidence(
            Status::Unknown,
            "not read".to_string(),
            format!("{url} was not read, so the version it serves is unknown"),
        );
    };
    match reading {
        VersionReading::Failed(why) => {
            let why = one_line(why, OBSERVED_CHARS * 2);
            evidence(
                Status::Unknown,
                format!("no answer: {}", one_line(&why, OBSERVED_CHARS)),
                format!(
                    "could not read the version from {url} ({why}); make sure the URL is reachable \
                     from where liveproof runs and answers, then verify again"
                ),
            )
        }
        VersionReading::Field(None) => {
            let path = expectation.json_path.as_deref().unwrap_or(".").trim();
            evidence(
                Status::Fail,
                format!("{path} absent"),
                format!(
                    "the response from {url} has no field {path}, so the server does not report \
                     {expect}: the old build (without that field) may be serving, or the path is wrong"
                ),
            )
        }
        VersionReading::Field(Some(value)) => {
            let observed = if value.trim().is_empty() {
                "(empty)".to_string()
            } else {
                one_line(value, OBSERVED_CHARS)
            };
            if contains_version(value, expect) {
                evidence(
                    Status::Pass,
                    observed,
                    format!("the server at {url} reports {expect}"),
                )
            } else {
                let detail = format!(
                    "the server at {url} still reports {observed}, not {expect}: the old build is \
                     serving; wait for the rollout to reach it, or find why the new image is not running"
                );
                evidence(Status::Fail, observed, detail)
            }
        }
        VersionReading::Body(body) => {
            if contains_version(body, expect) {
                evidence(
                    Status::Pass,
                    excerpt(body, Some(expect)),
                    format!("the server at {url} reports {expect}"),
                )
            } else {
                let seen = version_like_tokens(body, 3);
                let detail = if seen.is_empty() {
                    format!(
                        "the response from {url} does not contain {expect}: the old build may be \
                         serving, or this URL does not report a version (give --version-json for a JSON field)"
                    )
                } else {
                    format!(
                        "the server at {url} still reports {}, not {expect}: the old build is \
                         serving; wait for the rollout to reach it, or find why the new image is not running",
                        seen.join(", ")
                    )
                };
                let observed = if body.trim().is_empty() {
                    "(empty body)".to_string()
                } else {
                    excerpt(body, seen.first().map(String::as_str))
                };
                evidence(Status::Fail, observed, detail)
            }
        }
    }
}

/// A character that continues a version token.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-')
}

/// `v1.4.0` → `1.4.0`; a lone `v` or a `v` not before a digit stays.
fn bare_version(v: &str) -> &str {
    match v.strip_prefix(['v', 'V']) {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => rest,
        _ => v,
    }
}

/// Whether `text` contains `version` as a whole token, with an optional leading `v`/`V`
/// on either side (see the module docs).
pub fn contains_version(text: &str, version: &str) -> bool {
    let needle = bare_version(version.trim());
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(offset) = text[from..].find(needle) {
        let start = from + offset;
        let end = start + needle.len();
        if starts_token(text, start) && ends_token(text, end) {
            return true;
        }
        // Step one character on, so overlapping occurrences are tried too.
        from = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

fn starts_token(text: &str, start: usize) -> bool {
    let mut before = text[..start].chars().rev();
    match before.next() {
        None => true,
        Some(c) if !is_token_char(c) => true,
        // `v1.4.0`, provided the `v` itself starts the token.
        Some('v' | 'V') => before.next().is_none_or(|c| !is_token_char(c)),
        Some(_) => false,
    }
}

fn ends_token(text: &str, end: usize) -> bool {
    let mut after = text[end..].chars();
    match after.next() {
        None => true,
        Some(c) if !is_token_char(c) => true,
        // A sentence-ending period: `… 1.4.0.` but not `1.4.0.1` or `1.4.0.rc`.
        Some('.') => after.next().is_none_or(|c| !is_token_char(c)),
        Some(_) => false,
    }
}

/// Distinct tokens in `text` that look like versions (a digit, a dot, a digit), first `limit`.
fn version_like_tokens(text: &str, limit: usize) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for token in text.split(|c: char| !is_token_char(c)) {
        let token = token.trim_end_matches('.');
        let bare = bare_version(token);
        let looks = bare.starts_with(|c: char| c.is_ascii_digit())
            && bare
                .as_bytes()
                .windows(3)
                .any(|w| w[0].is_ascii_digit() && w[1] == b'.' && w[2].is_ascii_digit());
        if looks && !seen.iter().any(|s| s == token) {
            seen.push(one_line(token, 40));
            if seen.len() == limit {
                break;
            }
        }
    }
    seen
}

/// One line of at most `max` characters: control characters and runs of whitespace become one
/// space, and a cut is marked with `…`.
fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut pending_space = false;
    for c in text.trim().chars() {
        if c.is_whitespace() || c.is_control() {
            pending_space = true;
            continue;
        }
        if pending_space && !out.is_empty() {
            if count == max {
                out.push('…');
                return out;
            }
            out.push(' ');
            count += 1;
        }
        pending_space = false;
        if count == max {
            out.push('…');
            return out;
        }
        out.push(c);
        count += 1;
    }
    out
}

/// The body on one line; when too long, a window around `around` (the version looked for or
/// the first version-like token), so a long HTML page still shows what matters.
fn excerpt(body: &str, around: Option<&str>) -> String {
    let flat = one_line(body, usize::MAX);
    if flat.chars().count() <= OBSERVED_CHARS {
        return flat;
    }
    let position = around
        .and_then(|needle| flat.find(bare_version(needle)))
        .map_or(0, |byte| flat[..byte].chars().count());
    let start = position.saturating_sub(OBSERVED_CHARS / 3);
    let window: String = flat.chars().skip(start).take(OBSERVED_CHARS).collect();
    let total = flat.chars().count();
    format!(
        "{}{}{}",
        if start > 0 { "…" } else { "" },
        window,
        if start + OBSERVED_CHARS < total {
            "…"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const URL: &str = "https://inventory.example/version";

    fn expect(v: &str, path: Option<&str>) -> VersionExpectation {
        VersionExpectation {
            url: URL.into(),
            expect: v.to_string(),
            json_path: path.map(str::to_string),
        }
    }

    fn one(exp: VersionExpectation, reading: VersionReading) -> Evidence {
        let mut out = judge(&[exp], &[(URL.into(), reading)]);
        assert_eq!(out.len(), 1);
        out.remove(0)
    }

    fn body(text: &str) -> VersionReading {
        VersionReading::Body(text.to_string())
    }

    #[test]
    fn body_with_the_version_as_a_token_passes() {
        let e = one(expect("1.4.0", None), body("inventory 1.4.0 (build 7f3c)"));
        assert_eq!(e.check, Check::ServerVersion);
        assert_eq!(e.status, Status::Pass);
        assert_eq!(e.expected, "1.4.0");
        assert_eq!(e.source(), URL);
        assert_eq!(e.observed, "inventory 1.4.0 (build 7f3c)");
    }

    #[test]
    fn another_version_fails_and_names_what_the_server_reports() {
        let e = one(expect("1.4.1", None), body("inventory 1.4.0 (build 7f3c)"));
        assert_eq!(e.status, Status::Fail);
        assert_eq!(e.expected, "1.4.1");
        assert!(
            e.detail.contains("still reports 1.4.0, not 1.4.1"),
            "{}",
            e.detail
        );
        assert!(e.detail.contains("old build is serving"), "{}", e.detail);
    }

    #[test]
    fn a_prefix_or_longer_version_is_not_a_match() {
        for text in [
            "inventory 1.4.01",
            "inventory 11.4.0",
            "inventory 1.4.0.1",
            "inventory 1.4.0-rc1",
            "inventory 1.4.0+dirty",
            "inventory x1.4.0",
            "inventory vv1.4.0",
            "inventory 1.4",
        ] {
            assert!(!contains_version(text, "1.4.0"), "{text}");
        }
        assert!(!contains_version("inventory 1.4.0 (build 7f3c)", "1.4"));
        let e = one(expect("1.4", None), body("inventory 1.4.0 (build 7f3c)"));
        assert_eq!(e.status, Status::Fail);
    }

    #[test]
    fn token_boundaries_that_do_match() {
        for text in [
            "1.4.0",
            "version: 1.4.0\n",
            "\"1.4.0\"",
            "inventory/1.4.0",
            "running v1.4.0",
            "running V1.4.0",
            "deployed 1.4.0.",
            "(1.4.0)",
            "a 1.4.01 and then 1.4.0",
        ] {
            assert!(contains_version(text, "1.4.0"), "{text}");
        }
        // `v` on the expectation side.
        assert!(contains_version("inventory 1.4.0", "v1.4.0"));
        assert!(contains_version("inventory v1.4.0", "v1.4.0"));
        // A version whose own spelling starts with a letter is matched as written.
        assert!(contains_version("release 2024-07-r3", "2024-07-r3"));
        assert!(!contains_version("release 2024-07-r31", "2024-07-r3"));
    }

    #[test]
    fn json_field_equal_or_with_v_passes() {
        let e = one(
            expect("1.4.0", Some(".version")),
            VersionReading::Field(Some("1.4.0".to_string())),
        );
        assert_eq!(e.status, Status::Pass);
        assert_eq!(e.source(), format!("{URL} .version"));
        assert_eq!(e.observed, "1.4.0");
        let e = one(
            expect("1.4.0", Some(".version")),
            VersionReading::Field(Some("v1.4.0".to_string())),
        );
        assert_eq!(e.status, Status::Pass);
        let e = one(
            expect("1.4.0", Some(".build.version")),
            VersionReading::Field(Some("inventory 1.4.0 (7f3c)".to_string())),
        );
        assert_eq!(e.status, Status::Pass);
    }

    #[test]
    fn json_field_with_another_version_fails() {
        let e = one(
            expect("1.4.0", Some(".version")),
            VersionReading::Field(Some("1.3.9".to_string())),
        );
        assert_eq!(e.status, Status::Fail);
        assert_eq!(e.observed, "1.3.9");
        assert!(
            e.detail.contains("still reports 1.3.9, not 1.4.0"),
            "{}",
            e.detail
        );
        let e = one(
            expect("1.4.0", Some(".version")),
            VersionReading::Field(Some("1.4.01".to_string())),
        );
        assert_eq!(e.status, Status::Fail);
        let e = one(
            expect("1.4.0", Some(".version")),
            VersionReading::Field(Some("  ".to_string())),
        );
        assert_eq!(e.status, Status::Fail);
        assert_eq!(e.observed, "(empty)");
    }

    #[test]
    fn absent_field_fails_and_says_so() {
        let e = one(
            expect("1.4.0", Some(".build.version")),
            VersionReading::Field(None),
        );
        assert_eq!(e.status, Status::Fail);
        assert_eq!(e.observed, ".build.version absent");
        assert!(e.detail.contains("has no field .build.version"));
    }

    #[test]
    fn failed_read_is_unknown_never_pass() {
        let e = one(
            expect("1.4.0", None),
            VersionReading::Failed("HTTP 503 Service Unavailable after 3 attempts".to_string()),
        );
        assert_eq!(e.status, Status::Unknown);
        assert!(e.observed.contains("HTTP 503"));
        assert!(e.detail.contains("HTTP 503 Service Unavailable"));
        // Even a failure text that contains the version is not a pass.
        let e = one(
            expect("1.4.0", None),
            VersionReading::Failed("timed out waiting for 1.4.0".to_string()),
        );
        assert_eq!(e.status, Status::Unknown);
    }

    #[test]
    fn missing_reading_is_unknown() {
        let out = judge(&[expect("1.4.0", None)], &[]);
        assert_eq!(out[0].status, Status::Unknown);
        assert_eq!(out[0].observed, "not read");
        let out = judge(
            &[expect("1.4.0", None)],
            &[("https://other.example/".into(), body("1.4.0"))],
        );
        assert_eq!(out[0].status, Status::Unknown);
    }

    #[test]
    fn empty_expectation_is_unknown() {
        for v in ["", "  "] {
            let e = one(expect(v, None), body("anything 1.4.0"));
            assert_eq!(e.status, Status::Unknown, "{v:?}");
        }
    }

    #[test]
    fn one_item_per_expectation_paired_by_url_in_order() {
        let b = DisplaySafeUrl::new("https://b.example/v");
        let exps = [
            expect("1.4.0", Some(".version")),
            VersionExpectation {
                url: b.clone(),
                expect: "2.0.0".to_string(),
                json_path: None,
            },
            expect("7f3c", Some(".commit")),
        ];
        let readings = [
            (b, body("2.0.0")),
            (URL.into(), VersionReading::Field(Some("1.4.0".to_string()))),
            (URL.into(), VersionReading::Field(Some("1a2b".to_string()))),
        ];
        let out = judge(&exps, &readings);
        let statuses: Vec<_> = out.iter().map(|e| e.status).collect();
        assert_eq!(statuses, [Status::Pass, Status::Pass, Status::Fail]);
        assert_eq!(out[2].source(), format!("{URL} .commit"));
    }

    #[test]
    fn observed_is_one_bounded_line_around_the_version() {
        let long = format!(
            "<html>\n<head>{}</head><body>inventory 1.3.9\n(build 7f3c)</body></html>",
            "x ".repeat(500)
        );
        let e = one(expect("1.4.0", None), body(&long));
        assert_eq!(e.status, Status::Fail);
        assert!(!e.observed.contains('\n'));
        assert!(e.observed.chars().count() <= OBSERVED_CHARS + 2);
        assert!(e.observed.contains("1.3.9"), "{}", e.observed);
        assert!(e.detail.contains("still reports 1.3.9"), "{}", e.detail);

        let e = one(expect("1.4.0", None), body(&long.replace("1.3.9", "1.4.0")));
        assert_eq!(e.status, Status::Pass);
        assert!(e.observed.contains("1.4.0"), "{}", e.observed);

        let e = one(expect("1.4.0", None), body("hello\x1b[31m world"));
        assert_eq!(e.status, Status::Fail);
        assert!(!e.observed.contains('\x1b'));
        assert!(e.detail.contains("does not contain 1.4.0"), "{}", e.detail);

        let e = one(expect("1.4.0", None), body(""));
        assert_eq!(e.observed, "(empty body)");
    }

    #[test]
    fn one_line_cuts_and_marks() {
        assert_eq!(one_line("  a \n\t b  ", 10), "a b");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("ab cd", 2), "ab…");
    }

    #[test]
    fn json_paths() {
        let doc = json!({
            "version": "1.4.0",
            "build": {"version": "1.4.0", "number": 7, "dirty": false, "tag": null},
            "items": [{"version": "0.9"}, {"version": "1.0"}],
            "obj": {"a": 1}
        });
        let get = |p: &str| lookup_json(&doc, p);
        assert_eq!(get(".version"), Ok(Some("1.4.0".to_string())));
        assert_eq!(get("version"), Ok(Some("1.4.0".to_string())));
        assert_eq!(get("$.build.version"), Ok(Some("1.4.0".to_string())));
        assert_eq!(get(".build.number"), Ok(Some("7".to_string())));
        assert_eq!(get(".build.dirty"), Ok(Some("false".to_string())));
        assert_eq!(get(".build.tag"), Ok(None));
        assert_eq!(get(".items.1.version"), Ok(Some("1.0".to_string())));
        assert_eq!(get(".items[0].version"), Ok(Some("0.9".to_string())));
        assert_eq!(get(".items.5.version"), Ok(None));
        assert_eq!(get(".items.x"), Ok(None));
        assert_eq!(get(".version.deeper"), Ok(None));
        assert_eq!(get(".nope"), Ok(None));
        assert!(get(".obj").is_err());
        assert!(get(".items").is_err());
        assert!(get("").is_err());
        assert!(get("..version").is_err());
        assert!(get(".version.").is_err());
        assert_eq!(
            lookup_json(&json!("1.4.0"), "."),
            Ok(Some("1.4.0".to_string()))
        );
    }

    #[test]
    fn passwords_in_urls_are_never_shown() {
        let url = DisplaySafeUrl::new("https://bob:s3cret@h.example/v?token=s3cret");
        let e = judge(
            &[VersionExpectation {
                url: url.clone(),
                expect: "1.4.0".to_string(),
                json_path: None,
            }],
            &[(url, body("1.3.9"))],
        );
        let all = format!("{e:?}");
        assert!(!all.contains("s3cret"), "{all}");
        assert_eq!(e[0].source(), "https://bob:***@h.example/v?token=***");
    }
}
