//! The `liveproof` command line as a library: [`run`] takes parsed arguments and returns the
//! exit code, so the binary stays a thin shell (ripgrep, uv, just).

mod auth;
pub mod cli;
mod completion;
mod config;
pub mod controller;
mod deadline;
pub mod demo;
mod duration;
mod fleet;
mod lint;
mod mcp;
mod next_steps;
mod one_cluster;
mod output;
mod progress;
mod release;
mod rules;
mod schema;
mod shell;
mod sim_cmd;
mod skill;
mod snapshot;
mod stale;
mod verifier;
mod verify;
mod verify_object;
mod verify_run;

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use liveproof_evidence::Verdict;
use liveproof_report::{Format, Outcome, Problem, Render, RollbackPrinter, TextStyle};

pub use config::{ConfigError, VerifyRequest};

/// Exit code for usage and operational errors (docs/design.md).
pub const EXIT_ERROR: u8 = 2;

/// The whole program, for both binaries (`liveproof`, and `kubectl-liveproof` as a kubectl
/// plugin): parse, run, map the result to an exit code. On exit 2 the error is said on stderr
/// and, when `-o` asked for a document (json, yaml, markdown, junit), answered as one on stdout.
pub fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `COMPLETE=bash liveproof -- WORDS…`: what the scripts of `liveproof completion` run.
    if shell::complete_from_env(&argv) {
        return ExitCode::SUCCESS;
    }
    // `kubectl-liveproof __complete WORDS…`: Cobra's completion request, as kubectl sends it
    // to `kubectl_complete-liveproof` (the archives' binary of that name answers the same).
    if argv.get(1).is_some_and(|a| a == "__complete") {
        return complete_words(argv[2..].to_vec());
    }
    let plugin = cli::invoked_as_plugin(argv.first().map(std::ffi::OsString::as_os_str));
    let args = match cli::kubectl_levels(argv) {
        Ok(args) => args,
        Err(problem) => {
            let argv: Vec<String> = std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            say_error(&problem);
            answer(problem, cli::error_format_in(&argv));
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let cli = match cli::parse(args, plugin) {
        Ok(cli) => cli,
        Err(err) => return refused(&err),
    };
    let asked = cli.error_format();
    // A panic is a bug, but it still ends as every other error does: exit 2 and, when asked
    // for, the error document — never Rust's 101, which a pipeline reads as nothing it knows.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli)))
        .unwrap_or_else(|panic| Err(anyhow::Error::new(Panicked::from(panic))));
    // `-v` says the peak as the run ends, however it ends.
    if let Some(kib) = peak_memory_kib() {
        tracing::info!("peak memory: {kib} KiB");
    }
    match result {
        Ok(code) => ExitCode::from(code),
        // A report that could not be written whole (a full disk, or a reader that closed the
        // pipe: `verify … | head`) is exit 2 like any other error: the verdict was never
        // delivered, and only a delivered verdict may say 0. The commands whose output is not a
        // verdict let a closed pipe pass ([`run_on`]).
        Err(err) => {
            let problem = problem(&err);
            say_error(&problem);
            answer(problem, asked);
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// A panic caught at the top: a bug, said as one (its message is Rust's, on stderr above).
#[derive(Debug, thiserror::Error)]
#[error("liveproof stopped on an internal error ({0}); this is a bug")]
struct Panicked(String);

impl From<Box<dyn std::any::Any + Send>> for Panicked {
    fn from(payload: Box<dyn std::any::Any + Send>) -> Panicked {
        let said = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string());
        Panicked(said)
    }
}

impl liveproof_evidence::hint::Hinted for Panicked {
    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(
            "nothing was decided: run it again, and report the message above with the command that caused it",
        ))
    }
}

/// Arguments clap refused (or `--help`/`--version`, which are answers, not errors): clap says
/// it on stderr as ever, and the error document goes to stdout in the format the raw
/// arguments asked for, as for any other exit 2.
fn refused(err: &clap::Error) -> ExitCode {
    let is_error = err.use_stderr()
        && err.kind() != clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand;
    if is_error {
        let argv: Vec<String> = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let problem = cli::clap_problem(err);
        // Said as every other input error is: `error: …`, then `hint: …`.
        say_error(&problem);
        answer(problem, cli::error_format_in(&argv));
    } else {
        // Help and the version are answers (help without a subcommand goes to stderr).
        // Printing can only fail on a closed stream: nothing is left to tell then.
        let _ = err.print();
    }
    ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(EXIT_ERROR))
}

/// An error on stderr, in the one form every error takes: `error: …`, then a `hint: …` line
/// for each hint.
fn say_error(problem: &Problem) {
    // Written, not `eprintln!`, which panics when stderr cannot be written (a closed pipe):
    // stderr that cannot be told has nothing left to tell, and stdout and the exit code still
    // carry the answer.
    let _ = writeln!(std::io::stderr().lock(), "error: {problem}");
}

/// A notice on stderr (`notice: …`); a stderr nobody reads loses it, nothing else.
fn say_notice(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "notice: {text}");
}

/// The error document on stdout, in `format` (nothing for text or when none was asked).
fn answer(problem: Problem, format: Option<liveproof_report::Format>) {
    let Some(format) = format else {
        return;
    };
    let report = liveproof_report::ErrorReport::new(problem);
    // A reader that went away (a closed pipe) has nothing left to be told.
    let _ = liveproof_report::render_error(&report, format, &mut std::io::stdout().lock());
}

/// `kubectl_complete-liveproof WORD…`: the completions of the last word, as kubectl's plugin
/// completion reads them. Nothing else is run.
pub fn kubectl_complete() -> ExitCode {
    complete_words(std::env::args_os().skip(1).collect())
}

/// The completions of the last of `words` (typed after `liveproof`), in Cobra's `__complete`
/// answer.
fn complete_words(words: Vec<std::ffi::OsString>) -> ExitCode {
    match shell::kubectl_complete(words, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        // Completions are suggestions, not an answer anyone acts on: a shell that read what it
        // needed and closed the pipe lost nothing, and a failure here would only make the shell
        // print noise under the prompt.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(err) => {
            say_error(&Problem::new(format!("completing: {err}"), None));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Runs a parsed command; returns the process exit code.
pub fn run(cli: cli::Cli) -> anyhow::Result<u8> {
    let quiet = cli.quiet();
    progress::QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
    init_logging(if quiet { None } else { Some(cli.verbosity()) });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // Not held locked: the MCP server's transport (the SDK's) writes to stdout itself, from
    // another thread, while `mcp` runs. Its write errors name it. A panic is caught here too
    // (as in `main`), so the runtime is still shut down without waiting, as below: unwinding
    // through it would wait for every blocking task.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_on(&runtime, cli)))
        .unwrap_or_else(|panic| Err(anyhow::Error::new(Panicked::from(panic))));
    // Work still running on a blocking thread (a Helm release decoded past a deadline that
    // ended the command) is not waited for: the answer is already given.
    runtime.shutdown_background();
    result
}

fn run_on(runtime: &tokio::runtime::Runtime, cli: cli::Cli) -> anyhow::Result<u8> {
    let verdict = exit_code_is_verdict(&cli.command);
    match print_command(runtime, cli) {
        // `release show … | head`, `skill | less` quit early: the reader's choice, and nothing
        // anyone acts on was lost — a document to read, not a verdict.
        Err(err) if !verdict && closed_pipe(&err) => Ok(0),
        done => done,
    }
}

/// Whether the command's exit code is an answer a pipeline acts on (a verdict, a rollback's
/// outcome, lint's findings, a snapshot taken): then a report that could not be written whole
/// is exit 2, a closed pipe included. Only the commands that print a document to read (and
/// exit 0 whenever they could read what they print) let a closed pipe pass.
fn exit_code_is_verdict(command: &cli::Command) -> bool {
    use cli::Command as C;
    match command {
        C::Verify(_)
        | C::Demo(_)
        | C::Snapshot(_)
        | C::Rollback(_)
        | C::Stale(_)
        | C::Sim(_)
        | C::Lint(_)
        | C::Mcp(_)
        | C::Controller(_)
        | C::Auth(_) => true,
        C::Release(_) | C::Skill | C::Schema(_) | C::Completion(_) | C::Man(_) | C::Version => {
            false
        }
    }
}

/// Whether `err` is stdout's reader having closed the pipe (not any other broken pipe, such
/// as a connection to the API server).
fn closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(output::StdoutFailed::is_closed_pipe)
}

fn print_command(runtime: &tokio::runtime::Runtime, cli: cli::Cli) -> anyhow::Result<u8> {
    let style = config::text_style(cli.color(), std::io::stdout().is_terminal());
    let mut out = output::Stdout::new();
    // Each command returns its model; it is printed here, and the exit code read off it.
    let code = match cli.command {
        cli::Command::Verify(args) => {
            // `verify verification/NAME`: what the object states, read from the cluster.
            let args = verify_object::object_args(&args, runtime)?.map_or(args, Box::new);
            let config = config::VerifyConfig::from_args(&args, style)?;
            let verified = runtime.block_on(verify::run(&config))?;
            // `-q`: the verdict is the exit code; the report goes only where a file was named.
            let mut nowhere = std::io::sink();
            let shown: &mut dyn Write = if args.quiet { &mut nowhere } else { &mut out };
            verified.render_output(&config.format, config.style, shown)?;
            let code = verified.exit_code();
            verify::write_report(&verified, &config)?;
            verify::write_record(&verified, &config)?;
            if args.superseded_ok && code == Verdict::Superseded.exit_code() {
                if !args.quiet {
                    say_notice(&verify::superseded_notice(&verified));
                }
                0
            } else {
                code
            }
        }
        cli::Command::Demo(args) => {
            let outcome = runtime.block_on(demo::play(style))?;
            print(&outcome, args.output, style, &mut out)?
        }
        cli::Command::Release(cli::ReleaseCommand::Show(args)) => {
            runtime.block_on(release::show(&args, &mut out))?
        }
        cli::Command::Snapshot(args) => {
            let taken = runtime.block_on(snapshot::take(&args))?;
            print(&taken, Format::Text, style, &mut out)?
        }
        cli::Command::Rollback(args) => {
            // Said as it goes, plain as ever (the verified report among it too).
            let mut printer = RollbackPrinter::new(&mut out, TextStyle::plain());
            runtime.block_on(snapshot::rollback(&args, &mut printer))?;
            printer.finish().exit_code()
        }
        cli::Command::Stale(args) => {
            let stale = runtime.block_on(stale::check(&args))?;
            // Plain text, as stale has always printed (its table is not coloured).
            print(&stale, args.output, TextStyle::plain(), &mut out)?
        }
        cli::Command::Sim(args) => {
            let running = runtime.block_on(sim_cmd::start(&args))?;
            let code = print(&running.serving, Format::Text, style, &mut out)?;
            // Said before the wait, which lasts until Ctrl-C.
            out.flush()?;
            runtime.block_on(running.until_interrupted())?;
            code
        }
        cli::Command::Lint(args) => {
            let report = lint::run(&args)?;
            print(&report, args.output, style, &mut out)?
        }
        cli::Command::Mcp(args) => runtime.block_on(mcp::serve(&args))?,
        cli::Command::Controller(args) => runtime.block_on(controller::serve(&args))?,
        cli::Command::Auth(args) => {
            let report = runtime.block_on(auth::check(&args))?;
            print(&report, args.output.format(), style, &mut out)?
        }
        cli::Command::Skill => skill::run(&mut out)?,
        cli::Command::Schema(args) => schema::run(&args, &mut out)?,
        cli::Command::Completion(args) => shell::completion(args.shell, &mut out)?,
        cli::Command::Man(args) => shell::man(args.dir.as_deref(), &mut out)?,
        cli::Command::Version => shell::version(&mut out)?,
    };
    out.flush()?;
    Ok(code)
}

/// Prints a command's model in `format` (one clap let through: one it is drawn in); its exit
/// code.
fn print<M: Render + Outcome>(
    model: &M,
    format: Format,
    style: TextStyle,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    model.render(format, style, out)?;
    Ok(model.exit_code())
}

/// The process's peak resident memory (the kernel's `VmHWM`), where `/proc` has it: `-v` says
/// it, so a large `--from` dump's cost can be read off a run.
fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()
}

/// Logging on stderr at `verbose` (`-v` counted), or errors alone (`None`: `-q`).
fn init_logging(verbose: Option<u8>) {
    let default = match verbose {
        None => "error,kube=off,kube_client=off,kube_runtime=off",
        // kube logs its own view of errors we report better ourselves; -vv shows them.
        Some(0) => "warn,kube=off,kube_client=off,kube_runtime=off",
        Some(1) => {
            "warn,kube=off,kube_client=off,kube_runtime=off,liveproof=info,liveproof_gather=debug"
        }
        Some(_) => "debug,hyper=info,rustls=info,tower=info",
    };
    use tracing_subscriber::filter::FilterExt as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    use tracing_subscriber::Layer as _;
    let filter = tracing_subscriber::EnvFilter::try_from_env("LIVEPROOF_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // kube's client logs response bodies whole (an error body, a body it could not decode: a
    // Secret list, megabytes of a page); we report those ourselves, cut and without values.
    // Whatever LIVEPROOF_LOG asks for, those lines are never written.
    // rmcp logs each tool call's arguments whole at debug (a URL with its credentials, an
    // expectation): its lines below info are never written either.
    let no_bodies = tracing_subscriber::filter::filter_fn(|meta| {
        meta.target() != KUBE_BODIES
            && !(meta.target().starts_with("rmcp") && *meta.level() > tracing::Level::INFO)
    });
    // Logs go to stderr: stdout carries the report alone.
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(|| MaskedLogLine(Vec::new()))
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .with_target(false)
        .without_time()
        .with_filter(filter.and(no_bodies));
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

/// The target of kube-client's request logging, which quotes response bodies.
const KUBE_BODIES: &str = "kube_client::client";

/// The longest log line written; the rest of a longer one is cut, saying so.
const MAX_LOG_LINE: usize = 8 * 1024;

/// One log line, written to stderr with every URL in it masked when it is done (the HTTP
/// stack's own lines quote the URL they request: kube's `http.url=…`, at any level
/// `LIVEPROOF_LOG` may ask for), and cut to [`MAX_LOG_LINE`] (a watch error quotes the
/// server's Status, whatever its size).
struct MaskedLogLine(Vec<u8>);

impl std::io::Write for MaskedLogLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for MaskedLogLine {
    fn drop(&mut self) {
        let line = String::from_utf8_lossy(&self.0);
        let line = liveproof_redacted::mask_urls(&line);
        let shown = if line.len() > MAX_LOG_LINE {
            let mut cut = MAX_LOG_LINE;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{}… (log line cut: {} bytes)\n", &line[..cut], line.len())
        } else {
            line.into_owned()
        };
        // A log line that cannot be written has nowhere else to go.
        let _ = std::io::stderr().write_all(shown.as_bytes());
    }
}

/// The error and its causes, each said once: a message that already quotes its cause (as
/// most of ours do, to read well alone) does not get it appended a second time. The hint is
/// the first cause's that has one ([`hint_of`]), never read out of the text.
pub(crate) fn problem(err: &anyhow::Error) -> Problem {
    let mut message = String::new();
    let mut hint = None;
    for cause in err.chain() {
        // A message with a hint already said what matters; its causes are the library's words.
        if hint.is_some() {
            break;
        }
        let part = cause.to_string();
        if !message.contains(part.trim()) {
            if !message.is_empty() {
                message.push_str(": ");
            }
            message.push_str(&part);
        }
        hint = hint_of(cause);
    }
    Problem::new(message, hint.map(Cow::into_owned))
}

/// The hint of one error in a chain, when it is one of ours that has one. An error reaches the
/// top as `anyhow::Error`, which keeps no trait of it but its type: each error type that can
/// carry a hint is named here; a new one that is not gets no hint on exit 2.
fn hint_of<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<Cow<'a, str>> {
    use liveproof_evidence::hint::{Hinted, HintedMessage};
    fn typed<'a, E: Hinted + 'static>(
        cause: &'a (dyn std::error::Error + 'static),
    ) -> Option<Option<Cow<'a, str>>> {
        cause.downcast_ref::<E>().map(E::hint)
    }
    // stdout's write errors are `io::Error`s (so a closed pipe keeps its kind) holding ours.
    if let Some(inner) = cause
        .downcast_ref::<std::io::Error>()
        .and_then(std::io::Error::get_ref)
    {
        return hint_of(inner);
    }
    None.or_else(|| typed::<HintedMessage>(cause))
        .or_else(|| typed::<ConfigError>(cause))
        .or_else(|| typed::<rules::RuleError>(cause))
        .or_else(|| typed::<liveproof_gather::resolve::ResolveError>(cause))
        .or_else(|| typed::<liveproof_evidence::TargetError>(cause))
        .or_else(|| typed::<liveproof_evidence::selector::SelectorError>(cause))
        .or_else(|| typed::<liveproof_evidence::ObjectError>(cause))
        .or_else(|| typed::<liveproof_gather::GatherError>(cause))
        .or_else(|| typed::<liveproof_gather::registry::FactsError>(cause))
        .or_else(|| typed::<liveproof_gather::git::GitError>(cause))
        .or_else(|| typed::<liveproof_gather::offline::LoadError>(cause))
        .or_else(|| typed::<liveproof_lint::LintError>(cause))
        .or_else(|| typed::<deadline::OutOfTime>(cause))
        .or_else(|| typed::<output::StdoutFailed>(cause))
        .or_else(|| typed::<Panicked>(cause))
        .or_else(|| typed::<output::ReportUnwritable>(cause))
        .or_else(|| typed::<output::RecordUnwritable>(cause))
        .or_else(|| typed::<release::ReleaseError>(cause))
        .or_else(|| typed::<snapshot::SnapshotError>(cause))
        .or_else(|| typed::<liveproof_gather::session::NothingSelected>(cause))
        .or_else(|| typed::<liveproof_gather::complete::UnreadableRelease>(cause))
        .or_else(|| typed::<liveproof_gather::complete::DecodeOutOfTime>(cause))
        .or_else(|| typed::<liveproof_gather::session::PassError>(cause))
        .or_else(|| typed::<controller::SpecError>(cause))
        .flatten()
}

/// [`problem`] as one text, hints last, each once: what stderr and MCP say.
pub(crate) fn error_text(err: &anyhow::Error) -> String {
    problem(err).to_string()
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use liveproof_evidence::hint::{Hinted, HintedMessage};

    use super::{error_text, problem};

    #[derive(Debug, thiserror::Error)]
    #[error("commit `x` not found in /repo")]
    struct NotFound;

    #[derive(Debug, thiserror::Error)]
    #[error("--commit x: {0}")]
    struct Flag(#[source] HintedMessage);

    #[test]
    fn each_cause_and_hint_is_said_once() {
        let err = anyhow::Error::new(Flag(HintedMessage::new(
            NotFound.to_string(),
            "fetch it, or pass --since",
        )));
        let text = error_text(&err);
        assert_eq!(
            text,
            "--commit x: commit `x` not found in /repo\nhint: fetch it, or pass --since"
        );
    }

    /// What a person typed may hold a line that reads like a hint: it is part of the message,
    /// and the hint is the error's own.
    #[test]
    fn a_hint_line_typed_into_a_flag_stays_in_the_message() {
        let selector = "app=web\nhint: x";
        let err = liveproof_evidence::selector::parse(selector).expect_err("not a selector");
        let err = anyhow::Error::new(crate::ConfigError::Selector(err));
        let problem = problem(&err);
        assert!(
            problem
                .message
                .starts_with("-l/--selector: label selector `app=web\nhint: x`"),
            "{problem:?}"
        );
        assert_eq!(
            problem.hint.as_deref(),
            Some("write it as kubectl takes it: app=web, tier!=cache, env in (prod,staging), release, !canary (terms joined by commas)")
        );
        // Read back from the text, it would have been cut in two (the old way).
        assert!(!problem.to_string().ends_with("hint: x"), "{problem}");
    }

    /// A cause's hint is found behind `.context(…)` and inside an `io::Error` (stdout's).
    #[test]
    fn a_hint_is_found_however_the_error_is_wrapped() {
        let inner = HintedMessage::new("boom", "do this");
        let err = anyhow::Error::new(inner.clone()).context("while writing");
        assert_eq!(error_text(&err), "while writing: boom\nhint: do this");
        let io = std::io::Error::other(inner);
        let err = anyhow::Error::new(io);
        assert_eq!(problem(&err).hint.as_deref(), Some("do this"));
    }

    /// Every error type of the workspace that carries a hint is one [`super::hint_of`] names:
    /// anyhow keeps only an error's type, so a type left out would lose its hint on exit 2.
    /// Read from the sources, as a new `impl Hinted for NewError` is written.
    #[test]
    fn every_hinted_error_type_is_one_hint_of_names() {
        let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let listed = include_str!("lib.rs");
        let listed = &listed[listed.find("fn hint_of").expect("hint_of")..];
        let listed = &listed[..listed.find("\n}\n").expect("its end")];
        let mut files = vec![crates];
        let mut seen = 0;
        while let Some(path) = files.pop() {
            if path.is_dir() {
                let skip = path.ends_with("target") || path.ends_with("tests");
                if !skip {
                    for entry in std::fs::read_dir(&path).expect("readable") {
                        files.push(entry.expect("entry").path());
                    }
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source");
            for line in text.lines() {
                let Some((_, rest)) = line.trim_start().split_once("Hinted for ") else {
                    continue;
                };
                if !line.trim_start().starts_with("impl ") {
                    continue;
                }
                let name = rest.trim_end_matches(" {").trim();
                seen += 1;
                assert!(
                    listed.contains(&format!("{name}>(cause)")),
                    "{}: {name} implements Hinted but hint_of does not name it",
                    path.display()
                );
            }
        }
        assert!(seen >= 18, "found only {seen} Hinted error types");
    }

    /// Each error type [`super::hint_of`] names gives the hint from its `hint()`.
    #[test]
    fn hint_of_reads_each_type_its_hint() {
        fn check<E: Hinted + Send + Sync + 'static>(err: E) {
            let want = err.hint().map(Cow::into_owned);
            assert!(want.is_some(), "{err}");
            let err = anyhow::Error::new(err);
            assert_eq!(problem(&err).hint, want, "{err}");
        }
        check(liveproof_gather::resolve::ResolveError::NoContexts);
        check(liveproof_evidence::TargetError::Shape { given: "x".into() });
        check(liveproof_gather::git::GitError::CommitNotFound {
            repo: "/repo".into(),
            commit: "x".into(),
        });
        check(liveproof_gather::GatherError::NoConfig { reason: "r".into() });
        check(liveproof_gather::offline::LoadError::NoManifests { path: "/d".into() });
        check(crate::release::ReleaseError::NotFoundAnywhere { name: "web".into() });
        check(liveproof_gather::session::NothingSelected::new(
            "app=web", None,
        ));
    }
}
