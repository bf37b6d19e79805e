//! `-o html` in a real browser: Debian's Chromium, headless, loads the page the binary wrote
//! (a file, no server) and the test reads what it rendered — the DOM it dumps (the verdict,
//! each target, the SVG timeline's marks with their times) and a screenshot's size — for a
//! deploy that is not live (a crash loop, the old pods still serving) and one that is.
//!
//! Without `chromium` on PATH (or `LIVEPROOF_CHROMIUM`) the browser tests say so loudly and
//! pass, on a developer's machine only: CI installs Chromium (.ci/run) and sets
//! `LIVEPROOF_REQUIRE_CHROMIUM=1`, under which a missing browser fails them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use liveproof_testkit::story::scenarios_dir;

const SINCE: &str = "2026-07-12T10:00:00Z";

/// The page `verify … -o html` prints for a story's dump, and its exit code.
fn html_of(story: &str, args: &[&str]) -> (String, i32) {
    let dump = scenarios_dir().join(story).join("cluster.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .arg("verify")
        .args(args)
        .arg("--from")
        .arg(&dump)
        .args(["-o", "html"])
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("liveproof runs");
    (
        String::from_utf8(out.stdout).expect("UTF-8"),
        out.status.code().unwrap_or(-1),
    )
}

fn crash_loop() -> (String, i32) {
    html_of(
        "new-pod-crashloopbackoff-old-pods-serving",
        &[
            "deployment/inventory",
            "-n",
            "apps",
            "--since",
            SINCE,
            "--image",
            "ghcr.io/acme/inventory:1.4.0",
        ],
    )
}

fn rolled_out() -> (String, i32) {
    html_of(
        "statefulset-rolled-out",
        &story_args("statefulset-rolled-out")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    )
}

/// A story's own `args:` (its verify command line).
fn story_args(story: &str) -> Vec<String> {
    let text = std::fs::read_to_string(scenarios_dir().join(story).join("story.yaml"))
        .expect("story.yaml");
    let doc: serde_json::Value = serde_norway::from_str(&text).expect("story YAML");
    doc["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("an arg").to_string())
        .collect()
}

/// The page fetches nothing and runs nothing: every style and drawing is inline.
#[test]
fn the_page_is_self_contained() {
    for (html, _) in [crash_loop(), rolled_out()] {
        assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
        assert!(html.contains("default-src 'none'"), "no CSP:\n{html}");
        for outside in ["<script", "<link", "<img", "<iframe", "@import", "url("] {
            assert!(!html.contains(outside), "{outside} in:\n{html}");
        }
        // The only URL is the SVG namespace, which names and fetches nothing.
        let urls: Vec<&str> = html
            .match_indices("://")
            .map(|(i, _)| (html[..i].rfind(['"', ' ', '(']).map_or(0, |s| s + 1), ()))
            .map(|(i, _)| &html[i..(i + 30).min(html.len())])
            .filter(|u| !u.starts_with("http://www.w3.org/2000/svg"))
            .collect();
        assert!(urls.is_empty(), "{urls:?}");
        assert!(html.contains("<svg class=\"timeline\""), "{html}");
    }
}

/// `--report` is given as often as files are wanted, each in its extension's format: the
/// Action writes JSON, Markdown and HTML in one run.
#[test]
fn one_run_writes_a_report_per_report_flag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = scenarios_dir()
        .join("new-pod-crashloopbackoff-old-pods-serving")
        .join("cluster.yaml");
    let files = ["report.json", "report.md", "report.html"].map(|f| dir.path().join(f));
    let mut verify = Command::new(env!("CARGO_BIN_EXE_liveproof"));
    verify
        .args([
            "verify",
            "deployment/inventory",
            "-n",
            "apps",
            "--since",
            SINCE,
        ])
        .arg("--from")
        .arg(&dump)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null());
    for file in &files {
        verify.arg("--report").arg(file);
    }
    let out = verify.output().expect("liveproof runs");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let read = |i: usize| std::fs::read_to_string(&files[i]).expect("written");
    let json: serde_json::Value = serde_json::from_str(&read(0)).expect("JSON");
    assert_eq!(json["verdict"], "not_live");
    assert!(
        read(1).starts_with("## ❌ liveproof: not live"),
        "{}",
        read(1)
    );
    assert!(read(2).starts_with("<!DOCTYPE html>"), "{}", read(2));

    // --report-format names one file's format: with several it is refused, not applied to all.
    let out = Command::new(env!("CARGO_BIN_EXE_liveproof"))
        .args([
            "verify",
            "deployment/inventory",
            "-n",
            "apps",
            "--since",
            SINCE,
        ])
        .arg("--from")
        .arg(&dump)
        .arg("--report")
        .arg(&files[0])
        .arg("--report")
        .arg(&files[1])
        .args(["--report-format", "json"])
        .env_remove("KUBECONFIG")
        .output()
        .expect("liveproof runs");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("--report-format with 2 --report files"),
        "{said}"
    );
    assert!(said.contains("hint: "), "{said}");
}

/// The browser, or why there is none (a failure under `LIVEPROOF_REQUIRE_CHROMIUM=1`).
#[expect(
    clippy::print_stderr,
    reason = "a skipped browser test says so where the test's output is read"
)]
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("LIVEPROOF_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("PATH").and_then(|path| {
                std::env::split_paths(&path)
                    .flat_map(|dir| ["chromium", "chromium-browser"].map(|n| dir.join(n)))
                    .find(|p| p.is_file())
            })
        });
    if found.is_none() {
        let required = std::env::var("LIVEPROOF_REQUIRE_CHROMIUM").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "LIVEPROOF_REQUIRE_CHROMIUM=1 and no chromium on PATH: apt-get install -y chromium (or set LIVEPROOF_CHROMIUM)"
        );
        eprintln!(
            "\n\n*** SKIPPED: no chromium on PATH, so -o html was not loaded in a browser. \
             apt-get install -y chromium (CI does, and requires it) ***\n"
        );
    }
    found
}

/// Runs headless Chromium on `page` with `args` (a profile of its own, nothing fetched), at most
/// two minutes; its stdout.
fn run_chromium(browser: &Path, page: &Path, args: &[&str]) -> String {
    let profile = tempfile::tempdir().expect("profile dir");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).map(|_| text)
    });
    let finished = liveproof_testkit::wait::within(
        Duration::from_secs(120),
        Duration::from_millis(100),
        || child.try_wait().expect("chromium's status"),
    );
    if finished.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("chromium did not finish within 2 minutes");
    }
    reader
        .join()
        .expect("reader")
        .expect("chromium's stdout is text")
}

/// The page's DOM as Chromium built it.
fn dom_of(browser: &Path, html: &str) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("report.html");
    std::fs::write(&page, html).expect("page written");
    let dom = run_chromium(browser, &page, &["--dump-dom"]);
    assert!(dom.contains("<body"), "no DOM dumped:\n{dom}");
    dom
}

/// A screenshot's PNG bytes, `1000×1200`.
fn screenshot_of(browser: &Path, html: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("report.html");
    std::fs::write(&page, html).expect("page written");
    let png = dir.path().join("shot.png");
    run_chromium(
        browser,
        &page,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1000,1200",
            "--hide-scrollbars",
        ],
    );
    std::fs::read(&png).expect("chromium wrote the screenshot")
}

/// A PNG's width and height, from its IHDR chunk.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&png[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

#[test]
fn a_crash_loop_renders_in_chromium_with_its_timeline() {
    let Some(browser) = chromium() else { return };
    let (html, code) = crash_loop();
    assert_eq!(code, 1, "not_live");
    let dom = dom_of(&browser, &html);
    // The verdict, first.
    assert!(
        dom.contains(
            "<header id=\"verdict\" class=\"verdict not_live\" data-verdict=\"not_live\">"
        ),
        "{dom}"
    );
    assert!(dom.contains("✗ liveproof: not live"), "{dom}");
    // The target, its failed checks and why.
    assert!(
        dom.contains(
            "<section class=\"target not_live\" id=\"target-0\" data-verdict=\"not_live\">"
        ),
        "{dom}"
    );
    assert!(dom.contains("Deployment apps/inventory"), "{dom}");
    assert!(dom.contains("data-check=\"pods_current\""), "{dom}");
    assert!(dom.contains("CrashLoopBackOff"), "{dom}");
    // The timeline: the change, the revision written, the crash, each at its time; the band
    // from the revision to the check names what failed.
    assert!(
        dom.contains("<svg class=\"timeline\" id=\"timeline-0\""),
        "{dom}"
    );
    for (event, at, clock) in [
        ("change", "2026-07-12T10:00:00Z", "10:00:00"),
        ("template_written", "2026-07-12T10:06:10Z", "10:06:10"),
        ("diagnostic", "2026-07-12T10:12:43Z", "10:12:43"),
    ] {
        let mark = format!("data-event=\"{event}\" data-at=\"{at}\"");
        let start = dom
            .find(&mark)
            .unwrap_or_else(|| panic!("no {event} mark at {at}:\n{dom}"));
        let end = start + dom[start..].find("</g>").expect("mark closed");
        assert!(dom[start..end].contains(clock), "{}", &dom[start..end]);
    }
    assert!(
        dom.contains("not live: rollout_complete, pods_current, pod_spec, pod_restarted"),
        "{dom}"
    );
    assert!(dom.contains("data-event=\"checked\""), "{dom}");
    // Under the axis, each revision's pods: the new one crash-looping, never Ready, its last
    // crash crossed; the old ones Ready since the week before and still serving.
    let lane = |pod: &str| {
        let at = dom
            .find(&format!("data-pod=\"{pod}\""))
            .unwrap_or_else(|| panic!("no lane for {pod}:\n{dom}"));
        let start = dom[..at].rfind("<g ").expect("lane opened");
        let end = start + dom[start..].find("</g>").expect("lane closed");
        dom[start..end].to_string()
    };
    assert!(
        dom.contains(">current revision ReplicaSet inventory-4dxbdm5glx: 1 pod, 0 serving<"),
        "{dom}"
    );
    assert!(
        dom.contains(">old revision ReplicaSet inventory-8sktb26vtc: 3 pods, 3 still serving<"),
        "{dom}"
    );
    let new = lane("inventory-4dxbdm5glx-tqtkw");
    assert!(new.contains("class=\"lane new not-ready crash\""), "{new}");
    assert!(
        new.contains("not Ready: inventory CrashLoopBackOff (5 restarts)"),
        "{new}"
    );
    assert!(new.contains("<rect class=\"pending\""), "{new}");
    assert!(
        new.contains("class=\"crash-mark\" data-at=\"2026-07-12T10:12:43Z\""),
        "{new}"
    );
    for old in [
        "inventory-8sktb26vtc-2nrqk",
        "inventory-8sktb26vtc-b4fnh",
        "inventory-8sktb26vtc-7fgr7",
    ] {
        let old = lane(old);
        assert!(
            old.contains("class=\"lane old serving old-serving\""),
            "{old}"
        );
        assert!(old.contains("still serving (old revision)"), "{old}");
        assert!(old.contains("<rect class=\"up\""), "{old}");
    }
    assert!(
        dom.contains("Verdict: <code>not_live</code> (exit 1)"),
        "{dom}"
    );

    let shot = screenshot_of(&browser, &html);
    assert_eq!(png_size(&shot), (1000, 1200));
    // A blank page of the same size compresses to almost nothing; this one holds a picture.
    let blank = screenshot_of(
        &browser,
        "<!DOCTYPE html><html><body style=\"background:#fff\"></body></html>",
    );
    assert_eq!(png_size(&blank), (1000, 1200));
    assert!(
        shot.len() > 4 * blank.len() && shot.len() > 20_000,
        "the screenshot looks blank: {} bytes (a blank page: {})",
        shot.len(),
        blank.len()
    );
}

#[test]
fn a_live_deploy_renders_in_chromium_with_its_lead_time() {
    let Some(browser) = chromium() else { return };
    let (html, code) = rolled_out();
    assert_eq!(code, 0, "live:\n{html}");
    let dom = dom_of(&browser, &html);
    assert!(dom.contains("data-verdict=\"live\""), "{dom}");
    assert!(dom.contains("✓ liveproof: live"), "{dom}");
    assert!(dom.contains("id=\"target-0\""), "{dom}");
    // live_since is marked on the timeline, and the band from the change to it is the lead time.
    let live = dom
        .find("live-since\" data-event=")
        .unwrap_or_else(|| panic!("no live_since mark:\n{dom}"));
    assert!(dom[live..].contains("(live since)"), "{dom}");
    assert!(dom.contains("<g class=\"band lead-time\""), "{dom}");
    assert!(dom.contains("lead time "), "{dom}");
    // Its pods, all of the current revision, Ready and serving.
    assert!(dom.contains("<g class=\"lanes\">"), "{dom}");
    assert!(dom.contains("<text class=\"revision new\""), "{dom}");
    assert!(dom.contains("<g class=\"lane new serving\""), "{dom}");
    assert!(!dom.contains("<g class=\"lane old"), "{dom}");
    let shot = screenshot_of(&browser, &html);
    assert_eq!(png_size(&shot), (1000, 1200));
    assert!(shot.len() > 20_000, "{} bytes", shot.len());
}
