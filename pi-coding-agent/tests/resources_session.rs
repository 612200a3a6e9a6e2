//! Skills and prompt templates through the SDK: the `skills` prompt section, `/skill:name` and
//! `/template` expansion of prompts, and `expand_prompt_templates: false`.

use std::path::Path;
use std::sync::{Arc, Mutex};

use pi_ai::providers::faux::{FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text};
use pi_coding_agent::extensions::{Extension, FnExtension};
use pi_coding_agent::sdk::{
    AgentSession, CreateAgentSessionOptions, DefaultResourceLoader, PromptOptions, create_agent_session,
};
use pi_coding_agent::session::SessionManager;
use serde_json::Value;

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

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

async fn session(dir: &Path) -> (AgentSession, Arc<Mutex<Vec<Value>>>) {
    let agent = dir.join("agent");
    write(&agent.join("skills/demo/SKILL.md"), "---\nname: demo\ndescription: Demo things\n---\n\nRun ./demo.sh.\n");
    write(&agent.join("prompts/greet.md"), "---\ndescription: Greet someone\n---\nSay hello to $1 (${@:2}).\n");
    let (faux, seen) = recording_faux();
    let mut loader = DefaultResourceLoader::new(dir, &agent);
    loader.home_dir = Some(dir.join("home"));
    loader.reload().await.unwrap();
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.to_path_buf()),
        model: Some(faux.model()),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir)),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux))),
        // An extension that registers nothing, so the session has an error channel.
        extensions: vec![Arc::new(FnExtension::new("/quiet.rs", |_| Ok(()))) as Arc<dyn Extension>],
        ..Default::default()
    })
    .await
    .unwrap();
    (created.session, seen)
}

/// The text of the last user message of request `n`.
fn user_text(seen: &Arc<Mutex<Vec<Value>>>, n: usize) -> String {
    let requests = seen.lock().unwrap();
    let user = requests[n].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap().clone();
    user["content"][0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_prompt_lists_skills_and_prompts_expand_skill_commands_and_templates() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (session, seen) = session(root).await;
    assert_eq!(session.skills().iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["demo"]);
    assert_eq!(session.prompt_templates()[0].description, "Greet someone");

    session.prompt("/skill:demo  now please ").await.unwrap();
    let skill_file = root.join("agent/skills/demo/SKILL.md");
    let expected = format!(
        "<skill name=\"demo\" location=\"{}\">\nReferences are relative to {}.\n\nRun ./demo.sh.\n</skill>\n\nnow please",
        skill_file.display(),
        root.join("agent/skills/demo").display()
    );
    assert_eq!(user_text(&seen, 0), expected);
    let prompt = session.system_prompt();
    assert!(prompt.contains("<skills>\nThe following skills provide specialized instructions"));
    assert!(prompt.contains(&format!("    <location>{}</location>", skill_file.display())));

    session.prompt("/greet Bob \"at home\" today").await.unwrap();
    assert_eq!(user_text(&seen, 1), "Say hello to Bob (at home today).");

    let raw = PromptOptions { expand_prompt_templates: Some(false), ..Default::default() };
    session.prompt_with("/greet Bob", raw).await.unwrap();
    assert_eq!(user_text(&seen, 2), "/greet Bob");

    session.prompt("/unknown stays as typed").await.unwrap();
    assert_eq!(user_text(&seen, 3), "/unknown stays as typed");
}

#[tokio::test]
async fn an_unreadable_skill_file_leaves_the_input_unchanged_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (session, seen) = session(dir.path()).await;
    let errors = Arc::new(Mutex::new(Vec::new()));
    let sink = errors.clone();
    let _listener =
        session.extension_runner().expect("extensions loaded").on_error(move |e| sink.lock().unwrap().push(e.clone()));
    let skill_file = dir.path().join("agent/skills/demo/SKILL.md");
    std::fs::remove_file(&skill_file).unwrap();
    session.prompt("/skill:demo go").await.unwrap();
    assert_eq!(user_text(&seen, 0), "/skill:demo go");
    let errors = errors.lock().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].event, "skill_expansion");
    assert_eq!(errors[0].extension_path, skill_file.display().to_string());
    assert_eq!(errors[0].error, format!("ENOENT: no such file or directory, open '{}'", skill_file.display()));
}

#[tokio::test]
async fn without_a_reader_tool_the_skills_section_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let (session, seen) = session(dir.path()).await;
    session.prompt("first").await.unwrap();
    assert!(session.system_prompt().contains("<available_skills>"));
    session.set_active_tools_by_name(&["edit", "write"]);
    session.prompt("second").await.unwrap();
    let request = &seen.lock().unwrap()[1];
    let patch = request.as_array().unwrap().iter().filter(|m| m["role"] == "system").nth(1).unwrap().clone();
    let deleted = patch["sections"].as_object().and_then(|s| s.get("skills")).cloned();
    assert_eq!(deleted, Some(Value::Null), "the patch deletes the skills section: {patch}");
    assert!(!session.system_prompt().contains("<available_skills>"));
}

#[tokio::test]
async fn queued_follow_ups_are_expanded_too() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    write(&agent.join("prompts/greet.md"), "Say hello to $1.\n");
    let faux = FauxProvider::new(FauxOptions::default());
    let slot: Arc<Mutex<Option<AgentSession>>> = Arc::default();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let steps: Vec<FauxStep> = (0..2)
        .map(|i| {
            let (slot, seen) = (slot.clone(), seen.clone());
            FauxStep::factory(move |req| {
                let (slot, seen) = (slot.clone(), seen.clone());
                async move {
                    seen.lock().unwrap().push(serde_json::to_string(req.context.messages()).unwrap());
                    if i == 0 {
                        // Queued while the first request streams.
                        let session = slot.lock().unwrap().clone().unwrap();
                        session.follow_up("/greet Ada").await.unwrap();
                    }
                    Ok(faux_assistant_message(vec![faux_text("ok")], Default::default()))
                }
            })
        })
        .collect();
    faux.set_responses(steps);
    let mut loader = DefaultResourceLoader::new(dir.path(), &agent);
    loader.home_dir = Some(dir.path().join("home"));
    loader.reload().await.unwrap();
    let session = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(faux.model()),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir.path())),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux))),
        ..Default::default()
    })
    .await
    .unwrap()
    .session;
    *slot.lock().unwrap() = Some(session.clone());
    session.prompt("start").await.unwrap();
    let requests = seen.lock().unwrap();
    assert_eq!(requests.len(), 2, "the follow-up started a second request");
    assert!(requests[1].contains("Say hello to Ada."), "{}", requests[1]);
    assert!(!requests[1].contains("/greet"));
}
