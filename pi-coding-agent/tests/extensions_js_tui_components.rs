//! pi-tui's components in the JavaScript host (issue 15) beside pi-tui 1.6.0's own: the
//! reference's package and the host's shim build the same SelectList, Input, Editor,
//! SettingsList, Loader, CancellableLoader, TruncatedText, Text, Box, Spacer and Container, get the
//! same keys (editing, cursor movement, history, paste, undo, kill ring, filters, pages, submit,
//! cancel, loader frames) and render at the same widths; `fixtures/jstui/compare.mjs` prints every
//! frame where the lines differ. Needs Node.js 22 (`js_support`) and the reference
//! (`anchor.sh path`, or `PI_ANCHOR_DIR`).

mod cli_support;
mod interactive_support;
mod js_support;

use std::path::PathBuf;
use std::process::Command;

use cli_support::{Env, ScriptedServer};
use interactive_support::{Pty, dark_theme};

/// The reference's pi-tui entry, or `None` (skip; a failure under CI).
fn reference_pi_tui() -> Option<PathBuf> {
    let root = std::env::var_os("PI_ANCHOR_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/pi-anchor")))?;
    let entry = root.join("node_modules/@earendil-works/pi-tui/dist/index.js");
    if entry.is_file() {
        return Some(entry);
    }
    assert!(std::env::var_os("CI").is_none(), "the reference pi 1.6.0 is missing: CI must install it");
    eprintln!("SKIP: the reference's pi-tui is not installed (anchor.sh path or PI_ANCHOR_DIR)");
    None
}

/// Runs the comparison for `scenarios` (all when empty) and returns its report.
fn compare(scenarios: &[&str]) -> Option<(bool, String)> {
    if !js_support::node_available() {
        return None;
    }
    let reference = reference_pi_tui()?;
    let node = js_support::node_path()?;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(node)
        .arg(root.join("tests/fixtures/jstui/compare.mjs"))
        .arg(&reference)
        .arg(root.join("js-host/shims/pi-tui.mjs"))
        .args(scenarios)
        .output()
        .expect("run node");
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    Some((output.status.success(), report))
}

fn assert_same(scenarios: &[&str]) {
    let Some((ok, report)) = compare(scenarios) else { return };
    assert!(ok && report.trim().is_empty(), "frames that differ from pi-tui 1.6.0's:\n{report}");
}

#[test]
fn select_lists_scroll_filter_and_draw_descriptions_as_pi_tui() {
    assert_same(&["select_desc", "select_plain", "select_filter", "select_truncate"]);
}

#[test]
fn inputs_edit_scroll_and_draw_their_cursor_as_pi_tui() {
    assert_same(&["input_edit", "input_wide", "input_kitty"]);
}

#[test]
fn editors_wrap_move_remember_history_and_submit_as_pi_tui() {
    assert_same(&["editor_basic", "editor_history", "editor_tall", "editor_unfocused", "editor_paste", "editor_wrap"]);
}

#[test]
fn settings_lists_cycle_values_search_and_open_submenus_as_pi_tui() {
    assert_same(&["settings", "settings_search", "settings_submenu"]);
}

#[test]
fn loaders_draw_their_frames_and_abort_as_pi_tui() {
    assert_same(&["loader", "loader_custom", "cancellable"]);
}

#[test]
fn text_boxes_spacers_and_truncated_text_draw_as_pi_tui() {
    assert_same(&["truncated", "text_box", "fuzzy"]);
}

/// The comparison itself can fail: a scenario of a different component is told apart.
#[test]
fn the_comparison_reports_a_frame_that_differs() {
    let Some((ok, report)) = compare(&["self_check"]) else { return };
    assert!(!ok && report.contains("\"scenario\":\"self_check\""), "{report}");
}

/// pi-tui's Image: the capabilities detected from the terminal's environment (Kitty, iTerm2,
/// tmux, screen, overrides), the Kitty sequence (chunked past 4096 bytes) and its blank rows, the
/// iTerm2 sequence after its cursor-up, the transcoder for non-PNG on Kitty, and the text fallback
/// on a plain terminal, byte for byte.
#[test]
fn images_draw_kitty_iterm2_and_fallback_bytes_as_pi_tui() {
    assert_same(&["image"]);
}

/// The Editor's autocomplete (`setAutocompleteProvider`): `/` commands and their arguments, `@`
/// (quoted too), `#` and a provider's own trigger characters, Tab (forced file completion, a
/// single match applied at once, `shouldTriggerFileCompletion`), arrows and pages in the list,
/// Enter and Tab applying, Enter on a command name submitting, Escape, re-asking on typing,
/// deleting and sideways moves, the `@` debounce, async providers whose stale answers are dropped,
/// undo of a completion, and the list drawn under the editor, frame by frame.
#[test]
fn editor_autocomplete_opens_filters_applies_and_closes_as_pi_tui() {
    assert_same(&["ac_slash", "ac_symbols", "ac_async"]);
}

/// An fd on PATH (`fd`, or Debian's `fdfind`), for the `@` cases.
fn fd_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["fd", "fdfind"].map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// pi-tui's `CombinedAutocompleteProvider` in the host (`shims/pi-tui/autocomplete.mjs`) answers
/// as pi-tui 1.6.0's (`fixtures/jstui/compare_autocomplete.mjs`, the same questions to both over
/// the same temp folder and HOME): slash commands (fuzzy, `skill:` names, hints), their argument
/// completions (sync, async, empty, not an array), path completion (`./`, `../`, `~/`, absolute,
/// `/`, quoted paths with spaces, wrappers, `=`, CJK punctuation, links, forced with Tab), `@`
/// attachments through fd (names, paths, quoted, scoped folders, `.git` left out, aborted) and
/// without fd (none, as pi), `applyCompletion` of their items and of hand-made ones (text after
/// the cursor, closing quotes, folders) and `shouldTriggerFileCompletion`, errors included.
#[test]
fn the_combined_autocomplete_provider_answers_as_pi_tui() {
    if !js_support::node_available() {
        return;
    }
    let Some(reference) = reference_pi_tui() else { return };
    let Some(node) = js_support::node_path() else { return };
    let fd = fd_on_path();
    if fd.is_none() {
        eprintln!("SKIP (in part): no fd on PATH (Debian: fd-find); only the cases without fd run");
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut command = Command::new(node);
    command
        .arg(root.join("tests/fixtures/jstui/compare_autocomplete.mjs"))
        .arg(&reference)
        .arg(root.join("js-host/shims/pi-tui.mjs"));
    if let Some(fd) = &fd {
        command.env("FD", fd);
    }
    let output = command.output().expect("run node");
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && report.trim().is_empty(), "answers that differ from pi-tui 1.6.0's:\n{report}");
}

/// An unmodified extension imports `CombinedAutocompleteProvider` from pi-tui and gives it to an
/// Editor in its custom component: Tab after `./al` lists the cwd's entries (folders first), Tab
/// applies the selected one, and Enter submits.
#[test]
fn an_extension_editor_completes_paths_with_the_combined_provider_in_the_terminal() {
    if !js_support::node_available() {
        return;
    }
    let Some(node) = js_support::node_path() else { return };
    let server = ScriptedServer::start_replies(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    std::fs::create_dir(env.proj().join("alpine")).expect("a folder");
    std::fs::write(env.proj().join("alpha.txt"), "a").expect("a file");
    let extension = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jstui/autocomplete.ts");
    let (node, extension) = (node.to_string_lossy().into_owned(), extension.to_string_lossy().into_owned());
    let mut pty = Pty::spawn_with(&env, &["-e", &extension], &[("PI_NODE", &node)]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    pty.send("/ac-combined");
    pty.wait_for("the command in the list", |s| s.contains("combined provider"));
    pty.send("\r");
    pty.wait_for("the command's editor", |s| !s.contains("combined provider"));
    pty.send("see ./al");
    pty.wait_for("the text", |s| s.contains("see ./al"));
    pty.send("\t");
    let rows = |s: &str| s.lines().map(str::trim_end).map(str::to_owned).collect::<Vec<_>>();
    pty.wait_for("the entries under the editor", |s| {
        let rows = rows(s);
        let at = |p: &str| rows.iter().position(|r| r.starts_with(p));
        matches!((at("→ alpine/"), at("  alpha.txt")), (Some(a), Some(b)) if a < b)
    });
    pty.send("\t");
    pty.wait_for("the folder applied", |s| rows(s).iter().any(|r| r == "see ./alpine/"));
    pty.send("\r");
    pty.wait_for("the submitted text", |s| s.contains("submitted: see ./alpine/"));
    pty.quit();
}

/// pi-tui 1.6.0's Markdown lines at `width` for `fixtures/jstui/markdown_calls_theme.mjs`.
fn reference_markdown_calls(node: &std::path::Path, reference: &std::path::Path, width: usize) -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(node)
        .arg(root.join("tests/fixtures/jstui/record_markdown_calls.mjs"))
        .arg(reference)
        .arg(width.to_string())
        .output()
        .expect("run node");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).expect("the reference's lines");
    let lines = answer["cases"][0]["lines"].as_array().expect("lines");
    lines.iter().map(|l| l.as_str().unwrap_or_default().trim_end().to_owned()).collect()
}

/// A Markdown in an extension's custom component whose theme functions are not wraps (upper-
/// casing, bracketing each word, replacing spaces, nested in headings and quotes) and whose
/// `highlightCode` is the extension's own: the interactive mode draws the reference's lines.
#[test]
fn markdown_theme_functions_and_highlight_code_draw_in_the_terminal_as_pi_tui() {
    if !js_support::node_available() {
        return;
    }
    let Some(reference) = reference_pi_tui() else { return };
    let Some(node) = js_support::node_path() else { return };
    let want = reference_markdown_calls(&node, &reference, 100);
    assert!(want.iter().any(|l| l.contains("rust1|    PRINTLN!")), "{want:?}");
    let server = ScriptedServer::start_replies(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let extension = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jstui/markdown_calls.ts");
    let (node, extension) = (node.to_string_lossy().into_owned(), extension.to_string_lossy().into_owned());
    let mut pty = Pty::spawn_with(&env, &["-e", &extension], &[("PI_NODE", &node)]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    pty.send("/md-calls");
    pty.wait_for("the command in the list", |s| s.contains("Markdown with theme functions"));
    pty.send("\r");
    let shows = |screen: &str| {
        let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
        rows.windows(want.len()).any(|w| w.iter().zip(&want).all(|(row, line)| row == line))
    };
    pty.wait_for("the reference's Markdown lines, in order", shows);
    pty.send("\x1b[113;5u");
    pty.wait_for("the component closed", |s| s.contains("closed"));
    pty.quit();
}

/// The Editor's autocomplete in the interactive mode: an extension's Editor in a custom component
/// with an async provider shows its list under the editor once the answer comes, Down moves in
/// it, Tab applies the completion and Enter submits the text.
#[test]
fn an_extension_editor_shows_and_applies_its_autocomplete_in_the_terminal() {
    if !js_support::node_available() {
        return;
    }
    let Some(node) = js_support::node_path() else { return };
    let server = ScriptedServer::start_replies(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let extension = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jstui/autocomplete.ts");
    let (node, extension) = (node.to_string_lossy().into_owned(), extension.to_string_lossy().into_owned());
    let mut pty = Pty::spawn_with(&env, &["-e", &extension], &[("PI_NODE", &node)]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    pty.send("/ac-editor");
    pty.wait_for("the command in the list", |s| s.contains("Editor with autocomplete"));
    pty.send("\r");
    pty.wait_for("the command's editor", |s| !s.contains("Editor with autocomplete"));
    pty.send("see @al");
    let rows = |s: &str| s.lines().map(str::trim_end).map(str::to_owned).collect::<Vec<_>>();
    let screen = pty.wait_for("the list under the editor", |s| {
        rows(s).windows(3).any(|w| w[0] == "see @al" && w[2].starts_with("→ alpha") && w[2].contains("the word alpha"))
    });
    assert!(rows(&screen).iter().any(|r| r.starts_with("  alps") && r.contains("the word alps")), "{screen}");
    assert!(!screen.contains("beta"), "{screen}");
    pty.send("\x1b[B");
    pty.wait_for("the second word selected", |s| rows(s).iter().any(|r| r.starts_with("→ alps")));
    pty.send("\t");
    pty.wait_for("the completion applied, the list closed", |s| {
        rows(s).iter().any(|r| r == "see alps") && !s.contains("the word")
    });
    pty.send("\r");
    pty.wait_for("the submitted text", |s| s.contains("submitted: see alps"));
    pty.quit();
}
