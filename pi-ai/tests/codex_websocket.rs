//! The `openai-codex-responses` WebSocket transport against what real pi 1.6.0 did with the same
//! scripted server (`scripts/fixtures/codex_websocket.mjs`, fixtures in
//! `tests/fixtures/http/codex_ws/`): a server on 127.0.0.1 that answers WebSocket upgrades (or
//! refuses them) and SSE posts from the recorded script; the upgrades, `response.create` frames
//! (socket reuse, `previous_response_id` continuation, retries) and posts (zstd bodies, the SSE
//! fallback) it sees, and each turn's events and message, must equal pi's.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures::{SinkExt, StreamExt};
use pi_ai::options::{StreamOptions, Transport};
use pi_ai::providers::openai_codex_responses::{OpenAiCodexResponses, close_websocket_sessions, websocket_debug_stats};
use pi_ai::transcript::normalize_context;
use pi_ai::{ApiProvider, AssistantMessageEvent, Context, Message, Model};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message as WsMessage;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/http/codex_ws/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
}

/// The headers compared (the rest belong to the client library).
const HEADERS: [&str; 9] = [
    "authorization",
    "chatgpt-account-id",
    "openai-beta",
    "originator",
    "session-id",
    "x-client-request-id",
    "content-encoding",
    "content-type",
    "accept",
];

#[derive(Clone, Default)]
struct Server {
    script: Arc<Mutex<VecDeque<Value>>>,
    log: Arc<Mutex<Vec<Value>>>,
    /// The close frames clients sent: code and reason.
    closes: Arc<Mutex<Vec<(u16, String)>>>,
}

impl Server {
    fn take(&self, on: &str) -> Value {
        let mut script = self.script.lock().expect("lock");
        let i = script.iter().position(|s| s["on"] == on).unwrap_or_else(|| panic!("no scripted {on}"));
        script.remove(i).expect("step")
    }

    fn log(&self, entry: Value) {
        self.log.lock().expect("lock").push(entry);
    }
}

fn uuid_shape(value: &str) -> String {
    let b = value.as_bytes();
    let ok = value.len() == 36 && b[14] == b'7' && [8, 13, 18, 23].iter().all(|i| b[*i] == b'-');
    if ok { "<uuidv7>".to_owned() } else { value.to_owned() }
}

/// Request line and headers (names lower-cased), read up to the blank line.
async fn read_head(stream: &mut TcpStream) -> Option<(String, String, Vec<(String, String)>)> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_owned(), first.next()?.to_owned());
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Some((method, path, headers))
}

/// The compared headers (an upgrade's `accept` is the client library's).
fn kept(headers: &[(String, String)], upgrade: bool) -> Value {
    let mut out = serde_json::Map::new();
    let mut sorted = headers.to_vec();
    sorted.sort();
    for (k, v) in sorted {
        if HEADERS.contains(&k.as_str()) && !(upgrade && k == "accept") {
            out.insert(k, json!(uuid_shape(&v)));
        }
    }
    Value::Object(out)
}

async fn serve(server: Server, mut stream: TcpStream) {
    let Some((method, path, headers)) = read_head(&mut stream).await else { return };
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    if header("upgrade").is_some_and(|u| u.eq_ignore_ascii_case("websocket")) {
        server.log(json!({"kind": "upgrade", "path": path, "headers": kept(&headers, true)}));
        let step = server.take("upgrade");
        if step["accept"] != json!(true) {
            let reply =
                format!("HTTP/1.1 {} Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n", step["status"]);
            let _ = stream.write_all(reply.as_bytes()).await;
            return;
        }
        let key = header("sec-websocket-key").unwrap_or_default();
        let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
        let reply = format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
        );
        if stream.write_all(reply.as_bytes()).await.is_err() {
            return;
        }
        let mut ws = WebSocketStream::from_raw_socket(stream, Role::Server, None).await;
        while let Some(Ok(message)) = ws.next().await {
            if let WsMessage::Close(Some(frame)) = &message {
                server.closes.lock().expect("lock").push((u16::from(frame.code), frame.reason.to_string()));
            }
            let WsMessage::Text(text) = message else { continue };
            let body: Value = serde_json::from_str(&text).expect("a JSON frame");
            server.log(json!({"kind": "frame", "body": body}));
            let step = server.take("frame");
            for frame in step["send"].as_array().into_iter().flatten() {
                let _ = ws.send(WsMessage::Text(frame.to_string().into())).await;
            }
            if let Some(close) = step.get("close") {
                let code = close["code"].as_u64().unwrap_or(1000) as u16;
                let reason = close["reason"].as_str().unwrap_or_default().to_owned();
                let _ = ws.close(Some(CloseFrame { code: CloseCode::from(code), reason: reason.into() })).await;
                // Wait for the client's close, then end.
                while let Some(Ok(_)) = ws.next().await {}
                return;
            }
        }
        return;
    }
    let length: usize = header("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
    let mut body = vec![0u8; length];
    if stream.read_exact(&mut body).await.is_err() {
        return;
    }
    if header("content-encoding").as_deref() == Some("zstd") {
        body = zstd::decode_all(&body[..]).expect("a zstd body");
    }
    let body: Value = serde_json::from_slice(&body).expect("a JSON body");
    assert_eq!(method, "POST");
    server.log(json!({"kind": "post", "path": path, "headers": kept(&headers, false), "body": body}));
    let step = server.take("post");
    let sse = step["sse"].as_str().unwrap_or_default();
    let reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{sse}",
        sse.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
}

async fn start(script: &Value) -> (Server, String) {
    let server = Server {
        script: Arc::new(Mutex::new(script.as_array().cloned().unwrap_or_default().into())),
        ..Default::default()
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let s = server.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(s.clone(), stream));
        }
    });
    (server, base)
}

fn without_volatile(mut message: Value) -> Value {
    let m = message.as_object_mut().expect("object");
    m.remove("timestamp");
    m.remove("durationMs");
    for d in m.get_mut("diagnostics").and_then(Value::as_array_mut).into_iter().flatten() {
        d.as_object_mut().map(|d| d.remove("timestamp"));
    }
    message
}

/// Replays scenario `name` and compares everything with pi's recording.
async fn check(name: &str) {
    let pi = fixture(name);
    let (server, base) = start(&pi["script"]).await;
    let model: Model = serde_json::from_str(&pi["model"].to_string().replace("$BASE", &base)).expect("model");
    let mut messages: Vec<Message> = Vec::new();
    let mut session = None;
    for (i, turn) in pi["turns"].as_array().expect("turns").iter().enumerate() {
        let added: Vec<Message> = serde_json::from_value(turn["context"]["messages"].clone()).expect("messages");
        messages.extend(added);
        let context = Context {
            system_prompt: turn["context"]["systemPrompt"].as_str().map(str::to_owned),
            messages: messages.clone(),
            ..Default::default()
        };
        session = turn["options"]["sessionId"].as_str().map(str::to_owned);
        let transport = turn["options"]["transport"].as_str().and_then(Transport::parse).expect("transport");
        let options = StreamOptions {
            api_key: pi["apiKey"].as_str().map(str::to_owned),
            session_id: session.clone(),
            transport: Some(transport),
            // What pi's `streamSimple` takes from the model.
            max_tokens: Some(8192),
            ..Default::default()
        };
        let mut stream = OpenAiCodexResponses.stream(&model, normalize_context(context), options);
        let mut events = Vec::new();
        let mut last = None;
        while let Some(event) = stream.next().await {
            events.push(event.kind().to_owned());
            match event {
                AssistantMessageEvent::Done { message, .. } => last = Some(message),
                AssistantMessageEvent::Error { error, .. } => last = Some(error),
                _ => {}
            }
        }
        let message = last.expect("a terminal event");
        let theirs: Vec<String> = serde_json::from_value(turn["events"].clone()).expect("events");
        assert_eq!(events, theirs, "{name} turn {i}: events");
        let ours = without_volatile(serde_json::to_value(&message).expect("JSON"));
        pretty_assertions::assert_eq!(ours, without_volatile(turn["message"].clone()), "{name} turn {i}: message");
        messages.push(Message::Assistant((*message).into()));
    }
    // Only this scenario's session: `None` would close every session's cached socket, including
    // those of the scenarios running beside this one.
    if let Some(session) = session.as_deref() {
        close_websocket_sessions(Some(session)).await;
    }
    let theirs: Vec<Value> = pi["log"]
        .as_array()
        .expect("log")
        .iter()
        .filter(|e| e["kind"] != "close")
        .map(|e| {
            let mut e = e.clone();
            let upgrade = e["kind"] == "upgrade";
            if let Some(h) = e.get_mut("headers").and_then(Value::as_object_mut) {
                h.retain(|k, _| HEADERS.contains(&k.as_str()) && !(upgrade && k == "accept"));
            }
            e
        })
        .collect();
    let ours = server.log.lock().expect("lock").clone();
    pretty_assertions::assert_eq!(
        serde_json::to_string_pretty(&ours).expect("JSON"),
        serde_json::to_string_pretty(&theirs).expect("JSON"),
        "{name}: what the server saw"
    );
    assert!(server.script.lock().expect("lock").is_empty(), "{name}: unused script steps");
}

#[tokio::test]
async fn two_turns_reuse_the_socket() {
    check("two_turns").await;
    let stats = websocket_debug_stats("ws-session-1").expect("stats");
    assert_eq!((stats.requests, stats.connections_created, stats.connections_reused), (2, 1, 1));
    assert_eq!((stats.full_context_requests, stats.delta_requests), (2, 0));
}

#[tokio::test]
async fn cached_transport_sends_only_the_new_input() {
    check("two_turns_cached").await;
    let stats = websocket_debug_stats("ws-session-8").expect("stats");
    assert_eq!(stats.delta_requests, 1);
    assert_eq!(stats.last_previous_response_id.as_deref(), Some("resp_1"));
}

#[tokio::test]
async fn sse_transport_posts_a_zstd_body() {
    check("sse_only").await;
}

#[tokio::test]
async fn without_a_session_each_request_has_its_own_socket_and_id() {
    check("no_session").await;
}

#[tokio::test]
async fn a_refused_upgrade_falls_back_to_sse_for_the_session() {
    check("fallback").await;
    let stats = websocket_debug_stats("ws-session-2").expect("stats");
    assert_eq!((stats.websocket_failures, stats.sse_fallbacks), (1, 2));
    assert!(stats.websocket_fallback_active);
}

#[tokio::test]
async fn a_close_after_the_answer_started_is_an_error() {
    check("closed_mid_stream").await;
}

#[tokio::test]
async fn a_close_before_the_answer_falls_back_to_sse() {
    check("closed_before_start").await;
}

#[tokio::test]
async fn the_connection_limit_is_retried_once() {
    check("connection_limit").await;
}

#[tokio::test]
async fn a_lost_continuation_is_retried_with_the_full_input() {
    check("previous_response_not_found").await;
}

#[tokio::test]
async fn a_codex_error_event_is_reported_without_fallback() {
    check("api_error").await;
}

/// A cancelled request over the WebSocket ends as aborted, and its socket is not kept.
#[tokio::test]
async fn cancellation_mid_stream_aborts() {
    let script = json!([{"on": "upgrade", "accept": true}, {"on": "frame", "send": [
        {"type": "response.created", "response": {"id": "resp_1"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "m", "role": "assistant", "content": []}},
        {"type": "response.output_text.delta", "output_index": 0, "delta": "Hi"}
    ]}]);
    let (_server, base) = start(&script).await;
    let pi = fixture("two_turns");
    let model: Model = serde_json::from_str(&pi["model"].to_string().replace("$BASE", &base)).expect("model");
    let cancel = tokio_util::sync::CancellationToken::new();
    let options = StreamOptions {
        api_key: pi["apiKey"].as_str().map(str::to_owned),
        session_id: Some("ws-cancel".into()),
        transport: Some(Transport::Auto),
        cancel: Some(cancel.clone()),
        ..Default::default()
    };
    let context = Context { messages: vec![Message::User(pi_ai::UserMessage::new("hi").into())], ..Default::default() };
    let mut stream = OpenAiCodexResponses.stream(&model, normalize_context(context), options);
    let mut last = None;
    while let Some(event) = stream.next().await {
        if matches!(event, AssistantMessageEvent::TextDelta { .. }) {
            cancel.cancel();
        }
        if let AssistantMessageEvent::Error { error, .. } = event {
            last = Some(error);
        }
    }
    let message = last.expect("an error event");
    assert_eq!(message.stop_reason, pi_ai::StopReason::Aborted);
    assert_eq!(message.error_message.as_deref(), Some("Request was aborted"));
    let stats = websocket_debug_stats("ws-cancel").expect("stats");
    assert_eq!(stats.websocket_failures, 0, "a cancellation is no transport failure");
}

/// Releasing a session's resources (what `AgentSession::dispose` does) closes its cached socket
/// with pi's `1000 debug_close`.
#[tokio::test]
async fn session_cleanup_closes_the_cached_socket() {
    let pi = fixture("two_turns");
    let (server, base) = start(&pi["script"]).await;
    let model: Model = serde_json::from_str(&pi["model"].to_string().replace("$BASE", &base)).expect("model");
    let turn = &pi["turns"][0];
    let messages: Vec<Message> = serde_json::from_value(turn["context"]["messages"].clone()).expect("messages");
    let options = StreamOptions {
        api_key: pi["apiKey"].as_str().map(str::to_owned),
        session_id: Some("ws-cleanup".into()),
        transport: turn["options"]["transport"].as_str().and_then(Transport::parse),
        ..Default::default()
    };
    let context = Context { messages, ..Default::default() };
    let mut stream = OpenAiCodexResponses.stream(&model, normalize_context(context), options);
    let mut done = false;
    while let Some(event) = stream.next().await {
        done |= matches!(event, AssistantMessageEvent::Done { .. });
    }
    assert!(done, "the first turn completes");
    assert!(server.closes.lock().expect("lock").is_empty(), "the socket stays cached after the answer");
    pi_ai::session_resources::cleanup_session_resources("ws-cleanup").await;
    // The close frame is sent before the cleanup returns; the server's task records it when it
    // reads it.
    for _ in 0..500 {
        if !server.closes.lock().expect("lock").is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(server.closes.lock().expect("lock").clone(), vec![(1000, "debug_close".to_owned())]);
    // Another session's cleanup has nothing to close.
    pi_ai::session_resources::cleanup_session_resources("ws-other").await;
    assert_eq!(server.closes.lock().expect("lock").len(), 1);
}

/// Records what an awaited request observer sees, in one log with the yielded events.
#[derive(Default)]
struct Observed {
    log: Mutex<Vec<String>>,
}

impl pi_ai::options::RequestObserver for Observed {
    fn wants_response(&self) -> bool {
        true
    }

    fn response(
        &self,
        response: pi_ai::options::ProviderResponse,
        _model: &Model,
    ) -> pi_ai::options::ObserverFuture<()> {
        self.log.lock().expect("lock").push(format!("response {}", response.status));
        Box::pin(std::future::ready(()))
    }

    fn wants_stream_events(&self) -> bool {
        true
    }

    fn stream_event(&self, data: Value, _model: &Model) -> pi_ai::options::ObserverFuture<()> {
        self.log.lock().expect("lock").push(format!("raw {}", data["type"].as_str().unwrap_or_default()));
        Box::pin(std::future::ready(()))
    }
}

/// Over the WebSocket, each event of the socket reaches the observer (pi's
/// `onProviderStreamEvent` in `mapCodexEvents`), before the events normalized from it; there is no
/// HTTP response to report (pi calls `onResponse` on the SSE transport only).
#[tokio::test]
async fn the_request_observer_sees_each_socket_event() {
    let pi = fixture("two_turns");
    let (_server, base) = start(&pi["script"]).await;
    let model: Model = serde_json::from_str(&pi["model"].to_string().replace("$BASE", &base)).expect("model");
    let turn = &pi["turns"][0];
    let messages: Vec<Message> = serde_json::from_value(turn["context"]["messages"].clone()).expect("messages");
    let observer = Arc::new(Observed::default());
    let options = StreamOptions {
        api_key: pi["apiKey"].as_str().map(str::to_owned),
        session_id: Some("ws-observed".into()),
        transport: Some(Transport::WebSocket),
        request_observer: Some(observer.clone()),
        ..Default::default()
    };
    let context = Context { messages, ..Default::default() };
    let mut stream = OpenAiCodexResponses.stream(&model, normalize_context(context), options);
    while let Some(event) = stream.next().await {
        observer.log.lock().expect("lock").push(event.kind().to_owned());
    }
    close_websocket_sessions(Some("ws-observed")).await;
    let log = observer.log.lock().expect("lock").clone();
    assert_eq!(
        log,
        [
            "raw response.created",
            "start",
            "raw response.output_item.added",
            "text_start",
            "raw response.content_part.added",
            "raw response.output_text.delta",
            "text_delta",
            "raw response.output_text.delta",
            "text_delta",
            "raw response.output_item.done",
            "text_end",
            "raw response.completed",
            "done",
        ]
    );
}
