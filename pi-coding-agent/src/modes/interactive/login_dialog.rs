//! pi's `LoginDialogComponent`: the dialog a login runs in, in place of the editor. A border, the
//! title ("Login to Anthropic"), the flow's content (the sign-in URL with its hints, the device
//! code, prompts with their input, info, progress, waiting lines), a border. A selection prompt
//! (Amazon Bedrock's method) shows pi's extension selector in the dialog's place until answered.
//!
//! The login runs on a task: it changes a [`DialogModel`] (`Send`) through a [`DialogInteraction`]
//! and asks for a frame; the [`LoginDialog`] component draws the model on the UI thread and
//! answers the waiting prompt from the keys it gets.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pi_tui::keys::Keybindings;
use pi_tui::theme::bold;
use pi_tui::{Component, Input, Lines, Text, Theme, TruncatedText};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::app::UiEvent;
use super::dialogs::{DoneCell, Selector};
use super::host::UiRequest;
use crate::auth::login::{AuthEvent, AuthInfoLink, AuthInteraction, AuthPrompt, LoginError};

/// The hint lines of the dialog, drawn with the bindings in force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Hint {
    /// `(escape to cancel)`.
    Cancel,
    /// `(escape to cancel, enter to submit)`.
    CancelSubmit,
    /// `(escape to close)`.
    Close,
    /// `(enter <label>)` under a device code.
    Confirm(String),
}

/// One child of the dialog's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// An empty line.
    Spacer,
    /// A line of text (wrapped, one column of padding) in a theme colour (`None`: unstyled).
    Line(Option<&'static str>, String),
    /// The sign-in URL, its click hint and its copy hint (or the copy's result).
    AuthUrl { url: String, copied: bool },
    /// A key hint.
    Hint(Hint),
    /// The device code's action status after Enter ("Code copied to clipboard").
    Status(String),
    /// The input of the waiting prompt.
    Input,
}

/// The device code the dialog offers to copy and open on Enter.
#[derive(Clone, Debug)]
struct DeviceAction {
    user_code: String,
    verification_uri: String,
    open_browser: bool,
    copy_code: bool,
}

/// A selection prompt waiting on the dialog.
#[derive(Clone, Debug)]
pub(crate) struct SelectPrompt {
    message: String,
    labels: Vec<String>,
}

/// What the dialog shows; shared between the login task and the component.
#[derive(Debug, Default)]
pub(crate) struct DialogModel {
    title: String,
    parts: Vec<Part>,
    answer: Option<oneshot::Sender<Option<String>>>,
    select: Option<SelectPrompt>,
    device: Option<DeviceAction>,
    aborted: bool,
    /// Set when the input must start empty again.
    reset_input: bool,
}

/// The model shared by the task and the component.
pub(crate) type SharedModel = Arc<Mutex<DialogModel>>;

fn lock(model: &SharedModel) -> std::sync::MutexGuard<'_, DialogModel> {
    model.lock().unwrap_or_else(|e| e.into_inner())
}

/// A web URL (http or https) pi opens and links; `None` for anything else.
fn web_url(url: &str) -> Option<String> {
    let lower = url.to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then(|| url.to_owned())
}

/// Control characters shown as `?` in a URL that is not a web URL (pi's `replaceControlCharacters`).
fn display_url(url: &str) -> String {
    web_url(url).unwrap_or_else(|| url.chars().map(|c| if c.is_control() { '?' } else { c }).collect())
}

impl DialogModel {
    /// A dialog titled `title` ("Login to Groq", "Amazon Bedrock setup").
    pub(crate) fn new(title: &str) -> SharedModel {
        Arc::new(Mutex::new(DialogModel { title: title.to_owned(), ..Default::default() }))
    }

    fn clear_device_action(&mut self) {
        self.device = None;
        if let Some(at) = self.parts.iter().position(|p| matches!(p, Part::Hint(Hint::Confirm(_)) | Part::Status(_))) {
            self.parts.remove(at);
        }
    }

    /// pi's `showAuth`: the URL (opened in the browser) and the provider's instructions.
    fn show_auth(&mut self, url: &str, instructions: Option<&str>) {
        self.clear_device_action();
        self.parts = vec![Part::Spacer, Part::AuthUrl { url: display_url(url), copied: false }];
        if let Some(text) = instructions {
            self.parts.push(Part::Spacer);
            self.parts.push(Part::Line(Some("warning"), text.to_owned()));
        }
        if let Some(target) = web_url(url) {
            crate::mcp::oauth_cli::open_browser(&target);
        }
    }

    /// pi's `showDeviceCode`.
    fn show_device_code(&mut self, action: DeviceAction) {
        self.clear_device_action();
        let shown = display_url(&action.verification_uri);
        self.parts = vec![
            Part::Spacer,
            Part::Line(Some("accent"), shown),
            Part::Line(Some("dim"), "Ctrl+click to open".into()),
            Part::Spacer,
            Part::Line(Some("warning"), format!("Enter code: {}", action.user_code)),
        ];
        if !self.aborted && (action.open_browser || action.copy_code) {
            let label = match (action.open_browser, action.copy_code) {
                (true, true) => "to open browser and copy code",
                (true, false) => "to open browser",
                _ => "to copy code",
            };
            self.parts.push(Part::Hint(Hint::Confirm(label.into())));
            self.device = Some(action);
        }
    }

    /// pi's `showPrompt` and `showManualInput`.
    fn show_prompt(&mut self, message: &str, placeholder: Option<&str>, manual: bool) {
        self.clear_device_action();
        self.parts.push(Part::Spacer);
        if manual {
            self.parts.push(Part::Line(Some("dim"), message.to_owned()));
        } else {
            self.parts.push(Part::Line(Some("text"), message.to_owned()));
            if let Some(p) = placeholder {
                self.parts.push(Part::Line(Some("dim"), format!("e.g., {p}")));
            }
        }
        self.parts.push(Part::Input);
        self.parts.push(Part::Hint(if manual { Hint::Cancel } else { Hint::CancelSubmit }));
        self.reset_input = true;
    }

    /// pi's `showInfo`.
    fn show_info(&mut self, message: &str, links: &[AuthInfoLink], close_hint: bool) {
        self.parts.push(Part::Spacer);
        self.parts.push(Part::Line(Some("text"), message.to_owned()));
        for link in links {
            let url = display_url(&link.url);
            let text = match &link.label {
                Some(label) => format!("{label}: {url}"),
                None => url,
            };
            self.parts.push(Part::Line(Some("accent"), text));
        }
        if close_hint {
            self.parts.push(Part::Spacer);
            self.parts.push(Part::Hint(Hint::Close));
        }
    }

    /// pi's `showDetails`: the content replaced by these lines (already styled).
    pub(crate) fn show_details(&mut self, lines: Vec<(Option<&'static str>, String)>) {
        self.clear_device_action();
        self.parts = std::iter::once(Part::Spacer).chain(lines.into_iter().map(|(t, l)| Part::Line(t, l))).collect();
    }

    /// pi's `showWaiting`.
    fn show_waiting(&mut self, message: &str) {
        self.parts.push(Part::Spacer);
        self.parts.push(Part::Line(Some("dim"), message.to_owned()));
        self.parts.push(Part::Hint(Hint::Cancel));
    }

    /// The dialog's `cancel`: the flow is aborted and the waiting prompt rejected.
    fn cancel(&mut self, token: &CancellationToken) {
        self.clear_device_action();
        self.aborted = true;
        token.cancel();
        self.select = None;
        if let Some(answer) = self.answer.take() {
            let _ = answer.send(None);
        }
    }
}

/// An [`AuthInteraction`] on a login dialog: prompts wait for the component's answer, events
/// change what it shows.
pub(crate) struct DialogInteraction {
    model: SharedModel,
    cancel: CancellationToken,
    tx: UnboundedSender<UiEvent>,
    dismissed: std::sync::atomic::AtomicBool,
}

impl DialogInteraction {
    /// The interaction of the dialog drawing `model`; `tx` asks the UI for frames.
    pub(crate) fn new(model: SharedModel, cancel: CancellationToken, tx: UnboundedSender<UiEvent>) -> Self {
        DialogInteraction { model, cancel, tx, dismissed: Default::default() }
    }

    /// Whether the user dismissed a prompt (pi: "Login cancelled"), as opposed to closing the
    /// dialog while the flow waited on the provider.
    pub(crate) fn prompt_dismissed(&self) -> bool {
        self.dismissed.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn redraw(&self) {
        let _ = self.tx.send(UiEvent::Ui(UiRequest::Redraw));
    }
}

#[async_trait]
impl AuthInteraction for DialogInteraction {
    async fn prompt(&self, prompt: AuthPrompt) -> Result<String, LoginError> {
        if self.cancel.is_cancelled() {
            return Err(LoginError::Cancelled);
        }
        let (tx, rx) = oneshot::channel();
        let ids = {
            let mut model = lock(&self.model);
            model.answer = Some(tx);
            match prompt {
                AuthPrompt::Select { message, options } => {
                    let labels = options.iter().map(|o| o.label.clone()).collect();
                    model.select = Some(SelectPrompt { message, labels });
                    Some(options)
                }
                AuthPrompt::ManualCode { message, placeholder } => {
                    model.show_prompt(&message, placeholder.as_deref(), true);
                    None
                }
                AuthPrompt::Text { message, placeholder } | AuthPrompt::Secret { message, placeholder } => {
                    model.show_prompt(&message, placeholder.as_deref(), false);
                    None
                }
            }
        };
        self.redraw();
        let answer = tokio::select! {
            answer = rx => answer.ok().flatten(),
            () = self.cancel.cancelled() => None,
        };
        let Some(answer) = answer else {
            self.dismissed.store(true, std::sync::atomic::Ordering::Relaxed);
            return Err(LoginError::Cancelled);
        };
        match ids {
            Some(options) => options.into_iter().find(|o| o.label == answer).map(|o| o.id).ok_or(LoginError::Cancelled),
            None => Ok(answer),
        }
    }

    fn notify(&self, event: AuthEvent) {
        {
            let mut model = lock(&self.model);
            match event {
                AuthEvent::AuthUrl { url, instructions } => model.show_auth(&url, instructions.as_deref()),
                AuthEvent::DeviceCode {
                    user_code,
                    verification_uri,
                    open_browser_on_confirm,
                    copy_code_on_confirm,
                    ..
                } => {
                    model.show_device_code(DeviceAction {
                        user_code,
                        verification_uri,
                        open_browser: open_browser_on_confirm,
                        copy_code: copy_code_on_confirm,
                    });
                    model.show_waiting("Waiting for authentication...");
                }
                AuthEvent::Info { message, links } => model.show_info(&message, &links, false),
                AuthEvent::Progress { message } => model.parts.push(Part::Line(Some("dim"), message)),
            }
        }
        self.redraw();
    }

    fn cancel(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

/// Puts `text` on the clipboard through the terminal (OSC 52), as `/copy` does.
fn copy_to_clipboard(text: &str) {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let _ = std::io::Write::write_all(&mut std::io::stdout(), format!("\x1b]52;c;{b64}\x07").as_bytes());
}

/// pi's `keyHint(action, description)`.
fn key_hint(theme: &Theme, keys: &Keybindings, action: &str, description: &str) -> String {
    format!("{}{}", theme.fg("dim", &keys.keys(action).join("/")), theme.fg("muted", &format!(" {description}")))
}

/// The component drawing a [`DialogModel`].
pub(crate) struct LoginDialog {
    theme: Rc<Theme>,
    keys: Rc<Keybindings>,
    model: SharedModel,
    cancel: CancellationToken,
    input: Input,
    selector: Option<(Selector, DoneCell)>,
    focused: bool,
}

impl LoginDialog {
    pub(crate) fn new(theme: Rc<Theme>, keys: Rc<Keybindings>, model: SharedModel, cancel: CancellationToken) -> Self {
        LoginDialog { theme, keys, model, cancel, input: Input::default(), selector: None, focused: true }
    }

    /// The extension selector of a waiting selection prompt, made on first need.
    fn sync_selector(&mut self) {
        let prompt = lock(&self.model).select.clone();
        match prompt {
            Some(p) if self.selector.is_none() => {
                let done: DoneCell = Rc::new(RefCell::new(None));
                let options = p.labels.iter().map(|l| (l.clone(), l.clone())).collect();
                let selector =
                    Selector::new(self.theme.clone(), self.keys.clone(), &p.message, options, false, done.clone());
                self.selector = Some((selector, done));
            }
            None => self.selector = None,
            _ => {}
        }
    }

    fn part_lines(&mut self, part: &Part, width: usize, out: &mut Vec<String>) {
        let t = &self.theme.clone();
        let text = |s: String, out: &mut Vec<String>| out.extend(Text::new(s, 1, 0).render(width).iter().cloned());
        match part {
            Part::Spacer => out.push(String::new()),
            Part::Line(token, s) => text(token.map_or_else(|| s.clone(), |k| t.fg(k, s)), out),
            Part::AuthUrl { url, copied } => {
                text(t.fg("accent", url), out);
                let suffix = if *copied {
                    t.fg("success", "Copied URL to clipboard")
                } else {
                    key_hint(t, &self.keys, "app.message.copy", "to copy")
                };
                text(format!("{} {} {suffix}", t.fg("dim", "Ctrl+click to open"), t.fg("dim", "•")), out);
            }
            Part::Hint(hint) => {
                let k = |a: &str, d: &str| key_hint(t, &self.keys, a, d);
                let line = match hint {
                    Hint::Cancel => format!("({})", k("tui.select.cancel", "to cancel")),
                    Hint::CancelSubmit => {
                        format!("({} {})", k("tui.select.cancel", "to cancel,"), k("tui.select.confirm", "to submit"))
                    }
                    Hint::Close => format!("({})", k("tui.select.cancel", "to close")),
                    Hint::Confirm(label) => {
                        let line = format!("({})", k("tui.select.confirm", label));
                        out.extend(TruncatedText::new(line, 1, 0).render(width).iter().cloned());
                        return;
                    }
                };
                text(line, out);
            }
            Part::Status(s) => out.extend(TruncatedText::new(t.fg("dim", s), 1, 0).render(width).iter().cloned()),
            Part::Input => {
                let mut input = self.input.render(width).to_vec();
                out.append(&mut input);
            }
        }
    }

    /// Enter on a device code: copy it and open the verification page (pi's `activateDeviceCode`).
    fn activate_device_code(&mut self, action: DeviceAction) {
        let status = if action.copy_code {
            copy_to_clipboard(&action.user_code);
            "Code copied to clipboard"
        } else {
            "Browser open requested"
        };
        if action.open_browser
            && let Some(target) = web_url(&action.verification_uri)
        {
            crate::mcp::oauth_cli::open_browser(&target);
        }
        let mut model = lock(&self.model);
        if let Some(at) = model.parts.iter().position(|p| matches!(p, Part::Hint(Hint::Confirm(_)))) {
            model.parts[at] = Part::Status(status.to_owned());
        }
    }

    fn submit(&mut self) {
        let value = self.input.value().to_owned();
        let mut model = lock(&self.model);
        let Some(answer) = model.answer.take() else { return };
        if let Some(at) = model.parts.iter().position(|p| *p == Part::Input) {
            model.parts[at] = Part::Line(None, format!("> {value}"));
        }
        let _ = answer.send(Some(value));
    }
}

impl Component for LoginDialog {
    fn render(&mut self, width: usize) -> Lines {
        self.sync_selector();
        if let Some((selector, _)) = self.selector.as_mut() {
            return selector.render(width);
        }
        {
            let mut model = lock(&self.model);
            if std::mem::take(&mut model.reset_input) {
                self.input.set_value("");
            }
        }
        let t = self.theme.clone();
        let border = t.fg("border", &"─".repeat(width.max(1)));
        let model = lock(&self.model);
        let mut lines = vec![border.clone()];
        lines.extend(Text::new(t.fg("accent", &bold(&model.title)), 1, 0).render(width).iter().cloned());
        let parts = model.parts.clone();
        drop(model);
        for part in &parts {
            self.part_lines(part, width, &mut lines);
        }
        lines.push(border);
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        self.sync_selector();
        if let Some((selector, done)) = self.selector.as_mut() {
            selector.handle_input(data);
            let result = done.borrow_mut().take();
            if let Some(result) = result {
                let mut model = lock(&self.model);
                model.select = None;
                if let Some(answer) = model.answer.take() {
                    let _ = answer.send(result);
                }
                drop(model);
                self.selector = None;
            }
            return;
        }
        let kb = self.keys.clone();
        if kb.matches(data, "tui.select.cancel") {
            lock(&self.model).cancel(&self.cancel);
            return;
        }
        let (url, device, waiting) = {
            let model = lock(&self.model);
            let url = model.parts.iter().find_map(|p| match p {
                Part::AuthUrl { url, .. } => Some(url.clone()),
                _ => None,
            });
            (url, model.device.clone(), model.answer.is_some())
        };
        if let Some(url) = url.filter(|_| kb.matches(data, "app.message.copy")) {
            copy_to_clipboard(&url);
            let mut model = lock(&self.model);
            for part in model.parts.iter_mut() {
                if let Part::AuthUrl { copied, .. } = part {
                    *copied = true;
                }
            }
            return;
        }
        if let Some(action) = device.filter(|_| !waiting && self.focused && kb.matches(data, "tui.select.confirm")) {
            lock(&self.model).device = None;
            self.activate_device_code(action);
            return;
        }
        if waiting && (kb.matches(data, "tui.input.submit") || data == "\n") {
            self.submit();
            return;
        }
        if waiting {
            self.input.handle_input(data);
        }
    }

    fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
        self.input.set_focused(focused);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(lines: &[String]) -> Vec<String> {
        lines.iter().map(|l| pi_tui::ansi::strip_terminal_sequences(l).trim_end().to_owned()).collect()
    }

    #[test]
    fn a_device_code_shows_the_code_the_hint_and_the_wait() {
        let model = DialogModel::new("Login to Kimi For Coding");
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let interaction = DialogInteraction::new(model.clone(), CancellationToken::new(), tx);
        interaction.notify(AuthEvent::DeviceCode {
            user_code: "KIMI-42".into(),
            verification_uri: "https://www.kimi.com/code".into(),
            open_browser_on_confirm: true,
            copy_code_on_confirm: true,
            interval_seconds: None,
            expires_in_seconds: None,
        });
        let mut dialog = LoginDialog::new(
            Rc::new(Theme::dark(pi_tui::ColorMode::Truecolor).unwrap()),
            Rc::new(Keybindings::default()),
            model.clone(),
            CancellationToken::new(),
        );
        let lines = strip(&dialog.render(60));
        assert_eq!(lines[1], " Login to Kimi For Coding");
        assert!(lines.contains(&" Enter code: KIMI-42".to_owned()), "{lines:?}");
        assert!(lines.contains(&" (enter to open browser and copy code)".to_owned()), "{lines:?}");
        assert!(lines.contains(&" Waiting for authentication...".to_owned()), "{lines:?}");
        assert!(lines.contains(&" (escape/ctrl+c to cancel)".to_owned()), "{lines:?}");
    }

    #[tokio::test]
    async fn escape_rejects_the_waiting_prompt() {
        let model = DialogModel::new("Login to Groq");
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let interaction = DialogInteraction::new(model.clone(), cancel.clone(), tx);
        let mut dialog = LoginDialog::new(
            Rc::new(Theme::dark(pi_tui::ColorMode::Truecolor).unwrap()),
            Rc::new(Keybindings::default()),
            model.clone(),
            cancel.clone(),
        );
        let prompt = interaction.prompt(AuthPrompt::Secret { message: "Enter Groq API key".into(), placeholder: None });
        let answer = async {
            tokio::task::yield_now().await;
            dialog.render(60);
            dialog.handle_input("\x1b");
        };
        let (result, ()) = tokio::join!(prompt, answer);
        assert!(matches!(result, Err(LoginError::Cancelled)));
        assert!(cancel.is_cancelled());
    }
}
