//! Test support for the `pi` binary: a scripted OpenAI chat-completions SSE server on 127.0.0.1
//! that records request bodies, and a temporary agent dir whose models.json points at it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

/// A scripted server: each request gets the next SSE body.
pub struct ScriptedServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    /// Request bodies received, as JSON.
    pub requests: Arc<Mutex<Vec<serde_json::Value>>>,
}

/// The SSE body of a streamed text reply.
pub fn text_reply(words: &[&str]) -> String {
    let mut out = String::new();
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let c = serde_json::json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"scripted",
            "choices":[{"index":0,"delta":delta,"finish_reason":finish}]});
        format!("data: {c}\n\n")
    };
    out.push_str(&chunk(serde_json::json!({"role":"assistant","content":""}), None));
    for w in words {
        out.push_str(&chunk(serde_json::json!({"content": w}), None));
    }
    out.push_str(&chunk(serde_json::json!({}), Some("stop")));
    let usage = serde_json::json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"scripted",
        "choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}});
    out.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    out
}

/// One scripted answer of [`ScriptedServer::start_replies`].
pub enum Reply {
    /// `200` with this SSE body.
    Sse(String),
    /// This status with this JSON body.
    Status(u16, String),
    /// No answer: the connection is held open (a request that stays in flight until the client
    /// gives up on it).
    Stall,
    /// `200` with this SSE body once the flag is set (the request stays in flight until then).
    Gated(Arc<std::sync::atomic::AtomicBool>, String),
    /// This whole HTTP response, status line and headers included.
    Raw(String),
}

impl ScriptedServer {
    /// Starts serving `replies` in order (then 500s).
    pub fn start(replies: Vec<String>) -> Self {
        Self::start_replies(replies.into_iter().map(Reply::Sse).collect())
    }

    /// Starts serving `replies` in order (then 500s).
    pub fn start_replies(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        std::thread::spawn(move || {
            let mut replies = replies.into_iter();
            let mut held = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut length = 0usize;
                let mut zstd = false;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    zstd |= lower.starts_with("content-encoding:") && lower.contains("zstd");
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                if zstd {
                    // Codex's SSE bodies are zstd-compressed, as pi sends them.
                    body = zstd::decode_all(body.as_slice()).expect("a zstd body");
                }
                if let Ok(v) = serde_json::from_slice(&body) {
                    recorded.lock().unwrap().push(v);
                }
                let reply = match replies.next() {
                    Some(Reply::Gated(gate, sse)) => {
                        while !gate.load(std::sync::atomic::Ordering::SeqCst) {
                            std::thread::sleep(std::time::Duration::from_millis(10));
                        }
                        Some(Reply::Sse(sse))
                    }
                    other => other,
                };
                let response = match reply {
                    Some(Reply::Sse(sse)) => format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{sse}",
                        sse.len()
                    ),
                    Some(Reply::Status(code, body)) => format!(
                        "HTTP/1.1 {code} Scripted\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    ),
                    Some(Reply::Raw(raw)) => raw,
                    Some(Reply::Stall | Reply::Gated(..)) => {
                        held.push(stream);
                        continue;
                    }
                    None => {
                        "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}".into()
                    }
                };
                let _ = stream.write_all(response.as_bytes());
                let _ = stream.flush();
            }
        });
        ScriptedServer { base_url: format!("http://127.0.0.1:{port}/v1"), requests }
    }
}

/// A server that answers the first request with the start of a streamed reply and then stalls
/// (holding the connection open); `hit` becomes true once the partial reply was sent.
pub struct StallingServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    /// Set after the first chunk went out.
    pub hit: Arc<std::sync::atomic::AtomicBool>,
}

impl StallingServer {
    /// Starts the server.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let hit = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = hit.clone();
        std::thread::spawn(move || {
            let mut open = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let chunk = serde_json::json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,
                    "model":"scripted","choices":[{"index":0,"delta":{"role":"assistant","content":"Partial"},
                    "finish_reason":null}]});
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                let _ = stream.write_all(format!("{head}data: {chunk}\n\n").as_bytes());
                let _ = stream.flush();
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                open.push(stream); // never answered further
            }
        });
        StallingServer { base_url: format!("http://127.0.0.1:{port}/v1"), hit }
    }
}

/// A temporary agent dir and project dir.
pub struct Env {
    /// Holds the directories.
    pub dir: tempfile::TempDir,
}

impl Env {
    /// An agent dir whose models.json has provider `local` at `base_url`.
    pub fn new(base_url: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("agent")).expect("agent");
        std::fs::create_dir_all(dir.path().join("proj")).expect("proj");
        let models = serde_json::json!({"providers":{"local":{"baseUrl":base_url,"api":"openai-completions",
            "apiKey":"none","models":[{"id":"smollm2-135m","contextWindow":8192,"maxTokens":256}]}}});
        std::fs::write(dir.path().join("agent/models.json"), models.to_string()).expect("models.json");
        Env { dir }
    }

    /// The agent dir.
    pub fn agent(&self) -> PathBuf {
        self.dir.path().join("agent")
    }

    /// The project dir (the process cwd).
    pub fn proj(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    /// `pi` with this environment.
    pub fn pi(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pi"));
        c.current_dir(self.proj())
            .env("PI_CODING_AGENT_DIR", self.agent())
            // Skills under the real ~/.agents must not reach the snapshots.
            .env("HOME", self.dir.path())
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .stdin(Stdio::null());
        c
    }

    /// Runs `pi` with `args`.
    pub fn run(&self, args: &[&str]) -> Output {
        self.pi().args(args).output().expect("run pi")
    }

    /// Every session file under the agent dir.
    pub fn session_files(&self) -> Vec<PathBuf> {
        fn walk(p: &Path, out: &mut Vec<PathBuf>) {
            if let Ok(rd) = std::fs::read_dir(p) {
                for e in rd.flatten() {
                    let path = e.path();
                    if path.is_dir() {
                        walk(&path, out);
                    } else if path.extension().is_some_and(|x| x == "jsonl") {
                        out.push(path);
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.agent().join("sessions"), &mut out);
        out
    }
}

/// Replaces volatile fields (timestamps, ids, durations, paths) so output can be snapshotted.
pub fn redact(value: &mut serde_json::Value, env: &Env) {
    use serde_json::Value;
    match value {
        Value::Object(o) => {
            for (k, v) in o.iter_mut() {
                match k.as_str() {
                    "timestamp" | "id" | "parentId" | "durationMs" | "created" if !v.is_null() && !v.is_object() => {
                        *v = Value::String(format!("<{k}>"))
                    }
                    _ => redact(v, env),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|v| redact(v, env)),
        Value::String(s) => {
            let root = env.dir.path().display().to_string();
            if s.contains(&root) {
                *s = s.replace(&root, "<TMP>");
            }
            // The `docs` prompt section names this checkout's location.
            let pkg = env!("CARGO_MANIFEST_DIR");
            if s.contains(pkg) {
                *s = s.replace(pkg, "<PKG>");
            }
        }
        _ => {}
    }
}

/// Parses JSON lines.
pub fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines().filter(|l| !l.is_empty()).map(|l| serde_json::from_str(l).expect("json line")).collect()
}

/// The text of block `index` of a logged message (text or thinking).
fn block_text(message: &serde_json::Value, index: usize) -> String {
    let block = &message["content"][index];
    block.get("text").or_else(|| block.get("thinking")).and_then(|t| t.as_str()).unwrap_or_default().to_owned()
}

/// A log of `message_update` events as an extension saw them (`{"message","assistantMessageEvent"}`
/// per line): every event's message is the message so far — a delta grows its block by exactly
/// the delta, a start adds an empty block.
pub fn assert_updates_grow_by_their_deltas(events: &[serde_json::Value]) {
    let mut previous: Option<&serde_json::Value> = None;
    for (i, event) in events.iter().enumerate() {
        let message = &event["message"];
        let kind = event["assistantMessageEvent"]["type"].as_str().expect("type");
        let index = event["assistantMessageEvent"]["contentIndex"].as_u64().expect("index") as usize;
        match kind {
            "text_delta" | "thinking_delta" => {
                let before = previous.map(|m| block_text(m, index)).unwrap_or_default();
                let delta = event["assistantMessageEvent"]["delta"].as_str().expect("delta");
                assert_eq!(block_text(message, index), format!("{before}{delta}"), "event {i}");
            }
            "text_start" | "thinking_start" => {
                assert_eq!(block_text(message, index), "", "event {i}");
                assert_eq!(message["content"].as_array().map(Vec::len), Some(index + 1), "event {i}");
            }
            _ => {}
        }
        previous = Some(message);
    }
}
