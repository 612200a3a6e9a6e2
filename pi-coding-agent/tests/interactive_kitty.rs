//! Kitty images of an unmodified extension in the interactive mode (`PI_IMAGE_PROTOCOL=kitty`,
//! `fixtures/interactive/kitty-image-extension.ts` in the real Node of `PI_NODE`): pi-tui's Image
//! is transmitted as image 4242, and pi-rs's renderers clean it up as pi-tui's do: in fullscreen
//! its placement is deleted when its component closes and every image is deleted on exit; in
//! regular mode the image itself is deleted when its lines change.

mod cli_support;
mod interactive_support;
mod js_support;

use cli_support::{Env, ScriptedServer};
use interactive_support::{Pty, type_keys};

const TRANSMIT: &str = "\x1b_Ga=T,f=100,q=2,C=1,c=";
const PLACEMENTS_DELETED: &str = "\x1b_Ga=d,d=a,q=2\x1b\\";
const ALL_DELETED: &str = "\x1b_Ga=d,d=A,q=2\x1b\\";
const IMAGE_DELETED: &str = "\x1b_Ga=d,d=I,i=4242,q=2\x1b\\";

/// Runs `/picture`, closes it, quits, and returns everything pi wrote.
fn picture_session(settings: &str) -> Option<String> {
    let node = js_support::node_path()?;
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), settings).expect("settings");
    let source = format!("{}/tests/fixtures/interactive/kitty-image-extension.ts", env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(&source, env.proj().join("kitty-image-extension.ts")).expect("copy the extension");
    let node = node.to_string_lossy().into_owned();
    let vars = [("PI_NODE", node.as_str()), ("PI_IMAGE_PROTOCOL", "kitty")];
    let mut pty = Pty::spawn_with(&env, &["-e", "kitty-image-extension.ts"], &vars);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/picture", "Enter"]);
    pty.wait_for("the picture", |s| s.contains("A picture (Escape closes)"));
    pty.send("\x1b");
    pty.wait_for("the picture closed", |s| s.contains("picture closed"));
    pty.quit();
    Some(pty.output_after_exit())
}

#[test]
fn fullscreen_deletes_a_closed_components_image_and_every_image_on_exit() {
    let Some(raw) = picture_session(r#"{"theme":"dark"}"#) else { return };
    let sent = raw.find(TRANSMIT).expect("the image transmitted");
    assert!(raw[sent..].contains(",i=4242;"), "as image 4242");
    let closed = raw[sent..].find(PLACEMENTS_DELETED).map(|at| sent + at).expect("its placement deleted after");
    assert!(!raw[closed..].contains(TRANSMIT), "not drawn again once closed");
    let exit = raw.rfind("\x1b[?1049l").expect("the alternate screen left");
    let all = raw.rfind(ALL_DELETED).expect("every image deleted");
    assert!(closed < all && all < exit, "on exit, before leaving the alternate screen");
}

#[test]
fn regular_mode_deletes_the_image_when_its_lines_change() {
    let Some(raw) = picture_session(r#"{"theme":"dark","tuiMode":"regular"}"#) else { return };
    let sent = raw.find(TRANSMIT).expect("the image transmitted");
    assert!(raw[sent..].contains(IMAGE_DELETED), "image 4242 deleted once its lines changed");
}
