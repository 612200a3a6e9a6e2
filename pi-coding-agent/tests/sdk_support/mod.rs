//! Shared harness of the `AgentSession` tests: a faux model that records requests, inline
//! extensions, and a session (in memory or in a temp dir) with its session-level records.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use pi_ai::providers::faux::{FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text};
use pi_coding_agent::compaction::CompactionSettings;
use pi_coding_agent::extensions::{Extension, ExtensionApi, FnExtension};
use pi_coding_agent::sdk::{
    AgentSession, CreateAgentSessionOptions, DefaultResourceLoader, RetrySettings, SessionEvent, SessionSettings,
    create_agent_session,
};
use pi_coding_agent::session::{NewSessionOptions, SessionManager};
use serde_json::Value;

pub type Log = Arc<Mutex<Vec<String>>>;
pub type Seen = Arc<Mutex<Vec<Value>>>;

/// A reply step that records the request's messages and answers with `reply`.
pub fn step(seen: &Seen, reply: impl Fn() -> pi_ai::AssistantMessage + Send + Sync + 'static) -> FauxStep {
    let seen = seen.clone();
    let reply = Arc::new(reply);
    FauxStep::factory(move |req| {
        let seen = seen.clone();
        let reply = reply.clone();
        async move {
            seen.lock().unwrap().push(serde_json::to_value(req.context.messages()).unwrap());
            Ok(reply())
        }
    })
}

pub fn text(t: &'static str) -> impl Fn() -> pi_ai::AssistantMessage + Send + Sync + 'static {
    move || faux_assistant_message(vec![faux_text(t)], Default::default())
}

pub fn ext(setup: impl Fn(&ExtensionApi) + Send + Sync + 'static) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:test>", move |pi| {
        setup(pi);
        Ok(())
    }))
}

pub struct Harness {
    pub session: AgentSession,
    pub faux: FauxProvider,
    pub seen: Seen,
    pub records: Seen,
    pub dir: tempfile::TempDir,
}

pub async fn harness(
    extensions: Vec<Arc<dyn Extension>>,
    settings: Option<SessionSettings>,
    persisted: bool,
) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxProvider::new(FauxOptions::default());
    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.home_dir = Some(dir.path().join("home")); // not the real ~/.agents/skills
    loader.reload().await.unwrap();
    let sm = if persisted {
        SessionManager::create(dir.path(), Some(&dir.path().join("sessions")), NewSessionOptions::default()).unwrap()
    } else {
        SessionManager::in_memory(dir.path())
    };
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(faux.model()),
        resource_loader: Some(loader),
        session_manager: Some(sm),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux.clone()))),
        extensions,
        settings,
        ..Default::default()
    })
    .await
    .unwrap();
    let session = created.session;
    session.bind_extensions(|_| {}).await;
    let records: Seen = Arc::new(Mutex::new(Vec::new()));
    let sink = records.clone();
    std::mem::forget(session.subscribe(move |e| {
        // The session-level records (what was `SessionEvent::Session` before events were typed).
        let record = match e {
            SessionEvent::Agent(_)
            | SessionEvent::AgentEnd { .. }
            | SessionEvent::AgentSettled { .. }
            | SessionEvent::EntryPersisted { .. } => None,
            other => pi_coding_agent::sdk::wire::session_record(other),
        };
        if let Some(v) = record {
            sink.lock().unwrap().push(v);
        }
    }));
    Harness { session, faux, seen: Arc::new(Mutex::new(Vec::new())), records, dir }
}

impl Harness {
    pub fn reply(&self, replies: Vec<FauxStep>) {
        self.faux.set_responses(replies);
    }
    pub fn entry_types(&self) -> Vec<String> {
        self.session
            .branch(None)
            .iter()
            .map(|e| {
                let v = serde_json::to_value(e).unwrap();
                match v["type"].as_str().unwrap() {
                    "message" => format!("message:{}", v["message"]["role"].as_str().unwrap()),
                    other => other.to_owned(),
                }
            })
            .collect()
    }
    pub fn record_types(&self) -> Vec<String> {
        self.records.lock().unwrap().iter().map(|r| r["type"].as_str().unwrap().to_owned()).collect()
    }
}

/// The text of the last user-role message of a recorded request (custom messages reach the
/// model as user messages).
pub fn user_texts(request: &Value) -> Vec<String> {
    request
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(a) => a.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join(""),
            _ => String::new(),
        })
        .collect()
}

pub fn small_settings() -> SessionSettings {
    SessionSettings {
        compaction: CompactionSettings { enabled: false, reserve_tokens: 16384, keep_recent_tokens: 1 },
        retry: RetrySettings { enabled: true, max_retries: 2, base_delay_ms: 1, max_delay_ms: 60_000 },
    }
}

/// A model that writes `SUMMARY` for summary requests and plays `replies` for the others.
pub fn summarizing_model(h: &Harness, replies: Vec<pi_ai::AssistantMessage>) {
    let queue = Arc::new(Mutex::new(std::collections::VecDeque::from(replies)));
    let steps = (0..12)
        .map(|_| {
            let queue = queue.clone();
            let seen = h.seen.clone();
            FauxStep::factory(move |req| {
                let queue = queue.clone();
                let seen = seen.clone();
                async move {
                    let request = serde_json::to_value(req.context.messages()).unwrap();
                    seen.lock().unwrap().push(request.clone());
                    let summary = |t: &String| t.contains("<conversation>") || t.starts_with("# Conversation\n");
                    if user_texts(&request).iter().any(summary) {
                        return Ok(faux_assistant_message(vec![faux_text("SUMMARY")], Default::default()));
                    }
                    queue.lock().unwrap().pop_front().ok_or_else(|| "no reply left".to_owned())
                }
            })
        })
        .collect();
    h.reply(steps);
}
