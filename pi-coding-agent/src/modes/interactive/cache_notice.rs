//! The cache warmer and cache misses in the transcript and `/session`: pi's
//! `addCacheWarmingUsage` (with `showCacheMissNotices`, each cache refresh shows a dim
//! "Cache warmed: $…" line; back-to-back refreshes with the same note collapse into one line with
//! the cumulative cost) and the "Cache Warming" and "Cache Re-billed" lines of `/session`.

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::{ComponentRef, Spacer, Text, shared};

use super::app::App;
use super::commands::grouped;
use crate::sdk::cache_warmer::{
    CACHE_TTL_MS, compute_cache_waste, detect_cache_miss, format_cache_warming_status, format_cache_warming_usage,
};
use crate::session::SessionEntry;

/// The last notice drawn, for collapsing.
pub(crate) struct CacheNotice {
    text: Rc<RefCell<Text>>,
    total: f64,
    note: Option<String>,
}

impl App {
    /// Draws the notice of a `cache_warm` usage entry.
    pub(crate) fn on_cache_warm_entry(&mut self, entry: &SessionEntry) {
        let SessionEntry::Usage(usage) = entry else { return };
        if usage.kind != "cache_warm" || !self.session.settings_manager().settings().show_cache_miss_notices() {
            return;
        }
        let cost = usage.usage.cost.total;
        let last = self.chat.borrow().children().last().cloned();
        if let Some(previous) = self.cache_notice.as_mut() {
            let component: ComponentRef = previous.text.clone();
            if last.is_some_and(|l| Rc::ptr_eq(&l, &component)) && previous.note == usage.note {
                previous.total += cost;
                let line = self.theme.fg("dim", &format_cache_warming_usage(previous.total, previous.note.as_deref()));
                previous.text.borrow_mut().set_text(line);
                return;
            }
        }
        let line = self.theme.fg("dim", &format_cache_warming_usage(cost, usage.note.as_deref()));
        let text = shared(Text::new(line, 1, 0));
        self.add_chat(shared(Spacer::new(1)));
        self.add_chat(text.clone());
        self.cache_notice = Some(CacheNotice { text, total: cost, note: usage.note.clone() });
    }
}

impl App {
    fn model_lookup(&self) -> impl Fn(&str, &str) -> Option<pi_ai::Model> + use<> {
        let current = self.session.model();
        move |p: &str, id: &str| {
            if current.provider == p && current.id == id {
                return Some(current.clone());
            }
            pi_ai::models::builtin_catalog().get(p).and_then(|l| l.iter().find(|m| m.id == id).cloned())
        }
    }

    /// pi's `addCacheMissNotice` after an assistant message (with `showCacheMissNotices`): a
    /// warning when at least 20k tokens or $0.10 were billed again.
    pub(crate) fn on_assistant_end(&mut self, message: &pi_ai::AssistantMessage) {
        if !self.session.settings_manager().settings().show_cache_miss_notices() {
            return;
        }
        let lookup = self.model_lookup();
        // The message may be persisted already: the scan stops before it, as pi's does.
        let miss = self.session.with_session_manager(|sm| {
            let entries = sm.entries();
            let end = entries
                .iter()
                .rposition(|e| match e {
                    SessionEntry::Message(m) => {
                        m.message.as_assistant().is_some_and(|a| a.timestamp == message.timestamp)
                    }
                    _ => false,
                })
                .unwrap_or(entries.len());
            detect_cache_miss(&entries[..end], message, &lookup)
        });
        let Some(miss) = miss.filter(|m| m.missed_tokens >= 20_000 || m.missed_cost >= 0.1) else { return };
        let cost = if miss.missed_cost >= 0.01 { format!(" (~${:.2})", miss.missed_cost) } else { String::new() };
        let label = if miss.model_changed {
            "Cache miss after model switch".to_owned()
        } else if miss.idle_ms >= CACHE_TTL_MS {
            format!("Cache miss after {}m idle", (miss.idle_ms as f64 / 60_000.0).round())
        } else {
            "Cache miss".to_owned()
        };
        let tokens = super::footer::format_tokens(miss.missed_tokens);
        self.show_line("warning", &format!("{label}: {tokens} tokens re-billed{cost}"));
    }

    /// `/session`'s "Cache Warming" section and its "Cost" section (`cost` is the session's total).
    pub(crate) fn session_cache_lines(&self, mode: &str, cost: f64) -> String {
        let t = self.theme.clone();
        let dim = |x: &str| t.fg("dim", x);
        let warming = self.session.cache_warming_status();
        let mut info = format!("\n{}\n", pi_tui::theme::bold("Cache Warming"));
        info.push_str(&format!("{} {mode}\n", dim("Mode:")));
        let status = format_cache_warming_status(&warming, pi_ai::now_ms());
        info.push_str(&format!("{} {status}\n", dim("Status:")));
        if let Some(d) = warming.decision.filter(|d| d.economics_available) {
            info.push_str(&format!("{} ${:.3}\n", dim("Cache miss penalty:"), d.miss_cost));
            info.push_str(&format!("{} ${:.3}\n", dim("Refresh cost:"), d.warm_cost));
        }
        let lookup = self.model_lookup();
        let waste = self.session.with_session_manager(|sm| compute_cache_waste(sm.entries(), &lookup));
        if cost > 0.0 || waste.missed_tokens > 0 {
            info.push_str(&format!("\n{}\n{} ${cost:.3}", pi_tui::theme::bold("Cost"), dim("Total:")));
        }
        if waste.missed_tokens > 0 {
            let misses =
                if waste.miss_count == 1 { "1 miss".to_owned() } else { format!("{} misses", waste.miss_count) };
            let detail = format!("{} tokens, {misses}", grouped(waste.missed_tokens));
            let label = dim("Cache Re-billed:");
            if waste.missed_cost >= 0.0001 {
                info.push_str(&format!("\n{label} ${:.3} {}", waste.missed_cost, dim(&format!("({detail})"))));
            } else {
                info.push_str(&format!("\n{label} {detail}"));
            }
        }
        info
    }
}
