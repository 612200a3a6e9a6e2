//! An interactive pi-tui demo: a transcript that grows into the terminal's own scrollback, a
//! spinner, the multi-line editor with slash-command autocomplete, and an overlay.
//!
//! Run with `cargo run -p pi-tui --example tui_demo` (add `-- --alt` for the alternate screen).
//! Type text and press Enter to add it (rendered as markdown); Shift+Enter inserts a newline;
//! `/` opens command completion (`/help`, `/theme`, `/clear`, `/quit`); Ctrl+C quits.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use pi_tui::components::{AutocompleteProvider, EditorTheme, SelectListTheme};
use pi_tui::render::{OverlayOptions, SizeValue};
use pi_tui::{
    Box, ColorMode, ComponentRef, Container, CrosstermTerminal, Editor, InputAction, Loader, Markdown, MarkdownTheme,
    ScreenMode, SelectItem, SelectList, Spacer, StyleFn, Terminal, Text, Theme, Tui, TuiError, shared,
};

const COMMANDS: &[(&str, &str)] = &[
    ("/help", "show what this demo does"),
    ("/theme", "pick the dark or light theme"),
    ("/clear", "clear the transcript"),
    ("/quit", "leave the demo"),
];

struct Commands;

impl AutocompleteProvider for Commands {
    fn suggestions(&self, prefix: &str) -> Option<(Vec<SelectItem>, usize)> {
        if !prefix.starts_with('/') || prefix.contains(' ') {
            return None;
        }
        let items = COMMANDS
            .iter()
            .filter(|(c, _)| c.starts_with(prefix))
            .map(|(c, d)| SelectItem::new(*c, *c, Some(d)))
            .collect();
        Some((items, prefix.len()))
    }
}

fn fg(theme: &Rc<Theme>, token: &'static str) -> StyleFn {
    let t = theme.clone();
    Rc::new(move |s: &str| t.fg(token, s))
}

fn list_theme(theme: &Rc<Theme>) -> SelectListTheme {
    SelectListTheme {
        selected_text: fg(theme, "accent"),
        description: fg(theme, "muted"),
        scroll_info: fg(theme, "muted"),
        no_match: fg(theme, "muted"),
    }
}

/// A user message: a padded box with the user-message background around markdown.
fn user_message(theme: &Rc<Theme>, text: &str) -> ComponentRef {
    let t = theme.clone();
    let mut b = Box::new(1, 1, Some(Rc::new(move |s: &str| t.bg("userMessageBg", s))));
    b.add_child(shared(Markdown::new(text, 0, 0, MarkdownTheme::from_theme(theme))));
    let mut c = Container::new();
    c.add_child(shared(Spacer::new(1)));
    c.add_child(shared(b));
    shared(c)
}

fn main() -> Result<(), TuiError> {
    let alt = std::env::args().any(|a| a == "--alt");
    let mode = ColorMode::detect();
    let theme = Rc::new(Theme::dark(mode)?);
    let mut tui = Tui::new(CrosstermTerminal::new(), if alt { ScreenMode::Alt } else { ScreenMode::Main });

    let header = format!(
        "{} {}",
        theme.fg("accent", "pi-tui demo"),
        theme.fg("muted", "— Enter to send, Shift+Enter for a newline, / for commands, Ctrl+C to quit")
    );
    tui.add_child(shared(Text::new(header, 1, 0)));
    let transcript = Rc::new(RefCell::new(Container::new()));
    tui.add_child(transcript.clone());
    let loader = shared(Loader::new(fg(&theme, "accent"), fg(&theme, "muted"), "Waiting for input..."));
    tui.add_child(loader.clone());

    let submitted = Rc::new(RefCell::new(Vec::<String>::new()));
    let mut editor = Editor::new(EditorTheme { border_color: fg(&theme, "border"), select_list: list_theme(&theme) });
    editor.set_terminal_rows(tui.terminal().rows());
    editor.set_autocomplete_provider(Rc::new(Commands));
    let sink = submitted.clone();
    editor.on_submit = Some(std::boxed::Box::new(move |t: &str| sink.borrow_mut().push(t.to_string())));
    let editor = shared(editor);
    tui.add_child(editor.clone());
    tui.set_focus(Some(editor.clone()));

    let quit = Rc::new(RefCell::new(false));
    let q = quit.clone();
    tui.add_input_listener(move |data| {
        if pi_tui::keys::matches_key(data, "ctrl+c") {
            *q.borrow_mut() = true;
            return InputAction::Consume;
        }
        InputAction::Pass
    });

    tui.start()?;
    let mut theme_picker: Option<(pi_tui::OverlayId, Rc<RefCell<Option<String>>>)> = None;
    let result = (|| -> Result<(), TuiError> {
        while !*quit.borrow() {
            tui.run_once(Duration::from_millis(16))?;
            if loader.borrow_mut().tick_if_due(Instant::now()) {
                tui.request_render(false);
            }
            if let Some((id, choice)) = &theme_picker {
                let picked = choice.borrow_mut().take();
                if let Some(name) = picked {
                    let id = *id;
                    theme_picker = None;
                    tui.hide_overlay(id);
                    tui.set_focus(Some(editor.clone()));
                    if !name.is_empty() {
                        let text = format!("Theme **{name}** selected (this demo keeps its colours).");
                        transcript.borrow_mut().add_child(user_message(&theme, &text));
                    }
                }
            }
            let messages: Vec<String> = submitted.borrow_mut().drain(..).collect();
            for m in messages {
                match m.as_str() {
                    "/quit" => *quit.borrow_mut() = true,
                    "/clear" => {
                        transcript.borrow_mut().clear();
                        tui.request_render(true);
                    }
                    "/theme" => {
                        let items = vec![
                            SelectItem::new("dark", "dark", Some("built-in")),
                            SelectItem::new("light", "light", Some("built-in")),
                        ];
                        let list = Rc::new(RefCell::new(SelectList::new(items, 5, list_theme(&theme))));
                        let choice = Rc::new(RefCell::new(None));
                        let (c1, c2) = (choice.clone(), choice.clone());
                        list.borrow_mut().on_select =
                            Some(std::boxed::Box::new(move |i: &SelectItem| *c1.borrow_mut() = Some(i.value.clone())));
                        list.borrow_mut().on_cancel =
                            Some(std::boxed::Box::new(move || *c2.borrow_mut() = Some(String::new())));
                        let opts = OverlayOptions { width: Some(SizeValue::Abs(40)), ..Default::default() };
                        let id = tui.show_overlay(list.clone(), opts);
                        theme_picker = Some((id, choice));
                    }
                    "/help" => {
                        let help = "**pi-tui demo**\n\n- components render to *lines*\n- the main-screen renderer rewrites only changed lines\n- `/theme` opens an overlay\n\n```rust\nfn main() { println!(\"hello\"); }\n```";
                        transcript.borrow_mut().add_child(user_message(&theme, help));
                    }
                    text if !text.is_empty() => transcript.borrow_mut().add_child(user_message(&theme, text)),
                    _ => {}
                }
                loader.borrow_mut().set_message(format!("{} messages so far", transcript.borrow().children().len()));
                tui.request_render(false);
            }
        }
        Ok(())
    })();
    tui.stop()?;
    result
}
