//! A Server-Sent Events decoder over raw byte chunks.
//!
//! Providers read the HTTP body as a stream of byte chunks that may split anywhere: inside a
//! line, inside a UTF-8 character, between the `\r` and `\n` of a line break. [`SseParser`] turns
//! those chunks into [`SseEvent`]s following the WHATWG `text/event-stream` rules:
//!
//! - lines end with `\r\n`, `\n` or `\r`;
//! - a line starting with `:` is a comment;
//! - `field: value` (one optional space after the colon is dropped; a line without a colon is a
//!   field with an empty value); `data` lines are joined with `"\n"`;
//! - a blank line dispatches the event; an event without any `data` line is not dispatched;
//! - a leading UTF-8 byte-order mark is ignored.
//!
//! Unlike a browser `EventSource`, [`SseParser::finish`] also dispatches an event that the server
//! did not terminate with a blank line before closing the connection. `[DONE]` is ordinary data;
//! providers interpret it.
//!
//! ```
//! use pi_ai::sse::{SseEvent, SseParser};
//!
//! let mut parser = SseParser::new();
//! let mut events = Vec::new();
//! parser.push(b"event: message_start\nda", &mut events);
//! parser.push(b"ta: {\"a\":1}\r\n\r\ndata: [DONE]", &mut events);
//! parser.finish(&mut events);
//! assert_eq!(events[0].event.as_deref(), Some("message_start"));
//! assert_eq!(events[0].data, "{\"a\":1}");
//! assert_eq!(events[1], SseEvent { event: None, data: "[DONE]".into(), id: None });
//! ```

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when the event had one.
    pub event: Option<String>,
    /// The `data:` lines joined with `"\n"`.
    pub data: String,
    /// The `id:` field of this event, when it had one.
    pub id: Option<String>,
}

/// Incremental SSE decoder. Feed chunks with [`push`](Self::push), then call
/// [`finish`](Self::finish) at end of stream.
///
/// Work is linear in the input: complete lines inside a chunk are parsed in place, and only the
/// unfinished tail of a chunk is copied.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The unfinished last line of the previous chunks.
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` at the start of the next one belongs to it.
    after_cr: bool,
    /// No line has been processed yet (the byte-order mark may still appear).
    at_start: bool,
    /// Joined `data` bytes of the current event (UTF-8 is validated at dispatch).
    data: Vec<u8>,
    /// Whether the current event has seen a `data` line.
    has_data: bool,
    event: Option<String>,
    id: Option<String>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        SseParser { at_start: true, ..Default::default() }
    }

    /// Decodes one chunk, appending every event it completes to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some(tail) = rest.strip_prefix(b"\n") {
                rest = tail;
            }
        }
        while let Some(pos) = memchr::memchr2(b'\n', b'\r', rest) {
            let (line, tail) = (&rest[..pos], &rest[pos + 1..]);
            if rest[pos] == b'\r' {
                match tail.first() {
                    Some(b'\n') => rest = &tail[1..],
                    Some(_) => rest = tail,
                    None => {
                        self.after_cr = true;
                        rest = tail;
                    }
                }
            } else {
                rest = tail;
            }
            if self.line.is_empty() {
                self.process_line(line, out);
            } else {
                let mut buffered = std::mem::take(&mut self.line);
                buffered.extend_from_slice(line);
                self.process_line(&buffered, out);
                buffered.clear();
                self.line = buffered;
            }
        }
        self.line.extend_from_slice(rest);
    }

    /// Ends the stream: processes an unterminated last line and dispatches a pending event.
    /// The parser is then ready for a new stream.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            let buffered = std::mem::take(&mut self.line);
            self.process_line(&buffered, out);
        }
        self.dispatch(out);
        *self = SseParser::new();
    }

    fn process_line(&mut self, mut line: &[u8], out: &mut Vec<SseEvent>) {
        if self.at_start {
            self.at_start = false;
            if let Some(tail) = line.strip_prefix(BOM) {
                line = tail;
            }
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.has_data = true;
                self.data.extend_from_slice(value);
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            b"id" if !value.contains(&0) => self.id = Some(String::from_utf8_lossy(value).into_owned()),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        let id = self.id.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let bytes = std::mem::take(&mut self.data);
        let data = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        out.push(SseEvent { event, data, id });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.push(c, &mut out);
        }
        p.finish(&mut out);
        out
    }

    fn ev(event: Option<&str>, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent { event: event.map(str::to_owned), data: data.to_owned(), id: id.map(str::to_owned) }
    }

    #[test]
    fn basic_events_and_done() {
        let out = parse_all(&[b"data: {\"a\":1}\n\ndata: [DONE]\n\n"]);
        assert_eq!(out, vec![ev(None, "{\"a\":1}", None), ev(None, "[DONE]", None)]);
    }

    #[test]
    fn named_events_with_ids() {
        let out = parse_all(&[b"event: ping\nid: 7\ndata: x\n\nevent: other\ndata: y\n\n"]);
        assert_eq!(out, vec![ev(Some("ping"), "x", Some("7")), ev(Some("other"), "y", None)]);
    }

    #[test]
    fn line_endings_cr_lf_crlf() {
        for input in [&b"data: a\n\ndata: b\n\n"[..], b"data: a\r\rdata: b\r\r", b"data: a\r\n\r\ndata: b\r\n\r\n"] {
            assert_eq!(parse_all(&[input]), vec![ev(None, "a", None), ev(None, "b", None)], "{input:?}");
        }
    }

    #[test]
    fn crlf_split_across_chunks_is_one_break() {
        // "\r" | "\n\r\n": if the split LF counted as a second break, the event would fire early
        // but the data is the same; check that a single CRLF split does not create a blank line.
        let out = parse_all(&[b"data: a\r", b"\ndata: b\r", b"\n\r\n"]);
        assert_eq!(out, vec![ev(None, "a\nb", None)]);
    }

    #[test]
    fn empty_chunk_after_cr_keeps_the_pending_lf() {
        let out = parse_all(&[b"data: a\r", b"", b"\ndata: b\n\n"]);
        assert_eq!(out, vec![ev(None, "a\nb", None)]);
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        let out = parse_all(&[b": keep-alive\nretry: 100\nfoo\ndata: x\n: c\n\n"]);
        assert_eq!(out, vec![ev(None, "x", None)]);
    }

    #[test]
    fn multi_line_data_and_space_rules() {
        let out = parse_all(&[b"data:a\ndata:  b\ndata\ndata: \n\n"]);
        assert_eq!(out, vec![ev(None, "a\n b\n\n", None)]);
    }

    #[test]
    fn events_without_data_are_not_dispatched() {
        let out = parse_all(&[b"event: ping\n\n\n\ndata: x\n\n"]);
        assert_eq!(out, vec![ev(None, "x", None)]);
    }

    #[test]
    fn missing_final_newline_is_flushed_at_finish() {
        assert_eq!(parse_all(&[b"data: tail"]), vec![ev(None, "tail", None)]);
        assert_eq!(parse_all(&[b"event: e\ndata: tail\n"]), vec![ev(Some("e"), "tail", None)]);
        assert_eq!(parse_all(&[b""]), vec![]);
    }

    #[test]
    fn utf8_split_inside_a_character() {
        let text = "data: héllo 🙈\n\n".as_bytes();
        let pos = text.iter().position(|&b| b == 0xF0).expect("emoji") + 2;
        let out = parse_all(&[&text[..pos], &text[pos..]]);
        assert_eq!(out, vec![ev(None, "héllo 🙈", None)]);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(parse_all(&[b"data: a\xFFb\n\n"]), vec![ev(None, "a\u{FFFD}b", None)]);
    }

    #[test]
    fn leading_bom_is_ignored_even_when_split() {
        assert_eq!(parse_all(&[b"\xEF\xBB", b"\xBFdata: x\n\n"]), vec![ev(None, "x", None)]);
    }

    #[test]
    fn id_with_nul_is_ignored() {
        assert_eq!(parse_all(&[b"id: a\0b\ndata: x\n\n"]), vec![ev(None, "x", None)]);
    }

    #[test]
    fn parser_is_reusable_after_finish() {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.push(b"data: a", &mut out);
        p.finish(&mut out);
        p.push(b"data: b\n\n", &mut out);
        assert_eq!(out, vec![ev(None, "a", None), ev(None, "b", None)]);
    }

    fn sse_stream() -> impl Strategy<Value = Vec<u8>> {
        let line = prop_oneof![
            "[a-z]{0,6}".prop_map(|s| format!("data: {s}")),
            "[a-zé🙈 ]{0,6}".prop_map(|s| format!("data:{s}")),
            "[a-z]{0,4}".prop_map(|s| format!("event: {s}")),
            "[0-9]{0,3}".prop_map(|s| format!("id: {s}")),
            Just(": comment".to_owned()),
            Just(String::new()),
            Just("data".to_owned()),
        ];
        let eol = prop_oneof![Just("\n"), Just("\r"), Just("\r\n")];
        proptest::collection::vec((line, eol), 0..20)
            .prop_map(|lines| lines.into_iter().flat_map(|(l, e)| format!("{l}{e}").into_bytes()).collect::<Vec<u8>>())
    }

    proptest! {
        #[test]
        fn any_split_gives_the_same_events(
            input in sse_stream(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let whole = parse_all(&[&input]);
            let mut points: Vec<usize> = cuts.iter().map(|i| i.index(input.len() + 1)).collect();
            points.sort_unstable();
            let mut chunks = Vec::new();
            let mut start = 0;
            for p in points {
                chunks.push(&input[start..p]);
                start = p;
            }
            chunks.push(&input[start..]);
            prop_assert_eq!(parse_all(&chunks), whole.clone());
            // Byte by byte, too.
            let bytes: Vec<&[u8]> = input.chunks(1).collect();
            prop_assert_eq!(parse_all(&bytes), whole);
        }
    }
}
