//! The one printer interface: each command's model is drawn in the formats it names and no
//! other (never silently as another), and its exit code is read off the model.

use liveproof_evidence::fleet::FleetReport;
use liveproof_evidence::{ChangeSummary, Report, Verdict};
use liveproof_report::{
    render_rollback_changed, render_rollback_end, render_rollback_step, DemoOutcome, Format,
    Outcome, Output, Render, Rollback, RollbackEnd, RollbackEvent, RollbackPrinter, RollbackStep,
    SnapshotTaken, StaleOutcome, TextStyle, Verification,
};

fn drawn<M: Render>(model: &M, format: Format) -> std::io::Result<String> {
    let mut out = Vec::new();
    model.render(format, TextStyle::plain(), &mut out)?;
    Ok(String::from_utf8(out).expect("UTF-8"))
}

/// Every format outside a model's own is an error, and nothing is written for it.
fn refuses_the_rest<M: Render>(model: &M) {
    for format in Format::ALL {
        let mut out = Vec::new();
        // -o jsonpath and -o custom-columns are drawn with their template.
        let result = match format {
            Format::JsonPath | Format::CustomColumns => {
                let template = if format == Format::JsonPath {
                    "{.verdict}"
                } else {
                    "V:.verdict"
                };
                let output = Output::new(format, Some(template)).expect("a template");
                model.render_output(&output, TextStyle::plain(), &mut out)
            }
            _ => model.render(format, TextStyle::plain(), &mut out),
        };
        if M::FORMATS.contains(&format) {
            result.unwrap_or_else(|e| panic!("{format}: {e}"));
        } else {
            let err = result.expect_err("not drawn as another format");
            assert_eq!(err.kind(), std::io::ErrorKind::Unsupported, "{format}");
            assert!(err.to_string().contains(format.name()), "{err}");
            assert!(out.is_empty(), "{format}: wrote {out:?}");
        }
    }
}

fn report(verdict: Verdict) -> Report {
    let mut report = Report::new(ChangeSummary::default(), Vec::new());
    report.verdict = verdict;
    report
}

#[test]
fn no_model_is_drawn_in_a_format_it_does_not_name() {
    refuses_the_rest(&report(Verdict::Live));
    let fleet = FleetReport::new(vec![("a".into(), Ok(report(Verdict::Live)))]);
    refuses_the_rest(&fleet);
    refuses_the_rest(&Verification::One(Box::new(report(Verdict::Live))));
    refuses_the_rest(&StaleOutcome::default());
    refuses_the_rest(&SnapshotTaken::Taken {
        commit: "abc1234".into(),
        workloads: 1,
        releases: 0,
        current: "snapshots/current".into(),
    });
    refuses_the_rest(&Rollback::default());
    refuses_the_rest(&DemoOutcome {
        schema: "liveproof/demo/v1",
        command: "liveproof verify …".into(),
        before: report(Verdict::NotLive),
        after: report(Verdict::Live),
        as_expected: true,
    });
}

#[test]
fn exit_codes_are_read_off_the_models() {
    let demo = |as_expected| DemoOutcome {
        schema: "liveproof/demo/v1",
        command: String::new(),
        before: report(Verdict::NotLive),
        after: report(Verdict::Live),
        as_expected,
    };
    assert_eq!(demo(true).exit_code(), 0);
    assert_eq!(demo(false).exit_code(), 1);
    assert_eq!(report(Verdict::Unproven).exit_code(), 3);
    let one = Verification::One(Box::new(report(Verdict::NotLive)));
    assert_eq!(one.exit_code(), 1);
    let unreachable = FleetReport::new(vec![("a".into(), Err("unreachable".into()))]);
    assert_eq!(Verification::Fleet(Box::new(unreachable)).exit_code(), 2);
    assert_eq!(StaleOutcome::default().exit_code(), 0);
    assert_eq!(
        Rollback::default().exit_code(),
        2,
        "a rollback that never ended"
    );
}

/// The text a rollback says as it goes is the text of the whole rollback drawn at the end.
#[test]
fn a_rollback_said_as_it_goes_reads_as_the_whole_of_it() {
    let events = vec![
        RollbackEvent::Changed {
            commit: "abc1234".into(),
            changed: vec!["deployment/shop/web".into()],
        },
        RollbackEvent::Step(RollbackStep::Restored {
            target: "deployment/shop/web".into(),
            images: vec!["ghcr.io/acme/web:1.0".into()],
        }),
        RollbackEvent::Waiting,
        RollbackEvent::Verified(Box::new(report(Verdict::Live))),
        RollbackEvent::End(RollbackEnd::Succeeded),
    ];
    let mut streamed = Vec::new();
    let mut printer = RollbackPrinter::new(&mut streamed, TextStyle::plain());
    for event in events.clone() {
        printer.record(event).expect("writes to a Vec");
    }
    let rollback = printer.finish();
    assert_eq!(rollback, Rollback { events });
    assert_eq!(rollback.exit_code(), 0);
    let whole = drawn(&rollback, Format::Text).expect("text");
    assert_eq!(String::from_utf8(streamed).expect("UTF-8"), whole);
    // Each piece as its own renderer says it.
    let mut pieces = Vec::new();
    render_rollback_changed("abc1234", &["deployment/shop/web".into()], &mut pieces)
        .expect("writes");
    render_rollback_step(
        &RollbackStep::Restored {
            target: "deployment/shop/web".into(),
            images: vec!["ghcr.io/acme/web:1.0".into()],
        },
        &mut pieces,
    )
    .expect("writes");
    let pieces = String::from_utf8(pieces).expect("UTF-8");
    assert!(whole.starts_with(&pieces), "{whole}");
    let mut end = Vec::new();
    render_rollback_end(&RollbackEnd::Succeeded, &mut end).expect("writes");
    assert!(whole.ends_with(&String::from_utf8(end).expect("UTF-8")));
}

#[test]
fn the_demo_story_is_wrapped_to_the_width_and_json_is_one_document() {
    let mut before = report(Verdict::NotLive);
    before.change.since = Some("2026-07-12T10:00:00Z".into());
    before.change.commit = Some("3f2c1ab".into());
    let demo = DemoOutcome {
        schema: "liveproof/demo/v1",
        command: "liveproof verify helmrelease/inventory -n apps".into(),
        before,
        after: report(Verdict::Live),
        as_expected: true,
    };
    let text = drawn(&demo, Format::Text).expect("text");
    assert!(text.contains("3f2c1ab)."), "{text}");
    assert!(text.contains("2026-07-12T10:00:00Z"), "{text}");
    let style = TextStyle::plain().with_width(60);
    let mut narrow = Vec::new();
    demo.render(Format::Text, style, &mut narrow).expect("text");
    let narrow = String::from_utf8(narrow).expect("UTF-8");
    let story: Vec<&str> = narrow.lines().take(8).collect();
    assert!(story.iter().all(|l| l.chars().count() <= 60), "{narrow}");
    let json: serde_json::Value =
        serde_json::from_str(&drawn(&demo, Format::Json).expect("json")).expect("one document");
    assert_eq!(json["schema"], "liveproof/demo/v1");
    assert_eq!(json["as_expected"], true);
}
