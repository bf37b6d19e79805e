//! Renderers: every command's result (its model) drawn in the formats it has — a verify
//! [`Report`] as a text evidence table, JSON, YAML, object names, Markdown or JUnit XML; lint's as text, JSON or
//! SARIF; and so on. Commands produce, this crate prints (ripgrep's printer crate): each model
//! implements [`Render`], which says which [`Format`]s it is drawn in and draws it.
//!
//! Every renderer writes to any [`io::Write`] and decides nothing about terminals: the CLI
//! tells [`render_text`] whether to colour through [`TextStyle`].

use std::fmt;
use std::io;
use std::str::FromStr;

use liveproof_evidence::Report;

mod demo;
mod error;
mod fleet;
mod json;
mod junit;
mod lint;
mod markdown;
mod name;
pub mod progress;
pub mod release;
mod rollback;
mod sim;
mod snapshot;
mod stale;
mod text;
mod textutil;
mod yaml;

pub use demo::DemoOutcome;
pub use release::{ManifestSource, ReleaseShown, Values, ValuesNote, VALUES_REDACTED_HEADER};
pub use sim::{DemoImages, SimServing};
pub use snapshot::SnapshotTaken;

pub use error::{
    render_error, render_error_json, render_error_junit, render_error_markdown, ErrorReport,
    Problem,
};
pub use fleet::{render_fleet_json, render_fleet_text, Verification};
pub use json::render_json;
pub use junit::render_junit;
pub use lint::{
    render_json as render_lint_json, render_sarif as render_lint_sarif,
    render_text as render_lint_text, JSON_SCHEMA as LINT_JSON_SCHEMA,
};
pub use markdown::render_markdown;
pub use name::render_names;
pub use rollback::{
    render_rollback_changed, render_rollback_end, render_rollback_event, render_rollback_step,
    render_rollback_waiting, Rollback, RollbackEnd, RollbackEvent, RollbackPrinter, RollbackStep,
};
pub use stale::{render_stale_json, render_stale_text, RestartOutcome, RestartStep, StaleOutcome};
pub use text::render_text;
pub use yaml::render_yaml;

/// An output format (`-o FORMAT`): one type for every command; each model says which of them
/// it is drawn in ([`Render::FORMATS`]), and the CLI offers a command exactly those.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// For people: a verify report's evidence table per target (the default).
    #[default]
    Text,
    /// One JSON document (a verify report's is the docs/design.md shape, `liveproof/v1`).
    Json,
    /// The same document as [`Format::Json`], in YAML.
    Yaml,
    /// kubectl's `-o name`: one `kind.group/name` line per object, the verdict in the exit code.
    Name,
    /// For `$GITHUB_STEP_SUMMARY` or a PR comment.
    Markdown,
    /// JUnit XML: one testsuite per target, one testcase per check.
    Junit,
    /// SARIF 2.1.0, for code-scanning upload (lint's findings).
    Sarif,
}

impl Format {
    /// Every format, in the order help text should list them.
    pub const ALL: [Format; 7] = [
        Format::Text,
        Format::Json,
        Format::Yaml,
        Format::Name,
        Format::Markdown,
        Format::Junit,
        Format::Sarif,
    ];

    /// Every spelling [`Format::from_str`] accepts, aliases included (for a CLI's possible values).
    pub const ACCEPTED_NAMES: &'static [&'static str] = &[
        "text", "json", "yaml", "name", "markdown", "md", "junit", "sarif",
    ];

    /// The canonical name, as `-o` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Yaml => "yaml",
            Format::Name => "name",
            Format::Markdown => "markdown",
            Format::Junit => "junit",
            Format::Sarif => "sarif",
        }
    }

    /// Other spellings `-o` takes for it.
    pub const fn aliases(self) -> &'static [&'static str] {
        match self {
            Format::Markdown => &["md"],
            _ => &[],
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
            "yaml" => Format::Yaml,
            "name" => Format::Name,
            "markdown" | "md" => Format::Markdown,
            "junit" => Format::Junit,
            "sarif" => Format::Sarif,
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
            "unknown output format `{}`; expected one of: text, json, yaml, name, markdown (md), junit, sarif",
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

/// A command's result, drawn in the formats it has: the one printer interface every command's
/// model goes through (ripgrep: the searcher produces, a printer prints).
pub trait Render {
    /// The formats it is drawn in, in the order help lists them. The CLI offers `-o` exactly
    /// these (clap refuses any other at parse time), so none is ever drawn as another.
    const FORMATS: &'static [Format];

    /// Draws it in `format` to `out`; `style` only affects [`Format::Text`]. A format outside
    /// [`Render::FORMATS`] is an error ([`unsupported`]), never a fallback to another.
    fn render(&self, format: Format, style: TextStyle, out: &mut dyn io::Write) -> io::Result<()>;
}

/// A command's result carries its exit code (docs/design.md): the CLI reads it off the model
/// it has printed.
pub trait Outcome {
    fn exit_code(&self) -> u8;
}

/// The error for a model asked for a format it is not drawn in: a caller that skipped the
/// CLI's check finds out, instead of getting another format silently.
pub fn unsupported(what: &str, format: Format, formats: &[Format]) -> io::Error {
    let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{what} is drawn as {}, not {format}", names.join(", ")),
    )
}

impl Render for Report {
    const FORMATS: &'static [Format] = &[
        Format::Text,
        Format::Json,
        Format::Yaml,
        Format::Name,
        Format::Markdown,
        Format::Junit,
    ];

    fn render(&self, format: Format, style: TextStyle, out: &mut dyn io::Write) -> io::Result<()> {
        match format {
            Format::Text => render_text(self, style, out),
            Format::Json => render_json(self, out),
            Format::Yaml => render_yaml(self, out),
            Format::Name => render_names(&self.targets, out),
            Format::Markdown => render_markdown(self, out),
            Format::Junit => render_junit(self, out),
            Format::Sarif => Err(unsupported("a verify report", format, Self::FORMATS)),
        }
    }
}

impl Outcome for Report {
    fn exit_code(&self) -> u8 {
        self.verdict.exit_code()
    }
}

/// Draw `report` in `format` to `out`. `style` only affects [`Format::Text`].
pub fn render(
    report: &Report,
    format: Format,
    style: TextStyle,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    report.render(format, style, out)
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
        let err = "wide".parse::<Format>().expect_err("wide is no format");
        assert!(err.to_string().contains("`wide`"), "{err}");
    }
}
