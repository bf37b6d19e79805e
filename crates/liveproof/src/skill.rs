//! `liveproof skill`: the agent procedure, compiled into the binary so the procedure an agent
//! is given always matches the commands and flags of the binary it runs.

use std::io::Write;

/// The bundled procedure (`crates/liveproof/SKILL.md`), printed as is.
pub const SKILL: &str = include_str!("../SKILL.md");

pub fn run(out: &mut dyn Write) -> anyhow::Result<u8> {
    out.write_all(SKILL.as_bytes())?;
    Ok(0)
}
