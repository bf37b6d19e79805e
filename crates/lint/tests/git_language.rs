//! Lint's `git cat-file --batch` goes through the one git runner (`liveproof_process::git`):
//! its messages in English whatever the user's locale, never a prompt. Its own test binary: it
//! puts a fake `git` first on PATH, which no other test may see.

use std::os::unix::fs::PermissionsExt as _;

use liveproof_lint::git::Repo;

/// A `git` that answers `rev-parse --show-prefix` at a work tree's top, and `cat-file --batch`
/// with one blob per object asked for whose text is the environment it was run in: the locale
/// and prompt variables a real git reads.
const FAKE_GIT: &str = r#"#!/bin/sh
# -C DIR SUBCOMMAND ...
case "$3" in
  rev-parse) echo ;;
  cat-file)
    while read -r name; do
      body="LC_ALL=$LC_ALL LANGUAGE=$LANGUAGE GIT_TERMINAL_PROMPT=$GIT_TERMINAL_PROMPT"
      printf '%s blob %s\n%s\n' 0123456789abcdef0123456789abcdef01234567 "${#body}" "$body"
    done ;;
  *) echo "fatal: unexpected $3" >&2; exit 128 ;;
esac
"#;

#[test]
fn lint_git_batch_reads_in_english() {
    let bin = tempfile::tempdir().expect("tempdir");
    let fake = bin.path().join("git");
    std::fs::write(&fake, FAKE_GIT).expect("script");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin.path().to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    // A German user's shell: git would answer in German, and lint matches git's English.
    std::env::set_var("PATH", std::env::join_paths(dirs).expect("PATH"));
    std::env::set_var("LC_ALL", "de_DE.UTF-8");
    std::env::set_var("LANGUAGE", "de");
    std::env::set_var("GIT_TERMINAL_PROMPT", "1");

    let work = tempfile::tempdir().expect("tempdir");
    let repo = Repo::open(work.path())
        .expect("the fake git answers")
        .expect("a work tree");
    let files = repo
        .read("HEAD", &["values.yaml".to_string()], 1 << 20)
        .expect("cat-file --batch answers");
    assert_eq!(
        files.get("values.yaml").map(String::as_str),
        Some("LC_ALL=C LANGUAGE=C GIT_TERMINAL_PROMPT=0"),
        "git cat-file --batch ran in this environment"
    );
}
