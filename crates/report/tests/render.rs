//! Every format drawn from the same realistic reports, snapshotted, plus the properties each
//! format promises (JSON round-trips, JUnit counts and escaping, Markdown cells, colour).

use liveproof_evidence::suggestion::Command;
use liveproof_evidence::ResourceKind::{
    self, Deployment, HelmRelease, Pod, ReplicaSet, Secret, StatefulSet,
};
use liveproof_evidence::{
    ChangeSummary, Check, Evidence, Report, SourceRef, Status, SupersededBy, TargetReport, Verdict,
};
use liveproof_report::{Format, Outcome, Render, TextStyle};

// ---------------------------------------------------------------------------------------------
// Reports that tell the stories liveproof exists for.

fn evidence(
    check: Check,
    status: Status,
    observed: &str,
    expected: &str,
    source_ref: SourceRef,
    detail: &str,
) -> Evidence {
    Evidence {
        check,
        status,
        observed: observed.to_string(),
        expected: expected.to_string(),
        source_ref,
        detail: detail.to_string(),
    }
}

fn object(kind: ResourceKind, namespace: &str, name: &str) -> SourceRef {
    SourceRef::object(kind, namespace, name)
}

/// A source no renderer has to take apart: shown as written (the kind of a URL).
fn shown_as(text: &str) -> SourceRef {
    SourceRef {
        api_version: String::new(),
        kind: SourceRef::URL.to_string(),
        namespace: String::new(),
        name: text.to_string(),
        field: String::new(),
    }
}

/// No source at all: a renderer shows none.
fn nowhere() -> SourceRef {
    SourceRef {
        kind: String::new(),
        ..shown_as("")
    }
}

fn target(
    kind: &str,
    namespace: &str,
    name: &str,
    verdict: Verdict,
    evidence: Vec<Evidence>,
    next_step: Option<&str>,
) -> TargetReport {
    TargetReport {
        kind: liveproof_evidence::ReportKind::from_name(kind).expect("a kind a report names"),
        namespace: namespace.to_string(),
        name: name.to_string(),
        verdict,
        evidence,
        next_step: next_step.map(Into::into),
        via: None,
        diagnostics: Vec::new(),
        live_since: None,
        live_since_unknown: None,
        timeline: Vec::new(),
        superseded_by: None,
        pods: Default::default(),
    }
}

fn change(since: Option<&str>, commit: Option<&str>) -> ChangeSummary {
    ChangeSummary {
        since: since.map(str::to_string),
        commit: commit.map(str::to_string),
        committed_at: None,
    }
}

/// Merged on the 12th, but the pods still run what they read on the 8th; the registry would
/// not say which digest the tag points at now.
fn inventory_never_restarted() -> TargetReport {
    // The step as the checks build it: a command (which Markdown sets in a code block), then
    // words.
    let step = liveproof_evidence::Suggestion::run(Command::kubectl([
        "-n",
        "apps",
        "rollout",
        "restart",
        "deployment/inventory",
    ]))
    .then(", then run liveproof verify again");
    let target = target(
        "Deployment",
        "apps",
        "inventory",
        Verdict::NotLive,
        vec![
            evidence(
                Check::SpecReadback,
                Status::Pass,
                "image registry.example.com/shop/inventory:1.8.0",
                "registry.example.com/shop/inventory:1.8.0",
                object(Deployment, "apps", "inventory").field(".spec.template.spec.containers[app].image"),
                "the pod template carries the expected image",
            ),
            evidence(
                Check::ObservedGeneration,
                Status::Pass,
                "observedGeneration 7",
                "at least generation 7",
                object(Deployment, "apps", "inventory").field(".status.observedGeneration"),
                "the deployment controller has processed the current spec",
            ),
            evidence(
                Check::PodRestarted,
                Status::Fail,
                "started 2026-07-08T14:22:31Z",
                "after 2026-07-12T10:00:00Z",
                object(Pod, "apps", "inventory-7d9c-x2k4")
                    .field(".status.containerStatuses[app].state.running.startedAt"),
                "this pod runs configuration read before the change",
            ),
            evidence(
                Check::ImageDigestCurrent,
                Status::Unknown,
                "tag registry.example.com/shop/inventory:1.8.0 could not be resolved",
                "the running digest sha256:4be1c0a9 to be what the tag resolves to for linux/amd64",
                shown_as("registry.example.com/shop/inventory:1.8.0").field("manifest list"),
                "the registry answered 401 Unauthorized for the manifest list; give liveproof registry \
                 credentials (docker config or --registry-auth) and verify again, or pin the image by \
                 digest",
            ),
            evidence(
                Check::PodsCurrent,
                Status::Pass,
                "3 of 3 ready pods from ReplicaSet inventory-7d9c (revision 4)",
                "all from the current template revision 4",
                object(ReplicaSet, "apps", "inventory-7d9c")
                    .field(".metadata.annotations[deployment.kubernetes.io/revision]"),
                "every serving pod belongs to the current template",
            ),
            evidence(
                Check::ServerVersion,
                Status::Skip,
                "",
                "",
                nowhere(),
                "no --version-url given",
            ),
        ],
        None,
    );
    TargetReport {
        next_step: Some(step),
        ..target
    }
}

fn inventory_not_live() -> Report {
    Report::new(
        change(Some("2026-07-12T10:00:00Z"), Some("3f2c1ab")),
        vec![inventory_never_restarted()],
    )
}

fn inventory_restarted() -> TargetReport {
    target(
        "Deployment",
        "apps",
        "inventory",
        Verdict::Live,
        vec![
            evidence(
                Check::SpecReadback,
                Status::Pass,
                "image registry.example.com/shop/inventory:1.8.0",
                "registry.example.com/shop/inventory:1.8.0",
                object(Deployment, "apps", "inventory")
                    .field(".spec.template.spec.containers[app].image"),
                "the pod template carries the expected image",
            ),
            evidence(
                Check::RolloutComplete,
                Status::Pass,
                "3 updated, 3 available of 3",
                "3 of 3",
                object(Deployment, "apps", "inventory").field(".status"),
                "the rollout finished",
            ),
            evidence(
                Check::PodsCurrent,
                Status::Pass,
                "3 of 3 ready pods from ReplicaSet inventory-5f6b (revision 5)",
                "all from the current template revision 5",
                object(ReplicaSet, "apps", "inventory-5f6b")
                    .field(".metadata.annotations[deployment.kubernetes.io/revision]"),
                "every serving pod belongs to the current template",
            ),
            evidence(
                Check::PodRestarted,
                Status::Pass,
                "oldest container started 2026-07-12T10:04:12Z",
                "after 2026-07-12T10:00:00Z",
                object(Pod, "apps", "inventory-5f6b-8q2tz")
                    .field(".status.containerStatuses[app].state.running.startedAt"),
                "every serving pod started after the change",
            ),
            evidence(
                Check::ImageDigestCurrent,
                Status::Pass,
                "sha256:9e0f7a1c on all 3 pods",
                "sha256:9e0f7a1c (tag 1.8.0, linux/amd64)",
                object(Pod, "apps", "inventory-5f6b-8q2tz")
                    .field(".status.containerStatuses[app].imageID"),
                "the pods run what the tag resolves to now",
            ),
        ],
        None,
    )
}

fn inventory_live() -> Report {
    Report::new(
        change(Some("2026-07-12T10:00:00Z"), Some("3f2c1ab")),
        vec![inventory_restarted()],
    )
}

/// A Flux HelmRelease followed through to its workloads: the chart was never bumped, so the
/// release still carries the old version; the deployment it names is fine; the cache's pods
/// could not be read.
fn shop_release_multi_target() -> Report {
    let release = target(
        "HelmRelease",
        "flux-system",
        "shop",
        Verdict::NotLive,
        vec![
            evidence(
                Check::GitopsRevision,
                Status::Pass,
                "lastAttemptedRevision 3f2c1ab",
                "commit 3f2c1ab",
                object(HelmRelease, "flux-system", "shop").field(".status.lastAttemptedRevision"),
                "Flux attempted the change's commit",
            ),
            evidence(
                Check::ConditionFresh,
                Status::Fail,
                "Ready=True since 2026-07-03T08:11:00Z",
                "a transition after 2026-07-12T10:00:00Z",
                object(HelmRelease, "flux-system", "shop")
                    .field(".status.conditions[Ready].lastTransitionTime"),
                "the Ready condition describes the deploy of 2026-07-03, not this change",
            ),
            evidence(
                Check::ReleaseVersion,
                Status::Fail,
                "chart shop-2.3.0",
                "chart shop-2.4.0",
                object(Secret, "apps", "sh.helm.release.v1.shop.v12").field(".data.release"),
                "the chart version was not bumped, so the ChartVersion reconcile strategy saw \
                 nothing new; bump version in Chart.yaml",
            ),
            evidence(
                Check::ManifestContains,
                Status::Pass,
                "found FEATURE_CHECKOUT_V2|enabled",
                "FEATURE_CHECKOUT_V2|enabled",
                object(Secret, "apps", "sh.helm.release.v1.shop.v12").field(".data.release manifest"),
                "the installed manifest contains the expectation",
            ),
        ],
        Some("bump the chart version in charts/shop/Chart.yaml (ChartVersion strategy), merge, then verify again"),
    );
    let cache = target(
        "StatefulSet",
        "apps",
        "shop-cache",
        Verdict::Unproven,
        vec![
            evidence(
                Check::ObservedGeneration,
                Status::Pass,
                "observedGeneration 3",
                "at least generation 3",
                object(StatefulSet, "apps", "shop-cache").field(".status.observedGeneration"),
                "the controller has processed the current spec",
            ),
            evidence(
                Check::PodsCurrent,
                Status::Unknown,
                "pods could not be listed",
                "all from revision shop-cache-6c8d9",
                SourceRef::objects(Pod, "apps").field("list"),
                "RBAC denied list pods in apps (pods is forbidden for system:serviceaccount:ci:verify);\n\
                 grant get/list on pods in apps to the verifying identity",
            ),
            evidence(
                Check::PodRestarted,
                Status::Unknown,
                "",
                "after 2026-07-12T10:00:00Z",
                SourceRef::objects(Pod, "apps").field("list"),
                "pods could not be read, so their start times are unknown",
            ),
        ],
        Some("grant get/list on pods in namespace apps to system:serviceaccount:ci:verify, then verify again"),
    );
    // Reached through the HelmRelease: the renderers say so.
    let cache = TargetReport {
        via: Some("helmrelease/flux-system/shop".to_string()),
        ..cache
    };
    Report::new(
        change(Some("2026-07-12T10:00:00Z"), Some("3f2c1ab")),
        vec![release, inventory_restarted(), cache],
    )
}

/// No change time: nothing can be live, whatever the status fields say.
fn no_change_time() -> Report {
    Report::new(
        change(None, Some("3f2c1ab")),
        vec![target(
            "Deployment",
            "apps",
            "inventory",
            Verdict::Unproven,
            vec![
                evidence(
                    Check::RolloutComplete,
                    Status::Pass,
                    "3 updated, 3 available of 3",
                    "3 of 3",
                    object(Deployment, "apps", "inventory").field(".status"),
                    "the rollout finished",
                ),
                evidence(
                    Check::PodRestarted,
                    Status::Skip,
                    "",
                    "",
                    nowhere(),
                    "no change time: pass --since or --commit with --repo",
                ),
            ],
            Some("give the change time with --since 2026-07-12T10:00:00Z, or --commit with --repo"),
        )],
    )
}

/// What replaced web's 1.4.0: a ReplicaSet made an hour later, running 1.5.0, live itself.
fn web_1_5_0() -> SupersededBy {
    SupersededBy {
        summary: "ReplicaSet apps/web-6c8d (revision 3), created after the one that carried the \
                  change, serves every pod now"
            .into(),
        revision: Some("apps/web-6c8d".into()),
        commit: None,
        images: vec!["ghcr.io/acme/web:1.5.0".into()],
        at: Some("2026-07-12T11:00:00Z".into()),
        live: Some(true),
        source_ref: Some(
            object(ReplicaSet, "apps", "web-6c8d").field(".metadata.creationTimestamp"),
        ),
    }
}

/// web's change (1.4.0) was rolled out, then replaced by 1.5.0 an hour later: superseded,
/// nothing to roll back; inventory beside it is live.
fn web_superseded() -> Report {
    let by = web_1_5_0();
    let step = liveproof_evidence::superseded_step(
        liveproof_evidence::TargetKind::Deployment,
        "apps",
        "web",
        &by,
    );
    let web = TargetReport {
        next_step: Some(step),
        superseded_by: Some(by),
        ..target(
            "Deployment",
            "apps",
            "web",
            Verdict::Superseded,
            vec![
                evidence(
                    Check::SpecReadback,
                    Status::Fail,
                    "image ghcr.io/acme/web:1.5.0",
                    "ghcr.io/acme/web:1.4.0",
                    object(Deployment, "apps", "web")
                        .field(".spec.template.spec.containers[app].image"),
                    "the pod template runs another image than the change's",
                ),
                evidence(
                    Check::PodsCurrent,
                    Status::Pass,
                    "3 of 3 from revision web-6c8d",
                    "all from revision web-6c8d",
                    SourceRef::objects(Pod, "apps"),
                    "every serving pod is of the current revision",
                ),
                evidence(
                    Check::PodRestarted,
                    Status::Pass,
                    "started 2026-07-12T11:01:12Z (and 2 more container(s))",
                    "after 2026-07-12T10:00:00Z",
                    SourceRef::objects(Pod, "apps")
                        .field(".status.containerStatuses[*].state.running.startedAt"),
                    "every serving container started after the change",
                ),
            ],
            None,
        )
    };
    Report::new(
        change(Some("2026-07-12T10:00:00Z"), Some("3f2c1ab")),
        vec![web, inventory_restarted()],
    )
}

/// Strings a cluster should never contain, but a renderer must survive.
fn hostile() -> Report {
    Report::new(
        change(Some("2026-07-12T10:00:00Z"), None),
        vec![target(
            "Deployment",
            "apps",
            "<script>&\"'",
            Verdict::NotLive,
            vec![
                evidence(
                    Check::ServerVersion,
                    Status::Fail,
                    "body <script>alert('x')</script> & \"quoted\" \u{1}\x1b[2J",
                    "a | b\nc",
                    shown_as("GET https://inventory.example.com/version?a=1&b=<2>"),
                    "the server reported <script>&\"' \u{1} instead | of 1.8.0",
                ),
                evidence(
                    Check::PodSpec,
                    Status::Unknown,
                    "\u{1}",
                    "env FEATURE_X present",
                    object(Pod, "apps", "x `weird`"),
                    "controls \u{0}\u{8}\u{b}\u{c}\u{1f}\u{fffe} end",
                ),
                evidence(Check::PodsCurrent, Status::Skip, "", "", nowhere(), ""),
                evidence(
                    Check::SpecReadback,
                    Status::Pass,
                    "ok",
                    "ok",
                    shown_as("src"),
                    "fine",
                ),
            ],
            Some("fix <it> & 'verify'"),
        )],
    )
}

// ---------------------------------------------------------------------------------------------

fn rendered(report: &Report, format: Format, style: TextStyle) -> String {
    let mut out = Vec::new();
    // The two formats that take a template are drawn with one a pipeline would write.
    let template = match format {
        Format::JsonPath => {
            Some(r#"{.verdict}{"\n"}{range .targets[*]}{.kind}/{.name}{"\t"}{.verdict}{"\n"}{end}"#)
        }
        Format::CustomColumns => Some("KIND:.kind,NAME:.name,VERDICT:.verdict,VIA:.via"),
        _ => None,
    };
    let output = liveproof_report::Output::new(format, template).expect("a valid template");
    report
        .render_output(&output, style, &mut out)
        .expect("rendering to a Vec cannot fail");
    String::from_utf8(out).expect("renderers write UTF-8")
}

fn reports() -> Vec<(&'static str, Report)> {
    vec![
        ("inventory_not_live", inventory_not_live()),
        ("inventory_live", inventory_live()),
        ("shop_release_multi_target", shop_release_multi_target()),
        ("no_change_time", no_change_time()),
        ("web_superseded", web_superseded()),
    ]
}

#[test]
fn snapshots_of_every_format() {
    for (story, report) in reports() {
        for format in <Report as Render>::FORMATS.iter().copied() {
            let output = rendered(&report, format, TextStyle::plain());
            insta::assert_snapshot!(format!("{story}.{format}"), output);
        }
    }
}

#[test]
fn snapshot_of_coloured_text() {
    let output = rendered(&inventory_not_live(), Format::Text, TextStyle::colored());
    // Escape sequences shown visibly so the snapshot is reviewable.
    insta::assert_snapshot!(output.replace('\x1b', "\\e"));
}

#[test]
fn text_fits_the_width_it_is_given() {
    for (story, report) in reports().into_iter().chain([("hostile", hostile())]) {
        for width in [80, 60] {
            let output = rendered(&report, Format::Text, TextStyle::plain().with_width(width));
            for line in output.lines() {
                assert!(
                    line.chars().count() <= width,
                    "{story} at {width} columns: a line of {}:\n{line}",
                    line.chars().count()
                );
            }
        }
        // Nothing is dropped to fit: every word of the 100-column report is still there.
        let wide = rendered(&report, Format::Text, TextStyle::plain());
        let narrow = rendered(&report, Format::Text, TextStyle::plain().with_width(80));
        let letters = |s: &str| s.chars().filter(|c| !c.is_whitespace()).count();
        assert_eq!(letters(&wide), letters(&narrow), "{story}");
    }
    // Narrower than the table can be drawn: wrapped at the minimum, not broken.
    assert_eq!(
        TextStyle::plain().with_width(20).width,
        TextStyle::MIN_WIDTH
    );
}

#[test]
fn text_opens_with_one_line_per_target_naming_what_failed() {
    let output = rendered(
        &shop_release_multi_target(),
        Format::Text,
        TextStyle::plain(),
    );
    let first_evidence = output.find("  ✓ ").expect("evidence");
    let summary = &output[..first_evidence];
    for report in shop_release_multi_target().targets {
        let heading = format!("{} {}/{}", report.kind, report.namespace, report.name);
        let at = summary
            .find(&heading)
            .unwrap_or_else(|| panic!("no summary line for {heading}:\n{summary}"));
        let line = summary[..at].rsplit('\n').next().unwrap_or_default();
        let verdict = match report.verdict {
            Verdict::Live => "LIVE",
            Verdict::NotLive => "NOT LIVE",
            Verdict::Unproven => "UNPROVEN",
            Verdict::Superseded => "SUPERSEDED",
        };
        assert_eq!(line.trim(), verdict, "{heading}:\n{summary}");
    }
    assert!(
        summary.contains("— failed: condition_fresh, release_version"),
        "{summary}"
    );
}

// ---- json -----------------------------------------------------------------------------------

#[test]
fn json_decodes_back_into_the_same_report() {
    for (story, report) in reports().into_iter().chain([("hostile", hostile())]) {
        let json = rendered(&report, Format::Json, TextStyle::plain());
        assert!(
            json.ends_with("}\n"),
            "{story}: pretty JSON with a trailing newline"
        );
        let decoded: Report = serde_json::from_str(&json).expect("the JSON decodes as a Report");
        assert_eq!(decoded, as_sentences(report), "{story}");
    }
}

/// The report as JSON keeps it: a next step is the sentence a person reads (its commands
/// are words in it).
fn as_sentences(mut report: Report) -> Report {
    let sentence = |step: Option<liveproof_evidence::Suggestion>| {
        step.map(|s| liveproof_evidence::Suggestion::text(s.to_string()))
    };
    report.next_step = sentence(report.next_step.take());
    for target in &mut report.targets {
        target.next_step = sentence(target.next_step.take());
    }
    report
}

#[test]
fn json_has_the_design_shape() {
    let json = rendered(&inventory_not_live(), Format::Json, TextStyle::plain());
    let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(value["schema"], "liveproof/v1");
    assert_eq!(value["verdict"], "not_live");
    assert_eq!(value["change"]["since"], "2026-07-12T10:00:00Z");
    assert_eq!(value["change"]["commit"], "3f2c1ab");
    let target = &value["targets"][0];
    assert_eq!(target["kind"], "Deployment");
    assert_eq!(target["namespace"], "apps");
    assert_eq!(target["name"], "inventory");
    let failed = &target["evidence"][2];
    assert_eq!(failed["check"], "pod_restarted");
    assert_eq!(failed["status"], "fail");
    assert_eq!(failed["observed"], "started 2026-07-08T14:22:31Z");
    assert_eq!(failed["expected"], "after 2026-07-12T10:00:00Z");
}

// ---- junit ----------------------------------------------------------------------------------

/// The value of `attr` on the first `<tag ...>` whose text contains `marker`.
fn attribute<'a>(xml: &'a str, tag: &str, marker: &str, attr: &str) -> &'a str {
    let line = xml
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("<{tag} ")) && l.contains(marker))
        .unwrap_or_else(|| panic!("no <{tag}> with {marker}"));
    let key = format!(" {attr}=\"");
    let start = line.find(&key).expect("attribute present") + key.len();
    let len = line[start..].find('"').expect("attribute closed");
    &line[start..start + len]
}

#[test]
fn junit_counts_are_correct() {
    let xml = rendered(
        &shop_release_multi_target(),
        Format::Junit,
        TextStyle::plain(),
    );
    assert_well_formed(&xml);
    let counts = |marker| {
        ["tests", "failures", "errors", "skipped"].map(|a| attribute(&xml, "testsuite", marker, a))
    };
    assert_eq!(counts("flux-system/shop"), ["4", "2", "0", "0"]);
    assert_eq!(counts("apps/inventory"), ["5", "0", "0", "0"]);
    assert_eq!(counts("apps/shop-cache"), ["3", "0", "2", "0"]);
    let total = ["tests", "failures", "errors", "skipped"]
        .map(|a| attribute(&xml, "testsuites", "liveproof", a));
    assert_eq!(total, ["12", "2", "2", "0"]);
    assert_eq!(xml.matches("<testcase ").count(), 12);
    assert_eq!(xml.matches("<failure ").count(), 2);
    assert_eq!(xml.matches("<error ").count(), 2);

    let skips = rendered(&no_change_time(), Format::Junit, TextStyle::plain());
    assert_eq!(
        attribute(&skips, "testsuite", "apps/inventory", "skipped"),
        "1"
    );
    assert_eq!(skips.matches("<skipped ").count(), 1);
}

#[test]
fn junit_names_suites_and_cases_after_targets_and_checks() {
    let xml = rendered(&inventory_not_live(), Format::Junit, TextStyle::plain());
    assert!(xml.contains(r#"<testsuite name="Deployment apps/inventory" "#));
    assert_eq!(
        attribute(&xml, "testcase", "\"pod_restarted\"", "classname"),
        "liveproof.deployment.apps.inventory"
    );
}

#[test]
fn junit_escapes_hostile_strings() {
    let xml = rendered(&hostile(), Format::Junit, TextStyle::plain());
    assert_well_formed(&xml);
    assert!(!xml.contains("<script>"));
    assert!(!xml.contains('\u{1}') && !xml.contains('\x1b') && !xml.contains('\u{fffe}'));
    assert_eq!(
        unescape(attribute(&xml, "testsuite", "Deployment", "name")),
        "Deployment apps/<script>&\"'"
    );
    assert_eq!(
        unescape(attribute(&xml, "failure", "message", "message")),
        "the server reported <script>&\"'  instead | of 1.8.0"
    );
    assert_eq!(
        unescape(attribute(&xml, "error", "message", "message")),
        "controls  end"
    );
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#10;", "\n")
        .replace("&#9;", "\t")
        .replace("&#13;", "\r")
        .replace("&amp;", "&")
}

/// A small XML 1.0 well-formedness check, enough for what the JUnit renderer emits: balanced
/// elements, one root, quoted attributes, only valid references, only valid characters.
fn assert_well_formed(xml: &str) {
    let valid_char = |c: char| {
        matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
            || c >= '\u{10000}'
    };
    if let Some(bad) = xml.chars().find(|&c| !valid_char(c)) {
        panic!("character {bad:?} is not allowed in XML 1.0");
    }
    let check_refs = |text: &str| {
        let mut rest = text;
        while let Some(at) = rest.find('&') {
            rest = &rest[at + 1..];
            let end = rest.find(';').expect("a reference ends with ;");
            let name = &rest[..end];
            let ok = matches!(name, "amp" | "lt" | "gt" | "quot" | "apos")
                || (name.len() > 1
                    && name.starts_with('#')
                    && name[1..].chars().all(|c| c.is_ascii_digit()));
            assert!(ok, "bad reference &{name};");
        }
    };

    let body = xml
        .strip_prefix(r#"<?xml version="1.0" encoding="UTF-8"?>"#)
        .expect("XML declaration first");
    let mut stack: Vec<String> = Vec::new();
    let mut roots = 0;
    let mut rest = body;
    while let Some(open) = rest.find('<') {
        let text = &rest[..open];
        assert!(!text.contains('>'), "stray > in text {text:?}");
        check_refs(text);
        if stack.is_empty() {
            assert!(text.trim().is_empty(), "text outside the root: {text:?}");
        }
        let close = rest[open..].find('>').expect("tag closed") + open;
        let tag = &rest[open + 1..close];
        rest = &rest[close + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "mismatched </{name}>");
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let (name, mut attrs) = tag.split_once(' ').unwrap_or((tag, ""));
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "bad element name {name:?}"
        );
        while !attrs.trim().is_empty() {
            let trimmed = attrs.trim_start();
            let (key, value_and_rest) = trimmed.split_once("=\"").expect("attr=\"value\"");
            assert!(key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
            let end = value_and_rest.find('"').expect("attribute value closed");
            let value = &value_and_rest[..end];
            assert!(!value.contains('<'), "< in attribute {value:?}");
            check_refs(value);
            attrs = &value_and_rest[end + 1..];
        }
        if stack.is_empty() {
            roots += 1;
        }
        if !self_closing {
            stack.push(name.to_string());
        }
    }
    assert!(rest.trim().is_empty(), "text after the root");
    assert!(stack.is_empty(), "unclosed elements {stack:?}");
    assert_eq!(roots, 1, "exactly one root element");
}

// ---- markdown -------------------------------------------------------------------------------

#[test]
fn markdown_escapes_pipes_and_newlines_in_cells() {
    let md = rendered(&hostile(), Format::Markdown, TextStyle::plain());
    let header = "| | check | observed | expected | source |";
    let columns = header.matches('|').count();
    let rows: Vec<&str> = md
        .lines()
        .skip_while(|l| *l != header)
        .take_while(|l| l.starts_with('|'))
        .filter(|l| l.starts_with("| "))
        .collect();
    assert_eq!(rows.len(), 5, "header and four evidence rows:\n{md}");
    for row in rows {
        // Unescaped pipes only: every row has exactly the header's columns.
        let unescaped = row.matches('|').count() - row.matches("\\|").count();
        assert_eq!(unescaped, columns, "{row}");
    }
    assert!(md.contains("a \\| b<br>c"), "{md}");
    assert!(!md.contains("<script>"), "{md}");
    assert!(!md.contains('\u{1}') && !md.contains('\x1b'));
}

#[test]
fn markdown_lists_failures_first() {
    let md = rendered(&inventory_not_live(), Format::Markdown, TextStyle::plain());
    let position = |check: &str| md.find(&format!("| `{check}` |")).expect(check);
    assert!(position("pod_restarted") < position("image_digest_current"));
    assert!(position("image_digest_current") < position("spec_readback"));
    assert!(position("pods_current") < position("server_version"));
    assert!(md.starts_with("## ❌ "));
    assert!(
        md.contains(
            "**❌ Deployment apps/inventory:** run the command below, then run liveproof verify \
             again:\n\n```sh\nkubectl -n apps rollout restart deployment/inventory\n```\n"
        ),
        "{md}"
    );
}

/// A fleet of three clusters — live, not live, unreachable — as a PR comment.
fn fleet_of_three() -> liveproof_evidence::fleet::FleetReport {
    liveproof_evidence::fleet::FleetReport::new(vec![
        ("prod-eu".into(), Ok(inventory_live())),
        ("prod-us".into(), Ok(shop_release_multi_target())),
        (
            "prod-ap".into(),
            Err("cannot reach the API server at https://10.0.3.1:6443 | timed out".into()),
        ),
    ])
}

fn fleet_rendered(fleet: &liveproof_evidence::fleet::FleetReport, format: Format) -> String {
    let mut out = Vec::new();
    fleet
        .render(format, TextStyle::plain(), &mut out)
        .expect("rendering to a Vec cannot fail");
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn snapshot_of_a_fleet_in_markdown() {
    insta::assert_snapshot!(fleet_rendered(&fleet_of_three(), Format::Markdown));
}

/// What GitHub needs to draw the Markdown as meant, read off the lines as its parser would:
/// blocks (tables, `<details>`, code fences) with blank lines between them; every table row
/// with the header's cells (escaped pipes do not count); `<details>` balanced, each opening
/// with one `<summary>` and its Markdown set apart by blank lines; code fences closed; no
/// backtick escaped outside a table cell (commands are in code blocks, not escaped).
#[derive(Debug, Default, PartialEq)]
struct MarkdownShape {
    headings: Vec<String>,
    /// Each table: its header, and how many body rows.
    tables: Vec<(String, usize)>,
    /// Each `<details>` block's summary.
    details: Vec<String>,
    /// Each code block: its info string and its lines.
    code_blocks: Vec<(String, Vec<String>)>,
}

fn markdown_shape(md: &str) -> MarkdownShape {
    let lines: Vec<&str> = md.lines().collect();
    let mut shape = MarkdownShape::default();
    let blank_before = |i: usize| i == 0 || lines[i - 1].trim().is_empty();
    let blank_after = |i: usize| i + 1 == lines.len() || lines[i + 1].trim().is_empty();
    let cells = |row: &str| row.matches('|').count() - row.matches("\\|").count();
    let mut in_details = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let fence = line.trim_start();
        if fence.starts_with("```") {
            let indent = &line[..line.len() - fence.len()];
            let ticks = fence.chars().take_while(|c| *c == '`').count();
            let info = fence[ticks..].to_string();
            let close = format!("{indent}{}", "`".repeat(ticks));
            let end = (i + 1..lines.len())
                .find(|&j| lines[j] == close)
                .unwrap_or_else(|| panic!("code block at line {} never closed:\n{md}", i + 1));
            let body = lines[i + 1..end]
                .iter()
                .map(|l| l.strip_prefix(indent).unwrap_or(l).to_string())
                .collect();
            if indent.is_empty() {
                assert!(
                    blank_before(i) && blank_after(end),
                    "code block at line {}:\n{md}",
                    i + 1
                );
            }
            shape.code_blocks.push((info, body));
            i = end + 1;
            continue;
        }
        if line.starts_with('|') {
            assert!(
                blank_before(i),
                "no blank line before the table at line {}:\n{md}",
                i + 1
            );
            let header = line;
            let delimiter = lines.get(i + 1).copied().unwrap_or_default();
            assert!(
                delimiter.starts_with("|---") && cells(delimiter) == cells(header),
                "table at line {} has no delimiter row:\n{md}",
                i + 1
            );
            let mut rows = 0;
            let mut j = i + 2;
            while j < lines.len() && lines[j].starts_with('|') {
                assert!(
                    !lines[j].contains("\\`"),
                    "an escaped backtick: {}",
                    lines[j]
                );
                assert_eq!(
                    cells(lines[j]),
                    cells(header),
                    "row {}: {}",
                    j + 1,
                    lines[j]
                );
                assert!(
                    lines[j].ends_with(" |"),
                    "row {} not closed: {}",
                    j + 1,
                    lines[j]
                );
                rows += 1;
                j += 1;
            }
            assert!(
                blank_after(j - 1),
                "no blank line after the table at line {}:\n{md}",
                j
            );
            shape.tables.push((header.to_string(), rows));
            i = j;
            continue;
        }
        if line == "<details>" {
            assert!(!in_details, "<details> nested at line {}", i + 1);
            in_details = true;
            assert!(blank_before(i), "line {}:\n{md}", i + 1);
            let summary = lines.get(i + 1).copied().unwrap_or_default();
            let text = summary
                .strip_prefix("<summary>")
                .and_then(|s| s.strip_suffix("</summary>"))
                .unwrap_or_else(|| panic!("no <summary> after <details> at line {}", i + 1));
            assert!(
                !text.contains('\\') && !text.contains('`'),
                "Markdown in <summary>: {text}"
            );
            assert!(
                blank_after(i + 1),
                "no blank line after <summary> at line {}:\n{md}",
                i + 2
            );
            shape.details.push(text.to_string());
            i += 2;
            continue;
        }
        if line == "</details>" {
            assert!(in_details, "</details> without <details> at line {}", i + 1);
            assert!(
                blank_before(i),
                "no blank line before </details> at line {}:\n{md}",
                i + 1
            );
            in_details = false;
        } else if line.starts_with('#') {
            assert!(!in_details, "a heading inside <details> at line {}", i + 1);
            assert!(
                blank_before(i) && blank_after(i),
                "heading at line {}:\n{md}",
                i + 1
            );
            shape.headings.push(line.to_string());
        } else {
            assert!(
                !line.contains("\\`"),
                "an escaped backtick at line {}: {line}",
                i + 1
            );
        }
        i += 1;
    }
    assert!(!in_details, "<details> never closed:\n{md}");
    shape
}

#[test]
fn markdown_has_the_shape_github_draws_for_one_cluster() {
    let md = rendered(
        &shop_release_multi_target(),
        Format::Markdown,
        TextStyle::plain(),
    );
    let shape = markdown_shape(&md);
    assert_eq!(
        shape.headings,
        [
            "## ❌ liveproof: not live",
            "### Next steps",
            "### Evidence"
        ]
    );
    // The summary of the targets comes first, one row each, before any evidence.
    assert_eq!(
        shape.tables[0],
        ("| target | verdict | failed | unknown |".to_string(), 3)
    );
    assert!(md.find("| target |") < md.find("<details>"));
    assert!(md.contains(
        "| HelmRelease flux-system/shop | ❌ not live | `condition_fresh`, `release_version` | — |"
    ));
    assert!(md.contains(
        "| StatefulSet apps/shop-cache (via helmrelease/flux-system/shop) | ⚠️ unproven | — | `pods_current`, `pod_restarted` |"
    ));
    // Each target's evidence table, folded.
    assert_eq!(
        shape.details,
        [
            "❌ HelmRelease flux-system/shop — not live: 2 failed, 2 passed",
            "✅ Deployment apps/inventory — live: 5 passed",
            "⚠️ StatefulSet apps/shop-cache (via helmrelease/flux-system/shop) — unproven: 2 unknown, 1 passed",
        ]
    );
    let evidence_rows: Vec<usize> = shape.tables[1..].iter().map(|(_, rows)| *rows).collect();
    assert_eq!(evidence_rows, [4, 5, 3]);

    // A step's command is a code block to copy, not a code span with escaped backticks.
    let md = rendered(&inventory_not_live(), Format::Markdown, TextStyle::plain());
    let shape = markdown_shape(&md);
    assert_eq!(
        shape.code_blocks,
        [(
            "sh".to_string(),
            vec!["kubectl -n apps rollout restart deployment/inventory".to_string()]
        )]
    );
    assert_eq!(shape.details.len(), 1);

    // Hostile strings keep the shape too (pipes, newlines, HTML in names and cells).
    let md = rendered(&hostile(), Format::Markdown, TextStyle::plain());
    let shape = markdown_shape(&md);
    assert_eq!(
        shape.details,
        ["❌ Deployment apps/&lt;script&gt;&amp;\"' — not live: 1 failed, 1 unknown, 1 passed, 1 skipped"]
    );
}

#[test]
fn markdown_has_the_shape_github_draws_for_a_fleet() {
    let md = fleet_rendered(&fleet_of_three(), Format::Markdown);
    let shape = markdown_shape(&md);
    assert_eq!(
        shape.headings,
        [
            "## ❌ liveproof: not live across 3 clusters",
            "### Cluster prod-eu: ✅ live",
            "#### Evidence",
            "### Cluster prod-us: ❌ not live",
            "#### Next steps",
            "#### Evidence",
            "### Cluster prod-ap: ⚠️ not verified",
        ]
    );
    // The summary across clusters first: each cluster's verdict and its targets' counts.
    assert_eq!(
        shape.tables[0],
        (
            "| cluster | verdict | live | not live | unproven | superseded |".to_string(),
            3
        )
    );
    for row in [
        "| prod-eu | ✅ live | 1 | 0 | 0 |",
        "| prod-us | ❌ not live | 1 | 1 | 1 |",
        "| prod-ap | ⚠️ not verified (error) | — | — | — | — |",
    ] {
        assert!(md.contains(row), "{row} in:\n{md}");
    }
    // Then each cluster's own summary of its targets, and its evidence folded.
    let target_tables: Vec<usize> = shape
        .tables
        .iter()
        .filter(|(header, _)| header.starts_with("| target |"))
        .map(|(_, rows)| *rows)
        .collect();
    assert_eq!(target_tables, [1, 3]);
    assert_eq!(shape.details.len(), 4);
    assert!(md.contains(
        "**Not verified:** cannot reach the API server at https://10.0.3.1:6443 \\| timed out"
    ));
}

/// `-o yaml` is the `-o json` document, key for key, value for value.
#[test]
fn yaml_is_the_json_document() {
    for (story, report) in reports().into_iter().chain([("hostile", hostile())]) {
        let json: serde_json::Value =
            serde_json::from_str(&rendered(&report, Format::Json, TextStyle::plain()))
                .expect("JSON");
        let yaml: serde_json::Value =
            serde_norway::from_str(&rendered(&report, Format::Yaml, TextStyle::plain()))
                .unwrap_or_else(|e| panic!("{story}: YAML: {e}"));
        assert_eq!(yaml, json, "{story}");
        let back: Report =
            serde_norway::from_str(&rendered(&report, Format::Yaml, TextStyle::plain()))
                .expect("decodes into the model");
        assert_eq!(back.verdict, report.verdict, "{story}");
    }
    let fleet = fleet_of_three();
    let json: serde_json::Value =
        serde_json::from_str(&fleet_rendered(&fleet, Format::Json)).expect("JSON");
    let yaml: serde_json::Value =
        serde_norway::from_str(&fleet_rendered(&fleet, Format::Yaml)).expect("YAML");
    assert_eq!(yaml, json);
}

/// `-o name`: kubectl's `KIND.GROUP/NAME` per object; a release as the target liveproof takes
/// back; a --version-url row is no object; a fleet lists each cluster's.
#[test]
fn names_are_kubectl_names_one_per_line() {
    assert_eq!(
        rendered(&shop_release_multi_target(), Format::Name, TextStyle::plain()),
        "helmrelease.helm.toolkit.fluxcd.io/shop\ndeployment.apps/inventory\nstatefulset.apps/shop-cache\n"
    );
    let release = target("Release", "apps", "shop", Verdict::Live, Vec::new(), None);
    let app = target(
        "Application",
        "argocd",
        "shop",
        Verdict::Live,
        Vec::new(),
        None,
    );
    let ks = target(
        "Kustomization",
        "flux-system",
        "apps",
        Verdict::Live,
        Vec::new(),
        None,
    );
    let ds = target(
        "DaemonSet",
        "kube-system",
        "agent",
        Verdict::Live,
        Vec::new(),
        None,
    );
    let server = target(
        "Server",
        "",
        "https://inventory.example.com/version",
        Verdict::Live,
        Vec::new(),
        None,
    );
    let report = Report::new(change(None, None), vec![release, app, ks, ds, server]);
    assert_eq!(
        rendered(&report, Format::Name, TextStyle::plain()),
        "release/shop\napplication.argoproj.io/shop\nkustomization.kustomize.toolkit.fluxcd.io/apps\ndaemonset.apps/agent\n"
    );
    assert_eq!(
        fleet_rendered(&fleet_of_three(), Format::Name),
        "deployment.apps/inventory\nhelmrelease.helm.toolkit.fluxcd.io/shop\ndeployment.apps/inventory\nstatefulset.apps/shop-cache\n"
    );
}

// ---- text -----------------------------------------------------------------------------------

#[test]
fn text_is_colourless_unless_asked() {
    for (story, report) in reports().into_iter().chain([("hostile", hostile())]) {
        let plain = rendered(&report, Format::Text, TextStyle::plain());
        assert!(!plain.contains('\x1b'), "{story}: {plain}");
        let coloured = rendered(&report, Format::Text, TextStyle::colored());
        assert!(coloured.contains("\x1b["), "{story}");
    }
}

#[test]
fn text_defuses_escape_sequences_from_the_cluster() {
    let text = rendered(&hostile(), Format::Text, TextStyle::plain());
    assert!(!text.contains('\u{1}') && !text.contains('\x1b'));
    assert!(text.contains("\\u{1b}[2J"), "{text}");
}

#[test]
fn text_fits_100_columns_without_cutting_anything() {
    let report = shop_release_multi_target();
    let text = rendered(&report, Format::Text, TextStyle::plain());
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "too wide: {line}");
    }
    // Wrapping moves words, never drops them; fail/unknown details are always shown.
    let words: Vec<&str> = text.split_whitespace().collect();
    for target in &report.targets {
        let explained = target
            .evidence
            .iter()
            .filter(|e| matches!(e.status, Status::Fail | Status::Unknown));
        for e in explained {
            for word in e.detail.split_whitespace() {
                assert!(words.contains(&word), "{word} missing");
            }
        }
    }
}

#[test]
fn text_ends_with_the_verdict_and_the_next_step() {
    let text = rendered(&inventory_not_live(), Format::Text, TextStyle::plain());
    assert!(text.starts_with("change: since 2026-07-12T10:00:00Z · commit 3f2c1ab\n"));
    assert!(text.contains("Deployment apps/inventory — NOT LIVE\n"));
    assert!(text.contains("\nverdict: not_live (exit 1)\nnext step: kubectl -n apps rollout"));

    let live = rendered(&inventory_live(), Format::Text, TextStyle::plain());
    assert!(live.ends_with("verdict: live (exit 0)\n"), "{live}");

    let unproven = rendered(&no_change_time(), Format::Text, TextStyle::plain());
    assert!(unproven.starts_with("change: commit 3f2c1ab · no change time given\n"));
    assert!(unproven.contains("verdict: unproven (exit 3)"));
}

#[test]
fn next_step_comes_from_the_worst_target() {
    // The release (not live) is listed first; the cache (unproven) must not win even if first.
    let mut report = shop_release_multi_target();
    report.targets.reverse();
    let text = rendered(&report, Format::Text, TextStyle::plain());
    assert!(text.contains("next step: bump the chart version"), "{text}");
}

#[test]
fn an_empty_report_renders_in_every_format() {
    let report = Report::new(ChangeSummary::default(), Vec::new());
    for format in <Report as Render>::FORMATS.iter().copied() {
        let output = rendered(&report, format, TextStyle::plain());
        // As kubectl's, `-o name` of nothing is nothing.
        assert_eq!(output.is_empty(), format == Format::Name, "{format}");
        if format == Format::Junit {
            assert_well_formed(&output);
        }
    }
}

// ---- --wait and notes -----------------------------------------------------------------------

/// The not-live report of a `--wait --timeout 2s` that ran out, made from a `--from` dump whose
/// namespace no `-n` named.
fn waited_out() -> Report {
    let mut report = inventory_not_live();
    report.wait = Some(liveproof_evidence::WaitRecord {
        timed_out: true,
        elapsed_seconds: 2,
    });
    report.notes =
        vec!["namespace apps: the only one in dump.yaml holding deployment/inventory".into()];
    report
}

#[test]
fn a_wait_that_ran_out_is_said_in_every_format() {
    let report = waited_out();
    let json: serde_json::Value =
        serde_json::from_str(&rendered(&report, Format::Json, TextStyle::plain())).expect("JSON");
    assert_eq!(
        json["wait"],
        serde_json::json!({"timed_out": true, "elapsed_seconds": 2})
    );
    assert_eq!(json["notes"][0], report.notes[0]);

    let text = rendered(&report, Format::Text, TextStyle::plain());
    let wait = text
        .lines()
        .find(|l| l.starts_with("wait: "))
        .unwrap_or_else(|| panic!("no wait line:\n{text}"));
    assert!(wait.contains("--timeout ran out after 2s"), "{wait}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("note: namespace apps: the only one")),
        "{text}"
    );

    let md = rendered(&report, Format::Markdown, TextStyle::plain());
    assert!(
        md.contains("**Wait:** the --timeout ran out after 2s"),
        "{md}"
    );
    assert!(md.contains("**Note:** namespace apps"), "{md}");

    let xml = rendered(&report, Format::Junit, TextStyle::plain());
    assert_well_formed(&xml);
    assert_eq!(
        attribute(&xml, "property", "wait.timed_out", "value"),
        "true"
    );
    assert_eq!(
        attribute(&xml, "property", "wait.elapsed_seconds", "value"),
        "2"
    );

    // A wait that ended live says how long it took; no wait at all says nothing.
    let mut live = inventory_live();
    live.wait = Some(liveproof_evidence::WaitRecord {
        timed_out: false,
        elapsed_seconds: 41,
    });
    let text = rendered(&live, Format::Text, TextStyle::plain());
    assert!(text.contains("wait: live after 41s"), "{text}");
    let unwaited = rendered(&inventory_live(), Format::Text, TextStyle::plain());
    assert!(!unwaited.contains("wait:"), "{unwaited}");
    let json = rendered(&inventory_live(), Format::Json, TextStyle::plain());
    assert!(
        !json.contains("\"wait\"") && !json.contains("\"notes\""),
        "{json}"
    );
}

// ---- error documents (exit 2) ---------------------------------------------------------------

fn error_rendered(format: Format) -> String {
    let problem = liveproof_report::Problem::new(
        "cannot reach the API server at https://127.0.0.1:1 <refused> & gone",
        Some("check `kubectl cluster-info`".into()),
    );
    let mut out = Vec::new();
    liveproof_report::render_error(
        &liveproof_report::ErrorReport::new(problem),
        format,
        &mut out,
    )
    .expect("rendering to a Vec cannot fail");
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn an_error_is_one_document_in_every_format_but_text() {
    let json: liveproof_report::ErrorReport =
        serde_json::from_str(&error_rendered(Format::Json)).expect("an error document");
    assert_eq!(json.schema, "liveproof/v1");
    assert_eq!(
        json.error.message,
        "cannot reach the API server at https://127.0.0.1:1 <refused> & gone"
    );
    assert_eq!(
        json.error.hint.as_deref(),
        Some("check `kubectl cluster-info`")
    );

    let md = error_rendered(Format::Markdown);
    assert!(md.starts_with("## ⛔ liveproof could not verify\n"), "{md}");
    assert!(
        md.contains("**Error:** cannot reach the API server at https://127.0.0.1:1 &lt;refused&gt; &amp; gone"),
        "{md}"
    );
    assert!(
        md.contains("**Hint:** check `kubectl cluster-info`"),
        "{md}"
    );

    let xml = error_rendered(Format::Junit);
    assert_well_formed(&xml);
    assert_eq!(xml.matches("<testcase ").count(), 1, "{xml}");
    assert_eq!(xml.matches("<error ").count(), 1, "{xml}");
    assert_eq!(attribute(&xml, "testsuites", "liveproof", "errors"), "1");
    assert_eq!(
        unescape(attribute(&xml, "error", "message", "message")),
        "cannot reach the API server at https://127.0.0.1:1 <refused> & gone"
    );
    assert!(xml.contains("hint: check `kubectl cluster-info`"), "{xml}");

    assert_eq!(
        error_rendered(Format::Text),
        "",
        "text: the stderr line only"
    );
    assert_eq!(
        error_rendered(Format::Name),
        "",
        "name: the stderr line only"
    );
    let yaml: liveproof_report::ErrorReport =
        serde_norway::from_str(&error_rendered(Format::Yaml)).expect("an error document");
    assert_eq!(yaml, json, "-o yaml is the -o json error document");
}

/// The live inventory, dated: its last pod became Ready at 10:07:30, 27m 30s after the commit.
fn inventory_dated() -> Report {
    let mut target = inventory_restarted();
    target.timeline = vec![liveproof_evidence::TimelineEntry {
        event: liveproof_evidence::Moment::Change,
        at: "2026-07-12T09:40:00Z".into(),
        source: "committer time of 3f2c1ab in .".into(),
        source_ref: None,
        live_since: false,
    }];
    target.set_live_since(liveproof_evidence::TimelineEntry::read(
        liveproof_evidence::Moment::LastPodReady,
        "2026-07-12T10:07:30Z".parse().expect("a time"),
        object(Pod, "apps", "inventory-5f6b-8q2tz")
            .field(".status.conditions[Ready].lastTransitionTime"),
    ));
    let mut change = change(Some("2026-07-12T09:40:00Z"), Some("3f2c1ab"));
    change.committed_at = Some("2026-07-12T09:40:00Z".into());
    let mut report = Report::new(change, vec![target]);
    report.date_lead_time();
    report
}

#[test]
fn when_it_went_live_is_said_in_every_format() {
    let report = inventory_dated();
    assert_eq!(report.lead_time_seconds, Some(1650));
    let json: serde_json::Value =
        serde_json::from_str(&rendered(&report, Format::Json, TextStyle::plain())).expect("JSON");
    assert_eq!(json["lead_time_seconds"], 1650);
    assert_eq!(json["targets"][0]["live_since"], "2026-07-12T10:07:30Z");
    assert_eq!(json["targets"][0]["timeline"][1]["event"], "last_pod_ready");
    assert_eq!(json["targets"][0]["timeline"][1]["live_since"], true);

    let text = rendered(&report, Format::Text, TextStyle::plain());
    assert!(
        text.contains(
            "Deployment apps/inventory — live since 10:07:30Z, 27m 30s after commit 3f2c1ab"
        ),
        "{text}"
    );
    assert!(
        text.contains("lead time: 27m 30s from commit 3f2c1ab to live (1650s)"),
        "{text}"
    );
    assert!(
        text.contains("2026-07-12T10:07:30Z last_pod_ready (live since)"),
        "{text}"
    );

    let md = rendered(&report, Format::Markdown, TextStyle::plain());
    assert!(
        md.contains("| Deployment apps/inventory | 10:07:30Z, 27m 30s after commit 3f2c1ab | last_pod_ready `apps/Pod/inventory-5f6b-8q2tz .status.conditions[Ready].lastTransitionTime` |"),
        "{md}"
    );
    assert!(md.contains("**Lead time:** 27m 30s"), "{md}");

    let xml = rendered(&report, Format::Junit, TextStyle::plain());
    for property in [
        r#"<property name="live_since" value="2026-07-12T10:07:30Z"/>"#,
        r#"<property name="lead_time_seconds" value="1650"/>"#,
        r#"<property name="change.committed_at" value="2026-07-12T09:40:00Z"/>"#,
    ] {
        assert!(xml.contains(property), "{property} not in\n{xml}");
    }
}

// ---- superseded -----------------------------------------------------------------------------

/// A superseded report is exit 4 in every format, ranks between unproven and live, and each
/// format names what superseded the target, whether that is live, and that nothing is rolled
/// back.
#[test]
fn a_superseded_target_names_what_superseded_it_in_every_format() {
    let report = web_superseded();
    assert_eq!(report.verdict, Verdict::Superseded, "worse than live");
    assert_eq!(report.exit_code(), 4);

    let text = rendered(&report, Format::Text, TextStyle::plain());
    let summary_line = text
        .lines()
        .find(|l| l.contains("Deployment apps/web") && !l.contains(" — SUPERSEDED"))
        .expect("a summary line");
    assert!(
        summary_line.starts_with(
            "  SUPERSEDED  Deployment apps/web — superseded by revision apps/web-6c8d"
        ),
        "{text}"
    );
    // The widest verdict sets the column: live lines up under it.
    assert!(
        text.contains("\n  LIVE        Deployment apps/inventory"),
        "{text}"
    );
    assert!(
        text.contains("Deployment apps/web — SUPERSEDED\n  superseded by: revision apps/web-6c8d"),
        "{text}"
    );
    // Wrapped to the width; read as words.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for said in [
        "superseded by: revision apps/web-6c8d, image ghcr.io/acme/web:1.5.0, made 2026-07-12T11:00:00Z (itself live) from apps/ReplicaSet/web-6c8d .metadata.creationTimestamp ReplicaSet apps/web-6c8d (revision 3)",
        "verdict: superseded (exit 4) next step: nothing to roll back: superseded by revision apps/web-6c8d",
        "verify the later change: liveproof verify deployment/web -n apps --since 2026-07-12T11:00:00Z --image ghcr.io/acme/web:1.5.0",
    ] {
        assert!(flat.contains(said), "{said}\nin:\n{text}");
    }

    let md = rendered(&report, Format::Markdown, TextStyle::plain());
    assert!(md.starts_with("## ⏭️ liveproof: superseded\n"), "{md}");
    assert!(
        md.contains("| target | superseded by | the later change |\n|---|---|---|\n| Deployment apps/web | revision `apps/web-6c8d`, image `ghcr.io/acme/web:1.5.0`, made 2026-07-12T11:00:00Z | ✅ live |\n"),
        "{md}"
    );
    assert!(
        md.contains("**Superseded by:** revision `apps/web-6c8d`"),
        "{md}"
    );
    assert!(
        md.contains("**⏭️ Deployment apps/web:** nothing to roll back"),
        "{md}"
    );
    assert!(md.ends_with("Verdict: `superseded` (exit 4)\n"), "{md}");

    // JUnit: nothing failed. What did not hold is skipped, saying why.
    let xml = rendered(&report, Format::Junit, TextStyle::plain());
    assert_well_formed(&xml);
    let counts = ["tests", "failures", "errors", "skipped"]
        .map(|a| attribute(&xml, "testsuite", "apps/web", a));
    assert_eq!(counts, ["3", "0", "0", "1"]);
    assert_eq!(xml.matches("<failure ").count(), 0, "{xml}");
    let skipped = attribute(&xml, "skipped", "nothing to roll back", "message");
    assert!(
        skipped.starts_with("superseded by revision apps/web-6c8d, image ghcr.io/acme/web:1.5.0, made 2026-07-12T11:00:00Z, itself live: not deployed as such, nothing to roll back"),
        "{skipped}"
    );
    assert!(
        xml.contains(r#"<property name="superseded_by" value="revision apps/web-6c8d"#),
        "{xml}"
    );

    // JSON and YAML carry it as data.
    let json: serde_json::Value =
        serde_json::from_str(&rendered(&report, Format::Json, TextStyle::plain())).expect("json");
    assert_eq!(json["verdict"], "superseded");
    assert_eq!(
        json["targets"][0]["superseded_by"]["revision"],
        "apps/web-6c8d"
    );
    assert_eq!(json["targets"][0]["superseded_by"]["live"], true);
    let yaml = rendered(&report, Format::Yaml, TextStyle::plain());
    assert!(yaml.contains("superseded_by:\n"), "{yaml}");

    // -o name lists it like any target: the verdict is the exit code.
    assert_eq!(
        rendered(&report, Format::Name, TextStyle::plain()),
        "deployment.apps/web\ndeployment.apps/inventory\n"
    );
}

/// A fleet ranks superseded between unproven and live, counts it per cluster, and says so in
/// text and Markdown.
#[test]
fn a_fleet_counts_superseded_clusters_and_ranks_them_above_unproven() {
    let fleet = liveproof_evidence::fleet::FleetReport::new(vec![
        ("prod-eu".into(), Ok(inventory_live())),
        ("prod-us".into(), Ok(web_superseded())),
    ]);
    assert_eq!((fleet.verdict, fleet.exit_code()), (Verdict::Superseded, 4));
    let text = fleet_rendered(&fleet, Format::Text);
    assert!(
        text.contains("=== cluster prod-us: SUPERSEDED ==="),
        "{text}"
    );
    assert!(text.contains("\n  SUPERSEDED   prod-us\n"), "{text}");
    assert!(
        text.ends_with("1 live, 0 not live, 0 unproven, 1 superseded, 0 not verified (error) — fleet verdict: SUPERSEDED\n"),
        "{text}"
    );
    let md = fleet_rendered(&fleet, Format::Markdown);
    assert!(
        md.contains("| prod-us | ⏭️ superseded | 1 | 0 | 0 | 1 |"),
        "{md}"
    );
    assert!(md.ends_with("Verdict: `superseded` (exit 4)\n"), "{md}");
    let xml = fleet_rendered(&fleet, Format::Junit);
    assert_eq!(xml.matches("<failure ").count(), 0, "{xml}");

    // An unreachable cluster is unproven: worse than superseded.
    let with_error = liveproof_evidence::fleet::FleetReport::new(vec![
        ("prod-us".into(), Ok(web_superseded())),
        ("prod-ap".into(), Err("unreachable".into())),
    ]);
    assert_eq!(with_error.verdict, Verdict::Unproven);
}
