//! The llama.cpp provider's models before the extension loads (pi's model registry restoring the
//! provider's stored catalog at startup): `--model llama.cpp/<id>` and a saved default model
//! resolve against `models-store.json` when a server is configured (the stored credential or
//! `LLAMA_BASE_URL`), as pi 1.6.0 resolves them; the router itself is not asked at startup
//! (pi does not ask it either: a model missing from the stored catalog is not found).

use std::path::Path;

use pi_ai::Model;

use super::provider::{LLAMA_PROVIDER_ID, LlamaProvider, process_env, read_stored, resolve_auth, stored_credential};
use crate::extensions::RegisteredProvider;

/// Whether the provider has a server to reach (pi's `check`: the stored credential's
/// `LLAMA_BASE_URL`, else the environment's).
pub fn has_startup_auth(agent_dir: &Path) -> bool {
    resolve_auth(stored_credential(agent_dir).as_ref(), &process_env).is_some()
}

/// The stored chat models, as the extension registers them; empty without a configured server.
pub fn startup_models(agent_dir: &Path) -> Vec<Model> {
    let credential = stored_credential(agent_dir);
    let Some(auth) = resolve_auth(credential.as_ref(), &process_env) else { return Vec::new() };
    let Some(stored) = read_stored(agent_dir) else { return Vec::new() };
    let provider = LlamaProvider::default();
    provider.set(stored);
    let registered = RegisteredProvider {
        name: LLAMA_PROVIDER_ID.to_owned(),
        config: provider.config(Some(&auth.api_key)),
        extension_path: "builtin:llama.cpp".to_owned(),
    };
    registered.model_values().into_iter().filter_map(|m| serde_json::from_value(m).ok()).collect()
}
