//! The prompt cache warmer against the reference pi 1.6.0 (issue 15), over real HTTP on 127.0.0.1.
//!
//! `scripts/fixtures/cache_warm_bodies.mjs` ran each scenario through the reference SDK
//! (anthropic-messages, a models.json model with Anthropic's prices and an 11-second short cache
//! lifetime, so the refresh is due 1 s after the request) and recorded every request body, the
//! `cache_warming_decision` events an extension saw, the usage entries and the warmer's status
//! (tests/fixtures/cache_warm/<scenario>.json). Here the same scenarios run through our
//! `create_agent_session` with a manual clock: time moves only when the test advances it, and the
//! test then waits for the refresh to arrive (no timed assertion).

mod http_support;
mod js_support;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use http_support::{HttpSession, Setup};
use pi_coding_agent::extensions::{
    CacheWarmingAction, CacheWarmingDecisionEvent, CacheWarmingDecisionResult, Extension, FnExtension,
};
use pi_coding_agent::sdk::cache_warmer::{CacheWarmingClock, CacheWarmingState, format_cache_warming_status};
use pi_coding_agent::settings::CacheWarming;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::watch;

/// A clock that moves only when the test says so.
struct ManualClock(watch::Sender<u64>);

impl ManualClock {
    fn new(start: u64) -> Arc<Self> {
        Arc::new(ManualClock(watch::channel(start).0))
    }
    fn advance(&self, ms: u64) {
        self.0.send_modify(|now| *now += ms);
    }
}

impl CacheWarmingClock for ManualClock {
    fn now(&self) -> u64 {
        *self.0.borrow()
    }
    fn sleep_until(&self, at_ms: u64) -> BoxFuture<'static, ()> {
        let mut rx = self.0.subscribe();
        Box::pin(async move {
            let _ = rx.wait_for(|now| *now >= at_ms).await;
        })
    }
}

const START: u64 = 1_700_000_000_000;

fn reference(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/cache_warm/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn event(kind: &str, data: Value) -> String {
    let mut data = data;
    if let Value::Object(o) = &mut data {
        o.insert("type".into(), json!(kind));
    }
    format!("event: {kind}\ndata: {data}\n\n")
}

/// An anthropic-messages text reply reporting `input` fresh and `cache_read` cached prompt tokens.
fn anthropic_reply(text: &str, input: u64, cache_read: u64) -> String {
    let usage = json!({"input_tokens": input, "cache_read_input_tokens": cache_read, "output_tokens": 0});
    let start = json!({"message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "scripted",
        "content": [], "stop_reason": null, "usage": usage}});
    event("message_start", start)
        + &event("content_block_start", json!({"index": 0, "content_block": {"type": "text", "text": ""}}))
        + &event("content_block_delta", json!({"index": 0, "delta": {"type": "text_delta", "text": text}}))
        + &event("content_block_stop", json!({"index": 0}))
        + &event("message_delta", json!({"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}))
        + &event("message_stop", json!({}))
}

/// The scenarios' model: Anthropic's Sonnet prices and a `ttl_s` short cache lifetime.
fn model_fields(ttl_s: u64) -> Value {
    json!({"contextWindow": 2_000_000, "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
        "promptCache": {"short": ttl_s, "long": 3600}})
}

type Decisions = Arc<Mutex<Vec<Value>>>;

/// An extension recording every `cache_warming_decision` and answering `answer`.
fn decider(answer: Option<CacheWarmingAction>, sink: Decisions) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:warming>", move |pi| {
        let sink = sink.clone();
        pi.on_sync::<CacheWarmingDecisionEvent>(move |event, _ctx| {
            let mut seen = serde_json::to_value(&*event)?;
            if let Value::Object(o) = &mut seen {
                o.insert("type".into(), json!("cache_warming_decision"));
            }
            sink.lock().expect("lock").push(seen);
            Ok(answer.map(|a| CacheWarmingDecisionResult { action: Some(a) }))
        });
        Ok(())
    }))
}

async fn start(
    reply: String,
    ttl_s: u64,
    extensions: Vec<Arc<dyn Extension>>,
    clock: &Arc<ManualClock>,
) -> HttpSession {
    let h = Setup {
        api: Some("anthropic-messages"),
        replies: vec![reply, anthropic_reply("warm", 3, 1_000_000)],
        extensions,
        model_fields: Some(model_fields(ttl_s)),
        ..Default::default()
    }
    .start()
    .await;
    h.session.cache_warmer().set_clock(clock.clone());
    h.session.bind_extensions(|_| {}).await;
    h
}

/// The usage entries without their ids and timestamps (as the fixtures hold them).
fn usage_entries(h: &HttpSession) -> Vec<Value> {
    h.entries()
        .into_iter()
        .filter(|e| e["type"] == "usage")
        .map(|mut e| {
            if let Value::Object(o) = &mut e {
                for k in ["id", "parentId", "timestamp"] {
                    o.remove(k);
                }
            }
            e
        })
        .collect()
}

fn status_json(h: &HttpSession) -> Value {
    let s = h.session.cache_warming_status();
    let mut v = json!({"state": s.state, "decision": s.decision, "extensionOverride": s.extension_override});
    if let Some(reason) = s.reason {
        v["reason"] = json!(reason);
    }
    v
}

/// Runs one recorded scenario: prompt, move the clock to the refresh, wait for the warmer to act,
/// then compare everything with the reference's record.
async fn scenario(name: &str, reply: String, answer: Option<CacheWarmingAction>) -> HttpSession {
    let expected = reference(name);
    let clock = ManualClock::new(START);
    let decisions = Decisions::default();
    let h = start(reply, 11, vec![decider(answer, decisions.clone())], &clock).await;
    let before = format_cache_warming_status(&h.session.cache_warming_status(), START);
    assert_eq!(before, expected["statusBefore"], "{name}: status before the first request");
    h.session.prompt("hello").await.expect("prompt");
    assert_eq!(status_json(&h), expected["statusAfterPrompt"], "{name}: status after the prompt");
    // The refresh is due 1 s after the request (90 % of 11 s, keeping 10 s of margin).
    clock.advance(1_000);
    let want_requests = expected["requests"].as_array().map_or(0, Vec::len);
    let want_usage = expected["usageEntries"].as_array().map_or(0, Vec::len);
    h.wait_until("the warmer's decision", |h| {
        !decisions.lock().expect("lock").is_empty()
            && h.server.bodies().len() == want_requests
            && usage_entries(h).len() == want_usage
            && h.session.cache_warming_status().state != CacheWarmingState::Refreshing
    })
    .await;
    let bodies: Vec<Value> = h.server.bodies().iter().map(|b| h.mask(b)).collect();
    assert_eq!(Value::Array(bodies), expected["requests"], "{name}: request bodies");
    assert_eq!(json!(*decisions.lock().expect("lock")), expected["decisions"], "{name}: decision events");
    assert_eq!(json!(usage_entries(&h)), expected["usageEntries"], "{name}: usage entries");
    assert_eq!(status_json(&h), expected["statusAfterRefresh"], "{name}: status after the refresh");
    h
}

/// A 1M-token prompt is worth keeping warm while idle: pi's own decision warms, the refresh is the
/// request again with `max_tokens: 1`, and its usage is a `cache_warm` entry.
#[tokio::test]
async fn idle_warm_matches_the_reference() {
    let h = scenario("idle_warm", anthropic_reply("hi", 1_000_000, 0), None).await;
    let line = format_cache_warming_status(&h.session.cache_warming_status(), START + 1_000);
    assert_eq!(line, "Decision in 1s (15% continuation probability, expected savings $0.217 >= $0.050 -> warm)");
    h.session.dispose().await;
}

/// A 10-token prompt is not worth it, but the extension overrides "stop" with "warm": the usage
/// entry carries the note "extension override".
#[tokio::test]
async fn extension_override_warms() {
    let h = scenario("extension_override_warm", anthropic_reply("hi", 10, 0), Some(CacheWarmingAction::Warm)).await;
    h.session.dispose().await;
}

/// The extension stops warming a prompt pi would warm: no refresh, "stopped by extension".
#[tokio::test]
async fn extension_stop_is_reported() {
    let h = scenario("extension_stop", anthropic_reply("hi", 1_000_000, 0), Some(CacheWarmingAction::Stop)).await;
    let line = format_cache_warming_status(&h.session.cache_warming_status(), START + 1_000);
    assert_eq!(line, "Stopped (extension override, 15% continuation probability, expected savings $0.217 >= $0.050)");
    h.session.dispose().await;
}

/// Idle warming stops at the 30-minute limit: with a 10-minute lifetime the refreshes are due every
/// 9 minutes, so three are sent and the fourth would pass the limit.
#[tokio::test]
async fn idle_warming_stops_after_thirty_minutes() {
    let clock = ManualClock::new(START);
    let h = start(anthropic_reply("hi", 1_000_000, 0), 600, Vec::new(), &clock).await;
    h.session.prompt("hello").await.expect("prompt");
    for sent in 2..=4 {
        clock.advance(540_000);
        h.wait_until("a refresh", |h| usage_entries(h).len() == sent - 1 && h.server.bodies().len() == sent).await;
    }
    h.wait_until("the stop", |h| h.session.cache_warming_status().state == CacheWarmingState::Inactive).await;
    assert_eq!(h.session.cache_warming_status().reason.as_deref(), Some("30-minute idle safety limit reached"));
    assert_eq!(h.server.bodies().len(), 4);
    h.session.dispose().await;
}

/// A refresh whose timer fires too late (the machine slept past half of the remaining margin) is
/// not sent: it would be a full-price cache write.
#[tokio::test]
async fn late_refresh_is_skipped() {
    let clock = ManualClock::new(START);
    let h = start(anthropic_reply("hi", 1_000_000, 0), 11, Vec::new(), &clock).await;
    h.session.prompt("hello").await.expect("prompt");
    clock.advance(1_000 + 5_001);
    h.wait_until("the stop", |h| h.session.cache_warming_status().state == CacheWarmingState::Inactive).await;
    assert_eq!(h.session.cache_warming_status().reason.as_deref(), Some("cache refresh deadline missed"));
    assert_eq!(h.server.bodies().len(), 1);
    h.session.dispose().await;
}

/// `streaming` mode stops when the run settles; `off` never starts; changing the mode stops an
/// active run.
#[tokio::test]
async fn modes_stop_warming() {
    let clock = ManualClock::new(START);
    let h = start(anthropic_reply("hi", 1_000_000, 0), 11, Vec::new(), &clock).await;
    h.session.set_cache_warming_mode(CacheWarming::Streaming).expect("mode");
    h.session.prompt("hello").await.expect("prompt");
    assert_eq!(h.session.cache_warming_status().reason.as_deref(), Some("agent run settled"));
    h.session.set_cache_warming_mode(CacheWarming::Off).expect("mode");
    assert_eq!(h.session.cache_warming_status().reason.as_deref(), Some("cache warming disabled"));
    h.session.set_cache_warming_mode(CacheWarming::Idle).expect("mode");
    h.session.prompt("again").await.expect("prompt");
    assert_eq!(h.session.cache_warming_status().state, CacheWarmingState::Scheduled);
    h.session.set_cache_warming_mode(CacheWarming::Off).expect("mode");
    clock.advance(1_000);
    assert_eq!(h.session.cache_warming_status().reason.as_deref(), Some("cache warming disabled"));
    assert_eq!(h.server.bodies().len(), 2, "no refresh was sent");
    h.session.dispose().await;
}

/// A model without a cache lifetime is never warmed.
#[tokio::test]
async fn model_without_lifetime_is_not_warmed() {
    let clock = ManualClock::new(START);
    let h = Setup { api: Some("anthropic-messages"), ..Default::default() }.start().await;
    h.session.cache_warmer().set_clock(clock.clone());
    h.session.prompt("hello").await.expect("prompt");
    let status = h.session.cache_warming_status();
    assert_eq!(status.reason.as_deref(), Some("cache lifetime unavailable"));
    assert_eq!(format_cache_warming_status(&status, START), "Inactive (cache lifetime unavailable)");
    h.session.dispose().await;
}

/// A JavaScript extension's `cache_warming_decision` handler overrides the decision through the
/// Node host, as a Rust one does.
#[tokio::test]
async fn node_extension_overrides_the_decision() {
    if !js_support::node_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("warming.mjs");
    let source = "export default function (pi) {\n  pi.on(\"cache_warming_decision\", (event) => ({ action: event.action === \"stop\" ? \"warm\" : \"stop\" }));\n}\n";
    std::fs::write(&path, source).expect("extension");
    let clock = ManualClock::new(START);
    let h = Setup {
        api: Some("anthropic-messages"),
        replies: vec![anthropic_reply("hi", 10, 0), anthropic_reply("warm", 3, 1_000_000)],
        extension_paths: vec![path],
        model_fields: Some(model_fields(11)),
        ..Default::default()
    }
    .start()
    .await;
    h.session.cache_warmer().set_clock(clock.clone());
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("hello").await.expect("prompt");
    clock.advance(1_000);
    h.wait_until("the refresh", |h| usage_entries(h).len() == 1).await;
    assert_eq!(usage_entries(&h)[0]["note"], "extension override");
    assert_eq!(h.error_pairs(), Vec::<(String, String)>::new());
    h.session.dispose().await;
}
