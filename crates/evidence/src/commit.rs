//! A git commit named by its SHA, as `--commit` and GitOps revisions give it.

/// Shortest abbreviation accepted (git's default `core.abbrev`).
pub const MIN_SHA_LEN: usize = 7;
/// A whole SHA-1.
pub const MAX_SHA_LEN: usize = 40;

/// Whether `text` names a commit by its SHA, abbreviated or whole: 7 to 40 hex digits. The one
/// rule `--commit`, snapshots and lint's "is this revision pinned" share (it was written out
/// four times).
pub fn is_commit_sha(text: &str) -> bool {
    (MIN_SHA_LEN..=MAX_SHA_LEN).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_to_forty_hex_digits_and_nothing_else() {
        for sha in ["3f2c1ab", "3F2C1AB9", &"a".repeat(40)] {
            assert!(is_commit_sha(sha), "{sha}");
        }
        for not in [
            "",
            "3f2c1a",
            &"a".repeat(41),
            "3f2c1ag",
            "v1.2.3",
            "main",
            " 3f2c1ab",
        ] {
            assert!(!is_commit_sha(not), "{not}");
        }
    }
}
