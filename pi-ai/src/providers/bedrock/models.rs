//! What the reference decides from a Bedrock model's id and name (its compat rules): Claude or
//! not, adaptive thinking, native `xhigh`, thinking block binding, prompt caching.

use crate::types::Model;

/// The id and name, lower-cased, each also with `[\s_.:]+` collapsed to `-`
/// (`getModelMatchCandidates`: application inference profile ARNs do not name the model).
pub fn match_candidates(model: &Model) -> Vec<String> {
    let mut values = vec![model.id.as_str()];
    if !model.name.is_empty() {
        values.push(model.name.as_str());
    }
    let mut out = Vec::new();
    for value in values {
        let lower = value.to_lowercase();
        let mut dashed = String::with_capacity(lower.len());
        let mut in_run = false;
        for c in lower.chars() {
            if c.is_whitespace() || matches!(c, '_' | '.' | ':') {
                if !in_run {
                    dashed.push('-');
                }
                in_run = true;
            } else {
                dashed.push(c);
                in_run = false;
            }
        }
        out.push(lower);
        out.push(dashed);
    }
    out
}

fn any(model: &Model, needles: &[&str]) -> bool {
    match_candidates(model).iter().any(|s| needles.iter().any(|n| s.contains(n)))
}

/// An Anthropic Claude model on Bedrock.
pub fn is_anthropic_claude(model: &Model) -> bool {
    let id = model.id.to_lowercase();
    let name = model.name.to_lowercase();
    id.contains("anthropic.claude")
        || id.contains("anthropic/claude")
        || name.contains("anthropic.claude")
        || name.contains("anthropic/claude")
        || name.contains("claude")
}

/// Adaptive thinking (Opus 4.6+, Sonnet 4.6, the 5 family).
pub fn supports_adaptive_thinking(model: &Model) -> bool {
    any(model, &["opus-4-6", "opus-4-7", "opus-4-8", "opus-5", "sonnet-4-6", "sonnet-5", "haiku-5", "fable-5"])
}

/// `xhigh` effort sent as is.
pub fn supports_native_xhigh(model: &Model) -> bool {
    any(model, &["opus-4-7", "opus-4-8", "opus-5", "sonnet-5", "haiku-5", "fable-5"])
}

/// `thinking.block_binding` accepted.
pub fn supports_block_binding(model: &Model) -> bool {
    supports_native_xhigh(model)
}

/// Cache points: Claude 3.5 Haiku, 3.7 Sonnet, 4.x and 5; others only with `AWS_BEDROCK_FORCE_CACHE=1`.
pub fn supports_prompt_caching(model: &Model) -> bool {
    let candidates = match_candidates(model);
    let has = |n: &str| candidates.iter().any(|s| s.contains(n));
    if !has("claude") {
        return super::credentials::env("AWS_BEDROCK_FORCE_CACHE").as_deref() == Some("1");
    }
    ["fable-5", "opus-5", "sonnet-5", "haiku-5", "-4-", "claude-3-7-sonnet", "claude-3-5-haiku"].iter().any(|n| has(n))
}

/// Only Claude takes `reasoningText.signature`.
pub fn supports_thinking_signature(model: &Model) -> bool {
    is_anthropic_claude(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str, name: &str) -> Model {
        Model { id: id.into(), name: name.into(), ..Default::default() }
    }

    #[test]
    fn detection_follows_ids_and_names() {
        let arn = model("arn:aws:bedrock:us-east-1:1:application-inference-profile/x", "Claude Opus 4.7");
        assert!(is_anthropic_claude(&arn) && supports_adaptive_thinking(&arn) && supports_native_xhigh(&arn));
        let sonnet = model("anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5");
        assert!(supports_prompt_caching(&sonnet) && !supports_adaptive_thinking(&sonnet));
        let nova = model("amazon.nova-pro-v1:0", "Nova Pro");
        assert!(!is_anthropic_claude(&nova) && !supports_thinking_signature(&nova));
    }
}
