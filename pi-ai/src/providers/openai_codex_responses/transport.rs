//! Which transport a Codex request takes (pi's `stream` in `openai-codex-responses.js`).
//!
//! 1. The payload hook runs once, on the JSON body.
//! 2. Unless the transport is `sse` (the default of [`StreamOptions::transport`]) or the session
//!    already fell back to SSE, the request goes over the WebSocket ([`super::websocket`]):
//!    - a `websocket_connection_limit_reached` error before the answer started is retried once on
//!      a fresh socket, a `previous_response_not_found` error once with the full input;
//!    - a Codex error event or a malformed frame ends the request (no fallback);
//!    - any other failure before the first event records a `provider_transport_failure`
//!      diagnostic on the message, switches the session to SSE for good, and sends the same
//!      request over SSE; after the first event it ends the request.
//! 3. Over SSE the body is zstd-compressed (level 3) with `content-encoding: zstd`.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Map, Value, json};

use super::websocket::{self, Acquired, Continuation, WsError};
use super::{CodexStream, build_request_ref, websocket_headers};
use crate::http::{ErrorStyle, HttpRequest, ProviderOutput, SseHandler, StreamContext, stream_sse};
use crate::options::{StreamOptions, Transport};
use crate::providers::openai_responses;
use crate::sse::SseEvent;
use crate::stream::{AssistantMessageEvent, AssistantMessageEventStream};
use crate::transcript::TranscriptContext;
use crate::types::{Message, Model, now_ms};

/// The zstd level of SSE request bodies (the official Codex client's).
pub const ZSTD_LEVEL: i32 = 3;

/// The zstd-compressed body, or `None` when compression fails (the body then goes as it is).
pub fn compress_body(body: &[u8]) -> Option<Vec<u8>> {
    zstd::bulk::compress(body, ZSTD_LEVEL).ok()
}

/// Everything one WebSocket request needs.
struct WsPlan {
    url: String,
    headers: crate::http::HeaderMap,
    /// The session id as given (the cache and fallback key).
    session: Option<String>,
    account: String,
    transport: Transport,
    grammar: std::collections::HashMap<String, String>,
}

/// The Codex provider's stream: hook, WebSocket when asked for, else (or on fallback) SSE.
pub fn stream(model: &Model, context: &TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
    let grammar = openai_responses::grammar_tool_properties(model, context);
    let request = build_request_ref(model, context, &options);
    let transport = options.transport.unwrap_or_default();
    let retention = options.cache_retention.unwrap_or_else(crate::options::CacheRetention::from_env);
    let session = options.session_id.clone().filter(|_| retention != crate::options::CacheRetention::None);
    let plan = request.as_ref().ok().filter(|_| transport != Transport::Sse).map(|request| {
        let clamped: Option<String> = session.as_ref().map(|s| s.chars().take(64).collect());
        let request_id = clamped.filter(|s| !s.is_empty()).unwrap_or_else(websocket::uuid_v7);
        let headers = websocket_headers(model, &options, &request_id);
        let account = options.api_key.as_deref().map(super::account_id);
        (headers, account, request.url.clone())
    });
    let plan = match plan {
        Some((Ok(headers), Some(Ok(account)), url)) => Some(WsPlan {
            url: websocket::websocket_url(&url),
            headers,
            session: session.clone(),
            account,
            transport,
            grammar: grammar.clone(),
        }),
        _ => None,
    };
    let handler = CodexStream::new().with_grammar_tools(grammar);
    let ctx = Arc::new(StreamContext { model: model.clone(), options });
    AssistantMessageEventStream::new(async_stream::stream! {
        let mut out = ProviderOutput::new(&ctx.model);
        if let Some(Value::String(effort)) = super::configuration_update_effort(&ctx.model, &ctx.options) {
            out.message_mut().provider_thinking_level = Some(effort);
        }
        let mut handler = handler;
        out.message_mut().timestamp = now_ms();
        if ctx.aborted() {
            out.fail("Request was aborted".to_owned(), true);
            for e in out.take_events() { yield e; }
            return;
        }
        let request = match request {
            Ok(request) => request,
            Err(message) => {
                out.fail(message, false);
                for e in out.take_events() { yield e; }
                return;
            }
        };
        let cancel = ctx.options.cancel_token();
        let hooked = crate::http::body::apply_payload_hook(request.body.clone(), &ctx.options, &ctx.model, |v| {
            handler.on_replaced_payload(v)
        });
        let body = tokio::select! {
            biased;
            () = cancel.cancelled() => Err("Request was aborted".to_owned()),
            body = hooked => body,
        };
        let body = match body {
            Ok(body) => body,
            Err(message) => {
                out.fail(message, ctx.aborted());
                for e in out.take_events() { yield e; }
                return;
            }
        };
        let session = plan.as_ref().and_then(|p| p.session.clone());
        let mut started = false;
        if let Some(plan) = plan.filter(|p| !websocket::fallback_active(p.session.as_deref())) {
            let full: Option<Map<String, Value>> = serde_json::from_slice(&body).ok();
            let mut retried_limit = false;
            let mut retried_continuation = false;
            let outcome = loop {
                let Some(full) = full.as_ref() else { break Err(WsError::Protocol("Codex request body is not a JSON object".to_owned())) };
                let mut attempt_started = false;
                let mut turn = match open_turn(&plan, full, &ctx).await {
                    Ok(turn) => turn,
                    Err(error) => {
                        match classify(&error, false, &mut retried_limit, &mut retried_continuation, ctx.aborted()) {
                            Next::Retry => continue,
                            Next::Fail => break Err(error),
                            Next::Fallback => break Ok(Err((error, false))),
                        }
                    }
                };
                let result = loop {
                    let text = {
                        let socket = match turn.acquired.socket() {
                            Ok(socket) => socket,
                            Err(error) => break Err(error),
                        };
                        websocket::next_text(socket, &cancel, ctx.options.idle_timeout(), handler.finished()).await
                    };
                    let text = match text {
                        Ok(Some(text)) => text,
                        Ok(None) => break Ok(()),
                        Err(error) => break Err(error),
                    };
                    let step = on_frame(&text, &mut handler, &ctx, &mut out, &mut attempt_started, &mut started);
                    for e in out.take_events() { yield e; }
                    match step {
                        Ok(true) => break Ok(()),
                        Ok(false) => {}
                        Err(error) => break Err(error),
                    }
                };
                let result = result.and_then(|()| {
                    if ctx.aborted() { Err(WsError::Aborted) } else { Ok(()) }
                });
                match result {
                    Ok(()) => {
                        finish_turn(turn, &plan, &ctx, &out).await;
                        break Ok(Ok(()));
                    }
                    Err(error) => {
                        if let Some(key) = turn.acquired.key() {
                            websocket::set_continuation(key, None);
                        }
                        websocket::release(turn.acquired, false).await;
                        match classify(&error, attempt_started, &mut retried_limit, &mut retried_continuation, ctx.aborted()) {
                            Next::Retry => continue,
                            Next::Fail => break Err(error),
                            Next::Fallback => break Ok(Err((error, attempt_started))),
                        }
                    }
                }
            };
            match outcome {
                Ok(Ok(())) => {
                    let result = handler.on_end(&ctx, &mut out);
                    match result {
                        Ok(()) => out.done(),
                        Err(message) => {
                            handler.on_error(&mut out);
                            out.fail(message, false);
                        }
                    }
                    for e in out.take_events() { yield e; }
                    return;
                }
                Err(error) => {
                    let aborted = ctx.aborted() || error == WsError::Aborted;
                    if !aborted {
                        handler.on_error(&mut out);
                    }
                    out.fail(error.message(), aborted);
                    for e in out.take_events() { yield e; }
                    return;
                }
                Ok(Err((error, events_emitted))) => {
                    push_diagnostic(&mut out, &error, plan.transport, events_emitted, body.len());
                    websocket::record_failure(plan.session.as_deref(), &error);
                    if events_emitted {
                        handler.on_error(&mut out);
                        out.fail(error.message(), false);
                        for e in out.take_events() { yield e; }
                        return;
                    }
                    websocket::record_sse_fallback(plan.session.as_deref());
                }
            }
        } else if session.is_some() && ctx.options.transport.is_some_and(|t| t != Transport::Sse) {
            websocket::record_sse_fallback(session.as_deref());
        }
        let mut sse_request = HttpRequest { url: request.url, headers: request.headers, body };
        if let Some(compressed) = compress_body(&sse_request.body) {
            sse_request.headers.set("content-encoding", "zstd");
            sse_request.body = compressed.into();
        }
        let mut options = ctx.options.clone();
        options.on_payload = None;
        let sse_ctx = StreamContext { model: ctx.model.clone(), options };
        let mut inner = stream_sse(sse_ctx, out, Ok(sse_request), ErrorStyle::Codex, handler);
        while let Some(event) = inner.next().await {
            if started && matches!(event, AssistantMessageEvent::Start { .. }) {
                continue;
            }
            yield event;
        }
    })
}

/// What to do after a failed WebSocket attempt.
enum Next {
    Retry,
    Fail,
    Fallback,
}

fn classify(
    error: &WsError,
    started: bool,
    retried_limit: &mut bool,
    retried_continuation: &mut bool,
    aborted: bool,
) -> Next {
    let limit_before_start = !started && error.api_code() == Some(websocket::CONNECTION_LIMIT_REACHED);
    if !aborted && error.api_code() == Some(websocket::PREVIOUS_RESPONSE_NOT_FOUND) && !*retried_continuation {
        *retried_continuation = true;
        return Next::Retry;
    }
    if !aborted && limit_before_start && !*retried_limit {
        *retried_limit = true;
        return Next::Retry;
    }
    if aborted || *error == WsError::Aborted || (error.is_non_transport() && !limit_before_start) {
        return Next::Fail;
    }
    Next::Fallback
}

/// One request on a socket: the socket and the full body it continues from.
struct Turn {
    acquired: Acquired,
    full: Map<String, Value>,
    cached: bool,
}

/// Takes a socket and sends the `response.create` frame.
async fn open_turn(plan: &WsPlan, full: &Map<String, Value>, ctx: &StreamContext) -> Result<Turn, WsError> {
    let cancel = ctx.options.cancel_token();
    let timeout = ctx.options.websocket_connect_timeout.unwrap_or(websocket::DEFAULT_CONNECT_TIMEOUT);
    let mut acquired =
        websocket::acquire(&plan.url, &plan.headers, plan.session.as_deref(), &plan.account, &cancel, timeout).await?;
    let cached = matches!(plan.transport, Transport::WebSocketCached | Transport::Auto);
    let continuation = acquired.key().filter(|_| cached).and_then(websocket::continuation);
    let body = match continuation.as_ref().map(|c| (c, websocket::cached_body(full, c))) {
        Some((c, Some(delta))) if !c.last_response_id.is_empty() => delta,
        Some(_) => {
            if let Some(key) = acquired.key() {
                websocket::set_continuation(key, None);
            }
            full.clone()
        }
        None => full.clone(),
    };
    websocket::record_request(plan.session.as_deref(), acquired.reused, cached, &body);
    let frame = websocket::create_frame(&body);
    let sent = match acquired.socket() {
        Ok(socket) => websocket::send(socket, frame, &cancel).await,
        Err(error) => Err(error),
    };
    if let Err(error) = sent {
        if let Some(key) = acquired.key() {
            websocket::set_continuation(key, None);
        }
        websocket::release(acquired, false).await;
        return Err(error);
    }
    Ok(Turn { acquired, full: full.clone(), cached })
}

/// Handles one frame; `Ok(true)` once the answer completed.
fn on_frame(
    text: &str,
    handler: &mut CodexStream,
    ctx: &StreamContext,
    out: &mut ProviderOutput,
    attempt_started: &mut bool,
    started: &mut bool,
) -> Result<bool, WsError> {
    let event: Value =
        serde_json::from_str(text).map_err(|e| WsError::Protocol(format!("Invalid Codex WebSocket JSON: {e}")))?;
    let kind = event.get("type").and_then(Value::as_str).unwrap_or_default();
    if kind.is_empty() {
        ctx.raw_event(&event);
        return Ok(false);
    }
    let api_code = match kind {
        "error" => Some(
            event
                .get("code")
                .and_then(Value::as_str)
                .or_else(|| event.pointer("/error/code").and_then(Value::as_str))
                .map(str::to_owned),
        ),
        "response.failed" => Some(event.pointer("/response/error/code").and_then(Value::as_str).map(str::to_owned)),
        _ => None,
    };
    if !*attempt_started && api_code.is_none() {
        *attempt_started = true;
        if !*started {
            *started = true;
            out.start();
        }
    }
    let sse = SseEvent { event: None, data: text.to_owned(), id: None };
    match (handler.on_event(sse, ctx, out), api_code) {
        (Err(message), Some(code)) => Err(WsError::Api { message, code }),
        (Err(message), None) => Err(WsError::Protocol(message)),
        (Ok(()), _) => Ok(handler.finished()),
    }
}

/// After a completed answer: keeps the socket and, on a cached transport, what the next request
/// can continue from.
async fn finish_turn(turn: Turn, plan: &WsPlan, ctx: &StreamContext, out: &ProviderOutput) {
    let Turn { acquired, full, cached } = turn;
    if let (true, Some(key), Some(id)) = (cached, acquired.key(), out.message().response_id.clone()) {
        let items = response_items(&ctx.model, out, &plan.grammar);
        websocket::set_continuation(
            key,
            Some(Continuation { last_request_body: full, last_response_id: id, last_response_items: items }),
        );
    }
    websocket::release(acquired, true).await;
}

/// The answer as the input items the next request replays (pi converts `[output]` alone).
fn response_items(
    model: &Model,
    out: &ProviderOutput,
    grammar: &std::collections::HashMap<String, String>,
) -> Vec<Value> {
    let message = Message::Assistant(out.message().clone().into());
    let view = [&message];
    let handed_off = openai_responses::handoff(model, &view);
    let items = openai_responses::convert_items(model, &handed_off, grammar);
    items
        .iter()
        .filter_map(|item| {
            let mut bytes = Vec::new();
            crate::http::json_out::WriteJson::write_json(item, &mut bytes);
            serde_json::from_slice::<Value>(&bytes).ok()
        })
        .filter(|v| {
            !matches!(v.get("type").and_then(Value::as_str), Some("function_call_output" | "custom_tool_call_output"))
        })
        .collect()
}

/// pi's `provider_transport_failure` diagnostic.
fn push_diagnostic(out: &mut ProviderOutput, error: &WsError, transport: Transport, started: bool, bytes: usize) {
    let mut details = Map::new();
    details.insert("configuredTransport".into(), json!(transport.as_str()));
    if !started {
        details.insert("fallbackTransport".into(), json!("sse"));
    }
    details.insert("eventsEmitted".into(), json!(started));
    details.insert(
        "phase".into(),
        json!(if started { "after_message_stream_start" } else { "before_message_stream_start" }),
    );
    details.insert("requestBytes".into(), json!(bytes));
    let diagnostic = json!({
        "type": "provider_transport_failure",
        "timestamp": now_ms(),
        "error": error.diagnostic(),
        "details": Value::Object(details),
    });
    out.message_mut().diagnostics.get_or_insert_with(Vec::new).push(diagnostic);
}
