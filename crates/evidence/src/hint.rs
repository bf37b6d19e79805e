//! How an error says what to do about it: a hint kept apart from the message (uv's `Hint`),
//! never a `hint:` line written into the message and searched for later. The CLI prints the
//! message, then each hint line as `hint: …`; `-o json` puts it in the error document's `hint`.

use std::borrow::Cow;
use std::fmt;

/// An error that may say how to fix it. Its `Display` is the message alone; an error that
/// wraps another (`#[source]`, `#[from]`, `transparent`) gives the inner one's hint too.
pub trait Hinted: std::error::Error {
    /// What to do about it; `None` when there is nothing better than the message. Several
    /// hints are one line each.
    fn hint(&self) -> Option<Cow<'_, str>>;

    /// The message, then each hint line as `hint: …`: the error as a person reads it whole
    /// (a log line, an error field in a report).
    fn with_hint(&self) -> WithHint<'_, Self>
    where
        Self: Sized,
    {
        WithHint(self)
    }
}

/// An error shown with its hint; see [`Hinted::with_hint`].
pub struct WithHint<'a, E: ?Sized>(&'a E);

impl<E: Hinted + ?Sized> fmt::Display for WithHint<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        for line in self.0.hint().iter().flat_map(|h| h.lines()) {
            write!(f, "\nhint: {line}")?;
        }
        Ok(())
    }
}

/// An error made where it is raised, with no enum of its own (a command's own refusal): a
/// message and a hint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HintedMessage {
    pub message: String,
    pub hint: String,
}

impl HintedMessage {
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> HintedMessage {
        HintedMessage {
            message: message.into(),
            hint: hint.into(),
        }
    }
}

impl Hinted for HintedMessage {
    fn hint(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(&self.hint))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_hint_puts_each_hint_line_after_the_message() {
        let err = HintedMessage::new("--commit x: not found", "fetch it\nor pass --since");
        assert_eq!(err.to_string(), "--commit x: not found");
        assert_eq!(
            err.with_hint().to_string(),
            "--commit x: not found\nhint: fetch it\nhint: or pass --since"
        );
    }

    #[test]
    fn a_message_that_looks_like_a_hint_stays_the_message() {
        let err = HintedMessage::new("selector `a\nhint: b`", "quote it");
        assert_eq!(err.to_string(), "selector `a\nhint: b`");
        assert_eq!(err.hint().as_deref(), Some("quote it"));
    }
}
