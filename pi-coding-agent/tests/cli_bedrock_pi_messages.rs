//! `pi -p` end to end on the `bedrock-converse-stream` and `pi-messages` APIs: models.json points
//! the provider at a server on 127.0.0.1 that records the request and answers in the API's own
//! framing (AWS event-stream frames with correct CRCs; pi-messages SSE).

mod cli_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use cli_support::Env;
use pi_ai::providers::bedrock::eventstream::encode_event;
use serde_json::json;

/// A request the server saw: head lines and body.
#[derive(Clone, Debug, Default)]
struct Seen {
    head: Vec<String>,
    body: serde_json::Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<String> {
        self.head.iter().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }
}

/// Answers every request with `content_type` and `reply`; returns the base URL and what it saw.
fn serve(content_type: &'static str, reply: Vec<u8>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut head = Vec::new();
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                head.push(line.trim_end().to_owned());
            }
            let mut raw = vec![0; length];
            let _ = reader.read_exact(&mut raw);
            let body = serde_json::from_slice(&raw).unwrap_or(serde_json::Value::Null);
            log.lock().unwrap().push(Seen { head, body });
            let top = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                reply.len()
            );
            let _ = stream.write_all(top.as_bytes());
            let _ = stream.write_all(&reply);
            let _ = stream.flush();
        }
    });
    (format!("http://127.0.0.1:{port}"), seen)
}

fn ev(kind: &str, payload: serde_json::Value) -> Vec<u8> {
    encode_event(kind, payload.to_string().as_bytes())
}

#[test]
fn pi_print_on_bedrock() {
    let frames = [
        ev("messageStart", json!({"role": "assistant"})),
        ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "Hello from "}})),
        ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "Bedrock"}})),
        ev("contentBlockStop", json!({"contentBlockIndex": 0})),
        ev("messageStop", json!({"stopReason": "end_turn"})),
        ev("metadata", json!({"usage": {"inputTokens": 5, "outputTokens": 3, "totalTokens": 8}})),
    ]
    .concat();
    let (url, seen) = serve("application/vnd.amazon.eventstream", frames);
    let env = Env::new("http://127.0.0.1:9/v1");
    let models = json!({"providers": {"amazon-bedrock": {"baseUrl": url}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).unwrap();
    let output = env
        .pi()
        .env("AWS_ACCESS_KEY_ID", "AKIDE2E")
        .env("AWS_SECRET_ACCESS_KEY", "secret")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_REGION")
        .env_remove("AWS_DEFAULT_REGION")
        .env_remove("AWS_BEARER_TOKEN_BEDROCK")
        .args(["-p", "--model", "amazon-bedrock/amazon.nova-pro-v1:0", "--no-tools", "Say hello"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout.trim(), "Hello from Bedrock");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].head[0].starts_with("POST /model/amazon.nova-pro-v1%3A0/converse-stream "), "{:?}", seen[0].head);
    let auth = seen[0].header("authorization").unwrap();
    assert!(auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDE2E/"), "{auth}");
    assert!(auth.contains("/us-east-1/bedrock/aws4_request"), "{auth}");
    let user = &seen[0].body["messages"][0];
    assert_eq!(user["role"], "user");
    assert_eq!(user["content"][0]["text"], "Say hello");
}

#[test]
fn pi_print_on_pi_messages() {
    let usage = json!({"input": 5, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 7,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let sse = [
        json!({"type": "start"}),
        json!({"type": "text_start", "contentIndex": 0}),
        json!({"type": "text_delta", "contentIndex": 0, "delta": "Hello from "}),
        json!({"type": "text_delta", "contentIndex": 0, "delta": "the gateway"}),
        json!({"type": "text_end", "contentIndex": 0, "content": "Hello from the gateway"}),
        json!({"type": "done", "reason": "stop", "usage": usage}),
    ]
    .iter()
    .map(|e| format!("data: {e}\n\n"))
    .collect::<String>();
    let (url, seen) = serve("text/event-stream", sse.into_bytes());
    let env = Env::new("http://127.0.0.1:9/v1");
    let models = json!({"providers": {"gw": {"baseUrl": format!("{url}/v1"), "api": "pi-messages", "apiKey": "gw-secret",
        "models": [{"id": "pi-test", "contextWindow": 8192, "maxTokens": 256}]}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).unwrap();
    let output = env.run(&["-p", "--model", "gw/pi-test", "--tools", "read,grep", "Say hello"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout.trim(), "Hello from the gateway");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].head[0].starts_with("POST /v1/messages "), "{:?}", seen[0].head);
    assert_eq!(seen[0].header("authorization").as_deref(), Some("Bearer gw-secret"));
    assert_eq!(seen[0].body["model"], "pi-test");
    let messages = seen[0].body["context"]["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages.last().unwrap()["content"][0]["text"], "Say hello");
    // The tools' constrained-sampling declarations travel with the transcript and the session file.
    let tools = messages[0]["toolsAdded"].as_array().unwrap();
    let read = tools.iter().find(|t| t["name"] == "read").unwrap();
    assert_eq!(read["constrainedSampling"], json!({"type": "json_schema", "strict": "prefer"}));
    let grep = tools.iter().find(|t| t["name"] == "grep").unwrap();
    assert_eq!(grep.get("constrainedSampling"), None);
    let files = env.session_files();
    let saved = std::fs::read_to_string(&files[0]).unwrap();
    assert!(saved.contains(r#""constrainedSampling":{"type":"json_schema","strict":"prefer"}"#), "{saved}");
}
