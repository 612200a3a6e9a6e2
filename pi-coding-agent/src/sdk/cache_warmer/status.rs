//! The warmer's status and pi's texts for it (`/session`'s line, the transcript's
//! "Cache warmed" notice).

use pi_ai::cache_warming::{
    CACHE_WARMING_MINIMUM_EXPECTED_SAVINGS, CacheWarmingAction, CacheWarmingDecision, CacheWarmingPhase,
};
use serde::Serialize;

/// What the warmer is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheWarmingState {
    /// Not warming (see the reason).
    Inactive,
    /// A refresh is scheduled.
    Scheduled,
    /// A refresh is being decided or sent.
    Refreshing,
}

/// pi's `CacheWarmingStatus`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheWarmingStatus {
    /// The state.
    pub state: CacheWarmingState,
    /// Why warming is inactive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When the next decision is due (milliseconds since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_warm_at: Option<u64>,
    /// The decision acted on (or the current economics of a scheduled run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<CacheWarmingDecision>,
    /// Whether an extension overrode pi's decision.
    pub extension_override: bool,
}

impl CacheWarmingStatus {
    /// Inactive for `reason`.
    pub fn inactive(reason: &str) -> Self {
        CacheWarmingStatus {
            state: CacheWarmingState::Inactive,
            reason: Some(reason.to_owned()),
            next_warm_at: None,
            decision: None,
            extension_override: false,
        }
    }
}

fn dollars(value: f64) -> String {
    if value < 0.0 { format!("-${:.3}", value.abs()) } else { format!("${value:.3}") }
}

fn economics(d: &CacheWarmingDecision) -> String {
    if !d.economics_available {
        return "cache economics unavailable".to_owned();
    }
    let probability = (d.continuation_probability * 100.0).round();
    let probability = if d.phase == CacheWarmingPhase::Streaming {
        format!("{probability}% continuation probability while agent is running")
    } else {
        format!("{probability}% continuation probability")
    };
    let comparison = if d.action == CacheWarmingAction::Warm { ">=" } else { "<" };
    format!(
        "{probability}, expected savings {} {comparison} ${CACHE_WARMING_MINIMUM_EXPECTED_SAVINGS:.3}",
        dollars(d.expected_savings)
    )
}

fn decision_time(next_warm_at: Option<u64>, now: u64) -> String {
    let Some(at) = next_warm_at.filter(|&at| at > now) else { return "Decision now".to_owned() };
    let mut remaining = (at - now).div_ceil(1000);
    let hours = remaining / 3600;
    remaining %= 3600;
    let (minutes, seconds) = (remaining / 60, remaining % 60);
    let mut parts = Vec::new();
    if hours > 0 {
        parts.push(format!("{hours}h"));
    }
    if minutes > 0 {
        parts.push(format!("{minutes}m"));
    }
    if seconds > 0 || parts.is_empty() {
        parts.push(format!("{seconds}s"));
    }
    format!("Decision in {}", parts.join(" "))
}

/// pi's `formatCacheWarmingStatus`: the one-line status `/session` shows at `now` (ms).
pub fn format_cache_warming_status(status: &CacheWarmingStatus, now: u64) -> String {
    let decision = match &status.decision {
        Some(d)
            if !(status.state == CacheWarmingState::Inactive
                && !d.economics_available
                && !status.extension_override) =>
        {
            d
        }
        _ => return format!("Inactive ({})", status.reason.as_deref().unwrap_or("unknown reason")),
    };
    let details = if status.extension_override {
        format!("extension override, {}", economics(decision))
    } else {
        let action = if decision.action == CacheWarmingAction::Warm { "warm" } else { "stop" };
        format!("{} -> {action}", economics(decision))
    };
    match status.state {
        CacheWarmingState::Inactive => format!("Stopped ({details})"),
        CacheWarmingState::Refreshing => format!("Warming cache ({details})"),
        CacheWarmingState::Scheduled => format!("{} ({details})", decision_time(status.next_warm_at, now)),
    }
}

/// pi's `formatCacheWarmingUsage`: the transcript line for one or more consecutive warms.
pub fn format_cache_warming_usage(total_cost: f64, note: Option<&str>) -> String {
    let note = note.map(|n| format!(" ({n})")).unwrap_or_default();
    // Six decimals, trailing zeros trimmed down to three.
    let mut cost = format!("{total_cost:.6}");
    while cost.len() > cost.find('.').map_or(0, |i| i + 4) && cost.ends_with('0') {
        cost.pop();
    }
    format!("Cache warmed{note}: ${cost}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(action: CacheWarmingAction, phase: CacheWarmingPhase) -> CacheWarmingDecision {
        CacheWarmingDecision {
            phase,
            warm_cost: 0.03,
            miss_cost: 0.345,
            continuation_probability: if phase == CacheWarmingPhase::Idle { 0.15 } else { 1.0 },
            expected_savings: 0.314985,
            economics_available: true,
            action,
        }
    }

    #[test]
    fn status_lines_match_the_reference() {
        let mut s = CacheWarmingStatus::inactive("waiting for first request");
        assert_eq!(format_cache_warming_status(&s, 0), "Inactive (waiting for first request)");
        s.state = CacheWarmingState::Scheduled;
        s.decision = Some(decision(CacheWarmingAction::Warm, CacheWarmingPhase::Streaming));
        s.next_warm_at = Some(3_725_500);
        assert_eq!(
            format_cache_warming_status(&s, 0),
            "Decision in 1h 2m 6s (100% continuation probability while agent is running, expected savings $0.315 >= $0.050 -> warm)"
        );
        s.extension_override = true;
        s.state = CacheWarmingState::Inactive;
        assert_eq!(
            format_cache_warming_status(&s, 0),
            "Stopped (extension override, 100% continuation probability while agent is running, expected savings $0.315 >= $0.050)"
        );
    }

    #[test]
    fn usage_line_trims_zeros_to_three_decimals() {
        assert_eq!(format_cache_warming_usage(0.03, None), "Cache warmed: $0.030");
        assert_eq!(
            format_cache_warming_usage(0.030015, Some("extension override")),
            "Cache warmed (extension override): $0.030015"
        );
        assert_eq!(format_cache_warming_usage(0.1234, None), "Cache warmed: $0.1234");
    }
}
