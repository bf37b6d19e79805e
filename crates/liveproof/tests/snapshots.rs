//! What a person reads: the text report for a few stories, snapshotted so a change to the
//! wording or layout is a reviewed change. Times are the fixtures' own, so nothing to filter.

mod common;

async fn text_of(story: &str, extra: &[&str]) -> String {
    let dir = common::scenarios_dir().join(story);
    let story_yaml: serde_norway::Value =
        serde_norway::from_str(&std::fs::read_to_string(dir.join("story.yaml")).expect("story"))
            .expect("yaml");
    let mut args: Vec<String> = vec!["verify".into()];
    args.extend(
        story_yaml["args"]
            .as_sequence()
            .expect("args")
            .iter()
            .filter_map(|a| a.as_str().map(str::to_string)),
    );
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("--from".into());
    args.push(dir.join("cluster.yaml").to_string_lossy().into_owned());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = common::liveproof(&refs).await;
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
