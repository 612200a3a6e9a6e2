//! The llama.cpp built-in extension (pi's `dist/extensions/llama/`, `builtin:llama.cpp`): the
//! `llama.cpp` provider over a llama.cpp router, its `/login` entry, and `/llama`, the router's
//! model manager (list, load, unload, Hugging Face downloads).
//!
//! The provider's models are registered with [`ExtensionApi::register_provider`] (so `/model`
//! lists them and requests reach `<server>/v1` with the provider's key); the catalog is restored
//! from `models-store.json` at load and refreshed from the server of the stored credential when
//! the session starts (not with `PI_OFFLINE`), and again after every `/llama` action.

pub mod client;
mod flow;
pub mod huggingface;
pub mod login;
pub mod provider;
pub mod router;
mod search;
mod startup;
pub mod view;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

pub use login::login_provider;
pub use provider::{DEFAULT_LLAMA_SERVER_URL, LLAMA_PROVIDER_ID, LlamaProvider};
pub use startup::{has_startup_auth, startup_models};

use crate::extensions::{BoxError, Extension, ExtensionApi};

/// The extension's name in `extensions` settings (`-builtin:llama.cpp`).
pub const LLAMA_EXTENSION_NAME: &str = "llama.cpp";

/// The llama.cpp extension.
#[derive(Clone, Debug)]
pub struct LlamaExtension {
    agent_dir: PathBuf,
    hugging_face_url: String,
    provider: LlamaProvider,
    /// Whether `session_start` refreshes the catalog from the stored credential's server.
    startup_refresh: bool,
}

impl LlamaExtension {
    /// The extension for `agent_dir` (auth.json, models-store.json), searching Hugging Face at
    /// `HF_ENDPOINT` when set (as the `huggingface_hub` tools do), else huggingface.co.
    pub fn new(agent_dir: PathBuf) -> Self {
        let hugging_face_url = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|u| !u.trim().is_empty())
            .unwrap_or_else(|| huggingface::DEFAULT_HUGGING_FACE_URL.to_owned());
        LlamaExtension { agent_dir, hugging_face_url, provider: LlamaProvider::default(), startup_refresh: true }
    }

    /// Whether `session_start` refreshes the catalog from the network (on by default; off for
    /// pi's one-shot print and JSON modes, which use the stored catalog).
    pub fn with_startup_refresh(mut self, refresh: bool) -> Self {
        self.startup_refresh = refresh;
        self
    }

    /// Uses another Hugging Face address (a local server in tests).
    pub fn with_hugging_face_url(mut self, url: &str) -> Self {
        self.hugging_face_url = url.to_owned();
        self
    }

    /// The provider's models.
    pub fn provider(&self) -> &LlamaProvider {
        &self.provider
    }

    /// Registers (again) the provider with its current models and the key requests use.
    fn publish(&self, api: &ExtensionApi) -> Result<(), BoxError> {
        let credential = provider::stored_credential(&self.agent_dir);
        let auth = provider::resolve_auth(credential.as_ref(), &provider::process_env);
        let key = auth.map(|a| a.api_key);
        api.register_provider(LLAMA_PROVIDER_ID, self.provider.config(key.as_deref()))?;
        Ok(())
    }

    /// pi's `refreshModels` with the network allowed: the stored credential's server, then
    /// `models-store.json` and the registration.
    async fn refresh(&self, api: &ExtensionApi, cancel: &CancellationToken) -> Result<(), BoxError> {
        let Some(credential) = provider::stored_credential(&self.agent_dir) else { return Ok(()) };
        let stored = provider::read_stored(&self.agent_dir);
        if let Some(models) = provider::refresh_from_server(&credential, stored.as_ref(), cancel).await? {
            self.provider.set(models.clone());
            provider::write_stored(&self.agent_dir, &models)?;
            self.publish(api)?;
        }
        Ok(())
    }
}

#[async_trait]
impl Extension for LlamaExtension {
    fn path(&self) -> &str {
        "builtin:llama.cpp"
    }

    async fn setup(&self, api: &ExtensionApi) -> Result<(), BoxError> {
        if let Some(stored) = provider::read_stored(&self.agent_dir) {
            self.provider.set(stored);
        }
        self.publish(api)?;
        // pi's `/login` refreshes the provider's models once the credential is stored, so
        // `/model` lists the router's models right away.
        let (this, login_api) = (self.clone(), api.clone());
        let after: login::AfterStored = Arc::new(move || {
            let (this, api) = (this.clone(), login_api.clone());
            Box::pin(async move {
                if let Err(e) = this.refresh(&api, &CancellationToken::new()).await {
                    tracing::warn!(error = %e, "llama.cpp catalog refresh after /login failed");
                }
            })
        });
        api.register_login_provider(Arc::new(
            login::LlamaLogin::with_env(|n| std::env::var(n).ok()).with_after_stored(after),
        ));
        let this = self.clone();
        let command_api = api.clone();
        api.register_command("llama", Some("Manage llama.cpp router models"), move |_args, ctx| {
            let (this, api) = (this.clone(), command_api.clone());
            Box::pin(async move { flow::run_command(&this, &api, &ctx).await })
        })?;
        if !self.startup_refresh {
            return Ok(());
        }
        let this = self.clone();
        let refresh_api = api.clone();
        api.on_notify("session_start", move |_event, ctx| {
            let (this, api) = (this.clone(), refresh_api.clone());
            let offline = std::env::var("PI_OFFLINE").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
            if !offline {
                let ui = ctx.ui();
                tokio::spawn(async move {
                    if let Err(e) = this.refresh(&api, &CancellationToken::new()).await {
                        tracing::debug!(error = %e, "llama.cpp catalog refresh failed");
                        let _ = ui;
                    }
                });
            }
            Box::pin(async { Ok(None) })
        });
        Ok(())
    }
}

/// What `/login llama.cpp` says after saving the credential when the session had no usable model
/// (pi's `llamaCppPostLoginGuidance`): `action` is `Saved API key for llama.cpp server`, and
/// `loaded_models` the provider's models now in `/model`.
pub fn post_login_guidance(action: &str, loaded_models: usize) -> String {
    if loaded_models == 0 {
        format!("{action}. No llama.cpp models are loaded. Use /llama to load a model, then /model to select it.")
    } else {
        format!("{action}. Use /model to select a loaded llama.cpp model, or /llama to manage models.")
    }
}

/// The shared pieces a `/llama` run needs.
pub(crate) struct Parts<'a> {
    pub(crate) extension: &'a LlamaExtension,
    pub(crate) api: &'a ExtensionApi,
}

impl Parts<'_> {
    pub(crate) fn agent_dir(&self) -> &std::path::Path {
        &self.extension.agent_dir
    }

    pub(crate) fn hugging_face(&self) -> Arc<huggingface::HuggingFaceClient> {
        let token = huggingface::find_token(&provider::process_env);
        Arc::new(huggingface::HuggingFaceClient::new(token, &self.extension.hugging_face_url))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extensions::ExtensionRunner;

    async fn listens_at_session_start(extension: LlamaExtension) -> bool {
        let runner = ExtensionRunner::load(vec![Arc::new(extension)], ".").await;
        runner.has_handlers("session_start")
    }

    #[tokio::test]
    async fn only_a_run_with_startup_refresh_refreshes_at_session_start() {
        let dir = tempfile::tempdir().unwrap();
        let extension = LlamaExtension::new(dir.path().to_path_buf());
        assert!(listens_at_session_start(extension.clone()).await);
        assert!(!listens_at_session_start(extension.with_startup_refresh(false)).await);
    }
}
