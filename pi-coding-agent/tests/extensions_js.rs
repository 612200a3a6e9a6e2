//! JavaScript and TypeScript extensions, unmodified, in the session's Node.js host: the founding
//! document's `audit-extension.ts` (byte for byte) through the SDK flow of "在 SDK 里跑起来", drawn
//! by its renderer as the reference draws it; and the faults — syntax and type errors, throws at
//! load and in handlers, a missing package, a handler that never resolves, the host killed with
//! SIGKILL mid-turn, garbage on the host's stdout.

mod http_support;
mod js_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_support::{Setup, roles, text_reply, tool_reply};
use js_support::{fixture, node_available};
use pi_coding_agent::extensions::subprocess::{SubprocessExtension, SubprocessOptions};
use pi_coding_agent::extensions::{Extension, ExtensionError, ExtensionRunner, ToolCallEvent, ToolCallResult};
use pi_tui::{ColorMode, Theme};
use serde_json::{Map, Value, json};

fn audit_entries(entries: &[Value]) -> Vec<Value> {
    entries.iter().filter(|e| e["type"] == "custom" && e["customType"] == "audit-note").cloned().collect()
}

#[test]
fn the_fixture_is_the_founding_documents_file_byte_for_byte() {
    let seed = std::fs::read_to_string("/work/shared/seed/000_d6758b5958ff21b5.txt");
    let Ok(seed) = seed else {
        eprintln!("SKIP: the founding document is not on this machine");
        return;
    };
    let file = std::fs::read_to_string(fixture("audit-extension.ts")).unwrap();
    assert!(file.starts_with("// audit-extension.ts\n"));
    assert!(seed.contains(&file), "audit-extension.ts differs from the founding document");
}

/// "在 SDK 里跑起来" with the TypeScript file: loader with `additional_extension_paths`,
/// `reload`, `bind_extensions`, `prompt`, `get_branch`, `dispose`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seed_audit_extension_ts_runs_through_the_sdk_flow() {
    if !node_available() {
        return;
    }
    let replies = vec![tool_reply("call_1", "bash", json!({"command": "echo hi"})), text_reply("done")];
    let h = Setup { replies, extension_paths: vec![fixture("audit-extension.ts")], ..Default::default() }.start().await;
    let runner = h.session.extension_runner().expect("the extension loaded").clone();
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("跑一下检查").await.expect("prompt");

    let entries = h.entries();
    let audit = audit_entries(&entries);
    assert_eq!(audit.len(), 1, "{entries:#?}");
    assert_eq!(audit[0]["data"]["toolName"], "bash");
    assert_eq!(audit[0]["data"]["toolCallId"], "call_1");
    assert!(audit[0]["data"]["at"].as_u64().is_some());
    let bodies = h.server.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(roles(&bodies[1]), ["system", "user", "assistant", "tool"]);
    for body in &bodies {
        assert!(!body.to_string().contains("audit-note"), "the audit entry reached a request");
    }
    assert!(h.errors.lock().unwrap().is_empty(), "{:?}", h.errors.lock().unwrap());

    // Drawn as the reference draws it (tests/fixtures/audit_renderer_lines.json).
    let reference: Value =
        serde_json::from_str(include_str!("fixtures/audit_renderer_lines.json")).expect("renderer fixture");
    let theme = Theme::dark(ColorMode::Truecolor).expect("dark theme");
    let live = serde_json::from_value(audit[0].clone()).expect("a custom entry");
    let mut component = runner.render_entry(&live, false, &theme).expect("the renderer draws the entry");
    let collapsed: Vec<String> = component.render(40).to_vec();
    let expected: Vec<String> = serde_json::from_value(reference["collapsed"].clone()).unwrap();
    assert_eq!(collapsed, expected);
    let fixed = json!({"type": "custom", "customType": "audit-note", "id": "e1", "parentId": null,
        "timestamp": "2026-01-01T00:00:00.000Z", "data": {"toolName": "bash", "toolCallId": "call_1", "at": 1767225600000u64}});
    let fixed = serde_json::from_value(fixed).expect("a custom entry");
    let mut component = runner.render_entry(&fixed, true, &theme).expect("the renderer draws the entry");
    let expanded: Vec<String> = component.render(40).to_vec();
    let expected: Vec<String> = serde_json::from_value(reference["expanded"].clone()).unwrap();
    assert_eq!(expanded, expected);
    h.session.dispose().await;
}

fn fast() -> SubprocessOptions {
    SubprocessOptions {
        init_timeout: Duration::from_secs(20),
        call_timeout: Duration::from_millis(1500),
        tool_timeout: Duration::from_secs(20),
    }
}

struct Loaded {
    runner: ExtensionRunner,
    errors: Arc<Mutex<Vec<ExtensionError>>>,
    _dir: tempfile::TempDir,
}

/// Writes `files` into a temp dir and loads the `.ts`/`.js` ones (in order) into one runner.
async fn load(files: &[(&str, &str)]) -> Loaded {
    let dir = tempfile::tempdir().unwrap();
    let mut exts: Vec<Arc<dyn Extension>> = Vec::new();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        if !name.contains('/') {
            exts.push(Arc::new(SubprocessExtension::new(path.to_string_lossy()).with_options(fast())));
        }
    }
    let runner = ExtensionRunner::load(exts, dir.path().to_string_lossy()).await;
    let errors = Arc::new(Mutex::new(Vec::new()));
    let sink = errors.clone();
    std::mem::forget(runner.on_error(move |e| sink.lock().unwrap().push(e.clone())));
    Loaded { runner, errors, _dir: dir }
}

/// `tool_call` for `bash`: `Ok(reason)` of a blocking answer, `Err(error)` of a failing handler
/// (the session blocks the call with that text: fail-closed).
async fn tool_call(runner: &ExtensionRunner) -> Result<Option<String>, String> {
    let mut event = ToolCallEvent {
        tool_call_id: "c1".into(),
        tool_name: "bash".into(),
        input: Map::new(),
        parent_tool_call_id: None,
    };
    match runner.emit_tool_call(&mut event).await {
        Ok(Some(ToolCallResult { block: true, reason, .. })) => Ok(reason),
        Ok(_) => Ok(None),
        Err(e) => Err(e.error),
    }
}

const GOOD: &str = r#"
enum Verdict { No = "no bash" }
export default function (pi) {
    pi.on("tool_call", (event) => (event.toolName === "bash" ? { block: true, reason: Verdict.No } : undefined));
    pi.registerCommand("hello", { description: "Say hello", handler: async () => {} });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_errors_are_reported_per_extension_and_the_others_load() {
    if !node_available() {
        return;
    }
    let l = load(&[
        ("syntax.ts", "export default function (pi) {\n  pi.on(\"x\", () => {\n}\n"),
        ("syntax.mjs", "export default function (pi) {\n  pi.on(\"x\", () => {\n}\n"),
        ("types.ts", "const x: number = ;\nexport default function (pi: any) {}\n"),
        ("throws.ts", "export default function () { throw new Error(\"boom at load\"); }\n"),
        ("missing.ts", "import x from \"not-installed-package\";\nexport default function () { x(); }\n"),
        ("nofactory.js", "export const x = 1;\n"),
        ("good.ts", GOOD),
    ])
    .await;
    let errors = l.runner.load_errors();
    let by_name = |n: &str| errors.iter().find(|e| e.path.ends_with(n)).map(|e| e.error.clone());
    let syntax = by_name("syntax.ts").expect("syntax error reported");
    assert!(syntax.starts_with("Failed to load extension: ParseError: "), "{syntax}");
    assert!(syntax.ends_with("syntax.ts:3:0"), "file and position: {syntax}");
    let js = by_name("syntax.mjs").expect("JavaScript syntax error reported");
    assert!(js.starts_with("Failed to load extension: ParseError: missing ) after argument list"), "{js}");
    assert!(js.ends_with("syntax.mjs:3:0"), "file and position: {js}");
    let types = by_name("types.ts").expect("TypeScript syntax error reported");
    assert!(types.contains("types.ts:1:"), "{types}");
    assert_eq!(by_name("throws.ts").as_deref(), Some("Failed to load extension: boom at load"));
    let missing = by_name("missing.ts").expect("missing package reported");
    assert!(missing.contains("not-installed-package"), "{missing}");
    let nofactory = by_name("nofactory.js").expect("no factory reported");
    assert!(nofactory.starts_with("Failed to load extension: Extension does not export a valid factory function"));
    assert_eq!(errors.len(), 6, "{errors:?}");
    assert_eq!(l.runner.extension_paths().len(), 1);
    assert!(l.runner.command("hello").is_some());
    assert_eq!(tool_call(&l.runner).await, Ok(Some("no bash".into())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throwing_handler_is_reported_and_tool_call_fails_closed() {
    if !node_available() {
        return;
    }
    let src = r#"export default function (pi) {
        pi.on("tool_call", () => { throw new Error("handler boom"); });
        pi.on("turn_start", () => { throw new Error("notify boom"); });
    }"#;
    let l = load(&[("throwing.ts", src)]).await;
    assert!(l.runner.load_errors().is_empty(), "{:?}", l.runner.load_errors());
    assert_eq!(tool_call(&l.runner).await, Err("handler boom".into()));
    l.runner.emit(pi_coding_agent::extensions::NotifyEvent::TurnStart { turn_index: 0, timestamp: 0 }).await;
    let errors = l.errors.lock().unwrap().clone();
    assert!(errors.iter().any(|e| e.event == "turn_start" && e.error == "notify boom"), "{errors:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_never_resolves_times_out_and_the_host_comes_back() {
    if !node_available() {
        return;
    }
    let src = r#"import * as fs from "node:fs";
    export default function (pi) {
        pi.on("tool_call", (event, ctx) => {
            const marker = ctx.cwd + "/hung-once";
            if (!fs.existsSync(marker)) { fs.writeFileSync(marker, "x"); return new Promise(() => {}); }
            return { block: true, reason: "second" };
        });
    }"#;
    let l = load(&[("hang.ts", src)]).await;
    assert_eq!(
        tool_call(&l.runner).await,
        Err("Extension did not answer \"tool_call\" within 1500 ms; the process was stopped".into())
    );
    // The host was stopped; the next call starts it again with the extension loaded afresh.
    assert_eq!(tool_call(&l.runner).await, Ok(Some("second".into())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_turn_is_reported_and_the_host_restarts() {
    if !node_available() {
        return;
    }
    let src = r#"import * as fs from "node:fs";
    export default function (pi) {
        pi.on("tool_call", (event, ctx) => {
            const marker = ctx.cwd + "/killed-once";
            if (!fs.existsSync(marker)) { fs.writeFileSync(marker, "x"); process.kill(process.pid, "SIGKILL"); }
            return { block: true, reason: "alive again" };
        });
    }"#;
    let l = load(&[("kill.ts", src)]).await;
    assert_eq!(tool_call(&l.runner).await, Err("Extension process is not running".into()));
    assert_eq!(tool_call(&l.runner).await, Ok(Some("alive again".into())));
    let errors = l.errors.lock().unwrap().clone();
    assert!(
        errors
            .iter()
            .any(|e| e.event == "process" && e.error.starts_with("JavaScript extension host exited (signal: 9")),
        "{errors:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prints_never_corrupt_the_protocol_and_raw_garbage_is_reported() {
    if !node_available() {
        return;
    }
    let src = r#"import * as fs from "node:fs";
    export default function (pi) {
        console.log("hello from console.log");
        process.stdout.write("not json\n");
        pi.on("tool_call", () => { console.log("in handler"); fs.writeSync(1, "raw garbage\n"); return { block: true, reason: "fine" }; });
    }"#;
    let l = load(&[("noisy.ts", src)]).await;
    assert!(l.runner.load_errors().is_empty(), "{:?}", l.runner.load_errors());
    assert_eq!(tool_call(&l.runner).await, Ok(Some("fine".into())));
    let errors = l.errors.lock().unwrap().clone();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].event, "protocol");
    assert!(errors[0].error.contains("raw garbage"), "{errors:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_host_serves_every_javascript_extension_and_the_folder_forms_load() {
    if !node_available() {
        return;
    }
    let pid =
        r#"export default function (pi) { pi.on("tool_call", () => ({ block: true, reason: String(process.pid) })); }"#;
    let l = load(&[
        ("a.ts", pid),
        ("b.mjs", pid),
        ("dir/index.ts", "import { helper } from \"./helper\";\nexport default function (pi) { pi.registerCommand(helper(), { handler: async () => {} }); }\n"),
        ("dir/helper.ts", "export function helper(): string { return \"from-folder\"; }\n"),
    ])
    .await;
    assert!(l.runner.load_errors().is_empty(), "{:?}", l.runner.load_errors());
    // Both answer from one process; the first blocking answer wins, so ask each runner apart.
    let pid_a = tool_call(&l.runner).await.unwrap().unwrap();
    assert!(pid_a.parse::<u32>().is_ok());
    let paths = l.runner.extension_paths();
    assert_eq!(paths.len(), 2, "{paths:?}");
    let dir_path = l._dir.path().join("dir");
    let folder = SubprocessExtension::new(dir_path.to_string_lossy()).with_options(fast());
    let runner =
        ExtensionRunner::load(vec![Arc::new(folder) as Arc<dyn Extension>], l._dir.path().to_string_lossy()).await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    assert!(runner.command("from-folder").is_some());
}

/// `ctx.sessionManager`, `ctx.mode`, `ctx.model`, `ctx.waitForIdle()` and `pi.getThinkingLevel()`
/// of a command in a bound SDK session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commands_context_reads_the_session_branch() {
    if !node_available() {
        return;
    }
    let src = r#"export default function (pi) {
        pi.registerCommand("count", { handler: async (_args, ctx) => {
            const branch = ctx.sessionManager.getBranch();
            await ctx.waitForIdle();
            pi.appendEntry("count", { n: branch.length, leaf: ctx.sessionManager.getLeafId(), last: branch.at(-1)?.id, mode: ctx.mode,
                thinking: pi.getThinkingLevel(), model: ctx.model?.id, idle: ctx.isIdle() });
        } });
    }"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("count.ts");
    std::fs::write(&path, src).unwrap();
    let h = Setup { replies: vec![text_reply("hi")], extension_paths: vec![path], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("hello").await.expect("prompt");
    let before = h.entries();
    let runner = h.session.extension_runner().unwrap().clone();
    assert!(runner.run_command("count", "").await);
    let entries = h.entries();
    let count = entries.iter().find(|e| e["customType"] == "count").expect("the command appended its entry");
    assert_eq!(count["data"]["n"], before.len());
    assert_eq!(count["data"]["leaf"], before.last().unwrap()["id"]);
    assert_eq!(count["data"]["last"], before.last().unwrap()["id"]);
    assert_eq!(count["data"]["mode"], "print");
    assert_eq!(count["data"]["thinking"], "off");
    assert_eq!(count["data"]["model"], "smollm2-135m");
    assert_eq!(count["data"]["idle"], true);
    assert!(h.errors.lock().unwrap().is_empty(), "{:?}", h.errors.lock().unwrap());
}

/// A JavaScript tool (typebox parameters, pi-ai's `StringEnum`) runs in the host; its partial
/// results reach the agent's tool context and its result comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_javascript_tool_runs_with_partial_updates() {
    if !node_available() {
        return;
    }
    let src = r#"import { Type } from "typebox";
    import { StringEnum } from "@earendil-works/pi-ai";
    export default function (pi) {
        pi.registerTool({
            name: "greet", label: "Greet", description: "Greets",
            parameters: Type.Object({ name: Type.String(), tone: Type.Optional(StringEnum(["warm", "cold"])) }),
            async execute(id, params, signal, onUpdate) {
                onUpdate({ content: [{ type: "text", text: "working" }], details: { step: 1 } });
                return { content: [{ type: "text", text: `Hello, ${params.name}!` }], details: { id } };
            },
        });
    }"#;
    let l = load(&[("greet.ts", src)]).await;
    assert!(l.runner.load_errors().is_empty(), "{:?}", l.runner.load_errors());
    let tool = l.runner.tool("greet").expect("registered").definition.tool;
    assert_eq!(
        tool.parameters(),
        &json!({"type": "object", "properties": {"name": {"type": "string"}, "tone": {"type": "string", "enum": ["warm", "cold"]}}, "required": ["name"]})
    );
    let updates = Arc::new(Mutex::new(Vec::new()));
    let sink = updates.clone();
    let ctx = pi_agent_core::ToolContext::new(
        tokio_util::sync::CancellationToken::new(),
        Some(Arc::new(move |r: pi_agent_core::AgentToolResult| sink.lock().unwrap().push(r.details.clone()))),
    );
    let args: Map<String, Value> = serde_json::from_value(json!({"name": "pi"})).unwrap();
    let result = tool.execute("call_9", args, ctx).await.expect("the tool ran");
    assert_eq!(serde_json::to_value(&result.content).unwrap(), json!([{"type": "text", "text": "Hello, pi!"}]));
    assert_eq!(result.details, json!({"id": "call_9"}));
    assert_eq!(*updates.lock().unwrap(), vec![json!({"step": 1})]);
}

/// A flag set on the command line (`runner.set_flag_value`) reaches `pi.getFlag`; before that the
/// registered default answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_set_by_the_host_reach_get_flag() {
    use pi_coding_agent::extensions::FlagValue;
    if !node_available() {
        return;
    }
    let src = r#"export default function (pi) {
        pi.registerFlag("loud", { type: "boolean", default: false, description: "Shout" });
        pi.on("tool_call", () => ({ block: true, reason: String(pi.getFlag("loud")) }));
    }"#;
    let l = load(&[("flag.ts", src)]).await;
    assert_eq!(l.runner.flags()[0].name, "loud");
    assert_eq!(tool_call(&l.runner).await, Ok(Some("false".into())));
    l.runner.set_flag_value("loud", FlagValue::Bool(true));
    assert_eq!(tool_call(&l.runner).await, Ok(Some("true".into())));
}

/// `pi.registerShortcut` is registered on the runner and runs in the host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shortcut_runs_in_the_host() {
    if !node_available() {
        return;
    }
    let src = r#"import * as fs from "node:fs";
    export default function (pi) {
        pi.registerShortcut("ctrl+shift+x", { description: "Mark", handler: async (ctx) => { fs.writeFileSync(ctx.cwd + "/marked", ctx.mode); } });
    }"#;
    let l = load(&[("shortcut.ts", src)]).await;
    let shortcuts = l.runner.shortcuts();
    assert_eq!(shortcuts.len(), 1);
    assert_eq!(shortcuts[0].description.as_deref(), Some("Mark"));
    assert!(l.runner.run_shortcut("ctrl+shift+x").await);
    assert!(!l.runner.run_shortcut("ctrl+shift+y").await);
    assert_eq!(std::fs::read_to_string(l._dir.path().join("marked")).unwrap(), "print");
}
