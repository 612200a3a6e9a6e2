//! The questions asked before the interactive mode starts (pi's `showStartupSelector`, used by
//! the project trust question and by extensions' `project_trust` handlers): a selector drawn on
//! the main screen with pi-tui, cleared when answered. [`StartupUi`] is the
//! [`UiHost`](crate::ui::UiHost) they are asked through.

use std::cell::RefCell;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use pi_tui::ansi::{truncate_to_width_with, wrap_text_with_ansi};
use pi_tui::keys::Keybindings;
use pi_tui::theme::bold;
use pi_tui::{ColorMode, Component, CrosstermTerminal, Lines, ScreenMode, Theme, Tui, shared};

use crate::ui::{DialogOptions, UiHost};

type Answer = Rc<RefCell<Option<Option<usize>>>>;

/// stdin for a screen that ends before the interactive mode starts: it reads only bytes that
/// are there (`FIONREAD`), straight from the descriptor, and reports end of file once stopped,
/// so no reader thread is left blocked on stdin to swallow the interactive mode's first key.
struct StoppableStdin {
    stop: Arc<AtomicBool>,
}

impl Read for StoppableStdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let stdin = std::io::stdin();
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return Ok(0);
            }
            if rustix::io::ioctl_fionread(stdin.as_fd())? > 0 {
                return Ok(rustix::io::read(stdin.as_fd(), &mut *buf)?);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// pi's `ExtensionSelectorComponent` as the startup screens draw it (the title wraps).
struct StartupSelector {
    theme: Theme,
    keys: Keybindings,
    title: String,
    options: Vec<String>,
    selected: usize,
    answer: Answer,
}

impl Component for StartupSelector {
    fn render(&mut self, width: usize) -> Lines {
        let t = &self.theme;
        let inner = width.saturating_sub(2).max(1);
        let text = |out: &mut Vec<String>, s: &str| {
            out.extend(wrap_text_with_ansi(s, inner).into_iter().map(|l| format!(" {l}")))
        };
        let border = t.fg("border", &"─".repeat(width.max(1)));
        let mut out = vec![border.clone(), String::new()];
        text(&mut out, &t.fg("accent", &bold(&self.title)));
        out.push(String::new());
        for (i, label) in self.options.iter().enumerate() {
            let row = if i == self.selected {
                format!("{}{}", t.fg("accent", "→ "), t.fg("accent", label))
            } else {
                format!("  {}", t.fg("text", label))
            };
            text(&mut out, &row);
        }
        out.push(String::new());
        let k = |a: &str| self.keys.keys(a).join("/");
        let hint = format!(
            "{}{}  {}{}  {}{}",
            t.fg("dim", "↑↓"),
            t.fg("muted", " navigate"),
            t.fg("dim", &k("tui.select.confirm")),
            t.fg("muted", " select"),
            t.fg("dim", &k("tui.select.cancel")),
            t.fg("muted", " cancel")
        );
        text(&mut out, &hint);
        out.extend([String::new(), border]);
        out.into_iter().map(|l| truncate_to_width_with(&l, width, "", false)).collect::<Vec<_>>().into()
    }

    fn handle_input(&mut self, data: &str) {
        let last = self.options.len().saturating_sub(1);
        if self.keys.matches(data, "tui.select.up") || data == "k" {
            self.selected = self.selected.saturating_sub(1);
        } else if self.keys.matches(data, "tui.select.down") || data == "j" {
            self.selected = (self.selected + 1).min(last);
        } else if self.keys.matches(data, "tui.select.confirm") || data == "\n" {
            *self.answer.borrow_mut() = Some(Some(self.selected));
        } else if self.keys.matches(data, "tui.select.cancel") {
            *self.answer.borrow_mut() = Some(None);
        }
    }
}

/// Shows the selector on the process terminal and returns the chosen index.
fn run_selector(
    agent_dir: PathBuf,
    cwd: String,
    theme: Option<String>,
    title: String,
    options: Vec<String>,
) -> Option<usize> {
    let (theme, _) = super::app::load_theme(theme.as_deref(), &agent_dir, &cwd, ColorMode::detect());
    let (keys, _) = super::keys::load_keybindings(&agent_dir);
    let answer: Answer = Rc::new(RefCell::new(None));
    let selector = shared(StartupSelector { theme, keys, title, options, selected: 0, answer: answer.clone() });
    let stop = Arc::new(AtomicBool::new(false));
    let size = || crossterm::terminal::size().map_or((80, 24), |(c, r)| (usize::from(c), usize::from(r)));
    let terminal = CrosstermTerminal::from_io(
        Box::new(StoppableStdin { stop: stop.clone() }),
        Box::new(std::io::stdout()),
        Box::new(size),
    );
    let mut tui = Tui::new(terminal, ScreenMode::Main);
    tui.add_child(selector.clone());
    tui.set_focus(Some(selector));
    let started = crossterm::terminal::enable_raw_mode()
        .map_err(|e| e.to_string())
        .and_then(|()| tui.start().map_err(|e| e.to_string()));
    if let Err(e) = started {
        tracing::warn!(error = %e, "the startup question could not be shown");
        let _ = crossterm::terminal::disable_raw_mode();
        return None;
    }
    tui.request_render(false);
    while answer.borrow().is_none() {
        if let Err(e) = tui.run_once(Duration::from_millis(16)) {
            tracing::warn!(error = %e, "the startup question failed");
            break;
        }
    }
    // pi clears the question before the interactive mode draws.
    tui.root().clear();
    let _ = tui.render_now();
    let _ = tui.stop();
    stop.store(true, Ordering::SeqCst);
    let _ = crossterm::terminal::disable_raw_mode();
    (*answer.borrow()).flatten()
}

/// The UI of the startup questions in the interactive mode (pi's `createProjectTrustContext`
/// with a UI): `select` and `confirm` draw a selector; `input` has no startup screen here and
/// answers as without a UI.
pub struct StartupUi {
    agent_dir: PathBuf,
    cwd: String,
    theme: Option<String>,
}

impl StartupUi {
    /// The startup UI of a run in `cwd`, drawn in the `theme` the settings name.
    pub fn new(agent_dir: PathBuf, cwd: String, theme: Option<String>) -> Self {
        StartupUi { agent_dir, cwd, theme }
    }

    async fn ask(&self, title: &str, options: Vec<String>) -> Option<usize> {
        let (agent_dir, cwd, theme, title) =
            (self.agent_dir.clone(), self.cwd.clone(), self.theme.clone(), title.to_owned());
        tokio::task::spawn_blocking(move || run_selector(agent_dir, cwd, theme, title, options)).await.ok().flatten()
    }
}

#[async_trait]
impl UiHost for StartupUi {
    fn has_ui(&self) -> bool {
        true
    }

    async fn select(&self, title: &str, options: &[String], _opts: DialogOptions) -> Option<String> {
        let index = self.ask(title, options.to_vec()).await?;
        options.get(index).cloned()
    }

    async fn confirm(&self, title: &str, message: &str, _opts: DialogOptions) -> bool {
        self.ask(&format!("{title}\n{message}"), vec!["Yes".into(), "No".into()]).await == Some(0)
    }
}
