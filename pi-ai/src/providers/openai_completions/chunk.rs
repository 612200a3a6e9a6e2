//! The chunk almost every streamed delta is, read in place (issue 20): a text, reasoning or
//! tool-call argument delta (or a finish reason) in its one choice, nothing else that matters.
//!
//! It is read by [`Scanner`], borrowing from the event's text; any other chunk (usage, an error,
//! reasoning details, a custom tool call, a member of another type, a duplicate member, anything
//! the scanner declines) is not read here and takes the `Value` path, which handles every field.
//! Members this path does not name are skipped: the `Value` path ignores them too.

use std::borrow::Cow;
use std::ops::Range;

use crate::json::scan::{Reject, Scan, Scanner, once, read_once};

/// A plain chunk: its `id`, `model` and first choice.
pub(super) struct TextChunk<'a> {
    pub(super) id: Option<Cow<'a, str>>,
    pub(super) model: Option<Cow<'a, str>>,
    /// `choices[0]`; `None` for an empty `choices`.
    pub(super) choice: Option<TextChoice<'a>>,
}

/// The first choice of a plain chunk.
pub(super) struct TextChoice<'a> {
    pub(super) delta: Option<TextDelta<'a>>,
    pub(super) finish_reason: Option<Cow<'a, str>>,
}

/// A plain choice's `delta`.
pub(super) struct TextDelta<'a> {
    pub(super) content: Option<Cow<'a, str>>,
    /// Where `content`'s raw text lies in the chunk's text, when it is a string.
    pub(super) content_span: Option<Range<usize>>,
    pub(super) reasoning_content: Option<Cow<'a, str>>,
    pub(super) reasoning: Option<Cow<'a, str>>,
    pub(super) reasoning_text: Option<Cow<'a, str>>,
    pub(super) tool_calls: Option<Vec<ToolFragment<'a>>>,
}

/// One `tool_calls` fragment of a function call (a custom tool's fragment takes the `Value` path).
pub(super) struct ToolFragment<'a> {
    pub(super) index: Option<i64>,
    pub(super) id: Option<Cow<'a, str>>,
    pub(super) function: Option<FunctionFragment<'a>>,
}

/// A fragment's `function`.
#[derive(Default)]
pub(super) struct FunctionFragment<'a> {
    pub(super) name: Option<Cow<'a, str>>,
    pub(super) arguments: Option<Cow<'a, str>>,
}

impl<'a> TextChunk<'a> {
    /// The chunk, when `data` is one this path handles exactly as the `Value` path would.
    pub(super) fn read(data: &'a str) -> Option<Self> {
        let mut s = Scanner::new(data);
        let mut chunk = TextChunk { id: None, model: None, choice: None };
        let mut seen = [false; 5];
        s.object(|s, key| match &*key {
            "id" => read_once(s, &mut seen[0], &mut chunk.id, Scanner::null_or_string),
            "model" => read_once(s, &mut seen[1], &mut chunk.model, Scanner::null_or_string),
            "usage" => {
                once(&mut seen[2])?;
                null(s)
            }
            "error" => {
                once(&mut seen[3])?;
                null(s)
            }
            "choices" => {
                once(&mut seen[4])?;
                s.array(|s, index| {
                    if index == 0 {
                        chunk.choice.insert(TextChoice { delta: None, finish_reason: None }).scan(s)
                    } else {
                        s.skip()
                    }
                })
            }
            _ => s.skip(),
        })
        .ok()?;
        s.end().ok()?;
        // `choices` is required: a chunk without it is the `Value` path's.
        seen[4].then_some(chunk)
    }
}

impl TextChunk<'_> {
    /// Where the text of a chunk that is a text delta and nothing else lies in its text: a
    /// chunk whose other members have no effect when applied again (its `id` and `model` are
    /// only taken while the message has none), so the next chunk that differs from it only in
    /// that text can be read in its frame ([`crate::json::frame`]).
    pub(super) fn text_only_span(&self) -> Option<Range<usize>> {
        let choice = self.choice.as_ref()?;
        if choice.finish_reason.as_deref().is_some_and(|r| !r.is_empty()) {
            return None;
        }
        let delta = choice.delta.as_ref()?;
        let unset = |text: &Option<Cow<'_, str>>| text.as_deref().is_none_or(str::is_empty);
        let quiet = unset(&delta.reasoning_content)
            && unset(&delta.reasoning)
            && unset(&delta.reasoning_text)
            && delta.tool_calls.as_ref().is_none_or(Vec::is_empty);
        if quiet { delta.content_span.clone() } else { None }
    }
}

impl<'a> TextChoice<'a> {
    /// Reads the choice into `self`.
    fn scan(&mut self, s: &mut Scanner<'a>) -> Scan<()> {
        let mut seen = [false; 3];
        s.object(|s, key| match &*key {
            "delta" => {
                once(&mut seen[0])?;
                if s.null()? {
                    return Ok(());
                }
                let delta = TextDelta {
                    content: None,
                    content_span: None,
                    reasoning_content: None,
                    reasoning: None,
                    reasoning_text: None,
                    tool_calls: None,
                };
                self.delta.insert(delta).scan(s)
            }
            "finish_reason" => read_once(s, &mut seen[1], &mut self.finish_reason, Scanner::null_or_string),
            "usage" => {
                once(&mut seen[2])?;
                null(s)
            }
            _ => s.skip(),
        })
    }
}

impl<'a> TextDelta<'a> {
    /// Reads the delta into `self`.
    fn scan(&mut self, s: &mut Scanner<'a>) -> Scan<()> {
        let mut seen = [false; 6];
        s.object(|s, key| {
            let (slot, field) = match &*key {
                "content" => {
                    once(&mut seen[0])?;
                    (self.content, self.content_span) = s.null_or_string_span()?.unzip();
                    return Ok(());
                }
                "reasoning_content" => (1, &mut self.reasoning_content),
                "reasoning" => (2, &mut self.reasoning),
                "reasoning_text" => (3, &mut self.reasoning_text),
                "reasoning_details" => {
                    once(&mut seen[4])?;
                    return null(s);
                }
                "tool_calls" => {
                    once(&mut seen[5])?;
                    if !s.null()? {
                        let fragments = self.tool_calls.insert(Vec::new());
                        s.array(|s, _| {
                            fragments.push(ToolFragment::scan(s)?);
                            Ok(())
                        })?;
                    }
                    return Ok(());
                }
                _ => return s.skip(),
            };
            read_once(s, &mut seen[slot], field, Scanner::null_or_string)
        })
    }
}

impl<'a> ToolFragment<'a> {
    fn scan(s: &mut Scanner<'a>) -> Scan<Self> {
        let mut fragment = ToolFragment { index: None, id: None, function: None };
        let mut seen = [false; 3];
        s.object(|s, key| match &*key {
            "index" => read_once(s, &mut seen[0], &mut fragment.index, |s| {
                if s.null()? { Ok(None) } else { s.integer().map(Some) }
            }),
            "id" => read_once(s, &mut seen[1], &mut fragment.id, Scanner::null_or_string),
            "function" => read_once(s, &mut seen[2], &mut fragment.function, |s| {
                if s.null()? { Ok(None) } else { FunctionFragment::scan(s).map(Some) }
            }),
            // A custom tool's fragment, `null` included, is the `Value` path's.
            "custom" => Err(Reject),
            _ => s.skip(),
        })?;
        Ok(fragment)
    }
}

impl<'a> FunctionFragment<'a> {
    fn scan(s: &mut Scanner<'a>) -> Scan<Self> {
        let mut function = FunctionFragment::default();
        let mut seen = [false; 2];
        s.object(|s, key| match &*key {
            "name" => read_once(s, &mut seen[0], &mut function.name, Scanner::null_or_string),
            "arguments" => read_once(s, &mut seen[1], &mut function.arguments, Scanner::null_or_string),
            _ => s.skip(),
        })?;
        Ok(function)
    }
}

/// A member this path reads only when it is `null` (as absent): any other value sends the chunk
/// to the `Value` path.
fn null(s: &mut Scanner<'_>) -> Scan<()> {
    if s.null()? { Ok(()) } else { Err(Reject) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_chunks_are_read_here() {
        let chunk = TextChunk::read(
            r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi \"there\""},"logprobs":null,"finish_reason":null}]}"#,
        )
        .expect("plain");
        assert!(matches!(chunk.id, Some(Cow::Borrowed("chatcmpl-1"))));
        assert_eq!(chunk.model.as_deref(), Some("m"));
        let choice = chunk.choice.expect("a choice");
        assert!(choice.finish_reason.is_none());
        assert_eq!(choice.delta.and_then(|d| d.content).as_deref(), Some("Hi \"there\""));

        let chunk = TextChunk::read(
            r#"{"choices":[{"delta":{"tool_calls":[{"index":2,"id":"t","function":{"name":"f","arguments":"{\"a\""}}]},"finish_reason":"tool_calls"}]}"#,
        )
        .expect("plain");
        let choice = chunk.choice.expect("a choice");
        assert_eq!(choice.finish_reason.as_deref(), Some("tool_calls"));
        let fragment = &choice.delta.and_then(|d| d.tool_calls).expect("fragments")[0];
        assert_eq!(fragment.index, Some(2));
        assert_eq!(fragment.function.as_ref().and_then(|f| f.arguments.as_deref()), Some("{\"a\""));

        let reasoning = TextChunk::read(r#"{"choices":[{"delta":{"reasoning_content":"hm"}}]}"#).expect("plain");
        assert_eq!(reasoning.choice.and_then(|c| c.delta).and_then(|d| d.reasoning_content).as_deref(), Some("hm"));
        assert!(TextChunk::read(r#"{"id":"x","choices":[]}"#).expect("plain").choice.is_none());
    }

    #[test]
    fn only_a_chunk_that_is_a_text_delta_and_nothing_else_is_framed() {
        let text = r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"a\nb"},"finish_reason":null}]}"#;
        let span = TextChunk::read(text).and_then(|c| c.text_only_span()).expect("framed");
        assert_eq!(&text[span], "a\\nb");
        let empty = r#"{"choices":[{"delta":{"content":"","reasoning":"","tool_calls":[]},"finish_reason":""}]}"#;
        assert!(TextChunk::read(empty).and_then(|c| c.text_only_span()).is_some());
        for data in [
            r#"{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[{"delta":{"content":"a","reasoning_content":"r"}}]}"#,
            r#"{"choices":[{"delta":{"content":"a","tool_calls":[{"index":0}]}}]}"#,
            r#"{"choices":[{"delta":{"content":null}}]}"#,
            r#"{"choices":[{"delta":{}}]}"#,
            r#"{"choices":[{"delta":null}]}"#,
            r#"{"choices":[]}"#,
        ] {
            let chunk = TextChunk::read(data).expect("read typed");
            assert!(chunk.text_only_span().is_none(), "{data}");
        }
    }

    #[test]
    fn other_chunks_are_left_to_the_value_path() {
        for data in [
            r#"{"choices":[],"usage":{"prompt_tokens":1}}"#,
            r#"{"error":{"message":"x"},"choices":[]}"#,
            r#"{"choices":[{"delta":{"reasoning_details":[]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"custom":{"input":"x"}}]}}]}"#,
            r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#,
            r#"{"id":1,"choices":[]}"#,
            r#"{"id":"x"}"#,
            r#"{"choices":[]} x"#,
            r#"{"choices":[],"n":1e9}"#,
            "[DONE]",
        ] {
            assert!(TextChunk::read(data).is_none(), "{data}");
        }
    }
}
