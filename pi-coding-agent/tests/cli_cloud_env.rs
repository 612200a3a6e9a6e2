//! A stored cloud login's `env` reaches the request (pi passes a credential's `env` to the provider
//! as `options.env`, read before the process environment): `pi -p` with auth.json holding what
//! `/login` stores for Amazon Bedrock (`AWS_PROFILE`) and Google Vertex (project, location,
//! credentials file), against a server on 127.0.0.1 that records each request's head.

mod cli_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use cli_support::Env;
use pi_ai::providers::bedrock::eventstream::encode_event;
use serde_json::json;

/// A request the server saw: request line, header lines and body.
#[derive(Clone, Debug, Default)]
struct Seen {
    head: Vec<String>,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<String> {
        self.head.iter().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }
}

/// Answers each request by its path: the first route whose prefix matches gives the content type
/// and body. Returns the origin and every request seen.
fn serve(routes: Vec<(&'static str, &'static str, Vec<u8>)>) -> (String, Arc<Mutex<Vec<Seen>>>) {
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
            let path = head.first().and_then(|l| l.split(' ').nth(1)).unwrap_or_default().to_owned();
            log.lock().expect("lock").push(Seen { head, body: String::from_utf8_lossy(&raw).into_owned() });
            let (status, content_type, reply) = match routes.iter().find(|(prefix, _, _)| path.starts_with(prefix)) {
                Some((_, content_type, reply)) => ("200 OK", *content_type, reply.clone()),
                None => ("404 Not Found", "text/plain", b"no route".to_vec()),
            };
            let top = format!(
                "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                reply.len()
            );
            let _ = stream.write_all(top.as_bytes());
            let _ = stream.write_all(&reply);
            let _ = stream.flush();
        }
    });
    (format!("http://127.0.0.1:{port}"), seen)
}

fn write_auth(env: &Env, auth: serde_json::Value) {
    std::fs::write(env.agent().join("auth.json"), auth.to_string()).expect("auth.json");
}

/// What the Bedrock login stores for a profile: `{"type":"api_key","env":{"AWS_PROFILE":…}}`.
/// The request is signed with that profile's keys, in that profile's region, while the process
/// environment names another profile.
#[test]
fn bedrock_login_profile_signs_the_request() {
    let ev = |kind: &str, payload: serde_json::Value| encode_event(kind, payload.to_string().as_bytes());
    let frames = [
        ev("messageStart", json!({"role": "assistant"})),
        ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "Hello from the profile"}})),
        ev("contentBlockStop", json!({"contentBlockIndex": 0})),
        ev("messageStop", json!({"stopReason": "end_turn"})),
        ev("metadata", json!({"usage": {"inputTokens": 5, "outputTokens": 3, "totalTokens": 8}})),
    ]
    .concat();
    let (url, seen) = serve(vec![("/model/", "application/vnd.amazon.eventstream", frames)]);
    let env = Env::new("http://127.0.0.1:9/v1");
    let models = json!({"providers": {"amazon-bedrock": {"baseUrl": url}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).expect("models.json");
    let aws = env.dir.path().join("aws");
    std::fs::create_dir_all(&aws).expect("aws dir");
    std::fs::write(
        aws.join("credentials"),
        "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = d\n\n[work]\naws_access_key_id = AKIDWORK\naws_secret_access_key = w\n",
    )
    .expect("credentials");
    std::fs::write(aws.join("config"), "[default]\nregion = us-west-2\n\n[profile work]\nregion = eu-central-1\n")
        .expect("config");
    write_auth(&env, json!({"amazon-bedrock": {"type": "api_key", "env": {"AWS_PROFILE": "work"}}}));
    let output = env
        .pi()
        .env("AWS_SHARED_CREDENTIALS_FILE", aws.join("credentials"))
        .env("AWS_CONFIG_FILE", aws.join("config"))
        .env("AWS_PROFILE", "default")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_REGION")
        .env_remove("AWS_DEFAULT_REGION")
        .env_remove("AWS_BEARER_TOKEN_BEDROCK")
        .args(["-p", "--model", "amazon-bedrock/amazon.nova-pro-v1:0", "--no-tools", "--no-session", "hi"])
        .output()
        .expect("run pi");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout.trim(), "Hello from the profile");
    let seen = seen.lock().expect("lock");
    assert_eq!(seen.len(), 1, "{seen:?}");
    let auth = seen[0].header("authorization").unwrap_or_default();
    assert!(auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDWORK/"), "{auth}");
    assert!(auth.contains("/eu-central-1/bedrock/aws4_request"), "{auth}");
}

/// What the Vertex login stores for a service account: project, location and credentials file in
/// `env`. Without them in the process environment, the request still authenticates with the
/// stored file's token (fetched from its `token_uri`) and reaches the model.
#[test]
fn vertex_login_env_reaches_the_request() {
    let chunk = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello from Vertex"}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}});
    let token = json!({"access_token": "ya29.stored-login", "expires_in": 3600, "token_type": "Bearer"});
    let (url, seen) = serve(vec![
        ("/token", "application/json", token.to_string().into_bytes()),
        ("/v1/", "text/event-stream", format!("data: {chunk}\r\n\r\n").into_bytes()),
    ]);
    let env = Env::new("http://127.0.0.1:9/v1");
    let models = json!({"providers": {"google-vertex": {"baseUrl": format!("{url}/v1")}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).expect("models.json");
    let key_file = env.dir.path().join("adc.json");
    let adc = json!({"type": "authorized_user", "client_id": "cid", "client_secret": "cs",
        "refresh_token": "rt", "token_uri": format!("{url}/token")});
    std::fs::write(&key_file, adc.to_string()).expect("adc.json");
    write_auth(
        &env,
        json!({"google-vertex": {"type": "api_key", "env": {"GOOGLE_CLOUD_PROJECT": "stored-project",
            "GOOGLE_CLOUD_LOCATION": "europe-west4", "GOOGLE_APPLICATION_CREDENTIALS": key_file}}}),
    );
    let mut command = env.pi();
    for name in ["GOOGLE_CLOUD_API_KEY", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"] {
        command.env_remove(name);
    }
    let output = command
        .env("GOOGLE_APPLICATION_CREDENTIALS", env.dir.path().join("missing.json"))
        .args(["-p", "--model", "google-vertex/gemini-2.5-flash", "--no-tools", "--no-session", "hi"])
        .output()
        .expect("run pi");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout.trim(), "Hello from Vertex");
    let seen = seen.lock().expect("lock");
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen[0].head[0].starts_with("POST /token "), "{:?}", seen[0].head);
    assert!(seen[0].body.contains("refresh_token=rt"), "{}", seen[0].body);
    assert!(
        seen[1].head[0].starts_with("POST /v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"),
        "{:?}",
        seen[1].head
    );
    assert_eq!(seen[1].header("authorization").as_deref(), Some("Bearer ya29.stored-login"));
}
