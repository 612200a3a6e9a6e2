//! The built-in entries of `/login` and `pi auth login`: each provider pi 1.6.0 signs in to with
//! an account ([`OAuthLogin`], through its [`OAuthFlow`]) and each that takes an API key through a
//! prompt ([`ApiKeyLogin`]), with the names pi-ai gives them (`logins.json`, generated from the
//! reference by `scripts/fixtures/pi_ai_logins.mjs`).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::credential::Credential;
use super::login::{AuthInteraction, AuthPrompt, LoginError, LoginKind, LoginProvider, LoginRegistry};
use super::oauth::{Endpoints, LoginOptions, OAuthFlow, builtin_flow};

/// A provider's login names (one entry of `logins.json`).
#[derive(Clone, Debug, Deserialize)]
pub struct LoginInfo {
    /// The provider's display name ("Anthropic").
    pub name: String,
    /// Its account sign-in, when it has one.
    pub oauth: Option<OAuthInfo>,
    /// Its API-key login, when it has one.
    #[serde(rename = "apiKey")]
    pub api_key: Option<ApiKeyInfo>,
}

/// An account sign-in's names.
#[derive(Clone, Debug, Deserialize)]
pub struct OAuthInfo {
    /// "Anthropic (Claude Pro/Max)".
    pub name: String,
    /// The selector label, when the provider gives one ("Sign in with ChatGPT").
    #[serde(rename = "loginLabel")]
    pub login_label: Option<String>,
    /// Whether a subscription backs it.
    #[serde(default, rename = "isSubscription")]
    pub is_subscription: bool,
}

/// An API-key login's name.
#[derive(Clone, Debug, Deserialize)]
pub struct ApiKeyInfo {
    /// "Groq API key".
    pub name: String,
}

/// Every built-in provider with a login, in catalog order.
pub fn builtin_logins() -> &'static indexmap::IndexMap<String, LoginInfo> {
    static LOGINS: OnceLock<indexmap::IndexMap<String, LoginInfo>> = OnceLock::new();
    LOGINS.get_or_init(|| match serde_json::from_str(include_str!("logins.json")) {
        Ok(map) => map,
        Err(error) => {
            tracing::error!(%error, "the built-in login table does not parse");
            indexmap::IndexMap::new()
        }
    })
}

/// A provider's account sign-in.
#[derive(Clone, Debug)]
pub struct OAuthLogin {
    provider_id: String,
    provider_name: String,
    flow: Arc<dyn OAuthFlow>,
    options: LoginOptions,
}

impl OAuthLogin {
    /// `flow` signing in to `provider_id` (named `provider_name`).
    pub fn new(provider_id: &str, provider_name: &str, flow: Arc<dyn OAuthFlow>, options: LoginOptions) -> Self {
        OAuthLogin { provider_id: provider_id.into(), provider_name: provider_name.into(), flow, options }
    }

    /// The provider's display name ("Anthropic"), as `pi auth login` reports it.
    pub fn provider_name(&self) -> &str {
        &self.provider_name
    }
}

#[async_trait]
impl LoginProvider for OAuthLogin {
    fn provider_id(&self) -> &str {
        &self.provider_id
    }

    fn name(&self) -> &str {
        self.flow.name()
    }

    fn kind(&self) -> LoginKind {
        LoginKind::OAuth
    }

    async fn login(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError> {
        self.flow.login(interaction, &self.options).await
    }
}

/// A provider's API-key login: "Enter `<name>`" (and, for Cloudflare, its account and gateway ids,
/// stored in the credential's `env`).
#[derive(Clone, Debug)]
pub struct ApiKeyLogin {
    provider_id: String,
    name: String,
}

impl ApiKeyLogin {
    /// The login of `provider_id`, whose key pi-ai calls `name`.
    pub fn new(provider_id: &str, name: &str) -> Self {
        ApiKeyLogin { provider_id: provider_id.into(), name: name.into() }
    }
}

#[async_trait]
impl LoginProvider for ApiKeyLogin {
    fn provider_id(&self) -> &str {
        &self.provider_id
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> LoginKind {
        LoginKind::ApiKey
    }

    async fn login(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError> {
        let secret = |message: String| AuthPrompt::Secret { message, placeholder: None };
        let text = |message: &str| AuthPrompt::Text { message: message.into(), placeholder: None };
        let key = interaction.prompt(secret(format!("Enter {}", self.name))).await?;
        let mut env = BTreeMap::new();
        if self.provider_id.starts_with("cloudflare-") {
            env.insert("CLOUDFLARE_ACCOUNT_ID", interaction.prompt(text("Enter Cloudflare account ID")).await?);
            if self.provider_id == "cloudflare-ai-gateway" {
                env.insert("CLOUDFLARE_GATEWAY_ID", interaction.prompt(text("Enter Cloudflare AI Gateway ID")).await?);
            }
        }
        let mut credential = Credential::api_key(key);
        if !env.is_empty() {
            let env: Map<String, Value> = env.into_iter().map(|(k, v)| (k.to_owned(), Value::from(v))).collect();
            credential.set("env", Value::Object(env));
        }
        Ok(credential)
    }
}

/// A registry with every built-in login: account sign-ins first in catalog order, then API-key
/// logins, as `/login` lists them. OAuth requests go to `endpoints`.
pub fn builtin_login_registry(endpoints: &Endpoints, options: &LoginOptions) -> LoginRegistry {
    let registry = LoginRegistry::new();
    for (id, info) in builtin_logins() {
        if info.oauth.is_some()
            && let Some(flow) = builtin_flow(id, endpoints)
        {
            registry.register(Arc::new(OAuthLogin::new(id, &info.name, flow, options.clone())));
        }
    }
    for (id, info) in builtin_logins() {
        let Some(key) = info.api_key.as_ref() else { continue };
        // Amazon Bedrock and Google Vertex AI ask which credential source to use.
        match id.as_str() {
            "amazon-bedrock" => registry.register(Arc::new(super::cloud_logins::BedrockLogin)),
            "google-vertex" => registry.register(Arc::new(super::cloud_logins::VertexLogin)),
            _ => registry.register(Arc::new(ApiKeyLogin::new(id, &key.name))),
        }
    }
    registry
}
