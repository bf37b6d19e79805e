//! `-o html`.
use std::io::{self, Write};

use liveproof_evidence::Report;

pub fn render_html(_report: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<!doctype html>")
}
