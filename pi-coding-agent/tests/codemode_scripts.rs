//! The `codemode` tool end to end: scripted model turns over 127.0.0.1 call `codemode` with
//! scripts that run in the QuickJS sandbox and call pi's tools through the session's pipeline.
//! The declaration is compared with the one the reference pi 1.6.0 sends
//! (`tests/fixtures/mcp/codemode.json`, recorded by `scripts/fixtures/mcp_request_bodies.sh`).
//!
//! The MCP test needs the MCP test server's Python (see `mcp_servers.rs`); `PI_SKIP_MCP_SERVERS=1`
//! skips it.

mod http_support;

use std::path::PathBuf;
use std::sync::Arc;

use http_support::{HttpSession, Setup, text_reply, tool_names, tool_reply};
use pi_coding_agent::builtin_extensions::codemode::CodemodeExtension;
use pi_coding_agent::builtin_extensions::codemode::description::codemode_docs_path;
use pi_coding_agent::extensions::Extension;
use pi_coding_agent::mcp::extension::{McpExtension, McpExtensionOptions};
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn codemode(id: &str, code: &str) -> String {
    tool_reply(id, "codemode", json!({ "code": code }))
}

async fn start(replies: Vec<String>, files: Vec<(&'static str, &'static str)>) -> HttpSession {
    let ext = Arc::new(CodemodeExtension::new(Vec::new(), true, None)) as Arc<dyn Extension>;
    let h = Setup { replies, extensions: vec![ext], files, ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h
}

/// The codemode results of the session, each as its content blocks' text joined.
fn codemode_results(h: &HttpSession) -> Vec<String> {
    h.entries()
        .iter()
        .filter(|e| e["message"]["role"] == "toolResult" && e["message"]["toolName"] == "codemode")
        .map(|e| e["message"]["content"].as_array().unwrap().iter().filter_map(|p| p["text"].as_str()).collect())
        .collect()
}

/// Runs one script as the model's only tool call and returns the result text the model saw.
async fn run_one(code: &str, files: Vec<(&'static str, &'static str)>) -> (String, HttpSession) {
    let h = start(vec![codemode("c1", code), text_reply("done")], files).await;
    h.session.prompt("go").await.expect("prompt");
    assert_eq!(h.server.bodies().len(), 2, "one codemode call, then the final answer");
    let results = codemode_results(&h);
    (results[0].clone(), h)
}

/// The header's wall time varies; everything else is compared exactly.
fn strip_wall_time(text: &str) -> String {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.len() > 1 && lines[1].starts_with("Wall time ") && lines[1].ends_with(" seconds") {
        lines[1] = "Wall time <T> seconds";
    }
    lines.join("\n")
}

#[tokio::test]
async fn declaration_matches_the_reference() {
    let h = start(vec![text_reply("ok")], Vec::new()).await;
    h.session.prompt("hi").await.expect("prompt");
    let body = &h.server.bodies()[0];
    let ours = body["tools"].as_array().unwrap().iter().find(|t| t["function"]["name"] == "codemode").cloned();
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("pi-coding-agent/tests/fixtures/mcp/codemode.json"))
            .expect("fixture"),
    )
    .expect("fixture JSON");
    let mut reference =
        fixture["tools"].as_array().unwrap().iter().find(|t| t["function"]["name"] == "codemode").cloned().unwrap();
    let docs = "/root/.cache/pi-anchor/node_modules/@earendil-works/pi-coding-agent/docs/codemode.md";
    let description = reference["function"]["description"]
        .as_str()
        .unwrap()
        .replace(docs, &codemode_docs_path().display().to_string());
    reference["function"]["description"] = json!(description);
    assert_eq!(ours, Some(reference));
    // The snippet and guideline in the system prompt, as the reference has them.
    let system = http_support::system_text(body);
    assert!(system.contains("- codemode: Run JavaScript that calls other tools\n"), "{system}");
    assert!(system.contains("- Use codemode to batch independent tool calls (Promise.allSettled), chain them, or filter large output, instead of many separate calls.\n"), "{system}");
}

#[tokio::test]
async fn parallel_tool_calls_run_concurrently() {
    // Each bash call waits for the other's marker file: run one after the other, they deadlock
    // until the script's deadline, and the script fails.
    let code = r#"// @options: {"timeout_ms": 60000}
const [a, b, f] = await Promise.all([
  tools.bash({ command: "touch one; while [ ! -f two ]; do sleep 0.05; done; echo A" }),
  tools.bash({ command: "touch two; while [ ! -f one ]; do sleep 0.05; done; echo B" }),
  tools.read({ path: "note.txt" }),
]);
text(a.output.trim() + b.output.trim());
return f;"#;
    let (result, _h) = run_one(code, vec![("note.txt", "hello note\n")]).await;
    assert_eq!(
        strip_wall_time(&result),
        "Script completed\nWall time <T> seconds\nOutput:\n==> text 1/2 <==\nAB\n==> text 2/2 <==\nhello note\n"
    );
}

#[tokio::test]
async fn long_output_is_truncated_and_spilled_to_a_file() {
    let code = "// @options: {\"max_output_tokens\": 10}\nconst lines = [];\nfor (let i = 0; i < 200; i++) lines.push(\"line \" + i);\ntext(lines.join(\"\\n\"));";
    let (result, _h) = run_one(code, Vec::new()).await;
    let full: Vec<String> = (0..200).map(|i| format!("line {i}")).collect();
    let full = full.join("\n");
    assert!(
        result.contains(&format!(
            "Warning: truncated output (original token count: {})\nTotal output lines: 200\n\n",
            full.len().div_ceil(4)
        )),
        "{result}"
    );
    assert!(
        result.contains("\n\nline 0\nline 1\nline 2…413 tokens truncated…97\nline 198\nline 199\n\n[Full output: "),
        "{result}"
    );
    let marker = "[Full output: ";
    let start = result.find(marker).expect("spill path") + marker.len();
    let path = &result[start..result[start..].find(" (read with offset/limit)]").unwrap() + start];
    assert!(path.contains("pi-codemode-") && path.ends_with(".txt"), "{path}");
    assert_eq!(std::fs::read_to_string(path).expect("spill file"), full);
}

#[tokio::test]
async fn a_throwing_script_keeps_its_output_and_reports_the_error() {
    let code = "console.log(\"before\", 1);\ntext(\"partial\");\nawait tools.read({ path: \"note.txt\" });\nthrow new TypeError(\"boom\");";
    let (result, _h) = run_one(code, vec![("note.txt", "x")]).await;
    let result = strip_wall_time(&result);
    assert!(
        result.starts_with("Script failed\nWall time <T> seconds\nOutput:\npartial\n<console_output>\nbefore 1\n</console_output>\nScript error:\nTypeError: boom\n"),
        "{result}"
    );
    assert!(result.ends_with("\n\nTool calls made before the failure (they are not undone): read (ok)"), "{result}");
}

#[tokio::test]
async fn a_script_that_runs_forever_times_out() {
    let (result, _h) =
        run_one("// @options: {\"timeout_ms\": 300}\ntext(\"start\");\nwhile (true) {}", Vec::new()).await;
    assert_eq!(
        strip_wall_time(&result),
        "Script failed\nWall time <T> seconds\nOutput:\nstart\nScript error:\nScript timed out: Execution timed out after 300 ms\n\nNo tool calls were made."
    );
}

#[tokio::test]
async fn file_system_network_and_timers_do_not_exist() {
    let code = r#"const names = ["setTimeout", "setInterval", "fetch", "require", "process", "XMLHttpRequest", "WebSocket", "std", "os", "Deno", "Bun"];
text(names.map((n) => n + ":" + typeof globalThis[n]).join(" "));
let imported = "no";
try { await import("fs"); imported = "yes"; } catch (e) { imported = e.name; }
text("import:" + imported);
setTimeout(() => {}, 1);"#;
    let (result, _h) = run_one(code, Vec::new()).await;
    let result = strip_wall_time(&result);
    assert!(result.starts_with("Script failed\nWall time <T> seconds\nOutput:\n==> text 1/2 <==\nsetTimeout:undefined setInterval:undefined fetch:undefined require:undefined process:undefined XMLHttpRequest:undefined WebSocket:undefined std:undefined os:undefined Deno:undefined Bun:undefined\n==> text 2/2 <==\nimport:"), "{result}");
    assert!(!result.contains("import:yes"), "{result}");
    assert!(result.contains("Script error:\nReferenceError: setTimeout is not defined\n"), "{result}");
}

#[tokio::test]
async fn a_promise_that_can_never_settle_fails_at_once() {
    let (result, _h) = run_one("await new Promise(() => {});", Vec::new()).await;
    assert_eq!(
        strip_wall_time(&result),
        "Script failed\nWall time <T> seconds\nOutput:\nScript error:\nError: The script is waiting on a promise that can never settle: no tool call is pending, and timers do not exist here.\n\nNo tool calls were made."
    );
}

#[tokio::test]
async fn store_keeps_values_across_calls_and_records_them_in_the_session() {
    let replies = vec![
        codemode("c1", "store(\"cursor\", { page: 2 }); return load(\"cursor\").page;"),
        codemode("c2", "return JSON.stringify(load(\"cursor\")) + \" \" + typeof load(\"missing\");"),
        text_reply("done"),
    ];
    let h = start(replies, Vec::new()).await;
    h.session.prompt("go").await.expect("prompt");
    assert_eq!(h.server.bodies().len(), 3);
    let results = codemode_results(&h);
    assert!(results[0].ends_with("Output:\n2"), "{}", results[0]);
    assert!(results[1].ends_with("Output:\n{\"page\":2} undefined"), "{}", results[1]);
    let stores: Vec<Value> =
        h.entries().into_iter().filter(|e| e["type"] == "custom" && e["customType"] == "codemode-store").collect();
    assert_eq!(stores.len(), 1, "{stores:?}");
    assert_eq!(stores[0]["data"], json!({"set": {"cursor": {"page": 2}}, "delete": []}));
}

#[tokio::test]
async fn tool_errors_reject_and_unknown_tools_name_close_matches() {
    let code = r#"const settled = await Promise.allSettled([tools.read({ path: "missing.txt" }), tools.read({})]);
text(settled.map((s) => s.status + ": " + (s.reason ? s.reason.message : s.value)).join("\n"));
tools.reed({ path: "x" });"#;
    let (result, _h) = run_one(code, Vec::new()).await;
    assert!(result.contains("Output:\nrejected: ENOENT: no such file or directory"), "{result}");
    assert!(result.contains("\nrejected: Validation failed for tool \"read\""), "{result}");
    assert!(result.contains("Script error:\nTypeError: tools.reed does not exist. Available: read, bash, edit, write. ALL_TOOLS lists every tool; searchTools(query) finds tools by topic. Check for a member with \"reed\" in tools.\n"), "{result}");
    assert!(
        result.ends_with("Tool calls made before the failure (they are not undone): read (error), read (error)"),
        "{result}"
    );
}

#[tokio::test]
async fn aborting_the_run_stops_the_script_and_cancels_its_calls() {
    let code = "await tools.bash({ command: \"touch started; sleep 30\" });\ntext(\"never\");";
    let h = start(vec![codemode("c1", code), text_reply("done")], Vec::new()).await;
    let session = h.session.clone();
    let run = tokio::spawn(async move { session.prompt("go").await });
    let marker = h.cwd.join("started");
    while !marker.exists() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    h.session.abort().await;
    let _ = run.await.expect("prompt task");
    let entries = h.entries();
    let result = entries
        .iter()
        .find(|e| e["message"]["role"] == "toolResult" && e["message"]["toolName"] == "codemode")
        .expect("codemode result");
    let text =
        result["message"]["content"].as_array().unwrap().iter().filter_map(|p| p["text"].as_str()).collect::<String>();
    assert!(text.starts_with("Script failed\n"), "{text}");
    assert!(text.contains("Script error:\nScript aborted: This operation was aborted\n\nTool calls made before the failure (they are not undone): bash (cancelled)"), "{text}");
    assert_eq!(result["message"]["details"]["calls"][0]["status"], "cancelled");
}

#[tokio::test]
async fn scripts_call_mcp_tools_of_a_real_server() {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping");
        return;
    }
    let python =
        std::env::var("PI_MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".mcp-venv/bin/python"));
    assert!(python.exists(), "{} is missing: run scripts/mcp-servers/install.sh", python.display());
    let script = repo_root().join("scripts/mcp-servers/test_server.py").canonicalize().expect("script");
    let agent = tempfile::tempdir().expect("agent");
    let config =
        json!({"mcpServers": {"test": {"command": python, "args": [script], "description": "Tools for testing pi"}}});
    std::fs::write(agent.path().join("mcp.json"), config.to_string()).expect("mcp.json");
    let mcp = Arc::new(McpExtension::new(McpExtensionOptions {
        agent_dir: agent.path().to_path_buf(),
        project_trusted: Some(false),
        startup_wait: std::time::Duration::from_secs(30),
        tools: None,
        exclude_tools: None,
    }));
    // Not named by --tools: the MCP extension activates it for the `codemode` server.
    let cm = Arc::new(CodemodeExtension::new(vec![mcp.catalog()], false, None));
    let code = r#"const hits = await searchTools("echo the text back", { limit: 1 });
const ns = await describeNamespace("mcp__test");
const echoed = await tools.mcp__test__echo({ text: "hi" });
text(hits.map((h) => h.name).join(","));
text(ns.tools.includes("mcp__test__echo") + " " + ns.description);
return echoed.content[0].text + " " + echoed.isError;"#;
    let replies = vec![codemode("c1", code), text_reply("done")];
    let extensions = vec![cm as Arc<dyn Extension>, mcp.clone() as Arc<dyn Extension>];
    let h = Setup { replies, extensions, ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("use mcp").await.expect("prompt");
    let bodies = h.server.bodies();
    let first = tool_names(&bodies[0]);
    assert!(first.contains(&"codemode".to_owned()), "{first:?}");
    assert!(!first.iter().any(|n| n.starts_with("mcp__")), "{first:?}");
    let results = codemode_results(&h);
    assert_eq!(
        strip_wall_time(&results[0]),
        "Script completed\nWall time <T> seconds\nOutput:\n==> text 1/3 <==\nmcp__test__echo\n==> text 2/3 <==\ntrue Tools for testing pi\n==> text 3/3 <==\necho: hi false"
    );
    mcp.manager().expect("manager").close_all().await;
}

#[tokio::test]
async fn models_lists_the_catalog_and_refuses_models_no_provider_runs() {
    use pi_coding_agent::builtin_extensions::codemode::ModelCatalog;
    let model = json!({"provider": "local", "id": "m1", "name": "M1", "api": "openai-completions", "headers": {"x-key": "secret"}});
    let catalog = ModelCatalog { all: vec![model], available: Vec::new() };
    let ext = Arc::new(CodemodeExtension::new(Vec::new(), true, None).with_models(catalog)) as Arc<dyn Extension>;
    let code = r#"const chat = await models.getModelsOfType("chat");
text(chat.length + " " + chat[0].id + " " + ("headers" in chat[0]));
text((await models.getAvailableOfType("chat")).length + " " + (await models.getModelsOfType("classifier", "local")).length);
text(String(await models.getModelOfType("classifier", "local", "m1")));
const outcomes = await Promise.allSettled([
  models.classify({ provider: "local", id: "m1" }, {}),
  models.generateImages(undefined, {}),
  models.getModelsOfType("bogus"),
]);
text(outcomes.map((o) => o.reason.message).join("\n"));"#;
    let h =
        Setup { replies: vec![codemode("c1", code), text_reply("done")], extensions: vec![ext], ..Default::default() }
            .start()
            .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("go").await.expect("prompt");
    let result = codemode_results(&h).remove(0);
    assert_eq!(
        strip_wall_time(&result),
        "Script completed\nWall time <T> seconds\nOutput:\n==> text 1/4 <==\n1 m1 false\n==> text 2/4 <==\n0 0\n==> text 3/4 <==\nundefined\n==> text 4/4 <==\n\"local/m1\" is a chat model, not a classifier model. List the classifier models you can use with models.getAvailableOfType(\"classifier\").\nmodels.generateImages() expects an image model as its first argument, got null. models.getModelOfType() returns undefined for an unknown provider or id. List the image models you can use with models.getAvailableOfType(\"image\").\nUnknown model type \"bogus\". Use \"chat\", \"image\", or \"classifier\"."
    );
}

#[tokio::test]
async fn nested_calls_go_through_the_extensions_tool_call_handlers() {
    use pi_coding_agent::extensions::{FnExtension, NotifyEvent, ToolCallEvent, ToolCallResult};
    use std::sync::Mutex;
    let seen: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let (seen2, seen3) = (seen.clone(), seen.clone());
    let guard = FnExtension::new("guard", move |pi| {
        let seen = seen2.clone();
        pi.on_sync::<ToolCallEvent>(move |event, _ctx| {
            let parent = event.parent_tool_call_id.clone().unwrap_or_default();
            seen.lock().unwrap().push(format!("call {} {} parent={parent}", event.tool_name, event.tool_call_id));
            Ok((event.tool_name == "bash").then(|| ToolCallResult {
                block: true,
                reason: Some("bash is blocked here".into()),
                terminate: false,
            }))
        });
        let seen = seen3.clone();
        pi.on_notify("tool_execution_end", move |event, _ctx| {
            if let NotifyEvent::ToolExecutionEnd { tool_call_id, parent_tool_call_id, is_error, .. } = event {
                let parent = parent_tool_call_id.clone().unwrap_or_default();
                seen.lock().unwrap().push(format!("end {tool_call_id} parent={parent} error={is_error}"));
            }
            Box::pin(async { Ok(None) })
        });
        Ok(())
    });
    let ext = Arc::new(CodemodeExtension::new(Vec::new(), true, None)) as Arc<dyn Extension>;
    let code = "try { await tools.bash({ command: \"echo hi\" }); } catch (e) { return e.message; }";
    let replies = vec![codemode("c1", code), text_reply("done")];
    let extensions = vec![ext, Arc::new(guard) as Arc<dyn Extension>];
    let h = Setup { replies, extensions, ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("go").await.expect("prompt");
    let result = codemode_results(&h).remove(0);
    assert!(result.ends_with("Output:\nbash is blocked here"), "{result}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0], "call codemode c1 parent=");
    assert!(seen[1].starts_with("call bash c1/") && seen[1].ends_with(" parent=c1"), "{seen:?}");
    // The nested call's end (blocked: an error), then the codemode call's.
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(seen[2].starts_with("end c1/") && seen[2].ends_with(" parent=c1 error=true"), "{seen:?}");
    assert_eq!(seen[3], "end c1 parent= error=false");
}

/// A tool whose result reports the usage of its own (model) work.
struct Metered;

#[async_trait::async_trait]
impl pi_agent_core::AgentTool for Metered {
    fn name(&self) -> &str {
        "metered"
    }

    fn description(&self) -> &str {
        "Reports usage"
    }

    fn parameters(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| json!({"type": "object", "properties": {}}))
    }

    async fn execute(
        &self,
        _id: &str,
        _args: serde_json::Map<String, Value>,
        _ctx: pi_agent_core::ToolContext,
    ) -> Result<pi_agent_core::AgentToolResult, pi_agent_core::ToolError> {
        let mut result = pi_agent_core::AgentToolResult::text("metered");
        result.usage = Some(pi_ai::Usage { input: 3, output: 2, total_tokens: 5, ..Default::default() });
        Ok(result)
    }
}

#[tokio::test]
async fn nested_calls_reach_the_session_listeners_and_the_tool_result_record() {
    use pi_coding_agent::extensions::FnExtension;
    use pi_coding_agent::sdk::SessionEvent;
    use std::sync::Mutex;
    let metered = FnExtension::new("<inline:metered>", |pi| {
        pi.register_tool(Arc::new(Metered) as Arc<dyn pi_agent_core::AgentTool>)?;
        Ok(())
    });
    let ext = Arc::new(CodemodeExtension::new(Vec::new(), true, None)) as Arc<dyn Extension>;
    let code = "await tools.metered({}); return await tools.metered({});";
    let replies = vec![codemode("c1", code), text_reply("done")];
    let h = Setup { replies, extensions: vec![ext, Arc::new(metered) as Arc<dyn Extension>], ..Default::default() }
        .start()
        .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.set_active_tools_by_name(&["codemode", "metered"]);
    let heard: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let sink = heard.clone();
    let _listener = h.session.subscribe(move |event| {
        if let SessionEvent::NestedToolExecution { parent_tool_call_id, event } = event {
            sink.lock().unwrap().push(format!("{} {parent_tool_call_id}", event.kind()));
        }
    });
    h.session.prompt("go").await.expect("prompt");
    assert_eq!(
        heard.lock().unwrap().clone(),
        ["tool_execution_start c1", "tool_execution_end c1", "tool_execution_start c1", "tool_execution_end c1"]
    );
    let entry = h
        .entries()
        .into_iter()
        .find(|e| e["message"]["role"] == "toolResult" && e["message"]["toolName"] == "codemode")
        .expect("codemode result");
    let message = &entry["message"];
    let ids: Vec<&Value> =
        message["nestedCalls"]["calls"].as_array().expect("nestedCalls").iter().map(|c| &c["id"]).collect();
    assert_eq!(ids, [&json!("c1/1"), &json!("c1/2")]);
    assert_eq!(message["nestedCalls"]["complete"], true);
    // The nested results' usage is the codemode result's (pi adds it so the session counts it).
    assert_eq!((&message["usage"]["input"], &message["usage"]["totalTokens"]), (&json!(6), &json!(10)));
    let details: Vec<&Value> =
        message["details"]["calls"].as_array().expect("details").iter().map(|c| &c["id"]).collect();
    assert_eq!(details, [&json!("c1/1"), &json!("c1/2")]);
}
