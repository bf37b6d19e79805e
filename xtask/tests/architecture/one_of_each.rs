//! One of each concept (issue 34, deliverable 5): one JSON `kind: List` flattener, one
//! `Finding`, one `Report`, one git runner (`liveproof_process::git`: `LC_ALL=C`,
//! `LANGUAGE=C`, no prompt, bounded).

use xtask::arch::{git_runners, list_flatteners, struct_definitions, Site};

/// At WP0's commit (`cargo xtask arch`, section 1.6): `struct Finding` in evidence's checks,
/// evidence's expect.rs and lint; `struct Report` in evidence's model, traffic.rs and lint;
/// `is_list_kind` asked in evidence's observed.rs, gather's offline.rs (three) and sim;
/// lint's own `Command::new("git")`. Lower a number when a copy goes.
///
/// After WP4: the others are named for what they are (`expect::Outcome`, traffic's `Routing`,
/// `lint::Hazard`, `lint::Linted`), so one `Finding` (a check's) and one `Report` (verify's)
/// are left; lint's `cat-file --batch` goes through `liveproof_process::git_with_input`;
/// evidence's observed.rs, sim and gather's offline.rs call the one flattener
/// (`liveproof_evidence::objects::each_object`); offline.rs's streaming first level remains.
const FINDINGS: usize = 1;
const REPORTS: usize = 1;
const LIST_FLATTENING_SITES: usize = 2;
const GIT_RUNNERS: usize = 0;

/// Where a List may be flattened once gather's `HeldPods::add` and `read_objects` call the one
/// flattener: the flattener itself, and the streaming first level of a large List
/// (`gather::offline::add_json_list`, a memory path PLAN §1.6 keeps).
const LIST_FLATTENING_SITES_AFTER: usize = 2;

struct Copies {
    findings: Vec<Site>,
    reports: Vec<Site>,
    list_flattening: Vec<Site>,
    git_runners: Vec<Site>,
}

fn copies() -> Copies {
    let root = super::root();
    let read = "the sources are readable";
    Copies {
        findings: struct_definitions(&root, "Finding").expect(read),
        reports: struct_definitions(&root, "Report").expect(read),
        list_flattening: list_flatteners(&root).expect(read),
        git_runners: git_runners(&root).expect(read),
    }
}

fn check(what: &str, sites: &[Site], at_most: usize, problems: &mut Vec<String>) {
    if sites.len() > at_most {
        problems.push(format!(
            "{} {what}, at most {at_most}:\n{}",
            sites.len(),
            super::listed(sites)
        ));
    }
}

#[test]
fn no_new_copy_of_one_concept() {
    let c = copies();
    let mut problems = Vec::new();
    check("`struct Finding`", &c.findings, FINDINGS, &mut problems);
    check("`struct Report`", &c.reports, REPORTS, &mut problems);
    check(
        "places flattening a JSON List",
        &c.list_flattening,
        LIST_FLATTENING_SITES,
        &mut problems,
    );
    check(
        "`Command::new(\"git\")` outside crates/process",
        &c.git_runners,
        GIT_RUNNERS,
        &mut problems,
    );
    assert!(
        problems.is_empty(),
        "{}\nuse the one there is (issue 34: one List flattener, one Finding, one Report, \
         liveproof_process::git) or name the new thing for what it is",
        problems.join("\n")
    );
}

#[test]
fn one_finding_one_report_one_git_runner() {
    let c = copies();
    let mut problems = Vec::new();
    check("`struct Finding`", &c.findings, 1, &mut problems);
    check("`struct Report`", &c.reports, 1, &mut problems);
    check(
        "`Command::new(\"git\")` outside crates/process",
        &c.git_runners,
        0,
        &mut problems,
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn one_list_flattener() {
    let c = copies();
    let mut problems = Vec::new();
    check(
        "places flattening a JSON List",
        &c.list_flattening,
        LIST_FLATTENING_SITES_AFTER,
        &mut problems,
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
