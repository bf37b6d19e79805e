//! A next step: prose a person reads, with the commands in it kept as commands. The CLI
//! completes each command with the flags the user gave (cluster, change, registries) before it
//! prints the step, by walking the parts: nothing searches the sentence for `kubectl`.

use std::fmt;

/// The single most useful thing to do next.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Suggestion {
    parts: Vec<Part>,
}

/// One piece of a [`Suggestion`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Text(String),
    Command(Command),
    /// ` (and wait for it: --wait)`: a step that only time can finish. After a `--wait` that
    /// ran out, the CLI says instead that waiting did not help.
    WaitForIt,
}

/// A command a step suggests: the program, then its words (unquoted; quoting is the
/// printer's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub program: Program,
    pub args: Vec<String>,
    /// A `verify` that states a change of its own (a later change's images or commit), not the
    /// user's: the CLI completes it with how the user reaches the cluster and the registry,
    /// never with the user's change, which would ask the later change to be the earlier one.
    pub states_own_change: bool,
}

/// Who runs a suggested command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    Kubectl,
    Liveproof,
    /// liveproof run as the kubectl plugin (`kubectl liveproof`).
    KubectlPlugin,
}

impl Program {
    pub const fn name(self) -> &'static str {
        match self {
            Program::Kubectl => "kubectl",
            Program::Liveproof => "liveproof",
            Program::KubectlPlugin => "kubectl liveproof",
        }
    }
}

impl Command {
    pub fn kubectl<S: ToString>(args: impl IntoIterator<Item = S>) -> Command {
        Command::new(Program::Kubectl, args)
    }

    /// `liveproof SUBCOMMAND …`: the first word is the subcommand.
    pub fn liveproof<S: ToString>(args: impl IntoIterator<Item = S>) -> Command {
        Command::new(Program::Liveproof, args)
    }

    fn new<S: ToString>(program: Program, args: impl IntoIterator<Item = S>) -> Command {
        Command {
            program,
            args: args.into_iter().map(|a| a.to_string()).collect(),
            states_own_change: false,
        }
    }

    /// The same command, marked as stating its own change (see [`Command::states_own_change`]).
    pub fn stating_its_own_change(mut self) -> Command {
        self.states_own_change = true;
        self
    }

    /// For liveproof's own commands, the subcommand (`verify`, `stale`, …).
    pub fn subcommand(&self) -> Option<&str> {
        match self.program {
            Program::Kubectl => None,
            Program::Liveproof | Program::KubectlPlugin => self.args.first().map(String::as_str),
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.program.name())?;
        for arg in &self.args {
            write!(f, " {}", shell_word(arg))?;
        }
        Ok(())
    }
}

impl Suggestion {
    /// A step in words only.
    pub fn text(text: impl Into<String>) -> Suggestion {
        Suggestion {
            parts: vec![Part::Text(text.into())],
        }
    }

    /// A step that is just a command.
    pub fn run(command: Command) -> Suggestion {
        Suggestion {
            parts: vec![Part::Command(command)],
        }
    }

    /// More words after what is there.
    pub fn then(mut self, text: impl Into<String>) -> Suggestion {
        self.parts.push(Part::Text(text.into()));
        self
    }

    /// A command after what is there.
    pub fn command(mut self, command: Command) -> Suggestion {
        self.parts.push(Part::Command(command));
        self
    }

    /// Ends the step by saying it waits for time (see [`Part::WaitForIt`]).
    pub fn wait_for_it(mut self) -> Suggestion {
        self.parts.push(Part::WaitForIt);
        self
    }

    /// The same step, introduced by `text` (another target's step, told as this one's).
    pub fn after(mut self, text: impl Into<String>) -> Suggestion {
        self.parts.insert(0, Part::Text(text.into()));
        self
    }

    /// Whether the step tells to wait: a `--wait` command, or [`Part::WaitForIt`]. A failure
    /// waiting will not fix must never be answered with one.
    pub fn proposes_waiting(&self) -> bool {
        self.parts.iter().any(|p| match p {
            Part::WaitForIt => true,
            Part::Command(c) => c.args.iter().any(|a| a == "--wait"),
            Part::Text(_) => false,
        })
    }

    /// Its parts, for a renderer that sets the commands apart from the prose (Markdown's
    /// code blocks).
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// Its parts, for the CLI to complete the commands in place.
    pub fn parts_mut(&mut self) -> &mut [Part] {
        &mut self.parts
    }
}

/// The words a step ends with when only time can finish it.
pub const WAIT_FOR_IT: &str = " (and wait for it: --wait)";

impl fmt::Display for Suggestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in &self.parts {
            match part {
                Part::Text(text) => f.write_str(text)?,
                Part::Command(command) => write!(f, "{command}")?,
                Part::WaitForIt => f.write_str(WAIT_FOR_IT)?,
            }
        }
        Ok(())
    }
}

impl From<&str> for Suggestion {
    fn from(text: &str) -> Suggestion {
        Suggestion::text(text)
    }
}

impl From<String> for Suggestion {
    fn from(text: String) -> Suggestion {
        Suggestion::text(text)
    }
}

impl From<Command> for Suggestion {
    fn from(command: Command) -> Suggestion {
        Suggestion::run(command)
    }
}

/// In JSON a step is the sentence a person reads; read back, it is that sentence as words.
impl serde::Serialize for Suggestion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Suggestion {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Suggestion::text)
    }
}

impl schemars::JsonSchema for Suggestion {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "String".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

/// A word as a POSIX shell reads it back: as is when it is plain, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,…".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_reads_as_one_sentence_with_its_commands_quoted_for_a_shell() {
        let step = Suggestion::text("see why: ")
            .command(Command::kubectl([
                "-n",
                "apps",
                "get",
                "pods",
                "-l",
                "tier in (web,api)",
            ]))
            .then(" first")
            .wait_for_it();
        assert_eq!(
            step.to_string(),
            "see why: kubectl -n apps get pods -l 'tier in (web,api)' first (and wait for it: --wait)"
        );
        assert_eq!(
            serde_json::to_value(&step).expect("json"),
            serde_json::Value::String(step.to_string())
        );
    }

    #[test]
    fn only_liveproofs_own_commands_have_a_subcommand() {
        assert_eq!(
            Command::liveproof(["stale", "deploy/web"]).subcommand(),
            Some("stale")
        );
        assert_eq!(Command::kubectl(["get", "pods"]).subcommand(), None);
    }
}
