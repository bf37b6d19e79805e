//! `-o yaml`: the very document `-o json` prints (the same serde model, `liveproof/v1`), as
//! YAML. One serialiser for a report, a fleet and the exit-2 error document, so the two
//! formats cannot drift apart.

use std::io::{self, Write};

use liveproof_evidence::Report;
use serde::Serialize;

/// The report as YAML: what `-o json` prints, key for key.
pub fn render_yaml(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    document(report, out)
}

/// Any model's serde form as one YAML document (no leading `---`, as `kubectl -o yaml`).
pub(crate) fn document<T: Serialize + ?Sized>(value: &T, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    serde_norway::to_writer(&mut out, value).map_err(io::Error::other)?;
    out.flush()
}
