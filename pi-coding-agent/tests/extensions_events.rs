//! The events issue 15 added, as pi 1.6.0 emits them to an extension: `resources_discover`,
//! `mcp_servers_change`, `ui_prompt_start` / `ui_prompt_end`, `before_provider_headers`,
//! `after_provider_response`, `provider_stream_event`, `turn_end` and `agent_before_settle` with
//! their results. The order, the requests and the entries are compared with what
//! `scripts/fixtures/extension_events_order.mjs` recorded from the reference SDK
//! (`tests/fixtures/extensions_events/order.json`), over a scripted chat-completions server on
//! 127.0.0.1.

mod http_support;
mod js_support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use http_support::Setup;
use pi_coding_agent::extensions::*;
use pi_coding_agent::ui::{DialogOptions, UiHost};
use serde_json::{Value, json};

type Log = Arc<Mutex<Vec<Value>>>;

/// A UI that answers every selector with its last option.
struct PickLast;

#[async_trait]
impl UiHost for PickLast {
    fn has_ui(&self) -> bool {
        true
    }

    async fn select(&self, _title: &str, options: &[String], _opts: DialogOptions) -> Option<String> {
        options.last().cloned()
    }
}

/// The reference script's reply: an `x-reply: yes` header, then the SSE role chunk, text chunk,
/// stop chunk and `[DONE]`.
fn reply(text: &str) -> String {
    let chunk = |delta: Value, finish: Value| {
        let c = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let sse = chunk(json!({"role": "assistant", "content": ""}), Value::Null)
        + &chunk(json!({"content": text}), Value::Null)
        + &chunk(json!({}), json!("stop"))
        + "data: [DONE]\n\n";
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-reply: yes\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{sse}",
        sse.len()
    )
}

fn push(log: &Log, v: Value) {
    log.lock().expect("log lock").push(v);
}

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/extensions_events/order.json")).expect("fixture")
}

/// The extension of the reference script, in Rust.
fn recorder(log: Log, skills_dir: String) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<events>", move |pi| {
        let (l, dir) = (log.clone(), skills_dir.clone());
        pi.on_sync::<ResourcesDiscoverEvent>(move |e, _| {
            push(&l, json!({"type": "resources_discover", "reason": e.reason}));
            Ok(Some(ResourcesDiscoverResult { skill_paths: Some(vec![dir.clone()]), ..Default::default() }))
        });
        let l = log.clone();
        pi.on_sync::<BeforeProviderHeadersEvent>(move |e, _| {
            let mut names: Vec<String> = e.headers.keys().cloned().collect();
            names.sort();
            push(&l, json!({"type": "before_provider_headers", "headers": names}));
            let n = l.lock().expect("log lock").iter().filter(|v| v["type"] == "before_provider_headers").count();
            e.headers.insert("x-trace".into(), Some(format!("t{n}")));
            Ok(None)
        });
        let l = log.clone();
        pi.on_sync::<BeforeProviderRequestEvent>(move |_, _| {
            push(&l, json!({"type": "before_provider_request"}));
            Ok(None)
        });
        let l = log.clone();
        pi.on_sync::<MessageEndEvent>(move |e, _| {
            push(&l, json!({"type": "message_end", "role": e.message.role()}));
            Ok(None)
        });
        let api = pi.clone();
        let l = log.clone();
        pi.on_notify("agent_start", move |_, ctx| {
            let (l, api) = (l.clone(), api.clone());
            Box::pin(async move {
                push(&l, json!({"type": "agent_start"}));
                api.register_mcp_server("docs", json!({"command": "docs-server"}))?;
                let picked = ctx.ui().select("Pick one", &["a".into(), "b".into()], DialogOptions::default()).await;
                push(&l, json!({"type": "picked", "value": picked}));
                Ok(None)
            })
        });
        let turn_ends = Arc::new(Mutex::new(0));
        let settles = Arc::new(Mutex::new(0));
        for name in [
            "session_start",
            "mcp_servers_change",
            "ui_prompt_start",
            "ui_prompt_end",
            "turn_start",
            "after_provider_response",
            "provider_stream_event",
            "turn_end",
            "agent_end",
            "agent_before_settle",
            "agent_settled",
        ] {
            let (l, turn_ends, settles) = (log.clone(), turn_ends.clone(), settles.clone());
            pi.on_notify(name, move |e, _| {
                let e = serde_json::to_value(&*e).unwrap_or_default();
                let answer = summarize(&l, &e, &turn_ends, &settles);
                Box::pin(std::future::ready(Ok(answer)))
            });
        }
        Ok(())
    }))
}

/// Logs a notify event as the reference script does; the boundary answers of the script.
fn summarize(l: &Log, e: &Value, turn_ends: &Mutex<u32>, settles: &Mutex<u32>) -> Option<Value> {
    let kind = e["type"].as_str().unwrap_or_default();
    let entry = match kind {
        "session_start" => json!({"type": kind, "reason": e["reason"]}),
        "mcp_servers_change" => {
            let names: Vec<Value> = e["servers"].as_array().into_iter().flatten().map(|s| s["name"].clone()).collect();
            json!({"type": kind, "servers": names})
        }
        "ui_prompt_start" | "ui_prompt_end" => {
            json!({"type": kind, "kind": e["kind"], "title": e.get("title").cloned().unwrap_or(Value::Null)})
        }
        "turn_start" => json!({"type": kind, "turnIndex": e["turnIndex"]}),
        "after_provider_response" => json!({"type": kind, "status": e["status"],
            "reply": e["headers"].get("x-reply").cloned().unwrap_or(Value::Null)}),
        "provider_stream_event" => {
            json!({"type": kind, "provider": e["provider"], "api": e["api"], "model": e["model"],
            "finish": e["data"]["choices"][0].get("finish_reason").cloned().unwrap_or(Value::Null)})
        }
        "turn_end" => json!({"type": kind, "turnIndex": e["turnIndex"], "outcome": e["outcome"],
            "continue": e["continue"], "entries": e["entries"].as_array().map_or(0, Vec::len),
            "hasEntryId": e["messageEntryId"].is_string(), "toolResultEntryIds": e["toolResultEntryIds"],
            "canContinue": e["context"]["canContinue"],
            "lastRole": e["context"]["llmMessages"].as_array().and_then(|m| m.last()).map_or(Value::Null, |m| m["role"].clone())}),
        "agent_before_settle" => json!({"type": kind, "outcome": e["outcome"], "continue": e["continue"],
            "entries": e["entries"].as_array().map_or(0, Vec::len), "canContinue": e["context"]["canContinue"]}),
        "agent_settled" => json!({"type": kind, "aborted": e["aborted"]}),
        _ => json!({"type": kind}),
    };
    push(l, entry);
    let bump = |c: &Mutex<u32>| {
        let mut c = c.lock().expect("count lock");
        *c += 1;
        *c
    };
    match kind {
        "turn_end" if bump(turn_ends) == 1 => {
            Some(json!({"entries": [{"type": "custom", "customType": "mark", "data": {"n": 1}}]}))
        }
        "agent_before_settle" if bump(settles) == 1 => Some(json!({
            "entries": [{"type": "custom_message", "customType": "note", "content": "more please", "display": false}],
            "continue": true
        })),
        _ => None,
    }
}

/// Compares event lists line by line (one JSON object per line, so a failure shows the diff).
fn assert_same_order(got: &[Value], expected: &Value) {
    let lines = |list: &[Value]| list.iter().map(Value::to_string).collect::<Vec<_>>().join("\n");
    let expected: Vec<Value> = expected.as_array().cloned().unwrap_or_default();
    let (got, expected) = (lines(got), lines(&expected));
    if got != expected {
        eprintln!("GOT:\n{got}\nEXPECTED:\n{expected}\nEND");
    }
    assert!(got == expected, "the extension's events differ from the reference's (see stderr)");
}

fn entry_types(entries: &[Value]) -> Vec<String> {
    entries
        .iter()
        .map(|e| {
            let t = e["type"].as_str().unwrap_or_default();
            match t {
                "custom" | "custom_message" => format!("{t}:{}", e["customType"].as_str().unwrap_or_default()),
                "message" => format!("message:{}", e["message"]["role"].as_str().unwrap_or_default()),
                _ => t.to_owned(),
            }
        })
        .collect()
}

/// Writes the reference script's extra skill under `root/extra-skills`; returns that folder.
fn write_skill(root: &std::path::Path) -> String {
    let shout = root.join("extra-skills").join("shout");
    std::fs::create_dir_all(&shout).expect("skill dir");
    std::fs::write(shout.join("SKILL.md"), "---\nname: shout\ndescription: Shouts loudly.\n---\nSHOUT.\n")
        .expect("skill");
    root.join("extra-skills").display().to_string()
}

/// Binds with a UI, prompts once as the reference script does and checks the requests, the
/// entries and the system prompt against the fixture; returns the fixture's order.
async fn run_reference_scenario(h: &http_support::HttpSession) -> Value {
    let runner = h.session.extension_runner().expect("runner").clone();
    runner.set_ui(Arc::new(PickLast));
    h.session.bind_extensions(|_| {}).await;
    let expected = fixture();
    assert_eq!(
        h.session.system_prompt().contains("shout"),
        expected["systemPromptHasSkill"].as_bool().unwrap_or(false)
    );
    h.session.prompt("first").await.expect("prompt");
    h.session.wait_for_idle().await;
    let traces: Vec<Value> = h
        .server
        .headers
        .lock()
        .expect("headers lock")
        .iter()
        .map(|hs| hs.iter().find(|(k, _)| k == "x-trace").map_or(Value::Null, |(_, v)| json!(v)))
        .collect();
    let lasts: Vec<Value> = h
        .server
        .bodies()
        .iter()
        .map(|b| {
            let last = b["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
            let text = match &last["content"] {
                Value::String(s) => s.clone(),
                Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
                _ => String::new(),
            };
            json!(format!("{}:{text}", last["role"].as_str().unwrap_or_default()))
        })
        .collect();
    let requests: Vec<Value> =
        traces.into_iter().zip(lasts).map(|(trace, last)| json!({"trace": trace, "last": last})).collect();
    assert_eq!(Value::Array(requests), expected["requests"], "headers edited in place, the drafted message sent");
    let entries: Vec<Value> = entry_types(&h.entries()).into_iter().map(Value::String).collect();
    assert_eq!(Value::Array(entries), expected["entries"], "the committed drafts");
    assert!(h.errors.lock().expect("errors lock").is_empty(), "{:?}", h.errors.lock().expect("errors lock"));
    expected["order"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_new_events_reach_a_rust_extension_as_in_the_reference() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let skills = tempfile::tempdir().expect("tempdir");
    let skills_dir = write_skill(skills.path());
    let h = Setup {
        replies: vec![reply("ok1"), reply("ok2")],
        extensions: vec![recorder(log.clone(), skills_dir)],
        ..Default::default()
    }
    .start()
    .await;
    let expected = run_reference_scenario(&h).await;
    let order = log.lock().expect("log lock").clone();
    assert_same_order(&order, &expected);
}

/// The reference script's extension, unmodified but for writing its log to a file, in the
/// JavaScript host: the same events in the same order, its results applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_new_events_reach_a_typescript_extension_as_in_the_reference() {
    if !js_support::node_available() {
        return;
    }
    let recorder =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/extensions_events/recorder.ts");
    let h = Setup { replies: vec![reply("ok1"), reply("ok2")], extension_paths: vec![recorder], ..Default::default() }
        .start()
        .await;
    write_skill(h.cwd.parent().expect("temp root"));
    let expected = run_reference_scenario(&h).await;
    let text = std::fs::read_to_string(h.cwd.join("events-order.json")).expect("the extension wrote its log");
    let order: Vec<Value> = serde_json::from_str(&text).expect("log JSON");
    assert_same_order(&order, &expected);
}

/// A stdlib-only Python extension speaking the JSON-RPC protocol: it answers the new events with
/// results and reports, as `resources_discover`'s skill paths, every event it received before.
const PYTHON_EXTENSION: &str = r#"
import json, sys
seen = []
def send(m):
    m["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
EVENTS = ["provider_stream_event", "after_provider_response", "ui_prompt_start", "mcp_servers_change",
          "before_provider_headers", "cache_warming_decision", "turn_end", "resources_discover"]
def handle(m):
    if m["method"] == "initialize":
        return {"protocolVersion": 2, "events": EVENTS, "tools": [], "commands": [], "flags": []}
    p = m["params"]["payload"]
    t = p["type"]
    if t == "resources_discover":
        return {"skillPaths": seen}
    seen.append(t)
    if t == "provider_stream_event":
        seen.append("data=%s model=%s" % (json.dumps(p["data"]), p["model"]))
    if t == "before_provider_headers":
        h = dict(p["headers"]); h["gone"] = None; h["x-trace"] = "py"
        return {"headers": h}
    if t == "cache_warming_decision":
        return {"action": "stop"}
    if t == "turn_end":
        seen.append("continue=%s outcome=%s entries=%d" % (p["continue"], p["outcome"], len(p["entries"])))
        return {"entries": [{"type": "custom", "customType": "py", "data": {"n": 1}}], "continue": True}
    return None
for line in sys.stdin:
    m = json.loads(line)
    if "method" not in m: continue
    try:
        r = handle(m)
        if "id" in m: send({"id": m["id"], "result": r})
    except Exception as e:
        if "id" in m: send({"id": m["id"], "error": {"code": -32000, "message": str(e)}})
"#;

/// The new events over the JSON-RPC protocol: notifications arrive in order, and the answers of
/// `before_provider_headers` (headers edited, `null` deletes), `cache_warming_decision` and
/// `turn_end` (drafts and continuation) are applied.
#[tokio::test]
async fn the_new_events_reach_a_json_rpc_extension_with_their_results() {
    use pi_coding_agent::extensions::subprocess::SubprocessExtension;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("events.py");
    std::fs::write(&path, PYTHON_EXTENSION).expect("script");
    let ext: Arc<dyn Extension> = Arc::new(SubprocessExtension::new(path.to_string_lossy().as_ref()));
    let runner = ExtensionRunner::load(vec![ext], dir.path().to_string_lossy()).await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let errors: Arc<Mutex<Vec<ExtensionError>>> = Arc::default();
    let sink = errors.clone();
    let _listener = runner.on_error(move |e| sink.lock().expect("errors lock").push(e.clone()));
    let model = pi_ai::Model {
        id: "m1".into(),
        provider: "local".into(),
        api: "openai-completions".into(),
        ..Default::default()
    };

    runner.emit(NotifyEvent::provider_stream_event(json!({"k": 1}), &model)).await;
    runner.emit(NotifyEvent::after_provider_response(200, &[("x-a".into(), "b".into())])).await;
    runner.emit(NotifyEvent::ui_prompt(true, UiPromptKind::Select, Some("T"))).await;
    runner.emit_mcp_servers_change().await;
    let headers: ProviderHeaders =
        [("a".to_owned(), Some("1".to_owned())), ("gone".to_owned(), Some("x".to_owned()))].into_iter().collect();
    let headers = runner.emit_before_provider_headers(headers).await;
    assert_eq!(headers.get("a"), Some(&Some("1".to_owned())));
    assert_eq!(headers.get("gone"), Some(&None), "null deletes the header");
    assert_eq!(headers.get("x-trace"), Some(&Some("py".to_owned())));
    let decision = CacheWarmingDecisionEvent {
        warm_cost: 0.1,
        miss_cost: 1.0,
        continuation_probability: 0.5,
        action: CacheWarmingAction::Warm,
    };
    assert_eq!(runner.emit_cache_warming_decision(decision).await, CacheWarmingAction::Stop);
    let assistant = pi_ai::AssistantMessage::default();
    let turn_end = NotifyEvent::TurnEnd {
        turn_index: 0,
        message: assistant.into(),
        tool_results: Vec::new(),
        message_entry_id: Some("e1".into()),
        tool_result_entry_ids: Some(Vec::new()),
        boundary: None,
    };
    let outcome = runner
        .emit_boundary(turn_end, ActivityOutcome::Completed, |drafts| {
            Ok(BoundaryContextPreview { can_continue: !drafts.is_empty(), ..Default::default() })
        })
        .await;
    assert!(outcome.valid && outcome.continue_run);
    assert_eq!(outcome.entries, vec![BoundaryDraft::Custom { custom_type: "py".into(), data: Some(json!({"n": 1})) }]);
    assert!(outcome.context.can_continue, "the preview was rebuilt with the handler's drafts");

    let seen = runner.emit_resources_discover(&dir.path().to_string_lossy(), "startup").await;
    let seen: Vec<String> = seen.skill_paths.into_iter().map(|p| p.path).collect();
    assert_eq!(
        seen,
        [
            "provider_stream_event",
            "data={\"k\": 1} model=m1",
            "after_provider_response",
            "ui_prompt_start",
            "mcp_servers_change",
            "before_provider_headers",
            "cache_warming_decision",
            "turn_end",
            "continue=False outcome=completed entries=0",
        ]
    );
    assert!(errors.lock().expect("errors lock").is_empty(), "{:?}", errors.lock().expect("errors lock"));
}

/// `pi.registerMarkdownTransformer`: load order, chained, only on its message types (by default
/// user, assistant and thinking), a panicking or declining transformer keeps the Markdown, and a
/// second registration replaces the first.
#[tokio::test]
async fn markdown_transformers_chain_in_load_order_on_their_message_types() {
    let first = FnExtension::new("<md:1>", |pi| {
        pi.register_markdown_transformer(|_, _| Some("replaced".into()), None)?;
        pi.register_markdown_transformer(|md, _| Some(format!("{md}+1")), None)?;
        Ok(())
    });
    let second = FnExtension::new("<md:2>", |pi| {
        pi.register_markdown_transformer(
            |md, ctx| match ctx.message_type.as_str() {
                "custom" => Some(format!("{md}+2")),
                _ => panic!("only custom"),
            },
            Some(&["custom", "assistant"]),
        )?;
        Ok(())
    });
    let third = FnExtension::new("<md:3>", |pi| {
        pi.register_markdown_transformer(|_, ctx| ctx.is_streaming.then(|| "streaming".into()), Some(&["assistant"]))?;
        Ok(())
    });
    let runner = ExtensionRunner::load(
        vec![Arc::new(first) as Arc<dyn Extension>, Arc::new(second), Arc::new(third)],
        std::env::temp_dir().to_string_lossy(),
    )
    .await;
    let ctx = |t: &str, streaming: bool| MarkdownTransformContext {
        message_type: t.into(),
        is_streaming: streaming,
        available_width: 80,
        ..Default::default()
    };
    assert_eq!(runner.markdown_transformers().len(), 3);
    assert_eq!(runner.transform_markdown("x", &ctx("assistant", false)), "x+1", "a panic keeps the Markdown");
    assert_eq!(runner.transform_markdown("x", &ctx("assistant", true)), "streaming");
    assert_eq!(runner.transform_markdown("x", &ctx("custom", false)), "x+2");
    assert_eq!(runner.transform_markdown("x", &ctx("summary", false)), "x");
    assert_eq!(runner.transform_markdown("x", &ctx("user", false)), "x+1");
}

/// `ctx.modelRegistry`: the session's model and the catalog's, those it can use, lookups, and
/// the models of a provider an extension registered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_registry_of_the_context_knows_the_session_models() {
    let seen: Log = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let ext = Arc::new(FnExtension::new("<models>", move |pi| {
        pi.register_provider(
            "extra",
            json!({"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "none",
                "models": [{"id": "extra-model", "name": "Extra", "reasoning": false, "input": ["text"],
                    "contextWindow": 1000, "maxTokens": 100,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}),
        )?;
        let s = s.clone();
        pi.on_notify("agent_start", move |_, ctx| {
            let registry = ctx.model_registry();
            let all = registry.get_all();
            let local = registry.find("local", "smollm2-135m");
            push(
                &s,
                json!({
                    "local": local.as_ref().map(|m| m.id.clone()),
                    "localAuth": local.as_ref().is_some_and(|m| registry.has_configured_auth(m)),
                    "extra": registry.find("extra", "extra-model").map(|m| m.api),
                    "catalog": all.iter().any(|m| m.provider == "anthropic"),
                    "missing": registry.find("local", "nope").is_none(),
                }),
            );
            Box::pin(std::future::ready(Ok(None)))
        });
        Ok(())
    }));
    let h = Setup { extensions: vec![ext], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("hi").await.expect("prompt");
    let seen = seen.lock().expect("log lock").clone();
    assert_eq!(
        seen,
        vec![
            json!({"local": "smollm2-135m", "localAuth": true, "extra": "openai-completions", "catalog": true, "missing": true})
        ]
    );
}

/// The reference's `dynamic-resources` example, unmodified, in the JavaScript host: its
/// `resources_discover` skill reaches the system prompt, its prompt template the `/dynamic`
/// command, and the prompt sent expands it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dynamic_resources_example_adds_its_skill_and_template() {
    let anchor = std::env::var_os("PI_ANCHOR_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/pi-anchor")));
    let example =
        anchor.map(|a| a.join("node_modules/@earendil-works/pi-coding-agent/examples/extensions/dynamic-resources"));
    let Some(example) = example.filter(|e| e.is_dir()) else {
        eprintln!("skipped: the reference's examples are not installed (../shared/tools/anchor.sh path)");
        return;
    };
    if !js_support::node_available() {
        return;
    }
    let h = Setup { extension_paths: vec![example], ..Default::default() }.start().await;
    assert!(!h.session.system_prompt().contains("dynamic-resources"));
    h.session.bind_extensions(|_| {}).await;
    assert!(h.session.skills().iter().any(|s| s.name == "dynamic-resources"));
    assert!(h.session.system_prompt().contains("Example skill loaded from resources_discover"));
    assert!(h.session.prompt_templates().iter().any(|t| t.name == "dynamic"));
    h.session.prompt("/dynamic").await.expect("prompt");
    let sent = h.server.last().to_string();
    assert!(sent.contains("Summarize the current repository structure"), "{sent}");
    assert!(h.errors.lock().expect("errors lock").is_empty(), "{:?}", h.errors.lock().expect("errors lock"));
}
