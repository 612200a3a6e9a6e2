//! `--provider` / `--model provider/id[:thinking]` resolution with pi's rules and messages
//! (`core/model-resolver.ts` of pi 1.6.0): exact `provider/id` or id, then fuzzy id/name
//! matches (aliases before dated ids), a `:level` suffix, and a custom-id fallback on a named
//! provider. Credentials (`usable`) only break ties between providers.
//!
//! ```
//! use pi_coding_agent::cli::model_resolver::{resolve_cli_model, CliModelRequest};
//! let m: pi_ai::Model = serde_json::from_value(serde_json::json!({"id":"smollm2-135m","name":"SmolLM2",
//!   "api":"openai-completions","provider":"local","baseUrl":"http://x/v1","reasoning":false,
//!   "input":["text"],"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0},
//!   "contextWindow":8192,"maxTokens":256})).unwrap();
//! let models = vec![m];
//! let req = CliModelRequest { model: "local/smollm2-135m:high", ..Default::default() };
//! let r = resolve_cli_model(&req, &models, &|_| true).unwrap();
//! assert_eq!(r.model.id, "smollm2-135m");
//! assert_eq!(r.thinking_level.as_deref(), Some("high"));
//! let req = CliModelRequest { model: "nope", ..Default::default() };
//! assert_eq!(resolve_cli_model(&req, &models, &|_| true).unwrap_err(),
//!   "Model \"nope\" not found. Use --list-models to see available models.");
//! ```

use std::borrow::Borrow;

use pi_ai::Model;

use super::args::VALID_THINKING_LEVELS;

/// What the command line asked for.
#[derive(Clone, Debug, Default)]
pub struct CliModelRequest<'a> {
    /// `--provider`.
    pub provider: Option<&'a str>,
    /// `--model`.
    pub model: &'a str,
    /// `--thinking` (a valid level).
    pub thinking: Option<&'a str>,
    /// Whether `--api-key` was given (then credentials do not choose between providers).
    pub inline_api_key: bool,
}

/// A resolved model.
#[derive(Clone, Debug)]
pub struct ResolvedModel {
    /// The model (possibly a custom id on a known provider).
    pub model: Model,
    /// A `:level` suffix from the pattern.
    pub thinking_level: Option<String>,
    /// A warning to print (`Warning: …`).
    pub warning: Option<String>,
}

enum Outcome<'m> {
    Resolved { model: &'m Model, thinking: Option<String>, warning: Option<String> },
    Ambiguous { candidates: Vec<&'m Model>, usable_count: usize },
    NotFound,
}

fn split_thinking_suffix(text: &str) -> Option<(&str, &str)> {
    let colon = text.rfind(':')?;
    let (base, level) = (&text[..colon], &text[colon + 1..]);
    VALID_THINKING_LEVELS.contains(&level).then_some((base, level))
}

fn split_provider_prefix<'t>(text: &'t str, models: &[&Model]) -> Option<(String, &'t str)> {
    let lower = text.to_lowercase();
    let mut best: Option<(String, &str)> = None;
    for m in models {
        let prefix = m.provider.trim().to_lowercase();
        if prefix.is_empty() || best.as_ref().is_some_and(|(p, _)| p.len() >= m.provider.len()) {
            continue;
        }
        let Some(slash) = lower.get(prefix.len()..).and_then(|rest| rest.find('/')).map(|i| i + prefix.len()) else {
            continue;
        };
        if lower[..slash].trim() != prefix {
            continue;
        }
        let model_text = text[slash + 1..].trim();
        if !model_text.is_empty() {
            best = Some((m.provider.clone(), model_text));
        }
    }
    best
}

fn fuzzy_matches<'m>(text: &str, models: &[&'m Model]) -> Vec<&'m Model> {
    let lower = text.to_lowercase();
    models
        .iter()
        .copied()
        .filter(|m| m.id.to_lowercase().contains(&lower) || m.name.to_lowercase().contains(&lower))
        .collect()
}

fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let bytes = id.as_bytes();
    !(bytes.len() >= 9 && bytes[bytes.len() - 9] == b'-' && bytes[bytes.len() - 8..].iter().all(u8::is_ascii_digit))
}

fn best_fuzzy<'m>(matches: &[&'m Model]) -> Option<&'m Model> {
    let aliases: Vec<&Model> = matches.iter().copied().filter(|m| is_alias(&m.id)).collect();
    let pool = if aliases.is_empty() { matches.to_vec() } else { aliases };
    pool.into_iter().max_by(|a, b| a.id.cmp(&b.id))
}

fn distinct_providers(models: &[&Model]) -> usize {
    let mut p: Vec<&str> = models.iter().map(|m| m.provider.as_str()).collect();
    p.sort_unstable();
    p.dedup();
    p.len()
}

fn select_reference<'m>(text: &str, pool: &[&'m Model], usable: &dyn Fn(&str) -> bool) -> Option<Outcome<'m>> {
    let lower = text.to_lowercase();
    let raw: Vec<&Model> = pool.iter().copied().filter(|m| m.id.to_lowercase() == lower).collect();
    let named = split_provider_prefix(text, pool).and_then(|(provider, model_text)| {
        let provider_models: Vec<&Model> = pool.iter().copied().filter(|m| m.provider == provider).collect();
        let lower_model = model_text.to_lowercase();
        provider_models
            .iter()
            .copied()
            .find(|m| m.id.to_lowercase() == lower_model)
            .or_else(|| raw.iter().copied().find(|m| m.provider == provider))
            .or_else(|| best_fuzzy(&fuzzy_matches(model_text, &provider_models)))
    });
    let others: Vec<&Model> = raw.iter().copied().filter(|m| named.is_none_or(|n| !std::ptr::eq(*m, n))).collect();
    let mut candidates: Vec<&Model> = named.into_iter().collect();
    candidates.extend(others.iter().copied());
    let first = *candidates.first()?;
    if distinct_providers(&candidates) == 1 {
        return Some(Outcome::Resolved { model: first, thinking: None, warning: None });
    }
    if let Some(n) = named
        && usable(&n.provider)
    {
        return Some(Outcome::Resolved { model: n, thinking: None, warning: None });
    }
    let usable_others: Vec<&Model> = others.iter().copied().filter(|m| usable(&m.provider)).collect();
    if usable_others.len() == 1 {
        return Some(Outcome::Resolved { model: usable_others[0], thinking: None, warning: None });
    }
    if let (true, Some(n)) = (usable_others.is_empty(), named) {
        return Some(Outcome::Resolved { model: n, thinking: None, warning: None });
    }
    Some(Outcome::Ambiguous { candidates, usable_count: usable_others.len() })
}

fn select_fuzzy<'m>(matches: Vec<&'m Model>, usable: &dyn Fn(&str) -> bool) -> Option<Outcome<'m>> {
    if matches.is_empty() {
        return None;
    }
    let usable_matches: Vec<&Model> = if distinct_providers(&matches) > 1 {
        matches.iter().copied().filter(|m| usable(&m.provider)).collect()
    } else {
        Vec::new()
    };
    let any_usable = !usable_matches.is_empty();
    let pool = if any_usable { usable_matches } else { matches };
    let best = best_fuzzy(&pool)?;
    let tied: Vec<&Model> = pool.iter().copied().filter(|m| m.id == best.id).collect();
    if distinct_providers(&tied) == 1 {
        return Some(Outcome::Resolved { model: best, thinking: None, warning: None });
    }
    let usable_count = if any_usable { tied.len() } else { 0 };
    Some(Outcome::Ambiguous { candidates: tied, usable_count })
}

fn resolve_text<'m>(text: &str, pool: &[&'m Model], usable: &dyn Fn(&str) -> bool) -> Outcome<'m> {
    if let Some(r) = select_reference(text, pool, usable) {
        return r;
    }
    if let Some(r) = select_fuzzy(fuzzy_matches(text, pool), usable) {
        return r;
    }
    // pi's CLI uses the "strict" suffix mode: an invalid suffix stays part of the id.
    if let Some((base, level)) = split_thinking_suffix(text) {
        return match resolve_text(base, pool, usable) {
            Outcome::Resolved { model, warning, .. } => {
                let thinking = warning.is_none().then(|| level.to_owned());
                Outcome::Resolved { model, thinking, warning }
            }
            other => other,
        };
    }
    Outcome::NotFound
}

/// A `--models` pattern (no glob) resolved against the available models: the matching models
/// (several when providers tie) and a `:level` suffix, or `None` when nothing matches.
pub(crate) fn resolve_scope_pattern(text: &str, models: &[Model]) -> Option<(Vec<Model>, Option<String>)> {
    let pool: Vec<&Model> = models.iter().collect();
    let always = |_: &str| true;
    let (text, level) = match split_thinking_suffix(text) {
        Some((base, level)) if !matches!(resolve_text(text, &pool, &always), Outcome::Resolved { .. }) => {
            (base, Some(level.to_owned()))
        }
        _ => (text, None),
    };
    match resolve_text(text, &pool, &always) {
        Outcome::Resolved { model, thinking, .. } => Some((vec![model.clone()], thinking.or(level))),
        Outcome::Ambiguous { candidates, .. } => Some((candidates.into_iter().cloned().collect(), level)),
        Outcome::NotFound => None,
    }
}

/// pi's `resolveCliModel`. `usable(provider)` tells whether a provider has credentials. The
/// error is pi's message (printed as `Error: …`). `models`: owned or borrowed models (the CLI
/// passes the registry's, uncopied).
pub fn resolve_cli_model<M: Borrow<Model>>(
    request: &CliModelRequest<'_>,
    models: &[M],
    usable: &dyn Fn(&str) -> bool,
) -> Result<ResolvedModel, String> {
    let models: Vec<&Model> = models.iter().map(Borrow::borrow).collect();
    if models.is_empty() {
        return Err("No models available. Check your installation or add models to models.json.".into());
    }
    let provider = match request.provider {
        Some(p) => match models.iter().find(|m| m.provider.eq_ignore_ascii_case(p)) {
            Some(m) => Some(m.provider.clone()),
            None => {
                return Err(format!("Unknown provider \"{p}\". Use --list-models to see available providers/models."));
            }
        },
        None => None,
    };
    let pool: Vec<&Model> =
        models.iter().copied().filter(|m| provider.as_ref().is_none_or(|p| &m.provider == p)).collect();
    let never = |_: &str| false;
    let usable: &dyn Fn(&str) -> bool = if request.inline_api_key { &never } else { usable };
    let text = request.model.trim();
    let not_found = || format!("Model \"{}\" not found. Use --list-models to see available models.", request.model);
    if text.is_empty() {
        return Err(not_found());
    }
    match resolve_text(text, &pool, usable) {
        Outcome::Resolved { model, thinking, warning } => {
            Ok(ResolvedModel { model: model.clone(), thinking_level: thinking, warning })
        }
        Outcome::Ambiguous { candidates, usable_count } => {
            let mut names: Vec<String> = candidates.iter().map(|m| format!("{}/{}", m.provider, m.id)).collect();
            names.sort();
            let hint = if request.inline_api_key {
                "--api-key does not choose a provider."
            } else if usable_count == 0 {
                "No matching provider is authenticated."
            } else {
                "More than one matching provider is authenticated."
            };
            Err(format!(
                "Model \"{}\" is ambiguous across providers: {}. {hint} Use --provider or provider/model.",
                request.model,
                names.join(", ")
            ))
        }
        Outcome::NotFound => {
            // A named provider with an unknown id: a custom model id on that provider.
            let split = split_provider_prefix(text, &pool);
            let anchor = match (&provider, &split) {
                (Some(_), _) => pool.first().copied(),
                (None, Some((p, _))) => pool.iter().copied().find(|m| &m.provider == p),
                (None, None) => None,
            };
            let Some(anchor) = anchor else { return Err(not_found()) };
            let model_text = split.map(|(_, t)| t).unwrap_or(text);
            let suffix = split_thinking_suffix(model_text);
            let (model_id, fallback_thinking) = match (request.thinking, suffix) {
                (None, Some((base, level))) => (base, Some(level.to_owned())),
                _ => (model_text, None),
            };
            let mut model = anchor.clone();
            model.id = model_id.to_owned();
            model.name = model_id.to_owned();
            let requested = request.thinking.map(str::to_owned).or_else(|| fallback_thinking.clone());
            if requested.as_deref().is_some_and(|l| l != "off") {
                model.reasoning = true;
            }
            Ok(ResolvedModel {
                warning: Some(format!(
                    "Model \"{model_id}\" not found for provider \"{}\". Using custom model id.",
                    anchor.provider
                )),
                model,
                thinking_level: fallback_thinking,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, id: &str) -> Model {
        serde_json::from_value(serde_json::json!({"id":id,"name":id,"api":"openai-completions","provider":provider,
            "baseUrl":"http://x","reasoning":false,"input":["text"],
            "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0},"contextWindow":1000,"maxTokens":100}))
        .unwrap()
    }

    #[test]
    fn fuzzy_prefers_aliases_and_latest() {
        let models = vec![model("a", "claude-sonnet-4-5-20250929"), model("a", "claude-sonnet-4-5"), model("a", "gpt")];
        let r =
            resolve_cli_model(&CliModelRequest { model: "sonnet", ..Default::default() }, &models, &|_| true).unwrap();
        assert_eq!(r.model.id, "claude-sonnet-4-5");
    }

    #[test]
    fn ambiguous_across_providers() {
        let models = vec![model("a", "m"), model("b", "m")];
        let e =
            resolve_cli_model(&CliModelRequest { model: "m", ..Default::default() }, &models, &|_| false).unwrap_err();
        assert_eq!(
            e,
            "Model \"m\" is ambiguous across providers: a/m, b/m. No matching provider is authenticated. Use --provider or provider/model."
        );
        let r =
            resolve_cli_model(&CliModelRequest { model: "m", ..Default::default() }, &models, &|p| p == "b").unwrap();
        assert_eq!(r.model.provider, "b");
    }

    #[test]
    fn custom_id_on_named_provider_and_unknown_provider() {
        let models = vec![model("local", "x")];
        let r =
            resolve_cli_model(&CliModelRequest { model: "local/other:high", ..Default::default() }, &models, &|_| true)
                .unwrap();
        assert_eq!(r.model.id, "other");
        assert!(r.model.reasoning);
        assert_eq!(
            r.warning.as_deref(),
            Some("Model \"other\" not found for provider \"local\". Using custom model id.")
        );
        let e = resolve_cli_model(
            &CliModelRequest { provider: Some("nope"), model: "x", ..Default::default() },
            &models,
            &|_| true,
        )
        .unwrap_err();
        assert_eq!(e, "Unknown provider \"nope\". Use --list-models to see available providers/models.");
    }
}
