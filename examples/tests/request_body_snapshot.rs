//! Snapshot-testing a conversion, as SDK users do: the exact request body the provider would
//! receive for a transcript with custom roles (`custom` and `bashExecution`), built offline with
//! `AgentSession::request_body` — after `transform_context`, `convert_to_llm` and
//! `normalize_context` — and compared with `insta`. Run: `cargo test -p pi-examples`.

use std::sync::Arc;

use pi_coding_agent::messages::CodingAgentMessage;
use pi_coding_agent::sdk::{CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;
use pi_coding_agent::settings::SettingsManager;
use serde_json::json;

#[tokio::test]
async fn a_custom_role_reaches_the_provider_as_a_user_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.home_dir = Some(dir.path().join("home"));
    loader.reload().await.expect("resources");
    let model = pi_ai::models::get_model("openai", "gpt-4o-mini").expect("catalog model").clone();
    let session = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(model),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir.path())),
        settings_manager: Some(Arc::new(SettingsManager::in_memory(json!({})))),
        tools: Some(vec!["read".into()]),
        ..Default::default()
    })
    .await
    .expect("session")
    .session;

    let transcript: Vec<CodingAgentMessage> = serde_json::from_value(json!([
        {"role": "system", "content": "You are terse.", "timestamp": 1},
        {"role": "user", "content": "What did the build say?", "timestamp": 2},
        {"role": "bashExecution", "command": "cargo build", "output": "error[E0425]: cannot find value `x`",
         "exitCode": 101, "cancelled": false, "truncated": false, "timestamp": 3},
        {"role": "custom", "customType": "audit", "content": "Audit: the build failed once today.",
         "display": false, "timestamp": 4}
    ]))
    .expect("pi's JSON of the roles");
    let body = session.request_body(Some(transcript)).await.expect("offline request body");
    // The cache key is the session id, new for every session.
    insta::assert_json_snapshot!(body, {".prompt_cache_key" => "[session id]"});
}
