//! Renderers: one [`Report`] drawn as a text evidence table, JSON, Markdown or JUnit XML.
//!
//! Every renderer writes to any [`io::Write`] and decides nothing about terminals: the CLI
//! tells [`render_text`] whether to colour through [`TextStyle`].

use std::fmt;
use std::io;
use std::str::FromStr;

use liveproof_evidence::Report;

mod error;
mod fleet;
mod json;
mod junit;
mod lint;
mod markdown;
mod rollback;
mod stale;
mod text;
mod textutil;

pub use error::{
    render_error, render_error_json, render_error_junit, render_error_markdown, ErrorReport,
    Problem,
};
pub use fleet::{render_fleet_json, render_fleet_text};
pub use json::render_json;
pub use junit::render_junit;
pub use lint::{
    render_json as render_lint_json, render_sarif as render_lint_sarif,
    render_text as render_lint_text, JSON_SCHEMA as LINT_JSON_SCHEMA,
};
pub use markdown::render_markdown;
pub use rollback::{
    render_rollback_changed, render_rollback_end, render_rollback_step, render_rollback_waiting,
    RollbackEnd, RollbackStep,
};
pub use stale::{render_stale_json, render_stale_text, RestartOutcome, RestartStep};
pub use text::render_text;

/// An output format (`-o FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// A readable evidence table per target (the default).
    #[default]
    Text,
    /// The docs/design.md JSON shape (`liveproof/v1`).
    Json,
    /// For `$GITHUB_STEP_SUMMARY` or a PR comment.
    Markdown,
    /// JUnit XML: one testsuite per target, one testcase per check.
    Junit,
}

impl Format {
    /// Every format, in the order help text should list them.
    pub const ALL: [Format; 4] = [Format::Text, Format::Json, Format::Markdown, Format::Junit];

    /// Every spelling [`Format::from_str`] accepts, aliases included (for a CLI's possible values).
    pub const ACCEPTED_NAMES: &'static [&'static str] =
        &["text", "json", "markdown", "md", "junit"];

    /// The canonical name, as `-o` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Junit => "junit",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = ParseFormatError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let format = match s.trim().to_ascii_lowercase().as_str() {
            "text" => Format::Text,
            "json" => Format::Json,
            "markdown" | "md" => Format::Markdown,
            "junit" => Format::Junit,
            _ => {
                return Err(ParseFormatError {
                    input: s.to_string(),
                })
            }
        };
        Ok(format)
    }
}

/// An `-o` value that names no format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFormatError {
    input: String,
}

impl fmt::Display for ParseFormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown output format `{}`; expected one of: text, json, markdown (md), junit",
            self.input
        )
    }
}

impl std::error::Error for ParseFormatError {}

/// How to draw text output. Colour and width are the caller's decisions: the CLI colours only
/// when stdout is a terminal and `NO_COLOR` is unset, and wraps to the terminal's width there
/// ([`TextStyle::DEFAULT_WIDTH`] when it is not a terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextStyle {
    pub color: bool,
    /// Columns every text line fits in (at least [`TextStyle::MIN_WIDTH`]).
    pub width: usize,
}

impl Default for TextStyle {
    fn default() -> Self {
        TextStyle::plain()
    }
}

impl TextStyle {
    /// The width of text written to a pipe or a file.
    pub const DEFAULT_WIDTH: usize = 100;
    /// Narrower than this, the evidence table cannot keep its columns: wrap to this instead.
    pub const MIN_WIDTH: usize = 60;

    /// No escape sequences at all, 100 columns: for pipes, files and `NO_COLOR`.
    pub const fn plain() -> Self {
        TextStyle {
            color: false,
            width: Self::DEFAULT_WIDTH,
        }
    }

    /// ANSI colour: for a terminal.
    pub const fn colored() -> Self {
        TextStyle {
            color: true,
            width: Self::DEFAULT_WIDTH,
        }
    }

    /// The same style wrapped to `columns` (never narrower than [`TextStyle::MIN_WIDTH`]).
    pub const fn with_width(self, columns: usize) -> Self {
        TextStyle {
            color: self.color,
            width: if columns < Self::MIN_WIDTH {
                Self::MIN_WIDTH
            } else {
                columns
            },
        }
    }
}

/// Draw `report` in `format` to `out`. `style` only affects [`Format::Text`].
pub fn render(
    report: &Report,
    format: Format,
    style: TextStyle,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    match format {
        Format::Text => render_text(report, style, out),
        Format::Json => render_json(report, out),
        Format::Markdown => render_markdown(report, out),
        Format::Junit => render_junit(report, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_round_trip_and_md_is_an_alias() {
        for format in Format::ALL {
            assert_eq!(format.name().parse::<Format>(), Ok(format));
        }
        for name in Format::ACCEPTED_NAMES {
            assert!(name.parse::<Format>().is_ok(), "{name}");
        }
        assert_eq!("md".parse::<Format>(), Ok(Format::Markdown));
        assert_eq!("JSON".parse::<Format>(), Ok(Format::Json));
        let err = "yaml".parse::<Format>().expect_err("yaml is no format");
        assert!(err.to_string().contains("`yaml`"), "{err}");
    }
}
