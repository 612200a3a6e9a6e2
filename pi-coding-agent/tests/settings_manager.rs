//! `SettingsManager` against the reference pi 1.6.0: the same files give the same merged settings
//! and typed values, and the same changes write the same bytes (`tests/fixtures/settings/`).

use std::sync::Arc;

use pi_agent_core::QueueMode;
use pi_ai::json::to_js_json_pretty;
use pi_coding_agent::settings::{SettingsManager, SettingsScope};
use serde_json::{Value, json};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/settings");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).unwrap()
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(proj.join(".pi")).unwrap();
    std::fs::write(agent.join("settings.json"), fixture("global.json")).unwrap();
    std::fs::write(proj.join(".pi/settings.json"), fixture("project.json")).unwrap();
    (dir, agent, proj)
}

#[test]
fn reads_and_writes_as_the_reference() {
    let reference: Value = serde_json::from_str(&fixture("reference.json")).unwrap();
    let (_dir, agent, proj) = setup();
    let sm = SettingsManager::create(&proj, &agent);
    assert!(sm.drain_errors().is_empty());
    let s = sm.settings();
    // JavaScript reads `3.0` as the number 3: compare as JavaScript writes them.
    assert_eq!(to_js_json_pretty(&s.to_value()), to_js_json_pretty(&reference["merged"]));
    assert_eq!(s.steering_mode(), QueueMode::All);
    assert_eq!(s.follow_up_mode(), QueueMode::OneAtATime);
    assert_eq!(json!(s.default_tools()), reference["tools"]);
    let c = s.compaction_settings_for(None).unwrap();
    assert_eq!(
        json!({"enabled": c.enabled, "reserveTokens": c.reserve_tokens, "keepRecentTokens": c.keep_recent_tokens}),
        reference["compaction"]
    );
    assert_eq!(
        json!({"enabled": s.retry_enabled(), "maxRetries": s.retry_max_retries(),
               "baseDelayMs": s.retry_base_delay_ms(), "maxAgentDelayMs": s.retry_max_agent_delay_ms()}),
        reference["retry"]
    );
    assert_eq!(s.provider_retry().max_retry_delay_ms, reference["provider"]["maxRetryDelayMs"].as_u64().unwrap());
    assert!(!s.quiet_startup());

    sm.set_compaction_enabled(false).unwrap();
    sm.set_default_model_and_provider("local", "m1").unwrap();
    sm.set_steering_mode(QueueMode::OneAtATime).unwrap();
    let written = std::fs::read_to_string(agent.join("settings.json")).unwrap();
    assert_eq!(written, reference["written"].as_str().unwrap());
    assert!(!agent.join("settings.json.lock").exists(), "the lock is released");
    // The project file is never touched by global changes.
    assert_eq!(std::fs::read_to_string(proj.join(".pi/settings.json")).unwrap(), fixture("project.json"));
}

#[test]
fn writes_keep_keys_another_process_added_meanwhile() {
    let (_dir, agent, proj) = setup();
    let sm = SettingsManager::create(&proj, &agent);
    let mut on_disk: Value = serde_json::from_str(&fixture("global.json")).unwrap();
    on_disk["theme"] = json!("dark");
    std::fs::write(agent.join("settings.json"), on_disk.to_string()).unwrap();
    sm.set_quiet_startup(true).unwrap();
    let written: Value = serde_json::from_str(&std::fs::read_to_string(agent.join("settings.json")).unwrap()).unwrap();
    assert_eq!(written["theme"], "dark");
    assert_eq!(written["quietStartup"], true);
}

#[test]
fn a_broken_file_is_reported_and_never_overwritten() {
    let (_dir, agent, proj) = setup();
    std::fs::write(agent.join("settings.json"), "{ nope").unwrap();
    let sm = SettingsManager::create(&proj, &agent);
    let errors = sm.drain_errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].scope, SettingsScope::Global);
    assert!(errors[0].to_string().starts_with("Invalid settings file "), "{}", errors[0]);
    sm.set_theme("light").unwrap();
    assert_eq!(std::fs::read_to_string(agent.join("settings.json")).unwrap(), "{ nope");
    assert_eq!(sm.settings().theme(), Some("light"));
}

#[test]
fn untrusted_project_is_neither_read_nor_written() {
    let (_dir, agent, proj) = setup();
    let sm = SettingsManager::create_with(
        &proj,
        &agent,
        pi_coding_agent::settings::SettingsManagerOptions { project_trusted: false },
    );
    assert_eq!(sm.settings().compaction_keep_recent_tokens(), 20000);
    assert!(sm.set_project("theme", Some(json!("x"))).unwrap_err().to_string().contains("not trusted"));
    sm.set_project_trusted(true);
    assert_eq!(sm.settings().compaction_keep_recent_tokens(), 7);
}

#[test]
fn in_memory_settings_and_invalid_values() {
    let sm = Arc::new(SettingsManager::in_memory(json!({
        "compaction": {"reserveTokens": -1, "modelOverrides": {"p/m": {"keepRecentTokens": 5}}},
        "httpIdleTimeoutMs": "disabled", "quietStartup": "header"
    })));
    let s = sm.settings();
    assert_eq!(
        s.compaction_settings_for(None).unwrap_err().to_string(),
        "Invalid compaction.reserveTokens setting: -1. Expected a non-negative safe integer."
    );
    assert_eq!(s.http_idle_timeout_ms().unwrap(), 0);
    assert_eq!(s.quiet_startup_mode(), pi_coding_agent::settings::QuietStartup::Header);
    sm.set_retry_enabled(false).unwrap();
    let stored: Value = serde_json::from_str(&sm.stored_text(SettingsScope::Global).unwrap()).unwrap();
    assert_eq!(stored["retry"], json!({"enabled": false}));
    assert_eq!(stored["quietStartup"], "header");
}
