//! Project trust: an untrusted project's protected resources (`.pi/skills`, `.pi/APPEND_SYSTEM.md`,
//! project settings) are absent from the request body until the project is trusted (saved in
//! `trust.json`, `--approve`, or `defaultProjectTrust: "always"`), while context files load
//! regardless; and the decision order of pi's `resolveProjectTrusted` (override, extension
//! handlers, saved decision, default, the question through the UI).

mod cli_support;

use std::path::Path;

use async_trait::async_trait;
use cli_support::{Env, ScriptedServer, text_reply};
use pi_coding_agent::trust::{
    DefaultProjectTrust, ProjectTrustContext, ProjectTrustDecision, ProjectTrustEvent, ProjectTrustEventResult,
    ProjectTrustHandlerError, ProjectTrustHandlers, ProjectTrustStore, ResolveTrustOptions, normalize_cwd,
    resolve_project_trusted, run_trust_command, save_implicit_trust_after_reload,
};
use pi_coding_agent::ui::{DialogOptions, UiHost};

fn project(env: &Env) {
    let p = env.proj();
    std::fs::create_dir_all(p.join(".pi/skills/proj-skill")).unwrap();
    std::fs::write(p.join(".pi/skills/proj-skill/SKILL.md"), "---\nname: proj-skill\ndescription: P\n---\nb\n")
        .unwrap();
    std::fs::write(p.join(".pi/APPEND_SYSTEM.md"), "PROJECT-APPEND").unwrap();
    std::fs::create_dir_all(p.join("extra")).unwrap();
    std::fs::write(p.join("extra/s.md"), "---\nname: settings-skill\ndescription: S\n---\nb\n").unwrap();
    std::fs::write(p.join(".pi/settings.json"), r#"{"skills":["../extra/s.md"]}"#).unwrap();
    std::fs::write(p.join("AGENTS.md"), "CONTEXT-FILE").unwrap();
}

/// The system prompt `pi -p` sent.
fn system_prompt(env: &Env, server: &ScriptedServer, args: &[&str]) -> String {
    let mut all = vec!["-p", "--no-session"];
    all.extend_from_slice(args);
    all.push("hi");
    let out = env.run(&all);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let body = server.requests.lock().unwrap().last().cloned().unwrap();
    body["messages"][0]["content"].as_str().unwrap().to_string()
}

fn assert_untrusted(system: &str) {
    assert!(system.contains("CONTEXT-FILE"), "context files load regardless of trust");
    for hidden in ["proj-skill", "PROJECT-APPEND", "settings-skill"] {
        assert!(!system.contains(hidden), "{hidden} leaked into an untrusted request");
    }
}

fn assert_trusted(system: &str) {
    for shown in ["CONTEXT-FILE", "proj-skill", "PROJECT-APPEND", "settings-skill"] {
        assert!(system.contains(shown), "{shown} missing from a trusted request");
    }
}

#[test]
fn project_resources_wait_for_trust() {
    let server = ScriptedServer::start((0..6).map(|_| text_reply(&["ok"])).collect());
    let env = Env::new(&server.base_url);
    project(&env);
    // "ask" without a UI: not trusted.
    assert_untrusted(&system_prompt(&env, &server, &[]));
    assert_trusted(&system_prompt(&env, &server, &["--approve"]));
    // A saved decision (as /trust saves it) applies to later runs; --no-approve still wins.
    ProjectTrustStore::new(env.agent()).set(&env.proj(), true).unwrap();
    assert_trusted(&system_prompt(&env, &server, &[]));
    assert_untrusted(&system_prompt(&env, &server, &["--no-approve"]));
    // defaultProjectTrust applies only without a saved decision.
    ProjectTrustStore::new(env.agent()).set(&env.proj(), false).unwrap();
    let settings = env.agent().join("settings.json");
    std::fs::write(&settings, r#"{"defaultProjectTrust":"always"}"#).unwrap();
    assert_untrusted(&system_prompt(&env, &server, &[]));
    std::fs::write(env.agent().join("trust.json"), "{}\n").unwrap();
    assert_trusted(&system_prompt(&env, &server, &[]));
}

/// Answers `select` with the option whose label starts with `pick`, recording the title.
struct Picker {
    pick: &'static str,
    titles: std::sync::Mutex<Vec<String>>,
}

#[async_trait]
impl UiHost for Picker {
    fn has_ui(&self) -> bool {
        true
    }
    async fn select(&self, title: &str, options: &[String], _opts: DialogOptions) -> Option<String> {
        self.titles.lock().unwrap().push(title.to_string());
        options.iter().find(|o| o.trim_start_matches("✓ ").starts_with(self.pick)).cloned()
    }
}

struct Handler(ProjectTrustDecision, bool);

#[async_trait]
impl ProjectTrustHandlers for Handler {
    async fn emit_project_trust(
        &self,
        event: &ProjectTrustEvent,
        ctx: &ProjectTrustContext<'_>,
    ) -> (Option<ProjectTrustEventResult>, Vec<ProjectTrustHandlerError>) {
        assert_eq!(event.cwd, ctx.cwd.display().to_string());
        let error = ProjectTrustHandlerError { extension_path: "/ext.ts".into(), error: "boom".into() };
        let result = (self.0 != ProjectTrustDecision::Undecided)
            .then_some(ProjectTrustEventResult { trusted: self.0, remember: self.1 });
        (result, vec![error])
    }
}

async fn resolve(
    agent: &Path,
    cwd: &Path,
    ui: &dyn UiHost,
    handlers: Option<&dyn ProjectTrustHandlers>,
) -> (bool, Vec<String>) {
    let store = ProjectTrustStore::new(agent);
    let opts = ResolveTrustOptions {
        cwd,
        store: &store,
        trust_override: None,
        default_project_trust: DefaultProjectTrust::Ask,
        handlers,
        mode: "tui",
        ui,
    };
    let r = resolve_project_trusted(&opts).await.unwrap();
    (r.trusted, r.warnings)
}

#[tokio::test]
async fn the_startup_question_handlers_and_the_trust_command() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("work/proj");
    std::fs::create_dir_all(cwd.join(".pi/extensions")).unwrap();
    let canonical = normalize_cwd(&cwd);
    let parent = canonical.parent().unwrap().to_path_buf();
    // The question: "Trust parent folder" saves the parent and clears the folder.
    let ui = Picker { pick: "Trust parent", titles: Default::default() };
    assert_eq!(resolve(&agent, &cwd, &ui, None).await, (true, vec![]));
    let title = ui.titles.lock().unwrap()[0].clone();
    assert_eq!(
        title,
        format!(
            "Trust project folder?\n{}\n\nThis allows pi to load .pi settings and resources, install missing project packages, and execute project extensions.",
            cwd.display()
        )
    );
    let saved = std::fs::read_to_string(agent.join("trust.json")).unwrap();
    assert_eq!(saved, format!("{{\n  \"{}\": true\n}}\n", parent.display()));
    // An extension's "no" (remembered) wins over the saved parent decision; its failure is a warning.
    let (trusted, warnings) = resolve(&agent, &cwd, &ui, Some(&Handler(ProjectTrustDecision::No, true))).await;
    assert!(!trusted);
    assert_eq!(warnings, vec!["Extension \"/ext.ts\" project_trust error: boom".to_string()]);
    assert_eq!(ProjectTrustStore::new(&agent).get(&cwd).unwrap(), Some(false));
    // Undecided falls through to the saved decision (the folder's own "no" now).
    assert!(!resolve(&agent, &cwd, &ui, Some(&Handler(ProjectTrustDecision::Undecided, false))).await.0);
    // /trust: the saved option is marked, the choice saved, pi's status line returned.
    let ui = Picker { pick: "Trust", titles: Default::default() };
    let status = run_trust_command(&ui, &agent, &cwd, false).await.unwrap();
    assert_eq!(status.as_deref(), Some("Saved trust decision: trusted. Restart pi for this to take effect."));
    let title = ui.titles.lock().unwrap()[0].clone();
    assert_eq!(
        title,
        format!(
            "Project trust\n{}\n\nSaved decision: untrusted ({})\nCurrent session: untrusted",
            cwd.display(),
            canonical.display()
        )
    );
    assert_eq!(ProjectTrustStore::new(&agent).get(&cwd).unwrap(), Some(true));
}

/// Rust extensions answer `project_trust` through the runner, as pi's `emitProjectTrustEvent`.
#[tokio::test]
async fn extension_handlers_decide_through_the_runner() {
    use pi_coding_agent::extensions::{Extension, ExtensionRunner, FnExtension};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("proj");
    std::fs::create_dir_all(cwd.join(".pi/skills")).unwrap();
    let failing = FnExtension::new("/failing.ts", |pi| {
        pi.on_sync::<ProjectTrustEvent>(|_, _| Err("cannot decide".into()));
        Ok(())
    });
    let undecided = FnExtension::new("/undecided.ts", |pi| {
        pi.on_sync::<ProjectTrustEvent>(|_, _| {
            Ok(Some(ProjectTrustEventResult { trusted: ProjectTrustDecision::Undecided, remember: false }))
        });
        Ok(())
    });
    let decides = FnExtension::new("/decides.ts", |pi| {
        pi.on_sync::<ProjectTrustEvent>(|event, _| {
            assert!(event.cwd.ends_with("proj"));
            Ok(Some(ProjectTrustEventResult { trusted: ProjectTrustDecision::Yes, remember: true }))
        });
        Ok(())
    });
    let exts: Vec<Arc<dyn Extension>> = vec![Arc::new(failing), Arc::new(undecided), Arc::new(decides)];
    let runner = ExtensionRunner::load(exts, cwd.display().to_string()).await;
    let (trusted, warnings) = resolve(&agent, &cwd, &pi_coding_agent::ui::NoUi, Some(&runner)).await;
    assert!(trusted);
    assert_eq!(warnings, vec!["Extension \"/failing.ts\" project_trust error: cannot decide".to_string()]);
    assert_eq!(ProjectTrustStore::new(&agent).get(&cwd).unwrap(), Some(true), "remember: true saves the answer");
}

#[test]
fn reload_saves_implicit_trust_once_protected_resources_appear() {
    let dir = tempfile::tempdir().unwrap();
    let (agent, cwd) = (dir.path().join("agent"), dir.path().join("proj"));
    std::fs::create_dir_all(&cwd).unwrap();
    assert!(!save_implicit_trust_after_reload(&agent, &cwd, true).unwrap(), "nothing protected yet");
    std::fs::create_dir_all(cwd.join(".pi/skills")).unwrap();
    assert!(!save_implicit_trust_after_reload(&agent, &cwd, false).unwrap(), "an untrusted session saves nothing");
    assert!(save_implicit_trust_after_reload(&agent, &cwd, true).unwrap());
    assert_eq!(ProjectTrustStore::new(&agent).get(&cwd).unwrap(), Some(true));
    assert!(!save_implicit_trust_after_reload(&agent, &cwd, true).unwrap(), "a decision already applies");
}

/// pi reads the project's `sessionDir` while choosing the session, before the trust decision.
#[test]
fn the_project_session_dir_is_read_before_trust() {
    let server = ScriptedServer::start(vec![text_reply(&["ok"])]);
    let env = Env::new(&server.base_url);
    project(&env);
    let sessions = env.proj().join("here");
    std::fs::write(env.proj().join(".pi/settings.json"), format!(r#"{{"sessionDir":"{}"}}"#, sessions.display()))
        .unwrap();
    let out = env.run(&["-p", "hi"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written: Vec<_> = std::fs::read_dir(&sessions).unwrap().flatten().collect();
    assert_eq!(written.len(), 1, "the untrusted project's sessionDir holds the session");
    assert_untrusted(server.requests.lock().unwrap()[0]["messages"][0]["content"].as_str().unwrap());
}
