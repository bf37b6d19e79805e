//! `liveproof rollback` as text: what changed since the snapshot, each step taken for what
//! failed (and each superseded target, left as it is), and how it ended. Written step by step, as the command goes (a rollback waits for
//! its workloads, and what it has already done must be on screen while it does): the command
//! records each [`RollbackEvent`] with a [`RollbackPrinter`], which writes it at once and keeps
//! it, and the [`Rollback`] it hands back carries the exit code.

use std::io::{self, Write};

use liveproof_evidence::{Report, SupersededBy};

use crate::textutil::terminal_safe;
use crate::{Format, Outcome, Render, TextStyle};

/// One thing `rollback` has to say, in the order it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum RollbackEvent {
    /// What changed since the snapshot of `commit` (at least one target).
    Changed {
        commit: String,
        changed: Vec<String>,
    },
    /// What was done about one failed target.
    Step(RollbackStep),
    /// The wait for the restored workloads starts.
    Waiting,
    /// The restored workloads, verified.
    Verified(Box<Report>),
    /// How it ended.
    End(RollbackEnd),
}

/// What `rollback` did, in order. Its exit code is its end's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rollback {
    pub events: Vec<RollbackEvent>,
}

impl Rollback {
    /// How it ended; `None` while it runs.
    pub fn end(&self) -> Option<&RollbackEnd> {
        self.events.iter().rev().find_map(|e| match e {
            RollbackEvent::End(end) => Some(end),
            _ => None,
        })
    }
}

impl Render for Rollback {
    const FORMATS: &'static [Format] = &[Format::Text];

    fn render(&self, format: Format, style: TextStyle, out: &mut dyn Write) -> io::Result<()> {
        if format != Format::Text {
            return Err(crate::unsupported("a rollback", format, Self::FORMATS));
        }
        self.events
            .iter()
            .try_for_each(|event| render_rollback_event(event, style, out))
    }
}

impl Outcome for Rollback {
    /// The end's ([`RollbackEnd::exit_code`]); a rollback that never ended did not finish (2).
    fn exit_code(&self) -> u8 {
        self.end().map_or(2, RollbackEnd::exit_code)
    }
}

/// Writes each event of a rollback as it is recorded (the wait that follows a step must not
/// hide it), and keeps them: [`RollbackPrinter::finish`] is the whole [`Rollback`].
pub struct RollbackPrinter<'a> {
    out: &'a mut dyn Write,
    style: TextStyle,
    rollback: Rollback,
}

impl<'a> RollbackPrinter<'a> {
    pub fn new(out: &'a mut dyn Write, style: TextStyle) -> Self {
        RollbackPrinter {
            out,
            style,
            rollback: Rollback::default(),
        }
    }

    /// Writes `event` now, and keeps it.
    pub fn record(&mut self, event: RollbackEvent) -> io::Result<()> {
        render_rollback_event(&event, self.style, self.out)?;
        self.out.flush()?;
        self.rollback.events.push(event);
        Ok(())
    }

    /// Everything recorded.
    pub fn finish(self) -> Rollback {
        self.rollback
    }
}

/// One event, as text.
pub fn render_rollback_event(
    event: &RollbackEvent,
    style: TextStyle,
    out: &mut dyn Write,
) -> io::Result<()> {
    match event {
        RollbackEvent::Changed { commit, changed } => render_rollback_changed(commit, changed, out),
        RollbackEvent::Step(step) => render_rollback_step(step, out),
        RollbackEvent::Waiting => render_rollback_waiting(out),
        RollbackEvent::Verified(report) => report.render(Format::Text, style, out),
        RollbackEvent::End(end) => render_rollback_end(end, out),
    }
}

/// What `rollback` does about one target that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RollbackStep {
    /// A failed Helm release: Helm rolls it back (to `revision`, the snapshot's), liveproof does
    /// not. `None`: the release is new since the snapshot.
    Release {
        namespace: String,
        name: String,
        revision: Option<i64>,
    },
    /// A failed workload the snapshot does not hold: nothing to restore.
    NotInSnapshot { target: String },
    /// `--dry-run`: the PATCH that would restore the snapshot's pod template.
    WouldRestore {
        kind: String,
        namespace: String,
        name: String,
        images: Vec<String>,
    },
    /// The snapshot's pod template is back.
    Restored { target: String, images: Vec<String> },
    /// The restoring PATCH failed.
    RestoreFailed { target: String, error: String },
    /// A target a later change superseded: never touched (there is nothing to roll back for
    /// it; putting its snapshot template back would undo the later change).
    Superseded {
        target: String,
        by: Option<Box<SupersededBy>>,
    },
}

impl RollbackStep {
    /// Whether the step leaves something for a person to do (a Helm command, a deletion, a
    /// failed PATCH).
    pub fn needs_hand(&self) -> bool {
        matches!(
            self,
            RollbackStep::Release { .. }
                | RollbackStep::NotInSnapshot { .. }
                | RollbackStep::RestoreFailed { .. }
        )
    }
}

/// How a rollback ended; the exit code follows from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RollbackEnd {
    /// Nothing in the snapshot's scope changed: nothing to roll back, nothing proven. `why` is
    /// what to check.
    NothingChanged { commit: String, why: String },
    /// Something changed, nothing failed (`unproven`: some of it could not be proven).
    NothingFailed { unproven: bool },
    /// `--dry-run`: nothing was sent.
    DryRun,
    /// Every failure is back on its snapshot template and serving from it.
    Succeeded,
    /// Some failure needs a person (`serving`: the restored workloads do serve their template).
    Failed { serving: bool },
}

impl RollbackEnd {
    /// 0 rolled back (or nothing failed), 1 failed or dry run, 3 nothing proven.
    pub fn exit_code(&self) -> u8 {
        match self {
            RollbackEnd::NothingChanged { .. } => 3,
            RollbackEnd::NothingFailed { unproven: true } => 3,
            RollbackEnd::NothingFailed { unproven: false } | RollbackEnd::Succeeded => 0,
            RollbackEnd::DryRun | RollbackEnd::Failed { .. } => 1,
        }
    }
}

/// `changed since the snapshot of COMMIT: a, b` (nothing changed is said by [`RollbackEnd`]).
pub fn render_rollback_changed(
    commit: &str,
    changed: &[String],
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(
        out,
        "changed since the snapshot of {}: {}",
        terminal_safe(commit),
        terminal_safe(&changed.join(", "))
    )
}

pub fn render_rollback_step(step: &RollbackStep, out: &mut dyn Write) -> io::Result<()> {
    let line = match step {
        RollbackStep::Release {
            namespace,
            name,
            revision: Some(revision),
        } => format!("release {namespace}/{name} failed: run `helm rollback {name} {revision} -n {namespace}` (liveproof does not re-implement Helm)"),
        RollbackStep::Release {
            namespace,
            name,
            revision: None,
        } => format!("release {namespace}/{name} failed and is new since the snapshot: `helm uninstall {name} -n {namespace}` removes it, if that is what you want"),
        RollbackStep::NotInSnapshot { target } => format!("{target} failed but did not exist at the snapshot: nothing to restore (delete it by hand if it should go)"),
        RollbackStep::WouldRestore {
            kind,
            namespace,
            name,
            images,
        } => format!(
            "would PATCH {kind} {namespace}/{name} (json patch): replace /spec/template with the snapshot's ({} image(s): {})",
            images.len(),
            images.join(", ")
        ),
        RollbackStep::Restored { target, images } => format!(
            "rolled back {target} to its snapshot template ({})",
            images.join(", ")
        ),
        RollbackStep::RestoreFailed { target, error } => {
            format!("could not roll back {target}: {error}")
        }
        RollbackStep::Superseded { target, by } => {
            let by = by.as_ref().map_or_else(
                || "a later change".to_string(),
                |by| format!("{}, {}", by.named(), by.liveness()),
            );
            format!("{target} superseded by {by}: left as it is (nothing to roll back)")
        }
    };
    writeln!(out, "{}", terminal_safe(&line))
}

/// Said before the wait for the restored workloads starts.
pub fn render_rollback_waiting(out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "\nwaiting for the rollback to take (every serving pod on the snapshot's template):\n"
    )
}

pub fn render_rollback_end(end: &RollbackEnd, out: &mut dyn Write) -> io::Result<()> {
    match end {
        RollbackEnd::NothingChanged { commit, why } => writeln!(
            out,
            "changed since the snapshot of {}: nothing\nnothing to roll back, and nothing is proven: {why}",
            terminal_safe(commit)
        ),
        RollbackEnd::NothingFailed { unproven } => writeln!(
            out,
            "nothing to roll back: nothing that changed has failed{}",
            if *unproven {
                " (some of it is unproven: run verify --snapshot to see why)"
            } else {
                ""
            }
        ),
        RollbackEnd::DryRun => writeln!(out, "dry run: nothing was sent"),
        RollbackEnd::Succeeded => writeln!(
            out,
            "rollback succeeded: everything that failed is back on its snapshot template, and serving from it"
        ),
        RollbackEnd::Failed { serving } => writeln!(
            out,
            "rollback failed: {}",
            if *serving {
                "some failures need the commands above"
            } else {
                "the rolled-back workloads are not serving their snapshot template (see above)"
            }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).expect("writing to a Vec");
        String::from_utf8(out).expect("the renderer writes UTF-8")
    }

    #[test]
    fn exit_codes_follow_the_end() {
        let cases = [
            (
                RollbackEnd::NothingChanged {
                    commit: "abc1234".into(),
                    why: String::new(),
                },
                3,
            ),
            (RollbackEnd::NothingFailed { unproven: true }, 3),
            (RollbackEnd::NothingFailed { unproven: false }, 0),
            (RollbackEnd::DryRun, 1),
            (RollbackEnd::Succeeded, 0),
            (RollbackEnd::Failed { serving: true }, 1),
            (RollbackEnd::Failed { serving: false }, 1),
        ];
        for (end, code) in cases {
            assert_eq!(end.exit_code(), code, "{end:?}");
        }
    }

    #[test]
    fn a_release_is_left_to_helm_with_the_snapshots_revision() {
        let step = RollbackStep::Release {
            namespace: "shop".into(),
            name: "web".into(),
            revision: Some(4),
        };
        assert!(step.needs_hand());
        assert_eq!(
            text(|o| render_rollback_step(&step, o)),
            "release shop/web failed: run `helm rollback web 4 -n shop` (liveproof does not re-implement Helm)\n"
        );
    }

    /// A superseded target is said to be left as it is, with what superseded it, and needs no
    /// person.
    #[test]
    fn a_superseded_target_is_left_as_it_is() {
        let step = RollbackStep::Superseded {
            target: "deployment/shop/web".into(),
            by: Some(Box::new(SupersededBy {
                summary: "ReplicaSet shop/web-6c8d serves now".into(),
                revision: Some("shop/web-6c8d".into()),
                commit: None,
                images: vec!["ghcr.io/acme/web:1.5.0".into()],
                at: Some("2026-07-12T11:00:00Z".into()),
                live: Some(false),
                source_ref: None,
            })),
        };
        assert!(!step.needs_hand());
        assert_eq!(
            text(|o| render_rollback_step(&step, o)),
            "deployment/shop/web superseded by revision shop/web-6c8d, image ghcr.io/acme/web:1.5.0, \
             made 2026-07-12T11:00:00Z, itself not live: left as it is (nothing to roll back)\n"
        );
    }

    #[test]
    fn names_from_the_cluster_cannot_drive_the_terminal() {
        let step = RollbackStep::RestoreFailed {
            target: "deployment/shop/web\u{1b}[2J".into(),
            error: "forbidden".into(),
        };
        let got = text(|o| render_rollback_step(&step, o));
        assert!(!got.contains('\u{1b}'), "{got:?}");
    }
}
