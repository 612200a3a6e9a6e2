//! The rest of the JavaScript UI surface (issue 15) in the real `pi` binary in a pseudo-terminal
//! of 100×30, compared with the reference pi 1.6.0's screens recorded in tmux at the same size by
//! `tests/fixtures/interactive/record_jsui2.sh`: overlay handles (`tui.showOverlay`, `onHandle`,
//! `focus`, `setHidden`), a custom editor (`setEditorComponent`, the reference's modal editor),
//! raw input listeners (`onTerminalInput`), completion providers (`addAutocompleteProvider`),
//! redraw semantics (a component changing without asking for a frame, one asking each time), and
//! a footer reading its creation's `ctx` and pi's footer data (git branch and its change, every
//! status, provider count). The extensions are the reference's examples or `fixtures/jsui2/`.
//! Needs Node.js 22 (`js_support`), git, and the reference's examples (`anchor.sh path`, or
//! `PI_ANCHOR_DIR`).

mod cli_support;
mod interactive_support;
mod js_support;

use std::path::PathBuf;

use cli_support::{Env, ScriptedServer};
use interactive_support::{Pty, Step, dark_theme, examples_dir, play_and_compare};

/// Runs `extension` (a fixture of `fixtures/jsui2/` or a reference example), plays `steps` and
/// compares the last screen with `NAME.ref.txt`. A name with "git" runs in a git repository on
/// branch `main`, as the recording does.
fn compare(name: &str, extension: &str, steps: &[Step<'_>]) {
    if !js_support::node_available() {
        return;
    }
    let Some(examples) = examples_dir() else { return };
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jsui2").join(extension);
    let extension = if fixture.is_file() { fixture } else { examples.join(extension) };
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    if name.contains("git") {
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git").args(args).current_dir(env.proj()).status().expect("git");
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "-q", "-b", "main"]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"]);
    }
    let Some(node) = js_support::node_path() else { return };
    let node = node.to_string_lossy().into_owned();
    let extension = extension.to_string_lossy().into_owned();
    let mut pty = Pty::spawn_with(&env, &["-e", &extension], &[("PI_NODE", &node)]);
    play_and_compare(&mut pty, &env, name, &|s| s.contains("smollm2-135m") || s.contains("branch="), steps);
    pty.quit();
}

#[test]
fn on_handle_set_hidden_hides_the_overlay_and_shows_it_again() {
    compare(
        "jsui2_overlay_toggle",
        "overlay-qa-tests.ts",
        &[
            (&["/overlay-toggle", "Enter"], &|s| s.contains("Toggle Demo")),
            (&["t"], &|s| s.contains("Toggle count: 1")),
        ],
    );
}

#[test]
fn show_overlay_panels_take_the_focus_and_the_front_through_their_handles() {
    compare(
        "jsui2_overlay_focus",
        "overlay-qa-tests.ts",
        &[
            (&["/overlay-focus", "Enter"], &|s| s.contains("Focus + Input Demo")),
            (&["Tab"], &|s| s.contains("Current focus: Alpha")),
            (&["x", "y"], &|s| s.contains("xy")),
        ],
    );
}

#[test]
fn a_custom_editor_draws_over_the_built_in_one() {
    compare("jsui2_modal_insert", "modal-editor.ts", &[(&["h", "i"], &|s| s.contains("hi") && s.contains("INSERT"))]);
}

#[test]
fn a_custom_editor_passes_on_the_keys_it_chooses() {
    compare(
        "jsui2_modal_normal",
        "modal-editor.ts",
        &[
            (&["hello"], &|s| s.contains("hello")),
            (&["Escape"], &|s| s.contains("NORMAL")),
            (&["h"], &|_| true),
            (&["h"], &|_| true),
            (&["x"], &|s| s.contains("helo")),
        ],
    );
}

#[test]
fn terminal_input_listeners_transform_and_consume_keys() {
    compare(
        "jsui2_terminal_input",
        "terminal-input.ts",
        &[(&["a"], &|s| s.contains("seen 1")), (&["z", "a", "z"], &|s| s.contains("seen 4"))],
    );
}

#[test]
fn an_unsubscribed_terminal_input_listener_sees_nothing_more() {
    compare(
        "jsui2_terminal_unlisten",
        "terminal-input.ts",
        &[(&["/unlisten", "Enter"], &|s| s.contains("seen")), (&["a"], &|s| s.contains("seen 11"))],
    );
}

#[test]
fn an_autocomplete_provider_adds_its_suggestions() {
    compare("jsui2_autocomplete", "autocomplete.ts", &[(&["fix #1"], &|s| s.contains("#150"))]);
}

#[test]
fn a_component_that_changed_without_asking_shows_with_the_next_frame() {
    compare("jsui2_redraw_tick", "redraw.ts", &[(&["/tick", "Enter"], &|s| s.contains("ticked"))]);
}

#[test]
fn a_component_asking_for_frames_shows_each_change() {
    compare("jsui2_redraw_count", "redraw.ts", &[(&["/count", "Enter"], &|s| s.contains("B: 3"))]);
}

#[test]
fn a_footer_reads_the_git_branch_statuses_and_provider_count() {
    compare("jsui2_footer_git", "live-footer.ts", &[(&[], &|s| s.contains("branch=main"))]);
}

#[test]
fn a_footer_reads_the_session_as_it_is_now() {
    compare(
        "jsui2_footer_git_note",
        "live-footer.ts",
        &[(&["/note", "Enter"], &|s| s.contains("note=noted") && s.contains("entries=3"))],
    );
}

#[test]
fn a_footer_follows_a_branch_change() {
    compare("jsui2_footer_git_branch", "live-footer.ts", &[(&["/branch", "Enter"], &|s| s.contains("branch=other"))]);
}
