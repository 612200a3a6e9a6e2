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
    CACHE_TTL_MS, CacheMiss, collect_cache_misses, compute_cache_waste, detect_cache_miss, format_cache_warming_status,
    format_cache_warming_usage,
};
use crate::session::SessionEntry;

/// The last notice drawn, for collapsing.
pub(crate) struct CacheNotice {
    text: Rc<RefCell<Text>>,
    total: f64,
    note: Option<String>,
    /// Still the last thing drawn while a transcript is rebuilt (later entries drew nothing).
    last: bool,
}

/// pi's `addCacheMissNotice` text, or `None` below its threshold (20k tokens and $0.10).
fn miss_text(miss: &CacheMiss) -> Option<String> {
    if miss.missed_tokens < 20_000 && miss.missed_cost < 0.1 {
        return None;
    }
    let cost = if miss.missed_cost >= 0.01 { format!(" (~${:.2})", miss.missed_cost) } else { String::new() };
    let label = if miss.model_changed {
        "Cache miss after model switch".to_owned()
    } else if miss.idle_ms >= CACHE_TTL_MS {
        format!("Cache miss after {}m idle", (miss.idle_ms as f64 / 60_000.0).round())
    } else {
        "Cache miss".to_owned()
    };
    let tokens = super::footer::format_tokens(miss.missed_tokens);
    Some(format!("{label}: {tokens} tokens re-billed{cost}"))
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
        self.cache_notice = Some(CacheNotice { text, total: cost, note: usage.note.clone(), last: true });
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

    /// The transcript of `branch` with the cache notices pi draws on resume (pi's
    /// `renderSessionItems`): each `cache_warm` usage entry's notice (back-to-back ones collapse)
    /// and each cache miss, re-derived from every entry of the session, after the assistant
    /// message that paid for it. The last warming notice stays collapsible for the live ones.
    pub(crate) fn branch_with_cache_notices(
        &self,
        renderer: &crate::render::TranscriptRenderer,
    ) -> (pi_tui::Container, Option<CacheNotice>, bool) {
        let show = self.session.settings_manager().settings().show_cache_miss_notices();
        let lookup = self.model_lookup();
        let theme = self.theme.clone();
        self.session.with_session_manager(|sm| {
            let branch = sm.get_branch(None);
            let misses = if show { collect_cache_misses(sm.entries(), &lookup) } else { Default::default() };
            let (container, notice) = branch_notices(renderer, &branch, &misses, &theme, show);
            (container, notice, user_first(&branch))
        })
    }
}

/// Whether the first message of `branch` (system messages aside) is the user's.
fn user_first(branch: &[&SessionEntry]) -> bool {
    let first = branch.iter().find_map(|e| match e {
        SessionEntry::Message(m) => match &m.message {
            pi_agent_core::AgentMessage::System(_) => None,
            other => Some(matches!(other, pi_agent_core::AgentMessage::User(_))),
        },
        _ => None,
    });
    first == Some(true)
}

/// [`App::branch_with_cache_notices`] for a locked session.
fn branch_notices(
    renderer: &crate::render::TranscriptRenderer,
    branch: &[&SessionEntry],
    misses: &std::collections::HashMap<String, CacheMiss>,
    theme: &pi_tui::Theme,
    show: bool,
) -> (pi_tui::Container, Option<CacheNotice>) {
    {
        let mut last: Option<CacheNotice> = None;
        let container = renderer.render_branch_with(branch.iter().copied(), &mut |entry, drew| {
            let mut out: Vec<ComponentRef> = Vec::new();
            match entry {
                SessionEntry::Usage(u) if show && u.kind == "cache_warm" => {
                    if let Some(previous) = last.as_mut().filter(|p| p.note == u.note && p.last) {
                        previous.total += u.usage.cost.total;
                        let line =
                            theme.fg("dim", &format_cache_warming_usage(previous.total, previous.note.as_deref()));
                        previous.text.borrow_mut().set_text(line);
                        return out;
                    }
                    let cost = u.usage.cost.total;
                    let text =
                        shared(Text::new(theme.fg("dim", &format_cache_warming_usage(cost, u.note.as_deref())), 1, 0));
                    out.push(shared(Spacer::new(1)));
                    out.push(text.clone());
                    last = Some(CacheNotice { text, total: cost, note: u.note.clone(), last: true });
                    return out;
                }
                SessionEntry::Message(m) => {
                    let ok = m.message.as_assistant().is_some_and(|a| {
                        !matches!(a.stop_reason, pi_ai::StopReason::Aborted | pi_ai::StopReason::Error)
                    });
                    if let Some(text) = misses.get(&m.id).filter(|_| ok).and_then(miss_text) {
                        out.push(shared(Spacer::new(1)));
                        out.push(shared(Text::new(theme.fg("warning", &text), 1, 0)));
                    }
                }
                _ => {}
            }
            if let Some(previous) = last.as_mut()
                && (drew || !out.is_empty())
            {
                previous.last = false;
            }
            out
        });
        (container, last.filter(|n| n.last))
    }
}

impl App {
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
        if let Some(text) = miss.as_ref().and_then(miss_text) {
            self.show_line("warning", &text);
        }
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
            let model = self.session.model();
            let selected = format!("{}/{}", model.provider, model.id);
            let breakdown = self.session.with_session_manager(|sm| usage_cost_breakdown(sm.entries()));
            // A single entry repeats the total, unless it names a model other than the selected one.
            if breakdown.len() > 1 || breakdown.first().is_some_and(|(key, _, _)| *key != selected) {
                for (key, cost, tokens) in &breakdown {
                    let tokens = dim(&format!("({} tokens)", super::footer::format_tokens(*tokens)));
                    info.push_str(&format!("\n  {} ${cost:.3} {tokens}", dim(&format!("{key}:"))));
                }
            }
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

/// pi's `getUsageCostBreakdown`: cost and tokens per `provider/model` actually used (the
/// response's model when the provider named one), usage entries by their model, tool results'
/// and summaries' usage as "Tools/summaries"; empty groups dropped, the costliest first.
pub(crate) fn usage_cost_breakdown(entries: &[SessionEntry]) -> Vec<(String, f64, u64)> {
    let mut totals: Vec<(String, f64, u64)> = Vec::new();
    for entry in entries {
        let (key, usage) = match entry {
            SessionEntry::Message(m) => match &m.message {
                pi_agent_core::AgentMessage::Assistant(a) => {
                    let model = a.response_model.as_deref().unwrap_or(&a.model);
                    (format!("{}/{model}", a.provider), &a.usage)
                }
                pi_agent_core::AgentMessage::ToolResult(r) => match &r.usage {
                    Some(usage) => ("Tools/summaries".to_owned(), usage),
                    None => continue,
                },
                _ => continue,
            },
            SessionEntry::Usage(u) => (format!("{}/{}", u.provider, u.model), &u.usage),
            SessionEntry::Compaction(c) => match &c.usage {
                Some(usage) => ("Tools/summaries".to_owned(), usage),
                None => continue,
            },
            SessionEntry::BranchSummary(b) => match &b.usage {
                Some(usage) => ("Tools/summaries".to_owned(), usage),
                None => continue,
            },
            _ => continue,
        };
        let tokens = usage.input + usage.output + usage.cache_read + usage.cache_write;
        match totals.iter_mut().find(|(k, _, _)| *k == key) {
            Some(t) => {
                t.1 += usage.cost.total;
                t.2 += tokens;
            }
            None => totals.push((key, usage.cost.total, tokens)),
        }
    }
    totals.retain(|(_, cost, tokens)| *cost > 0.0 || *tokens > 0);
    totals.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    totals
}
