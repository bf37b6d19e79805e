//! `-o json`: exactly the docs/design.md shape, which is the serde form of [`Report`].

use std::io::{self, Write};

use liveproof_evidence::Report;

/// Pretty-printed JSON with a trailing newline.
pub fn render_json(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    serde_json::to_writer_pretty(&mut out, report)?;
    out.write_all(b"\n")?;
    out.flush()
}
