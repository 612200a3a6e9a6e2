//! Providers registered by a JavaScript extension (`fixtures/provider_registration/providers.ts`,
//! run by the real Node) against the reference pi 1.6.0 (`fixtures/provider_registration/*.ref.*`,
//! recorded by `fixtures/provider_registration/record.sh` with the same agent dir): only providers
//! with configured auth are listed (`--list-models`, `ctx.modelRegistry.getAvailable()`, `/model`),
//! a registration rejected while loading is reported with pi's line and the others stay, pi stops
//! on it outside `--list-models`, and registrations made once bound throw pi's messages into the
//! extension.

mod cli_support;
mod interactive_support;
mod js_support;

use std::process::Output;

use cli_support::Env;
use interactive_support::{Pty, dark_theme, type_keys};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/provider_registration/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn reference(name: &str) -> String {
    let path = fixture(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The agent dir `record.sh` gives the reference: `storedkey`'s key and `storedoauth`'s login in
/// auth.json, `jsonkey`'s apiKey in models.json.
fn env() -> Env {
    let env = Env::new("http://127.0.0.1:9/v1");
    let auth = r#"{"storedkey": {"type": "api_key", "key": "s"}, "storedoauth": {"type": "oauth", "access": "a", "refresh": "r", "expires": 4102444800000}}"#;
    std::fs::write(env.agent().join("auth.json"), auth).expect("auth.json");
    std::fs::write(env.agent().join("models.json"), r#"{"providers": {"jsonkey": {"apiKey": "lit"}}}"#)
        .expect("models.json");
    env
}

/// `pi -e providers.ts ARGS` with Node and `vars`; `None` (skipped) without Node.
fn run(env: &Env, vars: &[(&str, &str)], args: &[&str]) -> Option<Output> {
    let node = js_support::node_path()?;
    let mut command = env.pi();
    command.env("PI_NODE", node).env("PROVREG_SET", "x").env_remove("PROVREG_MISSING");
    command.envs(vars.iter().copied());
    Some(command.arg("-e").arg(fixture("providers.ts")).args(args).output().expect("run pi"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace(&fixture("providers.ts"), "<EXT>")
}

#[test]
fn list_models_lists_only_providers_with_configured_auth_as_the_reference_does() {
    let env = env();
    let Some(output) = run(&env, &[], &["--list-models"]) else { return };
    assert!(output.status.success(), "{}", text(&output.stderr));
    pretty_assertions::assert_eq!(text(&output.stdout), reference("list.ref.txt"));
    assert_eq!(text(&output.stderr), "");
}

#[test]
fn a_registration_rejected_while_loading_is_reported_and_the_others_stay() {
    let env = env();
    let Some(output) = run(&env, &[("PROVREG_BROKEN", "1")], &["--list-models"]) else { return };
    assert!(output.status.success(), "{}", text(&output.stderr));
    let both = format!("{}{}", text(&output.stderr), text(&output.stdout));
    pretty_assertions::assert_eq!(both, reference("list-broken.ref.txt"));
}

#[test]
fn outside_list_models_pi_stops_on_a_rejected_registration() {
    let env = env();
    let out = env.dir.path().join("none.json");
    let vars = [("PROVREG_BROKEN", "1"), ("PROVREG_OUT", out.to_str().expect("path"))];
    let Some(output) = run(&env, &vars, &["--model", "withkey/wk-model", "-p", "/provreg-check"]) else { return };
    let recorded = reference("print-broken.ref.txt");
    let (status, lines) = recorded.split_once('\n').expect("status line");
    assert_eq!(status, "exit 1");
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    // The reference may print its diagnostic twice (both of its report paths); once is its line.
    let mut ours: Vec<String> = text(&output.stderr).lines().map(str::to_owned).collect();
    ours.dedup();
    let theirs: Vec<String> = lines.lines().map(str::to_owned).collect();
    assert_eq!(ours, theirs);
    assert!(!out.exists(), "the command must not run");
}

#[test]
fn registrations_once_bound_throw_and_get_available_lists_configured_providers() {
    let env = env();
    let out = env.dir.path().join("check.json");
    let vars = [("PROVREG_OUT", out.to_str().expect("path"))];
    let Some(output) = run(&env, &vars, &["--model", "withkey/wk-model", "-p", "/provreg-check"]) else { return };
    assert!(output.status.success(), "{}", text(&output.stderr));
    let written = std::fs::read_to_string(&out).expect("the command's output");
    pretty_assertions::assert_eq!(written, reference("check.ref.json"));
}

/// Erases the selector's 8-character filter.
fn clear_filter(pty: &mut Pty) {
    type_keys(pty, &["BSpace"; 8]);
    type_keys(pty, &["WAIT"]);
}

#[test]
fn the_model_selector_lists_only_providers_with_configured_auth() {
    let Some(node) = js_support::node_path() else { return };
    let env = env();
    dark_theme(&env);
    let extension = fixture("providers.ts");
    let node = node.to_string_lossy().into_owned();
    let args = ["-e", extension.as_str(), "--model", "withkey/wk-model"];
    let mut pty = Pty::spawn_with(&env, &args, &[("PI_NODE", node.as_str()), ("PROVREG_SET", "x")]);
    pty.wait_for("the footer", |s| s.contains("wk-model"));
    type_keys(&mut pty, &["/model", "WAIT", "Enter"]);
    let screen = pty.wait_for("the model selector", |s| s.contains("[withkey]"));
    // The reference's available list (check.ref.json, before the late registrations).
    for listed in ["af-model [after]", "bg-model [bang]", "es-model [envset]", "jk-model [jsonkey]"] {
        assert!(screen.contains(listed), "{listed} missing: {screen}");
    }
    // The selector shows a window of its list: filter for the rest.
    for (filter, listed) in [("sk-model", "sk-model [storedkey]"), ("so-model", "so-model [storedoauth]")] {
        type_keys(&mut pty, &[filter, "WAIT"]);
        let screen = pty.wait_for(listed, |s| s.contains(listed));
        assert!(screen.contains(listed), "{screen}");
        clear_filter(&mut pty);
    }
    for absent in ["nk-model", "oa-model", "dl-model", "ah-model", "st-model"] {
        type_keys(&mut pty, &[absent, "WAIT"]);
        let screen = pty.screen();
        assert!(!screen.contains(&format!("{absent} [")), "{absent} is listed: {screen}");
        clear_filter(&mut pty);
    }
    type_keys(&mut pty, &["Escape", "WAIT"]);
    assert_eq!(pty.quit(), 0);
}
