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

mod columns;
mod demo;
mod error;
mod fleet;
mod html;
mod json;
mod jsonpath;
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

pub use columns::Columns;
pub use demo::DemoOutcome;
pub use html::render_html;
pub use jsonpath::{Template as JsonPathTemplate, TemplateError};
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
    /// kubectl's `-o wide`: the text report with what text folds away shown (every target's
    /// evidence and timeline, the source beside each check), lines not wrapped.
    Wide,
    /// One JSON document (a verify report's is the docs/design.md shape, `liveproof/v1`).
    Json,
    /// The same document as [`Format::Json`], in YAML.
    Yaml,
    /// kubectl's `-o name`: one `kind.group/name` line per object, the verdict in the exit code.
    Name,
    /// For `$GITHUB_STEP_SUMMARY` or a PR comment.
    Markdown,
    /// One self-contained HTML page (inline CSS and SVG, nothing fetched): the verdict, the
    /// evidence, and a timeline per target.
    Html,
    /// JUnit XML: one testsuite per target, one testcase per check.
    Junit,
    /// SARIF 2.1.0, for code-scanning upload (lint's findings).
    Sarif,
    /// kubectl's `-o jsonpath=TEMPLATE` over the JSON document: needs its template
    /// ([`Output`]).
    JsonPath,
    /// kubectl's `-o custom-columns=NAME:.path,…`, a row per item (a report's targets): needs
    /// its columns ([`Output`]).
    CustomColumns,
}

impl Format {
    /// Every format, in the order help text should list them.
    pub const ALL: [Format; 11] = [
        Format::Text,
        Format::Wide,
        Format::Json,
        Format::Yaml,
        Format::Name,
        Format::Markdown,
        Format::Html,
        Format::Junit,
        Format::Sarif,
        Format::JsonPath,
        Format::CustomColumns,
    ];

    /// Every spelling [`Format::from_str`] accepts, aliases included (for a CLI's possible values).
    pub const ACCEPTED_NAMES: &'static [&'static str] = &[
        "text",
        "wide",
        "json",
        "yaml",
        "name",
        "markdown",
        "md",
        "html",
        "junit",
        "sarif",
        "jsonpath",
        "custom-columns",
    ];

    /// Whether `-o` gives it an argument after `=` (`jsonpath=TEMPLATE`).
    pub const fn takes_template(self) -> bool {
        matches!(self, Format::JsonPath | Format::CustomColumns)
    }

    /// The canonical name, as `-o` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Wide => "wide",
            Format::Json => "json",
            Format::Yaml => "yaml",
            Format::Name => "name",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Junit => "junit",
            Format::Sarif => "sarif",
            Format::JsonPath => "jsonpath",
            Format::CustomColumns => "custom-columns",
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
            "wide" => Format::Wide,
            "json" => Format::Json,
            "yaml" => Format::Yaml,
            "name" => Format::Name,
            "markdown" | "md" => Format::Markdown,
            "html" => Format::Html,
            "junit" => Format::Junit,
            "sarif" => Format::Sarif,
            "jsonpath" => Format::JsonPath,
            "custom-columns" => Format::CustomColumns,
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
            "unknown output format `{}`; expected one of: text, wide, json, yaml, name, markdown (md), html, junit, sarif, jsonpath=TEMPLATE, custom-columns=SPEC",
            self.input
        )
    }
}

impl std::error::Error for ParseFormatError {}

/// What `-o` asked for: a [`Format`], with the template of the two that take one
/// (`jsonpath=TEMPLATE`, `custom-columns=SPEC`), parsed when it was given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Output {
    format: Format,
    template: Option<Template>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Template {
    JsonPath(jsonpath::Template),
    Columns(Columns),
}

impl Output {
    /// `format`, with `argument` (what followed `=`): given exactly when the format takes one.
    pub fn new(format: Format, argument: Option<&str>) -> Result<Output, OutputError> {
        let template = match (format, argument) {
            (Format::JsonPath, Some(t)) => Some(Template::JsonPath(
                jsonpath::Template::parse(t).map_err(|e| OutputError::Template(format, e))?,
            )),
            (Format::CustomColumns, Some(spec)) => Some(Template::Columns(
                Columns::parse(spec).map_err(|e| OutputError::Template(format, e))?,
            )),
            (Format::JsonPath | Format::CustomColumns, None) => {
                return Err(OutputError::NoTemplate(format))
            }
            (_, Some(_)) => return Err(OutputError::Unexpected(format)),
            (_, None) => None,
        };
        Ok(Output { format, template })
    }

    /// The format, without its template.
    pub const fn format(&self) -> Format {
        self.format
    }
}

impl From<Format> for Output {
    /// A format that takes no template (one that does is drawn as an error saying so).
    fn from(format: Format) -> Output {
        Output {
            format,
            template: None,
        }
    }
}

impl PartialEq<Format> for Output {
    fn eq(&self, other: &Format) -> bool {
        self.format == *other
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.template {
            None => f.write_str(self.format.name()),
            Some(Template::JsonPath(t)) => write!(f, "jsonpath={}", t.source()),
            Some(Template::Columns(c)) => write!(f, "custom-columns={}", c.source()),
        }
    }
}

impl FromStr for Output {
    type Err = OutputError;

    /// `json`, `jsonpath={.verdict}`, `custom-columns=NAME:.name`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, argument) = match s.split_once('=') {
            Some((name, argument)) => (name, Some(argument)),
            None => (s, None),
        };
        let format = name.parse::<Format>().map_err(OutputError::Format)?;
        Output::new(format, argument)
    }
}

/// An `-o` value that could not be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputError {
    Format(ParseFormatError),
    /// `-o jsonpath` without `=TEMPLATE`.
    NoTemplate(Format),
    /// `-o json=…`: a format that takes no template given one.
    Unexpected(Format),
    /// The template does not parse.
    Template(Format, TemplateError),
}

impl OutputError {
    /// How to write it instead.
    pub fn hint(&self) -> &'static str {
        match self {
            OutputError::Template(Format::CustomColumns, _)
            | OutputError::NoTemplate(Format::CustomColumns) => {
                "e.g. -o custom-columns=KIND:.kind,NAME:.name,VERDICT:.verdict (a column per HEADER:PATH, a row per target)"
            }
            _ => {
                "e.g. -o jsonpath='{.verdict}' or -o jsonpath='{range .targets[*]}{.name}{\"\\t\"}{.verdict}{\"\\n\"}{end}' (kubectl's JSONPath, over the -o json report)"
            }
        }
    }
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputError::Format(e) => e.fmt(f),
            OutputError::NoTemplate(format) => {
                write!(f, "-o {format} needs its template: -o {format}=…")
            }
            OutputError::Unexpected(format) => write!(f, "-o {format} takes nothing after `=`"),
            OutputError::Template(format, e) => write!(f, "-o {format}: {e}"),
        }
    }
}

impl std::error::Error for OutputError {}

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

    /// Where the rows of `-o custom-columns` are in the JSON document: a path to its items
    /// (a report's `.targets[*]`); `None`, the document is the one row.
    const ROWS: Option<&'static str> = None;

    /// Draws it as `-o` asked: [`Render::render`] for a format, or the template evaluated over
    /// the [`Format::Json`] document (kubectl's `-o jsonpath`, `-o custom-columns`).
    fn render_output(
        &self,
        output: &Output,
        style: TextStyle,
        out: &mut dyn io::Write,
    ) -> io::Result<()> {
        let Some(template) = &output.template else {
            return self.render(output.format, style, out);
        };
        if !Self::FORMATS.contains(&output.format) {
            return Err(unsupported("this result", output.format, Self::FORMATS));
        }
        let mut json = Vec::new();
        self.render(Format::Json, style, &mut json)?;
        let document: serde_json::Value = serde_json::from_slice(&json)?;
        let text = match template {
            Template::JsonPath(t) => t.evaluate(&document),
            Template::Columns(columns) => {
                let rows = match Self::ROWS {
                    Some(path) => jsonpath::relaxed_path(path)
                        .map_err(io::Error::other)?
                        .select(&document, &document),
                    None => vec![&document],
                };
                columns.table(&document, &rows)
            }
        };
        out.write_all(text.as_bytes())?;
        out.flush()
    }
}

/// The error for a format that needs its template drawn without one (through
/// [`Render::render`] rather than [`Render::render_output`]).
pub fn needs_template(format: Format) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("-o {format} is drawn with its template (-o {format}=…)"),
    )
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
        Format::Wide,
        Format::Json,
        Format::Yaml,
        Format::Name,
        Format::Markdown,
        Format::Html,
        Format::Junit,
        Format::JsonPath,
        Format::CustomColumns,
    ];

    const ROWS: Option<&'static str> = Some(".targets[*]");

    fn render(&self, format: Format, style: TextStyle, out: &mut dyn io::Write) -> io::Result<()> {
        match format {
            Format::Text => render_text(self, style, out),
            Format::Wide => text::render_wide(self, style, out),
            Format::Json => render_json(self, out),
            Format::Yaml => render_yaml(self, out),
            Format::Name => render_names(&self.targets, out),
            Format::Markdown => render_markdown(self, out),
            Format::Html => render_html(self, out),
            Format::Junit => render_junit(self, out),
            Format::JsonPath | Format::CustomColumns => Err(needs_template(format)),
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
        let err = "wider".parse::<Format>().expect_err("wider is no format");
        assert!(err.to_string().contains("`wider`"), "{err}");
    }

    #[test]
    fn an_output_takes_a_template_exactly_when_its_format_does() {
        let jsonpath: Output = "jsonpath={.verdict}".parse().expect("jsonpath");
        assert_eq!(jsonpath.format(), Format::JsonPath);
        assert_eq!(jsonpath.to_string(), "jsonpath={.verdict}");
        // kubectl's own examples hold `=` in the template.
        let filtered: Output = r#"jsonpath={.targets[?(@.verdict=="live")].name}"#
            .parse()
            .expect("filter");
        assert_eq!(filtered.format(), Format::JsonPath);
        let columns: Output = "custom-columns=NAME:.name".parse().expect("columns");
        assert_eq!(columns.format(), Format::CustomColumns);
        assert_eq!("wide".parse::<Output>(), Ok(Output::from(Format::Wide)));
        for (given, said) in [
            ("jsonpath", "needs its template"),
            ("custom-columns", "needs its template"),
            ("json=x", "takes nothing after `=`"),
            ("jsonpath={.a", "not closed"),
            ("custom-columns=NAME", "<header>:<json-path-expr>"),
            ("xml", "unknown output format"),
        ] {
            let err = given.parse::<Output>().expect_err(given);
            assert!(err.to_string().contains(said), "{given}: {err}");
            assert!(err.hint().starts_with("e.g. -o "), "{given}");
        }
    }
}
