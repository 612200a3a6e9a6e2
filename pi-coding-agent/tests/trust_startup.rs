//! The `project_trust` event at startup, as pi's CLI emits it: the extensions that do not depend
//! on the project (the user's, `-e`) load before the decision and answer it; a `yes` loads the
//! project's resources (its skills reach the request body), a remembered `no` is saved to
//! `trust.json`, a failing handler is a warning and the next one decides; project extensions
//! never answer (they are not loaded before trust). JavaScript extensions in the Node host.

mod cli_support;
mod js_support;

use cli_support::{Env, ScriptedServer, text_reply};

fn project(env: &Env) {
    let p = env.proj();
    std::fs::create_dir_all(p.join(".pi/skills/proj-skill")).unwrap();
    std::fs::write(p.join(".pi/skills/proj-skill/SKILL.md"), "---\nname: proj-skill\ndescription: P\n---\nb\n")
        .unwrap();
    // A project extension that would trust itself: it must not get the chance.
    std::fs::create_dir_all(p.join(".pi/extensions")).unwrap();
    std::fs::write(
        p.join(".pi/extensions/self-trust.js"),
        "export default function (pi) { pi.on(\"project_trust\", () => ({ trusted: \"yes\" })); }\n",
    )
    .unwrap();
}

fn extension(env: &Env, name: &str, body: &str) {
    let dir = env.agent().join("extensions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), format!("export default function (pi) {{ pi.on(\"project_trust\", {body}); }}\n"))
        .unwrap();
}

/// Runs `pi -p` and returns (system prompt, stderr).
fn run(env: &Env, server: &ScriptedServer, node: &std::path::Path, args: &[&str]) -> (String, String) {
    let mut all = vec!["-p", "--no-session"];
    all.extend_from_slice(args);
    all.push("hi");
    let out = env.pi().env("PI_NODE", node).args(&all).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let body = server.requests.lock().unwrap().last().cloned().unwrap();
    (body["messages"][0]["content"].as_str().unwrap().to_string(), err)
}

#[test]
fn user_extensions_answer_project_trust_at_startup() {
    let Some(node) = js_support::node_path() else {
        assert!(js_support::node_available());
        return;
    };
    let server = ScriptedServer::start((0..5).map(|_| text_reply(&["ok"])).collect());
    let env = Env::new(&server.base_url);
    project(&env);
    // Nobody decides: print mode does not ask, the project stays untrusted.
    let (system, _) = run(&env, &server, &node, &[]);
    assert!(!system.contains("proj-skill"), "the project extension trusted itself");
    // A user extension says yes (not remembered): the project's skill loads, nothing is saved.
    extension(&env, "a-yes.js", "(event, ctx) => ({ trusted: event.cwd.length > 0 ? \"yes\" : \"no\" })");
    let (system, _) = run(&env, &server, &node, &[]);
    assert!(system.contains("<name>proj-skill</name>"), "{system}");
    assert!(!env.agent().join("trust.json").exists());
    // An earlier failing handler is a warning; an earlier undecided one falls through.
    extension(&env, "0-fails.js", "() => { throw new Error(\"boom\"); }");
    extension(&env, "1-undecided.js", "() => ({ trusted: \"undecided\" })");
    let (system, err) = run(&env, &server, &node, &[]);
    assert!(system.contains("<name>proj-skill</name>"), "{system}");
    let fails = env.agent().join("extensions/0-fails.js");
    assert!(err.contains(&format!("Warning: Extension \"{}\" project_trust error: boom", fails.display())), "{err}");
    // `--no-approve` decides before any extension.
    let (system, _) = run(&env, &server, &node, &["--no-approve"]);
    assert!(!system.contains("proj-skill"));
    // A remembered no wins over the later yes and is saved.
    std::fs::remove_file(&fails).unwrap();
    extension(&env, "0-no.js", "() => ({ trusted: \"no\", remember: true })");
    let (system, _) = run(&env, &server, &node, &[]);
    assert!(!system.contains("proj-skill"));
    let store = pi_coding_agent::trust::ProjectTrustStore::new(env.agent());
    assert_eq!(store.get(&env.proj()).unwrap(), Some(false));
}

/// Package commands decide trust as pi's `createCommandSettingsManager`: a user extension's
/// `project_trust` answer lets `pi install -l` write the project's settings.
#[test]
fn package_commands_ask_the_extensions_too() {
    let Some(node) = js_support::node_path() else {
        assert!(js_support::node_available());
        return;
    };
    let env = Env::new("http://127.0.0.1:9/v1");
    project(&env);
    let local = env.dir.path().join("localpkg");
    std::fs::create_dir_all(&local).unwrap();
    let install = || env.pi().env("PI_NODE", &node).args(["install", "-l", "../localpkg"]).output().unwrap();
    let out = install();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Project is not trusted. Use --approve to modify local package config.\n"
    );
    extension(&env, "yes.js", "() => ({ trusted: \"yes\" })");
    let out = install();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let settings = std::fs::read_to_string(env.proj().join(".pi/settings.json")).unwrap();
    assert!(settings.contains("\"packages\""), "{settings}");
}
