//! Token usage and its cost, and the reason a response stopped.

use serde::{Deserialize, Serialize};

use crate::json_object;

json_object! {
    /// Cost of a response in USD, derived from the model's per-million rates.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Cost {
        /// Input cost.
        input: num f64 = "input",
        /// Output cost.
        output: num f64 = "output",
        /// Cache-read cost.
        cache_read: num f64 = "cacheRead",
        /// Cache-write cost.
        cache_write: num f64 = "cacheWrite",
        /// Best available total.
        total: num f64 = "total",
        /// True when `total` is the provider's billed cost.
        total_from_provider: opt bool = "totalFromProvider",
    }
}

json_object! {
    /// Token counts of one response. `input` excludes cache reads and writes; `reasoning` is a
    /// subset of `output`.
    ///
    /// ```
    /// let u = pi_ai::Usage::default();
    /// assert_eq!(
    ///     serde_json::to_string(&u).unwrap(),
    ///     r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#
    /// );
    /// ```
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Usage {
        /// Input tokens, excluding cache reads and writes.
        input: req u64 = "input",
        /// Output tokens (reasoning included).
        output: req u64 = "output",
        /// Tokens read from the prompt cache.
        cache_read: req u64 = "cacheRead",
        /// Tokens written to the prompt cache.
        cache_write: req u64 = "cacheWrite",
        /// Subset of `cache_write` written with 1h retention (Anthropic only).
        cache_write_1h: opt u64 = "cacheWrite1h",
        /// Reasoning tokens, when the provider reports them.
        reasoning: opt u64 = "reasoning",
        /// Total tokens.
        total_tokens: req u64 = "totalTokens",
        /// Cost in USD.
        cost: req Cost = "cost",
    }
}

/// Why a response stopped. `Pending` appears only on partial messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// Still streaming.
    Pending,
    /// The model finished.
    #[default]
    Stop,
    /// The output token limit was reached.
    Length,
    /// The model wants tool results.
    ToolUse,
    /// The request failed.
    Error,
    /// The request was cancelled.
    Aborted,
    /// The response will be fetched later.
    Deferred,
}

impl StopReason {
    /// The JSON spelling (`"toolUse"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Pending => "pending",
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
            StopReason::Deferred => "deferred",
        }
    }
}

/// pi's thinking levels, from `off` to `max`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// No reasoning.
    #[default]
    Off,
    /// Minimal reasoning.
    Minimal,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Extra high.
    Xhigh,
    /// Maximum.
    Max,
}

impl ThinkingLevel {
    /// All levels, in order.
    pub const ALL: [ThinkingLevel; 7] = [
        ThinkingLevel::Off,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
        ThinkingLevel::Xhigh,
        ThinkingLevel::Max,
    ];

    /// The JSON spelling (`"xhigh"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
            ThinkingLevel::Max => "max",
        }
    }

    /// Parses the JSON spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }
}
