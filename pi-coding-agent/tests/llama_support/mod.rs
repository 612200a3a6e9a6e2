//! A llama.cpp router on 127.0.0.1 for the llama tests, and a Hugging Face API.
//!
//! The router speaks what llama.cpp's router serves (recorded from its server docs and
//! `tools/server` README: `GET /models` `{data:[{id, status:{value, args?, failed?}, meta?}]}`,
//! `POST /models/load|unload` `{success:true}`, `GET /models/sse` events
//! `{model, event:"model_status", data:{status, progress?}}`, `POST /models` downloads with
//! `download_progress` / `download_finished` events, `GET /props`). xllamacpp, the llama.cpp
//! build this project runs in its tests, refuses router mode ("params.model.path is required:
//! xllamacpp disabled the router server feature"), so this is the router; its
//! `/v1/chat/completions` is forwarded to the real single-model llama.cpp server when
//! `PI_LOCAL_LLM_URL` names one.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// One request the router saw: method, path, body.
pub type Seen = (String, String, Value);

struct RouterState {
    models: Vec<Value>,
    subscribers: Vec<TcpStream>,
    seen: Vec<Seen>,
    upstream: Option<String>,
    api_key: Option<String>,
    /// Downloads answer `downloading` once before they finish.
    downloading: Option<(String, u32)>,
}

/// The router.
#[derive(Clone)]
pub struct FakeRouter {
    pub url: String,
    state: Arc<Mutex<RouterState>>,
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_owned(), parts.next()?.to_owned());
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let len = headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Request { method, path, headers, body })
}

fn respond(mut stream: &TcpStream, status: u16, body: &Value) {
    let text = body.to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
}

impl FakeRouter {
    /// A router listing `models` (router `/models` records).
    pub fn start(models: Vec<Value>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://127.0.0.1:{}", listener.local_addr().expect("addr").port());
        let upstream = std::env::var("PI_LOCAL_LLM_URL").ok().map(|u| u.trim_end_matches('/').to_owned());
        let state = Arc::new(Mutex::new(RouterState {
            models,
            subscribers: Vec::new(),
            seen: Vec::new(),
            upstream,
            api_key: None,
            downloading: None,
        }));
        let router = FakeRouter { url, state };
        let r = router.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let r = r.clone();
                std::thread::spawn(move || r.serve(stream));
            }
        });
        router
    }

    /// Requires `Authorization: Bearer <key>`.
    pub fn require_key(&self, key: &str) {
        self.state.lock().unwrap().api_key = Some(key.to_owned());
    }

    /// The requests seen so far (SSE subscriptions excluded).
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    /// The status of `id`.
    pub fn status(&self, id: &str) -> Option<String> {
        let s = self.state.lock().unwrap();
        s.models.iter().find(|m| m["id"] == id).and_then(|m| m["status"]["value"].as_str().map(str::to_owned))
    }

    fn broadcast(&self, event: Value) {
        let mut s = self.state.lock().unwrap();
        let frame = format!("data: {event}\n\n");
        s.subscribers.retain(|mut sub| sub.write_all(frame.as_bytes()).and_then(|()| sub.flush()).is_ok());
    }

    fn set_status(&self, id: &str, status: &str, n_ctx: Option<u64>) {
        let mut s = self.state.lock().unwrap();
        if let Some(m) = s.models.iter_mut().find(|m| m["id"] == id) {
            m["status"] = json!({"value": status});
            match n_ctx {
                Some(n) => m["meta"]["n_ctx"] = json!(n),
                None => {
                    if let Some(meta) = m.get_mut("meta").and_then(Value::as_object_mut) {
                        meta.remove("n_ctx");
                    }
                }
            }
        }
    }

    fn serve(&self, stream: TcpStream) {
        let Some(req) = read_request(&stream) else { return };
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let expected = self.state.lock().unwrap().api_key.clone();
        if let Some(key) = expected {
            let auth = req.headers.iter().find(|(k, _)| k == "authorization").map(|(_, v)| v.clone());
            if auth.as_deref() != Some(&format!("Bearer {key}")) {
                return respond(
                    &stream,
                    401,
                    &json!({"error": {"code": 401, "message": "Invalid API Key", "type": "authentication_error"}}),
                );
            }
        }
        if req.path == "/models/sse" {
            let mut s = self.state.lock().unwrap();
            let mut out = &stream;
            let _ =
                out.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n");
            let _ = out.flush();
            if let Ok(clone) = stream.try_clone() {
                s.subscribers.push(clone);
            }
            return;
        }
        self.state.lock().unwrap().seen.push((req.method.clone(), req.path.clone(), body.clone()));
        let model = body["model"].as_str().unwrap_or_default().to_owned();
        match (req.method.as_str(), req.path.split('?').next().unwrap_or("")) {
            ("GET", "/models") => self.list(&stream),
            ("GET", "/props") => {
                let template = "{% if enable_thinking is defined %}{% endif %}{{ messages }}";
                respond(&stream, 200, &json!({"models_autoload": false, "chat_template": template}))
            }
            ("POST", "/models/load") => {
                if self.status(&model).is_none() {
                    return respond(
                        &stream,
                        400,
                        &json!({"error": {"code": 400, "message": format!("model {model} not found")}}),
                    );
                }
                respond(&stream, 200, &json!({"success": true}));
                self.set_status(&model, "loading", None);
                let stages = json!(["init", "load_tensors", "warmup"]);
                self.broadcast(json!({"model": model, "event": "model_status", "data": {"status": "loading", "progress": {"current": "load_tensors", "stages": stages, "value": 0.5}}}));
                // Models named `slow…` stay loading (their progress repeated on every poll).
                if !model.starts_with("slow") {
                    self.set_status(&model, "loaded", Some(32768));
                    self.broadcast(json!({"model": model, "event": "model_status", "data": {"status": "loaded"}}));
                }
            }
            ("POST", "/models/unload") => {
                respond(&stream, 200, &json!({"success": true}));
                self.set_status(&model, "unloaded", None);
                self.broadcast(json!({"model": model, "event": "model_status", "data": {"status": "unloaded"}}));
            }
            ("POST", "/models") => {
                respond(&stream, 200, &json!({"success": true}));
                let mut s = self.state.lock().unwrap();
                s.models.push(json!({"id": model, "source": "cache", "status": {"value": "downloading", "progress": {"m.gguf": {"done": 0, "total": 2048}}}}));
                s.downloading = Some((model, 0));
            }
            ("POST", "/v1/chat/completions") => self.forward(stream, &req),
            _ => respond(&stream, 404, &json!({"error": {"code": 404, "message": "File Not Found"}})),
        }
    }

    fn list(&self, stream: &TcpStream) {
        let finished = {
            let mut s = self.state.lock().unwrap();
            match s.downloading.as_mut() {
                Some((id, polls)) => {
                    *polls += 1;
                    let id = id.clone();
                    let done = *polls > 1;
                    if let Some(m) = s.models.iter_mut().find(|m| m["id"] == id.as_str()) {
                        m["status"] = if done {
                            json!({"value": "unloaded"})
                        } else {
                            json!({"value": "downloading", "progress": {"m.gguf": {"done": 1024, "total": 2048}}})
                        };
                    }
                    if done {
                        s.downloading = None;
                    }
                    done.then_some(id)
                }
                None => None,
            }
        };
        let data = self.state.lock().unwrap().models.clone();
        respond(stream, 200, &json!({"object": "list", "data": data}));
        for m in data.iter().filter(|m| m["status"]["value"] == "loading") {
            let stages = json!(["init", "load_tensors", "warmup"]);
            let progress = json!({"current": "load_tensors", "stages": stages, "value": 0.5});
            self.broadcast(
                json!({"model": m["id"], "event": "model_status", "data": {"status": "loading", "progress": progress}}),
            );
        }
        if let Some(id) = finished {
            self.broadcast(json!({"model": id, "event": "download_finished", "data": {}}));
        }
    }

    /// Forwards a chat request to the real llama.cpp server and pipes its answer back.
    fn forward(&self, mut stream: TcpStream, req: &Request) {
        let Some(upstream) = self.state.lock().unwrap().upstream.clone() else {
            return respond(
                &stream,
                503,
                &json!({"error": {"code": 503, "message": "no upstream (PI_LOCAL_LLM_URL is not set)"}}),
            );
        };
        let hostport = upstream.trim_start_matches("http://").to_owned();
        let Ok(mut up) = TcpStream::connect(&hostport) else {
            return respond(&stream, 502, &json!({"error": {"code": 502, "message": "upstream unreachable"}}));
        };
        let head = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            req.body.len()
        );
        if up.write_all(head.as_bytes()).and_then(|()| up.write_all(&req.body)).is_err() {
            return;
        }
        let _ = std::io::copy(&mut up, &mut stream);
    }
}

/// A Hugging Face API: `/api/models?search=` and `/api/models/<owner>/<repo>?blobs=true`.
pub struct FakeHub {
    pub url: String,
    pub seen: Arc<Mutex<Vec<String>>>,
}

impl FakeHub {
    /// Serves `results` for every search and `details` by repository id.
    pub fn start(results: Value, details: Vec<Value>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://127.0.0.1:{}", listener.local_addr().expect("addr").port());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let Some(req) = read_request(&stream) else { continue };
                log.lock().unwrap().push(req.path.clone());
                let path = req.path.split('?').next().unwrap_or("").to_owned();
                if path == "/api/models" {
                    respond(&stream, 200, &results);
                } else if let Some(id) = path.strip_prefix("/api/models/") {
                    match details.iter().find(|d| d["id"] == id) {
                        Some(d) => respond(&stream, 200, d),
                        None => respond(&stream, 404, &json!({"error": "Repository not found"})),
                    }
                } else {
                    respond(&stream, 404, &json!({"error": "Not Found"}));
                }
            }
        });
        FakeHub { url, seen }
    }
}
