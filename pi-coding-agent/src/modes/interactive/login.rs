//! pi's provider selector (`OAuthSelectorComponent`): a search line, eight rows, each provider's
//! auth type when the list mixes them, its status (`✓ configured`, `✓ env: GROQ_API_KEY`,
//! `• not configured`), preferred partners first and marked. `/login` lists the logins with it
//! (`login_flow.rs`); `/logout` lists the credentials auth.json holds and removes the chosen one.

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::ansi::truncate_to_width;
use pi_tui::keys::Keybindings;
use pi_tui::theme::bold;
use pi_tui::{Component, CrosstermTerminal, Input, Lines, Theme, Tui, shared};

use super::app::App;
use super::dialogs::DoneCell;
use crate::auth::{AuthStorage, CredentialType};

const MAX_VISIBLE: usize = 8;
const PREFERRED: [&str; 2] = ["radius", "openrouter"];

/// One row of the selector.
#[derive(Clone, Debug)]
pub(crate) struct AuthRow {
    pub(crate) id: String,
    pub(crate) name: String,
    /// `api_key` or `oauth`.
    pub(crate) auth_type: String,
    pub(crate) subscription: bool,
    /// How the provider is configured now: its credential's type and source (pi's `status`).
    pub(crate) status: Option<(String, String)>,
    /// The login method's name, searched too ("Groq API key").
    pub(crate) method_name: String,
}

/// pi's `formatAuthSelectorProviderStatus`.
pub(crate) fn format_status(
    t: &Theme,
    auth_type: &str,
    subscription: bool,
    status: Option<&(String, String)>,
) -> String {
    let Some((kind, source)) = status else { return t.fg("muted", " • not configured") };
    if kind != auth_type {
        return format!(
            "{}{}",
            t.fg("muted", " • "),
            t.fg("warning", &format!("{} configured", type_label(kind, subscription)))
        );
    }
    if source.is_empty() || source == "OAuth" || source == "stored credential" {
        return t.fg("success", " ✓ configured");
    }
    let env_names = source.split(", ").all(|name| {
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_ascii_uppercase())
            && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    });
    let shown = if env_names { format!("env: {source}") } else { source.clone() };
    t.fg("success", &format!(" ✓ {shown}"))
}

pub(crate) fn type_label(auth_type: &str, subscription: bool) -> &'static str {
    match (auth_type, subscription) {
        ("api_key", _) => "API key",
        (_, false) => "account",
        _ => "subscription",
    }
}

/// pi's `compareProviders`: preferred partners first, in their order, then by name.
pub(crate) fn compare_rows(a_id: &str, a_name: &str, b_id: &str, b_name: &str) -> std::cmp::Ordering {
    rank(a_id).cmp(&rank(b_id)).then_with(|| a_name.to_lowercase().cmp(&b_name.to_lowercase()))
}

fn rank(id: &str) -> usize {
    PREFERRED.iter().position(|p| *p == id).unwrap_or(PREFERRED.len())
}

/// The stored credentials as `/logout` lists them.
pub(crate) fn logout_rows(auth: &AuthStorage) -> Result<Vec<AuthRow>, crate::auth::AuthError> {
    let logins = crate::auth::logins::builtin_logins();
    let mut rows: Vec<AuthRow> = auth
        .list()?
        .into_iter()
        .map(|(id, kind)| AuthRow {
            name: pi_ai::models::provider_info(&id).map_or_else(|| id.clone(), |p| p.name.clone()),
            auth_type: if kind == CredentialType::OAuth { "oauth" } else { kind.as_str() }.to_owned(),
            subscription: logins.get(&id).and_then(|l| l.oauth.as_ref()).is_some_and(|o| o.is_subscription),
            status: Some((
                if kind == CredentialType::OAuth { "oauth" } else { kind.as_str() }.to_owned(),
                "stored credential".to_owned(),
            )),
            method_name: String::new(),
            id,
        })
        .collect();
    rows.sort_by(|a, b| compare_rows(&a.id, &a.name, &b.id, &b.name));
    Ok(rows)
}

/// pi's `OAuthSelectorComponent`.
pub(crate) struct AuthSelector {
    theme: Rc<Theme>,
    keys: Rc<Keybindings>,
    title: String,
    empty: String,
    rows: Vec<AuthRow>,
    filtered: Vec<AuthRow>,
    selected: usize,
    search: Input,
    show_types: bool,
    done: DoneCell,
}

impl AuthSelector {
    pub(crate) fn new(
        theme: Rc<Theme>,
        keys: Rc<Keybindings>,
        login: bool,
        rows: Vec<AuthRow>,
        initial_search: Option<&str>,
        done: DoneCell,
    ) -> Self {
        let types: std::collections::HashSet<&str> = rows.iter().map(|r| r.auth_type.as_str()).collect();
        let mut search = Input::default();
        search.set_focused(true);
        let (title, empty) = if login {
            ("Select provider to configure:", "No providers available")
        } else {
            ("Select provider to logout:", "No providers logged in. Use /login first.")
        };
        let mut selector = AuthSelector {
            theme,
            keys,
            title: title.into(),
            empty: empty.into(),
            show_types: types.len() > 1,
            filtered: rows.clone(),
            rows,
            selected: 0,
            search,
            done,
        };
        if let Some(query) = initial_search.filter(|q| !q.is_empty()) {
            selector.search.set_value(query);
            selector.filter();
        }
        selector
    }

    fn filter(&mut self) {
        let query = self.search.value().to_owned();
        self.filtered = if query.is_empty() {
            self.rows.clone()
        } else {
            pi_tui::fuzzy::fuzzy_filter(&self.rows, &query, |r| {
                format!("{} {} {} {}", r.name, r.id, r.auth_type, r.method_name)
            })
        };
        self.selected = if query.is_empty() { self.selected.min(self.filtered.len().saturating_sub(1)) } else { 0 };
    }

    fn row_line(&self, row: &AuthRow, selected: bool) -> String {
        let t = &self.theme;
        let status = format_status(t, &row.auth_type, row.subscription, row.status.as_ref());
        let partner = if PREFERRED.contains(&row.id.as_str()) { t.fg("muted", " ✦") } else { String::new() };
        let label = if self.show_types {
            t.fg("muted", &format!(" [{}]", type_label(&row.auth_type, row.subscription)))
        } else {
            String::new()
        };
        let text = if selected {
            format!("{}{}", t.fg("accent", "→ "), t.fg("accent", &row.name))
        } else {
            format!("  {}", t.fg("text", &row.name))
        };
        format!("{text}{partner}{label}{status}")
    }
}

fn truncated(text: &str, width: usize) -> String {
    format!(" {}", truncate_to_width(text, width.saturating_sub(2).max(1)))
}

impl Component for AuthSelector {
    fn render(&mut self, width: usize) -> Lines {
        let t = self.theme.clone();
        let border = t.fg("border", &"─".repeat(width.max(1)));
        let mut lines = vec![border.clone(), String::new(), truncated(&t.fg("accent", &bold(&self.title)), width)];
        lines.push(String::new());
        lines.extend(self.search.render(width).iter().cloned());
        lines.push(String::new());
        let n = self.filtered.len();
        let start = self.selected.saturating_sub(MAX_VISIBLE / 2).min(n.saturating_sub(MAX_VISIBLE));
        let end = (start + MAX_VISIBLE).min(n);
        for i in start..end {
            lines.push(truncated(&self.row_line(&self.filtered[i], i == self.selected), width));
        }
        if start > 0 || end < n {
            lines.push(truncated(&t.fg("muted", &format!("  ({}/{n})", self.selected + 1)), width));
        }
        if n == 0 {
            let message = if self.rows.is_empty() { self.empty.as_str() } else { "No matching providers" };
            lines.push(truncated(&t.fg("muted", &format!("  {message}")), width));
        }
        lines.push(String::new());
        lines.push(border);
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        let kb = self.keys.clone();
        let n = self.filtered.len();
        if kb.matches(data, "tui.select.up") {
            self.selected = self.selected.saturating_sub(1);
        } else if kb.matches(data, "tui.select.down") {
            if n > 0 {
                self.selected = (self.selected + 1).min(n - 1);
            }
        } else if kb.matches(data, "tui.select.confirm") {
            if let Some(row) = self.filtered.get(self.selected) {
                *self.done.borrow_mut() = Some(Some(format!("{}\n{}", row.id, row.auth_type)));
            }
        } else if kb.matches(data, "tui.select.cancel") {
            *self.done.borrow_mut() = Some(None);
        } else {
            let before = self.search.value().to_owned();
            self.search.handle_input(data);
            if self.search.value() != before {
                self.filter();
            }
        }
    }

    fn set_focused(&mut self, focused: bool) {
        self.search.set_focused(focused);
    }
}

impl App {
    /// `/logout`: the selector over auth.json's credentials; the chosen one is removed.
    pub(crate) fn command_logout(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let auth = AuthStorage::for_agent_dir(&crate::session::get_agent_dir());
        let rows = match logout_rows(&auth) {
            Ok(rows) => rows,
            Err(e) => return self.show_error(&format!("Could not read stored credentials: {e}")),
        };
        if rows.is_empty() {
            return self.show_status("No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged.");
        }
        let done: DoneCell = Rc::new(RefCell::new(None));
        let selector =
            AuthSelector::new(self.theme.clone(), self.keys.clone(), false, rows.clone(), None, done.clone());
        self.open_dialog(
            tui,
            shared(selector),
            done,
            Box::new(move |app, choice| {
                let Some((id, _)) = choice.as_deref().and_then(|c| c.split_once('\n')) else { return };
                let Some(row) = rows.iter().find(|r| r.id == id) else { return };
                let removed = auth.remove(&row.id);
                if removed.is_ok() {
                    app.refresh_available_models();
                }
                match removed {
                    Ok(()) if row.auth_type == "oauth" => app.show_status(&format!("Logged out of {}", row.name)),
                    Ok(()) => app.show_status(&format!(
                        "Removed stored API key for {}. Environment variables and models.json config are unchanged.",
                        row.name
                    )),
                    Err(e) => app.show_error(&format!("Logout failed: {e}")),
                }
            }),
        );
    }

    /// The models with credentials, read again after `/login` or `/logout` changed auth.json
    /// (pi refreshes its available snapshot then): the registry's in catalog order, then the
    /// models of providers the registry does not know (extension providers), as they were.
    pub(crate) fn refresh_available_models(&mut self) {
        let registry = crate::auth::ModelRegistry::load(&crate::session::get_agent_dir());
        let mut fresh: Vec<pi_ai::Model> = registry.get_available().into_iter().cloned().collect();
        let known: std::collections::BTreeSet<String> =
            registry.models().get_models(None).iter().map(|m| m.provider.clone()).collect();
        fresh.extend(self.models.iter().filter(|m| !known.contains(&m.provider)).cloned());
        self.models = fresh;
    }
}
