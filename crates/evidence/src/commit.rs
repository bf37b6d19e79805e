//! A git commit named by its SHA, as `--commit` and GitOps revisions give it.

use std::fmt;
use std::str::FromStr;

/// A commit SHA, abbreviated or whole: 7 to 40 hex digits (the one rule `--commit`, snapshots
/// and lint's "is this revision pinned" share; it was written out three times).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommitSha(String);

/// Text that is not 7 to 40 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a commit: give 7 to 40 hex digits")]
pub struct NotACommit(pub String);

impl CommitSha {
    /// Shortest abbreviation accepted (git's default `core.abbrev`).
    pub const MIN_LEN: usize = 7;
    /// A whole SHA-1.
    pub const MAX_LEN: usize = 40;

    /// Whether `text` names a commit by its SHA.
    pub fn is_sha(text: &str) -> bool {
        (Self::MIN_LEN..=Self::MAX_LEN).contains(&text.len())
            && text.bytes().all(|b| b.is_ascii_hexdigit())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for CommitSha {
    type Err = NotACommit;

    fn from_str(text: &str) -> Result<Self, NotACommit> {
        if Self::is_sha(text) {
            Ok(Self(text.to_owned()))
        } else {
            Err(NotACommit(text.to_owned()))
        }
    }
}

impl fmt::Display for CommitSha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_to_forty_hex_digits_and_nothing_else() {
        for sha in ["3f2c1ab", "3F2C1AB9", &"a".repeat(40)] {
            assert_eq!(
                sha.parse::<CommitSha>().map(|c| c.to_string()),
                Ok(sha.to_owned())
            );
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
            assert_eq!(not.parse::<CommitSha>(), Err(NotACommit(not.to_owned())));
            assert!(!CommitSha::is_sha(not));
        }
    }
}
