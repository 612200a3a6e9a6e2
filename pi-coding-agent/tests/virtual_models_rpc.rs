//! RPC mode's model commands (`get_available_models`, `set_model`, `cycle_model`) see the
//! providers and virtual models extensions register and unregister while the session runs
//! (issue 15), against the reference pi 1.6.0: `fixtures/vmodels/late.ts`'s commands change them,
//! `fixtures/vmodels/rpc_script.json` is what is sent and `fixtures/vmodels/rpc.ref.json` what the
//! reference answered (`scripts/fixtures/vmodels_rpc.mjs`; models reduced to `provider/id`).
//! Needs Node.js 22 (`js_support`).

mod cli_support;
mod js_support;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::Stdio;

use cli_support::{Env, ScriptedServer};
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vmodels").join(name)
}

/// The recording's shape of a response's data.
fn brief(value: &Value) -> Value {
    if let Some(models) = value.get("models").and_then(Value::as_array) {
        let ids: Vec<String> = models
            .iter()
            .map(|m| format!("{}/{}", m["provider"].as_str().unwrap(), m["id"].as_str().unwrap()))
            .collect();
        return json!({"models": ids});
    }
    if let (Some(p), Some(id)) =
        (value.get("provider").and_then(Value::as_str), value.get("id").and_then(Value::as_str))
    {
        return json!(format!("{p}/{id}"));
    }
    if let Some(model) = value.get("model") {
        let mut out = value.clone();
        out["model"] = json!(format!("{}/{}", model["provider"].as_str().unwrap(), model["id"].as_str().unwrap()));
        return out;
    }
    value.clone()
}

#[test]
fn rpc_model_commands_follow_the_extensions_registrations() {
    if !js_support::node_available() {
        return;
    }
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let node = js_support::node_path().expect("node");
    let ext = fixture("late.ts").display().to_string();
    let mut child = env
        .pi()
        .args(["-e", &ext, "--mode", "rpc", "--model", "local/smollm2-135m", "--no-session"])
        .env("PHYS_URL", &server.base_url)
        .env("PI_NODE", node)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut n = 0;
    let mut send = |command: &Value| -> Value {
        n += 1;
        let id = n.to_string();
        let mut line = command.clone();
        line["id"] = json!(id);
        writeln!(stdin, "{line}").unwrap();
        loop {
            let record: Value = serde_json::from_str(&lines.next().expect("a record").unwrap()).unwrap();
            if record["type"] == "response" && record["id"] == id.as_str() {
                return record;
            }
        }
    };
    let script: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture("rpc_script.json")).unwrap()).unwrap();
    let mut steps = Vec::new();
    for command in &script {
        let response = send(command);
        if command["type"] == "prompt" {
            send(&json!({"type": "get_state"}));
        }
        steps.push(json!({
            "command": command,
            "success": response["success"],
            "data": brief(response.get("data").unwrap_or(&Value::Null)),
            "error": response.get("error").cloned().unwrap_or(Value::Null),
        }));
    }
    let want: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(fixture("rpc.ref.json")).unwrap()).unwrap();
    for (ours, theirs) in steps.iter().zip(&want) {
        assert_eq!(ours, theirs, "ours (left) and the reference's (right)");
    }
    assert_eq!(steps.len(), want.len());
    let _ = child.kill();
    let _ = child.wait();
}
