//! The Codex WebSocket transport (pi's `processWebSocketStream` and its socket cache).
//!
//! - One `response.create` text frame per request: `{"type": "response.create", ...body}`, the
//!   answer's events as text frames, ending with `response.completed` / `response.done` /
//!   `response.incomplete`.
//! - Upgrade headers: the SSE headers without `accept` / `content-type`, `OpenAI-Beta:
//!   responses_websockets=2026-02-06`, and the session id (else a UUIDv7) as `session-id` and
//!   `x-client-request-id`.
//! - With a session id, the socket is kept per (session, account) and reused by the next request
//!   (a busy socket is never shared: a concurrent request opens its own). Sockets older than
//!   45 minutes or idle for 5 minutes are closed instead of reused.
//! - With the cached transports (`websocket-cached`, `auto`), a request whose body equals the
//!   previous one but for an input that extends the previous input plus the previous answer
//!   sends only the new items, with `previous_response_id`.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::{FutureExt, SinkExt, StreamExt};
use serde_json::{Map, Value, json};
use tokio_tungstenite::tungstenite::Message as WsMessage;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

use crate::http::HeaderMap;

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// The `OpenAI-Beta` value of the WebSocket upgrade.
pub const OPENAI_BETA_RESPONSES_WEBSOCKETS: &str = "responses_websockets=2026-02-06";
/// The connect timeout without [`StreamOptions::websocket_connect_timeout`](crate::options::StreamOptions::websocket_connect_timeout).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
const IDLE_TTL: Duration = Duration::from_secs(5 * 60);
const MAX_AGE: Duration = Duration::from_secs(45 * 60);
const MESSAGE_TOO_BIG: u16 = 1009;
/// The error code that allows one retry on a fresh socket before the answer started.
pub(crate) const CONNECTION_LIMIT_REACHED: &str = "websocket_connection_limit_reached";
/// The error code that allows one retry with the full input.
pub(crate) const PREVIOUS_RESPONSE_NOT_FOUND: &str = "previous_response_not_found";

/// Why a WebSocket request failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum WsError {
    /// A Codex `error` or `response.failed` event (pi's `CodexApiError`).
    Api { message: String, code: Option<String> },
    /// A frame that is not JSON, or an event the parser refused (pi's `CodexProtocolError`).
    Protocol(String),
    /// The socket could not be used: connect failure, close, reset, idle timeout.
    Transport { name: &'static str, message: String, code: Option<u16> },
    /// The request was cancelled.
    Aborted,
}

impl WsError {
    fn transport(message: impl Into<String>) -> Self {
        WsError::Transport { name: "Error", message: message.into(), code: None }
    }

    /// The text the message's `errorMessage` gets.
    pub(crate) fn message(&self) -> String {
        match self {
            WsError::Api { message, .. } | WsError::Protocol(message) | WsError::Transport { message, .. } => {
                message.clone()
            }
            WsError::Aborted => "Request was aborted".to_owned(),
        }
    }

    /// The Codex error code of an API error.
    pub(crate) fn api_code(&self) -> Option<&str> {
        match self {
            WsError::Api { code, .. } => code.as_deref(),
            _ => None,
        }
    }

    /// Whether the failure is the server's answer, not the socket's (no SSE fallback).
    pub(crate) fn is_non_transport(&self) -> bool {
        matches!(self, WsError::Api { .. } | WsError::Protocol(_))
    }

    /// pi's `extractDiagnosticError` (without the JavaScript stack).
    pub(crate) fn diagnostic(&self) -> Value {
        let (name, code) = match self {
            WsError::Api { code, .. } => ("CodexApiError", code.clone().map(Value::from)),
            WsError::Protocol(_) => ("CodexProtocolError", None),
            WsError::Transport { name, code, .. } => (*name, code.map(Value::from)),
            WsError::Aborted => ("Error", None),
        };
        let mut error = Map::new();
        error.insert("name".into(), json!(name));
        error.insert("message".into(), json!(self.message()));
        if let Some(code) = code {
            error.insert("code".into(), code);
        }
        Value::Object(error)
    }

    fn closed(code: u16, reason: &str) -> Self {
        let reason = if reason.is_empty() && code == MESSAGE_TOO_BIG { "message too big" } else { reason };
        let message = format!("WebSocket closed {code} {reason}").trim().to_owned();
        WsError::Transport { name: "WebSocketCloseError", message, code: Some(code) }
    }
}

/// What the previous answer on a cached socket leaves for the next request.
#[derive(Clone, Debug)]
pub(crate) struct Continuation {
    /// The full body of the previous request.
    pub last_request_body: Map<String, Value>,
    /// The previous answer's id.
    pub last_response_id: String,
    /// The previous answer as input items.
    pub last_response_items: Vec<Value>,
}

struct Entry {
    socket: Option<Socket>,
    created: Instant,
    idle_since: Instant,
    continuation: Option<Continuation>,
}

type Key = (String, String);

static SOCKETS: Mutex<Option<HashMap<Key, Entry>>> = Mutex::new(None);
static FALLBACK_SESSIONS: Mutex<Option<HashSet<String>>> = Mutex::new(None);
static STATS: Mutex<Option<HashMap<String, WebSocketStats>>> = Mutex::new(None);

fn with_sockets<T>(f: impl FnOnce(&mut HashMap<Key, Entry>) -> T) -> T {
    f(SOCKETS.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert_with(HashMap::new))
}

/// Counters of one session's Codex WebSocket use (pi's `getOpenAICodexWebSocketDebugStats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WebSocketStats {
    /// Requests sent over a WebSocket.
    pub requests: u64,
    /// Sockets opened.
    pub connections_created: u64,
    /// Requests that reused an open socket.
    pub connections_reused: u64,
    /// Requests on a cached transport (`websocket-cached`, `auto`).
    pub cached_context_requests: u64,
    /// Requests that sent the whole input.
    pub full_context_requests: u64,
    /// Requests that sent only the new input (`previous_response_id`).
    pub delta_requests: u64,
    /// Input items of the last request.
    pub last_input_items: u64,
    /// The last `previous_response_id` sent.
    pub last_previous_response_id: Option<String>,
    /// WebSocket failures.
    pub websocket_failures: u64,
    /// Requests that went over SSE instead.
    pub sse_fallbacks: u64,
    /// The last failure's text.
    pub last_websocket_error: Option<String>,
    /// Whether the session now uses SSE only.
    pub websocket_fallback_active: bool,
}

fn with_stats(session: &str, f: impl FnOnce(&mut WebSocketStats)) {
    let mut guard = STATS.lock().unwrap_or_else(PoisonError::into_inner);
    f(guard.get_or_insert_with(HashMap::new).entry(session.to_owned()).or_default());
}

/// The counters of `session`, if it used the WebSocket transport.
pub fn websocket_debug_stats(session: &str) -> Option<WebSocketStats> {
    STATS.lock().unwrap_or_else(PoisonError::into_inner).as_ref().and_then(|m| m.get(session).cloned())
}

/// Forgets the counters and the SSE fallback of `session` (every session with `None`).
pub fn reset_websocket_debug_stats(session: Option<&str>) {
    let mut stats = STATS.lock().unwrap_or_else(PoisonError::into_inner);
    let mut fallback = FALLBACK_SESSIONS.lock().unwrap_or_else(PoisonError::into_inner);
    match session {
        Some(s) => {
            stats.as_mut().map(|m| m.remove(s));
            fallback.as_mut().map(|f| f.remove(s));
        }
        None => {
            *stats = None;
            *fallback = None;
        }
    }
}

/// Closes the cached sockets of `session` (every session with `None`), as pi's
/// `closeOpenAICodexWebSocketSessions` when a session ends.
pub async fn close_websocket_sessions(session: Option<&str>) {
    let sockets: Vec<Socket> = with_sockets(|all| {
        let keys: Vec<Key> = all.keys().filter(|(s, _)| session.is_none_or(|x| x == s)).cloned().collect();
        keys.into_iter().filter_map(|k| all.remove(&k).and_then(|e| e.socket)).collect()
    });
    for socket in sockets {
        close(socket, "debug_close").await;
    }
}

/// Whether `session` fell back to SSE for good.
pub(crate) fn fallback_active(session: Option<&str>) -> bool {
    let Some(session) = session else { return false };
    FALLBACK_SESSIONS.lock().unwrap_or_else(PoisonError::into_inner).as_ref().is_some_and(|f| f.contains(session))
}

/// Counts a request that went over SSE instead of the WebSocket.
pub(crate) fn record_sse_fallback(session: Option<&str>) {
    if let Some(session) = session {
        let active = fallback_active(Some(session));
        with_stats(session, |s| {
            s.sse_fallbacks += 1;
            s.websocket_fallback_active = active;
        });
    }
}

/// Records a WebSocket failure: the session uses SSE from now on.
pub(crate) fn record_failure(session: Option<&str>, error: &WsError) {
    let Some(session) = session else { return };
    FALLBACK_SESSIONS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashSet::new)
        .insert(session.to_owned());
    with_stats(session, |s| {
        s.websocket_failures += 1;
        s.last_websocket_error = Some(error.message());
        s.websocket_fallback_active = true;
    });
}

async fn close(mut socket: Socket, reason: &str) {
    let frame = CloseFrame { code: CloseCode::Normal, reason: reason.to_owned().into() };
    let _ = socket.close(Some(frame)).await;
}

/// `ws(s)://` for the `http(s)://` Codex URL.
pub fn websocket_url(http_url: &str) -> String {
    if let Some(rest) = http_url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = http_url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        http_url.to_owned()
    }
}

async fn connect(
    url: &str,
    headers: &HeaderMap,
    cancel: &CancellationToken,
    timeout: Duration,
) -> Result<Socket, WsError> {
    let mut request = url.into_client_request().map_err(|e| WsError::transport(e.to_string()))?;
    for (name, value) in headers.iter() {
        let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) else {
            return Err(WsError::transport(format!("Invalid WebSocket header: {name}")));
        };
        request.headers_mut().insert(name, value);
    }
    let connect = tokio_tungstenite::connect_async(request);
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(WsError::Aborted),
        result = tokio::time::timeout(timeout, connect) => match result {
            Err(_) => Err(WsError::transport(format!("WebSocket connect timeout after {}ms", timeout.as_millis()))),
            Ok(Err(error)) => {
                tracing::debug!(%error, "Codex WebSocket connect failed");
                // The text of pi's runtime (undici) for a refused connection or a non-101 answer.
                Err(WsError::transport("Received network error or non-101 status code."))
            }
            Ok(Ok((socket, _))) => Ok(socket),
        }
    }
}

/// Whether a cached socket is still open (no close, end or error waiting to be read).
fn still_open(socket: &mut Socket) -> bool {
    match socket.next().now_or_never() {
        None => true,
        Some(Some(Ok(WsMessage::Close(_)))) | Some(Some(Err(_))) | Some(None) => false,
        Some(Some(Ok(_))) => true,
    }
}

/// A socket in use by one request. Dropped without [`release`] (the consumer dropped the
/// stream), its cache slot is freed.
pub(crate) struct Acquired {
    socket: Option<Socket>,
    key: Option<Key>,
    /// Whether the socket was open before this request.
    pub reused: bool,
}

impl Acquired {
    fn new(socket: Socket, key: Option<Key>, reused: bool) -> Self {
        Acquired { socket: Some(socket), key, reused }
    }

    /// The cache slot, when the socket is the session's cached one.
    pub(crate) fn key(&self) -> Option<&Key> {
        self.key.as_ref()
    }

    /// The socket.
    pub(crate) fn socket(&mut self) -> Result<&mut Socket, WsError> {
        self.socket.as_mut().ok_or_else(|| WsError::transport("WebSocket closed"))
    }
}

impl Drop for Acquired {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            with_sockets(|all| {
                if all.get(&key).is_some_and(|e| e.socket.is_none()) {
                    all.remove(&key);
                }
            });
        }
    }
}

/// Takes the session's cached socket or opens one (pi's `acquireWebSocket`).
pub(crate) async fn acquire(
    url: &str,
    headers: &HeaderMap,
    session: Option<&str>,
    account: &str,
    cancel: &CancellationToken,
    timeout: Duration,
) -> Result<Acquired, WsError> {
    let Some(session) = session else {
        let socket = connect(url, headers, cancel, timeout).await?;
        return Ok(Acquired::new(socket, None, false));
    };
    let key: Key = (session.to_owned(), account.to_owned());
    enum Found {
        Reuse(Socket),
        Busy,
        Fresh(Option<(Socket, &'static str)>),
    }
    let found = with_sockets(|all| match all.get_mut(&key) {
        None => Found::Fresh(None),
        Some(entry) => match entry.socket.take() {
            None => Found::Busy,
            Some(socket) if entry.created.elapsed() >= MAX_AGE => {
                all.remove(&key);
                Found::Fresh(Some((socket, "connection_age_limit")))
            }
            Some(socket) if entry.idle_since.elapsed() >= IDLE_TTL => {
                all.remove(&key);
                Found::Fresh(Some((socket, "idle_timeout")))
            }
            Some(mut socket) => {
                if still_open(&mut socket) {
                    Found::Reuse(socket)
                } else {
                    all.remove(&key);
                    Found::Fresh(Some((socket, "done")))
                }
            }
        },
    });
    match found {
        Found::Reuse(socket) => Ok(Acquired::new(socket, Some(key), true)),
        Found::Busy => {
            let socket = connect(url, headers, cancel, timeout).await?;
            Ok(Acquired::new(socket, None, false))
        }
        Found::Fresh(stale) => {
            if let Some((socket, reason)) = stale {
                close(socket, reason).await;
            }
            let socket = connect(url, headers, cancel, timeout).await?;
            let now = Instant::now();
            with_sockets(|all| {
                all.insert(key.clone(), Entry { socket: None, created: now, idle_since: now, continuation: None });
            });
            Ok(Acquired::new(socket, Some(key), false))
        }
    }
}

/// Gives the socket back: kept for the session's next request, or closed.
pub(crate) async fn release(mut acquired: Acquired, keep: bool) {
    let (Some(socket), key) = (acquired.socket.take(), acquired.key.take()) else { return };
    let Some(key) = key else {
        close(socket, "done").await;
        return;
    };
    let rejected = with_sockets(|all| match all.get_mut(&key) {
        Some(entry) if keep => {
            entry.socket = Some(socket);
            entry.idle_since = Instant::now();
            None
        }
        _ => {
            all.remove(&key);
            Some(socket)
        }
    });
    if let Some(socket) = rejected {
        close(socket, "done").await;
    }
}

/// The continuation of a cached socket.
pub(crate) fn continuation(key: &Key) -> Option<Continuation> {
    with_sockets(|all| all.get(key).and_then(|e| e.continuation.clone()))
}

/// Sets (or clears) the continuation of a cached socket.
pub(crate) fn set_continuation(key: &Key, continuation: Option<Continuation>) {
    with_sockets(|all| {
        if let Some(entry) = all.get_mut(key) {
            entry.continuation = continuation;
        }
    });
}

/// Counts a request sent over the WebSocket.
pub(crate) fn record_request(session: Option<&str>, reused: bool, cached: bool, body: &Map<String, Value>) {
    let Some(session) = session else { return };
    let inputs = body.get("input").and_then(Value::as_array).map_or(0, |a| a.len() as u64);
    let previous = body.get("previous_response_id").and_then(Value::as_str).map(str::to_owned);
    with_stats(session, |s| {
        s.requests += 1;
        if reused {
            s.connections_reused += 1;
        } else {
            s.connections_created += 1;
        }
        if cached {
            s.cached_context_requests += 1;
        }
        s.last_input_items = inputs;
        if previous.is_some() {
            s.delta_requests += 1;
        } else {
            s.full_context_requests += 1;
        }
        s.last_previous_response_id = previous;
    });
}

fn without_input(body: &Map<String, Value>) -> String {
    let mut rest = body.clone();
    rest.shift_remove("input");
    rest.shift_remove("previous_response_id");
    Value::Object(rest).to_string()
}

/// The body to send on a cached socket: only the new input after the previous answer, with
/// `previous_response_id`, when the body continues the previous one; else the full body.
pub(crate) fn cached_body(body: &Map<String, Value>, continuation: &Continuation) -> Option<Map<String, Value>> {
    if without_input(body) != without_input(&continuation.last_request_body) {
        return None;
    }
    let empty = Vec::new();
    let input = body.get("input").and_then(Value::as_array).unwrap_or(&empty);
    let previous = continuation.last_request_body.get("input").and_then(Value::as_array).unwrap_or(&empty);
    let baseline: Vec<&Value> = previous.iter().chain(&continuation.last_response_items).collect();
    if input.len() < baseline.len() {
        return None;
    }
    // `JSON.stringify` equality: key order counts (`Value`'s `==` ignores it).
    let same = input.iter().zip(&baseline).all(|(a, b)| json_text(a) == json_text(b));
    if !same {
        return None;
    }
    let mut delta = body.clone();
    delta.insert("previous_response_id".into(), json!(continuation.last_response_id));
    delta.insert("input".into(), Value::Array(input[baseline.len()..].to_vec()));
    Some(delta)
}

fn json_text(value: &Value) -> String {
    value.to_string()
}

/// The `response.create` frame of a body.
pub(crate) fn create_frame(body: &Map<String, Value>) -> String {
    let mut frame = Map::with_capacity(body.len() + 1);
    frame.insert("type".into(), json!("response.create"));
    for (k, v) in body {
        frame.insert(k.clone(), v.clone());
    }
    Value::Object(frame).to_string()
}

/// Sends a frame.
pub(crate) async fn send(socket: &mut Socket, text: String, cancel: &CancellationToken) -> Result<(), WsError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(WsError::Aborted),
        r = socket.send(WsMessage::Text(text.into())) => r.map_err(|e| WsError::transport(e.to_string())),
    }
}

/// The next text frame (`Ok(None)` when the socket closed cleanly after `saw_completion`).
pub(crate) async fn next_text(
    socket: &mut Socket,
    cancel: &CancellationToken,
    idle: Duration,
    saw_completion: bool,
) -> Result<Option<String>, WsError> {
    loop {
        let read = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(WsError::Aborted),
            r = tokio::time::timeout(idle, socket.next()) => r,
        };
        let Ok(message) = read else {
            return Err(WsError::transport(format!("WebSocket idle timeout after {}ms", idle.as_millis())));
        };
        let closed =
            |code: u16, reason: &str| if saw_completion { Ok(None) } else { Err(WsError::closed(code, reason)) };
        match message {
            None => return closed(1006, ""),
            Some(Err(error)) => {
                tracing::debug!(%error, "Codex WebSocket read failed");
                return closed(1006, "");
            }
            Some(Ok(WsMessage::Close(frame))) => {
                let (code, reason) = frame.map_or((1005, String::new()), |f| (u16::from(f.code), f.reason.to_string()));
                return closed(code, &reason);
            }
            Some(Ok(WsMessage::Text(text))) => return Ok(Some(text.to_string())),
            Some(Ok(WsMessage::Binary(bytes))) => return Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Some(Ok(_)) => {}
        }
    }
}

/// A UUIDv7 (the request id of a WebSocket without a session).
pub(crate) fn uuid_v7() -> String {
    use ring::rand::SecureRandom;
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let mut bytes = [0u8; 16];
    let _ = ring::rand::SystemRandom::new().fill(&mut bytes[6..]);
    bytes[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    bytes[6] = 0x70 | (bytes[6] & 0x0f);
    bytes[8] = 0x80 | (bytes[8] & 0x3f);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_frames_and_ids() {
        assert_eq!(
            websocket_url("https://chatgpt.com/backend-api/codex/responses"),
            "wss://chatgpt.com/backend-api/codex/responses"
        );
        assert_eq!(websocket_url("http://127.0.0.1:1/x"), "ws://127.0.0.1:1/x");
        let body: Map<String, Value> = serde_json::from_str(r#"{"model":"m","input":[]}"#).unwrap();
        assert_eq!(create_frame(&body), r#"{"type":"response.create","model":"m","input":[]}"#);
        let id = uuid_v7();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "7");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        assert_eq!(WsError::closed(1009, "").message(), "WebSocket closed 1009 message too big");
    }

    #[test]
    fn continuation_sends_only_new_items() {
        let body = |input: Value| -> Map<String, Value> {
            serde_json::from_value(json!({"model": "m", "input": input, "stream": true})).unwrap()
        };
        let c = Continuation {
            last_request_body: body(json!([{"role": "user", "content": "a"}])),
            last_response_id: "resp_1".into(),
            last_response_items: vec![json!({"type": "message", "id": "m1"})],
        };
        let next = body(
            json!([{"role": "user", "content": "a"}, {"type": "message", "id": "m1"}, {"role": "user", "content": "b"}]),
        );
        let delta = cached_body(&next, &c).unwrap();
        assert_eq!(
            Value::Object(delta).to_string(),
            r#"{"model":"m","input":[{"role":"user","content":"b"}],"stream":true,"previous_response_id":"resp_1"}"#
        );
        let other = body(json!([{"role": "user", "content": "z"}, {"type": "message", "id": "m1"}]));
        assert!(cached_body(&other, &c).is_none());
        let mut changed = next.clone();
        changed.insert("model".into(), json!("n"));
        assert!(cached_body(&changed, &c).is_none());
    }
}
