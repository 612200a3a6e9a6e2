//! Writing protocol records: one JSON object per line on stdout, flushed per record.

use std::io::Write;

use serde_json::Value;

/// Writes `value` as one line to stdout, as `JSON.stringify` writes it (errors, e.g. a closed
/// pipe, are ignored as pi does).
pub fn write_record(value: &Value) {
    let mut line = crate::sdk::wire::to_line(value);
    line.push('\n');
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.flush();
}

/// Writes text to stdout and flushes.
pub fn write_text(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Writes one already serialized record as a line to stdout and flushes.
pub fn write_line(record: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(record.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}
