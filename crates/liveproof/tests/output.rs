//! Output a person can read and a program can parse: the text report fits the terminal it is
//! printed on, JSON says when, by which version and from which cluster it was made, every
//! `-o json` is one JSON document, and `--report` never guesses a format.

use liveproof_testkit::binary as common;

use common::{liveproof, RunExt};
use liveproof_testkit::story::scenarios_dir;
use liveproof_testkit::SimCluster;

fn story(name: &str) -> std::path::PathBuf {
    scenarios_dir().join(name).join("cluster.yaml")
}

/// Runs the built binary on a pseudo-terminal of `columns` columns (util-linux `script`), so
/// the report takes the terminal's width as it would in a person's shell.
fn on_a_terminal(columns: u16, args: &str) -> String {
    let binary = env!("CARGO_BIN_EXE_liveproof");
    let out = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("stty rows 40 cols {columns}; {binary} {args}"),
            "/dev/null",
        ])
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script(1) from util-linux runs");
    String::from_utf8_lossy(&out.stdout).replace('\r', "")
}

#[test]
fn the_text_report_wraps_to_the_terminal_width() {
    let dump = story("flux-chartversion-not-bumped");
    let args = format!(
        "verify hr/inventory -n apps --from {} --since 2026-07-12T10:00:00Z --expect secretKeyRef",
        dump.display()
    );
    let narrow = on_a_terminal(80, &args);
    assert!(narrow.contains("verdict: not_live"), "{narrow}");
    let longest = narrow.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(
        longest <= 80,
        "a line of {longest} columns on an 80-column terminal:\n{narrow}"
    );
    // The same report on a wide terminal uses the room (so the width was really read).
    let wide = on_a_terminal(160, &args);
    let longest_wide = wide.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(longest_wide > 100, "160 columns not used:\n{wide}");
}

#[tokio::test]
async fn not_a_terminal_means_100_columns() {
    let dump = story("flux-chartversion-not-bumped");
    let run = liveproof()
        .args(&[
            "verify",
            "hr/inventory",
            "-n",
            "apps",
            "--from",
            dump.to_str().expect("utf-8"),
        ])
        .since("2026-07-12T10:00:00Z")
        .args(&["--expect", "secretKeyRef"])
        .run()
        .await;
    let longest = run
        .stdout
        .lines()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    assert!((81..=100).contains(&longest), "{longest}:\n{}", run.stdout);
}

#[tokio::test]
async fn json_says_when_which_version_and_which_cluster() {
    let objects =
        liveproof_gather::offline::read_objects(&story("gitops-reconciled-new-tag-rolled-out"))
            .expect("objects");
    let cluster = SimCluster::start(objects, "apps").await;
    let before = jiff::Timestamp::now();
    let run = liveproof()
        .args(&["verify", "deployment/inventory"])
        .on(&cluster)
        .since("2026-07-12T10:00:00Z")
        .args(&["--image", "ghcr.io/acme/inventory:1.4.0"])
        .json()
        .run()
        .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.report();
    let at: jiff::Timestamp = report
        .generated_at
        .as_deref()
        .expect("generated_at")
        .parse()
        .expect("RFC 3339");
    assert!(at.as_second() >= before.as_second(), "{at}");
    assert_eq!(at.subsec_nanosecond(), 0, "to the second");
    assert_eq!(
        report.liveproof_version.as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    let on = report.cluster.expect("cluster");
    assert_eq!(on.context.as_deref(), Some("liveproof-sim"));
    assert_eq!(
        on.server.as_deref(),
        Some(cluster.sim.url().trim_end_matches('/'))
    );

    // Offline, the report says which files it read instead.
    let dump = story("gitops-reconciled-new-tag-rolled-out");
    let offline = liveproof()
        .args(&[
            "verify",
            "deployment/inventory",
            "-n",
            "apps",
            "--from",
            dump.to_str().expect("utf-8"),
        ])
        .since("2026-07-12T10:00:00Z")
        .json()
        .run()
        .await
        .report();
    let from = offline.cluster.expect("cluster");
    assert_eq!(from.from.as_deref(), dump.to_str());
    assert!(from.server.is_none() && from.context.is_none());
}

#[tokio::test]
async fn demo_json_is_one_document_with_both_reports() {
    let run = liveproof().args(&["demo"]).json().run().await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("demo -o json is not JSON ({e}):\n{}", run.stdout));
    assert_eq!(doc["schema"], "liveproof/demo/v1");
    let before: liveproof_evidence::Report =
        serde_json::from_value(doc["before"].clone()).expect("a liveproof/v1 report");
    let after: liveproof_evidence::Report =
        serde_json::from_value(doc["after"].clone()).expect("a liveproof/v1 report");
    assert_eq!(before.verdict, liveproof_evidence::Verdict::NotLive);
    assert_eq!(after.verdict, liveproof_evidence::Verdict::Live);
}

#[tokio::test]
async fn demo_refuses_a_format_it_cannot_make_one_document_of() {
    let run = liveproof().args(&["demo", "-o", "junit"]).run().await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("junit") && run.stderr.contains("json"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn report_with_an_extension_that_names_no_format_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = story("gitops-reconciled-new-tag-rolled-out");
    for file in ["report.toml", "report"] {
        let path = dir.path().join(file);
        let run = liveproof()
            .args(&[
                "verify",
                "deployment/inventory",
                "-n",
                "apps",
                "--from",
                dump.to_str().expect("utf-8"),
            ])
            .since("2026-07-12T10:00:00Z")
            .args(&["--report", path.to_str().expect("utf-8")])
            .run()
            .await;
        assert_eq!(run.code, 2, "{file}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("--report") && run.stderr.contains("--report-format"),
            "{}",
            run.stderr
        );
        assert!(!path.exists(), "nothing written for {file}");
    }
    // Said explicitly, any name is fine; a mapped extension needs nothing more.
    for (file, extra, starts) in [
        ("report.toml", Some("json"), "{"),
        ("report.md", None, "#"),
        ("report.yaml", None, "schema: liveproof/v1\n"),
        ("report.yml", None, "schema: liveproof/v1\n"),
    ] {
        let path = dir.path().join(file);
        let mut args = vec![
            "verify",
            "deployment/inventory",
            "-n",
            "apps",
            "--from",
            dump.to_str().expect("utf-8"),
            "--since",
            "2026-07-12T10:00:00Z",
            "--report",
            path.to_str().expect("utf-8"),
        ];
        if let Some(f) = extra {
            args.extend(["--report-format", f]);
        }
        let run = liveproof().args(&args).run().await;
        assert_ne!(run.code, 2, "{file}: {}", run.stderr);
        let written = std::fs::read_to_string(&path).expect("written");
        assert!(written.starts_with(starts), "{file}: {written}");
    }
}

/// `-o json` as clap may be given it, and what else a refused command line may hold.
#[tokio::test]
async fn arguments_clap_refuses_are_answered_with_one_error_document() {
    for args in [
        &["verify", "deploy/inventory", "--bogus", "-o", "json"][..],
        &["verify", "deploy/inventory", "-ojson", "--bogus"],
        &["verify", "deploy/inventory", "-o=json", "--bogus"],
        &["verify", "deploy/inventory", "--output", "json", "--bogus"],
        &[
            "-v",
            "verify",
            "deploy/inventory",
            "--bogus",
            "--output=json",
        ],
        &[
            "verify",
            "deploy/inventory",
            "-o",
            "json",
            "--timeout",
            "1m",
        ],
        &["stale", "-o", "json", "--bogus"],
        &["lint", "--bogus", "-o", "json"],
        &["demo", "-o", "json", "--bogus"],
    ] {
        let run = liveproof().args(args).run().await;
        let doc = run.error_document();
        assert!(!doc.error.message.is_empty(), "{args:?}");
        assert!(
            !doc.error.message.starts_with("error:"),
            "{args:?}: {doc:?}"
        );
        // clap's own words stay on stderr.
        assert!(
            run.stderr.starts_with("error: "),
            "{args:?}: {}",
            run.stderr
        );
    }
    let run = liveproof()
        .args(&["verify", "deploy/inventory", "--bogus"])
        .json()
        .run()
        .await;
    let doc = run.error_document();
    assert_eq!(doc.error.message, "unexpected argument '--bogus' found");
    assert!(doc.error.hint.is_some(), "{doc:?}");

    // No document was asked for, or none this command can print: stdout stays empty.
    for args in [
        &["verify", "deploy/inventory", "--bogus"][..],
        &["verify", "deploy/inventory", "-o", "wide"],
        &["verify", "deploy/inventory", "--bogus", "-o", "name"],
        &["lint", "-o", "sarif", "--bogus"],
        &["demo", "-o", "junit"],
        &["release", "show", "x", "-o", "json"],
        &["verify", "deploy/inventory", "--", "--bogus", "-o", "json"],
    ] {
        let run = liveproof().args(args).run().await;
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }

    // --help and --version are answers, not errors.
    for args in [&["verify", "--help", "-o", "json"][..], &["--version"]] {
        let run = liveproof().args(args).run().await;
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert!(
            serde_json::from_str::<serde_json::Value>(&run.stdout).is_err(),
            "{args:?}: {}",
            run.stdout
        );
    }
}

#[tokio::test]
async fn an_error_after_parsing_is_answered_in_the_format_asked() {
    let refused = |format: &'static str| async move {
        liveproof()
            .args(&["verify", "deploy/inventory"])
            .since("tomorrow")
            .args(&["-o", format])
            .run()
            .await
    };
    let json = refused("json").await;
    let doc = json.error_document();
    assert_eq!(
        doc.error.message,
        "--since `tomorrow` is neither an RFC 3339 time nor a duration ago"
    );
    let hint = doc.error.hint.expect("the error's hint");
    assert!(hint.contains("--since 10m"), "{hint}");
    assert!(
        json.stderr
            .starts_with("error: --since `tomorrow` is neither")
            && json.stderr.contains(&format!("\nhint: {hint}")),
        "the stderr line stays:\n{}",
        json.stderr
    );

    for format in ["markdown", "md"] {
        let md = refused(format).await;
        assert_eq!(md.code, 2);
        assert!(
            md.stdout.starts_with("## ⛔ liveproof could not verify\n"),
            "{format}: {}",
            md.stdout
        );
        assert!(
            md.stdout
                .contains("**Error:** --since `tomorrow` is neither an RFC 3339 time"),
            "{}",
            md.stdout
        );
        assert!(
            md.stdout.contains("**Hint:** give an RFC 3339 time"),
            "{}",
            md.stdout
        );
    }

    let junit = refused("junit").await;
    assert_eq!(junit.code, 2);
    let xml = junit.stdout;
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert_eq!(xml.matches("<testsuite ").count(), 1, "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 1, "{xml}");
    assert_eq!(xml.matches("<error ").count(), 1, "{xml}");
    assert!(
        xml.contains(
            r#"message="--since `tomorrow` is neither an RFC 3339 time nor a duration ago""#
        ),
        "{xml}"
    );
    assert!(
        !xml.contains("<failure"),
        "an error, not a failed check: {xml}"
    );

    // YAML: the JSON error document, as YAML (also when clap refused the arguments).
    let yaml = refused("yaml").await;
    assert_eq!(yaml.code, 2);
    let yaml_doc: liveproof_report::ErrorReport =
        serde_norway::from_str(&yaml.stdout).expect("one YAML error document");
    assert_eq!(
        serde_json::to_value(&yaml_doc).expect("JSON"),
        serde_json::from_str::<serde_json::Value>(&json.stdout).expect("JSON"),
        "{}",
        yaml.stdout
    );
    let clap_refused = liveproof()
        .args(&["verify", "deploy/inventory", "--bogus", "-o", "yaml"])
        .run()
        .await;
    assert_eq!(clap_refused.code, 2);
    let doc: liveproof_report::ErrorReport =
        serde_norway::from_str(&clap_refused.stdout).expect("one YAML error document");
    assert_eq!(doc.error.message, "unexpected argument '--bogus' found");

    // Text and names: the stderr line is the answer; stdout stays empty for a shell reading it.
    for format in ["text", "name"] {
        let run = refused(format).await;
        assert_eq!(run.code, 2);
        assert!(run.stdout.is_empty(), "{format}: {}", run.stdout);
        assert!(run.stderr.starts_with("error: --since"), "{}", run.stderr);
    }
}

/// `-o yaml` is the `-o json` report in YAML (the same model, `liveproof/v1`), and `-o name`
/// kubectl's list of objects, a GitOps target then the workloads reached through it, with the
/// verdict in the exit code only.
#[tokio::test]
async fn yaml_is_the_json_report_and_name_lists_the_objects() {
    let dump = story("flux-chartversion-not-bumped");
    let verify = |format: &'static str| {
        let dump = dump.clone();
        async move {
            liveproof()
                .args(&["verify", "hr/inventory", "-n", "apps", "--from"])
                .args(&[dump.to_str().expect("utf-8")])
                .since("2026-07-12T10:00:00Z")
                .args(&["--expect", "secretKeyRef", "-o", format])
                .run()
                .await
        }
    };
    // When it was made is read to the second, and the runs are two.
    let timeless = |mut doc: serde_json::Value| {
        doc.as_object_mut()
            .expect("a document")
            .remove("generated_at");
        doc
    };
    let json = verify("json").await;
    let yaml = verify("yaml").await;
    assert_eq!(yaml.code, json.code, "{}", yaml.stderr);
    assert!(
        !yaml.stdout.trim_start().starts_with('{'),
        "{}",
        yaml.stdout
    );
    let from_yaml: serde_json::Value =
        serde_norway::from_str(&yaml.stdout).expect("one YAML document");
    let from_json: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(timeless(from_yaml), timeless(from_json));

    let name = verify("name").await;
    assert_eq!(name.code, json.code, "the verdict is the exit code");
    assert_eq!(
        name.stdout, "helmrelease.helm.toolkit.fluxcd.io/inventory\ndeployment.apps/inventory\n",
        "{}",
        name.stderr
    );
}

/// Commands with a JSON output of their own answer their errors with the same document.
#[tokio::test]
async fn stale_json_answers_an_error_with_the_error_document() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("no-kubeconfig");
    let run = liveproof()
        .args(&["stale", "deploy/inventory"])
        .kubeconfig(&missing)
        .json()
        .run()
        .await;
    let doc = run.error_document();
    assert!(
        doc.error.message.contains("no-kubeconfig"),
        "names the kubeconfig: {doc:?}"
    );
}

/// A `--version-url` reading says where it was read as data too: kind `URL`, no apiVersion,
/// the URL as shown (never its password or query) and the JSON path read. Nothing listens on
/// port 1, so the reading is `unknown`; where it was tried is what matters here.
#[tokio::test]
async fn a_version_url_source_is_a_url_without_its_secrets() {
    let dump = story("gitops-reconciled-new-tag-rolled-out");
    let run = liveproof()
        .args(&[
            "verify",
            "deploy/inventory",
            "-n",
            "apps",
            "--from",
            dump.to_str().expect("utf-8"),
        ])
        .since("2026-07-12T10:00:00Z")
        .args(&[
            "--version-url",
            "http://deploy:hunter2@127.0.0.1:1/version?token=s3cret",
            "--expect-version",
            "1.4.0",
            "--version-json",
            ".version",
        ])
        .json()
        .run()
        .await;
    assert_eq!(run.source_ref_problems(), Vec::<String>::new());
    for secret in ["hunter2", "s3cret"] {
        assert!(!run.stdout.contains(secret), "{}", run.stdout);
    }
    let report = run.report();
    let server = report
        .targets
        .iter()
        .find(|t| t.kind == "Server")
        .expect("a Server target");
    let source = &server.evidence[0].source_ref;
    assert_eq!(
        (
            source.api_version.as_str(),
            source.kind.as_str(),
            source.namespace.as_str(),
            source.field.as_str()
        ),
        ("", "URL", "", ".version")
    );
    assert_eq!(source.name, server.name, "the URL as the target names it");
}

/// `-o` offers each command the formats its result is drawn in: any other is refused as the
/// arguments are parsed (exit 2, the ones it takes named), never drawn as another format.
#[tokio::test]
async fn a_format_a_command_cannot_draw_is_refused_naming_the_ones_it_can() {
    for (args, allowed) in [
        (&["stale", "-o", "markdown"][..], "text, json"),
        (&["lint", "-o", "junit"], "text, json, sarif"),
        (&["demo", "-o", "sarif"], "text, json, markdown"),
        (
            &["verify", "deploy/inventory", "-o", "sarif"],
            "text, wide, json, yaml, name, markdown, html, junit, jsonpath, custom-columns",
        ),
    ] {
        let run = liveproof().args(args).run().await;
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("[possible values: {allowed}]")),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
}

/// A Job or hook has only the exit code: `--superseded-ok` turns a superseded verdict's 4 into
/// 0, the report still says superseded and stderr names what replaced the change; any other
/// verdict keeps its code.
#[test]
fn superseded_ok_passes_a_superseded_change_and_nothing_else() {
    let superseded = "deployment-set-image-twice-superseded";
    let plain = liveproof()
        .story(superseded)
        .offline()
        .json()
        .run_blocking();
    assert_eq!(plain.code, 4, "{}", plain.stderr);
    let ok = liveproof()
        .story(superseded)
        .offline()
        .json()
        .arg("--superseded-ok")
        .run_blocking();
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_eq!(ok.report().verdict, liveproof_evidence::Verdict::Superseded);
    assert!(
        ok.stderr
            .contains("notice: superseded by revision apps/inventory-6c8dq9zr2m")
            && ok.stderr.contains("nothing to roll back"),
        "{}",
        ok.stderr
    );
    let not_live = liveproof()
        .story("new-pod-crashloopbackoff-old-pods-serving")
        .offline()
        .arg("--superseded-ok")
        .run_blocking();
    assert_eq!(not_live.code, 1, "{}", not_live.stderr);
    assert!(!not_live.stderr.contains("notice:"), "{}", not_live.stderr);
}
