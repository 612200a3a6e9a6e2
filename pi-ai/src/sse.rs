//! A Server-Sent Events decoder over raw byte chunks.
//!
//! Providers read the HTTP body as a stream of byte chunks that may split anywhere: inside a
//! line, inside a UTF-8 character, between the `\r` and `\n` of a line break. [`SseParser`] turns
//! those chunks into events following the WHATWG `text/event-stream` rules:
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
//! Two ways to read the events: [`SseParser::push_with`] lends each one as an [`SseEventRef`]
//! and allocates nothing per event (an event whose one `data` line lies inside the chunk borrows
//! it from the chunk; anything else borrows the parser's reused buffers), and
//! [`SseParser::push`] collects owned [`SseEvent`]s.
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

use std::ops::ControlFlow;

/// One dispatched event, owned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when the event had one.
    pub event: Option<String>,
    /// The `data:` lines joined with `"\n"`.
    pub data: String,
    /// The `id:` field of this event, when it had one.
    pub id: Option<String>,
}

impl SseEvent {
    /// The event, borrowed.
    pub fn view(&self) -> SseEventRef<'_> {
        SseEventRef { event: self.event.as_deref(), data: &self.data, id: self.id.as_deref() }
    }
}

/// One dispatched event, borrowed from the chunk it came in or from the parser's buffers (see
/// [`SseParser::push_with`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SseEventRef<'a> {
    /// The `event:` field, when the event had one.
    pub event: Option<&'a str>,
    /// The `data:` lines joined with `"\n"`.
    pub data: &'a str,
    /// The `id:` field of this event, when it had one.
    pub id: Option<&'a str>,
}

impl SseEventRef<'_> {
    /// An owned copy.
    pub fn to_event(&self) -> SseEvent {
        SseEvent { event: self.event.map(str::to_owned), data: self.data.to_owned(), id: self.id.map(str::to_owned) }
    }
}

/// Incremental SSE decoder. Feed chunks with [`push_with`](Self::push_with) (borrowed events) or
/// [`push`](Self::push) (owned events), then call [`finish`](Self::finish) /
/// [`finish_with`](Self::finish_with) at end of stream.
///
/// Work is linear in the input and nothing is allocated per event once the buffers have grown:
/// complete lines inside a chunk are parsed in place, an event's only `data` line is lent straight
/// from the chunk, and only what spans chunks (an unfinished line, the data of an event not yet
/// dispatched) is copied into buffers the parser keeps.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The unfinished last line of the previous chunks.
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` at the start of the next one belongs to it.
    after_cr: bool,
    /// No line has been processed yet (the byte-order mark may still appear).
    at_start: bool,
    /// Whether the current event has seen a `data` line.
    has_data: bool,
    /// The current event's only `data` line so far, as a range of the chunk being parsed.
    data_in_chunk: Option<(usize, usize)>,
    /// Joined `data` bytes of the current event when not in the chunk (UTF-8 is checked at
    /// dispatch).
    data: Vec<u8>,
    /// The `event` field of the current event, when `has_event`.
    event: Vec<u8>,
    has_event: bool,
    /// The `id` field of the current event, when `has_id`.
    id: Vec<u8>,
    has_id: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Where the line being processed lies: at an offset of the chunk, or in the parser's buffer.
type LineAt = Option<usize>;

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        SseParser { at_start: true, ..Default::default() }
    }

    /// Decodes one chunk, appending every event it completes to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        let _ = self.push_with(chunk, |event| {
            out.push(event.to_event());
            ControlFlow::Continue(())
        });
    }

    /// Decodes one chunk, lending every event it completes to `on_event`, in order.
    ///
    /// When `on_event` answers [`ControlFlow::Break`], decoding stops there and the rest of the
    /// chunk is dropped (the caller is done with the stream); the answer is returned.
    pub fn push_with<F>(&mut self, chunk: &[u8], mut on_event: F) -> ControlFlow<()>
    where
        F: FnMut(SseEventRef<'_>) -> ControlFlow<()>,
    {
        let mut start = 0;
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if chunk[0] == b'\n' {
                start = 1;
            }
        }
        let flow = loop {
            let Some(found) = memchr::memchr2(b'\n', b'\r', &chunk[start..]) else {
                break ControlFlow::Continue(());
            };
            let end = start + found;
            let next = if chunk[end] == b'\r' {
                match chunk.get(end + 1) {
                    Some(b'\n') => end + 2,
                    Some(_) => end + 1,
                    None => {
                        self.after_cr = true;
                        end + 1
                    }
                }
            } else {
                end + 1
            };
            let flow = if self.line.is_empty() {
                self.process_line(&chunk[start..end], Some(start), chunk, &mut on_event)
            } else {
                let mut buffered = std::mem::take(&mut self.line);
                buffered.extend_from_slice(&chunk[start..end]);
                let flow = self.process_line(&buffered, None, chunk, &mut on_event);
                buffered.clear();
                self.line = buffered;
                flow
            };
            start = next;
            if flow.is_break() {
                break flow;
            }
        };
        if flow.is_continue() {
            self.line.extend_from_slice(&chunk[start..]);
        }
        // The chunk goes away: keep what the pending event borrowed from it.
        if let Some((from, to)) = self.data_in_chunk.take() {
            self.data.clear();
            self.data.extend_from_slice(&chunk[from..to]);
        }
        flow
    }

    /// Ends the stream: processes an unterminated last line and dispatches a pending event,
    /// appending it to `out`. The parser is then ready for a new stream.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        self.finish_with(|event| {
            out.push(event.to_event());
            ControlFlow::Continue(())
        });
    }

    /// [`finish`](Self::finish), lending the last event (if any) to `on_event`.
    pub fn finish_with<F>(&mut self, mut on_event: F)
    where
        F: FnMut(SseEventRef<'_>) -> ControlFlow<()>,
    {
        let buffered = std::mem::take(&mut self.line);
        let flow = if buffered.is_empty() {
            ControlFlow::Continue(())
        } else {
            self.process_line(&buffered, None, &[], &mut on_event)
        };
        if flow.is_continue() {
            let _ = self.dispatch(&[], &mut on_event);
        }
        *self = SseParser::new();
    }

    /// One line, `at` an offset of `chunk` or in a buffer of ours.
    fn process_line<F>(&mut self, mut line: &[u8], mut at: LineAt, chunk: &[u8], on_event: &mut F) -> ControlFlow<()>
    where
        F: FnMut(SseEventRef<'_>) -> ControlFlow<()>,
    {
        if self.at_start {
            self.at_start = false;
            if let Some(tail) = line.strip_prefix(BOM) {
                line = tail;
                at = at.map(|at| at + BOM.len());
            }
        }
        if line.is_empty() {
            return self.dispatch(chunk, on_event);
        }
        if line[0] == b':' {
            return ControlFlow::Continue(());
        }
        let (field, value_from) = match memchr::memchr(b':', line) {
            Some(colon) if line.get(colon + 1) == Some(&b' ') => (&line[..colon], colon + 2),
            Some(colon) => (&line[..colon], colon + 1),
            None => (line, line.len()),
        };
        let value = &line[value_from..];
        match field {
            b"data" => self.data_line(value, at.map(|at| at + value_from), chunk),
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
                self.has_event = true;
            }
            b"id" if !value.contains(&0) => {
                self.id.clear();
                self.id.extend_from_slice(value);
                self.has_id = true;
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    /// A `data` value, `at` an offset of `chunk` or in a buffer of ours.
    fn data_line(&mut self, value: &[u8], at: LineAt, chunk: &[u8]) {
        if !self.has_data {
            self.has_data = true;
            match at {
                Some(at) => self.data_in_chunk = Some((at, at + value.len())),
                None => {
                    self.data.clear();
                    self.data.extend_from_slice(value);
                }
            }
            return;
        }
        if let Some((from, to)) = self.data_in_chunk.take() {
            self.data.clear();
            self.data.extend_from_slice(&chunk[from..to]);
        }
        self.data.push(b'\n');
        self.data.extend_from_slice(value);
    }

    fn dispatch<F>(&mut self, chunk: &[u8], on_event: &mut F) -> ControlFlow<()>
    where
        F: FnMut(SseEventRef<'_>) -> ControlFlow<()>,
    {
        let has_event = std::mem::take(&mut self.has_event);
        let has_id = std::mem::take(&mut self.has_id);
        if !std::mem::take(&mut self.has_data) {
            return ControlFlow::Continue(());
        }
        let bytes = match self.data_in_chunk.take() {
            Some((from, to)) => &chunk[from..to],
            None => &self.data[..],
        };
        // Valid UTF-8 (the normal case) is borrowed; invalid bytes are replaced in a copy.
        let data = text(bytes);
        let event = has_event.then(|| text(&self.event));
        let id = has_id.then(|| text(&self.id));
        on_event(SseEventRef { event: event.as_deref(), data: &data, id: id.as_deref() })
    }
}

/// `bytes` as text: borrowed when valid UTF-8 (checked with the fast validator; the lossy
/// decoder's chunk iterator is several times slower), else with replacement characters.
fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
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

    /// The events of `chunks` through the borrowing interface, copied.
    fn parse_borrowed(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            let flow = p.push_with(c, |e| {
                out.push(e.to_event());
                ControlFlow::Continue(())
            });
            assert!(flow.is_continue());
        }
        p.finish_with(|e| {
            out.push(e.to_event());
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn a_single_data_line_is_lent_from_the_chunk() {
        let chunk = b"event: delta\ndata: {\"a\":1}\n\ndata: x\ndata: y\n\n";
        let range = chunk.as_ptr_range();
        let mut seen = Vec::new();
        let mut p = SseParser::new();
        let _ = p.push_with(chunk, |e| {
            seen.push((e.data.to_owned(), range.contains(&e.data.as_ptr()), e.event.map(str::to_owned)));
            ControlFlow::Continue(())
        });
        assert_eq!(
            seen,
            vec![
                ("{\"a\":1}".to_owned(), true, Some("delta".to_owned())),
                // Two data lines are joined in the parser's buffer.
                ("x\ny".to_owned(), false, None),
            ]
        );
    }

    #[test]
    fn data_pending_at_the_end_of_a_chunk_survives_it() {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        let mut first = b"data: abc\n".to_vec();
        p.push(&first, &mut out);
        // The chunk's memory is reused by the caller before the blank line arrives.
        first.fill(b'z');
        p.push(b"\n", &mut out);
        assert_eq!(out, vec![ev(None, "abc", None)]);
    }

    #[test]
    fn break_stops_at_the_event() {
        let mut p = SseParser::new();
        let mut seen = Vec::new();
        let flow = p.push_with(b"data: a\n\ndata: b\n\ndata: c\n\n", |e| {
            seen.push(e.data.to_owned());
            if e.data == "b" { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        });
        assert!(flow.is_break());
        assert_eq!(seen, ["a", "b"]);
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
            prop_assert_eq!(parse_borrowed(&chunks), whole.clone());
            // Byte by byte, too.
            let bytes: Vec<&[u8]> = input.chunks(1).collect();
            prop_assert_eq!(parse_all(&bytes), whole);
        }
    }
}
