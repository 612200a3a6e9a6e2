//! Test support for SDK sessions over real HTTP: a scripted OpenAI chat-completions SSE server on
//! 127.0.0.1 that records every request body, a temp agent dir whose models.json points provider
//! `local` at it, and `create_agent_session` wired to that model through the CLI's registry (the
//! same path as pi's `ModelRuntime.create({modelsPath})`).
#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_coding_agent::extensions::{Extension, ExtensionError};
use pi_coding_agent::sdk::ModelRegistry as CliRegistry;
use pi_coding_agent::sdk::{AgentSession, CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;
use serde_json::{Value, json};

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let c = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {c}\n\n")
}

fn usage_and_done() -> String {
    let u = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
        "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}});
    format!("data: {u}\n\ndata: [DONE]\n\n")
}

/// The SSE body of a streamed text reply.
pub fn text_reply(text: &str) -> String {
    text_reply_with(text, "stop")
}

/// The SSE body of a streamed text reply that ends with `finish` (`stop`, `length`, …).
pub fn text_reply_with(text: &str, finish: &str) -> String {
    chunk(json!({"role": "assistant", "content": ""}), None)
        + &chunk(json!({"content": text}), None)
        + &chunk(json!({}), Some(finish))
        + &usage_and_done()
}

/// A whole HTTP error response (`status` with a JSON `{"error": {"message": …}}` body), served
/// verbatim instead of an SSE body.
pub fn error_reply(status: u16, message: &str) -> String {
    let body = json!({"error": {"message": message}}).to_string();
    format!(
        "HTTP/1.1 {status} Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The SSE body of a reply that calls one tool.
pub fn tool_reply(id: &str, name: &str, args: Value) -> String {
    let start = json!({"role": "assistant", "content": null,
        "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]});
    chunk(start, None)
        + &chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": args.to_string()}}]}), None)
        + &chunk(json!({}), Some("tool_calls"))
        + &usage_and_done()
}

fn event(kind: &str, data: Value) -> String {
    let mut data = data;
    if let Value::Object(o) = &mut data {
        o.insert("type".into(), json!(kind));
    }
    format!("event: {kind}\ndata: {data}\n\n")
}

/// The SSE body of a streamed anthropic-messages text reply.
pub fn anthropic_text_reply(text: &str) -> String {
    let start = json!({"message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "scripted",
        "content": [], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 0}}});
    event("message_start", start)
        + &event("content_block_start", json!({"index": 0, "content_block": {"type": "text", "text": ""}}))
        + &event("content_block_delta", json!({"index": 0, "delta": {"type": "text_delta", "text": text}}))
        + &event("content_block_stop", json!({"index": 0}))
        + &event("message_delta", json!({"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}))
        + &event("message_stop", json!({}))
}

/// The SSE body of a streamed openai-responses text reply.
pub fn responses_text_reply(text: &str) -> String {
    let item = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}]});
    let added = json!({"type": "message", "id": "msg_1", "role": "assistant", "content": []});
    let usage = json!({"input_tokens": 10, "output_tokens": 3, "total_tokens": 13});
    event("response.created", json!({"response": {"id": "resp_1"}}))
        + &event("response.output_item.added", json!({"output_index": 0, "item": added}))
        + &event("response.output_text.delta", json!({"output_index": 0, "delta": text}))
        + &event("response.output_item.done", json!({"output_index": 0, "item": item}))
        + &event(
            "response.completed",
            json!({"response": {"id": "resp_1", "status": "completed", "output": [item], "usage": usage}}),
        )
}

/// One request's headers: (lower-case name, value), in order.
pub type RequestHeaders = Vec<(String, String)>;

/// A scripted chat-completions server: each request gets the next queued SSE body, or a text
/// reply "ok" when the queue is empty (in the wire format of [`ScriptedServer::start_with`]'s
/// default).
pub struct ScriptedServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    /// Request bodies received, as JSON, in order.
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// The request paths, in order.
    pub paths: Arc<Mutex<Vec<String>>>,
    /// Each request's headers (lower-case names), in order.
    pub headers: Arc<Mutex<Vec<RequestHeaders>>>,
    replies: Arc<Mutex<VecDeque<String>>>,
}

impl ScriptedServer {
    /// Starts serving chat-completions replies on an ephemeral port.
    pub fn start(replies: Vec<String>) -> Self {
        Self::start_with(replies, text_reply("ok"))
    }

    /// Starts serving on an ephemeral port, `fallback` once `replies` ran out.
    pub fn start_with(replies: Vec<String>, fallback: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let paths = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let headers = Arc::new(Mutex::new(Vec::new()));
        let (recorded, recorded_paths, queue) = (requests.clone(), paths.clone(), replies.clone());
        let recorded_headers = headers.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
                let mut request_line = String::new();
                let _ = reader.read_line(&mut request_line);
                let mut length = 0usize;
                let mut header_lines = Vec::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        header_lines.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                recorded_headers.lock().expect("headers lock").push(header_lines);
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                recorded_paths
                    .lock()
                    .expect("paths lock")
                    .push(request_line.split_whitespace().nth(1).unwrap_or_default().to_owned());
                let parsed = serde_json::from_slice(&body)
                    .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
                recorded.lock().expect("requests lock").push(parsed);
                let sse = queue.lock().expect("replies lock").pop_front().unwrap_or_else(|| fallback.clone());
                let response = if sse.starts_with("HTTP/") {
                    sse
                } else {
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{sse}",
                        sse.len()
                    )
                };
                let _ = stream.write_all(response.as_bytes());
                let _ = stream.flush();
            }
        });
        ScriptedServer { base_url: format!("http://127.0.0.1:{port}/v1"), requests, paths, headers, replies }
    }

    /// Queues more replies.
    pub fn push(&self, sse: String) {
        self.replies.lock().expect("replies lock").push_back(sse);
    }

    /// Every body received so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.requests.lock().expect("requests lock").clone()
    }

    /// The last body received.
    pub fn last(&self) -> Value {
        self.bodies().last().cloned().expect("the server received no request")
    }

    /// How many requests arrived.
    pub fn count(&self) -> usize {
        self.requests.lock().expect("requests lock").len()
    }
}

/// A session on the scripted server: temp project and agent dirs, the server, the reported
/// extension errors.
pub struct HttpSession {
    /// The session.
    pub session: AgentSession,
    /// The server it talks to.
    pub server: ScriptedServer,
    /// Extension errors reported since `bind_extensions` (or load).
    pub errors: Arc<Mutex<Vec<ExtensionError>>>,
    /// The project dir (the session cwd).
    pub cwd: PathBuf,
    /// The temp root holding `proj` and `agent`.
    pub dir: tempfile::TempDir,
}

/// How to build an [`HttpSession`].
#[derive(Default)]
pub struct Setup {
    /// SSE replies, in order (then "ok").
    pub replies: Vec<String>,
    /// In-process extensions.
    pub extensions: Vec<Arc<dyn Extension>>,
    /// Runtime-loaded extension paths (the loader's `additional_extension_paths`).
    pub extension_paths: Vec<PathBuf>,
    /// Files written into the project dir first.
    pub files: Vec<(&'static str, &'static str)>,
    /// The provider's API: `openai-completions` (default), `openai-responses` or
    /// `anthropic-messages`.
    pub api: Option<&'static str>,
    /// Automatic compaction and retry (default: as the temp agent dir's settings say, i.e.
    /// pi's defaults).
    pub settings: Option<pi_coding_agent::sdk::SessionSettings>,
    /// Extra fields of the models.json model (`cost`, `promptCache`, …).
    pub model_fields: Option<Value>,
}

/// models.json with provider `local` (key "none") speaking `api` at `base_url`.
pub fn models_json(base_url: &str, api: &str) -> Value {
    json!({"providers": {"local": {"baseUrl": base_url, "api": api, "apiKey": "none",
        "models": [{"id": "smollm2-135m", "contextWindow": 8192, "maxTokens": 256}]}}})
}

impl Setup {
    /// Starts the server and creates the session (thinking off, in-memory session manager, a
    /// reloaded `DefaultResourceLoader` on the temp project).
    pub async fn start(self) -> HttpSession {
        let api = self.api.unwrap_or("openai-completions");
        let anthropic = api == "anthropic-messages";
        let fallback = match api {
            "anthropic-messages" => anthropic_text_reply("ok"),
            "openai-responses" => responses_text_reply("ok"),
            _ => text_reply("ok"),
        };
        let server = ScriptedServer::start_with(self.replies, fallback);
        // The anthropic SDK appends `/v1/messages` to the base URL; the OpenAI ones append to `/v1`.
        let provider_url =
            if anthropic { server.base_url.trim_end_matches("/v1").to_owned() } else { server.base_url.clone() };
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical temp dir");
        let (cwd, agent) = (root.join("proj"), root.join("agent"));
        std::fs::create_dir_all(&cwd).expect("proj dir");
        std::fs::create_dir_all(&agent).expect("agent dir");
        for (name, text) in self.files {
            std::fs::write(cwd.join(name), text).expect("project file");
        }
        let mut models = models_json(&provider_url, api);
        if let (Some(Value::Object(extra)), Some(Value::Object(model))) =
            (self.model_fields, models.pointer_mut("/providers/local/models/0"))
        {
            model.extend(extra);
        }
        std::fs::write(agent.join("models.json"), models.to_string()).expect("models.json");
        let (registry, error) = CliRegistry::load(&agent);
        assert!(error.is_none(), "models.json: {error:?}");
        let model = registry
            .all_models()
            .into_iter()
            .find(|m| m.provider == "local" && m.id == "smollm2-135m")
            .expect("the models.json model is registered");
        let mut loader = DefaultResourceLoader::new(&cwd, &agent);
        loader.home_dir = Some(agent.join("home")); // not the real ~/.agents/skills
        loader.additional_extension_paths = self.extension_paths;
        loader.reload().await.expect("reload resources");
        let created = create_agent_session(CreateAgentSessionOptions {
            cwd: Some(cwd.clone()),
            agent_dir: Some(agent),
            model: Some(model),
            thinking_level: Some(pi_ai::ThinkingLevel::Off),
            resource_loader: Some(loader),
            session_manager: Some(SessionManager::in_memory(&cwd)),
            stream_fn: Some(registry.stream_fn()),
            extensions: self.extensions,
            settings: self.settings,
            ..Default::default()
        })
        .await
        .expect("create_agent_session");
        let errors = Arc::new(Mutex::new(Vec::new()));
        if let Some(runner) = created.session.extension_runner() {
            let sink = errors.clone();
            std::mem::forget(runner.on_error(move |e| sink.lock().expect("errors lock").push(e.clone())));
        }
        HttpSession { session: created.session, server, errors, cwd, dir }
    }
}

impl HttpSession {
    /// The session's entries on the current branch, serialized.
    pub fn entries(&self) -> Vec<Value> {
        self.session.branch(None).iter().map(|e| serde_json::to_value(e).expect("entry serializes")).collect()
    }

    /// Entry types, `message:<role>` and `custom:<customType>` spelled out (as the reference
    /// fixtures list them).
    pub fn entry_types(&self) -> Vec<String> {
        self.entries()
            .iter()
            .map(|e| match e["type"].as_str().unwrap_or_default() {
                "custom" => format!("custom:{}", e["customType"].as_str().unwrap_or_default()),
                "message" => format!("message:{}", e["message"]["role"].as_str().unwrap_or_default()),
                other => other.to_owned(),
            })
            .collect()
    }

    /// Reported extension errors as `(event, error)`.
    pub fn error_pairs(&self) -> Vec<(String, String)> {
        self.errors.lock().expect("errors lock").iter().map(|e| (e.event.clone(), e.error.clone())).collect()
    }

    /// Waits until `f` holds (polling; at most 5 s).
    pub async fn wait_until(&self, what: &str, f: impl Fn(&Self) -> bool) {
        let start = std::time::Instant::now();
        while !f(self) {
            assert!(start.elapsed() < Duration::from_secs(5), "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// `v` with this run's paths and session id masked (see [`mask`]).
    pub fn mask(&self, v: &Value) -> Value {
        mask(v, &self.cwd, &self.session.session_id())
    }
}

/// Masks what legitimately differs between machines and runs:
/// - the session cwd (a fresh temp dir: the prompt's `<cwd>` section, tool paths) → `<CWD>`;
/// - the pi package dir the prompt's `<docs>` section names (here this crate's checkout, in the
///   reference the npm install dir) → `<PI_PACKAGE>`.
///
/// - the session id (a fresh UUIDv7; openai-responses sends it as `prompt_cache_key`) →
///   `<SESSION_ID>`.
///
/// Request bodies carry no other ids, no timestamps and no dates (tool call and message ids come
/// from the scripted replies), so nothing else is masked.
pub fn mask(v: &Value, cwd: &Path, session_id: &str) -> Value {
    let cwd = cwd.display().to_string();
    mask_strings(v, &|s| {
        let s = s.replace(&cwd, "<CWD>").replace(env!("CARGO_MANIFEST_DIR"), "<PI_PACKAGE>");
        if session_id.is_empty() { s } else { s.replace(session_id, "<SESSION_ID>") }
    })
}

fn mask_strings(v: &Value, f: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(f(s)),
        Value::Array(a) => Value::Array(a.iter().map(|x| mask_strings(x, f)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), mask_strings(x, f))).collect()),
        other => other.clone(),
    }
}

/// The roles of a body's messages (`messages`, or openai-responses `input` items, whose items
/// without a role are listed by type).
pub fn roles(body: &Value) -> Vec<String> {
    let items = body["messages"].as_array().or(body["input"].as_array()).expect("messages or input array");
    items.iter().map(|m| m["role"].as_str().or(m["type"].as_str()).unwrap_or("?").to_owned()).collect()
}

/// The names of a body's declared tools (chat-completions `function.name`, anthropic `name`).
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["function"]["name"].as_str().or(t["name"].as_str()).expect("tool name").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The leading system message's text (chat-completions puts the whole prompt there).
pub fn system_text(body: &Value) -> String {
    let first = &body["messages"][0];
    assert_eq!(first["role"], "system", "the body starts with the system message: {body:#}");
    first["content"].as_str().expect("system content is a string").to_owned()
}
