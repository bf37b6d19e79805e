//! The tests find what `cargo xtask test` provisioned: its variables first, else the peers'
//! bin directory (and the venv beside it); a missing tool says to run `cargo xtask test`.
//! (The only test in this binary, so setting variables races with nothing.)

use std::path::Path;

use liveproof_testkit::peers;

const VARIABLES: [&str; 4] = [
    "LIVEPROOF_PEERS_BIN",
    "LIVEPROOF_KUBECTL",
    "LIVEPROOF_REGISTRY",
    "LIVEPROOF_PYTHON",
];

fn touch(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, "").expect("write");
}

#[test]
fn the_tools_come_from_the_variables_else_from_the_peers_cache() {
    for variable in VARIABLES {
        std::env::remove_var(variable);
    }
    let cache = tempfile::tempdir().expect("tempdir");
    let bin = cache.path().join("key/bin");
    for tool in ["registry", "kubectl"] {
        touch(&bin.join(tool));
    }
    touch(&cache.path().join("key/venv/bin/python"));
    std::env::set_var("LIVEPROOF_PEERS_BIN", &bin);

    assert_eq!(peers::registry().expect("registry"), bin.join("registry"));
    assert_eq!(peers::kubectl().expect("kubectl"), bin.join("kubectl"));
    let python = peers::python().expect("python");
    assert_eq!(
        python.canonicalize().expect("python exists"),
        cache
            .path()
            .join("key/venv/bin/python")
            .canonicalize()
            .expect("canonical")
    );
    assert_eq!(
        liveproof_testkit::kubectl::kubectl_path(),
        bin.join("kubectl")
    );

    // A variable wins over the cache.
    let elsewhere = cache.path().join("elsewhere");
    for (variable, lookup) in [
        ("LIVEPROOF_KUBECTL", peers::kubectl as fn() -> _),
        ("LIVEPROOF_REGISTRY", peers::registry),
        ("LIVEPROOF_PYTHON", peers::python),
    ] {
        std::env::set_var(variable, &elsewhere);
        assert_eq!(lookup().expect(variable), elsewhere, "{variable}");
        std::env::remove_var(variable);
    }

    // Not there: the error names what and where, and the command that provisions it.
    let empty = cache.path().join("empty/bin");
    std::fs::create_dir_all(&empty).expect("mkdir");
    std::env::set_var("LIVEPROOF_PEERS_BIN", &empty);
    for (lookup, named) in [
        (peers::registry as fn() -> _, "registry"),
        (peers::kubectl, "kubectl"),
        (peers::python, "venv/bin/python"),
    ] {
        let message = lookup().expect_err("missing").to_string();
        assert!(message.contains(named), "{message}");
        assert!(
            message.contains("hint: run `cargo xtask test`"),
            "{message}"
        );
    }
}
