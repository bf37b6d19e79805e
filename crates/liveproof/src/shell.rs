//! What a shell and a package need from the command line itself: completion scripts
//! (`liveproof completion`), kubectl's plugin completion (`kubectl_complete-liveproof`), man
//! pages (`liveproof man`) and the version. All are generated from the one clap command, so
//! none can drift from what the binary takes.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use clap::CommandFactory as _;

use crate::cli::Cli;

/// `liveproof completion SHELL`: the script on `out`.
pub fn completion(shell: clap_complete::Shell, out: &mut dyn Write) -> anyhow::Result<u8> {
    let mut command = Cli::command();
    // Into memory first: clap_complete panics on a write error (a closed pipe), we do not.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "liveproof", &mut script);
    out.write_all(&script)?;
    Ok(0)
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
    let index = args.len() - 1;
    let dir = std::env::current_dir().ok();
    let mut command = Cli::command();
    let candidates = clap_complete::engine::complete(&mut command, args, index, dir.as_deref())?;
    for candidate in candidates.iter().filter(|c| !c.is_hide_set()) {
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
    // Cobra's ShellCompDirectiveNoFileComp.
    writeln!(out, ":4")?;
    out.flush()
}
