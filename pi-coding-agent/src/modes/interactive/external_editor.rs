//! Ctrl+G: the editor's text in an external editor (pi's `editInExternalEditor`). The TUI is
//! stopped (the terminal restored, the reader no longer reading), the text goes to
//! `<tmp>/pi-editor-XXXX/prompt.md`, the command (`externalEditor`, `$VISUAL`, `$EDITOR`, `nano`)
//! runs on the terminal with that path as its last argument, and once it exits with status 0 the
//! file's text (BOM and one final newline removed) replaces the editor's; the TUI then starts
//! again with a full redraw.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use pi_tui::{CrosstermTerminal, Tui};

use super::app::App;

/// What running the external editor came to.
enum Outcome {
    /// The editor exited with 0: the file's text.
    Complete(String),
    /// pi's status line for a failure.
    Failed(String),
}

impl App {
    /// Opens the editor's text in the external editor and takes back what was saved.
    pub(crate) fn open_external_editor(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let command = self.session.settings_manager().settings().external_editor();
        let content = self.editor.borrow().expanded_text();
        self.close_search(tui);
        if let Err(e) = tui.stop() {
            tracing::warn!(error = %e, "stopping the terminal UI for the external editor failed");
        }
        let outcome = edit_in_external_editor(&command, &content);
        match outcome {
            Outcome::Complete(text) => {
                self.editor.borrow_mut().set_text(&text);
                *self.editor_text.lock().unwrap_or_else(|e| e.into_inner()) = text;
            }
            Outcome::Failed(message) => self.show_status(&message),
        }
        if let Err(e) = tui.start() {
            self.show_error(&format!("cannot restart the terminal UI: {e}"));
        }
        tui.request_render(true);
        self.dirty = true;
    }
}

/// A fresh private directory `pi-editor-XXXXXX` in the temporary directory.
fn make_temp_dir() -> std::io::Result<PathBuf> {
    let base = std::env::temp_dir();
    loop {
        let suffix: String = uuid::Uuid::new_v4().simple().to_string().chars().take(6).collect();
        let dir = base.join(format!("pi-editor-{suffix}"));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

fn edit_in_external_editor(command: &str, content: &str) -> Outcome {
    let dir = match make_temp_dir() {
        Ok(d) => d,
        Err(e) => return Outcome::Failed(format!("Failed to launch external editor: {command} ({e})")),
    };
    let outcome = run_editor(command, content, &dir);
    if let Err(e) = std::fs::remove_dir_all(&dir) {
        tracing::warn!(error = %e, dir = %dir.display(), "removing the external editor's temporary directory failed");
    }
    outcome
}

fn run_editor(command: &str, content: &str, dir: &Path) -> Outcome {
    let file = dir.join("prompt.md");
    if let Err(e) = std::fs::write(&file, content) {
        return Outcome::Failed(format!("Failed to launch external editor: {command} ({e})"));
    }
    // pi splits the command on single spaces.
    let mut parts = command.split(' ');
    let program = parts.next().unwrap_or_default();
    let mut out = std::io::stdout();
    // The terminal is the editor's now; a failed notice changes nothing about the edit.
    let _ = write!(out, "Launching external editor: {command}\nPi will resume when the editor exits.\n");
    let _ = out.flush();
    let status = match Command::new(program).args(parts).arg(&file).status() {
        Ok(s) => s,
        Err(_) => return Outcome::Failed(format!("Failed to launch external editor: {command}")),
    };
    if !status.success() {
        let how = match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
            (Some(code), _) => format!("code {code}"),
            (None, Some(sig)) => signal_name(sig),
            (None, None) => "an unknown status".to_owned(),
        };
        return Outcome::Failed(format!("External editor exited with {how}; prompt unchanged"));
    }
    match std::fs::read_to_string(&file) {
        Ok(text) => {
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            Outcome::Complete(text.strip_suffix('\n').unwrap_or(text).to_owned())
        }
        Err(e) => Outcome::Failed(format!("Failed to read the external editor's file: {e}")),
    }
}

/// Node's name of a signal (`SIGTERM`), as pi reports an editor killed by one.
fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig).map_or_else(|_| format!("signal {sig}"), |s| s.as_str().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_saved_file_replaces_the_text_without_bom_or_final_newline() {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = dir.path().join("ed.sh");
        std::fs::write(&script, "#!/bin/sh\nprintf '\\357\\273\\277edited: %s\\n' \"$(cat \"$1\")\" > \"$1\"\n")
            .expect("script");
        let cmd = format!("sh {}", script.display());
        match edit_in_external_editor(&cmd, "draft") {
            Outcome::Complete(text) => assert_eq!(text, "edited: draft"),
            Outcome::Failed(m) => panic!("failed: {m}"),
        }
    }

    #[test]
    fn a_failing_editor_leaves_the_prompt_unchanged() {
        match edit_in_external_editor("false", "draft") {
            Outcome::Failed(m) => assert_eq!(m, "External editor exited with code 1; prompt unchanged"),
            Outcome::Complete(t) => panic!("completed with {t}"),
        }
        match edit_in_external_editor("/nonexistent/editor-xyz", "draft") {
            Outcome::Failed(m) => assert_eq!(m, "Failed to launch external editor: /nonexistent/editor-xyz"),
            Outcome::Complete(t) => panic!("completed with {t}"),
        }
    }
}
