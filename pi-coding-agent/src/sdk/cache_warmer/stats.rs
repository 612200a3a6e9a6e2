//! Prompt cache misses across a session (pi's `cache-stats.js`): prompt tokens that should have
//! been cache reads (they were in the previous request's prompt) but were billed again. A
//! compaction or branch summary resets the comparison; a cache refresh (`cache_warm` usage entry)
//! counts as the previous request.

use pi_ai::{AssistantMessage, Model};

use crate::session::{SessionEntry, parse_iso};

/// Idle gaps longer than this are named as the likely cause of a miss (Anthropic's default
/// cache lifetime, 5 minutes).
pub const CACHE_TTL_MS: u64 = 5 * 60 * 1000;

/// Per-request misses at or below this are cache breakpoint granularity noise.
const NOISE_FLOOR_TOKENS: u64 = 1024;

/// One counted miss.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheMiss {
    /// Tokens billed again.
    pub missed_tokens: u64,
    /// What they cost beyond cache reads.
    pub missed_cost: f64,
    /// Time since the previous request.
    pub idle_ms: u64,
    /// Whether the model changed since the previous request.
    pub model_changed: bool,
}

/// pi's `computeCacheWaste` totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CacheWaste {
    /// Tokens billed again, over the session.
    pub missed_tokens: u64,
    /// Their extra cost.
    pub missed_cost: f64,
    /// How many requests missed.
    pub miss_count: u64,
}

struct Previous {
    prompt_tokens: u64,
    model_key: String,
    timestamp: i64,
    reported_cache: bool,
}

fn detect(
    prev: Option<&Previous>,
    m: &AssistantMessage,
    lookup: &dyn Fn(&str, &str) -> Option<Model>,
) -> Option<CacheMiss> {
    let u = &m.usage;
    let prompt = u.input + u.cache_read + u.cache_write;
    let prev = prev?;
    if prompt == 0 || (u.cache_read + u.cache_write == 0 && !prev.reported_cache) {
        return None;
    }
    let missed = prev.prompt_tokens.min(prompt).saturating_sub(u.cache_read);
    if missed <= NOISE_FLOOR_TOKENS {
        return None;
    }
    let paid_tokens = u.input + u.cache_write;
    let paid_per_token = if paid_tokens > 0 { (u.cost.input + u.cost.cache_write) / paid_tokens as f64 } else { 0.0 };
    let read_per_token = if u.cache_read > 0 {
        u.cost.cache_read / u.cache_read as f64
    } else {
        lookup(&m.provider, &m.model).map_or(0.0, |model| model.cost.cache_read) / 1_000_000.0
    };
    Some(CacheMiss {
        missed_tokens: missed,
        missed_cost: missed as f64 * (paid_per_token - read_per_token).max(0.0),
        idle_ms: (m.timestamp as i64 - prev.timestamp).max(0) as u64,
        model_changed: format!("{}/{}", m.provider, m.model) != prev.model_key,
    })
}

fn as_previous(m: &AssistantMessage, reported_cache: bool) -> Option<Previous> {
    let u = &m.usage;
    let prompt = u.input + u.cache_read + u.cache_write;
    (prompt > 0).then(|| Previous {
        prompt_tokens: prompt,
        model_key: format!("{}/{}", m.provider, m.model),
        timestamp: m.timestamp as i64,
        reported_cache: reported_cache || u.cache_read + u.cache_write > 0,
    })
}

fn scan<'a>(
    entries: impl IntoIterator<Item = &'a SessionEntry>,
    lookup: &dyn Fn(&str, &str) -> Option<Model>,
) -> (Option<Previous>, CacheWaste) {
    scan_with(None, entries, lookup)
}

fn scan_with<'a>(
    mut prev: Option<Previous>,
    entries: impl IntoIterator<Item = &'a SessionEntry>,
    lookup: &dyn Fn(&str, &str) -> Option<Model>,
) -> (Option<Previous>, CacheWaste) {
    let mut totals = CacheWaste::default();
    for entry in entries {
        match entry {
            SessionEntry::Compaction(_) | SessionEntry::BranchSummary(_) => prev = None,
            SessionEntry::Usage(u) if u.kind == "cache_warm" => {
                let prompt = u.usage.input + u.usage.cache_read + u.usage.cache_write;
                if prompt > 0 {
                    prev = Some(Previous {
                        prompt_tokens: prompt,
                        model_key: format!("{}/{}", u.provider, u.model),
                        timestamp: parse_iso(&u.timestamp).unwrap_or(0),
                        reported_cache: true,
                    });
                }
            }
            SessionEntry::Message(m) => {
                if let Some(a) = m.message.as_assistant() {
                    if let Some(miss) = detect(prev.as_ref(), a, lookup) {
                        totals.missed_tokens += miss.missed_tokens;
                        totals.missed_cost += miss.missed_cost;
                        totals.miss_count += 1;
                    }
                    let reported = prev.as_ref().is_some_and(|p| p.reported_cache);
                    if let Some(next) = as_previous(a, reported) {
                        prev = Some(next);
                    }
                }
            }
            _ => {}
        }
    }
    (prev, totals)
}

/// Cumulative cache waste across `entries` (pi's `computeCacheWaste`); `lookup` finds a model's
/// cache read price when a request reported no cache reads.
pub fn compute_cache_waste<'a>(
    entries: impl IntoIterator<Item = &'a SessionEntry>,
    lookup: &dyn Fn(&str, &str) -> Option<Model>,
) -> CacheWaste {
    scan(entries, lookup).1
}

/// Every miss across `entries`, by the id of the assistant message entry that paid for it (pi's
/// `collectCacheMisses`, re-derived on resume: misses are not persisted).
pub fn collect_cache_misses<'a>(
    entries: impl IntoIterator<Item = &'a SessionEntry>,
    lookup: &dyn Fn(&str, &str) -> Option<Model>,
) -> std::collections::HashMap<String, CacheMiss> {
    let mut misses = std::collections::HashMap::new();
    let mut prev: Option<Previous> = None;
    for entry in entries {
        let single = std::iter::once(entry);
        if let SessionEntry::Message(m) = entry
            && let Some(a) = m.message.as_assistant()
            && let Some(miss) = detect(prev.as_ref(), a, lookup)
        {
            misses.insert(m.id.clone(), miss);
        }
        prev = scan_from(prev, single, lookup);
    }
    misses
}

/// [`scan`]'s state after `entries`, starting from `prev`.
fn scan_from<'a>(
    prev: Option<Previous>,
    entries: impl IntoIterator<Item = &'a SessionEntry>,
    lookup: &dyn Fn(&str, &str) -> Option<Model>,
) -> Option<Previous> {
    scan_with(prev, entries, lookup).0
}

/// The miss of a just-completed `message` after `entries` (which must not hold it yet; pi's
/// `detectCacheMiss`).
pub fn detect_cache_miss<'a>(
    entries: impl IntoIterator<Item = &'a SessionEntry>,
    message: &AssistantMessage,
    lookup: &dyn Fn(&str, &str) -> Option<Model>,
) -> Option<CacheMiss> {
    let (prev, _) = scan(entries, lookup);
    detect(prev.as_ref(), message, lookup)
}
