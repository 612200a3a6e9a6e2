//! Models: the built-in catalog, custom `models.json` providers, cost, environment API keys,
//! thinking levels and output-token clamping.

mod azure;
mod catalog;
mod compose;
mod config;
mod config_schema;
mod config_value;
mod cost;
mod env;
mod estimate;
mod json_text;
mod model_list;
mod provider_auth;
mod thinking;

pub use azure::{AZURE_ENV, resolve_azure_base_url, resolve_azure_deployment};
pub use catalog::{
    BuiltinProvider, ProviderInfo, builtin_catalog, builtin_catalog_owned, builtin_provider, builtin_providers,
    builtin_providers_list, get_model, get_models, get_providers, provider_info,
};
pub use compose::{apply_model_override, apply_model_overrides, apply_models_json, find_model_defaults, merge_compat};
pub use config::{ModelsConfig, ModelsConfigError, ProviderConfig, ProviderError, ProviderErrors};
pub use config_schema::{SchemaError, schema_errors};
pub use config_value::{
    config_value_env_names, is_command_config_value, resolve_config_value, resolve_config_value_or_err,
    resolve_config_value_with,
};
pub use cost::calculate_cost;
pub use env::{ANTHROPIC_AUTH_TOKEN_ENV, env_api_key, env_api_key_vars, env_api_key_with};
pub use estimate::{
    clamp_max_tokens_to_context, estimate_context_tokens, estimate_message_tokens, usage_context_tokens,
};
pub use json_text::{parse_lenient_json, strip_bom, strip_json_comments};
pub use model_list::ModelList;
pub use provider_auth::{ResolvedAuth, resolve_provider_auth};
pub use thinking::{clamp_thinking_level, supported_thinking_levels};
