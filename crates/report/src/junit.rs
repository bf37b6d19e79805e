//! `-o junit`: one `<testsuite>` per target, one `<testcase>` per check, so a CI system shows
//! each piece of evidence as a test. fail → `<failure>`, unknown → `<error>` (it could not be
//! established), skip → `<skipped>`.

use std::io::{self, Write};

use liveproof_evidence::{Evidence, Report, Status, TargetReport};

use crate::textutil::qualified_name;

#[derive(Default, Clone, Copy)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
}

impl Counts {
    fn of(evidence: &[Evidence]) -> Counts {
        let mut counts = Counts {
            tests: evidence.len(),
            ..Counts::default()
        };
        for e in evidence {
            match e.status {
                Status::Fail => counts.failures += 1,
                Status::Unknown => counts.errors += 1,
                Status::Skip => counts.skipped += 1,
                Status::Pass => {}
            }
        }
        counts
    }

    fn add(self, other: Counts) -> Counts {
        Counts {
            tests: self.tests + other.tests,
            failures: self.failures + other.failures,
            errors: self.errors + other.errors,
            skipped: self.skipped + other.skipped,
        }
    }

    fn attrs(self) -> String {
        format!(
            r#"tests="{}" failures="{}" errors="{}" skipped="{}""#,
            self.tests, self.failures, self.errors, self.skipped
        )
    }
}

/// The report as JUnit XML.
pub fn render_junit(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    let total = report
        .targets
        .iter()
        .map(|t| Counts::of(&t.evidence))
        .fold(Counts::default(), Counts::add);

    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(out, r#"<testsuites name="liveproof" {}>"#, total.attrs())?;
    for target in &report.targets {
        write_suite(&mut out, report, target)?;
    }
    writeln!(out, "</testsuites>")?;
    out.flush()
}

fn write_suite(out: &mut impl Write, report: &Report, target: &TargetReport) -> io::Result<()> {
    let counts = Counts::of(&target.evidence);
    let suite = format!("{} {}", target.kind, qualified_name(target));
    writeln!(
        out,
        r#"  <testsuite name="{}" {}>"#,
        escape(&suite),
        counts.attrs()
    )?;

    writeln!(out, "    <properties>")?;
    let mut properties = vec![("verdict", target.verdict.name())];
    if let Some(since) = &report.change.since {
        properties.push(("change.since", since));
    }
    if let Some(commit) = &report.change.commit {
        properties.push(("change.commit", commit));
    }
    if let Some(step) = &target.next_step {
        properties.push(("next_step", step));
    }
    if let Some(via) = &target.via {
        properties.push(("via", via));
    }
    for (name, value) in properties {
        writeln!(
            out,
            r#"      <property name="{}" value="{}"/>"#,
            name,
            escape(value)
        )?;
    }
    writeln!(out, "    </properties>")?;

    // classname reads like a package path: liveproof.deployment.apps.inventory
    let kind = target.kind.to_ascii_lowercase();
    let classname = ["liveproof", &kind, &target.namespace, &target.name]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(".");
    // The "why" travels in every failure body, where CI shows it.
    let why: String = target
        .diagnostics
        .iter()
        .map(|d| {
            let mut text = format!("\nwhy: {}", d.summary());
            for line in &d.lines {
                text.push_str(&format!("\n  | {line}"));
            }
            text
        })
        .collect();
    for e in &target.evidence {
        write_case(out, &classname, e, &why)?;
    }
    writeln!(out, "  </testsuite>")?;
    Ok(())
}

fn write_case(out: &mut impl Write, classname: &str, e: &Evidence, why: &str) -> io::Result<()> {
    let open = format!(
        r#"    <testcase classname="{}" name="{}""#,
        escape(classname),
        e.check.name()
    );
    let body = format!(
        "observed: {}\nexpected: {}\nsource: {}\ndetail: {}",
        e.observed, e.expected, e.source, e.detail
    );
    let message = if e.detail.is_empty() {
        format!("observed: {}, expected: {}", e.observed, e.expected)
    } else {
        e.detail.clone()
    };
    match e.status {
        Status::Pass => {
            // Passing evidence is still evidence: keep what was read, and where.
            writeln!(out, "{open}>")?;
            writeln!(out, "      <system-out>{}</system-out>", escape_text(&body))?;
            writeln!(out, "    </testcase>")?;
        }
        Status::Fail | Status::Unknown => {
            let (tag, kind) = match e.status {
                Status::Fail => ("failure", "not_live"),
                _ => ("error", "unknown"),
            };
            writeln!(out, "{open}>")?;
            writeln!(
                out,
                r#"      <{tag} message="{}" type="{kind}">{}</{tag}>"#,
                escape(&message),
                escape_text(&format!("{body}{why}"))
            )?;
            writeln!(out, "    </testcase>")?;
        }
        Status::Skip => {
            writeln!(out, "{open}>")?;
            if e.detail.is_empty() {
                writeln!(out, "      <skipped/>")?;
            } else {
                writeln!(out, r#"      <skipped message="{}"/>"#, escape(&e.detail))?;
            }
            writeln!(out, "    </testcase>")?;
        }
    }
    Ok(())
}

/// Escape for an XML 1.0 attribute value. Characters XML 1.0 cannot carry at all (C0 controls
/// other than tab/LF/CR, U+FFFE, U+FFFF) are dropped; tab/LF/CR become character references so
/// attribute-value normalisation cannot turn them into spaces.
pub(crate) fn escape(s: &str) -> String {
    escape_xml(s, true)
}

/// Escape for XML 1.0 element text, where line breaks may stay as they are.
pub(crate) fn escape_text(s: &str) -> String {
    escape_xml(s, false)
}

fn escape_xml(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' if !attribute => out.push(c),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            // A raw CR would be normalised away by the parser even in text.
            '\r' => out.push_str("&#13;"),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{escape, escape_text};

    #[test]
    fn escape_handles_markup_quotes_and_controls() {
        assert_eq!(
            escape("<script>&\"'\u{1}x\u{ffff}"),
            "&lt;script&gt;&amp;&quot;&apos;x"
        );
        assert_eq!(escape("a\nb"), "a&#10;b");
        assert_eq!(escape_text("a\nb"), "a\nb");
    }
}
