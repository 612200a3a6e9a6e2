//! `ctx.session_manager()`, `ctx.signal()` and `new_session_with_setup` for in-process Rust
//! extensions, compared with what pi 1.6.0 shows an extension in the same events
//! (`tests/fixtures/extensions_ctx/observations.json`, recorded by
//! `scripts/fixtures/extension_ctx.mjs`); and `pi.events` as one bus for the Rust and JavaScript
//! extensions of a session.

mod http_support;
mod js_support;

use std::sync::{Arc, Mutex};

use http_support::{Setup, text_reply, tool_reply};
use js_support::{fixture, node_available};
use pi_coding_agent::extensions::{ExtensionApi, ExtensionContext, FnExtension, ToolCallEvent, ToolCallResult};
use pi_coding_agent::session::SessionEntry;
use serde_json::{Value, json};

type Log = Arc<Mutex<Vec<Value>>>;

/// An entry as the fixture names it (`message:<role>`, `custom:<type>`, or its type).
fn kind(entry: &SessionEntry) -> String {
    let v = serde_json::to_value(entry).expect("entry serializes");
    match v["type"].as_str().unwrap_or_default() {
        "message" => format!("message:{}", v["message"]["role"].as_str().unwrap_or_default()),
        t @ ("custom" | "custom_message") => format!("{t}:{}", v["customType"].as_str().unwrap_or_default()),
        t => t.to_owned(),
    }
}

/// What the fixture records as `view` (the fields compared) and `signal`.
fn observe(what: &str, ctx: &ExtensionContext) -> Value {
    let sm = ctx.session_manager();
    let entries = sm.get_entries();
    let leaf = sm.get_leaf_id();
    let header = sm.get_header().expect("a header");
    let projection = sm.build_session_projection().expect("a projection");
    let first_user = entries.iter().find(|e| kind(e) == "message:user");
    json!({
        "what": what,
        "view": {
            "entries": entries.iter().map(kind).collect::<Vec<_>>(),
            "branch": sm.get_branch(None).iter().map(kind).collect::<Vec<_>>(),
            "leaf": sm.get_leaf_entry().as_ref().map(kind),
            "leafIsLast": leaf.as_deref() == entries.last().map(SessionEntry::id),
            "entryById": leaf.as_deref().and_then(|id| sm.get_entry(id)).as_ref().map(kind),
            "sameId": header.id == sm.get_session_id().unwrap_or_default(),
            "cwd": sm.get_cwd().as_deref() == Some(ctx.cwd()),
            "file": sm.get_session_file().is_some(),
            "name": sm.get_session_name(),
            "label": first_user.and_then(|e| sm.get_label(e.id())),
            "treeRoots": sm.get_tree().len(),
            "context": sm.build_context_entries().iter().map(kind).collect::<Vec<_>>(),
            "projection": projection.messages.iter().map(|m| m.role().to_owned()).collect::<Vec<_>>(),
        },
        "signal": ctx.signal().map(|s| json!({"aborted": s.is_cancelled()})),
    })
}

/// The fixture's `probe` tool (its `mode: "abort"` call is aborted by the `tool_call` handler).
struct Probe(Value);

#[async_trait::async_trait]
impl pi_agent_core::AgentTool for Probe {
    fn name(&self) -> &str {
        "probe"
    }
    fn description(&self) -> &str {
        "Looks at the extension context."
    }
    fn parameters(&self) -> &Value {
        &self.0
    }
    async fn execute(
        &self,
        _: &str,
        _: serde_json::Map<String, Value>,
        _: pi_agent_core::ToolContext,
    ) -> Result<pi_agent_core::AgentToolResult, pi_agent_core::ToolError> {
        Ok(pi_agent_core::AgentToolResult::text("probed"))
    }
}

fn viewer(log: Log) -> FnExtension {
    FnExtension::new("<inline:viewer>", move |pi: &ExtensionApi| {
        let schema = json!({"type": "object", "properties": {"mode": {"type": "string"}}});
        pi.register_tool(Arc::new(Probe(schema)) as Arc<dyn pi_agent_core::AgentTool>)?;
        for event in ["session_start", "turn_start", "turn_end", "agent_end"] {
            let log = log.clone();
            pi.on_notify(event, move |e, ctx| {
                log.lock().unwrap().push(observe(e.kind(), ctx));
                Box::pin(async { Ok(None) })
            });
        }
        let calls = log.clone();
        pi.on::<ToolCallEvent>(move |event, ctx| {
            let log = calls.clone();
            log.lock().unwrap().push(observe("tool_call", ctx));
            let abort = event.input.get("mode").and_then(Value::as_str) == Some("abort");
            let signal = ctx.signal();
            let ctx = ctx.clone();
            Box::pin(async move {
                if !abort {
                    return Ok(None);
                }
                let Some(signal) = signal else {
                    log.lock().unwrap().push(json!({"what": "abort", "signal": null}));
                    return Ok(None);
                };
                ctx.abort();
                signal.cancelled().await;
                log.lock().unwrap().push(json!({"what": "abort", "signal": {"aborted": signal.is_cancelled()}}));
                Ok(Some(ToolCallResult {
                    block: true,
                    reason: Some("aborted by the extension".into()),
                    ..Default::default()
                }))
            })
        });
        let setups = log.clone();
        pi.register_command("newsetup", None, move |_, ctx| {
            let log = setups.clone();
            Box::pin(async move {
                let cancelled = ctx
                    .new_session_with_setup(None, |sm| {
                        let custom = sm.append_custom_entry("seeded", Some(json!({"n": 1})))?;
                        let user = sm.append_message(serde_json::from_value(
                            json!({"role": "user", "content": [{"type": "text", "text": "seeded"}], "timestamp": 1}),
                        )?)?;
                        sm.append_label_change(&user, Some("seed"))?;
                        let _ = custom;
                        Ok(())
                    })
                    .await?;
                log.lock().unwrap().push(json!({"what": "newsetup", "result": {"cancelled": cancelled}}));
                Ok(())
            })
        })?;
        Ok(())
    })
}

/// The reference's observations of the events `viewer` handles, with the compared fields.
fn reference() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/extensions_ctx/observations.json");
    let all: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
    let wanted = ["session_start", "turn_start", "turn_end", "agent_end", "tool_call", "abort", "newsetup"];
    all.into_iter()
        .filter(|o| wanted.contains(&o["what"].as_str().unwrap_or_default()))
        .map(|o| {
            let Some(view) = o.get("view") else { return o };
            let compared = json!({
                "entries": view["entries"], "branch": view["branch"], "leaf": view["leaf"], "leafIsLast": view["leafIsLast"],
                "entryById": view["entryById"], "context": view["context"], "projection": view["projection"],
                "label": view["label"], "name": view["name"],
            });
            json!({"what": o["what"], "view": compared, "signal": o["signal"]})
        })
        .collect()
}

fn compared(o: &Value) -> Value {
    let Some(view) = o.get("view") else { return o.clone() };
    let keep = ["entries", "branch", "leaf", "leafIsLast", "entryById", "context", "projection", "label", "name"];
    let view: serde_json::Map<String, Value> = keep.iter().map(|k| ((*k).to_owned(), view[*k].clone())).collect();
    json!({"what": o["what"], "view": view, "signal": o["signal"]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_extension_sees_the_session_and_the_signal_as_pi_shows_them() {
    let log: Log = Arc::default();
    let h = Setup {
        replies: vec![
            tool_reply("call_1", "probe", json!({})),
            text_reply("done"),
            tool_reply("call_2", "probe", json!({"mode": "abort"})),
        ],
        extensions: vec![Arc::new(viewer(log.clone()))],
        files: vec![("AGENTS.md", "Be brief.\n")],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("first prompt");
    h.session.prompt("abort please").await.expect("aborted prompt");
    h.session.prompt("/newsetup").await.expect("/newsetup");
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());

    let got: Vec<Value> = log.lock().unwrap().iter().map(compared).collect();
    let expected = reference();
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "observation {i} ({}) differs from the reference", e["what"]);
    }
    assert_eq!(got.len(), expected.len(), "{:#?}", got.iter().map(|o| &o["what"]).collect::<Vec<_>>());
    // Outside a run and in session_start: no signal; the tree has one root.
    assert!(log.lock().unwrap().iter().all(|o| o["view"].is_null() || o["view"]["treeRoots"] == 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_events_is_one_bus_for_rust_and_javascript_extensions() {
    if !node_available() {
        return;
    }
    let heard: Log = Arc::default();
    let sink = heard.clone();
    let rust = FnExtension::new("<inline:rust-bus>", move |pi: &ExtensionApi| {
        for channel in ["pong", "from-js"] {
            let sink = sink.clone();
            pi.events().on(channel, move |data| {
                sink.lock().unwrap().push(json!({"channel": channel, "data": data}));
                Ok(())
            });
        }
        let events = pi.events();
        pi.register_command("rs-ping", None, move |_, _| {
            events.emit("ping", json!({"n": 1}));
            events.emit("note", json!({"x": 1}));
            Box::pin(async { Ok(()) })
        })?;
        Ok(())
    });
    let h = Setup {
        extensions: vec![Arc::new(rust)],
        extension_paths: vec![fixture("bus-bridge.ts")],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("/rs-ping").await.expect("/rs-ping");
    h.wait_until("the pong", |_| !heard.lock().unwrap().is_empty()).await;
    h.wait_until("the note entry", |h| h.entry_types().iter().any(|t| t == "custom:js-heard")).await;
    h.session.prompt("/js-emit").await.expect("/js-emit");
    h.wait_until("the JavaScript emit", |_| heard.lock().unwrap().len() == 2).await;
    assert_eq!(
        *heard.lock().unwrap(),
        vec![
            json!({"channel": "pong", "data": {"n": 2, "from": "js"}}),
            json!({"channel": "from-js", "data": {"hello": "rust"}}),
        ]
    );
    let entries = h.entries();
    let note = entries.iter().find(|e| e["customType"] == "js-heard").expect("the note");
    assert_eq!(note["data"], json!({"x": 1}));
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}
