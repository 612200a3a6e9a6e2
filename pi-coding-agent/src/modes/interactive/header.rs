//! The startup header (pi's built-in header and loaded-resources listing).

use pi_tui::Theme;
use pi_tui::keys::Keybindings;

use super::keys::key_text;

/// What the startup listing names.
#[derive(Clone, Debug, Default)]
pub struct StartupResources {
    /// Context files (AGENTS.md, …), as display paths.
    pub context_files: Vec<String>,
    /// Skill names.
    pub skills: Vec<String>,
    /// Prompt template names (without `/`).
    pub templates: Vec<String>,
    /// Extension labels (file names).
    pub extensions: Vec<String>,
}

/// pi's logo: two lines of half blocks in its brand colours (truecolor).
fn logo_lines() -> [String; 2] {
    let coral = "\x1b[38;2;228;138;122m";
    let blue_bg = "\x1b[48;2;79;142;179m";
    let blue = "\x1b[38;2;79;142;179m";
    let yellow = "\x1b[38;2;234;182;93m";
    let reset = "\x1b[0m";
    [format!("{coral}{blue_bg}▀{reset}{coral}▀█{reset} "), format!("{blue}█▀{reset} {yellow}█{reset}")]
}

fn hint(theme: &Theme, key: &str, description: &str) -> String {
    format!("{}{}", theme.fg("dim", key), theme.fg("muted", &format!(" {description}")))
}

/// The header text (collapsed form), as pi builds it.
pub(crate) fn header_text(theme: &Theme, keys: &Keybindings, version: &str) -> String {
    let [top, bottom] = logo_lines();
    let clear_exit = format!("{}/{}", key_text(keys, "app.clear"), key_text(keys, "app.exit"));
    let hints = [
        hint(theme, &key_text(keys, "app.interrupt"), "interrupt"),
        hint(theme, &clear_exit, "clear/exit"),
        hint(theme, "/", "commands"),
        hint(theme, "!", "bash"),
        hint(theme, &key_text(keys, "app.tools.expand"), "more"),
    ]
    .join(&theme.fg("muted", " · "));
    let press = theme.fg(
        "dim",
        &format!("Press {} to show full startup help and loaded resources.", key_text(keys, "app.tools.expand")),
    );
    let onboarding =
        theme.fg("dim", "Pi can explain its own features and look up its docs. Ask it how to use or extend Pi.");
    format!("{top} {}\n{bottom} {hints}\n{press}\n\n{onboarding}", theme.fg("dim", &format!("v{version}")))
}

/// The header text with the full key list (pi's expanded header, after `app.tools.expand`).
pub(crate) fn header_text_expanded(theme: &Theme, keys: &Keybindings, version: &str) -> String {
    let [top, bottom] = logo_lines();
    let k = |a: &str| key_text(keys, a);
    let lines = [
        hint(theme, &k("app.interrupt"), "to interrupt"),
        hint(theme, &k("app.clear"), "to clear"),
        hint(theme, &format!("{} twice", k("app.clear")), "to exit"),
        hint(theme, &k("app.exit"), "to exit (empty)"),
        hint(theme, &k("app.suspend"), "to suspend"),
        hint(theme, &k("tui.editor.deleteToLineEnd"), "to delete to end"),
        hint(theme, &k("app.thinking.cycle"), "to cycle thinking level"),
        hint(theme, &format!("{}/{}", k("app.model.cycleForward"), k("app.model.cycleBackward")), "to cycle models"),
        hint(theme, &k("app.model.select"), "to select model"),
        hint(theme, &k("app.tools.expand"), "to expand tools"),
        hint(theme, &k("app.thinking.toggle"), "to expand thinking"),
        hint(theme, &k("app.editor.external"), "for external editor"),
        hint(theme, "/", "for commands"),
        hint(theme, "!", "to run bash"),
        hint(theme, "!!", "to run bash (no context)"),
        hint(theme, &k("app.message.followUp"), "to queue follow-up"),
        hint(theme, &k("app.message.dequeue"), "to edit all queued messages"),
        hint(theme, &k("app.clipboard.pasteImage"), "to paste files on macOS, images, or text"),
        hint(theme, "drop files", "to attach"),
    ]
    .join("\n");
    let onboarding =
        theme.fg("dim", "Pi can explain its own features and look up its docs. Ask it how to use or extend Pi.");
    format!("{top} {}\n{bottom} {lines}\n\n{onboarding}", theme.fg("dim", &format!("v{version}")))
}

/// The loaded-resources sections (collapsed): `[Context]`, `[Skills]`, `[Prompts]`,
/// `[Extensions]`, each followed by its comma-separated list.
pub(crate) fn resource_sections(theme: &Theme, r: &StartupResources) -> Vec<String> {
    let section = |name: &str, items: Vec<String>, sort: bool| {
        let mut labels: Vec<String> =
            items.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect();
        if sort {
            labels.sort();
        }
        format!(
            "{}\n{}",
            theme.fg("mdHeading", &format!("[{name}]")),
            theme.fg("dim", &format!("  {}", labels.join(", ")))
        )
    };
    let mut out = Vec::new();
    if !r.context_files.is_empty() {
        out.push(section("Context", r.context_files.clone(), false));
    }
    if !r.skills.is_empty() {
        out.push(section("Skills", r.skills.clone(), true));
    }
    if !r.templates.is_empty() {
        out.push(section("Prompts", r.templates.iter().map(|t| format!("/{t}")).collect(), true));
    }
    if !r.extensions.is_empty() {
        out.push(section("Extensions", r.extensions.clone(), true));
    }
    out
}
