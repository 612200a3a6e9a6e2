//! A provider's `oauth` (`pi.registerProvider(name, { oauth: { name, login, refreshToken,
//! getApiKey } })`): its functions stay in the JavaScript host. The provider is offered by
//! `/login` (a [`LoginProvider`] in the session's login registry) and its login runs in the host
//! (`provider.oauth.login`) with pi's callbacks, whose questions and notices come back
//! (`provider.oauth.prompt`, `provider.oauth.notify`) to the login's [`AuthInteraction`], i.e.
//! the UI seam; the caller stores the credential in auth.json as pi does (`{…, "type":
//! "oauth"}`). A request refreshes an expiring credential (`provider.oauth.refresh`, under the
//! auth.json lock) and takes its key from `getApiKey` (`provider.oauth.apiKey`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::NodeHost;
use crate::auth::login::{AuthInfoLink, AuthOption};
use crate::auth::oauth::{LoginOptions, OAuthRequestAuth, RefreshWhen};
use crate::auth::{
    AuthEvent, AuthInteraction, AuthPrompt, AuthStorage, Credential, CredentialType, LoginError, LoginKind,
    LoginProvider, OAuthFlow,
};
use crate::extensions::RegisteredProvider;
use crate::extensions::runtime::{Runtime, lock};
use crate::extensions::subprocess::protocol::{ERROR_INVALID_PARAMS, RpcError};

const METHOD_LOGIN: &str = "provider.oauth.login";
const METHOD_ABORT: &str = "provider.oauth.abort";
const METHOD_REFRESH: &str = "provider.oauth.refresh";
const METHOD_API_KEY: &str = "provider.oauth.apiKey";
const METHOD_PROMPT: &str = "provider.oauth.prompt";
const METHOD_NOTIFY: &str = "provider.oauth.notify";
/// A login waits for the user; a day bounds a host that never answers.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);
/// `refreshToken` and `getApiKey` (the refresh has pi-rs's own timeout around it as well).
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// What a running login's host callbacks ask of its interaction.
enum Ask {
    Prompt(AuthPrompt, oneshot::Sender<Result<String, LoginError>>),
    Notify(AuthEvent),
}

type Logins = Mutex<HashMap<u64, mpsc::UnboundedSender<Ask>>>;

fn logins() -> &'static Logins {
    static LOGINS: OnceLock<Logins> = OnceLock::new();
    LOGINS.get_or_init(Default::default)
}

static NEXT_LOGIN: AtomicU64 = AtomicU64::new(1);

/// Whether `method` is a login callback of the host.
pub(crate) fn handles(method: &str) -> bool {
    method == METHOD_PROMPT || method == METHOD_NOTIFY
}

/// Whether `method` is a login notice: they run in the order they arrive (before a question
/// sent after them), on the host's reader.
pub(crate) fn in_order(method: &str) -> bool {
    method == METHOD_NOTIFY
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError { code: ERROR_INVALID_PARAMS, message: message.into(), data: None }
}

/// Runs one login callback of the host; `None` for any other method.
pub(crate) async fn host_call(method: &str, params: &Value) -> Option<Result<Value, RpcError>> {
    if !handles(method) {
        return None;
    }
    let id = params.get("loginId").and_then(Value::as_u64).unwrap_or_default();
    let Some(tx) = lock(logins()).get(&id).cloned() else {
        return Some(Err(invalid(format!("No running login {id}"))));
    };
    if method == METHOD_NOTIFY {
        if let Some(event) = params.get("event").and_then(auth_event) {
            let _ = tx.send(Ask::Notify(event));
        }
        return Some(Ok(Value::Null));
    }
    let Some(prompt) = params.get("prompt").and_then(auth_prompt) else {
        return Some(Err(invalid("invalid \"prompt\"")));
    };
    let (reply, answer) = oneshot::channel();
    if tx.send(Ask::Prompt(prompt, reply)).is_err() {
        return Some(Err(invalid("Login cancelled")));
    }
    Some(match answer.await {
        Ok(Ok(text)) => Ok(Value::String(text)),
        Ok(Err(e)) => Err(invalid(e.to_string())),
        Err(_) => Err(invalid("Login cancelled")),
    })
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// pi's adapted callbacks' notices (`auth_url`, `device_code`, `progress`, `info`).
fn auth_event(v: &Value) -> Option<AuthEvent> {
    Some(match v.get("type")?.as_str()? {
        "auth_url" => AuthEvent::AuthUrl { url: text(v, "url")?, instructions: text(v, "instructions") },
        "device_code" => AuthEvent::DeviceCode {
            user_code: text(v, "userCode")?,
            verification_uri: text(v, "verificationUri")?,
            open_browser_on_confirm: v.get("openBrowserOnConfirm").and_then(Value::as_bool).unwrap_or(true),
            copy_code_on_confirm: v.get("copyCodeOnConfirm").and_then(Value::as_bool).unwrap_or(true),
            interval_seconds: v.get("intervalSeconds").and_then(Value::as_u64),
            expires_in_seconds: v.get("expiresInSeconds").and_then(Value::as_u64),
        },
        "progress" => AuthEvent::Progress { message: text(v, "message").unwrap_or_default() },
        _ => AuthEvent::Info {
            message: text(v, "message").unwrap_or_default(),
            links: v
                .get("links")
                .and_then(Value::as_array)
                .map(|links| {
                    links
                        .iter()
                        .filter_map(|l| Some(AuthInfoLink { url: text(l, "url")?, label: text(l, "label") }))
                        .collect()
                })
                .unwrap_or_default(),
        },
    })
}

/// pi's adapted callbacks' questions (`text`, `manual_code`, `select`, `secret`).
fn auth_prompt(v: &Value) -> Option<AuthPrompt> {
    let message = text(v, "message").unwrap_or_default();
    let placeholder = text(v, "placeholder");
    Some(match v.get("type").and_then(Value::as_str).unwrap_or("text") {
        "manual_code" => AuthPrompt::ManualCode { message, placeholder },
        "secret" => AuthPrompt::Secret { message, placeholder },
        "select" => AuthPrompt::Select {
            message,
            options: v
                .get("options")?
                .as_array()?
                .iter()
                .filter_map(|o| {
                    let id = text(o, "id").or_else(|| text(o, "value")).or_else(|| o.as_str().map(str::to_owned))?;
                    let label = text(o, "label").unwrap_or_else(|| id.clone());
                    Some(AuthOption { id, label, description: text(o, "description") })
                })
                .collect(),
        },
        _ => AuthPrompt::Text { message, placeholder },
    })
}

/// The session's running host.
pub(super) async fn host(runtime: &Runtime) -> Result<Arc<super::process::Connection>, String> {
    let host = lock(&runtime.node_host).upgrade().and_then(|h| h.downcast::<NodeHost>().ok());
    let host = host.ok_or_else(|| "The JavaScript extension host is not running".to_owned())?;
    host.connection().await
}

/// Whether `provider` was registered with an `oauth` whose functions are in the host.
pub(crate) fn has_oauth(provider: &RegisteredProvider) -> bool {
    provider.config.get("oauth").is_some_and(Value::is_object)
}

/// The provider's `oauth` as a flow (login, refresh, key) run by the host.
#[derive(Clone)]
pub(crate) struct JsOAuth {
    runtime: Weak<Runtime>,
    provider: String,
    /// `oauth.name` (the login method's name).
    name: String,
    /// The provider's `name`, else `oauth.name`.
    display_name: String,
    extension_path: String,
}

impl std::fmt::Debug for JsOAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsOAuth").field("provider", &self.provider).finish_non_exhaustive()
    }
}

impl JsOAuth {
    /// The flow of `provider` (registered by a JavaScript extension with `oauth`).
    pub(crate) fn new(runtime: &Arc<Runtime>, provider: &RegisteredProvider) -> Self {
        let name = provider.config.pointer("/oauth/name").and_then(Value::as_str).unwrap_or(&provider.name);
        let display_name = provider.config.get("name").and_then(Value::as_str).unwrap_or(name);
        JsOAuth {
            runtime: Arc::downgrade(runtime),
            provider: provider.name.clone(),
            name: name.to_owned(),
            display_name: display_name.to_owned(),
            extension_path: provider.extension_path.clone(),
        }
    }

    async fn call(&self, method: &str, mut params: Value, timeout: Duration) -> Result<Value, String> {
        let runtime = self.runtime.upgrade().ok_or_else(|| "The session is gone".to_owned())?;
        let conn = host(&runtime).await?;
        params["extensionPath"] = json!(self.extension_path);
        params["provider"] = json!(self.provider);
        conn.call(method, method, params, timeout).await
    }

    /// `getApiKey(credential)`.
    pub(crate) async fn api_key(&self, credential: &Credential) -> Result<Option<String>, String> {
        let key = self.call(METHOD_API_KEY, json!({"credential": credential.as_json()}), CALL_TIMEOUT).await?;
        Ok(key.as_str().map(str::to_owned))
    }

    /// The key a request uses: the stored OAuth credential, refreshed under the auth.json lock
    /// when it expires soon, through `getApiKey`; `None` without a stored OAuth credential.
    pub(crate) async fn request_key(&self, auth: &AuthStorage) -> Result<Option<String>, String> {
        let before = auth.get(&self.provider).ok().flatten().map(|c| c.as_json().clone());
        let refreshed =
            auth.refresh_oauth_with(&self.provider, self, RefreshWhen::ExpiresSoon).await.map_err(|e| e.to_string())?;
        if refreshed.as_ref().map(|c| c.as_json().clone()) != before {
            // pi refreshes the provider's models when its credential changed.
            self.refresh_models();
        }
        match refreshed.filter(|c| c.kind() == CredentialType::OAuth) {
            Some(credential) => self.api_key(&credential).await,
            None => Ok(None),
        }
    }

    /// Refreshes the provider's models (its `refreshModels`, `oauth.modifyModels`) beside the
    /// caller.
    fn refresh_models(&self) {
        if let (Some(runtime), Ok(handle)) = (self.runtime.upgrade(), tokio::runtime::Handle::try_current()) {
            let provider = self.provider.clone();
            handle.spawn(async move { super::provider_models::refresh(&runtime, &provider).await });
        }
    }

    async fn run_login(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError> {
        let id = NEXT_LOGIN.fetch_add(1, Ordering::Relaxed);
        let (tx, mut rx) = mpsc::unbounded_channel();
        lock(logins()).insert(id, tx);
        let cancel = interaction.cancel();
        let login = self.call(METHOD_LOGIN, json!({"loginId": id}), LOGIN_TIMEOUT);
        tokio::pin!(login);
        let outcome = loop {
            tokio::select! {
                done = &mut login => break done.map_err(LoginError::Failed),
                Some(ask) = rx.recv() => match ask {
                    Ask::Notify(event) => interaction.notify(event),
                    Ask::Prompt(prompt, reply) => {
                        let _ = reply.send(interaction.prompt(prompt).await);
                    }
                },
                () = cancel.cancelled() => {
                    if let Some(runtime) = self.runtime.upgrade()
                        && let Ok(conn) = host(&runtime).await
                    {
                        conn.notify(METHOD_ABORT, json!({"loginId": id}));
                    }
                    break Err(LoginError::Cancelled);
                }
            }
        };
        lock(logins()).remove(&id);
        let mut credential = match outcome? {
            Value::Object(map) => map,
            _ => return Err(LoginError::Failed("The provider's login returned no credentials".into())),
        };
        credential.insert("type".into(), json!("oauth"));
        Ok(Credential::from_json(credential))
    }
}

#[async_trait]
impl OAuthFlow for JsOAuth {
    fn name(&self) -> &str {
        &self.name
    }

    async fn login(
        &self,
        interaction: &dyn AuthInteraction,
        _options: &LoginOptions,
    ) -> Result<Credential, LoginError> {
        self.run_login(interaction).await
    }

    async fn refresh(&self, credential: &Credential) -> Result<Credential, String> {
        match self.call(METHOD_REFRESH, json!({"credential": credential.as_json()}), CALL_TIMEOUT).await? {
            Value::Object(map) => Ok(Credential::from_json(map)),
            _ => Err("refreshToken returned no credentials".to_owned()),
        }
    }

    /// The access token (requests ask `getApiKey` in the host instead: [`JsOAuth::request_key`]).
    fn to_auth(&self, credential: &Credential) -> OAuthRequestAuth {
        credential.access().map(OAuthRequestAuth::key).unwrap_or_default()
    }
}

#[async_trait]
impl LoginProvider for JsOAuth {
    fn provider_id(&self) -> &str {
        &self.provider
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> LoginKind {
        LoginKind::OAuth
    }

    fn provider_name(&self) -> Option<&str> {
        Some(&self.display_name)
    }

    async fn login(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError> {
        self.run_login(interaction).await
    }

    /// pi refreshes the provider's models once the credential is stored.
    async fn after_stored(&self) {
        if let Some(runtime) = self.runtime.upgrade() {
            super::provider_models::refresh(&runtime, &self.provider).await;
        }
    }
}

/// After the host's `pi.registerProvider` / `pi.unregisterProvider`: offers (or stops offering)
/// `/login` for the provider, as its registration has (or no longer has) an `oauth`.
pub(crate) fn after_registry_call(runtime: &Arc<Runtime>, method: &str, params: &Value) {
    let Some(name) = params.get("name").and_then(Value::as_str) else { return };
    let registered = super::request_auth::registered(runtime, name);
    match registered.filter(|_| method == "pi.registerProvider") {
        Some(provider) if has_oauth(&provider) => {
            runtime.login_providers.register(Arc::new(JsOAuth::new(runtime, &provider)));
        }
        _ if runtime.login_providers.get_kind(name, LoginKind::OAuth).is_some() => {
            runtime.login_providers.unregister(name);
        }
        _ => {}
    }
}
