//! A missing peer fails the real-cluster tests with a message saying how to provision it (never
//! a skip).

use liveproof_testkit::e2e::control_plane::{repo_root, Peers, PEERS, SCHEMAS};

#[test]
fn missing_peers_fail_saying_how_to_build_them() {
    let empty = tempfile::tempdir().expect("tempdir");
    // The script's own check, on an empty cache: fails, naming each piece and the command.
    let out = std::process::Command::new("bash")
        .arg(repo_root().join("e2e/build-peers.sh"))
        .arg("--check")
        .env("LIVEPROOF_PEERS_CACHE", empty.path())
        .output()
        .expect("bash runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("run `cargo xtask peers`"), "{stderr}");
    for peer in PEERS
        .into_iter()
        .chain(SCHEMAS)
        .chain(liveproof_testkit::e2e::controllers::PEERS)
    {
        assert!(
            stderr.contains(&format!("/bin/{peer} (")),
            "no line for {peer}: {stderr}"
        );
    }

    // A directory that lacks them: the error names the missing binary and the fix.
    // (The only test in this binary, so setting the variable races with nothing.)
    std::env::set_var("LIVEPROOF_PEERS_BIN", empty.path());
    let err = Peers::locate().expect_err("no peers there");
    let message = format!("{err:#}");
    assert!(message.contains("etcd is missing"), "{message}");
    assert!(message.contains("cargo xtask test"), "{message}");
}
