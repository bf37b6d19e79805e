//! What a person reads: the text report for a few stories, snapshotted so a change to the
//! wording or layout is a reviewed change. Times are the fixtures' own, so nothing to filter.

use liveproof_testkit::binary as common;

async fn text_of(story: &str, extra: &[&str]) -> String {
    let run = common::liveproof()
        .story(story)
        .offline()
        .args(extra)
        .run()
        .await;
    format!("exit {}\n{}", run.code, run.stdout)
}

#[tokio::test]
async fn seed_000_never_reconciled() {
    insta::assert_snapshot!(text_of("gitops-never-reconciled-template-on-old-tag", &[]).await);
}

#[tokio::test]
async fn rolling_update_halfway() {
    insta::assert_snapshot!(text_of("rolling-update-halfway-old-pods-still-ready", &[]).await);
}

#[tokio::test]
async fn no_change_time_is_unproven() {
    insta::assert_snapshot!(text_of("no-change-time-given-rollout-done", &[]).await);
}

#[tokio::test]
async fn markdown_for_a_ci_summary() {
    insta::assert_snapshot!(
        text_of("old-pod-terminating-still-running", &["-o", "markdown"]).await
    );
}

/// Every usage error as the user reads it (exit code and stderr), one snapshot: a flag named,
/// what was wrong, and a hint that fixes it. All offline, so nothing but the input varies.
#[tokio::test]
async fn usage_errors_as_rendered() {
    let dir = liveproof_testkit::story::scenarios_dir().join("no-change-time-given-rollout-done");
    let from = dir.join("cluster.yaml").to_string_lossy().into_owned();
    let verify = |extra: &[&str]| -> Vec<String> {
        ["verify"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .chain(["--from".to_string(), from.clone()])
            .collect()
    };
    let cases: Vec<Vec<String>> = vec![
        verify(&["deploy"]),
        verify(&["pod/api-7d9c"]),
        verify(&["deplyment/api"]),
        verify(&["deploy/api", "--since", "yesterday"]),
        verify(&["deploy/api", "--commit", "not-hex"]),
        // --wait reads a cluster: checked before connecting to one.
        vec![
            "verify".into(),
            "deploy/api".into(),
            "--wait".into(),
            "--kubeconfig".into(),
            "/nonexistent/kubeconfig".into(),
        ],
        vec![
            "verify".into(),
            "deploy/api".into(),
            "--since".into(),
            "1h".into(),
            "--wait".into(),
            "--timeout".into(),
            "5x".into(),
            "--kubeconfig".into(),
            "/nonexistent/kubeconfig".into(),
        ],
        verify(&["deploy/api", "--image", "Not An Image"]),
        verify(&["deploy/api", "--expect", "re:("]),
        verify(&["deploy/api", "--chart-version", "1.2.0"]),
        verify(&["deploy/api", "--report", "out.pdf"]),
        verify(&["deploy/api", "--request-timeout", "5x"]),
        verify(&[
            "deploy/api",
            "--version-url",
            "ftp://shop.example/version",
            "--expect-version",
            "1.4.0",
        ]),
        verify(&[
            "deploy/api",
            "--version-url",
            "https://shop.example/version",
            "--expect-version",
            "1",
            "--expect-version",
            "2",
            "--expect-version",
            "3",
        ]),
        vec![
            "verify".into(),
            "deploy/api".into(),
            "--from".into(),
            "/nonexistent/dump.yaml".into(),
        ],
        vec![
            "release".into(),
            "show".into(),
            "web".into(),
            "--show-values".into(),
        ],
    ];
    let mut rendered = String::new();
    for args in cases {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = common::liveproof().args(&refs).run().await;
        assert_eq!(run.code, 2, "{args:?} is a usage error: {}", run.stderr);
        assert!(
            run.stdout.is_empty(),
            "{args:?} printed a report: {}",
            run.stdout
        );
        rendered.push_str(&format!("$ liveproof {}\n{}\n", args.join(" "), run.stderr));
    }
    let pattern = common::literal_pattern(&from);
    insta::with_settings!({filters => vec![(pattern.as_str(), "[FROM]")]}, {
        insta::assert_snapshot!(rendered);
    });
}
