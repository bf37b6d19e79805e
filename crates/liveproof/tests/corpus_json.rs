//! The JSON of every corpus story, written to compare byte for byte before and after a change
//! that must not change behaviour (issue 34: "the JSON of every corpus story is byte-identical
//! before and after"). Nothing happens unless `LIVEPROOF_CORPUS_JSON=DIR` names a new or empty
//! folder; then each story is run as `tests/corpus.rs` runs it, offline (`--from`) and on the
//! simulator, and `DIR/NAME.offline.json`, `NAME.offline.exit`, `NAME.live.json` and
//! `NAME.live.exit` hold stdout and the exit code of each mode the story runs in:
//!
//! ```sh
//! (cd BEFORE && LIVEPROOF_CORPUS_JSON=/tmp/json-before cargo test -p liveproof --test corpus_json)
//! (cd AFTER  && LIVEPROOF_CORPUS_JSON=/tmp/json-after  cargo test -p liveproof --test corpus_json)
//! diff -r /tmp/json-before /tmp/json-after && echo byte-identical
//! ```
//!
//! The bytes are as printed but for what must differ from run to run, each replaced by a
//! placeholder (and counted on stderr, so a placeholder that hides too much shows): the
//! `generated_at` value (`"<generated_at>"`), the simulator's URL (`<server>`), the temporary
//! kubeconfig's path (`<kubeconfig>`), the temporary repository's path (`<repo>`) and the
//! checkout's (`<root>`, so two checkouts compare). Nothing else is touched.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use liveproof_testkit::{Cli, SimCluster, Story};

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    let trials = match std::env::var_os("LIVEPROOF_CORPUS_JSON") {
        None => vec![Trial::test(
            "writes nothing without LIVEPROOF_CORPUS_JSON",
            || Ok(()),
        )],
        Some(dir) => trials(std::path::absolute(&dir).unwrap_or_else(|_| PathBuf::from(dir))),
    };
    libtest_mimic::run(&args, trials).exit_code()
}

fn trials(dir: PathBuf) -> Vec<Trial> {
    let fail = |name: &str, message: String| vec![Trial::test(name, move || Err(message.into()))];
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return fail("the folder is made", format!("{}: {e}", dir.display()));
    }
    match std::fs::read_dir(&dir).map(|mut entries| entries.next().is_some()) {
        Ok(false) => {}
        Ok(true) => {
            return fail(
                "the folder is new or empty",
                format!(
                    "{} holds files already: name a new folder, so no file of an earlier run \
                     is compared",
                    dir.display()
                ),
            )
        }
        Err(e) => return fail("the folder is readable", format!("{}: {e}", dir.display())),
    }
    match Story::all() {
        Ok(stories) => stories
            .into_iter()
            .map(|story| {
                let dir = dir.clone();
                Trial::test(story.name.clone(), move || write_story(&story, &dir))
            })
            .collect(),
        Err(e) => fail("the corpus loads", e),
    }
}

/// The story's run, exactly as `tests/corpus.rs` builds it: with `committed_at`, its commit
/// made in a repository of its own at that time and named with `--commit`; with a `history`,
/// those commits made there and the change's named (the repository lives as long as the run).
fn story_cli(story: &Story) -> (Cli, Option<liveproof_testkit::git::Repo>) {
    let cli = Cli::liveproof(env!("CARGO_BIN_EXE_liveproof")).story(&story.name);
    if let Some((repo, sha)) = story.repository() {
        let cli = cli.args(&["--commit", &sha]).arg("--repo").arg(repo.path());
        return (cli, Some(repo));
    }
    match &story.committed_at {
        None => (cli, None),
        Some(at) => {
            let repo = liveproof_testkit::git::Repo::new();
            liveproof_testkit::git::git_at(
                &repo.path(),
                &["commit", "-q", "--allow-empty", "-m", "the change"],
                at,
            );
            let sha = repo.git(&["rev-parse", "HEAD"]);
            let cli = cli.args(&["--commit", &sha]).arg("--repo").arg(repo.path());
            (cli, Some(repo))
        }
    }
}

/// What differs from run to run, longest first (a path inside another is replaced first).
struct Placeholders(Vec<(String, &'static str)>);

impl Placeholders {
    fn new(repo: Option<&liveproof_testkit::git::Repo>) -> Placeholders {
        let mut list = Vec::new();
        let root = liveproof_testkit::story::repo_root();
        list.push((root.display().to_string(), "<root>"));
        if let Ok(canonical) = root.canonicalize() {
            list.push((canonical.display().to_string(), "<root>"));
        }
        if let Some(repo) = repo {
            list.push((repo.path().display().to_string(), "<repo>"));
            if let Ok(canonical) = repo.path().canonicalize() {
                list.push((canonical.display().to_string(), "<repo>"));
            }
        }
        Placeholders(list)
    }

    fn with(mut self, value: String, placeholder: &'static str) -> Placeholders {
        self.0.push((value, placeholder));
        self
    }

    /// `stdout` with each value replaced, and how many times each placeholder went in.
    fn apply(mut self, stdout: &str) -> (String, Vec<(&'static str, usize)>) {
        self.0
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        self.0.dedup();
        let mut text = stdout.to_string();
        let mut counts: Vec<(&'static str, usize)> = Vec::new();
        let mut count = |placeholder: &'static str, n: usize| match counts
            .iter_mut()
            .find(|(p, _)| *p == placeholder)
        {
            Some((_, total)) => *total += n,
            None => counts.push((placeholder, n)),
        };
        for (value, placeholder) in &self.0 {
            if value.is_empty() {
                continue;
            }
            count(placeholder, text.matches(value.as_str()).count());
            text = text.replace(value.as_str(), placeholder);
        }
        let (text, stamps) = without_generated_at(&text);
        count("<generated_at>", stamps);
        (text, counts)
    }
}

/// `text` with the value of each `"generated_at": "…"` replaced by `"<generated_at>"` (the
/// spacing before it kept), and how many there were.
fn without_generated_at(text: &str) -> (String, usize) {
    const KEY: &str = "\"generated_at\":";
    let (mut out, mut rest, mut n) = (String::with_capacity(text.len()), text, 0);
    while let Some(at) = rest.find(KEY) {
        let after_key = at + KEY.len();
        let spaces = rest[after_key..].len() - rest[after_key..].trim_start().len();
        let value = after_key + spaces;
        let closing = rest[value..]
            .strip_prefix('"')
            .and_then(|v| v.find('"'))
            .map(|end| value + 1 + end + 1);
        match closing {
            Some(end) => {
                out.push_str(&rest[..value]);
                out.push_str("\"<generated_at>\"");
                rest = &rest[end..];
                n += 1;
            }
            None => {
                out.push_str(&rest[..after_key]);
                rest = &rest[after_key..];
            }
        }
    }
    out.push_str(rest);
    (out, n)
}

fn write(dir: &Path, file: &str, bytes: &str) -> Result<(), Failed> {
    let path = dir.join(file);
    std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// One mode's run written: `NAME.MODE.json` (stdout, placeholders in) and `NAME.MODE.exit`.
fn keep(
    dir: &Path,
    story: &Story,
    mode: &str,
    run: &liveproof_testkit::Run,
    placeholders: Placeholders,
) -> Result<(), Failed> {
    let (json, counts) = placeholders.apply(&run.stdout);
    if let Err(e) = serde_json::from_str::<serde_json::Value>(&run.stdout) {
        return Err(format!(
            "[{mode}] stdout is not one JSON document ({e}), exit {}:\n{}\n{}",
            run.code, run.stdout, run.stderr
        )
        .into());
    }
    write(dir, &format!("{}.{mode}.json", story.name), &json)?;
    write(
        dir,
        &format!("{}.{mode}.exit", story.name),
        &format!("{}\n", run.code),
    )?;
    let counts: Vec<String> = counts.iter().map(|(p, n)| format!("{p} x{n}")).collect();
    let _ = writeln!(
        std::io::stderr(),
        "{} {mode}: {}",
        story.name,
        counts.join(", ")
    );
    Ok(())
}

fn write_story(story: &Story, dir: &Path) -> Result<(), Failed> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio: {e}"))?;
    runtime.block_on(async {
        if story.runs("offline") {
            let (cli, repo) = story_cli(story);
            let run = cli.offline().json().run().await;
            keep(
                dir,
                story,
                "offline",
                &run,
                Placeholders::new(repo.as_ref()),
            )?;
        }
        if story.runs("live") {
            let cluster = SimCluster::from_file(&story.cluster_yaml(), &story.namespace()).await;
            let (cli, repo) = story_cli(story);
            let run = cli.on(&cluster).json().run().await;
            let placeholders = Placeholders::new(repo.as_ref())
                .with(cluster.sim.url(), "<server>")
                .with(cluster.kubeconfig.display().to_string(), "<kubeconfig>");
            let kept = keep(dir, story, "live", &run, placeholders);
            cluster.sim.shutdown().await;
            kept?;
        }
        Ok(())
    })
}
