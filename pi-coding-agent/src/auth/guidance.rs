//! pi's guidance when credentials are missing (`core/auth-guidance.js`), shared by the CLI and
//! the interactive mode.

/// Where pi's docs live; pi prints its install's docs folder in its auth guidance.
pub const DOCS_DIR: &str = "https://github.com/earendil-works/pi/blob/main/packages/coding-agent/docs";

/// How to give pi credentials (pi's `getProviderLoginHelp`, before its list of docs).
pub const LOGIN_HINT: &str = "Use /login to log into a provider via OAuth or API key.";

/// pi's guidance when no model has credentials (`formatNoModelsAvailableMessage`).
pub fn no_models_message() -> String {
    format!("No models available. {LOGIN_HINT} See:\n  {DOCS_DIR}/providers.md\n  {DOCS_DIR}/models.md")
}

/// pi's message when the selected model has no key (`No API key found for <provider>.` or, with
/// no model at all, `for the selected model.`).
pub fn no_api_key_message(provider: Option<&str>) -> String {
    let what = provider.map_or_else(|| "the selected model".to_owned(), str::to_owned);
    format!("No API key found for {what}.\n\n{LOGIN_HINT} See:\n  {DOCS_DIR}/providers.md\n  {DOCS_DIR}/models.md")
}
