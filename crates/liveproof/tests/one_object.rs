//! One object, one verdict, in every format: a Deployment given directly and reached through
//! a HelmRelease and through the release it installs is shown once in text, JSON, Markdown,
//! JUnit and `-o name`, with one verdict (the corpus stories `helmrelease-and-*` judge it).

use liveproof_testkit::binary as common;

use common::liveproof;
use liveproof_testkit::story::scenarios_dir;

/// `verify` of the seed-002 fix with the Deployment reached three ways, in `format`.
async fn verify(format: &str) -> String {
    let dump = scenarios_dir()
        .join("flux-chartversion-bumped-v35-live")
        .join("cluster.yaml");
    let run = liveproof()
        .args(&[
            "verify",
            "deploy/inventory",
            "hr/inventory",
            "release/inventory",
            "-n",
            "apps",
            "--from",
        ])
        .args(&[dump.to_str().expect("utf-8")])
        .since("2026-07-12T10:00:00Z")
        .args(&["--expect", "secretKeyRef", "-o", format])
        .run()
        .await;
    assert_eq!(run.code, 0, "live: {}\n{}", run.stdout, run.stderr);
    run.stdout
}

#[tokio::test]
async fn an_object_reached_three_ways_is_shown_once_in_every_format() {
    let json: serde_json::Value = serde_json::from_str(&verify("json").await).expect("JSON");
    let deployments: Vec<&serde_json::Value> = json["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .filter(|t| t["kind"] == "Deployment")
        .collect();
    assert_eq!(deployments.len(), 1, "{json:#}");
    assert_eq!(deployments[0]["verdict"], "live");
    assert_eq!(
        deployments[0]["via"], "helmrelease/apps/inventory, release/apps/inventory",
        "reached through both, named in the one field that says so"
    );

    let text = verify("text").await;
    // One summary line and one evidence section.
    assert_eq!(
        text.matches("Deployment apps/inventory (via").count(),
        2,
        "{text}"
    );
    let markdown = verify("markdown").await;
    assert_eq!(
        markdown
            .matches("<summary>✅ Deployment apps/inventory")
            .count(),
        1,
        "{markdown}"
    );
    let junit = verify("junit").await;
    assert_eq!(
        junit
            .matches("<testsuite name=\"Deployment apps/inventory")
            .count(),
        1,
        "{junit}"
    );
    let name = verify("name").await;
    assert_eq!(
        name,
        "helmrelease.helm.toolkit.fluxcd.io/inventory\ndeployment.apps/inventory\nrelease/inventory\n"
    );
}
