//! Streaming output of a process with bounded memory (pi's `OutputAccumulator`).
//!
//! Chunks are decoded as a stream of UTF-8 (invalid bytes become U+FFFD); only a rolling tail is
//! kept for display snapshots. Once the output passes the line or byte limit, everything (the raw
//! bytes) goes to a temp file `$TMPDIR/<prefix>-<16 hex>.log`, mode 0600, whose path is reported.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

use super::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, TruncationOptions, TruncationResult, truncate_tail,
};

/// Incremental UTF-8 decoder that carries an incomplete sequence over to the next chunk.
#[derive(Default)]
pub(crate) struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    pub(crate) fn decode(&mut self, chunk: &[u8], last: bool) -> String {
        self.pending.extend_from_slice(chunk);
        let mut out = String::new();
        let mut input: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(input) {
                Ok(s) => {
                    out.push_str(s);
                    input = &[];
                    break;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    out.push_str(std::str::from_utf8(&input[..valid]).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            out.push('\u{FFFD}');
                            input = &input[valid + n..];
                        }
                        None => {
                            input = &input[valid..];
                            if last {
                                out.push('\u{FFFD}');
                                input = &[];
                            }
                            break;
                        }
                    }
                }
            }
        }
        self.pending = input.to_vec();
        out
    }
}

/// A snapshot of the output for display: its tail, the truncation, and the temp file if any.
#[derive(Clone, Debug)]
pub struct OutputSnapshot {
    /// The kept tail.
    pub content: String,
    /// Truncation over the whole output.
    pub truncation: TruncationResult,
    /// The file holding the full output, once it was needed.
    pub full_output_path: Option<String>,
}

/// Accumulates process output. See the module documentation.
pub struct OutputAccumulator {
    max_lines: usize,
    max_bytes: usize,
    max_rolling_bytes: usize,
    prefix: String,
    decoder: Utf8Stream,
    raw_chunks: Vec<u8>,
    tail_text: String,
    tail_starts_at_line_boundary: bool,
    total_raw_bytes: usize,
    total_decoded_bytes: usize,
    completed_lines: usize,
    total_lines: usize,
    current_line_bytes: usize,
    has_open_line: bool,
    finished: bool,
    temp_path: Option<String>,
    temp_file: Option<File>,
}

/// The temp directory as Node's `os.tmpdir()` gives it (`$TMPDIR` without a trailing slash).
pub fn temp_dir() -> String {
    let dir = std::env::temp_dir().to_string_lossy().into_owned();
    if dir.len() > 1 { dir.trim_end_matches('/').to_owned() } else { dir }
}

fn random_hex16() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut h = RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

/// Creates a new output file `<tmp>/<prefix>-<16 hex><ext>` readable only by the user.
pub fn create_output_file(prefix: &str, ext: &str) -> std::io::Result<(String, File)> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = temp_dir();
    let mut last_err = None;
    for _ in 0..8 {
        let path = format!("{dir}/{prefix}-{}{ext}", random_hex16());
        match std::fs::OpenOptions::new().read(true).write(true).create_new(true).mode(0o600).open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err.unwrap_or_else(|| std::io::Error::other("could not create an output file")))
}

impl OutputAccumulator {
    /// An accumulator with pi's limits (2000 lines, 50 KiB) and temp files named `<prefix>-….log`.
    pub fn new(prefix: &str) -> Self {
        Self::with_limits(prefix, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    }

    /// An accumulator with other limits.
    pub fn with_limits(prefix: &str, max_lines: usize, max_bytes: usize) -> Self {
        OutputAccumulator {
            max_lines,
            max_bytes,
            max_rolling_bytes: (max_bytes * 2).max(1),
            prefix: prefix.to_owned(),
            decoder: Utf8Stream::default(),
            raw_chunks: Vec::new(),
            tail_text: String::new(),
            tail_starts_at_line_boundary: true,
            total_raw_bytes: 0,
            total_decoded_bytes: 0,
            completed_lines: 0,
            total_lines: 0,
            current_line_bytes: 0,
            has_open_line: false,
            finished: false,
            temp_path: None,
            temp_file: None,
        }
    }

    /// Adds a chunk of raw output.
    pub fn append(&mut self, data: &[u8]) {
        if self.finished {
            return;
        }
        self.total_raw_bytes += data.len();
        let text = self.decoder.decode(data, false);
        self.append_decoded(&text);
        if self.temp_file.is_some() || self.should_use_temp_file() {
            self.ensure_temp_file();
            self.write_temp(data);
        } else {
            self.raw_chunks.extend_from_slice(data);
        }
    }

    /// Ends the output (flushes the decoder).
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let text = self.decoder.decode(&[], true);
        self.append_decoded(&text);
        if self.should_use_temp_file() {
            self.ensure_temp_file();
        }
    }

    /// The display snapshot; with `persist_if_truncated`, a truncated output gets its temp file.
    pub fn snapshot(&mut self, persist_if_truncated: bool) -> OutputSnapshot {
        let mut text = self.snapshot_text();
        if text.is_empty() {
            text = &self.tail_text;
        }
        let tail = truncate_tail(text, TruncationOptions { max_lines: self.max_lines, max_bytes: self.max_bytes });
        let truncated = self.total_lines > self.max_lines || self.total_decoded_bytes > self.max_bytes;
        let truncated_by = truncated.then(|| {
            tail.truncated_by.unwrap_or(if self.total_decoded_bytes > self.max_bytes {
                TruncatedBy::Bytes
            } else {
                TruncatedBy::Lines
            })
        });
        let truncation = TruncationResult {
            truncated,
            truncated_by,
            total_lines: self.total_lines,
            total_bytes: self.total_decoded_bytes,
            max_lines: self.max_lines,
            max_bytes: self.max_bytes,
            ..tail
        };
        if persist_if_truncated && truncation.truncated {
            self.ensure_temp_file();
        }
        OutputSnapshot { content: truncation.content.clone(), truncation, full_output_path: self.temp_path.clone() }
    }

    /// Flushes and closes the temp file.
    pub fn close_temp_file(&mut self) {
        if let Some(Err(e)) = self.temp_file.take().map(|mut f| f.flush()) {
            tracing::warn!("flushing bash output file failed: {e}");
        }
    }

    /// The whole output for programs; over `max_bytes` raw bytes, its first and last halves around
    /// a `[... N bytes omitted ...]` marker. Returns the text and whether it was shortened.
    pub fn read_full_output(&self, max_bytes: usize) -> (String, bool) {
        let Some(path) = &self.temp_path else {
            return (String::from_utf8_lossy(&self.raw_chunks).into_owned(), false);
        };
        let read = || -> std::io::Result<(String, bool)> {
            let mut f = File::open(path)?;
            let size = f.metadata()?.len() as usize;
            if size <= max_bytes {
                let mut all = Vec::with_capacity(size);
                f.read_to_end(&mut all)?;
                return Ok((String::from_utf8_lossy(&all).into_owned(), false));
            }
            let head_len = max_bytes / 2;
            let tail_len = max_bytes - head_len;
            let mut head = vec![0u8; head_len];
            f.read_exact(&mut head)?;
            let mut tail = vec![0u8; tail_len];
            f.seek(SeekFrom::Start((size - tail_len) as u64))?;
            f.read_exact(&mut tail)?;
            // The head drops an incomplete trailing character; the tail skips continuation bytes.
            let mut dec = Utf8Stream::default();
            let head_text = dec.decode(&head, false);
            let start = tail.iter().position(|b| b & 0xc0 != 0x80).unwrap_or(tail.len());
            let tail_text = String::from_utf8_lossy(&tail[start..]);
            let omitted = size - head_len - tail_len;
            Ok((format!("{head_text}\n\n[... {omitted} bytes omitted ...]\n\n{tail_text}"), true))
        };
        read().unwrap_or_else(|e| (format!("[could not read full output: {e}]"), true))
    }

    /// Bytes of the last (unterminated or last) line.
    pub fn last_line_bytes(&self) -> usize {
        self.current_line_bytes
    }

    fn append_decoded(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let bytes = text.len();
        self.total_decoded_bytes += bytes;
        self.tail_text.push_str(text);
        if self.tail_text.len() > self.max_rolling_bytes * 2 {
            self.trim_tail();
        }
        let newlines = text.bytes().filter(|&b| b == b'\n').count();
        if newlines == 0 {
            self.current_line_bytes += bytes;
            self.has_open_line = true;
        } else {
            self.completed_lines += newlines;
            let last = text.rfind('\n').map_or(0, |i| i + 1);
            self.current_line_bytes = bytes - last;
            self.has_open_line = last < bytes;
        }
        self.total_lines = self.completed_lines + usize::from(self.has_open_line);
    }

    fn trim_tail(&mut self) {
        let len = self.tail_text.len();
        if len <= self.max_rolling_bytes {
            return;
        }
        let mut start = len - self.max_rolling_bytes;
        while !self.tail_text.is_char_boundary(start) {
            start += 1;
        }
        if start > 0 {
            self.tail_starts_at_line_boundary = self.tail_text.as_bytes()[start - 1] == b'\n';
        }
        self.tail_text = self.tail_text[start..].to_owned();
    }

    fn snapshot_text(&self) -> &str {
        if self.tail_starts_at_line_boundary {
            return &self.tail_text;
        }
        match self.tail_text.find('\n') {
            Some(i) => &self.tail_text[i + 1..],
            None => &self.tail_text,
        }
    }

    fn should_use_temp_file(&self) -> bool {
        self.total_raw_bytes > self.max_bytes
            || self.total_decoded_bytes > self.max_bytes
            || self.total_lines > self.max_lines
    }

    fn ensure_temp_file(&mut self) {
        if self.temp_path.is_some() {
            return;
        }
        match create_output_file(&self.prefix, ".log") {
            Ok((path, file)) => {
                self.temp_path = Some(path);
                self.temp_file = Some(file);
                let raw = std::mem::take(&mut self.raw_chunks);
                self.write_temp(&raw);
            }
            Err(e) => tracing::warn!("cannot create bash output file: {e}"),
        }
    }

    fn write_temp(&mut self, data: &[u8]) {
        if let Some(Err(e)) = self.temp_file.as_mut().map(|f| f.write_all(data)) {
            tracing::warn!("writing bash output file failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoder_handles_split_characters() {
        let mut d = Utf8Stream::default();
        let s = "é✓".as_bytes();
        let mut out = d.decode(&s[..1], false);
        out += &d.decode(&s[1..3], false);
        out += &d.decode(&s[3..], true);
        assert_eq!(out, "é✓");
        assert_eq!(Utf8Stream::default().decode(b"a\xffb", true), "a\u{FFFD}b");
    }

    #[test]
    fn small_output_stays_in_memory() {
        let mut acc = OutputAccumulator::new("pi-test");
        acc.append(b"hello\nworld");
        acc.finish();
        let snap = acc.snapshot(true);
        assert_eq!(snap.content, "hello\nworld");
        assert!(!snap.truncation.truncated);
        assert!(snap.full_output_path.is_none());
        assert_eq!(acc.read_full_output(1024), ("hello\nworld".to_owned(), false));
    }

    #[test]
    fn large_output_goes_to_file() {
        let mut acc = OutputAccumulator::new("pi-test");
        for i in 0..3000 {
            acc.append(format!("{i}\n").as_bytes());
        }
        acc.finish();
        let snap = acc.snapshot(true);
        assert!(snap.truncation.truncated);
        let path = snap.full_output_path.clone().unwrap();
        acc.close_temp_file();
        let full = std::fs::read_to_string(&path).unwrap();
        assert_eq!(full.lines().count(), 3000);
        std::fs::remove_file(path).unwrap();
    }
}
