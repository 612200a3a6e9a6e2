//! The interactive gaps of JavaScript extension UIs (issue 15) in the real `pi` binary in a
//! pseudo-terminal of 100×30, compared with the reference pi 1.6.0's screens recorded in tmux at
//! the same size by `tests/fixtures/interactive/record_jsui3.sh`, all driven by
//! `fixtures/jsui3/ui3.ts`: the `keybindings` argument of `custom()` factories (with a user's
//! `keybindings.json`), `ctx.ui.getTheme` / `getAllThemes` (and, with `fixtures/jsui3/ext_themes.ts`, of
//! a theme an extension provided), a custom component opened over a
//! dialog (the dialog comes back after), an overlay handle's `getBounds()` and a `visible` option,
//! a completion provider's real arguments and its `applyCompletion`, the Markdown transform
//! context's `messageId` / `timestamp` and the changelog transformed, cache notices drawn again on
//! resume and `/session`'s cost per model. Needs Node.js 22 (`js_support`).

mod cli_support;
mod interactive_support;
mod js_support;

use std::path::PathBuf;

use cli_support::{Env, ScriptedServer};
use interactive_support::{Pty, Step, play_and_compare, tmux_key};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jsui3")
}

/// Runs `ui3.ts`, plays `steps` and compares the last screen with `NAME.ref.txt`. As the
/// recording: a name with "kb" gets `keybindings.json`, one with "resume" opens `resume.jsonl`.
fn compare(name: &str, steps: &[Step<'_>]) {
    compare_then(name, steps, &[]);
}

/// [`compare`], then `cleanup` keys (closing a component that takes every key) before quitting.
fn compare_then(name: &str, steps: &[Step<'_>], cleanup: &[&str]) {
    if !js_support::node_available() {
        return;
    }
    let Some(node) = js_support::node_path() else { return };
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), r#"{"theme":"dark","showCacheMissNotices":true}"#)
        .expect("settings");
    if name.contains("kb") {
        std::fs::copy(fixtures().join("keybindings.json"), env.agent().join("keybindings.json")).expect("keybindings");
    }
    // As the recording: "ext_themes" runs `ext_themes.ts` (a theme from `resources_discover`).
    let file = if name.contains("ext_themes") { "ext_themes.ts" } else { "ui3.ts" };
    let extension = fixtures().join(file).to_string_lossy().into_owned();
    let mut args = vec!["-e".to_owned(), extension];
    if name.contains("resume") {
        let text = std::fs::read_to_string(fixtures().join("resume.jsonl")).expect("session");
        let session = env.dir.path().join("session.jsonl");
        std::fs::write(&session, text.replace("__CWD__", &env.proj().to_string_lossy())).expect("session");
        args.extend(["--session".to_owned(), session.to_string_lossy().into_owned()]);
    }
    let node = node.to_string_lossy().into_owned();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut pty = Pty::spawn_with(&env, &args, &[("PI_NODE", &node)]);
    play_and_compare(&mut pty, &env, name, &|s| s.contains("smollm2-135m") && s.contains(file), steps);
    for k in cleanup {
        pty.send(tmux_key(k));
        pty.wait_for("quiet", |_| true);
    }
    pty.quit();
}

#[test]
fn get_theme_answers_a_theme_an_extension_provided() {
    compare(
        "jsui3_ext_themes",
        &[
            (&["/ext-themes"], &|s| s.contains("getTheme of an extension's theme")),
            (&["Enter"], &|s| s.contains("themes=")),
        ],
    );
}

#[test]
fn custom_keybindings_match_the_arrow_as_the_selection_up() {
    compare_then(
        "jsui3_kb_up",
        &[
            (&["/kb"], &|s| s.contains("keybindings of custom()")),
            (&["Enter"], &|s| s.contains("press keys")),
            (&["Up"], &|s| s.contains("-> tui.select.up")),
        ],
        &["q"],
    );
}

#[test]
fn custom_keybindings_follow_the_users_keybindings_json() {
    compare_then(
        "jsui3_kb_user",
        &[
            (&["/kb"], &|s| s.contains("keybindings of custom()")),
            (&["Enter"], &|s| s.contains("press keys")),
            (&["C-k"], &|s| s.contains("\"\\u000b\" -> tui.select.up")),
        ],
        &["q"],
    );
}

#[test]
fn custom_keybindings_know_the_application_actions() {
    compare_then(
        "jsui3_kb_escape",
        &[
            (&["/kb"], &|s| s.contains("keybindings of custom()")),
            (&["Enter"], &|s| s.contains("press keys")),
            (&["Escape"], &|s| s.contains("app.interrupt")),
        ],
        &["q"],
    );
}

#[test]
fn get_theme_answers_the_named_theme_and_get_all_themes_lists_them() {
    compare(
        "jsui3_themes",
        &[(&["/themes"], &|s| s.contains("getAllThemes and getTheme")), (&["Enter"], &|s| s.contains("themes="))],
    );
}

#[test]
fn a_custom_component_opened_over_a_dialog_hides_it() {
    compare_then(
        "jsui3_stack_top",
        &[
            (&["/stack"], &|s| s.contains("a custom component over a dialog")),
            (&["Enter"], &|s| s.contains("custom on top")),
        ],
        &["x", "Escape"],
    );
}

#[test]
fn the_dialog_under_a_custom_component_comes_back_after() {
    compare(
        "jsui3_stack_back",
        &[
            (&["/stack"], &|s| s.contains("a custom component over a dialog")),
            (&["Enter"], &|s| s.contains("custom on top")),
            (&["x"], &|s| s.contains("Pick one")),
        ],
    );
}

#[test]
fn the_dialog_that_came_back_still_answers() {
    compare(
        "jsui3_stack_done",
        &[
            (&["/stack"], &|s| s.contains("a custom component over a dialog")),
            (&["Enter"], &|s| s.contains("custom on top")),
            (&["x"], &|s| s.contains("Pick one")),
            (&["Enter"], &|s| s.contains("picked alpha")),
        ],
    );
}

#[test]
fn an_overlay_handle_answers_its_bounds() {
    compare(
        "jsui3_bounds",
        &[
            (&["/bounds"], &|s| s.contains("an overlay and its bounds")),
            (&["Enter"], &|s| s.contains("overlay 30")),
            (&["/where"], &|s| s.contains("the overlay's bounds")),
            (&["Enter"], &|s| s.contains("bounds=")),
        ],
    );
}

#[test]
fn an_overlay_whose_visible_option_says_no_is_not_drawn_and_has_no_bounds() {
    compare(
        "jsui3_bounds_hidden",
        &[
            (&["/bounds"], &|s| s.contains("an overlay and its bounds")),
            (&["Enter"], &|s| s.contains("overlay 30")),
            (&["/vis"], &|s| s.contains("toggles the overlay")),
            (&["Enter"], &|s| s.contains("shown=false") && !s.contains("overlay 30")),
            (&["/where"], &|s| s.contains("the overlay's bounds")),
            (&["Enter"], &|s| s.contains("bounds=")),
        ],
    );
}

#[test]
fn a_completion_provider_gets_the_lines_and_the_cursor() {
    compare(
        "jsui3_complete",
        &[(&["a", "C-j", "b", "Space", "$"], &|s| s.contains("b $")), (&["Tab"], &|s| s.contains("$alpha"))],
    );
}

#[test]
fn a_completion_providers_apply_completion_decides_the_text() {
    compare(
        "jsui3_complete_apply",
        &[
            (&["a", "C-j", "b", "Space", "$"], &|s| s.contains("b $")),
            (&["Tab"], &|s| s.contains("$alpha")),
            (&["Tab"], &|s| s.contains("<ALPHA>")),
        ],
    );
}

#[test]
fn resumed_markdown_carries_entry_ids_and_cache_notices_come_back() {
    compare("jsui3_resume", &[(&[], &|s| s.contains("Cache miss after model switch"))]);
}

#[test]
fn session_info_breaks_the_cost_down_by_model() {
    compare(
        "jsui3_resume_session",
        &[(&["/session"], &|s| s.contains("→ session")), (&["Enter"], &|s| s.contains("other/big-model:"))],
    );
}

#[test]
fn the_changelog_goes_through_changelog_transformers() {
    compare(
        "jsui3_changelog",
        &[(&["/changelog"], &|s| s.contains("→ changelog")), (&["Enter"], &|s| s.contains("CHANGELOG transformed"))],
    );
}
