//! `ctx.shutdown()` and `ctx.modelRegistry` of extensions (issue 15).
//!
//! - RPC mode, through the `pi` binary: a TypeScript extension's command calls `ctx.shutdown()`;
//!   pi answers the prompt, then quits with status 0 although stdin stays open (pi's
//!   `checkShutdownRequested`: no command in flight and the session idle). A request from
//!   `session_start` quits as soon as the input is attached.
//! - Through the SDK: a Rust extension's `ctx.shutdown()` reaches the handler the mode set, and
//!   does nothing without one (print mode, as pi).
//! - The Node host's `ctx.modelRegistry` answers from our registry (getAll, getAvailable, find,
//!   hasConfiguredAuth, refresh).

#[path = "cli_support/mod.rs"]
mod cli_support;
mod http_support;
mod js_support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc::channel};
use std::time::Duration;

use cli_support::{Env, ScriptedServer, text_reply};
use pi_coding_agent::extensions::{Extension, FnExtension};
use serde_json::{Value, json};

const BYE: &str = r#"
export default function (pi) {
    pi.registerCommand("bye", {
        description: "Quit",
        handler: async (_args, ctx) => {
            ctx.ui.notify("bye", "info");
            ctx.shutdown();
        },
    });
}
"#;

const AT_START: &str = r#"
export default function (pi) {
    pi.on("session_start", (_event, ctx) => ctx.shutdown());
}
"#;

/// Spawns `pi --mode rpc -e <source>`; returns the child, its stdin and a receiver of its JSON lines.
fn rpc_pi(
    env: &Env,
    source: &str,
) -> (std::process::Child, std::process::ChildStdin, std::sync::mpsc::Receiver<Value>) {
    let node = js_support::node_path().expect("node");
    let ext = env.proj().join("ext.ts");
    std::fs::write(&ext, source).expect("extension");
    let mut child = env
        .pi()
        .args(["--model", "local/smollm2-135m", "--mode", "rpc", "--no-tools", "-e"])
        .arg(&ext)
        .env("PI_NODE", node)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn pi");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line)
                && tx.send(v).is_err()
            {
                break;
            }
        }
    });
    (child, stdin, rx)
}

/// Waits for the child to exit by itself (a hang fails after a minute instead of blocking CI).
fn exit_status(child: &mut std::process::Child) -> i32 {
    for _ in 0..600 {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status.code().unwrap_or(-1);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    panic!("pi did not quit after ctx.shutdown()");
}

#[test]
fn rpc_quits_after_a_commands_shutdown() {
    if !js_support::node_available() {
        return;
    }
    let server = ScriptedServer::start(vec![text_reply(&["unused"])]);
    let env = Env::new(&server.base_url);
    let (mut child, mut stdin, rx) = rpc_pi(&env, BYE);
    writeln!(stdin, "{}", json!({"id": "1", "type": "prompt", "message": "/bye"})).expect("write");
    stdin.flush().expect("flush");
    assert_eq!(exit_status(&mut child), 0);
    let records: Vec<Value> = rx.try_iter().collect();
    assert!(
        records.iter().any(|r| r["type"] == "extension_ui_request" && r["message"] == "bye"),
        "the command ran before pi quit: {records:?}"
    );
    assert!(
        records.iter().any(|r| r["type"] == "response" && r["id"] == "1" && r["success"] == true),
        "the prompt was answered before pi quit: {records:?}"
    );
    assert!(server.requests.lock().expect("requests").is_empty(), "an extension command makes no request");
    drop(stdin);
}

#[test]
fn rpc_quits_when_session_start_asks() {
    if !js_support::node_available() {
        return;
    }
    let server = ScriptedServer::start(vec![text_reply(&["unused"])]);
    let env = Env::new(&server.base_url);
    let (mut child, stdin, _rx) = rpc_pi(&env, AT_START);
    assert_eq!(exit_status(&mut child), 0);
    drop(stdin);
}

/// Through the SDK: `ctx.shutdown()` calls the mode's handler; without one it does nothing.
#[tokio::test]
async fn shutdown_reaches_the_modes_handler() {
    let calls = Arc::new(AtomicUsize::new(0));
    let ext: Arc<dyn Extension> = Arc::new(FnExtension::new("<inline:bye>", |pi| {
        pi.on_notify("agent_end", |_event, ctx| {
            ctx.shutdown();
            Box::pin(async { Ok(None) })
        });
        Ok(())
    }));
    let h = http_support::Setup { extensions: vec![ext.clone()], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("no handler yet").await.expect("prompt");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let counter = calls.clone();
    h.session.set_extension_shutdown_handler(move || {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    h.session.prompt("now").await.expect("prompt");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    h.session.dispose().await;
}

const REGISTRY: &str = r#"
export default function (pi) {
    pi.on("session_start", async (_event, ctx) => {
        const r = ctx.modelRegistry;
        const all = r.getAll();
        const local = r.find("local", "smollm2-135m");
        await r.refresh();
        pi.appendEntry("registry", {
            all: all.length,
            hasLocal: all.some((m) => m.provider === "local" && m.id === "smollm2-135m"),
            available: r.getAvailable().map((m) => `${m.provider}/${m.id}`).filter((k) => k.startsWith("local/")),
            found: local ? { id: local.id, api: local.api, contextWindow: local.contextWindow } : null,
            missing: r.find("local", "nope") ?? null,
            auth: local ? r.hasConfiguredAuth(local) : null,
            error: r.getError() ?? null,
        });
    });
}
"#;

#[tokio::test]
async fn node_model_registry_is_ours() {
    if !js_support::node_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("registry.mjs");
    std::fs::write(&path, REGISTRY).expect("extension");
    let h = http_support::Setup { extension_paths: vec![path], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let entry = h
        .entries()
        .into_iter()
        .find(|e| e["type"] == "custom" && e["customType"] == "registry")
        .expect("the extension recorded the registry");
    let data = &entry["data"];
    assert!(data["all"].as_u64().is_some_and(|n| n >= 1), "{data}");
    assert_eq!(data["hasLocal"], true);
    assert_eq!(data["available"], json!(["local/smollm2-135m"]));
    assert_eq!(data["found"], json!({"id": "smollm2-135m", "api": "openai-completions", "contextWindow": 8192}));
    assert_eq!(data["missing"], Value::Null);
    assert_eq!(data["auth"], true);
    assert_eq!(data["error"], Value::Null);
    assert_eq!(h.error_pairs(), Vec::<(String, String)>::new());
    h.session.dispose().await;
}
