//! `/login llama.cpp` (pi's `auth.apiKey.login` of the provider): the router URL, an optional
//! key, a `GET /models` to check both, then `{type:"api_key", key?, env:{LLAMA_BASE_URL}}`.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;

use super::client::{LlamaClient, LlamaError, normalize_server_url};
use super::provider::{DEFAULT_LLAMA_SERVER_URL, LLAMA_PROVIDER_ID};
use crate::auth::{AuthInteraction, AuthPrompt, Credential, LoginError, LoginKind, LoginProvider};

/// Reads an environment variable.
type EnvFn = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Runs after the credential was stored: the extension refreshes the provider's models.
pub type AfterStored = Arc<dyn Fn() -> futures::future::BoxFuture<'static, ()> + Send + Sync>;

/// The llama.cpp login.
pub struct LlamaLogin {
    env: EnvFn,
    after_stored: Option<AfterStored>,
}

impl std::fmt::Debug for LlamaLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlamaLogin").finish_non_exhaustive()
    }
}

/// The llama.cpp entry of `/login`, reading `LLAMA_BASE_URL` from the process environment.
pub fn login_provider() -> Arc<dyn LoginProvider> {
    Arc::new(LlamaLogin { env: Arc::new(|n| std::env::var(n).ok()), after_stored: None })
}

impl LlamaLogin {
    /// A login reading variables through `env` (tests).
    pub fn with_env(env: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        LlamaLogin { env: Arc::new(env), after_stored: None }
    }

    /// Runs `after` once `/login` stored the credential (the extension's catalog refresh).
    pub fn with_after_stored(mut self, after: AfterStored) -> Self {
        self.after_stored = Some(after);
        self
    }
}

#[async_trait]
impl LoginProvider for LlamaLogin {
    fn provider_id(&self) -> &str {
        LLAMA_PROVIDER_ID
    }

    fn name(&self) -> &str {
        "llama.cpp server"
    }

    fn kind(&self) -> LoginKind {
        LoginKind::ApiKey
    }

    /// pi refreshes the provider's models right after `/login` stored the credential.
    async fn after_stored(&self) {
        if let Some(after) = &self.after_stored {
            after().await;
        }
    }

    async fn login(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError> {
        let env_url = (self.env)("LLAMA_BASE_URL");
        let entered = interaction
            .prompt(AuthPrompt::Text {
                message: "llama.cpp server URL".into(),
                placeholder: Some(env_url.clone().unwrap_or_else(|| DEFAULT_LLAMA_SERVER_URL.to_owned())),
            })
            .await?;
        let entered = entered.trim();
        let chosen = if !entered.is_empty() {
            entered.to_owned()
        } else {
            env_url.filter(|u| !u.is_empty()).unwrap_or_else(|| DEFAULT_LLAMA_SERVER_URL.to_owned())
        };
        let server_url = normalize_server_url(&chosen).map_err(|e| LoginError::Failed(e.to_string()))?;
        let key =
            interaction.prompt(AuthPrompt::Secret { message: "API key (optional)".into(), placeholder: None }).await?;
        let key = key.trim().to_owned();
        let client = LlamaClient::new(&server_url, Some(key.clone())).map_err(|e| LoginError::Failed(e.to_string()))?;
        match client.list(false, &interaction.cancel()).await {
            Ok(_) => {}
            Err(LlamaError::Cancelled) => return Err(LoginError::Cancelled),
            Err(e) => return Err(LoginError::Failed(e.to_string())),
        }
        let mut map = serde_json::Map::new();
        map.insert("type".into(), json!("api_key"));
        if !key.is_empty() {
            map.insert("key".into(), json!(key));
        }
        map.insert("env".into(), json!({"LLAMA_BASE_URL": server_url}));
        Ok(Credential::from_json(map))
    }
}
