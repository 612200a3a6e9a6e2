//! `--models` (and the `enabledModels` setting): the model scope cycled with Ctrl+P, resolved
//! with pi 1.6.0's rules (`resolveModelScopeFromModels`): glob patterns (`*`, `?`, `[`) match
//! `provider/id` or the id, case-insensitively; other patterns resolve like `--model`; each may
//! end in `:<thinking>`. Patterns matching nothing are warnings, not errors.
//!
//! ```
//! use pi_coding_agent::cli::model_scope::resolve_model_scope;
//! let m: pi_ai::Model = serde_json::from_value(serde_json::json!({"id":"smollm2-135m","name":"SmolLM2",
//!   "api":"openai-completions","provider":"local","baseUrl":"http://x/v1","reasoning":false,
//!   "input":["text"],"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0},
//!   "contextWindow":8192,"maxTokens":256})).unwrap();
//! let scope = resolve_model_scope(&["zzz*".into(), "local/smol*:high".into()], &[m]);
//! assert_eq!(scope.models[0].model.id, "smollm2-135m");
//! assert_eq!(scope.models[0].thinking_level.as_deref(), Some("high"));
//! assert_eq!(scope.warnings, ["No models match pattern \"zzz*\""]);
//! ```

use globset::GlobBuilder;
use pi_ai::Model;

use super::args::VALID_THINKING_LEVELS;
use super::model_resolver::resolve_scope_pattern;

/// A model of the scope, with the thinking level its pattern named.
#[derive(Clone, Debug)]
pub struct ScopedModel {
    /// The model.
    pub model: Model,
    /// `:level` of the pattern; `None` keeps the session's level when cycling.
    pub thinking_level: Option<String>,
}

/// The resolved scope and pi's warnings (without the `Warning: ` prefix).
#[derive(Clone, Debug, Default)]
pub struct ModelScope {
    /// Models in pattern order, without duplicates.
    pub models: Vec<ScopedModel>,
    /// `No models match pattern "…"` and ambiguity warnings.
    pub warnings: Vec<String>,
}

fn glob_matches(pattern: &str, text: &str) -> bool {
    GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(true)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(text))
}

fn ambiguous_warning(pattern: &str, models: &[Model]) -> String {
    let mut providers: Vec<&str> = models.iter().map(|m| m.provider.as_str()).collect();
    providers.sort_unstable();
    providers.dedup();
    format!("Pattern \"{pattern}\" matches several providers: {}. Use provider/id to choose one.", providers.join(", "))
}

/// Resolves `patterns` against the `available` models (those with credentials).
pub fn resolve_model_scope(patterns: &[String], available: &[Model]) -> ModelScope {
    let mut scope = ModelScope::default();
    let add = |scope: &mut ModelScope, model: &Model, thinking: Option<String>| {
        if !scope.models.iter().any(|s| s.model.provider == model.provider && s.model.id == model.id) {
            scope.models.push(ScopedModel { model: model.clone(), thinking_level: thinking });
        }
    };
    for pattern in patterns {
        if pattern.contains(['*', '?', '[']) {
            let (glob, thinking) = match pattern.rsplit_once(':') {
                Some((base, level)) if VALID_THINKING_LEVELS.contains(&level) => (base, Some(level.to_owned())),
                _ => (pattern.as_str(), None),
            };
            let exact: Vec<&Model> = available
                .iter()
                .filter(|m| {
                    m.id.eq_ignore_ascii_case(glob) || format!("{}/{}", m.provider, m.id).eq_ignore_ascii_case(glob)
                })
                .collect();
            let matches: Vec<Model> = if exact.is_empty() {
                available
                    .iter()
                    .filter(|m| glob_matches(glob, &format!("{}/{}", m.provider, m.id)) || glob_matches(glob, &m.id))
                    .cloned()
                    .collect()
            } else {
                exact.into_iter().cloned().collect()
            };
            if matches.is_empty() {
                scope.warnings.push(format!("No models match pattern \"{pattern}\""));
            }
            for m in &matches {
                add(&mut scope, m, thinking.clone());
            }
            continue;
        }
        match resolve_scope_pattern(pattern, available) {
            None => scope.warnings.push(format!("No models match pattern \"{pattern}\"")),
            Some((models, thinking)) => {
                let mut providers: Vec<&str> = models.iter().map(|m| m.provider.as_str()).collect();
                providers.dedup();
                if providers.len() > 1 {
                    scope.warnings.push(ambiguous_warning(pattern, &models));
                }
                for m in &models {
                    add(&mut scope, m, thinking.clone());
                }
            }
        }
    }
    scope
}
