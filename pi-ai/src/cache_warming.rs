//! Prompt cache warming policy (pi's `cache-warming.js`): when a refresh is due, whether a request
//! can be replayed, and whether a refresh pays for itself. Hosts own the scheduling; this module
//! owns the numbers.

use serde::{Deserialize, Serialize};

use crate::models::calculate_cost;
use crate::options::{CacheRetention, StreamOptions, Transport};
use crate::types::{Model, Usage};

/// Streaming warming never continues past this long after the real request that started it.
pub const CACHE_WARMING_MAX_AGE_MS: u64 = 60 * 60_000;
/// Idle warming uses a shorter horizon because continuation estimates become less reliable.
pub const CACHE_WARMING_MAX_IDLE_AGE_MS: u64 = 30 * 60_000;
/// A refresh is sent only when it is expected to save at least this many dollars.
pub const CACHE_WARMING_MINIMUM_EXPECTED_SAVINGS: f64 = 0.05;
/// Chance that a real request arrives before the cache entry expires while the agent sits idle.
pub const CACHE_WARMING_IDLE_CONTINUATION_PROBABILITY: f64 = 0.15;

/// When a refresh happens: while the agent runs, or between runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheWarmingPhase {
    /// An agent run is active.
    Streaming,
    /// The agent settled; a real request may or may not follow.
    Idle,
}

/// What a refresh decision concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheWarmingAction {
    /// Send the refresh.
    Warm,
    /// Stop warming.
    Stop,
}

/// pi's `CacheWarmingDecision`: the economics of one refresh.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheWarmingDecision {
    /// The phase the decision was made in.
    pub phase: CacheWarmingPhase,
    /// Price of the refresh (a cache read of the prompt plus one output token).
    pub warm_cost: f64,
    /// Extra price of the next real request if the entry is lost.
    pub miss_cost: f64,
    /// Chance that a real request arrives before the entry expires.
    pub continuation_probability: f64,
    /// `continuation_probability × miss_cost − warm_cost`.
    pub expected_savings: f64,
    /// Whether the model has prices and the prompt has tokens.
    pub economics_available: bool,
    /// `warm` when the savings reach [`CACHE_WARMING_MINIMUM_EXPECTED_SAVINGS`].
    pub action: CacheWarmingAction,
}

/// Refresh at 90 % of the TTL while keeping at least ten seconds of margin; `None` for a TTL of
/// ten seconds or less.
pub fn get_cache_warming_delay_ms(ttl_ms: u64) -> Option<u64> {
    if ttl_ms <= 10_000 {
        return None;
    }
    let delay = (ttl_ms as f64 * 0.9).min((ttl_ms - 10_000) as f64).floor();
    Some((delay as u64).max(1))
}

/// Lifetime of the cache entry a request writes, from the model's `promptCache` tier for the
/// retention the request used (`PI_CACHE_RETENTION=long` when unset); `None` when the model has no
/// lifetime for that tier or caching is off.
pub fn get_prompt_cache_ttl_ms(model: &Model, options: &StreamOptions) -> Option<u64> {
    let retention = options.cache_retention.unwrap_or_else(CacheRetention::from_env);
    let key = match retention {
        CacheRetention::None => return None,
        CacheRetention::Short => "short",
        CacheRetention::Long => "long",
    };
    let seconds = model.prompt_cache.as_ref()?.get(key)?.as_f64()?;
    Some((seconds * 1000.0) as u64)
}

/// Whether replaying the request with a one-token output cap leaves its cache entry untouched:
/// Anthropic's budget-based thinking derives `budget_tokens` from `max_tokens`, so a reasoning
/// request to `anthropic-messages` replays only with `compat.forceAdaptiveThinking`.
pub fn is_cache_warming_replayable(model: &Model, options: &StreamOptions) -> bool {
    if options.reasoning.is_none() || model.api != "anthropic-messages" {
        return true;
    }
    model.compat.as_ref().and_then(|c| c.get("forceAdaptiveThinking")).and_then(|v| v.as_bool()) == Some(true)
}

/// The options of a refresh: the request's own, capped at one output token, without retries, and
/// without replacing the conversation's provider thread state (pi's `disableContinuation`: a
/// WebSocket-cached transport falls back to a plain request).
pub fn get_cache_warming_request_options(options: &StreamOptions) -> StreamOptions {
    let transport = match options.transport {
        Some(Transport::WebSocketCached | Transport::Auto) => Some(Transport::WebSocket),
        other => other,
    };
    StreamOptions { max_tokens: Some(1), max_retries: 0, transport, ..options.clone() }
}

/// Whether refreshing the cache entry of a `prompt_tokens`-token request pays for itself in `phase`.
pub fn evaluate_cache_warming(model: &Model, prompt_tokens: u64, phase: CacheWarmingPhase) -> CacheWarmingDecision {
    let cache_hit_cost = price(model, Usage { cache_read: prompt_tokens, ..Default::default() });
    let miss_usage = if model.cost.cache_write > 0.0 {
        Usage { cache_write: prompt_tokens, ..Default::default() }
    } else {
        Usage { input: prompt_tokens, ..Default::default() }
    };
    let cache_miss_cost = price(model, miss_usage);
    let warm_cost = price(model, Usage { cache_read: prompt_tokens, output: 1, ..Default::default() });
    let miss_cost = (cache_miss_cost - cache_hit_cost).max(0.0);
    let continuation_probability = match phase {
        CacheWarmingPhase::Idle => CACHE_WARMING_IDLE_CONTINUATION_PROBABILITY,
        CacheWarmingPhase::Streaming => 1.0,
    };
    let economics_available = prompt_tokens > 0 && (cache_hit_cost > 0.0 || cache_miss_cost > 0.0);
    let expected_savings = continuation_probability * miss_cost - warm_cost;
    CacheWarmingDecision {
        phase,
        warm_cost,
        miss_cost,
        continuation_probability,
        expected_savings,
        economics_available,
        action: if expected_savings >= CACHE_WARMING_MINIMUM_EXPECTED_SAVINGS {
            CacheWarmingAction::Warm
        } else {
            CacheWarmingAction::Stop
        },
    }
}

fn price(model: &Model, mut usage: Usage) -> f64 {
    calculate_cost(model, &mut usage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModelCost;
    use serde_json::json;

    fn sonnet() -> Model {
        Model {
            api: "anthropic-messages".into(),
            cost: ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, ..Default::default() },
            prompt_cache: Some(json!({"short": 300, "long": 3600})),
            ..Default::default()
        }
    }

    #[test]
    fn delay_keeps_ten_percent_or_ten_seconds() {
        assert_eq!(get_cache_warming_delay_ms(300_000), Some(270_000));
        assert_eq!(get_cache_warming_delay_ms(60_000), Some(50_000));
        assert_eq!(get_cache_warming_delay_ms(11_000), Some(1_000));
        assert_eq!(get_cache_warming_delay_ms(10_000), None);
    }

    #[test]
    fn ttl_follows_the_retention_tier() {
        let m = sonnet();
        let short = StreamOptions { cache_retention: Some(CacheRetention::Short), ..Default::default() };
        let long = StreamOptions { cache_retention: Some(CacheRetention::Long), ..Default::default() };
        let none = StreamOptions { cache_retention: Some(CacheRetention::None), ..Default::default() };
        assert_eq!(get_prompt_cache_ttl_ms(&m, &short), Some(300_000));
        assert_eq!(get_prompt_cache_ttl_ms(&m, &long), Some(3_600_000));
        assert_eq!(get_prompt_cache_ttl_ms(&m, &none), None);
        assert_eq!(get_prompt_cache_ttl_ms(&Model::default(), &short), None);
    }

    #[test]
    fn budget_thinking_is_not_replayable() {
        let m = sonnet();
        let thinking = StreamOptions { reasoning: Some(crate::ThinkingLevel::High), ..Default::default() };
        assert!(!is_cache_warming_replayable(&m, &thinking));
        assert!(is_cache_warming_replayable(&m, &StreamOptions::default()));
        let mut adaptive = sonnet();
        adaptive.compat = json!({"forceAdaptiveThinking": true}).as_object().cloned();
        assert!(is_cache_warming_replayable(&adaptive, &thinking));
    }

    #[test]
    fn economics_match_the_reference() {
        let m = sonnet();
        let d = evaluate_cache_warming(&m, 100_000, CacheWarmingPhase::Streaming);
        assert!((d.warm_cost - (0.03 + 0.000015)).abs() < 1e-12);
        assert!((d.miss_cost - (0.375 - 0.03)).abs() < 1e-12);
        assert_eq!(d.action, CacheWarmingAction::Warm);
        let idle = evaluate_cache_warming(&m, 100_000, CacheWarmingPhase::Idle);
        // 0.15 × 0.345 − 0.030015 = 0.021735 < 0.05
        assert_eq!(idle.action, CacheWarmingAction::Stop);
        assert!(idle.economics_available);
        let empty = evaluate_cache_warming(&m, 0, CacheWarmingPhase::Streaming);
        assert!(!empty.economics_available);
        assert_eq!(empty.action, CacheWarmingAction::Stop);
    }
}
