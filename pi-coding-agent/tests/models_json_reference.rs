//! models.json end to end, against the reference pi 1.6.0's recorded runs
//! (`tests/fixtures/models_json/`, recorded by its `record.sh`): `pi --list-models` with entries
//! that fail composition (reported per provider, the others applied), a schema-invalid and an
//! unparsable file, pi's merges; `pi -p` against a local server on 127.0.0.1 that records the
//! request headers (a provider's `headers`, resolved like `apiKey`, a model's own, `authHeader`,
//! with and without `--api-key`, for a custom provider and the built-in `openai`; a built-in model's
//! own headers win over the provider's) and the errors
//! of unresolvable header values; a provider's `compat` over its built-in models, a model
//! override's `compat`, a custom model in a built-in provider. Exit code, stdout, stderr, the
//! headers pi sets and each request body's top-level keys (which `compat` decides) are compared.
//!
//! Normalised: the docs folder (pi-rs names the docs on GitHub), the agent dir and the port; the
//! JSON parser's own message; pi's extra `Warning: No models available …` printed before the
//! models.json warning when no model is available (pi-rs prints it once, after).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/models_json");
const OUR_DOCS: &str = "https://github.com/earendil-works/pi/blob/main/packages/coding-agent/docs";

/// Each request's headers and its body's sorted top-level keys.
type Recorded = Arc<Mutex<Vec<(Vec<(String, String)>, Vec<String>)>>>;

/// A server on 127.0.0.1 that records each request's headers and body keys and answers 400, as
/// `header_server.py` does for the reference.
fn header_server() -> (u16, Recorded) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let recorded: Recorded = Arc::default();
    let sink = recorded.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut headers = Vec::new();
            let mut length = 0usize;
            let mut first = true;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if std::mem::take(&mut first) {
                    continue; // the request line
                }
                if let Some((name, value)) = line.trim_end().split_once(':') {
                    let (name, value) = (name.trim().to_ascii_lowercase(), value.trim().to_owned());
                    if name == "content-length" {
                        length = value.parse().unwrap_or(0);
                    }
                    headers.push((name, value));
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let mut keys: Vec<String> = body.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
            keys.sort();
            sink.lock().expect("lock").push((headers, keys));
            let body = r#"{"error":{"message":"recorded"}}"#;
            let response = format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes());
        }
    });
    (port, recorded)
}

/// Headers of the transport and of the OpenAI SDK pi uses, which models.json does not decide.
const TRANSPORT: [&str; 11] = [
    "host",
    "connection",
    "content-length",
    "content-type",
    "accept",
    "accept-encoding",
    "accept-language",
    "sec-fetch-mode",
    "user-agent",
    "x-client-request-id",
    "session-id",
];

/// The headers models.json decides (every header but the transport's and the SDK's), sorted.
fn configured(headers: &[(String, String)]) -> Vec<(String, String)> {
    let mut kept: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
        .filter(|(k, _)| !TRANSPORT.contains(&k.as_str()) && !k.starts_with("x-stainless"))
        .collect();
    kept.sort();
    kept
}

/// The reference's stderr without its leading `Warning: No models available` block, with the
/// JSON parser's message cut.
fn normalise_stderr(text: &str) -> String {
    let mut text = text.to_owned();
    if let Some(rest) = text.strip_prefix("Warning: No models available.") {
        let skip = rest.split_inclusive('\n').take(3).map(str::len).sum::<usize>();
        text = rest[skip..].to_owned();
    }
    text.lines()
        .map(
            |l| {
                if l.starts_with("Failed to parse models.json: ") {
                    "Failed to parse models.json: <MESSAGE>"
                } else {
                    l
                }
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

fn read(name: &str, ext: &str) -> String {
    std::fs::read_to_string(Path::new(FIXTURES).join(format!("{name}.{ext}"))).expect("fixture")
}

fn run_case(case: &Value) {
    let name = case["name"].as_str().expect("name");
    let (port, recorded) = header_server();
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = dir.path().join("agent");
    std::fs::create_dir_all(&agent).expect("agent dir");
    let base = format!("http://127.0.0.1:{port}/v1");
    let models = match case["models"].as_str().expect("models") {
        "HEADERS" => std::fs::read_to_string(Path::new(FIXTURES).join("headers_models.json")).expect("headers models"),
        text => text.to_owned(),
    };
    std::fs::write(agent.join("models.json"), models.replace("BASE", &base)).expect("models.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_pi"));
    command
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("PI_OFFLINE", "1")
        .env("PI_MJ_TEST", "envv")
        .env_remove("OPENAI_API_KEY")
        .env_remove("NVIDIA_API_KEY")
        .env_remove("GROQ_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .stdin(Stdio::null())
        .args(case["args"].as_array().expect("args").iter().filter_map(Value::as_str));
    for (k, v) in case["env"].as_object().into_iter().flatten() {
        command.env(k, v.as_str().unwrap_or_default());
    }
    let output = command.output().expect("run pi");
    let ours = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes)
            .replace(OUR_DOCS, "<DOCS>")
            .replace(&agent.display().to_string(), "<AGENT>")
            .replace(&port.to_string(), "<PORT>")
    };
    assert_eq!(output.status.code().unwrap_or(-1).to_string(), read(name, "rc").trim(), "{name}: exit code");
    assert_eq!(ours(&output.stdout), read(name, "stdout"), "{name}: stdout");
    assert_eq!(normalise_stderr(&ours(&output.stderr)), normalise_stderr(&read(name, "stderr")), "{name}: stderr");
    let expected: Vec<Vec<(String, String)>> = read(name, "headers")
        .lines()
        .map(|l| serde_json::from_str::<Vec<(String, String)>>(l).expect("recorded headers"))
        .map(|h| configured(&h))
        .collect();
    let recorded = recorded.lock().expect("lock").clone();
    let got: Vec<Vec<(String, String)>> = recorded.iter().map(|(h, _)| configured(h)).collect();
    assert_eq!(got, expected, "{name}: request headers");
    let expected_keys: Vec<Vec<String>> =
        read(name, "body_keys").lines().map(|l| serde_json::from_str(l).expect("recorded body keys")).collect();
    let got_keys: Vec<Vec<String>> = recorded.into_iter().map(|(_, keys)| keys).collect();
    assert_eq!(got_keys, expected_keys, "{name}: request body keys");
}

#[test]
fn models_json_runs_match_the_reference() {
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(Path::new(FIXTURES).join("cases.json")).expect("cases"))
            .expect("cases.json");
    assert!(cases.len() >= 10);
    for case in &cases {
        run_case(case);
    }
}
