//! Markdown transformers in the interactive transcript (issue 15): a TypeScript extension found
//! in the agent's `extensions` folder (`fixtures/interactive/markdown-arrows.ts`) rewrites the
//! user's message and the assistant's answer once it is complete; the screen of the real `pi`
//! in a pty of 100×30 is compared with the reference pi 1.6.0's, recorded in tmux by
//! `fixtures/interactive/record.sh markdown_transform`. Needs Node.js 22 (`js_support`).

mod cli_support;
mod interactive_support;
mod js_support;

use cli_support::{Env, ScriptedServer, text_reply};
use interactive_support::{Pty, dark_theme, normalize, type_keys};

#[test]
fn a_markdown_transformer_rewrites_the_transcript_as_in_the_reference() {
    if !js_support::node_available() {
        return;
    }
    let Some(node) = js_support::node_path() else { return };
    let server = ScriptedServer::start(vec![text_reply(&["Then ", "x --> y."])]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let extensions = env.agent().join("extensions");
    std::fs::create_dir_all(&extensions).expect("extensions dir");
    let source = format!("{}/tests/fixtures/interactive/markdown-arrows.ts", env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(&source, extensions.join("markdown-arrows.ts")).expect("copy the extension");
    let node = node.to_string_lossy().into_owned();
    let mut pty = Pty::spawn_with(&env, &[], &[("PI_NODE", &node)]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["a --> b", "Enter"]);
    let screen = pty.wait_for("the transformed answer", |s| s.contains("(assistant)") && s.contains("↑10"));
    let proj = env.proj().display().to_string();
    let want = interactive_support::fixture("markdown_transform.ref.txt");
    assert_eq!(normalize(&screen, &proj), normalize(&want, &proj), "our screen (left) and the reference's");
    pty.quit();
}
