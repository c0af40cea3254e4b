//! The JSON format: the typed reports, serialized as they are.

use std::io::{self, Write};

use crate::model::{Output, Report, SCHEMA_VERSION};

pub(super) fn render(reports: &[Report], out: &mut dyn Write) -> io::Result<()> {
    let summary = crate::summary::summarize(reports);
    let output = Output {
        schema_version: SCHEMA_VERSION,
        crash_signature_version: crate::signature::VERSION,
        summary: &summary,
        reports,
    };
    serde_json::to_writer_pretty(&mut *out, &output)?;
    writeln!(out)
}
