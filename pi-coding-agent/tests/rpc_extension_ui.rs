//! `ctx.ui` of a TypeScript extension in RPC mode, through the `pi` binary: a dialog becomes an
//! `extension_ui_request` on stdout, the client's `extension_ui_response` on stdin answers it,
//! fire-and-forget methods are requests without an answer, and `ctx.mode` / `ctx.hasUI` are
//! `"rpc"` / `true` (pi's `docs/rpc-extension-ui.md`).

#[path = "cli_support/mod.rs"]
mod cli_support;
mod js_support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc::channel;
use std::time::Duration;

use cli_support::{Env, ScriptedServer, text_reply};
use serde_json::{Value, json};

const EXTENSION: &str = r#"
export default function (pi) {
    pi.registerCommand("ask", {
        description: "Ask the user",
        handler: async (args, ctx) => {
            const choice = await ctx.ui.select("Pick one", ["A", "B"]);
            const sure = await ctx.ui.confirm("Sure?", `You picked ${choice}`);
            ctx.ui.setStatus("ask", `${ctx.mode}/${ctx.hasUI}`);
            ctx.ui.notify(`picked ${choice} ${sure}`, "warning");
        },
    });
}
"#;

#[test]
fn a_typescript_extensions_dialogs_are_extension_ui_requests() {
    if !js_support::node_available() {
        return;
    }
    let node = js_support::node_path().expect("node");
    let server = ScriptedServer::start(vec![text_reply(&["unused"])]);
    let env = Env::new(&server.base_url);
    let ext = env.proj().join("ask.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let mut child = env
        .pi()
        .args(["--model", "local/smollm2-135m", "--mode", "rpc", "--no-tools", "-e"])
        .arg(&ext)
        .env("PI_NODE", node)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn pi");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
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
    let next = |what: &str, f: &dyn Fn(&Value) -> bool| -> Value {
        loop {
            let v = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("no {what}"));
            if f(&v) {
                return v;
            }
        }
    };
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(json!({"id": "1", "type": "prompt", "message": "/ask"}));
    let select = next("select", &|v| v["type"] == "extension_ui_request" && v["method"] == "select");
    assert_eq!(select["title"], "Pick one");
    assert_eq!(select["options"], json!(["A", "B"]));
    send(json!({"type": "extension_ui_response", "id": select["id"], "value": "B"}));
    let confirm = next("confirm", &|v| v["type"] == "extension_ui_request" && v["method"] == "confirm");
    assert_eq!(confirm["message"], "You picked B");
    send(json!({"type": "extension_ui_response", "id": confirm["id"], "confirmed": true}));
    let status = next("setStatus", &|v| v["type"] == "extension_ui_request" && v["method"] == "setStatus");
    assert_eq!(status["statusKey"], "ask");
    assert_eq!(status["statusText"], "rpc/true");
    let notify = next("notify", &|v| v["type"] == "extension_ui_request" && v["method"] == "notify");
    assert_eq!(notify["message"], "picked B true");
    assert_eq!(notify["notifyType"], "warning");
    let _ = child.kill();
    let _ = child.wait();
}
