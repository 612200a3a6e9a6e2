//! The SDK: system prompt sections, persistence, what reaches the model (`append_entry` vs
//! custom messages vs excluded bash), prompt patches and tool diffs.

use std::sync::{Arc, Mutex};

use pi_ai::providers::faux::{FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text};
use pi_coding_agent::messages::CustomRoleMessage;
use pi_coding_agent::sdk::system_prompt::{
    ContextFile, DocsPaths, SystemPromptOptions, build_system_prompt, build_system_prompt_sections,
};
use pi_coding_agent::sdk::{AgentSession, CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;
use serde_json::{Value, json};

const FIXTURE: &str = include_str!("fixtures/sdk/system_prompt.json");

fn options_from(input: &Value) -> SystemPromptOptions {
    let strs = |v: &Value| -> Vec<String> {
        v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect()).unwrap_or_default()
    };
    let anchor = "/root/.cache/pi-anchor/node_modules/@earendil-works/pi-coding-agent";
    SystemPromptOptions {
        custom_prompt: input["customPrompt"].as_str().map(str::to_owned),
        selected_tools: input.get("selectedTools").map(strs),
        tool_snippets: input["toolSnippets"]
            .as_object()
            .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned()))).collect())
            .unwrap_or_default(),
        tool_guidelines: input["toolGuidelines"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), strs(v))).collect())
            .unwrap_or_default(),
        prompt_guidelines: strs(&input["promptGuidelines"]),
        append_system_prompt: input["appendSystemPrompt"].as_str().unwrap_or_default().to_owned(),
        sections: input["sections"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect())
            .unwrap_or_default(),
        cwd: input["cwd"].as_str().unwrap_or_default().to_owned(),
        context_files: input["contextFiles"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|f| ContextFile {
                        path: f["path"].as_str().unwrap().into(),
                        content: f["content"].as_str().unwrap().into(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        docs: DocsPaths {
            readme: format!("{anchor}/README.md").into(),
            docs: format!("{anchor}/docs").into(),
            examples: format!("{anchor}/examples").into(),
        },
        ..Default::default()
    }
}

#[test]
fn system_prompt_sections_match_the_reference() {
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    for case in fixture["cases"].as_array().unwrap() {
        let options = options_from(&case["input"]);
        let sections = build_system_prompt_sections(&options).unwrap();
        assert_eq!(serde_json::to_value(&sections).unwrap(), case["sections"], "case {}", case["name"]);
        assert_eq!(build_system_prompt(&options).unwrap(), case["text"].as_str().unwrap(), "case {}", case["name"]);
    }
}

#[test]
fn builtin_tool_contributions_match_the_reference() {
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    for (name, snippet, guidelines) in pi_coding_agent::sdk::system_prompt::BUILTIN_TOOL_PROMPTS {
        let c = &fixture["contributions"][*name];
        assert_eq!(c["snippet"], *snippet);
        assert_eq!(c["guidelines"], json!(guidelines));
    }
}

/// A faux model whose every reply is "ok", recording what each request carried.
fn recording_faux() -> (FauxProvider, Arc<Mutex<Vec<Value>>>) {
    let faux = FauxProvider::new(FauxOptions::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let steps: Vec<FauxStep> = (0..10)
        .map(|_| {
            let seen = seen.clone();
            FauxStep::factory(move |req| {
                let seen = seen.clone();
                async move {
                    seen.lock().unwrap().push(serde_json::to_value(req.context.messages()).unwrap());
                    Ok(faux_assistant_message(vec![faux_text("ok")], Default::default()))
                }
            })
        })
        .collect();
    faux.set_responses(steps);
    (faux, seen)
}

async fn session(dir: &std::path::Path) -> (AgentSession, Arc<Mutex<Vec<Value>>>) {
    let (faux, seen) = recording_faux();
    let mut loader = DefaultResourceLoader::new(dir, dir.join("agent"));
    std::fs::write(dir.join("AGENTS.md"), "Use tabs.").unwrap();
    loader.reload().await.unwrap();
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.to_path_buf()),
        model: Some(faux.model()),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir)),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux))),
        ..Default::default()
    })
    .await
    .unwrap();
    (created.session, seen)
}

fn entry_types(session: &AgentSession) -> Vec<String> {
    session
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

#[tokio::test]
async fn the_first_prompt_records_the_system_prompt_and_persists_every_message() {
    let dir = tempfile::tempdir().unwrap();
    let (session, seen) = session(dir.path()).await;
    session.prompt("hello").await.unwrap();
    assert_eq!(
        entry_types(&session),
        ["model_change", "thinking_level_change", "message:system", "message:user", "message:assistant"]
    );
    let request = &seen.lock().unwrap()[0];
    let head = &request[0];
    assert_eq!(head["role"], "system");
    assert_eq!(head["content"], "");
    let sections: Vec<&str> = head["sections"].as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(sections, ["preamble", "tools", "rules", "docs", "project_context", "cwd"]);
    let tools: Vec<&str> = head["toolsAdded"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["read", "bash", "edit", "write"]);
    assert!(head["sections"]["project_context"].as_str().unwrap().contains("Use tabs."));
    // The user content is always an array.
    assert_eq!(request[1]["content"], json!([{"type": "text", "text": "hello"}]));
    assert_eq!(session.get_last_assistant_text().as_deref(), Some("ok"));
    assert!(session.system_prompt().starts_with("You are a coding assistant running inside pi"));
}

#[tokio::test]
async fn append_entry_stays_out_of_the_model_context_while_custom_messages_reach_it() {
    let dir = tempfile::tempdir().unwrap();
    let (session, seen) = session(dir.path()).await;
    session.prompt("first").await.unwrap();
    session.append_entry("audit-note", Some(json!({"toolName": "bash", "toolCallId": "c1", "at": 1}))).unwrap();
    let message = CustomRoleMessage {
        custom_type: "reminder".into(),
        content: "Remember the deadline.".into(),
        display: false,
        details: Some(json!({"secret": "ui-only"})),
        timestamp: 5,
        ..Default::default()
    };
    session.send_custom_message(message, false).await.unwrap();
    session.prompt("second").await.unwrap();
    assert!(entry_types(&session).contains(&"custom".to_owned()));
    assert!(entry_types(&session).contains(&"custom_message".to_owned()));
    let request = seen.lock().unwrap()[1].to_string();
    assert!(!request.contains("audit-note"), "an appended entry never reaches the model");
    assert!(request.contains("Remember the deadline."), "custom content reaches the model");
    assert!(!request.contains("ui-only") && !request.contains("reminder"), "details and customType never do");
}

#[tokio::test]
async fn activating_a_tool_patches_the_tools_section_and_declares_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let (session, seen) = session(dir.path()).await;
    session.prompt("first").await.unwrap();
    session.set_active_tools_by_name(&["read", "bash", "edit", "write", "grep", "nope"]);
    assert_eq!(session.active_tool_names(), ["read", "bash", "edit", "write", "grep"]);
    session.prompt("second").await.unwrap();
    let request = &seen.lock().unwrap()[1];
    let patch = request.as_array().unwrap().iter().filter(|m| m["role"] == "system").nth(1).unwrap().clone();
    assert_eq!(patch["content"], "");
    assert!(patch["sections"]["tools"].as_str().unwrap().contains("- grep: Search file contents"));
    assert_eq!(patch["toolsAdded"][0]["name"], "grep");
    // The replayed head has the new tool set and the patched section.
    assert!(session.system_prompt().contains("- grep: Search file contents"));
    // As pi's `_applyToolLoadout`: tools that stay keep their place, new ones follow as given.
    session.set_active_tools_by_name(&["ls", "write", "read"]);
    assert_eq!(session.active_tool_names(), ["read", "write", "ls"]);
}

#[tokio::test]
async fn excluded_bash_output_is_recorded_but_never_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (session, seen) = session(dir.path()).await;
    let hidden = session.execute_bash("echo secret-output", true).await.unwrap();
    assert_eq!(hidden.exit_code, Some(0));
    assert!(hidden.output.contains("secret-output"));
    let shown = session.execute_bash("echo visible; exit 3", false).await.unwrap();
    assert_eq!(shown.exit_code, Some(3));
    session.prompt("what happened?").await.unwrap();
    let request = seen.lock().unwrap()[0].to_string();
    assert!(!request.contains("secret-output"));
    assert!(request.contains("Ran `echo visible; exit 3`"));
    assert!(request.contains("Command exited with code 3"));
    let bash_entries = entry_types(&session).iter().filter(|t| *t == "message:bashExecution").count();
    assert_eq!(bash_entries, 2);
}
