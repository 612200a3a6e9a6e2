//! `--tools` / `-nt` / `-nbt` / `-xt` as pi 1.6.0 applies them to built-in and extension tools:
//! the tools of the request body for each case recorded from the reference
//! (`tests/fixtures/cli/tool_selection.json`, an extension registering `greet`).

mod cli_support;

use cli_support::{Env, ScriptedServer, text_reply};
use serde_json::Value;

/// A subprocess extension (protocol v1) that registers the tool `greet`.
const EXTENSION: &str = r#"import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        tool = {"name": "greet", "label": "greet", "description": "Greets",
                "parameters": {"type": "object", "properties": {}}}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                          "result": {"protocolVersion": 1, "events": [], "tools": [tool]}}), flush=True)
    elif "id" in msg:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": None}), flush=True)
"#;

fn request_tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

#[test]
fn tool_selection_matches_the_reference() {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cli/tool_selection.json"))
            .unwrap(),
    )
    .unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    let server = ScriptedServer::start((0..cases.len()).map(|_| text_reply(&["ok"])).collect());
    let env = Env::new(&server.base_url);
    let ext = env.dir.path().join("greet.py");
    std::fs::write(&ext, EXTENSION).unwrap();
    for (i, case) in cases.iter().enumerate() {
        let flags: Vec<&str> = case["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        let mut args = vec!["-p", "--no-session", "-e", ext.to_str().unwrap()];
        args.extend(&flags);
        args.push("hi");
        let out = env.run(&args);
        assert!(out.status.success(), "{flags:?}: {}", String::from_utf8_lossy(&out.stderr));
        let body = server.requests.lock().unwrap()[i].clone();
        let expected: Vec<String> = serde_json::from_value(case["tools"].clone()).unwrap();
        assert_eq!(request_tools(&body), expected, "flags {flags:?}");
    }
}
