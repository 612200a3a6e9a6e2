//! The Hugging Face search of `/llama` (pi's `HuggingFaceSearch` of `ui.js`): a query line, a
//! debounced search (500 ms, at least two characters, cached per query), fuzzy filtering of the
//! results, and an exact `owner/repository[:quant]` accepted as typed.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use pi_tui::keys::Keybindings;
use pi_tui::{Component, Input, Lines, Theme};
use regex::Regex;
use tokio_util::sync::CancellationToken;

use super::huggingface::{HuggingFaceClient, SearchResult};
use super::view::{LlamaUi, lock};

const MAX_VISIBLE: usize = 10;
const SEARCHING: &str = "Searching Hugging Face…";
const TOO_SHORT: &str = "Type at least 2 characters";
const NOTHING: &str = "No GGUF models found";

static EXACT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[^/\s]+/[^:\s]+(?::[^\s:]+)?$").unwrap_or_else(|e| panic!("the repository pattern is valid: {e}"))
});

/// pi's `DynamicBorder` in the accent colour.
pub(crate) struct Border(pub(crate) Theme);

impl Component for Border {
    fn render(&mut self, width: usize) -> Lines {
        vec![self.0.fg("accent", &"─".repeat(width.max(1)))].into()
    }
}

/// The search's state, shared with the tasks that search.
pub struct SearchState {
    client: Option<Arc<HuggingFaceClient>>,
    runtime: Option<tokio::runtime::Handle>,
    cache: HashMap<String, Vec<SearchResult>>,
    results: Vec<SearchResult>,
    filtered: Vec<SearchResult>,
    selected: usize,
    touched: bool,
    query: String,
    status: String,
    request: Option<CancellationToken>,
}

impl SearchState {
    /// A search through `client`, its tasks spawned on `runtime`.
    pub fn new(client: Option<Arc<HuggingFaceClient>>, runtime: Option<tokio::runtime::Handle>) -> Self {
        SearchState {
            client,
            runtime,
            cache: HashMap::new(),
            results: Vec::new(),
            filtered: Vec::new(),
            selected: 0,
            touched: false,
            query: String::new(),
            status: TOO_SHORT.into(),
            request: None,
        }
    }

    /// Uses `client` for the next searches.
    pub fn set_client(&mut self, client: Arc<HuggingFaceClient>) {
        self.client = Some(client);
    }

    /// A fresh search (the cache stays, as pi's view keeps it).
    pub(crate) fn reset(&mut self) {
        self.cancel();
        self.results.clear();
        self.filtered.clear();
        self.selected = 0;
        self.touched = false;
        self.query.clear();
        self.status = TOO_SHORT.into();
    }

    fn cancel(&mut self) {
        if let Some(r) = self.request.take() {
            r.cancel();
        }
    }

    fn filter(&mut self, preferred: Option<&str>) {
        self.filtered = if self.query.is_empty() {
            self.results.clone()
        } else {
            let matches = pi_tui::fuzzy::fuzzy_filter(&self.results, &self.query, |m| m.id.clone());
            self.results.iter().filter(|r| matches.iter().any(|m| m.id == r.id)).cloned().collect()
        };
        match preferred.and_then(|id| self.filtered.iter().position(|m| m.id == id)) {
            Some(i) => self.selected = i,
            None => self.selected = self.selected.min(self.filtered.len().saturating_sub(1)),
        }
    }
}

fn compact_count(value: u64) -> String {
    let v = value as f64;
    if value >= 1_000_000 {
        format!("{:.*}M", if value >= 10_000_000 { 0 } else { 1 }, v / 1e6)
    } else if value >= 1_000 {
        format!("{:.*}k", if value >= 100_000 { 0 } else { 1 }, v / 1e3)
    } else {
        value.to_string()
    }
}

/// The search component.
pub(crate) struct SearchView {
    ui: LlamaUi,
    theme: Theme,
    keys: Rc<Keybindings>,
    input: Input,
    chosen: Rc<RefCell<Option<Option<String>>>>,
    closed: bool,
}

impl SearchView {
    pub(crate) fn new(
        ui: LlamaUi,
        theme: Theme,
        keys: Rc<Keybindings>,
        chosen: Rc<RefCell<Option<Option<String>>>>,
    ) -> Self {
        SearchView { ui, theme, keys, input: Input::new("> ", ""), chosen, closed: false }
    }

    fn close(&mut self, value: Option<String>) {
        if self.closed {
            return;
        }
        self.closed = true;
        lock(&self.ui.shared).search.cancel();
        *self.chosen.borrow_mut() = Some(value);
    }

    fn schedule(&mut self) {
        let mut s = lock(&self.ui.shared);
        let state = &mut s.search;
        state.cancel();
        if state.query.chars().count() < 2 {
            state.status = TOO_SHORT.into();
            state.filter(None);
            return;
        }
        if let Some(cached) = state.cache.get(&state.query.to_lowercase()).cloned() {
            state.status = if cached.is_empty() { NOTHING.into() } else { String::new() };
            state.results = cached;
            state.filter(None);
            return;
        }
        state.status = SEARCHING.into();
        state.filter(None);
        let (Some(client), Some(runtime)) = (state.client.clone(), state.runtime.clone()) else { return };
        let token = CancellationToken::new();
        state.request = Some(token.clone());
        let (query, ui) = (state.query.clone(), self.ui.clone());
        runtime.spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                _ = token.cancelled() => return,
            }
            let result = client.search(&query, &token).await;
            {
                let mut s = lock(&ui.shared);
                let state = &mut s.search;
                if let Ok(results) = &result {
                    state.cache.insert(query.to_lowercase(), results.clone());
                }
                if token.is_cancelled() || state.query != query {
                    return;
                }
                state.request = None;
                match result {
                    Ok(results) => {
                        let preferred =
                            state.touched.then(|| state.filtered.get(state.selected).map(|m| m.id.clone())).flatten();
                        state.status = if results.is_empty() { NOTHING.into() } else { String::new() };
                        state.results = results;
                        state.selected = 0;
                        state.filter(preferred.as_deref());
                    }
                    Err(message) => {
                        state.results.clear();
                        state.status = message;
                        state.filter(None);
                    }
                }
            }
            ui.host.request_render();
        });
    }

    fn rows(&self) -> Vec<String> {
        let s = lock(&self.ui.shared);
        let state = &s.search;
        let theme = &self.theme;
        let mut rows = Vec::new();
        let len = state.filtered.len();
        let start = state.selected.saturating_sub(MAX_VISIBLE / 2).min(len.saturating_sub(MAX_VISIBLE));
        let end = (start + MAX_VISIBLE).min(len);
        for (index, model) in state.filtered.iter().enumerate().take(end).skip(start) {
            let details = format!("{} downloads", compact_count(model.downloads));
            rows.push(if index == state.selected {
                theme.fg("accent", &format!("→ {}  {details}", model.id))
            } else {
                format!("  {}{}", model.id, theme.fg("muted", &format!("  {details}")))
            });
        }
        if start > 0 || end < len {
            rows.push(theme.fg("dim", &format!("  ({}/{})", state.selected + 1, len)));
        }
        if len == 0 || state.status == SEARCHING {
            rows.push(theme.fg("dim", &format!("  {}", state.status)));
        }
        rows
    }

    fn move_selection(&mut self, to: impl Fn(usize, usize) -> usize) {
        let mut s = lock(&self.ui.shared);
        let state = &mut s.search;
        if !state.filtered.is_empty() {
            state.selected = to(state.selected, state.filtered.len());
            state.touched = true;
        }
    }
}

impl Component for SearchView {
    fn render(&mut self, width: usize) -> Lines {
        let hint = self.theme.fg("dim", "Model name or owner/repository[:quant]");
        let mut lines: Vec<String> = pi_tui::Text::new(hint, 1, 0).render(width).to_vec();
        lines.extend(self.input.render(width).iter().cloned());
        lines.push(String::new());
        lines.extend(self.rows());
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        let kb = self.keys.clone();
        if kb.matches(data, "tui.select.up") {
            self.move_selection(|i, n| if i == 0 { n - 1 } else { i - 1 });
        } else if kb.matches(data, "tui.select.down") {
            self.move_selection(|i, n| if i + 1 == n { 0 } else { i + 1 });
        } else if kb.matches(data, "tui.select.pageUp") {
            self.move_selection(|i, _| i.saturating_sub(MAX_VISIBLE));
        } else if kb.matches(data, "tui.select.pageDown") {
            self.move_selection(|i, n| (i + MAX_VISIBLE).min(n - 1));
        } else if kb.matches(data, "tui.select.confirm") {
            let selected = {
                let s = lock(&self.ui.shared);
                let state = &s.search;
                if EXACT.is_match(&state.query) {
                    Some(state.query.clone())
                } else {
                    state.filtered.get(state.selected).map(|m| m.id.clone())
                }
            };
            if selected.is_some() {
                self.close(selected);
            }
        } else if kb.matches(data, "tui.select.cancel") {
            self.close(None);
        } else {
            self.input.handle_input(data);
            let query = self.input.value().trim().to_owned();
            {
                let mut s = lock(&self.ui.shared);
                if s.search.query == query {
                    return;
                }
                s.search.query = query;
                s.search.touched = false;
            }
            self.schedule();
        }
    }

    fn captures_viewport_input(&self) -> bool {
        true
    }

    fn set_focused(&mut self, focused: bool) {
        self.input.set_focused(focused);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_compact() {
        assert_eq!(compact_count(999), "999");
        assert_eq!(compact_count(12_345), "12.3k");
        assert_eq!(compact_count(123_456), "123k");
        assert_eq!(compact_count(1_234_567), "1.2M");
        assert_eq!(compact_count(12_345_678), "12M");
    }

    #[test]
    fn exact_repositories_are_recognised() {
        assert!(EXACT.is_match("ggml-org/gemma-3-4b-it-GGUF:Q4_K_M"));
        assert!(EXACT.is_match("owner/repo"));
        assert!(!EXACT.is_match("gemma"));
    }
}
