//! Test harness for the HTTP providers: an in-process HTTP server on 127.0.0.1 that replays
//! scripted responses (SSE with configurable chunking, delays and faults, or error statuses) and
//! records every request it receives.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use serde_json::Value;

pub mod fixtures;

/// One piece of a scripted body.
#[derive(Clone, Debug)]
pub enum Part {
    /// Bytes to send.
    Bytes(Vec<u8>),
    /// Wait before the next part.
    Delay(Duration),
    /// Break the connection (the body errors, the client sees a reset).
    Reset,
    /// Send nothing more and never finish (for idle timeouts and cancellation).
    Hang,
}

/// A scripted reply.
#[derive(Clone, Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Extra response headers.
    pub headers: Vec<(String, String)>,
    /// The body, part by part.
    pub parts: Vec<Part>,
    /// Never send the response headers (for timeouts and cancellation before the answer).
    pub stall: bool,
}

impl Reply {
    /// A `text/event-stream` reply of `body`, sent in one piece.
    pub fn sse(body: impl Into<String>) -> Self {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            parts: vec![Part::Bytes(body.into().into_bytes())],
            stall: false,
        }
    }

    /// A reply whose headers never come.
    pub fn stall() -> Self {
        Reply { status: 200, headers: Vec::new(), parts: Vec::new(), stall: true }
    }

    /// An error status with a body.
    pub fn error(status: u16, body: impl Into<String>) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            parts: vec![Part::Bytes(body.into().into_bytes())],
            stall: false,
        }
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Re-splits the byte parts into pieces of `size` bytes (splitting anywhere, also inside
    /// UTF-8 characters and line breaks).
    pub fn chunked(mut self, size: usize) -> Self {
        let mut parts = Vec::new();
        for part in self.parts {
            match part {
                Part::Bytes(b) => parts.extend(b.chunks(size.max(1)).map(|c| Part::Bytes(c.to_vec()))),
                other => parts.push(other),
            }
        }
        self.parts = parts;
        self
    }

    /// Puts `delay` between consecutive byte parts.
    pub fn paced(mut self, delay: Duration) -> Self {
        let mut parts = Vec::new();
        for part in self.parts {
            if matches!(part, Part::Bytes(_)) && !parts.is_empty() {
                parts.push(Part::Delay(delay));
            }
            parts.push(part);
        }
        self.parts = parts;
        self
    }

    /// Appends a part.
    pub fn then(mut self, part: Part) -> Self {
        self.parts.push(part);
        self
    }
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// Path and query.
    pub path: String,
    /// Headers (lower-case names), in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Value::Null` if it was not JSON).
    pub body: Value,
    /// The body as text (for bodies that are not JSON, such as OAuth forms).
    pub raw: String,
}

impl Recorded {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
}

/// The server. Dropping it stops it.
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MockServer {
    /// Starts a server answering every POST with the next scripted reply (404 when none is left).
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> Self {
        let state = Arc::new(State { replies: Mutex::new(replies.into_iter().collect()), ..Default::default() });
        let handler_state = state.clone();
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
            let state = handler_state.clone();
            async move {
                let response = handle(state, uri, headers, body);
                if response.is_none() {
                    std::future::pending::<()>().await;
                }
                response.unwrap_or_default()
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockServer { addr, state, task }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().expect("lock").clone()
    }

    /// The only request's body.
    pub fn body(&self) -> Value {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "expected exactly one request");
        requests[0].body.clone()
    }
}

fn handle(state: Arc<State>, uri: Uri, headers: HeaderMap, body: Bytes) -> Option<Response> {
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    // Codex sends zstd-compressed bodies.
    let zstd = headers.iter().any(|(k, v)| k == "content-encoding" && v == "zstd");
    let body = if zstd { Bytes::from(zstd::decode_all(&body[..]).expect("a zstd body")) } else { body };
    let raw = String::from_utf8_lossy(&body).into_owned();
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    state.requests.lock().expect("lock").push(Recorded { path: uri.to_string(), headers, body, raw });
    let Some(reply) = state.replies.lock().expect("lock").pop_front() else {
        return Some(Response::builder().status(404).body(Body::from("no scripted reply")).expect("response"));
    };
    if reply.stall {
        return None;
    }
    let stream = async_stream::stream! {
        for part in reply.parts {
            match part {
                Part::Bytes(b) => yield Ok::<Bytes, std::io::Error>(Bytes::from(b)),
                Part::Delay(d) => tokio::time::sleep(d).await,
                Part::Reset => {
                    yield Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "scripted reset"));
                    return;
                }
                Part::Hang => std::future::pending::<()>().await,
            }
        }
    };
    let mut builder = Response::builder().status(StatusCode::from_u16(reply.status).expect("status"));
    // No keep-alive: every test runs its own runtime, and a pooled connection must not outlive it.
    builder = builder.header("connection", "close");
    for (k, v) in &reply.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    Some(builder.body(Body::from_stream(stream)).expect("response"))
}

/// `data: <json>\n\n`.
pub fn data(json: &Value) -> String {
    format!("data: {json}\n\n")
}

/// `event: <name>\ndata: <json>\n\n`.
pub fn event(name: &str, json: &Value) -> String {
    format!("event: {name}\ndata: {json}\n\n")
}

/// Collects a stream's events as `kind@index "delta"` lines and its final message.
pub async fn run(stream: pi_ai::AssistantMessageEventStream) -> (Vec<String>, pi_ai::AssistantMessage) {
    use futures::StreamExt;
    use pi_ai::AssistantMessageEvent as E;
    let mut stream = stream;
    let mut lines = Vec::new();
    let mut last = None;
    while let Some(event) = stream.next().await {
        let mut line = event.kind().to_owned();
        if let Some(i) = event.content_index() {
            line.push_str(&format!("@{i}"));
        }
        match &event {
            E::TextDelta { delta, .. } | E::ThinkingDelta { delta, .. } | E::ToolCallDelta { delta, .. } => {
                line.push_str(&format!(" {delta:?}"));
            }
            E::Done { reason, message } => {
                line.push_str(&format!(":{}", reason.as_str()));
                last = Some(message.clone());
            }
            E::Error { reason, error } => {
                line.push_str(&format!(":{}", reason.as_str()));
                last = Some(error.clone());
            }
            _ => {}
        }
        lines.push(line);
    }
    (lines, *last.expect("a terminal event"))
}
