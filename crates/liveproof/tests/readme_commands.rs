//! Every `liveproof …` command the README and `docs/*.md` show in a code block is run, and
//! answers what the example says it answers: an example a reader copies must not be one that
//! can only end `unproven` while it reads as if it answered.
//!
//! How an example says what it gives: right after the command (on its last line, or the line
//! after it) a comment `# → VERDICT (exit N)` — `live (exit 0)`, `not_live (exit 1)`,
//! `error (exit 2)`, `unproven (exit 3)`, `superseded (exit 4)` — or `# → exit N` for a command
//! whose exit code is no verdict. A command whose exit code is a verdict (`verify`, `stale`,
//! `rollback`, `snapshot`, `lint`, and any subcommand this test does not know) must say it; any
//! other (`release show`, `schema`, `skill`, `completion`, `demo`, …) is expected to exit 0
//! unless it says otherwise.
//!
//! Where it runs: each example (the shell lines of a code block from its comment to the next
//! example) is a bash script run in a fresh world on the simulator, so what it sets up itself
//! (`kubectl set image`, `kubectl get … > dump.yaml`, `T=$(date …)`) runs too, with the real
//! kubectl. The world is the one the examples name:
//!
//! - namespace `apps`: the demo's cluster after its fix — HelmRelease `inventory` upgraded to
//!   revision 35 from GitRepository `acmeco-apps` at the merge commit, its Deployment
//!   `inventory` on `ghcr.io/acme/inventory:1.4.0` reading `inventory-db/password` by
//!   reference, two pods started after the merge running digest `sha256:2dc7ac36…`;
//! - namespace `shop`: `cart` and `checkout` (`app.kubernetes.io/part-of=shop`) rolled out on
//!   `ghcr.io/acme/cart:2.1.0` and `ghcr.io/acme/checkout:2.1.0`;
//! - the working directory: a git repository whose HEAD is the merge commit (ten minutes
//!   before the pods started) holding `k8s/` (inventory's manifest); `3f2c1ab`, the docs'
//!   merge commit, stands for it, as does `$GITHUB_SHA`;
//! - a kubeconfig whose contexts `prod-eu`, `prod-us` and `prod-ap` (the fleet's) reach the
//!   same simulator beside its own.
//!
//! A command the simulator cannot answer (it needs a real registry, a snapshot written by an
//! earlier job, a running controller) is listed in [`NOT_RUN`] with the reason and the test
//! that runs it instead; never skipped silently, and an entry that matches no command fails.

use std::path::{Path, PathBuf};
use std::time::Duration;

use liveproof_testkit::{Cli, SimCluster};
use serde_json::{json, Value};

/// Commands not run here, by the document and how the command starts, with why and where
/// they are run instead.
const NOT_RUN: &[(&str, &str, &str)] = &[
    (
        "README.md",
        "liveproof verify helmrelease/inventory -n apps --commit 3f2c1ab",
        "the demo's printed output, not a command to copy: readme.rs holds it equal to what \
         `liveproof demo` prints",
    ),
    (
        "README.md",
        "liveproof verify apps/verification/web-1-4-0",
        "reads a Verification the `liveproof controller` keeps: verify_verification.rs and \
         verification_controller.rs run it",
    ),
    (
        "README.md",
        "liveproof man /usr/local/share/man/man1",
        "writes into a system directory: cli tests run `man` into a temporary one",
    ),
    (
        "README.md",
        "liveproof stale -f k8s/ --restart",
        "resolves each tag at its registry (ghcr.io here): digests.rs runs stale against a real \
         registry",
    ),
    (
        "README.md",
        "liveproof snapshot --dir /var/lib/deploy/snapshots",
        "the pipeline's jobs around an apply, on a runner's disk: pipeline.rs runs snapshot → \
         apply → verify --snapshot → rollback on the simulator",
    ),
    (
        "README.md",
        "liveproof verify --snapshot /var/lib/deploy/snapshots",
        "needs the snapshot an earlier job wrote and an apply after it: pipeline.rs",
    ),
    (
        "README.md",
        "liveproof rollback --snapshot /var/lib/deploy/snapshots",
        "needs the snapshot an earlier job wrote and a failed apply: pipeline.rs",
    ),
    (
        "README.md",
        "liveproof sim --demo",
        "serves until interrupted: sim.rs runs it",
    ),
    (
        "docs/github-actions.md",
        "liveproof snapshot --dir \"$SNAPSHOT_DIR\"",
        "a workflow step (acts on every exit code): pipeline.rs runs the sequence",
    ),
    (
        "docs/github-actions.md",
        "liveproof stale -f k8s/ --restart",
        "a workflow step resolving tags at a registry: digests.rs",
    ),
    (
        "docs/github-actions.md",
        "liveproof verify --snapshot \"$SNAPSHOT_DIR\"",
        "a workflow step (acts on every exit code): pipeline.rs runs the sequence",
    ),
    (
        "docs/github-actions.md",
        "liveproof rollback --snapshot \"$SNAPSHOT_DIR\"",
        "a workflow step (acts on every exit code): pipeline.rs runs the sequence",
    ),
    (
        "docs/github-actions.md",
        "liveproof verify apps/hr/inventory --commit \"$GITHUB_SHA\" --wait",
        "a workflow step (acts on every exit code); the same verify is the README's HelmRelease \
         example, run here",
    ),
    (
        "docs/metrics.md",
        "liveproof verify deploy/inventory -n apps --commit \"$SHA\" --image \"ghcr.io/acme/inventory:$SHA\" --wait --record devlake.jsonl",
        "posts what it recorded to a DevLake server, which is not here: record.rs runs verify \
         --record-format devlake and checks the payload against DevLake's shape",
    ),
    (
        "docs/metrics.md",
        "liveproof verify deploy/inventory -n apps --commit \"$SHA\" --image \"ghcr.io/acme/inventory:$SHA\" --wait --record datadog.jsonl",
        "posts what it recorded to Datadog, which is not here: record.rs runs verify \
         --record-format datadog and checks the payload against Datadog's shape",
    ),
];

/// Subcommands whose exit code is no verdict: exit 0 unless the example says otherwise.
const DOCUMENTS: &[&str] = &[
    "release",
    "schema",
    "skill",
    "completion",
    "man",
    "demo",
    "version",
    "mcp",
    "sim",
];

/// The documents whose code blocks are read.
fn documents() -> Vec<(String, String)> {
    let root = liveproof_testkit::story::repo_root();
    let mut paths = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("a docs/ entry").file_name())
        .filter_map(|n| n.to_str().map(str::to_string))
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(root.join(&p)).unwrap_or_else(|e| panic!("{p}: {e}"));
            (p, text)
        })
        .collect()
}

/// What an example says its command gives.
#[derive(Debug, Clone, PartialEq)]
struct Declared {
    verdict: Option<String>,
    code: i32,
}

/// `→ live (exit 0)`, `→ exit 0` (the text after `#`), or None.
fn declaration(comment: &str) -> Result<Option<Declared>, String> {
    let Some(rest) = comment.trim().strip_prefix('→') else {
        return Ok(None);
    };
    let rest = rest.trim();
    let code_of = |s: &str| -> Result<i32, String> {
        s.split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("`{comment}`: no exit code"))
    };
    if let Some(code) = rest.strip_prefix("exit ") {
        return Ok(Some(Declared {
            verdict: None,
            code: code_of(code)?,
        }));
    }
    let (verdict, tail) = rest
        .split_once(" (exit ")
        .ok_or_else(|| format!("`{comment}`: say `→ VERDICT (exit N)` or `→ exit N`"))?;
    let code = code_of(tail)?;
    let want = match verdict {
        "live" => 0,
        "not_live" => 1,
        "error" => 2,
        "unproven" => 3,
        "superseded" => 4,
        other => return Err(format!("`{comment}`: `{other}` is no verdict")),
    };
    if want != code {
        return Err(format!("`{comment}`: {verdict} is exit {want}"));
    }
    Ok(Some(Declared {
        verdict: Some(verdict.to_string()),
        code,
    }))
}

/// One `liveproof` command of an example.
#[derive(Debug, Clone)]
struct Command {
    /// 1-based line of its first line.
    line: usize,
    /// Its text, continuation lines joined.
    text: String,
    /// The lines of the example it spans (indexes into [`Example::lines`]).
    span: std::ops::Range<usize>,
    declared: Option<Declared>,
}

/// An example: the shell lines of a code block from its comment to the next example's.
#[derive(Debug, Clone)]
struct Example {
    lines: Vec<String>,
    commands: Vec<Command>,
    /// A text block's `$ command` or a YAML `run:` step: only the command runs.
    command_only: bool,
}

/// Where `liveproof` starts a command in a shell line: at the start, or after `&&`, `;`, `|`,
/// `$(`, `<(` (the command's text from there), for `liveproof`, `kubectl liveproof` and
/// `cargo run -q -p liveproof --`.
fn command_in(line: &str) -> Option<&str> {
    const STARTS: [&str; 3] = [
        "liveproof ",
        "kubectl liveproof ",
        "cargo run -q -p liveproof -- ",
    ];
    let line = line.trim_start();
    if line.starts_with('#') {
        return None;
    }
    let line = line.strip_prefix("$ ").unwrap_or(line);
    let line = line.strip_prefix("run: ").unwrap_or(line);
    let line = line.strip_prefix("- ").unwrap_or(line);
    let mut starts = vec![0];
    for sep in ["&& ", "; ", "| ", "$(", "<("] {
        starts.extend(line.match_indices(sep).map(|(i, _)| i + sep.len()));
    }
    starts.sort_unstable();
    starts.into_iter().find_map(|i| {
        let rest = line[i..].trim_start();
        STARTS
            .iter()
            .any(|s| rest.starts_with(s) || rest == s.trim_end())
            .then_some(rest)
    })
}

/// The comment of a shell line (from an unquoted ` #`), if any.
fn trailing_comment(line: &str) -> Option<&str> {
    let mut quote = None;
    let bytes = line.as_bytes();
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if i == 0 || bytes[i - 1] == b' ' => return Some(&line[i + 1..]),
            _ => {}
        }
    }
    None
}

/// The examples of a Markdown document's code blocks that hold a `liveproof` command.
fn examples(path: &str, markdown: &str) -> Result<Vec<Example>, String> {
    let mut out = Vec::new();
    let mut block: Option<(String, Vec<(usize, String)>)> = None;
    for (n, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(fence) = trimmed.strip_prefix("```") {
            match block.take() {
                None => block = Some((fence.trim().to_string(), Vec::new())),
                Some((lang, lines)) => out.extend(block_examples(path, &lang, &lines)?),
            }
            continue;
        }
        if let Some((_, lines)) = &mut block {
            lines.push((n + 1, line.to_string()));
        }
    }
    Ok(out)
}

fn block_examples(
    path: &str,
    lang: &str,
    lines: &[(usize, String)],
) -> Result<Vec<Example>, String> {
    let command_only = !matches!(lang, "sh" | "bash" | "shell" | "console" | "");
    // Examples: split at blank lines, and at a comment that follows a command line (the next
    // example's description); a `# →` line belongs to the command before it.
    let mut groups: Vec<Vec<(usize, String)>> = vec![Vec::new()];
    for (n, line) in lines {
        let t = line.trim();
        let current = groups.last_mut().expect("a group");
        let is_comment = t.starts_with('#') && !t.trim_start_matches('#').trim().starts_with('→');
        let after_code = current.iter().any(|(_, l)| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with('#')
        });
        if t.is_empty() || (is_comment && after_code && !command_only) {
            groups.push(Vec::new());
        }
        if !t.is_empty() {
            groups.last_mut().expect("a group").push((*n, line.clone()));
        }
    }
    let mut out = Vec::new();
    for group in groups {
        let lines: Vec<String> = group.iter().map(|(_, l)| l.clone()).collect();
        let mut commands = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            let Some(start) = command_in(&lines[i]) else {
                i += 1;
                continue;
            };
            let first = i;
            let mut text = start.to_string();
            while text.trim_end().ends_with('\\') && i + 1 < lines.len() {
                text = format!(
                    "{} {}",
                    text.trim_end().trim_end_matches('\\').trim_end(),
                    lines[i + 1].trim()
                );
                i += 1;
            }
            let last = i;
            let mut declared = None;
            if let Some(comment) = trailing_comment(&lines[last]) {
                declared = declaration(comment.trim_start_matches('#'))
                    .map_err(|e| format!("{path}:{}: {e}", group[last].0))?;
            }
            let mut end = last + 1;
            if declared.is_none() {
                if let Some(next) = lines.get(last + 1) {
                    if let Some(comment) = next.trim().strip_prefix('#') {
                        declared = declaration(comment)
                            .map_err(|e| format!("{path}:{}: {e}", group[last + 1].0))?;
                        if declared.is_some() {
                            end += 1;
                        }
                    }
                }
            }
            let text = match text.find(" #") {
                Some(at) if trailing_comment(&text).is_some() => text[..at].trim_end().to_string(),
                _ => text,
            };
            // `<(liveproof completion bash)`: the command ends at its parenthesis.
            let text = match text.strip_suffix(')') {
                Some(inner) if !inner.contains('(') => inner.trim_end().to_string(),
                _ => text,
            };
            commands.push(Command {
                line: group[first].0,
                text,
                span: first..end,
                declared,
            });
            i = end;
        }
        if !commands.is_empty() {
            out.push(Example {
                lines,
                commands,
                command_only,
            });
        }
    }
    Ok(out)
}

/// The subcommand a command runs (`verify`, `release`, …).
fn subcommand(text: &str) -> &str {
    let rest = text
        .strip_prefix("kubectl liveproof")
        .or_else(|| text.strip_prefix("cargo run -q -p liveproof --"))
        .or_else(|| text.strip_prefix("liveproof"))
        .unwrap_or(text);
    rest.split_whitespace()
        .find(|w| !w.starts_with('-'))
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// The world the examples run in

/// The digest the README pins inventory 1.4.0 by.
const DIGEST: &str = "sha256:2dc7ac3690538cfc3066f742c59f6b3ad37d711d3c2dd2b2da532bf6cd873f35";
/// The docs' merge commit, which stands for the world's.
const DOCS_COMMIT: &str = "3f2c1ab";

struct World {
    cluster: SimCluster,
    /// The git repository examples run in (k8s/ at the merge commit).
    repo: liveproof_testkit::git::Repo,
    /// The kubeconfig with the fleet's contexts.
    kubeconfig: PathBuf,
    /// The merge commit.
    sha: String,
    _home: tempfile::TempDir,
}

fn shop_deployment(name: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: shop
  labels: {{app.kubernetes.io/part-of: shop}}
spec:
  replicas: 2
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}, app.kubernetes.io/part-of: shop}}
    spec:
      containers:
      - name: app
        image: ghcr.io/acme/{name}:2.1.0
"
    )
}

async fn world() -> World {
    use jiff::{SignedDuration, Timestamp};
    use liveproof::demo;
    let now = Timestamp::from_second(Timestamp::now().as_second()).expect("now");
    let simulator = liveproof_sim::Simulator::new()
        .with_gitops_crds()
        .with_controllers()
        .with_objects(demo::story_before(now - SignedDuration::from_hours(96)));
    let cluster = SimCluster::serve(simulator, demo::NS).await;
    let sim = &cluster.sim;
    // The version bump released: revision 35, new pods started now.
    demo::reconcile(sim, now);

    // The merge commit, ten minutes before: k8s/ holds inventory as the live template has it.
    let deployment = sim
        .get("apps/v1", "Deployment", Some(demo::NS), "inventory")
        .expect("the demo's Deployment");
    let manifest = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "inventory", "namespace": demo::NS, "labels": deployment["metadata"]["labels"]},
        "spec": {
            "replicas": deployment["spec"]["replicas"],
            "selector": deployment["spec"]["selector"],
            "template": deployment["spec"]["template"],
        }
    });
    let repo = liveproof_testkit::git::Repo::new();
    repo.file(
        "k8s/inventory.yaml",
        &serde_norway::to_string(&manifest).expect("YAML"),
    );
    let merged = (now - SignedDuration::from_mins(10)).to_string();
    liveproof_testkit::git::git_at(&repo.path(), &["add", "-A"], &merged);
    liveproof_testkit::git::git_at(
        &repo.path(),
        &[
            "commit",
            "-q",
            "-m",
            "inventory 1.4.0 reads the password by reference",
        ],
        &merged,
    );
    let sha = repo.git(&["rev-parse", "HEAD"]);
    // `lint --base origin/main`: the branch the merge went into.
    repo.git(&["update-ref", "refs/remotes/origin/main", "HEAD"]);

    // Flux's source fetched that commit.
    let mut source = sim
        .get(
            "source.toolkit.fluxcd.io/v1",
            "GitRepository",
            Some(demo::NS),
            "acmeco-apps",
        )
        .expect("the demo's GitRepository");
    let revision = format!("main@sha1:{sha}");
    source["status"]["artifact"]["revision"] = json!(revision);
    source["status"]["conditions"][0]["message"] =
        json!(format!("stored artifact for revision '{revision}'"));
    sim.apply(source);
    // The new pods run the digest the README pins.
    for mut pod in sim.objects().into_iter().filter(|o| {
        o["kind"] == "Pod"
            && o["metadata"]["namespace"] == demo::NS
            && o["spec"]["containers"][0]["image"] == demo::NEW_IMAGE
    }) {
        pod["status"]["containerStatuses"][0]["imageID"] =
            json!(format!("ghcr.io/acme/inventory@{DIGEST}"));
        sim.apply(pod);
    }

    // The shop, rolled out through the API by the simulator's controllers.
    let kubectl = |yaml: &str| {
        liveproof_testkit::kubectl::run(&cluster.kubeconfig, &["apply", "-f", "-"], Some(yaml))
    };
    kubectl("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n");
    kubectl(&shop_deployment("cart"));
    kubectl(&shop_deployment("checkout"));
    liveproof_testkit::wait_until_async("the shop's pods Ready", Duration::from_secs(60), || {
        sim.objects()
            .iter()
            .filter(|o| {
                o["kind"] == "Pod"
                    && o["metadata"]["namespace"] == "shop"
                    && o["metadata"]["deletionTimestamp"].is_null()
                    && o["status"]["conditions"].as_array().is_some_and(|c| {
                        c.iter()
                            .any(|c| c["type"] == "Ready" && c["status"] == "True")
                    })
            })
            .count()
            == 4
    })
    .await;

    // The fleet's contexts, each reaching this cluster.
    let home = tempfile::tempdir().expect("home");
    let mut config: Value =
        serde_norway::from_str(&sim.kubeconfig_yaml(demo::NS)).expect("the kubeconfig");
    let own = config["contexts"][0].clone();
    let contexts = config["contexts"].as_array_mut().expect("contexts");
    for name in ["prod-eu", "prod-us", "prod-ap"] {
        let mut context = own.clone();
        context["name"] = json!(name);
        contexts.push(context);
    }
    let kubeconfig = home.path().join("kubeconfig");
    std::fs::write(&kubeconfig, serde_norway::to_string(&config).expect("YAML"))
        .expect("kubeconfig written");
    World {
        cluster,
        repo,
        kubeconfig,
        sha,
        _home: home,
    }
}

// ---------------------------------------------------------------------------------------------
// Running an example

/// The bash an example runs as: `liveproof` (and `kubectl liveproof`, and `cargo run -q -p
/// liveproof --`) record each exit code, in order, in `$LP_CODES`.
const PRELUDE: &str = r#"
liveproof() { "$LP_BIN" "$@"; local c=$?; echo "$c" >> "$LP_CODES"; return "$c"; }
kubectl() {
  if [ "$1" = liveproof ]; then command kubectl "$@"; local c=$?; echo "$c" >> "$LP_CODES"; return "$c"; fi
  command kubectl "$@"
}
cargo() {
  local all="$*"
  if [ "${all#run -q -p liveproof -- }" != "$all" ]; then shift 5; liveproof "$@"; return; fi
  echo "cargo is not run by these examples" >&2; return 127
}
"#;

struct Outcome {
    codes: Vec<i32>,
    output: String,
}

async fn run_example(example: &Example, commands: &[&Command]) -> Outcome {
    let world = world().await;
    let dir = world.repo.path();
    let codes = dir.join(".git/lp-codes");
    let mut script = String::from(PRELUDE);
    if example.command_only {
        for c in commands {
            script.push_str(&c.text);
            script.push('\n');
        }
    } else {
        // The example's lines but those of commands not run here.
        let skipped: Vec<std::ops::Range<usize>> = example
            .commands
            .iter()
            .filter(|c| !commands.iter().any(|r| r.line == c.line))
            .map(|c| c.span.clone())
            .collect();
        for (i, line) in example.lines.iter().enumerate() {
            if !skipped.iter().any(|s| s.contains(&i)) {
                script.push_str(line);
                script.push('\n');
            }
        }
    }
    let script = script.replace(DOCS_COMMIT, &world.sha[..7]);
    let bin = Path::new(env!("CARGO_BIN_EXE_liveproof"));
    let kubectl = liveproof_testkit::kubectl::kubectl_path();
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        bin.parent().expect("bin dir").display(),
        kubectl.parent().expect("kubectl's dir").display()
    );
    let run = Cli::new("bash")
        .args(&["--noprofile", "--norc", "-c", &script])
        .env("PATH", path)
        .env("LP_BIN", bin)
        .env("LP_CODES", &codes)
        .env("KUBECONFIG", &world.kubeconfig)
        .env("HOME", world._home.path())
        .env("GITHUB_SHA", &world.sha)
        .env("NO_COLOR", "1")
        .env_remove("LIVEPROOF_LOG")
        .current_dir(&dir)
        .timeout(Duration::from_secs(300))
        .run()
        .await;
    let codes = std::fs::read_to_string(&codes)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    drop(world.cluster);
    Outcome {
        codes,
        output: format!(
            "--- script\n{script}--- stdout\n{}--- stderr\n{}",
            run.stdout, run.stderr
        ),
    }
}

/// What each command an example runs is expected to end with.
fn expected(command: &Command) -> Result<Declared, String> {
    if let Some(d) = &command.declared {
        return Ok(d.clone());
    }
    if DOCUMENTS.contains(&subcommand(&command.text)) {
        return Ok(Declared {
            verdict: None,
            code: 0,
        });
    }
    Err(format!(
        "`{}` does not say what it gives: add `# → VERDICT (exit N)` after it (live, not_live, \
         unproven, superseded)",
        command.text
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_in_the_readme_and_docs_answers_what_it_says() {
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut not_run_used = vec![false; NOT_RUN.len()];
    for (path, text) in documents() {
        let examples = match examples(&path, &text) {
            Ok(e) => e,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        for example in examples {
            let mut runnable = Vec::new();
            let mut wanted = Vec::new();
            for command in &example.commands {
                if let Some(i) = NOT_RUN
                    .iter()
                    .position(|(p, prefix, _)| *p == path && command.text.starts_with(prefix))
                {
                    not_run_used[i] = true;
                    continue;
                }
                match expected(command) {
                    Ok(want) => {
                        runnable.push(command);
                        wanted.push(want);
                    }
                    Err(e) => failures.push(format!("{path}:{}: {e}", command.line)),
                }
            }
            if runnable.is_empty() || runnable.len() != wanted.len() {
                continue;
            }
            let outcome = run_example(&example, &runnable).await;
            ran += runnable.len();
            let want: Vec<i32> = wanted.iter().map(|w| w.code).collect();
            // What ran and how it ended (stderr: shown with --nocapture).
            #[expect(
                clippy::print_stderr,
                reason = "the list of commands run is its output"
            )]
            for (c, code) in runnable.iter().zip(&outcome.codes) {
                eprintln!("{path}:{}: exit {code}: {}", c.line, c.text);
            }
            if outcome.codes != want {
                let said: Vec<String> = runnable
                    .iter()
                    .zip(&wanted)
                    .map(|(c, w)| {
                        format!(
                            "  {path}:{}: `{}` → {} (exit {})",
                            c.line,
                            c.text,
                            w.verdict.as_deref().unwrap_or("-"),
                            w.code
                        )
                    })
                    .collect();
                failures.push(format!(
                    "{path}: the example says\n{}\nbut its commands exited {:?}\n{}",
                    said.join("\n"),
                    outcome.codes,
                    outcome.output
                ));
            }
        }
    }
    for (used, (path, prefix, reason)) in not_run_used.iter().zip(NOT_RUN) {
        if !used {
            failures.push(format!(
                "NOT_RUN lists `{prefix}` in {path} ({reason}), which no example holds any more"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(ran >= 15, "the docs' commands were run: {ran}");
}

/// How an example says what it gives, and what counts as a command.
#[test]
fn examples_are_read_with_their_declarations() {
    let doc = "```sh\n# one\nliveproof verify deploy/a --since 1h \\\n    --image x:1\n# → live (exit 0)\n\n\
               # two\nT=$(date)\nliveproof verify deploy/a -l x   # → unproven (exit 3)\n\
               kubectl liveproof verify deploy/b\nmkdir -p d && liveproof skill > d/S.md\n```\n\
               ```text\n$ liveproof verify x\nverdict: live (exit 0)\n```\n";
    let examples = examples("X.md", doc).expect("read");
    assert_eq!(examples.len(), 3, "{examples:#?}");
    let one = &examples[0].commands[0];
    assert_eq!(one.text, "liveproof verify deploy/a --since 1h --image x:1");
    assert_eq!(
        one.declared,
        Some(Declared {
            verdict: Some("live".into()),
            code: 0
        })
    );
    let two = &examples[1].commands;
    assert_eq!(two.len(), 3, "{two:#?}");
    assert_eq!(two[0].text, "liveproof verify deploy/a -l x");
    assert_eq!(two[0].declared.as_ref().map(|d| d.code), Some(3));
    assert!(two[1].declared.is_none());
    assert!(
        expected(&two[1]).is_err(),
        "a verify must say what it gives"
    );
    assert_eq!(subcommand(&two[2].text), "skill");
    assert_eq!(expected(&two[2]).map(|d| d.code), Ok(0));
    assert!(examples[2].command_only);
    assert!(declaration("→ live (exit 3)").is_err());
    assert!(declaration("→ maybe (exit 0)").is_err());
    assert_eq!(
        declaration("→ exit 2").expect("parsed"),
        Some(Declared {
            verdict: None,
            code: 2
        })
    );
}
