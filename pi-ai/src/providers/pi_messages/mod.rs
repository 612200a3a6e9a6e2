//! `pi-messages`: pi's own message protocol (the Radius gateway speaks it; any backend may, through
//! a models.json provider with `"api": "pi-messages"`). One `POST {baseUrl}/messages` of
//! `{model, context, options}` with a bearer key; the answer is an SSE stream of serialized
//! assistant-message events ending with `done` or `error`.
//!
//! Any failure ends as one `error` event with an empty message, as the reference reports it; a
//! non-2xx answer reads `<status> <reason>: <error.message or body>[ (<error.code>)]`. No retries.

mod stream;

pub use stream::{Step, on_event, on_typed_delta, parse_data};

use serde_json::{Map, Value, json};

use crate::http::body::BodyContext;
use crate::http::{HeaderMap, HttpError, HttpRequest, ProviderOutput, send_with_retries};
use crate::options::{CacheRetention, StreamOptions, ToolChoice};
use crate::provider::ApiProvider;
use std::ops::ControlFlow;

use crate::sse::SseParser;
use crate::stream::AssistantMessageEventStream;
use crate::transcript::TranscriptContext;
use crate::types::{Model, Usage, now_ms};

/// The API id.
pub const API: &str = "pi-messages";

/// The `pi-messages` provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct PiMessages;

impl ApiProvider for PiMessages {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
        let context = BodyContext::Owned(std::sync::Arc::new(context));
        run(model.clone(), build_request_from(model, context, &options), options)
    }
}

/// The request options pi forwards (unset ones left out).
fn forwarded_options(options: &StreamOptions) -> Map<String, Value> {
    let mut o = Map::new();
    if let Some(t) = options.temperature {
        o.insert("temperature".into(), json!(t));
    }
    if let Some(n) = options.max_tokens {
        o.insert("maxTokens".into(), json!(n));
    }
    if let Some(level) = options.reasoning {
        o.insert("reasoning".into(), json!(level.as_str()));
    }
    let retention = options
        .cache_retention
        .or_else(|| (CacheRetention::from_env() == CacheRetention::Long).then_some(CacheRetention::Long));
    if let Some(r) = retention {
        let name = match r {
            CacheRetention::None => "none",
            CacheRetention::Short => "short",
            CacheRetention::Long => "long",
        };
        o.insert("cacheRetention".into(), json!(name));
    }
    if let Some(session) = &options.session_id {
        o.insert("sessionId".into(), json!(session));
    }
    if let Some(choice) = options.tool_choice {
        o.insert("toolChoice".into(), json!(if choice == ToolChoice::Auto { "auto" } else { "none" }));
    }
    o
}

/// Builds the request, or the setup error text.
pub fn build_request_ref(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    build_request_from(model, BodyContext::Borrowed(context), options)
}

/// [`build_request_ref`] from a borrowed transcript (the body built whole) or one the request
/// owns (a large body written into the connection as it is produced).
fn build_request_from(model: &Model, context: BodyContext<'_>, options: &StreamOptions) -> Result<HttpRequest, String> {
    let key = options.api_key.clone().filter(|k| !k.is_empty());
    let Some(key) = key else { return Err(format!("No API key provided for provider \"{}\"", model.provider)) };
    let id = model.id.clone();
    let forwarded = Value::Object(forwarded_options(options));
    let size_hint = crate::http::body::size_hint_for(context.get().messages().len());
    let (body, source) = crate::http::body::request_body(&context, size_hint, move |context, out, flush| {
        write_body(&id, context, &forwarded, out, flush).map_err(|e| format!("Could not serialize the request: {e}"))
    })?;
    let mut headers = HeaderMap::new();
    headers.set("User-Agent", crate::http::user_agent());
    headers.set("authorization", format!("Bearer {key}"));
    headers.set("accept", "text/event-stream");
    headers.set("content-type", "application/json");
    if let Some(h) = &model.headers {
        headers.merge_json(h);
    }
    headers.merge(options.headers.iter().map(|(k, v)| (k.as_str(), v.clone())));
    let url = format!("{}/messages", model.base_url.trim_end_matches('/'));
    Ok(HttpRequest { url, headers, body, source })
}

/// Writes pi's payload `{model, context: {messages}, options}` into `out`, calling `flush`
/// between messages.
fn write_body(
    model_id: &str,
    context: &TranscriptContext,
    options: &Value,
    out: &mut Vec<u8>,
    flush: &mut dyn FnMut(&mut Vec<u8>),
) -> Result<(), serde_json::Error> {
    out.extend_from_slice(b"{\"model\":");
    serde_json::to_writer(&mut *out, model_id)?;
    out.extend_from_slice(b",\"context\":{\"messages\":[");
    for (i, message) in context.messages().iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, message)?;
        flush(out);
    }
    out.extend_from_slice(b"]},\"options\":");
    serde_json::to_writer(&mut *out, options)?;
    out.push(b'}');
    Ok(())
}

/// `<status> <reason>: <error.message or body>[ (<code>)]`.
pub fn format_status_error(status: u16, body: &str) -> String {
    let reason = reqwest::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("");
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(|p| p.get("error")).filter(|e| e.is_object());
    let message = error.and_then(|e| e.get("message")).and_then(Value::as_str).unwrap_or(body);
    let code = error.and_then(|e| e.get("code")).and_then(Value::as_str).map(|c| format!(" ({c})")).unwrap_or_default();
    format!("{status} {reason}: {message}{code}")
}

fn fail_fresh(out: &mut ProviderOutput, text: String, aborted: bool) {
    let m = out.message_mut();
    m.content.clear();
    m.usage = Usage::default();
    m.response_id = None;
    out.fail(text, aborted);
}

fn run(model: Model, request: Result<HttpRequest, String>, options: StreamOptions) -> AssistantMessageEventStream {
    let mut out = ProviderOutput::new(&model);
    AssistantMessageEventStream::new(async_stream::stream! {
        out.message_mut().timestamp = now_ms();
        let aborted = || options.is_cancelled();
        let abort_text = "This operation was aborted".to_owned();
        if aborted() {
            fail_fresh(&mut out, abort_text, true);
            for e in out.take_events() { yield e; }
            return;
        }
        let request = match request {
            Ok(request) => request,
            Err(text) => {
                fail_fresh(&mut out, text, false);
                for e in out.take_events() { yield e; }
                return;
            }
        };
        let mut request = request;
        if options.active_payload_hook().is_some()
            && let Err(text) = request.materialize()
        {
            fail_fresh(&mut out, text, false);
            for e in out.take_events() { yield e; }
            return;
        }
        match crate::http::body::apply_payload_hook(std::mem::take(&mut request.body), &options, &model, |_| {}).await {
            Ok(body) => request.body = body,
            Err(text) => {
                fail_fresh(&mut out, text, false);
                for e in out.take_events() { yield e; }
                return;
            }
        }
        let send_options = StreamOptions { max_retries: 0, ..options.clone() };
        let style = crate::http::ErrorStyle::OpenAiCompletions;
        let (status, headers, mut body) = match send_with_retries(&request, &send_options, &style).await {
            Ok(response) => response,
            Err(error) => {
                let text = match &error {
                    HttpError::Status { status, body } => format_status_error(*status, body),
                    HttpError::Aborted => abort_text.clone(),
                    other => style.format(other),
                };
                fail_fresh(&mut out, if aborted() { abort_text } else { text }, aborted());
                for e in out.take_events() { yield e; }
                return;
            }
        };
        if let Some(hook) = &options.on_response {
            hook(&crate::options::ProviderResponse { status, headers }, &model);
        }
        let mut parser = SseParser::new();
        let mut failure: Option<String> = None;
        let mut ended = false;
        loop {
            let chunk = match body.next_chunk().await {
                Ok(Some(chunk)) => Some(chunk),
                Ok(None) => None,
                Err(HttpError::Aborted) => { failure = Some(abort_text.clone()); break; }
                Err(error) => { failure = Some(style.format(&error)); break; }
            };
            let mut handle = |event: crate::sse::SseEventRef<'_>| {
                // No one sees the raw event: the common delta is read typed, borrowing its text.
                if options.on_provider_stream_event.is_none() && stream::on_typed_delta(event.data, &mut out) {
                    return ControlFlow::Continue(());
                }
                let value = match parse_data(event.data) {
                    Ok(Some(v)) => v,
                    Ok(None) => return ControlFlow::Continue(()),
                    Err(text) => { failure = Some(text); return ControlFlow::Break(()); }
                };
                if let Some(hook) = &options.on_provider_stream_event {
                    hook(&value, &model);
                }
                match on_event(&value, &mut out) {
                    Ok(Step::Finished) => { ended = true; ControlFlow::Break(()) }
                    Ok(Step::Continue) => ControlFlow::Continue(()),
                    Err(text) => { failure = Some(text); ControlFlow::Break(()) }
                }
            };
            let flow = match &chunk {
                Some(chunk) => parser.push_with(chunk, &mut handle),
                None => { parser.finish_with(&mut handle); ControlFlow::Break(()) }
            };
            for e in out.take_events() { yield e; }
            if flow.is_break() { break; }
        }
        if !ended {
            let text = failure.unwrap_or_else(|| format!("{} stream ended without a terminal event", model.provider));
            let is_aborted = aborted();
            fail_fresh(&mut out, if is_aborted { abort_text } else { text }, is_aborted);
        }
        for e in out.take_events() { yield e; }
    })
}
