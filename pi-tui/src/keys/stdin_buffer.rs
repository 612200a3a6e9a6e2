//! `StdinBuffer`: splits raw input chunks into complete sequences.
//!
//! Recognises CSI (to a final byte 0x40–0x7E), SGR and X10 mouse reports, OSC/DCS/APC (to BEL or
//! ST), SS3 and `ESC x` (Alt). Incomplete tails are kept until more input arrives or a timeout
//! passes (pi: 10 ms for a lone ESC, 50 ms otherwise). `ESC[200~…ESC[201~` becomes one paste.

use std::time::{Duration, Instant};

const PASTE_START: &str = "\x1b[200~";
const PASTE_END: &str = "\x1b[201~";
const SEQUENCE_TIMEOUT: Duration = Duration::from_millis(50);

/// One unit of input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdinEvent {
    /// A complete key/mouse/reply sequence or a single character.
    Data(String),
    /// The content of a bracketed paste (without markers).
    Paste(String),
}

#[derive(PartialEq)]
enum Status {
    NotEscape,
    Incomplete,
    Complete,
}

fn is_control_string(s: &str) -> bool {
    s.starts_with("\x1b]") || s.starts_with("\x1bP") || s.starts_with("\x1b_")
}

/// pi's `TERMINAL_REPLY_HEADER_PATTERN`: colour, XTVERSION, program-status and Kitty graphics replies.
fn is_terminal_reply_header(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('\x1b') else {
        return false;
    };
    if let Some(osc) = rest.strip_prefix(']') {
        if osc.starts_with("10;") || osc.starts_with("11;") || osc.starts_with("7501;?") {
            return true;
        }
        if let Some(p) = osc.strip_prefix("4;") {
            let digits = p.bytes().take_while(u8::is_ascii_digit).count();
            return (1..=3).contains(&digits) && p.as_bytes().get(digits) == Some(&b';');
        }
        return false;
    }
    if rest.starts_with("P>|") {
        return true;
    }
    if let Some(g) = rest.strip_prefix("_G") {
        // (?:[a-z]=\d+,)*[a-z]=\d+;
        let Some(end) = g.find(';') else {
            return false;
        };
        return g[..end].split(',').all(|kv| {
            let b = kv.as_bytes();
            b.len() >= 3 && b[0].is_ascii_lowercase() && b[1] == b'=' && b[2..].iter().all(u8::is_ascii_digit)
        });
    }
    false
}

fn csi_status(data: &str) -> Status {
    if data.len() < 3 {
        return Status::Incomplete;
    }
    let payload = &data[2..];
    let Some(last) = payload.chars().last() else {
        return Status::Incomplete;
    };
    let lc = last as u32;
    if (0x40..=0x7e).contains(&lc) {
        if let Some(mouse) = payload.strip_prefix('<') {
            if last == 'M' || last == 'm' {
                let body = &mouse[..mouse.len() - 1];
                let parts: Vec<&str> = body.split(';').collect();
                if parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
                    return Status::Complete;
                }
            }
            return Status::Incomplete;
        }
        return Status::Complete;
    }
    Status::Incomplete
}

fn sequence_status(data: &str) -> Status {
    if !data.starts_with('\x1b') {
        return Status::NotEscape;
    }
    if data.len() == 1 {
        return Status::Incomplete;
    }
    let after = &data[1..];
    if after.starts_with("[M") {
        return if data.chars().count() >= 6 { Status::Complete } else { Status::Incomplete };
    }
    if after.starts_with('[') {
        return csi_status(data);
    }
    if after.starts_with(']') {
        return if data.ends_with("\x1b\\") || data.ends_with('\x07') { Status::Complete } else { Status::Incomplete };
    }
    if after.starts_with('P') || after.starts_with('_') {
        return if data.ends_with("\x1b\\") { Status::Complete } else { Status::Incomplete };
    }
    if after.starts_with('O') {
        return if after.chars().count() >= 2 { Status::Complete } else { Status::Incomplete };
    }
    Status::Complete
}

/// Split `buffer` into complete sequences plus an incomplete remainder.
fn extract_complete(buffer: &str) -> (Vec<String>, String) {
    let mut seqs = Vec::new();
    let mut pos = 0;
    while pos < buffer.len() {
        let remaining = &buffer[pos..];
        if !remaining.starts_with('\x1b') {
            let c = remaining.chars().next().map(char::len_utf8).unwrap_or(1);
            seqs.push(remaining[..c].to_string());
            pos += c;
            continue;
        }
        let reply = is_control_string(remaining) && is_terminal_reply_header(remaining);
        // Candidate ends at char boundaries.
        let ends: Vec<usize> = remaining.char_indices().map(|(i, c)| i + c.len_utf8()).collect();
        let mut done = false;
        for (k, &end) in ends.iter().enumerate() {
            let seq_end = k + 1;
            if reply && seq_end > 2 {
                let ch = remaining[..end].chars().last().unwrap_or('\0');
                if ch == '\x18' || ch == '\x1a' {
                    pos += end;
                    done = true;
                    break;
                }
                if ch == '\x1b' && end < remaining.len() && !remaining[end..].starts_with('\\') {
                    pos += end - 1;
                    done = true;
                    break;
                }
            }
            let candidate = &remaining[..end];
            match sequence_status(candidate) {
                Status::Complete => {
                    if candidate == "\x1b\x1b" {
                        let next = remaining[end..].chars().next();
                        if matches!(next, Some('[' | ']' | 'O' | 'P' | '_')) {
                            seqs.push("\x1b".to_string());
                            pos += 1;
                            done = true;
                            break;
                        }
                    }
                    seqs.push(candidate.to_string());
                    pos += end;
                    done = true;
                    break;
                }
                Status::Incomplete => continue,
                Status::NotEscape => {
                    seqs.push(candidate.to_string());
                    pos += end;
                    done = true;
                    break;
                }
            }
        }
        if !done {
            return (seqs, remaining.to_string());
        }
    }
    (seqs, String::new())
}

/// An unmodified Kitty printable key (`ESC[cp(:…)u`, cp >= 32): the raw character that some
/// terminals send right after it is a duplicate and is dropped.
fn unmodified_kitty_printable(seq: &str) -> Option<u32> {
    let body = seq.strip_prefix("\x1b[")?.strip_suffix('u')?;
    let mut parts = body.split(':');
    let cp: u32 = parts.next()?.parse().ok()?;
    let rest: Vec<&str> = parts.collect();
    if rest.len() > 2
        || rest.iter().enumerate().any(|(i, p)| !p.bytes().all(|b| b.is_ascii_digit()) || (i == 1 && p.is_empty()))
    {
        return None;
    }
    (cp >= 32).then_some(cp)
}

/// Buffers raw input and emits complete sequences.
#[derive(Debug)]
pub struct StdinBuffer {
    buffer: String,
    escape_timeout: Duration,
    paste_mode: bool,
    paste_buffer: String,
    pending_kitty: Option<u32>,
    deadline: Option<Instant>,
}

impl StdinBuffer {
    /// A buffer with the given timeout for a lone ESC.
    pub fn new(escape_timeout: Duration) -> Self {
        Self {
            buffer: String::new(),
            escape_timeout,
            paste_mode: false,
            paste_buffer: String::new(),
            pending_kitty: None,
            deadline: None,
        }
    }

    /// When the buffered incomplete tail should be flushed, if any.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The buffered incomplete tail.
    pub fn pending(&self) -> &str {
        &self.buffer
    }

    fn emit_data(&mut self, seq: String, out: &mut Vec<StdinEvent>) {
        let mut chars = seq.chars();
        if let (Some(c), None) = (chars.next(), chars.next())
            && Some(c as u32) == self.pending_kitty
        {
            self.pending_kitty = None;
            return;
        }
        self.pending_kitty = unmodified_kitty_printable(&seq);
        out.push(StdinEvent::Data(seq));
    }

    fn finish_paste(&mut self, out: &mut Vec<StdinEvent>) -> bool {
        if let Some(end) = self.paste_buffer.find(PASTE_END) {
            let content = self.paste_buffer[..end].to_string();
            let remaining = self.paste_buffer[end + PASTE_END.len()..].to_string();
            self.paste_mode = false;
            self.paste_buffer.clear();
            self.pending_kitty = None;
            out.push(StdinEvent::Paste(content));
            if !remaining.is_empty() {
                out.extend(self.process(&remaining));
            }
            return true;
        }
        false
    }

    /// Feed a chunk; returns the events that are complete now.
    pub fn process(&mut self, data: &str) -> Vec<StdinEvent> {
        self.process_at(data, Instant::now())
    }

    /// [`StdinBuffer::process`] with an explicit clock (for tests).
    pub fn process_at(&mut self, data: &str, now: Instant) -> Vec<StdinEvent> {
        self.deadline = None;
        let mut out = Vec::new();
        if data.is_empty() && self.buffer.is_empty() {
            self.emit_data(String::new(), &mut out);
            return out;
        }
        self.buffer.push_str(data);
        if self.paste_mode {
            let b = std::mem::take(&mut self.buffer);
            self.paste_buffer.push_str(&b);
            self.finish_paste(&mut out);
            return out;
        }
        if let Some(start) = self.buffer.find(PASTE_START) {
            if start > 0 {
                let (seqs, _) = extract_complete(&self.buffer[..start]);
                for s in seqs {
                    self.emit_data(s, &mut out);
                }
            }
            self.pending_kitty = None;
            self.paste_buffer = self.buffer[start + PASTE_START.len()..].to_string();
            self.buffer.clear();
            self.paste_mode = true;
            self.finish_paste(&mut out);
            return out;
        }
        let (seqs, rest) = extract_complete(&self.buffer);
        self.buffer = rest;
        for s in seqs {
            self.emit_data(s, &mut out);
        }
        if !self.buffer.is_empty() && !is_terminal_reply_header(&self.buffer) {
            let t = if self.buffer == "\x1b" { self.escape_timeout } else { SEQUENCE_TIMEOUT };
            self.deadline = Some(now + t);
        }
        out
    }

    /// Flush the incomplete tail if its timeout passed (a lone ESC becomes the Escape key).
    pub fn flush_if_stale(&mut self, now: Instant) -> Vec<StdinEvent> {
        match self.deadline {
            Some(d) if now >= d => self.flush_now(),
            _ => Vec::new(),
        }
    }

    /// Flush the incomplete tail immediately, as pi's timeout does.
    pub fn flush_now(&mut self) -> Vec<StdinEvent> {
        self.deadline = None;
        let mut out = Vec::new();
        if self.buffer.is_empty() {
            return out;
        }
        let seq = std::mem::take(&mut self.buffer);
        self.pending_kitty = None;
        if seq.len() > 2 && is_control_string(&seq) {
            self.emit_data(seq[..2].to_string(), &mut out);
            out.extend(self.process(&seq[2..]));
        } else {
            self.emit_data(seq, &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(s: &str) -> StdinEvent {
        StdinEvent::Data(s.to_string())
    }

    #[test]
    fn spec_stdin_buffer() {
        let mut b = StdinBuffer::new(Duration::from_millis(10));
        assert_eq!(b.process("a\x1b[Ab"), [data("a"), data("\x1b[A"), data("b")]);
        assert_eq!(b.process("\x1b[200~line1\nline2\x1b[201~z"), [StdinEvent::Paste("line1\nline2".into()), data("z")]);
        assert!(b.process("\x1b[1;5").is_empty());
        assert_eq!(b.process("C"), [data("\x1b[1;5C")]);
        assert!(b.process("\x1b").is_empty());
        assert!(b.deadline().is_some());
        assert_eq!(b.flush_now(), [data("\x1b")]);
        assert_eq!(b.process("\x1b[<0;3;4M"), [data("\x1b[<0;3;4M")]);
        assert_eq!(b.process("\x1bb"), [data("\x1bb")]);
        assert_eq!(b.process("日"), [data("日")]);
    }
}
