//! The `pi` command line: argument parsing with pi's flags and messages, help text, `@file`
//! arguments, model selection and the model list. The binary (`src/bin/pi.rs`) wires these to
//! the [`modes`](crate::modes).

pub mod args;
pub mod auth_command;
pub mod auth_login;
pub mod export_html;
pub mod file_args;
pub mod list_models;
pub mod logging;
pub mod model_resolver;
pub mod model_scope;
pub mod registry;
pub mod session_select;

/// `pi --help`, byte for byte as pi 1.6.0 prints it (captured by `scripts/fixtures/pi_cli.sh`).
pub const HELP: &str = include_str!("help.txt");

/// The version `pi --version` prints (the reference's, since the CLI is a port of it).
pub const VERSION: &str = pi_ai::http::PI_VERSION;

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
