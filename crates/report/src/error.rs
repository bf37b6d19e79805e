//! What `liveproof` prints on stdout when it exits 2 (a usage or operational error) and a
//! format a program reads was asked for: one document saying what went wrong and how to fix
//! it, so a pipeline parsing `-o json` or `-o yaml` (or a CI reading JUnit) always has an
//! answer to read. The `error: …` line on stderr is the text form, and stays; as
//! with text, `-o name` prints nothing on stdout (kubectl's errors are stderr's too).

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};

use liveproof_evidence::hint::Hinted;
use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
use serde::{Deserialize, Serialize};

use crate::junit::{attribute, text};
use crate::markdown::words;
use crate::Format;

/// What `-o json` prints when liveproof exits 2: no report, and why (docs/design.md, exit codes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorReport {
    /// The report format and its version, as a report's.
    pub schema: String,
    /// Why nothing was verified.
    pub error: Problem,
}

impl ErrorReport {
    pub fn new(error: Problem) -> ErrorReport {
        ErrorReport {
            schema: liveproof_evidence::SCHEMA.to_string(),
            error,
        }
    }
}

/// An error as a person acts on it: what was wrong, and how to fix it when there is a way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Problem {
    /// What was wrong, with which flag, object or server.
    pub message: String,
    /// What to do about it; absent when there is nothing better than the message. Several
    /// hints are one line each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Problem {
    /// What was wrong, and how to fix it when there is a way: the hint is never looked for in
    /// the message, so a message quoting what was typed (`-l 'a\nhint: b'`) stays whole.
    pub fn new(message: impl Into<String>, hint: Option<String>) -> Problem {
        Problem {
            message: message.into(),
            hint,
        }
    }

    /// An error as it says itself: its message, and its hint ([`Hinted`]).
    pub fn of(error: &dyn Hinted) -> Problem {
        Problem::new(error.to_string(), error.hint().map(Cow::into_owned))
    }

    /// Each line of the hint.
    pub fn hints(&self) -> impl Iterator<Item = &str> {
        self.hint.iter().flat_map(|h| h.lines())
    }
}

/// The message, then each hint on its own `hint: …` line: what stderr shows.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        for hint in self.hints() {
            write!(f, "\nhint: {hint}")?;
        }
        Ok(())
    }
}

/// The error document in `format`. Text and names write nothing: the stderr line is the
/// error's text form, and stdout stays empty for a shell reading it.
pub fn render_error(report: &ErrorReport, format: Format, out: &mut dyn Write) -> io::Result<()> {
    if matches!(format, Format::Text | Format::Name) {
        return Ok(());
    }
    crate::Render::render(report, format, crate::TextStyle::plain(), out)
}

/// The documents an error is answered in: what a program reads (not text, whose form is the
/// stderr line; not names, a list of objects with none to list; not SARIF, which has no place
/// for it).
impl crate::Render for ErrorReport {
    const FORMATS: &'static [Format] =
        &[Format::Json, Format::Yaml, Format::Markdown, Format::Junit];

    fn render(&self, format: Format, _: crate::TextStyle, out: &mut dyn Write) -> io::Result<()> {
        match format {
            Format::Json => render_error_json(self, out),
            Format::Yaml => crate::yaml::document(self, out),
            Format::Markdown => render_error_markdown(self, out),
            Format::Junit => render_error_junit(self, out),
            Format::Text
            | Format::Wide
            | Format::Name
            | Format::Html
            | Format::Sarif
            | Format::JsonPath
            | Format::CustomColumns => Err(crate::unsupported(
                "an error document",
                format,
                Self::FORMATS,
            )),
        }
    }
}

/// Pretty-printed JSON with a trailing newline, as the report's.
pub fn render_error_json(report: &ErrorReport, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    serde_json::to_writer_pretty(&mut out, report)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// A heading that says nothing was verified, the message, the hint.
pub fn render_error_markdown(report: &ErrorReport, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    writeln!(out, "## ⛔ liveproof could not verify")?;
    writeln!(out)?;
    writeln!(out, "**Error:** {}", words(&report.error.message))?;
    for hint in report.error.hints() {
        writeln!(out)?;
        writeln!(out, "**Hint:** {}", words(hint))?;
    }
    writeln!(out)?;
    writeln!(out, "Nothing was verified (exit 2).")?;
    out.flush()
}

/// One suite, one testcase with an `<error>`: a CI system shows the run as broken, not as
/// passed or failed.
pub fn render_error_junit(report: &ErrorReport, out: &mut dyn Write) -> io::Result<()> {
    let problem = &report.error;
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
    status
        .set_message(attribute(&problem.message))
        .set_type("error")
        .set_description(text(&problem.to_string()));
    let mut case = TestCase::new("liveproof", status);
    case.set_classname("liveproof");
    let mut suite = TestSuite::new("liveproof");
    suite.add_test_case(case);
    let mut junit = quick_junit::Report::new("liveproof");
    junit.add_test_suite(suite);
    let mut out = io::BufWriter::new(out);
    junit.serialize(&mut out).map_err(io::Error::other)?;
    writeln!(out)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_hint_line_is_said_after_the_message() {
        let problem = Problem::new(
            "--commit x: not found\nin /repo",
            Some("fetch it\nor --since".into()),
        );
        assert_eq!(
            problem.to_string(),
            "--commit x: not found\nin /repo\nhint: fetch it\nhint: or --since"
        );
        let plain = Problem::new("no hint here", None);
        assert_eq!(plain.to_string(), "no hint here");
    }

    /// A message may quote what was typed, a `hint:` line and all: it stays the message.
    #[test]
    fn a_hint_line_in_the_message_is_not_taken_for_the_hint() {
        let typed = liveproof_evidence::hint::HintedMessage::new(
            "-l/--selector: label selector `app=web\nhint: x`: bad",
            "write it as kubectl takes it",
        );
        let problem = Problem::of(&typed);
        assert_eq!(
            problem.message,
            "-l/--selector: label selector `app=web\nhint: x`: bad"
        );
        assert_eq!(
            problem.hint.as_deref(),
            Some("write it as kubectl takes it")
        );
        let mut out = Vec::new();
        render_error_json(&ErrorReport::new(problem), &mut out).expect("rendered");
        let doc: ErrorReport = serde_json::from_slice(&out).expect("JSON");
        assert!(doc.error.message.ends_with("hint: x`: bad"), "{doc:?}");
        assert_eq!(
            doc.error.hint.as_deref(),
            Some("write it as kubectl takes it")
        );
    }

    #[test]
    fn json_leaves_out_a_hint_there_is_not() {
        let mut out = Vec::new();
        render_error_json(&ErrorReport::new(Problem::new("boom", None)), &mut out)
            .expect("rendered");
        let doc: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
        assert_eq!(
            doc,
            serde_json::json!({"schema": "liveproof/v1", "error": {"message": "boom"}})
        );
    }

    #[test]
    fn text_writes_nothing_to_stdout() {
        let mut out = Vec::new();
        render_error(
            &ErrorReport::new(Problem::new("boom", None)),
            Format::Text,
            &mut out,
        )
        .expect("rendered");
        assert!(out.is_empty());
    }
}
