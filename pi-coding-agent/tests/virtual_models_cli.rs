//! Extension models in the `pi` binary (issue 15), against the reference pi 1.6.0: the
//! TypeScript extension `fixtures/vmodels/router.ts` registers the provider `phys` and the
//! virtual model `router/auto`. pi loads extensions before it resolves the model, so
//! `--list-models` lists them (`fixtures/vmodels/list_models.ref.txt`, the reference's output),
//! `--model` and `--models` select them; a resumed session restores its virtual selection, falls
//! back to the physical model that answered last when the virtual model is gone, and says
//! "Could not restore model p/m. Using p2/m2" when that one is gone too (the reference's texts,
//! recorded with `anchor.sh pi` in the same steps); the interactive footer shows
//! `auto • high → smollm2-135m • off` (`vmodel_footer.ref.txt`, recorded by
//! `fixtures/interactive/record_vmodels.sh`). Needs Node.js 22 (`js_support`).

mod cli_support;
mod interactive_support;
mod js_support;

use std::path::PathBuf;
use std::process::Output;

use cli_support::{Env, ScriptedServer, text_reply};

fn router() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vmodels/router.ts").display().to_string()
}

/// Runs `pi` with `PHYS_URL` (and `NO_VIRTUAL` when `virtual_model` is false) and Node.
fn run(env: &Env, server: &ScriptedServer, args: &[&str], virtual_model: bool) -> Output {
    let node = js_support::node_path().expect("node");
    let mut cmd = env.pi();
    cmd.args(args).env("PHYS_URL", &server.base_url).env("PI_NODE", node);
    if !virtual_model {
        cmd.env("NO_VIRTUAL", "1");
    }
    cmd.output().expect("run pi")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `model` field of each request the server received.
fn requested(server: &ScriptedServer) -> Vec<String> {
    server.requests.lock().unwrap().iter().map(|r| r["model"].as_str().unwrap_or_default().to_owned()).collect()
}

#[test]
fn list_models_shows_the_models_extensions_register() {
    if !js_support::node_available() {
        return;
    }
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let out = run(&env, &server, &["-e", &router(), "--list-models"], true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let want = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vmodels/list_models.ref.txt"),
    )
    .unwrap();
    assert_eq!(text(&out.stdout), want);
    // A search finds the virtual model (the reference's output).
    let out = run(&env, &server, &["-e", &router(), "--list-models", "auto"], true);
    assert_eq!(
        text(&out.stdout),
        "provider  model  context  max-out  thinking  images\nrouter    auto   0        0        yes       yes   \n"
    );
}

#[test]
fn model_and_models_select_a_virtual_model_and_a_resume_falls_back_as_pi_does() {
    if !js_support::node_available() {
        return;
    }
    let replies = ["routed reply", "second", "third", "fourth", "scoped"];
    let server = ScriptedServer::start(replies.iter().map(|w| text_reply(&[w])).collect());
    let env = Env::new(&server.base_url);
    let ext = router();

    // `--model router/auto`: the default level (medium) clamps to the virtual model's `high`,
    // which the router sends to phys/big.
    let out = run(&env, &server, &["-e", &ext, "--model", "router/auto", "-p", "hello"], true);
    assert_eq!((text(&out.stdout).as_str(), text(&out.stderr).as_str()), ("routed reply\n", ""));
    let file = env.session_files().pop().expect("session file");
    let entries = cli_support::json_lines(&std::fs::read_to_string(&file).unwrap());
    assert_eq!(entries[1]["type"], "model_change");
    assert_eq!((entries[1]["provider"].as_str(), entries[1]["modelId"].as_str()), (Some("router"), Some("auto")));
    assert_eq!(entries[2]["thinkingLevel"], "high");

    // The virtual model is gone: the physical model that answered last, without a message.
    let out = run(&env, &server, &["-e", &ext, "-c", "-p", "again"], false);
    assert_eq!((text(&out.stdout).as_str(), text(&out.stderr).as_str()), ("second\n", ""));

    // Its provider is gone too: pi's fallback message, then the first available model.
    let out = env.run(&["-c", "-p", "third"]);
    assert_eq!(text(&out.stdout), "third\n");
    assert_eq!(text(&out.stderr), "Warning: Could not restore model phys/big. Using local/smollm2-135m\n");

    // Registered again, the virtual selection holds (the last model_change names it).
    let out = run(&env, &server, &["-e", &ext, "-c", "-p", "fourth"], true);
    assert_eq!((text(&out.stdout).as_str(), text(&out.stderr).as_str()), ("fourth\n", ""));
    assert_eq!(requested(&server), ["big", "big", "smollm2-135m", "big"]);

    // `--models` scopes a new session to the virtual model.
    let out = run(&env, &server, &["-e", &ext, "--models", "router/*", "--thinking", "low", "-p", "hi"], true);
    assert_eq!((text(&out.stdout).as_str(), text(&out.stderr).as_str()), ("scoped\n", ""));
    assert_eq!(requested(&server).last().map(String::as_str), Some("small"));
}

#[test]
fn the_footer_shows_the_routed_model() {
    if !js_support::node_available() {
        return;
    }
    let server = ScriptedServer::start(vec![text_reply(&["routed ", "reply"])]);
    let env = Env::new(&server.base_url);
    interactive_support::dark_theme(&env);
    let node = js_support::node_path().expect("node").to_string_lossy().into_owned();
    let ext = router();
    let mut pty =
        interactive_support::Pty::spawn_with(&env, &["-e", &ext, "--model", "router/auto"], &[("PI_NODE", &node)]);
    pty.wait_for("the footer", |s| s.contains("(router) auto • high"));
    pty.send("hi");
    pty.send("\r");
    let screen = pty.wait_for("the routed model", |s| s.contains("→ smollm2-135m"));
    let proj = env.proj().display().to_string();
    let want = interactive_support::fixture("vmodel_footer.ref.txt");
    assert_eq!(
        interactive_support::normalize(&screen, &proj),
        interactive_support::normalize(&want, &proj),
        "our screen (left) and the reference's"
    );
    pty.quit();
}

#[test]
fn rpc_model_commands_see_extension_models() {
    use std::io::Write;
    if !js_support::node_available() {
        return;
    }
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let node = js_support::node_path().expect("node");
    let mut child = env
        .pi()
        .args(["-e", &router(), "--mode", "rpc", "--model", "local/smollm2-135m"])
        .env("PHYS_URL", &server.base_url)
        .env("PI_NODE", node)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = "{\"id\":\"1\",\"type\":\"get_available_models\"}\n\
                 {\"id\":\"2\",\"type\":\"set_model\",\"provider\":\"router\",\"modelId\":\"auto\"}\n";
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let records = cli_support::json_lines(&text(&out.stdout));
    let response = |id: &str| records.iter().find(|r| r["id"] == id).cloned().expect("a response");
    // The reference's answers: the catalog's model, then the extension's, in registration order.
    let models: Vec<(String, String)> = response("1")["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["provider"].as_str().unwrap().to_owned(), m["id"].as_str().unwrap().to_owned()))
        .collect();
    let pairs = [("local", "smollm2-135m"), ("phys", "small"), ("phys", "big"), ("router", "auto")];
    assert_eq!(models, pairs.map(|(p, m)| (p.to_owned(), m.to_owned())));
    let set = response("2");
    assert_eq!(set["success"], true, "{set}");
    assert_eq!((set["data"]["api"].as_str(), set["data"]["contextWindow"].as_u64()), (Some("pi-virtual"), Some(0)));
}
