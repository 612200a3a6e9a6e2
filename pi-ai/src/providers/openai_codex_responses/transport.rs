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
use crate::sse::SseEventRef;
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

/// The WebSocket plan of a request, `None` for SSE (the transport, a setup error, a bad token).
fn plan(
    model: &Model,
    options: &StreamOptions,
    request: &Result<HttpRequest, String>,
    grammar: &Grammar,
) -> Option<WsPlan> {
    let transport = options.transport.unwrap_or_default();
    let request = request.as_ref().ok().filter(|_| transport != Transport::Sse)?;
    let retention = options.cache_retention.unwrap_or_else(crate::options::CacheRetention::from_env);
    let session = options.session_id.clone().filter(|_| retention != crate::options::CacheRetention::None);
    let clamped: Option<String> = session.as_ref().map(|s| s.chars().take(64).collect());
    let request_id = clamped.filter(|s| !s.is_empty()).unwrap_or_else(websocket::uuid_v7);
    let headers = websocket_headers(model, options, &request_id).ok()?;
    let account = super::account_id(options.api_key.as_deref()?).ok()?;
    Some(WsPlan {
        url: websocket::websocket_url(&request.url),
        headers,
        session,
        account,
        transport,
        grammar: grammar.clone(),
    })
}

type Grammar = std::collections::HashMap<String, String>;

/// The Codex provider's stream: hook, WebSocket when asked for, else (or on fallback) SSE.
pub fn stream(model: &Model, context: &TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
    let grammar = openai_responses::grammar_tool_properties(model, context);
    let request = build_request_ref(model, context, &options);
    let plan = plan(model, &options, &request, &grammar);
    let handler = CodexStream::new().with_grammar_tools(grammar);
    let ctx = Arc::new(StreamContext { model: model.clone(), options });
    AssistantMessageEventStream::new(async_stream::stream! {
        let mut out = ProviderOutput::new(&ctx.model);
        if let Some(Value::String(effort)) = super::configuration_update_effort(&ctx.model, &ctx.options) {
            out.message_mut().provider_thinking_level = Some(effort);
        }
        let mut handler = handler;
        out.message_mut().timestamp = now_ms();
        let (request, body) = match prepare(request, &ctx, &mut handler).await {
            Ok(prepared) => prepared,
            Err(message) => {
                out.fail(message, ctx.aborted());
                for e in out.take_events() { yield e; }
                return;
            }
        };
        let mut started = false;
        let session = plan.as_ref().and_then(|p| p.session.clone());
        if let Some(plan) = plan.filter(|p| !websocket::fallback_active(p.session.as_deref())) {
            // The socket's events reach the request's observer as pi's `onProviderStreamEvent`
            // (awaited, before the events normalized from them); a socket has no `onResponse`.
            let mut ws_options = ctx.options.clone();
            let observed = crate::http::ObservedEvents::install(&mut ws_options);
            let ws_ctx = StreamContext { model: ctx.model.clone(), options: ws_options };
            let mut run = WsRun::new(&plan, &body);
            let outcome = loop {
                let step = run.step(&mut handler, &ws_ctx, &mut out).await;
                if let Some(observed) = &observed {
                    observed.deliver(&ctx.model).await;
                }
                for e in out.take_events() { yield e; }
                if let Some(outcome) = step { break outcome; }
            };
            started = run.started;
            if !fallback(outcome, &plan, &mut handler, &ctx, &mut out, body.len()) {
                for e in out.take_events() { yield e; }
                return;
            }
        } else if session.is_some() && ctx.options.transport.is_some_and(|t| t != Transport::Sse) {
            websocket::record_sse_fallback(session.as_deref());
        }
        let mut inner = sse(request, body, &ctx, out, handler);
        while let Some(event) = inner.next().await {
            if started && matches!(event, AssistantMessageEvent::Start { .. }) {
                continue;
            }
            yield event;
        }
    })
}

/// The built request and its body after the payload hook (which runs once, on the JSON).
async fn prepare(
    request: Result<HttpRequest, String>,
    ctx: &StreamContext,
    handler: &mut CodexStream,
) -> Result<(HttpRequest, bytes::Bytes), String> {
    if ctx.aborted() {
        return Err("Request was aborted".to_owned());
    }
    let request = request?;
    let cancel = ctx.options.cancel_token();
    let hooked = crate::http::body::apply_payload_hook(request.body.clone(), &ctx.options, &ctx.model, |v| {
        handler.on_replaced_payload(v)
    });
    let body = tokio::select! {
        biased;
        () = cancel.cancelled() => Err("Request was aborted".to_owned()),
        body = hooked => body,
    }?;
    Ok((request, body))
}

/// Settles a WebSocket outcome: `true` when the request goes on over SSE, else the message is
/// finished (done or failed) in `out`.
fn fallback(
    outcome: Outcome,
    plan: &WsPlan,
    handler: &mut CodexStream,
    ctx: &StreamContext,
    out: &mut ProviderOutput,
    body_bytes: usize,
) -> bool {
    match outcome {
        Outcome::Done => {
            match handler.on_end(ctx, out) {
                Ok(()) => out.done(),
                Err(message) => {
                    handler.on_error(out);
                    out.fail(message, false);
                }
            }
            false
        }
        Outcome::Fail(error) => {
            let aborted = ctx.aborted() || error == WsError::Aborted;
            if !aborted {
                handler.on_error(out);
            }
            out.fail(error.message(), aborted);
            false
        }
        Outcome::Fallback(error, events_emitted) => {
            push_diagnostic(out, &error, plan.transport, events_emitted, body_bytes);
            websocket::record_failure(plan.session.as_deref(), &error);
            if events_emitted {
                handler.on_error(out);
                out.fail(error.message(), false);
                return false;
            }
            websocket::record_sse_fallback(plan.session.as_deref());
            true
        }
    }
}

/// The SSE request: the zstd-compressed body with `content-encoding: zstd`, the hook already run.
fn sse(
    request: HttpRequest,
    body: bytes::Bytes,
    ctx: &StreamContext,
    out: ProviderOutput,
    handler: CodexStream,
) -> AssistantMessageEventStream {
    let mut sse_request = HttpRequest { url: request.url, headers: request.headers, body, source: None };
    if let Some(compressed) = compress_body(&sse_request.body) {
        sse_request.headers.set("content-encoding", "zstd");
        sse_request.body = compressed.into();
    }
    let mut options = ctx.options.clone();
    options.on_payload = None;
    let sse_ctx = StreamContext { model: ctx.model.clone(), options };
    stream_sse(sse_ctx, out, Ok(sse_request), ErrorStyle::Codex, handler)
}

/// How the WebSocket attempts ended.
enum Outcome {
    /// The answer completed.
    Done,
    /// The request failed (no fallback).
    Fail(WsError),
    /// The socket failed; whether events were already emitted.
    Fallback(WsError, bool),
}

/// The WebSocket attempts of one request, one step (connect, or one frame) at a time.
struct WsRun<'p> {
    plan: &'p WsPlan,
    full: Option<Map<String, Value>>,
    turn: Option<Turn>,
    retried_limit: bool,
    retried_continuation: bool,
    attempt_started: bool,
    /// Whether `start` was emitted.
    started: bool,
}

impl<'p> WsRun<'p> {
    fn new(plan: &'p WsPlan, body: &[u8]) -> Self {
        WsRun {
            plan,
            full: serde_json::from_slice(body).ok(),
            turn: None,
            retried_limit: false,
            retried_continuation: false,
            attempt_started: false,
            started: false,
        }
    }

    /// One step; `Some` when the attempts are over.
    async fn step(
        &mut self,
        handler: &mut CodexStream,
        ctx: &StreamContext,
        out: &mut ProviderOutput,
    ) -> Option<Outcome> {
        let Some(full) = self.full.as_ref() else {
            return Some(Outcome::Fail(WsError::Protocol("Codex request body is not a JSON object".to_owned())));
        };
        let Some(turn) = self.turn.as_mut() else {
            self.attempt_started = false;
            return match open_turn(self.plan, full, ctx).await {
                Ok(turn) => {
                    self.turn = Some(turn);
                    None
                }
                Err(error) => self.after(error, ctx),
            };
        };
        let cancel = ctx.options.cancel_token();
        let text = match turn.acquired.socket() {
            Ok(socket) => websocket::next_text(socket, &cancel, ctx.options.idle_timeout(), handler.finished()).await,
            Err(error) => Err(error),
        };
        let result = match text {
            Ok(Some(text)) => on_frame(&text, handler, ctx, out, &mut self.attempt_started, &mut self.started),
            Ok(None) => Ok(true),
            Err(error) => Err(error),
        };
        let result = match result {
            Ok(true) if ctx.aborted() => Err(WsError::Aborted),
            other => other,
        };
        match result {
            Ok(false) => None,
            Ok(true) => {
                let turn = self.turn.take()?;
                finish_turn(turn, self.plan, ctx, out).await;
                Some(Outcome::Done)
            }
            Err(error) => {
                let turn = self.turn.take()?;
                if let Some(key) = turn.acquired.key() {
                    websocket::set_continuation(key, None);
                }
                websocket::release(turn.acquired, false).await;
                self.after(error, ctx)
            }
        }
    }

    /// After a failed attempt: `None` to retry, else the outcome (pi's retry and fallback rules).
    fn after(&mut self, error: WsError, ctx: &StreamContext) -> Option<Outcome> {
        let aborted = ctx.aborted();
        let started = self.attempt_started;
        let limit_before_start = !started && error.api_code() == Some(websocket::CONNECTION_LIMIT_REACHED);
        if !aborted && error.api_code() == Some(websocket::PREVIOUS_RESPONSE_NOT_FOUND) && !self.retried_continuation {
            self.retried_continuation = true;
            return None;
        }
        if !aborted && limit_before_start && !self.retried_limit {
            self.retried_limit = true;
            return None;
        }
        if aborted || error == WsError::Aborted || (error.is_non_transport() && !limit_before_start) {
            return Some(Outcome::Fail(error));
        }
        Some(Outcome::Fallback(error, started))
    }
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
    let sse = SseEventRef { event: None, data: text, id: None };
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
