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
pub mod model_candidates;
pub mod model_resolver;
pub mod model_scope;
pub mod registry;
pub mod session_select;
pub mod startup_model;

/// `pi --help`, byte for byte as pi 1.6.0 prints it (captured by `scripts/fixtures/pi_cli.sh`).
pub const HELP: &str = include_str!("help.txt");

/// The version `pi --version` prints (the reference's, since the CLI is a port of it).
pub const VERSION: &str = pi_ai::http::PI_VERSION;

pub use crate::auth::guidance::{DOCS_DIR, LOGIN_HINT, no_api_key_message, no_models_message};
