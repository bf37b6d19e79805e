//! Typed MCP (issue 34, deliverable 3): a tool call deserialises into the CLI's own argument
//! structs and is checked by the functions the CLI calls; the MCP server builds no command line
//! and parses none again, and reads no flag back out of a string (which files and kubeconfigs
//! a call names are typed paths, compared canonically in `mcp/allow.rs`).

use xtask::arch::{mcp_command_lines, MCP_DIR};

#[test]
fn mcp_builds_and_parses_no_command_line() {
    let sites = mcp_command_lines(&super::root()).expect("the MCP sources are readable");
    assert!(
        sites.is_empty(),
        "{MCP_DIR} builds or parses a command line ({} lines):\n{}\ndeserialise the tool's \
         arguments into the CLI's argument structs (VerifyArgs, ReleaseShowArgs, StaleArgs) \
         and check them with the functions the CLI calls",
        sites.len(),
        super::listed(&sites)
    );
}

/// The pattern finds what the server did before (WP6): an `Argv`, clap parsing it again, a
/// flag cut out of it.
#[test]
fn the_pattern_finds_a_command_line() {
    let pattern = regex::Regex::new(xtask::arch::COMMAND_LINE_PATTERN).expect("a pattern");
    for line in [
        "let cli = Cli::try_parse_from(&call.argv).map_err(|e| clap_message(&e))?;",
        "struct Argv(Vec<String>);",
        ".find_map(|a| a.strip_prefix(\"--kubeconfig=\"))?;",
    ] {
        assert!(pattern.is_match(line), "{line}");
    }
    assert!(!pattern.is_match("let request = VerifyRequest::parse(args)?;"));
}
