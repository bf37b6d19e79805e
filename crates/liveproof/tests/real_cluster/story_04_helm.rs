use liveproof_evidence::{Check, Status, Verdict};
use liveproof_testkit::binary as common;
use liveproof_testkit::e2e::world::{change_time, evidence, World};
use liveproof_testkit::registry::push_multiarch;

use crate::{chart, helm, wait_rolled_out};

/// `liveproof release show` and the real `helm get`/`helm history` say the same of a release.
async fn assert_show_agrees(world: &World, which: &str, driver: &str, ns: &str, name: &str) {
    let show = |section: &'static str| async move {
        let mut args = vec!["release", "show", name, "-n", ns, section];
        if section == "--values" {
            args.push("--show-values");
        }
        let run = common::liveproof().args(&args).on(&world).run().await;
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        run.stdout
    };
    let ours = show("--manifest").await;
    let theirs = helm(world, which, driver, &["get", "manifest", name, "-n", ns]);
    assert_eq!(ours.trim(), theirs.trim(), "{which} {driver}: manifest");

    // As `helm get values` prints them: its heading, the same values, and `"on"` quoted (a
    // bare `on` is a bool to Helm's YAML 1.1 reader). Quoting elsewhere may differ.
    let ours = show("--values").await;
    let theirs = helm(world, which, driver, &["get", "values", name, "-n", ns]);
    for text in [&ours, &theirs] {
        assert!(text.starts_with("USER-SUPPLIED VALUES:\n"), "{text}");
    }
    assert_eq!(
        ours.contains("feature: \"on\"\n"),
        theirs.contains("feature: \"on\"\n"),
        "{ours}\n{theirs}"
    );
    let parse = |text: &str| -> serde_json::Value { serde_norway::from_str(text).expect("YAML") };
    assert_eq!(
        parse(&ours["USER-SUPPLIED VALUES:\n".len()..]),
        parse(&theirs["USER-SUPPLIED VALUES:\n".len()..]),
        "{which} {driver}: values"
    );

    let metadata = show("--metadata").await;
    let theirs: serde_json::Value = serde_json::from_str(&helm(
        world,
        which,
        driver,
        &["get", "metadata", name, "-n", ns, "-o", "json"],
    ))
    .expect("JSON");
    for (ours_key, theirs_key) in [
        ("NAME", "name"),
        ("CHART", "chart"),
        ("VERSION", "version"),
        ("APP_VERSION", "appVersion"),
        ("NAMESPACE", "namespace"),
        ("REVISION", "revision"),
        ("STATUS", "status"),
    ] {
        let want = match &theirs[theirs_key] {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        assert!(
            metadata.lines().any(|l| l == format!("{ours_key}: {want}")),
            "{which} {driver}: {ours_key} is {want} for helm:\n{metadata}\n{theirs}"
        );
    }

    let history = show("--history").await;
    let theirs: serde_json::Value = serde_json::from_str(&helm(
        world,
        which,
        driver,
        &["history", name, "-n", ns, "-o", "json"],
    ))
    .expect("JSON");
    let rows: Vec<&str> = history.lines().skip(1).collect();
    let revisions = theirs.as_array().expect("history rows");
    assert_eq!(
        rows.len(),
        revisions.len(),
        "{which} {driver}: history\n{history}\n{theirs}"
    );
    for (row, rev) in rows.iter().zip(revisions) {
        for field in ["revision", "status", "chart", "description"] {
            let want = match &rev[field] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            assert!(
                row.contains(&want),
                "{which} {driver}: history {field} {want}: {row}"
            );
        }
    }
}

/// Story 4: Helm for real. Install, then an upgrade with a template change: release_revision,
/// manifest_contains and the workload follow-through are read from Helm's own release Secret,
/// and `--wait` ends live once the real controller has rolled the pods. An upgrade that changes
/// nothing in the template is a new revision with nothing restarted: not_live, the pods named.
/// `helm rollback` is seen (the expectation is gone from the installed manifest). `release
/// show` agrees with `helm get` and `helm history` throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_4_helm_install_upgrade_noop_and_rollback() {
    let world = World::start().await;
    let pusher = world.registry.pusher();
    push_multiarch(&pusher, "acme/web", "v1", "build-1").await;
    let image = format!("image={}/acme/web:v1", world.registry.host);
    let chart = chart();
    let h = |args: &[&str]| helm(&world, "helm", "secret", args);
    h(&[
        "install",
        "web",
        &chart,
        "-n",
        "apps",
        "--create-namespace",
        "--set",
        &image,
    ]);
    wait_rolled_out(&world, "apps", "web").await;

    let since = change_time().await;
    h(&[
        "upgrade",
        "web",
        &chart,
        "-n",
        "apps",
        "--set",
        &image,
        "--set",
        "feature=on",
    ]);
    let live = common::liveproof()
        .args(&["verify", "release/web", "-n", "apps"])
        .since(&since)
        .args(&["--expect", "name: FEATURE", "--wait", "--timeout", "90s"])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(live.code, 0, "{}\n{}", live.stdout, live.stderr);
    let report = live.report();
    let release = &report.targets[0];
    assert_eq!(release.kind, "Release");
    let revision = release
        .evidence
        .iter()
        .find(|e| e.check == Check::ReleaseRevision)
        .expect("release_revision");
    assert_eq!(revision.status, Status::Pass);
    assert_eq!(
        revision.source(),
        "apps/Secret/sh.helm.release.v1.web.v2 .info"
    );
    let workload = report
        .targets
        .iter()
        .find(|t| t.kind == "Deployment" && t.name == "web")
        .expect("the follow-through");
    assert_eq!(workload.via.as_deref(), Some("release/apps/web"));
    assert_eq!(workload.verdict, Verdict::Live);
    assert_show_agrees(&world, "helm", "secret", "apps", "web").await;

    // The same values again: revision 3, the template unchanged, no pod restarted.
    let since = change_time().await;
    h(&[
        "upgrade",
        "web",
        &chart,
        "-n",
        "apps",
        "--set",
        &image,
        "--set",
        "feature=on",
    ]);
    let noop = common::liveproof()
        .args(&["verify", "release/web", "-n", "apps"])
        .since(&since)
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(noop.code, 1, "{}\n{}", noop.stdout, noop.stderr);
    let restarted = evidence(&noop, Check::PodRestarted);
    assert_eq!(restarted.status, Status::Fail, "{restarted:?}");
    assert!(
        (
            restarted.source_ref.kind.as_str(),
            restarted.source_ref.namespace.as_str()
        ) == ("Pod", "apps")
            && restarted.source_ref.name.starts_with("web-"),
        "{restarted:?}"
    );

    // Rolled back to revision 1 (no FEATURE): revision 4, and the expectation is gone.
    let since = change_time().await;
    h(&["rollback", "web", "1", "-n", "apps"]);
    let rolled = common::liveproof()
        .args(&["verify", "release/web", "-n", "apps"])
        .since(&since)
        .args(&["--expect", "name: FEATURE"])
        .json()
        .on(&world)
        .run()
        .await;
    assert_eq!(rolled.code, 1, "{}\n{}", rolled.stdout, rolled.stderr);
    let manifest = evidence(&rolled, Check::ManifestContains);
    assert_eq!(manifest.status, Status::Fail, "{manifest:?}");
    assert_eq!(
        manifest.source_ref.name, "sh.helm.release.v1.web.v4",
        "{manifest:?}"
    );
    let history = common::liveproof()
        .args(&["release", "show", "web", "-n", "apps", "--history"])
        .on(&world)
        .run()
        .await;
    assert!(
        history.stdout.contains("Rollback to 1"),
        "{}",
        history.stdout
    );
    assert_show_agrees(&world, "helm", "secret", "apps", "web").await;
}

/// Story 4, storage: `release show` agrees with `helm get` and `helm history` for the
/// ConfigMap driver, and for Helm 3 with both drivers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_4_release_show_agrees_with_helm_for_every_driver_and_version() {
    let world = World::start().await;
    let image = format!("image={}/acme/web:v1", world.registry.host);
    let chart = chart();
    for (which, driver, ns) in [
        ("helm", "configmap", "h4-configmap"),
        ("helm3", "secret", "h3-secret"),
        ("helm3", "configmap", "h3-configmap"),
    ] {
        helm(
            &world,
            which,
            driver,
            &[
                "install",
                "web",
                &chart,
                "-n",
                ns,
                "--create-namespace",
                "--set",
                &image,
            ],
        );
        helm(
            &world,
            which,
            driver,
            &[
                "upgrade",
                "web",
                &chart,
                "-n",
                ns,
                "--set",
                &image,
                "--set",
                "feature=on",
            ],
        );
        assert_show_agrees(&world, which, driver, ns, "web").await;
    }
}
