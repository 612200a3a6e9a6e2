//! Request bodies written straight to bytes.
//!
//! A provider builds the small top-level fields of its body as a [`Map`] (pi's key order, with a
//! placeholder under the message list's key) and its message list as borrowed, typed wire structs.
//! [`encode_body`] writes the map with the typed list spliced in at the placeholder, so the message
//! list never becomes a `serde_json::Value` tree. Only when the `on_payload` hook is set is the
//! body read back as a `Value` ([`apply_payload_hook`], awaited on the request's task), because
//! the hook sees (and may replace) the payload as JSON.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::http::BodySource;
use crate::http::json_out::{Measuring, WriteJson, write_str};
use crate::options::StreamOptions;
use crate::transcript::TranscriptContext;
use crate::types::{Message, Model};

/// The message list as a `Value` (what the public `build_body` / `convert_messages` return):
/// written, then read back (exact: `serde_json` reads back what it writes, key order included).
pub(crate) fn to_value<T: WriteJson + ?Sized>(items: &T) -> Value {
    try_to_value(items).unwrap_or_else(|error| {
        tracing::error!(%error, "request items did not read back as JSON");
        Value::Null
    })
}

/// [`to_value`], failing instead of yielding `null` (serde_json reads back at most 128 levels of
/// nesting, which deeply nested tool arguments can exceed).
fn try_to_value<T: WriteJson + ?Sized>(items: &T) -> Result<Value, serde_json::Error> {
    crate::http::json_out::unmeasured(|| {
        let mut out = Vec::new();
        items.write_json(&mut out);
        serde_json::from_slice(&out)
    })
}

/// The replayed system head `resolveTranscript` puts first when the API takes no mid-conversation
/// system messages (`None` when it does, or when there is nothing to replay).
pub(crate) fn collapsed_head(messages: &[Message], supports_mid_convo_system_messages: bool) -> Option<Message> {
    if supports_mid_convo_system_messages {
        return None;
    }
    crate::transcript::current_system_message(messages).map(|m| Message::System(m.into()))
}

/// pi's `resolveTranscript` as a view, without moving the transcript: the messages unchanged when
/// the API takes mid-conversation system messages, otherwise `head` (from [`collapsed_head`])
/// followed by every non-system message (`collapseSystemMessages`).
pub(crate) fn resolved_view<'a>(
    messages: &'a [Message],
    head: &'a Option<Message>,
    supports_mid_convo_system_messages: bool,
) -> Vec<&'a Message> {
    if supports_mid_convo_system_messages {
        return messages.iter().collect();
    }
    head.iter().chain(messages.iter().filter(|m| !matches!(m, Message::System(_)))).collect()
}

/// A rough byte length of the body for `messages` (the output buffer's initial capacity, so that
/// a large body is not copied again and again while it grows). It looks at the count only: a pass
/// over the messages' heap data would cost more cache misses than the copies it saves.
pub(crate) fn body_size_hint(messages: &[&Message]) -> usize {
    size_hint_for(messages.len())
}

/// [`body_size_hint`] for `count` messages.
pub(crate) fn size_hint_for(count: usize) -> usize {
    count * 192 + 4096
}

/// Serializes the body: `map` with `items` under `key`. `size_hint` is the expected byte length
/// (the buffer's initial capacity). The payload hook runs later, on the request's task
/// ([`apply_payload_hook`]).
pub(crate) fn encode_body<T: WriteJson + ?Sized>(
    map: Map<String, Value>,
    key: &str,
    items: &T,
    size_hint: usize,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(size_hint);
    encode_body_flushing(&map, key, items, &mut out, &mut |_| {})?;
    Ok(out)
}

/// [`encode_body`] into `out`, calling `flush` with the buffer between the items of the list
/// (where a caller may hand off and clear what is written so far).
pub(crate) fn encode_body_flushing<T: WriteJson + ?Sized>(
    map: &Map<String, Value>,
    key: &str,
    items: &T,
    out: &mut Vec<u8>,
    flush: &mut dyn FnMut(&mut Vec<u8>),
) -> Result<(), String> {
    out.push(b'{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, k);
        out.push(b':');
        if k == key {
            items.write_json_flushing(out, flush);
        } else {
            serde_json::to_writer(&mut *out, v).map_err(serialize_error)?;
        }
    }
    out.push(b'}');
    Ok(())
}

/// A body up to this size is built whole; a larger one is written into the connection in pieces
/// of about this size as it is produced ([`encode_or_defer`]).
pub(crate) const STREAMED_BODY_CHUNK: usize = 1 << 20;

/// Builds a body with `write` (which writes it into the buffer, calling the flush callback where
/// the text may be cut). A body of at most [`STREAMED_BODY_CHUNK`] bytes comes back whole; a
/// larger one is measured (its pieces dropped as they are written) and comes back as a
/// [`BodySource`] that writes it again, piece by piece, when it is sent: a large transcript's
/// request is never held whole beside the transcript. Once the first piece is dropped, the
/// measuring pass only counts long strings ([`Measuring`]) instead of escaping them into the buffer. `write` must write the same bytes each time.
pub(crate) fn encode_or_defer<F>(write: F) -> Result<(bytes::Bytes, Option<BodySource>), String>
where
    F: Fn(&mut Vec<u8>, &mut dyn FnMut(&mut Vec<u8>)) -> Result<(), String> + Send + Sync + 'static,
{
    let mut out = Vec::with_capacity(64 * 1024);
    let mut dropped = 0u64;
    // Once the body is known to be large, its long strings are only measured (the body is
    // written again when it is sent).
    let mut measuring: Option<Measuring> = None;
    write(&mut out, &mut |buf: &mut Vec<u8>| {
        if buf.len() >= STREAMED_BODY_CHUNK {
            dropped += buf.len() as u64;
            buf.clear();
            measuring.get_or_insert_with(Measuring::start);
        }
    })?;
    if dropped == 0 {
        return Ok((out.into(), None));
    }
    let measured = measuring.map_or(0, Measuring::finish);
    let len = dropped + out.len() as u64 + measured;
    Ok((bytes::Bytes::new(), Some(BodySource::new(len, write))))
}

/// A request body's handoff, planned on the body's first writing and applied on the next: a
/// large body is written twice from the same transcript (measured, then sent), and the handoff
/// is a pass over every message of it. Each body's writer owns one.
#[derive(Debug, Default)]
pub(crate) struct HandoffMemo(std::sync::OnceLock<Vec<crate::handoff::Handed>>);

impl HandoffMemo {
    /// The handoff of `view`: `plan` runs on the first call only (the view must be the same each
    /// time, as a body's writer's is).
    pub(crate) fn handed_off<'a>(
        &'a self,
        view: &'a [&'a Message],
        plan: impl FnOnce() -> Vec<crate::handoff::Handed>,
    ) -> Vec<crate::handoff::HandedOff<'a>> {
        crate::handoff::apply_handoff(self.0.get_or_init(plan), view)
    }
}

/// The transcript a request's body is written from.
pub(crate) enum BodyContext<'a> {
    /// Borrowed from the caller (`build_request_ref`): the body is built whole, at once.
    Borrowed(&'a TranscriptContext),
    /// Owned by the request (a provider's `stream`): a body over [`STREAMED_BODY_CHUNK`] is
    /// written into the connection as it is produced ([`encode_or_defer`]).
    Owned(Arc<TranscriptContext>),
}

impl BodyContext<'_> {
    /// The transcript.
    pub(crate) fn get(&self) -> &TranscriptContext {
        match self {
            BodyContext::Borrowed(context) => context,
            BodyContext::Owned(context) => context,
        }
    }
}

/// A request's body written by `write` from `context`: whole for a borrowed transcript (in a
/// buffer of `size_hint` bytes), else through [`encode_or_defer`] (whole when small, a
/// [`BodySource`] when large). `write` must write the same bytes each time; an error it returns
/// (a setup check) comes back at once either way.
pub(crate) fn request_body<W>(
    context: &BodyContext<'_>,
    size_hint: usize,
    write: W,
) -> Result<(bytes::Bytes, Option<BodySource>), String>
where
    W: Fn(&TranscriptContext, &mut Vec<u8>, &mut dyn FnMut(&mut Vec<u8>)) -> Result<(), String> + Send + Sync + 'static,
{
    match context {
        BodyContext::Borrowed(context) => {
            let mut out = Vec::with_capacity(size_hint);
            write(context, &mut out, &mut |_| {})?;
            Ok((out.into(), None))
        }
        BodyContext::Owned(context) => {
            let context = context.clone();
            encode_or_defer(move |out, flush| write(&context, out, flush))
        }
    }
}

fn serialize_error(e: serde_json::Error) -> String {
    format!("Could not serialize the request: {e}")
}

/// pi's `onPayload` step: with `options.on_payload` set, the encoded body is read back as a
/// `Value`, the hook's future is awaited, and a replacement (adjusted by `on_replaced`, e.g.
/// forcing `stream: true`) becomes the body. Without a hook, or when it keeps the body, the bytes
/// are returned unchanged. A body serde_json cannot read back (deeper than 128 levels) is an
/// error, never `null`.
pub(crate) async fn apply_payload_hook(
    body: bytes::Bytes,
    options: &StreamOptions,
    model: &Model,
    on_replaced: impl FnOnce(&mut Value),
) -> Result<bytes::Bytes, String> {
    let Some(hook) = options.active_payload_hook() else {
        return Ok(body);
    };
    let value: Value = serde_json::from_slice(&body).map_err(serialize_error)?;
    match hook(&value, model).await {
        Some(mut replaced) => {
            on_replaced(&mut replaced);
            serde_json::to_vec(&replaced).map(bytes::Bytes::from).map_err(serialize_error)
        }
        None => Ok(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct S(&'static str);

    impl WriteJson for S {
        fn write_json(&self, out: &mut Vec<u8>) {
            write_str(out, self.0);
        }
    }

    #[test]
    fn splices_in_place() {
        let Value::Object(map) = json!({"a": 1, "messages": null, "z": [true]}) else { unreachable!() };
        let items = vec![S("x"), S("y")];
        let bytes = encode_body(map, "messages", &items, 0);
        assert_eq!(bytes.ok().as_deref(), Some(br#"{"a":1,"messages":["x","y"],"z":[true]}"#.as_slice()));
    }

    #[test]
    fn hook_sees_and_replaces_the_value() {
        let Value::Object(map) = json!({"messages": null, "stream": true}) else { unreachable!() };
        let hook: crate::options::PayloadHook = std::sync::Arc::new(|body: &Value, _: &Model| {
            let seen = body["messages"].clone();
            // A hook that truly awaits: it yields once before answering.
            Box::pin(async move {
                futures::future::lazy(|_| ()).await;
                assert_eq!(seen, json!(["x"]));
                Some(json!({"replaced": 1}))
            })
        });
        let options = StreamOptions { on_payload: Some(hook), ..Default::default() };
        let body = encode_body(map, "messages", &vec![S("x")], 0).unwrap_or_default().into();
        let bytes = futures::executor::block_on(apply_payload_hook(body, &options, &Model::default(), |v| {
            v["stream"] = json!(true);
        }));
        assert_eq!(bytes.ok().as_deref(), Some(br#"{"replaced":1,"stream":true}"#.as_slice()));
    }

    #[test]
    fn a_hook_keeping_the_body_sends_the_same_bytes() {
        let Value::Object(map) = json!({"b": 1, "messages": null, "a": 2}) else { unreachable!() };
        let hook = crate::options::sync_payload_hook(|_, _| None);
        let options = StreamOptions { on_payload: Some(hook), ..Default::default() };
        let body: bytes::Bytes = encode_body(map, "messages", &vec![S("x")], 0).unwrap_or_default().into();
        let out = futures::executor::block_on(apply_payload_hook(body.clone(), &options, &Model::default(), |_| {}));
        assert_eq!(out.ok(), Some(body));
    }

    #[test]
    fn a_hook_that_does_not_want_the_body_is_skipped_without_reading_it() {
        let called = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = called.clone();
        let hook = crate::options::sync_payload_hook(move |_, _| {
            seen.store(true, std::sync::atomic::Ordering::SeqCst);
            Some(json!({"replaced": 1}))
        });
        let wanted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let answer = wanted.clone();
        let options = StreamOptions {
            on_payload: Some(hook),
            on_payload_wanted: Some(std::sync::Arc::new(move || answer.load(std::sync::atomic::Ordering::SeqCst))),
            ..Default::default()
        };
        // Not JSON at all: a skipped hook never reads the body back.
        let body = bytes::Bytes::from_static(b"not json");
        let out = futures::executor::block_on(apply_payload_hook(body.clone(), &options, &Model::default(), |_| {}));
        assert_eq!(out.ok(), Some(body));
        assert!(!called.load(std::sync::atomic::Ordering::SeqCst));
        wanted.store(true, std::sync::atomic::Ordering::SeqCst);
        let body = bytes::Bytes::from_static(b"{}");
        let out = futures::executor::block_on(apply_payload_hook(body, &options, &Model::default(), |_| {}));
        assert_eq!(out.ok().as_deref(), Some(br#"{"replaced":1}"#.as_slice()));
        assert!(called.load(std::sync::atomic::Ordering::SeqCst));
    }

    /// Nesting deeper than serde_json reads back.
    struct Deep;

    impl WriteJson for Deep {
        fn write_json(&self, out: &mut Vec<u8>) {
            out.extend(std::iter::repeat_n(b'[', 200));
            out.extend(std::iter::repeat_n(b']', 200));
        }
    }

    #[test]
    fn a_body_the_hook_cannot_see_is_an_error_not_null() {
        let Value::Object(map) = json!({"messages": null}) else { unreachable!() };
        let hook = crate::options::sync_payload_hook(|_, _| None);
        let options = StreamOptions { on_payload: Some(hook), ..Default::default() };
        let body = encode_body(map, "messages", &vec![Deep], 0).unwrap_or_default().into();
        let result = futures::executor::block_on(apply_payload_hook(body, &options, &Model::default(), |_| {}));
        let error = result.err().unwrap_or_default();
        assert!(error.starts_with("Could not serialize the request: recursion limit exceeded"), "{error}");
    }
}
