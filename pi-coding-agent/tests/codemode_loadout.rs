//! What the model is declared while `codemode` is active, compared with the reference pi 1.6.0
//! (`tests/fixtures/codemode/loadout.json`, recorded by `scripts/fixtures/codemode_loadout.sh`):
//! with `codemode.mode` "on" the declared tools' descriptions end with how scripts call them and
//! what the call resolves to (output schemas: `bash` an object, `read` a string or an image);
//! with "only" they are listed in the `codemode` description instead and left out of the request's
//! tools and system prompt, while the session file still records them and scripts still call them.

mod http_support;

use std::path::PathBuf;
use std::sync::Arc;

use http_support::{HttpSession, Setup, text_reply, tool_reply};
use pi_coding_agent::builtin_extensions::codemode::CodemodeExtension;
use pi_coding_agent::builtin_extensions::codemode::description::codemode_docs_path;
use pi_coding_agent::extensions::Extension;
use serde_json::{Value, json};

const SCRIPT: &str = r#"const r = await tools.bash({ command: "echo hi" }); return r.exit_code + ":" + r.output"#;
const REFERENCE_ROOT: &str = "/root/.cache/pi-anchor/node_modules/@earendil-works/pi-coding-agent";

fn fixture(mode: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codemode/loadout.json");
    let all: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("fixture JSON");
    all[mode].clone()
}

/// The reference's install paths as ours, and the `<cwd>` section masked.
fn normalize(text: &str) -> String {
    let ours = codemode_docs_path();
    let root = ours.parent().and_then(|p| p.parent()).expect("docs root").display().to_string();
    let text = text.replace(REFERENCE_ROOT, &root);
    match (text.find("<cwd>\n"), text.find("\n</cwd>")) {
        (Some(start), Some(end)) => format!("{}<cwd>\n<CWD>{}", &text[..start], &text[end..]),
        _ => text,
    }
}

fn strip_wall_time(text: &str) -> String {
    text.split('\n')
        .map(|l| if l.starts_with("Wall time ") { "Wall time <T> seconds" } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

async fn run(only: bool) -> HttpSession {
    let ext = CodemodeExtension::new(Vec::new(), true, None).with_mode_only(only);
    let replies = vec![tool_reply("call_1", "codemode", json!({ "code": SCRIPT })), text_reply("ok")];
    let h =
        Setup { replies, extensions: vec![Arc::new(ext) as Arc<dyn Extension>], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    // In the order `--tools codemode,read,bash` gives them.
    h.session.set_active_tools_by_name(&[]);
    h.session.set_active_tools_by_name(&["codemode", "read", "bash"]);
    h.session.prompt("go").await.expect("prompt");
    h
}

/// The request after the script's result, the way the fixture holds the reference's.
fn observed(h: &HttpSession) -> Value {
    let bodies = h.server.bodies();
    assert_eq!(bodies.len(), 2, "the codemode call, then the answer");
    let body = &bodies[1];
    let tools: Vec<Value> = body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            let mut t = t.clone();
            let description = normalize(t["function"]["description"].as_str().expect("description"));
            t["function"]["description"] = json!(description);
            t
        })
        .collect();
    let result = body["messages"].as_array().expect("messages").iter().find(|m| m["role"] == "tool").cloned();
    let added: Vec<Value> = h
        .entries()
        .iter()
        .filter(|e| e["message"]["role"] == "system")
        .flat_map(|e| e["message"]["toolsAdded"].as_array().cloned().unwrap_or_default())
        .map(|t| t["name"].clone())
        .collect();
    json!({
        "tools": tools,
        "system": normalize(&http_support::system_text(body)),
        "result": strip_wall_time(result.expect("tool message")["content"].as_str().expect("content")),
        "sessionToolsAdded": added,
    })
}

fn expected(mode: &str) -> Value {
    let mut reference = fixture(mode);
    for tool in reference["tools"].as_array_mut().expect("tools") {
        let description = normalize(tool["function"]["description"].as_str().expect("description"));
        tool["function"]["description"] = json!(description);
    }
    reference["system"] = json!(normalize(reference["system"].as_str().expect("system")));
    reference["result"] = json!(strip_wall_time(reference["result"].as_str().expect("result")));
    reference
}

fn assert_same(ours: &Value, reference: &Value) {
    for key in ["tools", "system", "result", "sessionToolsAdded"] {
        assert_eq!(
            ours[key],
            reference[key],
            "{key} differs:\nours:      {}\nreference: {}",
            serde_json::to_string_pretty(&ours[key]).unwrap_or_default(),
            serde_json::to_string_pretty(&reference[key]).unwrap_or_default()
        );
    }
}

#[tokio::test]
async fn mode_on_describes_how_scripts_call_the_declared_tools() {
    let h = run(false).await;
    let ours = observed(&h);
    let bash = ours["tools"].as_array().unwrap().iter().find(|t| t["function"]["name"] == "bash").cloned();
    let bash = bash.expect("bash declared")["function"]["description"].as_str().unwrap_or_default().to_owned();
    assert!(
        bash.ends_with(
            "\n\nCodemode: `tools.bash(args)` resolves to `{ output, truncated, full_output_path?, exit_code, wall_time_seconds }`."
        ),
        "{bash}"
    );
    assert_same(&ours, &expected("on"));
}

#[tokio::test]
async fn mode_only_lists_the_tools_in_codemode_and_hides_their_declarations() {
    let h = run(true).await;
    let ours = observed(&h);
    let names: Vec<&str> =
        ours["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert_eq!(names, ["codemode"]);
    assert_same(&ours, &expected("only"));
}
