//! One call from an agent dir to a working session (`SessionBuilder`), as the binary builds one:
//! models.json, settings and credentials, without borrowing anything from `cli`.

mod http_support;

use std::sync::Arc;

use http_support::{ScriptedServer, system_text, text_reply};
use pi_coding_agent::sdk::{CredentialSource, SessionBuilder, SessionSettings};
use pi_coding_agent::settings::SettingsManager;
use serde_json::json;

struct Fixed;

impl CredentialSource for Fixed {
    fn api_key(&self, provider: &str) -> Option<String> {
        (provider == "local").then(|| "from-the-source".to_owned())
    }
}

fn agent_dir(base_url: &str, with_key: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(dir.path().join("proj")).unwrap();
    let mut provider = json!({"baseUrl": base_url, "api": "openai-completions",
        "models": [{"id": "m1", "contextWindow": 8192, "maxTokens": 256}, {"id": "m2", "contextWindow": 8192, "maxTokens": 256}]});
    if with_key {
        provider["apiKey"] = json!("k");
    }
    std::fs::write(agent.join("models.json"), json!({"providers": {"local": provider}}).to_string()).unwrap();
    std::fs::write(
        agent.join("settings.json"),
        r#"{"defaultProvider":"local","defaultModel":"m2","steeringMode":"all"}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("proj/AGENTS.md"), "Project rule: be brief.").unwrap();
    dir
}

#[tokio::test]
async fn one_call_builds_a_session_from_an_agent_dir() {
    let server = ScriptedServer::start(vec![text_reply("hello")]);
    let dir = agent_dir(&server.base_url, true);
    let built = SessionBuilder::new(dir.path().join("proj"))
        .agent_dir(dir.path().join("agent"))
        .in_memory()
        .build()
        .await
        .unwrap();
    assert!(built.warnings.is_empty(), "{:?}", built.warnings);
    let session = built.session;
    assert_eq!(session.model().id, "m2", "the saved default model");
    assert_eq!(session.steering_mode(), pi_agent_core::QueueMode::All, "settings reach the agent");
    session.prompt("hi").await.unwrap();
    assert_eq!(session.get_last_assistant_text().as_deref(), Some("hello"));
    assert_eq!(server.count(), 1);
    assert!(system_text(&server.last()).contains("Project rule: be brief."), "the resource loader ran");
}

#[tokio::test]
async fn the_credential_source_is_one_pluggable_piece() {
    let server = ScriptedServer::start(vec![text_reply("keyed")]);
    let dir = agent_dir(&server.base_url, false);
    let build = |credentials: Option<Arc<dyn CredentialSource>>| {
        let mut b = SessionBuilder::new(dir.path().join("proj")).agent_dir(dir.path().join("agent")).in_memory();
        if let Some(c) = credentials {
            b = b.credentials(c);
        }
        b.build()
    };
    // Without credentials no model is available.
    assert!(matches!(build(None).await, Err(pi_coding_agent::sdk::SdkError::NoModel)));
    let built = build(Some(Arc::new(Fixed))).await.unwrap();
    built.session.prompt("hi").await.unwrap();
    assert_eq!(built.session.get_last_assistant_text().as_deref(), Some("keyed"));
}

#[tokio::test]
async fn no_settings_and_default_settings_mean_the_same() {
    let server = ScriptedServer::start(vec![]);
    let dir = agent_dir(&server.base_url, true);
    let built = SessionBuilder::new(dir.path().join("proj"))
        .agent_dir(dir.path().join("agent"))
        .in_memory()
        .options(|o| o.settings_manager = Some(Arc::new(SettingsManager::in_memory(json!({})))))
        .build()
        .await
        .unwrap();
    assert_eq!(built.session.settings(), SessionSettings::default());
    assert!(built.session.settings().compaction.enabled && built.session.settings().retry.enabled);
}

/// pi's `createAgentSession`: without an option or a `defaultThinkingLevel` setting the level is
/// "medium", clamped to the model ("off" for a model without reasoning).
#[tokio::test]
async fn the_thinking_level_defaults_to_medium_clamped_to_the_model() {
    let server = ScriptedServer::start(Vec::new());
    let dir = agent_dir(&server.base_url, true);
    let models = json!({"providers": {"local": {"baseUrl": server.base_url, "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "m1", "contextWindow": 8192, "maxTokens": 256},
                   {"id": "m2", "reasoning": true, "contextWindow": 8192, "maxTokens": 256}]}}});
    std::fs::write(dir.path().join("agent/models.json"), models.to_string()).unwrap();
    let build = |model: &'static str| {
        SessionBuilder::new(dir.path().join("proj"))
            .agent_dir(dir.path().join("agent"))
            .model("local", model)
            .in_memory()
    };
    let reasoning = build("m2").build().await.unwrap().session;
    assert_eq!(reasoning.thinking_level(), pi_ai::ThinkingLevel::Medium);
    let plain = build("m1").build().await.unwrap().session;
    assert_eq!(plain.thinking_level(), pi_ai::ThinkingLevel::Off);
}
