//! The models `--model` is resolved against, without parsing the whole built-in catalog.
//!
//! [`resolve_cli_model`](super::model_resolver::resolve_cli_model) decides from the models of
//! the providers the pattern names (`--provider`, or a `provider/` prefix) and from the models
//! whose id or name contains the pattern (or the pattern without a `:level` suffix), compared in
//! lower case, in catalog order. Every other model is left out of every step, so resolving
//! against this subsequence gives the same model, warning and error as resolving against all
//! models. A built-in provider's models are parsed only when one of them is in it; models of
//! custom or changed providers are always kept. When nothing is kept, every model is returned
//! (the "not found" error then reads as with the whole catalog).

use pi_ai::Model;
use pi_ai::registry::Models;

use super::model_resolver::CliModelRequest;

/// The models of `models` that can decide `request`, in catalog order (see the module docs).
///
/// ```
/// use pi_coding_agent::cli::model_candidates::cli_model_candidates;
/// use pi_coding_agent::cli::model_resolver::CliModelRequest;
/// let models = pi_ai::registry::Models::from_catalog();
/// let request = CliModelRequest { model: "groq/llama-3.1-8b-instant", ..Default::default() };
/// let candidates = cli_model_candidates(&models, &request);
/// assert!(candidates.iter().any(|m| m.provider == "groq" && m.id == "llama-3.1-8b-instant"));
/// assert!(candidates.len() < models.get_models(None).len());
/// ```
pub fn cli_model_candidates<'m>(models: &'m Models, request: &CliModelRequest<'_>) -> Vec<&'m Model> {
    let text = request.model.trim();
    // The pattern and each shorter pattern a `:level` suffix could be stripped to.
    let patterns: Vec<String> =
        std::iter::once(text).chain(text.match_indices(':').map(|(i, _)| &text[..i])).map(str::to_lowercase).collect();
    let named = |provider: &str| {
        let provider_lower = provider.trim().to_lowercase();
        request.provider.is_some_and(|p| p.eq_ignore_ascii_case(provider))
            || (!provider_lower.is_empty() && patterns.iter().any(|p| p.starts_with(&provider_lower)))
    };
    let matches =
        |id: &str, name: &str| patterns.iter().any(|p| contains_lowercased(id, p) || contains_lowercased(name, p));
    let mut out = Vec::new();
    for entry in models.providers() {
        if !entry.models.is_builtin() || named(&entry.id) {
            out.extend(entry.models.iter());
            continue;
        }
        let keep: Vec<usize> =
            entry.models.keys().enumerate().filter(|(_, (id, name))| matches(id, name)).map(|(i, _)| i).collect();
        if !keep.is_empty() {
            let list: &[Model] = &entry.models;
            out.extend(keep.into_iter().filter_map(|i| list.get(i)));
        }
    }
    if out.is_empty() {
        return models.get_models(None);
    }
    out
}

/// Whether `text` in lower case contains `lower` (already in lower case): an ASCII `text` is
/// compared in place, without the copy `to_lowercase` makes (a run compares every model of the
/// catalog, about 1 700 ids and names).
fn contains_lowercased(text: &str, lower: &str) -> bool {
    if !text.is_ascii() {
        return text.to_lowercase().contains(lower);
    }
    // Most ids are lower case already: then the standard library's substring search does it.
    if !text.bytes().any(|b| b.is_ascii_uppercase()) {
        return text.contains(lower);
    }
    // Lower-cased ASCII holds only ASCII: a pattern with other characters cannot be in it.
    let (text, lower) = (text.as_bytes(), lower.as_bytes());
    lower.is_empty()
        || text.windows(lower.len()).any(|w| w.iter().zip(lower).all(|(a, b)| a.to_ascii_lowercase() == *b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::model_resolver::resolve_cli_model;

    fn outcome(request: &CliModelRequest<'_>, models: &[&Model], usable: &dyn Fn(&str) -> bool) -> String {
        match resolve_cli_model(request, models, usable) {
            Ok(r) => format!("{}/{} {:?} {:?}", r.model.provider, r.model.id, r.thinking_level, r.warning),
            Err(e) => e,
        }
    }

    /// Every pattern resolves the same against the candidates as against the whole catalog.
    #[test]
    fn candidates_resolve_as_the_whole_catalog() {
        let mut models = Models::from_catalog();
        let local: Model = serde_json::from_value(serde_json::json!({"id":"smollm2-135m","name":"SmolLM2",
            "api":"openai-completions","provider":"local","baseUrl":"http://x/v1","reasoning":false,
            "input":["text"],"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0},
            "contextWindow":8192,"maxTokens":256}))
        .unwrap();
        models.set_provider(pi_ai::registry::ProviderEntry {
            id: "local".into(),
            models: vec![local].into(),
            auth: pi_ai::registry::ProviderAuth::Keyless,
            apis: Default::default(),
        });
        let all = models.get_models(None);
        let mut patterns: Vec<String> = all
            .iter()
            .step_by(97)
            .flat_map(|m| [format!("{}/{}", m.provider, m.id), m.id.clone(), m.name.clone(), format!("{}:high", m.id)])
            .collect();
        patterns.extend(
            [
                "sonnet",
                "Sonnet:high",
                "gpt-4o",
                "4o-mini:low",
                "claude",
                "llama",
                "openrouter/anthropic/claude-3.5-sonnet",
                "anthropic/claude-3.5-sonnet",
                "OPENAI/GPT-4O",
                "groq/nope",
                "groq/nope:high",
                "nope",
                "local/smollm2-135m",
                "local/other:high",
                "smol",
                "a",
                "x:high:low",
                "",
            ]
            .map(str::to_owned),
        );
        type HasAuth<'a> = &'a dyn Fn(&str) -> bool;
        let everyone: HasAuth<'_> = &|_| true;
        let no_one: HasAuth<'_> = &|_| false;
        let some: HasAuth<'_> = &|p| p == "openrouter" || p == "groq";
        let cases: [(Option<&str>, bool, &[HasAuth<'_>]); 5] = [
            (None, false, &[everyone, no_one, some]),
            (None, true, &[some]),
            (Some("groq"), false, &[some]),
            (Some("OpenRouter"), false, &[no_one]),
            (Some("nope"), false, &[everyone]),
        ];
        for pattern in &patterns {
            for (provider, inline_api_key, usables) in cases {
                let request = CliModelRequest { provider, model: pattern, thinking: None, inline_api_key };
                let candidates = cli_model_candidates(&models, &request);
                for usable in usables {
                    assert_eq!(
                        outcome(&request, &candidates, *usable),
                        outcome(&request, &all, *usable),
                        "{pattern:?} --provider {provider:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn contains_lowercased_is_to_lowercase_then_contains() {
        let texts =
            ["GPT-4o Mini", "claude-3.5-SONNET", "gpt-4o-mini", "claude-3-5-sonnet", "Ünïcode Ä", "İstanbul", "", "ab"];
        let patterns = ["gpt-4o", "sonnet", "ünï", "ä", "i\u{307}st", "", "abc", "b", "mini", "4O"];
        for text in texts {
            for pattern in patterns {
                let lower = pattern.to_lowercase();
                assert_eq!(
                    contains_lowercased(text, &lower),
                    text.to_lowercase().contains(lower.as_str()),
                    "{text:?} {lower:?}"
                );
            }
        }
    }
}
