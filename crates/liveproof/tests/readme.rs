//! The README on a fresh clone: its first command runs the demo (`cargo run -p liveproof`
//! picks the `liveproof` binary, not the kubectl plugin beside it), and its "Real output" block
//! is what the demo prints — times aside — so it cannot drift or end mid-sentence.
//!
//! `LIVEPROOF_BLESS=1 cargo test -p liveproof --test readme` rewrites the block from a fresh run.

use liveproof_testkit::binary as common;

use std::path::PathBuf;

const BEGIN: &str = "<!-- BEGIN demo-output";
const END: &str = "<!-- END demo-output -->";

fn readme_path() -> PathBuf {
    liveproof_testkit::story::repo_root().join("README.md")
}

/// Every RFC 3339 time and date in `text` made one placeholder: the demo plays at "now".
fn without_times(text: &str) -> String {
    const TIME: &str = "dddd-dd-ddTdd:dd:ddZ";
    const DATE: &str = "dddd-dd-dd";
    let shaped = |window: &[char], shape: &str| {
        window.len() == shape.len()
            && window.iter().zip(shape.chars()).all(|(c, s)| match s {
                'd' => c.is_ascii_digit(),
                s => *c == s,
            })
    };
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        if rest.len() >= TIME.len() && shaped(&rest[..TIME.len()], TIME) {
            out.push_str("<time>");
            i += TIME.len();
        } else if rest.len() >= DATE.len() && shaped(&rest[..DATE.len()], DATE) {
            out.push_str("<date>");
            i += DATE.len();
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// The demo's first verification as it prints it: from its command to the line before the fix.
fn first_verification(demo: &str) -> String {
    let start = demo
        .find("$ liveproof verify")
        .unwrap_or_else(|| panic!("the demo shows no command:\n{demo}"));
    let end = demo[start..]
        .find("The fix is one line")
        .map(|e| start + e)
        .unwrap_or_else(|| panic!("the demo shows no fix:\n{demo}"));
    format!("{}\n", demo[start..end].trim_end())
}

/// The fenced block between the markers.
fn readme_block(readme: &str) -> (usize, usize) {
    let begin = readme
        .find(BEGIN)
        .expect("README has the demo-output marker");
    let fence = readme[begin..].find("```text\n").expect("a text fence") + begin + 8;
    let close = readme[fence..].find("```\n").expect("a closing fence") + fence;
    assert!(
        readme[close..].starts_with(&format!("```\n{END}")),
        "the block ends at {END}"
    );
    (fence, close)
}

#[tokio::test]
async fn the_real_output_block_is_what_the_demo_prints() {
    let run = common::liveproof().args(&["demo"]).run().await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let printed = first_verification(&run.stdout);
    let readme = std::fs::read_to_string(readme_path()).expect("README.md");
    let (from, to) = readme_block(&readme);
    if std::env::var_os("LIVEPROOF_BLESS").is_some() {
        let updated = format!("{}{printed}{}", &readme[..from], &readme[to..]);
        std::fs::write(readme_path(), updated).expect("write README.md");
        return;
    }
    let shown = &readme[from..to];
    assert_eq!(
        without_times(shown),
        without_times(&printed),
        "README's demo block differs from what `liveproof demo` prints; refresh it with \
         LIVEPROOF_BLESS=1 cargo test -p liveproof --test readme"
    );
    assert!(printed.contains("verdict: not_live (exit 1)"), "{printed}");
}

#[test]
fn cargo_run_picks_the_liveproof_binary() {
    // What `cargo run -p liveproof` decides from the manifest, asked of cargo itself.
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(liveproof_testkit::story::repo_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let package = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == "liveproof")
        .expect("the liveproof package");
    let binaries = package["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .filter(|t| t["kind"] == serde_json::json!(["bin"]))
        .count();
    assert!(
        binaries > 1,
        "the package has the plugin binary beside the CLI"
    );
    assert_eq!(
        package["default_run"], "liveproof",
        "`cargo run -p liveproof` needs it"
    );
}

#[test]
fn the_readme_says_how_to_install_before_using_liveproof_on_path() {
    let readme = std::fs::read_to_string(readme_path()).expect("README.md");
    let install = readme
        .find("cargo install --locked --git https://github.com/liveproof/liveproof liveproof")
        .expect("README says how to install");
    let first_use = readme
        .find("\nliveproof ")
        .expect("README uses liveproof from PATH");
    assert!(
        install < first_use,
        "install comes before the first `liveproof …` example"
    );
}

/// The MCP client configuration the README gives (Cursor's `mcp.json`, Claude Code's `claude
/// mcp add`) starts a server that answers MCP: the command it names, with its arguments, is
/// run (our binary standing for `liveproof` on PATH), initialised, and asked for its tools.
#[tokio::test]
async fn the_agent_set_up_the_readme_gives_starts_a_working_mcp_server() {
    let readme = std::fs::read_to_string(readme_path()).expect("README.md");
    let block = readme
        .split("<!-- BEGIN mcp-json")
        .nth(1)
        .and_then(|rest| rest.split("<!-- END mcp-json -->").next())
        .expect("README has the mcp-json block");
    let json = block
        .split("```json")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```json fence in the block");
    let config: serde_json::Value = serde_json::from_str(json).expect("the block is JSON");
    let server = &config["mcpServers"]["liveproof"];
    assert_eq!(server["command"], "liveproof", "{config}");
    let args: Vec<String> = server["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("string arg").to_owned())
        .collect();
    // Claude Code's line says the same command.
    let claude = format!("claude mcp add liveproof -- liveproof {}", args.join(" "));
    assert!(readme.contains(&claude), "README lacks `{claude}`");

    // The handshake and a tools/list, as a client sends them; stdin closes after, and the
    // server answers and exits (the test kit's runner bounds it).
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "readme-test", "version": "0"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    let input: String = messages.iter().map(|m| format!("{m}\n")).collect();
    let home = tempfile::tempdir().expect("home");
    let run = common::liveproof()
        .args(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .env("HOME", home.path())
        .stdin(input)
        .run()
        .await;
    let answers: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let answer = |id: u64| {
        answers
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer {id}: {}\n{}", run.stdout, run.stderr))
    };
    let init = answer(1);
    assert_eq!(init["result"]["serverInfo"]["name"], "liveproof", "{init}");
    let tools = answer(2);
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"verify"), "{tools}");
}

/// The first screen is a user's: "Try it" (the demo, exactly the command
/// `cargo_run_picks_the_liveproof_binary` holds runnable), then "Install" (the static archive at
/// the URL the Action downloads from, the image, krew), then "Develop" (the suite's command);
/// contributor set-up never comes first.
#[test]
fn the_readme_leads_with_try_it_then_install_then_develop() {
    let readme = std::fs::read_to_string(readme_path()).expect("README.md");
    let headings: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("## "))
        .take(3)
        .collect();
    assert_eq!(headings, ["## Try it", "## Install", "## Develop"]);
    let section = |heading: &str| -> String {
        let start = readme.find(&format!("\n{heading}\n")).expect("the heading") + 1;
        let rest = &readme[start + heading.len()..];
        let end = rest.find("\n## ").unwrap_or(rest.len());
        rest[..end].to_string()
    };
    let try_it = section("## Try it");
    assert!(
        try_it.contains("\ncargo run -q -p liveproof -- demo "),
        "{try_it}"
    );
    let develop = section("## Develop");
    assert!(develop.contains("\ncargo xtask test "), "{develop}");
    assert!(develop.contains("GOTOOLCHAIN=go1.27.3"), "{develop}");

    // The archive is where action.yml's install: release takes it from, by the same name.
    let install = section("## Install");
    let action = std::fs::read_to_string(liveproof_testkit::story::repo_root().join("action.yml"))
        .expect("action.yml");
    let release_url = action
        .split("release-url:")
        .nth(1)
        .and_then(|rest| rest.split("default: ").nth(1))
        .and_then(|rest| rest.lines().next())
        .expect("action.yml's release-url default");
    assert!(
        install.contains(&format!("{release_url}/v$V/$A")),
        "{install}"
    );
    assert!(
        install.contains("A=liveproof-v$V-x86_64-unknown-linux-musl.tar.gz"),
        "{install}"
    );
    assert!(
        install.contains("arm64: liveproof-v$V-aarch64-unknown-linux-musl.tar.gz"),
        "{install}"
    );
    // The Action picks the archive of the runner's CPU by the same names.
    assert!(
        action.contains("name=\"liveproof-v$version-$target.tar.gz\"")
            && action.contains("target=x86_64-unknown-linux-musl")
            && action.contains("target=aarch64-unknown-linux-musl"),
        "the Action downloads the archives the README names"
    );
    let version = env!("CARGO_PKG_VERSION");
    assert!(install.contains(&format!("V={version} ")), "{install}");
    assert!(
        install.contains(&format!("ghcr.io/liveproof/liveproof:{version} ")),
        "{install}"
    );
    assert!(install.contains("kubectl krew install"), "{install}");
}
