//! What a shell and a package need from the command line itself: completion scripts
//! (`liveproof completion`), kubectl's plugin completion (`kubectl_complete-liveproof`), man
//! pages (`liveproof man`) and the version. All are generated from the one clap command, so
//! none can drift from what the binary takes.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::CommandFactory as _;

use crate::cli::Cli;

/// The environment variable that makes the binary answer a completion request (clap's
/// `CompleteEnv`): the scripts `liveproof completion SHELL` prints set it.
pub const COMPLETE_VAR: &str = "COMPLETE";

/// `liveproof completion SHELL`: the script on `out`. It registers this binary as the
/// completer (`COMPLETE=SHELL liveproof -- WORDS…`), so names, namespaces and contexts come
/// from the cluster at <TAB> time, as kubectl's `__complete` does.
pub fn completion(shell: clap_complete::Shell, out: &mut dyn Write) -> anyhow::Result<u8> {
    use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
    let completer: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &Bash,
        clap_complete::Shell::Elvish => &Elvish,
        clap_complete::Shell::Fish => &Fish,
        clap_complete::Shell::PowerShell => &Powershell,
        clap_complete::Shell::Zsh => &Zsh,
        other => anyhow::bail!("no completion script for {other}"),
    };
    let mut script = Vec::new();
    completer.write_registration(
        COMPLETE_VAR,
        "liveproof",
        "liveproof",
        &completer_path(),
        &mut script,
    )?;
    out.write_all(&script)?;
    Ok(0)
}

/// The binary the shell runs to complete: this one as it was run (a path made absolute, as
/// clap's `CompleteEnv` does; a bare name is looked up on PATH at <TAB> time).
fn completer_path() -> String {
    let argv0 = std::env::args_os()
        .next()
        .map_or_else(|| PathBuf::from("liveproof"), PathBuf::from);
    let path = match std::env::current_dir() {
        Ok(dir) if argv0.components().count() > 1 => dir.join(argv0),
        _ => argv0,
    };
    path.to_string_lossy().into_owned()
}

/// `COMPLETE=SHELL liveproof -- WORDS…` (what the scripts of [`completion`] run): the
/// candidates on stdout, as clap's engine writes them for that shell. `false` when the variable
/// is not set (a normal run).
pub fn complete_from_env(argv: &[OsString]) -> bool {
    let asked = std::env::var_os(COMPLETE_VAR).is_some_and(|v| !v.is_empty() && v != "0");
    if !asked {
        return false;
    }
    if let Some(dash) = argv.iter().position(|a| a == "--") {
        crate::completion::note_words(&argv[dash + 1..], &Cli::command());
    }
    let done = clap_complete::CompleteEnv::with_factory(Cli::command)
        .var(COMPLETE_VAR)
        .try_complete(
            argv.iter().cloned(),
            std::env::current_dir().ok().as_deref(),
        );
    // A completion that cannot be answered offers nothing: noise under the prompt helps no one.
    done.unwrap_or(true)
}

/// `liveproof man [DIR]`: liveproof.1 on `out`, or it and one page per subcommand
/// (`liveproof-verify.1`, `liveproof-release-show.1`, …) written into `dir`, each path said on
/// `out`.
pub fn man(dir: Option<&Path>, out: &mut dyn Write) -> anyhow::Result<u8> {
    let command = Cli::command();
    let Some(dir) = dir else {
        clap_mangen::Man::new(command).render(out)?;
        return Ok(0);
    };
    std::fs::create_dir_all(dir).map_err(|e| ManError {
        path: dir.display().to_string(),
        source: e,
    })?;
    let mut pages = Vec::new();
    collect_pages(command, "liveproof", &mut pages);
    for (name, command) in pages {
        let path = dir.join(format!("{name}.1"));
        let mut page = Vec::new();
        clap_mangen::Man::new(command).render(&mut page)?;
        // Replaced whole, never written through a link planted at a page's name.
        crate::output::replace_file(&path, &page, crate::output::Readable::ByAll).map_err(|e| {
            ManError {
                path: path.display().to_string(),
                source: e,
            }
        })?;
        writeln!(out, "{}", path.display())?;
    }
    Ok(0)
}

/// A man page that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the man pages: {path}: {source}")]
pub struct ManError {
    path: String,
    #[source]
    source: std::io::Error,
}

/// `command` and each subcommand under it (not `help`), named as man names them
/// (`liveproof-release-show`), each page's title that name.
fn collect_pages(command: clap::Command, name: &str, pages: &mut Vec<(String, clap::Command)>) {
    let subcommands: Vec<clap::Command> = command
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .cloned()
        .collect();
    for sub in subcommands {
        let sub_name = format!("{name}-{}", sub.get_name());
        // The page's NAME and file are the full name; its usage line says it as typed.
        let sub = sub.clone().name(sub_name.clone()).bin_name(format!(
            "{} {}",
            name.replace('-', " "),
            sub.get_name()
        ));
        collect_pages(sub, &sub_name, pages);
    }
    pages.insert(0, (name.to_string(), command));
}

/// `liveproof version`: what `--version` says.
pub fn version(out: &mut dyn Write) -> anyhow::Result<u8> {
    let command = Cli::command();
    writeln!(
        out,
        "{} {}",
        command.get_name(),
        command.get_version().unwrap_or(env!("CARGO_PKG_VERSION"))
    )?;
    Ok(0)
}

/// kubectl's plugin completion (1.26+): `kubectl liveproof ve<TAB>` runs
/// `kubectl_complete-liveproof ve`, the words typed after `kubectl liveproof`, the last one
/// the word being completed, and reads Cobra's answer: one candidate a line (a tab, then what
/// it is), then `:DIRECTIVE` (4: no file completion from the shell; paths are candidates here
/// already). Completed by clap's own engine over the same command.
pub fn kubectl_complete(words: Vec<OsString>, out: &mut dyn Write) -> std::io::Result<()> {
    let mut args: Vec<OsString> = vec![OsString::from("liveproof")];
    args.extend(words);
    if args.len() == 1 {
        args.push(OsString::new());
    }
    crate::completion::note_words(&args, &Cli::command());
    let index = args.len() - 1;
    // Flags are offered once a `-` is typed, as kubectl offers them.
    let flags_typed = args[index].to_string_lossy().starts_with('-');
    let dir = std::env::current_dir().ok();
    let mut command = Cli::command();
    let candidates = clap_complete::engine::complete(&mut command, args, index, dir.as_deref())?;
    let candidates: Vec<_> = candidates
        .iter()
        .filter(|c| !c.is_hide_set())
        .filter(|c| flags_typed || !c.get_value().to_string_lossy().starts_with('-'))
        .collect();
    for candidate in &candidates {
        let value = candidate.get_value().to_string_lossy();
        match candidate.get_help() {
            Some(help) => {
                let help = help.to_string();
                let first = help.lines().next().unwrap_or_default();
                writeln!(out, "{value}\t{first}")?;
            }
            None => writeln!(out, "{value}")?,
        }
    }
    // Cobra's ShellCompDirectiveNoFileComp (4), and NoSpace (2) when a candidate is to be
    // continued (`deploy/`, a directory), so the shell does not end the word there.
    let unfinished = candidates
        .iter()
        .any(|c| c.get_value().to_string_lossy().ends_with('/'));
    writeln!(out, ":{}", if unfinished { 6 } else { 4 })?;
    out.flush()
}

#[cfg(test)]
mod completion_tests {
    use std::ffi::OsString;
    use std::path::PathBuf;

    use clap::CommandFactory as _;
    use liveproof_evidence::TargetKind;

    use crate::cli::Cli;
    use crate::completion::{typed, value_flags, Typed};

    fn typed_in(line: &str) -> Typed {
        typed(&words(line), &value_flags(&Cli::command()))
    }

    fn words(line: &str) -> Vec<OsString> {
        let mut words: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        words.insert(0, "liveproof".into());
        words
    }

    #[test]
    fn the_words_typed_say_namespace_kubeconfig_context_and_a_kind_word() {
        let t = typed_in("verify -n shop --kubeconfig /k --context prod deploy web ");
        assert_eq!(t.namespace.as_deref(), Some("shop"));
        assert_eq!(t.kubeconfig, Some(PathBuf::from("/k")));
        assert_eq!(t.context.as_deref(), Some("prod"));
        assert_eq!(t.kinds, [TargetKind::Deployment]);
        let t = typed_in("verify --namespace=apps -A deploy,sts ");
        assert_eq!(t.namespace.as_deref(), Some("apps"));
        assert!(t.all_namespaces);
        assert_eq!(t.kinds, [TargetKind::Deployment, TargetKind::StatefulSet]);
        let t = typed_in("verify -napps deploy/web ");
        assert_eq!(t.namespace.as_deref(), Some("apps"));
        assert!(t.kinds.is_empty());
        // A flag's value is not a positional: `--image deploy` names no kind.
        let t = typed_in("verify --image deploy x");
        assert!(t.kinds.is_empty(), "{t:?}");
    }
}
