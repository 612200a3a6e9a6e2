//! pi's `addCacheWarmingUsage`: with `showCacheMissNotices`, each cache refresh shows a dim
//! "Cache warmed: $…" line; back-to-back refreshes with the same note collapse into one line with
//! the cumulative cost.

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::{ComponentRef, Spacer, Text, shared};

use super::app::App;
use crate::sdk::cache_warmer::format_cache_warming_usage;
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
