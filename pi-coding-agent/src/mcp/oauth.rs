//! The OAuth flow of an MCP server (pi-mcp's `oauth/flow.ts`, `oauth/provider.ts` and
//! `oauth/client-settings.ts`): the server's `oauth` settings, the client identity (a pre-registered
//! client, pi's Client ID Metadata Document, or dynamic client registration), and `authorizeMcp`,
//! which exchanges a code, refreshes stored tokens, or prepares the browser step, keeping its state
//! in the [`ServerStore`].

use base64::Engine;
use reqwest::Url;
use serde_json::{Map, Value, json};
use sha2::Digest;

use super::config::McpServerEntry;
use super::oauth_http::{self as http, AuthorizationRequest, Discovered, OAuthError, TokenRequest};
use super::oauth_store::{OAuthState, ServerStore, normalize_url};
use super::values::resolve_config_value;

/// pi's Client ID Metadata Documents.
const CLIENT_METADATA_BASE: &str = "https://pi.dev/oauth";
/// The redirect URI when the settings name none.
pub const DEFAULT_REDIRECT_URL: &str = "http://127.0.0.1/callback";

/// A JSON number: an integer when `n` is whole.
pub(crate) fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 { json!(n as i64) } else { json!(n) }
}

/// A server's `oauth` settings (pi's `connection.oauthSettings()`).
#[derive(Clone, Debug, Default)]
pub struct OAuthSettings {
    /// `clientId`.
    pub client_id: Option<String>,
    /// `clientSecret`, resolved.
    pub client_secret: Option<String>,
    /// `callbackPort`.
    pub callback_port: Option<u16>,
    /// `callbackUrl`.
    pub callback_url: Option<String>,
    /// `scope`.
    pub scope: Option<String>,
    /// `clientName`.
    pub client_name: Option<String>,
    /// `clientRegistration`: `auto`, `cimd` or `dcr`.
    pub client_registration: Option<String>,
    /// `authServerMetadataUrl`.
    pub auth_server_metadata_url: Option<String>,
}

impl OAuthSettings {
    /// The settings of `entry`; a client secret that does not resolve is an error.
    pub fn of(entry: &McpServerEntry) -> Result<Self, String> {
        let Some(oauth) = entry.raw.get("oauth").and_then(Value::as_object) else { return Ok(Self::default()) };
        let s = |k: &str| oauth.get(k).and_then(Value::as_str).map(str::to_owned);
        let client_secret = match s("clientSecret") {
            Some(v) => {
                Some(resolve_config_value(v.as_str(), &format!("MCP server \"{}\" oauth.clientSecret", entry.name))?)
            }
            None => None,
        };
        Ok(OAuthSettings {
            client_id: s("clientId"),
            client_secret,
            callback_port: oauth.get("callbackPort").and_then(Value::as_u64).and_then(|p| u16::try_from(p).ok()),
            callback_url: s("callbackUrl"),
            scope: s("scope"),
            client_name: s("clientName"),
            client_registration: s("clientRegistration"),
            auth_server_metadata_url: s("authServerMetadataUrl"),
        })
    }

    fn registration(&self) -> &str {
        self.client_registration.as_deref().unwrap_or("auto")
    }
}

/// The server URL when the server authenticates with OAuth (pi's `connection.oauthUrl`): HTTP
/// servers without an `Authorization` header or `auth`.
pub fn oauth_url(entry: &McpServerEntry) -> Option<&str> {
    let url = entry.url()?;
    if entry.raw.get("auth").is_some() {
        return None;
    }
    let authorization = entry.string_map("headers").iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    (!authorization).then_some(url)
}

/// pi's `isClientMetadataDocumentCallback`: pi's documents list loopback `/callback` URIs.
pub fn lists_redirect_url(url: &str) -> bool {
    Url::parse(url).is_ok_and(|u| u.host_str() != Some("[::1]") && u.path() == "/callback")
}

/// Whether the client may identify with a Client ID Metadata Document instead of registering.
pub fn offers_client_metadata_document(settings: &OAuthSettings, redirect_url: &str) -> bool {
    match settings.registration() {
        "auto" => settings.client_id.is_none() && settings.client_name.is_none() && lists_redirect_url(redirect_url),
        other => other == "cimd",
    }
}

/// 12 characters identifying an MCP server URL in callback paths.
fn callback_id(server_url: &str) -> String {
    let mut url = Url::parse(server_url).map(|u| u.to_string()).unwrap_or_else(|_| server_url.to_owned());
    if let Some(i) = url.find('#') {
        url.truncate(i);
    }
    let digest = sha2::Sha256::digest(url.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..9])
}

/// The path of a server-specific redirect URI: `<path>/<callback ID>`.
pub fn server_specific_path(path: &str, server_url: &str) -> String {
    format!("{}/{}", path.strip_suffix('/').unwrap_or(path), callback_id(server_url))
}

/// The loopback callback settings (pi-mcp's `loopbackSettings`).
#[derive(Clone, Debug)]
pub struct LoopbackSettings {
    /// The configured callback URL, else the default.
    pub url: String,
    /// The address to listen on.
    pub host: String,
    /// The host in redirect URIs.
    pub redirect_host: String,
    /// A fixed port.
    pub port: Option<u16>,
    /// The callback path.
    pub path: String,
    /// The redirect URI when the port is fixed.
    pub fixed_redirect_url: Option<String>,
}

/// pi-mcp's `loopbackSettings`.
pub fn loopback_settings(settings: &OAuthSettings) -> Result<LoopbackSettings, String> {
    let configured = settings.callback_url.clone().unwrap_or_else(|| DEFAULT_REDIRECT_URL.to_owned());
    let mut url = Url::parse(&configured).map_err(|_| format!("Invalid callback URL {configured}"))?;
    let address = url.host_str().unwrap_or("127.0.0.1").trim_start_matches('[').trim_end_matches(']').to_owned();
    let port = url.port().or(settings.callback_port);
    let fixed_redirect_url = if url.port().is_some() {
        settings.callback_url.clone()
    } else if let Some(p) = port {
        let _ = url.set_port(Some(p));
        Some(url.to_string())
    } else {
        None
    };
    Ok(LoopbackSettings {
        url: configured,
        host: if address == "localhost" { "127.0.0.1".into() } else { address.clone() },
        redirect_host: address,
        port,
        path: url.path().to_owned(),
        fixed_redirect_url,
    })
}

/// Redirect URIs a stored client was registered with.
pub fn registered_redirect_urls(state: Option<&OAuthState>) -> Vec<String> {
    state
        .and_then(|s| s.get("clientInformation"))
        .and_then(|c| c.get("redirect_uris"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// What to invalidate (pi-mcp's `invalidateCredentials` kinds).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Invalidate {
    All,
    Client,
    Tokens,
    Discovery,
}

/// The client of one server for one redirect URI (pi-mcp's `McpOAuthProvider`).
pub struct Provider {
    http: reqwest::Client,
    server_url: String,
    /// The redirect URI.
    pub redirect_url: String,
    client_metadata: Map<String, Value>,
    settings: OAuthSettings,
    configured_client: Option<Map<String, Value>>,
    store: ServerStore,
    /// The authorization URL the last flow prepared.
    pub authorization_url: std::sync::Mutex<Option<Url>>,
}

fn store_err(e: super::oauth_store::StoreError) -> OAuthError {
    OAuthError::Other(e.0)
}

impl Provider {
    /// pi-mcp's `createOAuthClientProvider`.
    pub fn new(server_url: &str, settings: &OAuthSettings, store: ServerStore, redirect_url: &str) -> Self {
        let mut client_metadata = Map::new();
        client_metadata.insert("client_name".into(), json!(settings.client_name.as_deref().unwrap_or("pi")));
        client_metadata.insert("redirect_uris".into(), json!([redirect_url]));
        client_metadata.insert("grant_types".into(), json!(["authorization_code", "refresh_token"]));
        client_metadata.insert("response_types".into(), json!(["code"]));
        let method = if settings.client_secret.is_some() { "client_secret_post" } else { "none" };
        client_metadata.insert("token_endpoint_auth_method".into(), json!(method));
        let configured_client = settings.client_id.as_ref().map(|id| {
            let mut c = Map::new();
            c.insert("client_id".into(), json!(id));
            if let Some(secret) = &settings.client_secret {
                c.insert("client_secret".into(), json!(secret));
            }
            c
        });
        Provider {
            http: http::http_client(),
            server_url: normalize_url(server_url),
            redirect_url: redirect_url.to_owned(),
            client_metadata,
            settings: settings.clone(),
            configured_client,
            store,
            authorization_url: std::sync::Mutex::new(None),
        }
    }

    /// The stored state of this server URL (state stored for another URL is ignored).
    pub fn load(&self) -> Result<OAuthState, OAuthError> {
        let state = self.store.load().map_err(store_err)?;
        Ok(match state {
            Some(s) if s.get("serverUrl").and_then(Value::as_str) == Some(self.server_url.as_str()) => s,
            _ => {
                let mut fresh = Map::new();
                fresh.insert("serverUrl".into(), json!(self.server_url));
                fresh
            }
        })
    }

    fn update(&self, f: impl FnOnce(&mut OAuthState)) -> Result<(), OAuthError> {
        let mut state = self.load()?;
        f(&mut state);
        self.store.save(state).map_err(store_err)
    }

    fn client_information(&self) -> Result<Option<Map<String, Value>>, OAuthError> {
        if let Some(c) = &self.configured_client {
            return Ok(Some(c.clone()));
        }
        Ok(self.load()?.get("clientInformation").and_then(Value::as_object).cloned())
    }

    fn tokens(&self) -> Result<Option<Map<String, Value>>, OAuthError> {
        Ok(self.load()?.get("tokens").and_then(Value::as_object).cloned())
    }

    fn save_tokens(&self, tokens: Map<String, Value>) -> Result<(), OAuthError> {
        let expires = tokens.get("expires_in").and_then(Value::as_f64).map(|s| epoch_ms() + s * 1000.0);
        self.update(|s| {
            s.insert("tokens".into(), Value::Object(tokens));
            match expires {
                Some(at) => {
                    s.insert("tokensExpireAt".into(), number(at.floor()));
                }
                None => {
                    s.shift_remove("tokensExpireAt");
                }
            }
        })
    }

    /// The pending `state`, made and stored when there is none.
    pub fn state(&self) -> Result<String, OAuthError> {
        if let Some(s) = self.load()?.get("oauthState").and_then(Value::as_str) {
            return Ok(s.to_owned());
        }
        let state = http::random_state();
        let value = state.clone();
        self.update(|s| {
            s.insert("oauthState".into(), json!(value));
        })?;
        Ok(state)
    }

    fn invalidate(&self, kinds: &[Invalidate]) -> Result<(), OAuthError> {
        self.update(|s| {
            for kind in kinds {
                let keys: &[&str] = match kind {
                    Invalidate::All => {
                        &["clientInformation", "tokens", "tokensExpireAt", "codeVerifier", "discovery", "oauthState"]
                    }
                    Invalidate::Client => &["clientInformation"],
                    Invalidate::Tokens => &["tokens", "tokensExpireAt"],
                    Invalidate::Discovery => &["discovery"],
                };
                for key in keys {
                    s.shift_remove(*key);
                }
            }
        })
    }

    /// The Client ID Metadata Document to identify with: `(client id, redirect URI)`.
    fn client_metadata_document(
        &self,
        metadata: Option<&Map<String, Value>>,
    ) -> Result<Option<(String, String)>, OAuthError> {
        if !offers_client_metadata_document(&self.settings, &self.redirect_url) {
            return Ok(None);
        }
        if !lists_redirect_url(&self.redirect_url) {
            return Err(OAuthError::Other(format!(
                "oauth.clientRegistration \"cimd\" needs Client ID Metadata Documents that list the redirect URI {}",
                self.redirect_url
            )));
        }
        let flag = |k: &str| metadata.and_then(|m| m.get(k)).and_then(Value::as_bool) == Some(true);
        let public = metadata
            .and_then(|m| m.get("token_endpoint_auth_methods_supported"))
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v == "none"));
        let document = if !flag("client_id_metadata_document_supported") || !public {
            None
        } else if flag("authorization_response_iss_parameter_supported") {
            Some((format!("{CLIENT_METADATA_BASE}/client.json"), self.redirect_url.clone()))
        } else {
            let mut redirect =
                Url::parse(&self.redirect_url).map_err(|_| OAuthError::Other("Invalid redirect URI".into()))?;
            let path = server_specific_path(redirect.path(), &self.server_url);
            redirect.set_path(&path);
            let id = callback_id(&self.server_url);
            Some((format!("{CLIENT_METADATA_BASE}/{id}/client.json"), redirect.to_string()))
        };
        if document.is_none() && self.settings.registration() == "cimd" {
            return Err(OAuthError::Other(
                "The authorization server does not support Client ID Metadata Documents for public clients; remove oauth.clientRegistration \"cimd\"".into(),
            ));
        }
        Ok(document)
    }
}

/// Options of one run of the flow (pi-mcp's `authorizeMcp` options).
#[derive(Clone, Debug, Default)]
pub struct FlowOptions {
    /// The challenge's `resource_metadata`.
    pub resource_metadata_url: Option<String>,
    /// The scope to request.
    pub scope: Option<String>,
    /// Go to the browser step even with a refresh token.
    pub skip_refresh: bool,
    /// Only refresh: never register or prepare the browser step.
    pub refresh_only: bool,
    /// The authorization code to exchange.
    pub authorization_code: Option<String>,
    /// The redirect URI of the authorization request of that code.
    pub authorization_redirect_url: Option<String>,
    /// The `iss` of the authorization response.
    pub iss: Option<String>,
}

/// What a run of the flow ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Tokens were obtained.
    Authorized,
    /// The user has to authorize (the provider captured the URL unless refreshing only).
    Redirect,
}

async fn discovery(p: &Provider, o: &FlowOptions) -> Result<Discovered, OAuthError> {
    let metadata_url = match &p.settings.auth_server_metadata_url {
        Some(u) => Some(http::secure_endpoint(u)?),
        None => None,
    };
    let cached = if metadata_url.is_some() { None } else { p.load()?.get("discovery").cloned() };
    let cached_url = cached.as_ref().and_then(|c| c.get("authorizationServerUrl")).and_then(Value::as_str);
    let discovered = match (cached_url, &cached) {
        (Some(url), Some(c)) => {
            let meta = match c.get("authorizationServerMetadata").and_then(Value::as_object) {
                Some(m) => Some(m.clone()),
                None => http::discover_server_metadata(&p.http, url).await?,
            };
            Discovered {
                authorization_server_url: url.to_owned(),
                authorization_server_metadata: meta,
                resource_metadata: c.get("resourceMetadata").and_then(Value::as_object).cloned(),
            }
        }
        _ => http::discover(&p.http, &p.server_url, o.resource_metadata_url.as_deref(), metadata_url.as_ref()).await?,
    };
    if metadata_url.is_none() {
        let value = discovered.to_json(o.resource_metadata_url.as_deref());
        p.update(|s| {
            s.insert("discovery".into(), value);
        })?;
    }
    Ok(discovered)
}

fn with_scope(mut tokens: Map<String, Value>, scope: Option<&str>) -> Map<String, Value> {
    if !tokens.contains_key("scope")
        && let Some(scope) = scope.filter(|s| !s.is_empty())
    {
        tokens.insert("scope".into(), json!(scope));
    }
    tokens
}

async fn run_flow(p: &Provider, o: &FlowOptions, used_client: &mut Option<String>) -> Result<Flow, OAuthError> {
    let d = discovery(p, o).await?;
    let metadata = d.authorization_server_metadata.as_ref();
    let resource = http::select_resource(&p.server_url, d.resource_metadata.as_ref())?;
    let supported_scopes = d
        .resource_metadata
        .as_ref()
        .and_then(|m| m.get("scopes_supported"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "));
    let scope = o.scope.clone().filter(|s| !s.is_empty()).or(supported_scopes.filter(|s| !s.is_empty()));
    let stored = p.client_information()?;
    *used_client = stored.as_ref().and_then(|c| c.get("client_id")).and_then(Value::as_str).map(str::to_owned);
    let document = if stored.is_some() { None } else { p.client_metadata_document(metadata)? };
    let redirect_url = document.as_ref().map(|(_, r)| r.clone()).unwrap_or_else(|| p.redirect_url.clone());
    if o.authorization_code.is_some()
        && let Some(requested) = &o.authorization_redirect_url
        && &redirect_url != requested
    {
        return Err(OAuthError::Other(format!(
            "The code exchange would use the redirect URI {redirect_url}, but the authorization request used {requested}"
        )));
    }
    let client = match (stored, document) {
        (Some(c), _) => c,
        (None, Some((id, _))) => json!({"client_id": id}).as_object().cloned().unwrap_or_default(),
        (None, None) => {
            if o.refresh_only {
                return Ok(Flow::Redirect);
            }
            if o.authorization_code.is_some() {
                return Err(OAuthError::Other("OAuth client information is missing during code exchange: the authorization request's client was removed, or the client settings changed".into()));
            }
            let client = http::register_client(
                &p.http,
                &d.authorization_server_url,
                metadata,
                &p.client_metadata,
                scope.as_deref(),
            )
            .await?;
            if p.configured_client.is_none() {
                let saved = client.clone();
                p.update(|s| {
                    s.insert("clientInformation".into(), Value::Object(saved));
                })?;
            }
            client
        }
    };
    let request = TokenRequest {
        authorization_server_url: &d.authorization_server_url,
        metadata,
        client: &client,
        resource: resource.as_deref(),
    };
    if let Some(code) = &o.authorization_code {
        let issuer = metadata.and_then(|m| m.get("issuer")).and_then(Value::as_str);
        let promised =
            metadata.and_then(|m| m.get("authorization_response_iss_parameter_supported")).and_then(Value::as_bool)
                == Some(true);
        if (o.iss.is_some() || promised) && o.iss.as_deref() != issuer {
            let f = |v: Option<&str>| v.map(|s| json!(s).to_string()).unwrap_or_else(|| "none".into());
            return Err(OAuthError::Other(format!(
                "OAuth issuer mismatch: expected {}, received {}",
                f(issuer),
                f(o.iss.as_deref())
            )));
        }
        let verifier = p.load()?.get("codeVerifier").and_then(Value::as_str).map(str::to_owned);
        let Some(verifier) = verifier else {
            return Err(OAuthError::Other("No OAuth PKCE code verifier is stored".into()));
        };
        let params = vec![
            ("grant_type".to_owned(), "authorization_code".to_owned()),
            ("code".to_owned(), code.clone()),
            ("code_verifier".to_owned(), verifier),
            ("redirect_uri".to_owned(), redirect_url.clone()),
        ];
        let tokens = http::token_request(&p.http, &request, params).await?;
        p.save_tokens(with_scope(tokens, scope.as_deref()))?;
        return Ok(Flow::Authorized);
    }
    let existing = if o.skip_refresh { None } else { p.tokens()? };
    if let Some(refresh) = existing.as_ref().and_then(|t| t.get("refresh_token")).and_then(Value::as_str) {
        let params = vec![
            ("grant_type".to_owned(), "refresh_token".to_owned()),
            ("refresh_token".to_owned(), refresh.to_owned()),
        ];
        match http::token_request(&p.http, &request, params).await {
            Ok(tokens) => {
                let mut merged = Map::new();
                merged.insert("refresh_token".into(), json!(refresh));
                merged.extend(tokens);
                let granted = existing.as_ref().and_then(|t| t.get("scope")).and_then(Value::as_str);
                p.save_tokens(with_scope(merged, granted))?;
                return Ok(Flow::Authorized);
            }
            Err(e @ OAuthError::Insecure(_)) => return Err(e),
            Err(e) if e.code().is_some_and(|c| c != "server_error") => return Err(e),
            Err(_) => {}
        }
    }
    if o.refresh_only {
        return Ok(Flow::Redirect);
    }
    let state = p.state()?;
    let client_id = client.get("client_id").and_then(Value::as_str).unwrap_or("");
    let (url, verifier) = http::start_authorization(
        &d.authorization_server_url,
        &AuthorizationRequest {
            metadata,
            client_id,
            redirect_url: &redirect_url,
            scope: scope.as_deref(),
            state: &state,
            resource: resource.as_deref(),
        },
    )?;
    p.update(|s| {
        s.insert("codeVerifier".into(), json!(verifier));
    })?;
    *p.authorization_url.lock().unwrap_or_else(|e| e.into_inner()) = Some(url);
    Ok(Flow::Redirect)
}

/// pi-mcp's `authorizeMcp`: the flow, run again once after the server rejected the client
/// (`invalid_client`, `unauthorized_client`) or the grant (`invalid_grant`).
pub async fn authorize_mcp(p: &Provider, o: &FlowOptions) -> Result<Flow, OAuthError> {
    let mut used = None;
    match run_flow(p, o, &mut used).await {
        Err(e) if matches!(e.code(), Some("invalid_client" | "unauthorized_client")) => {
            if o.refresh_only {
                let current = p.client_information()?;
                let id = current.as_ref().and_then(|c| c.get("client_id")).and_then(Value::as_str);
                if id == used.as_deref() {
                    p.invalidate(&[Invalidate::Client, Invalidate::Tokens, Invalidate::Discovery])?;
                }
            } else {
                p.invalidate(&[Invalidate::All])?;
            }
            run_flow(p, o, &mut None).await
        }
        Err(e) if e.code() == Some("invalid_grant") => {
            p.invalidate(&[Invalidate::Tokens])?;
            run_flow(p, o, &mut None).await
        }
        other => other,
    }
}

/// Refreshes the tokens of `state` with the stored client, or reports [`Flow::Redirect`]
/// (pi-mcp's `refreshStoredTokens`). Never registers or prepares the browser step.
pub async fn refresh_stored_tokens(
    server_url: &str,
    settings: &OAuthSettings,
    store: ServerStore,
    state: &OAuthState,
    redirect_url: Option<&str>,
    resource_metadata_url: Option<String>,
) -> Result<Flow, OAuthError> {
    let fixed = loopback_settings(settings).ok().and_then(|l| l.fixed_redirect_url);
    let registered = registered_redirect_urls(Some(state)).into_iter().next();
    let candidates = [redirect_url.map(str::to_owned), fixed, registered];
    let redirect = candidates
        .into_iter()
        .flatten()
        .find(|u| lists_redirect_url(u))
        .unwrap_or_else(|| DEFAULT_REDIRECT_URL.to_owned());
    let provider = Provider::new(server_url, settings, store, &redirect);
    authorize_mcp(&provider, &FlowOptions { resource_metadata_url, refresh_only: true, ..Default::default() }).await
}

/// Milliseconds since the epoch as a JavaScript number (pi's `Date.now()` in token arithmetic).
pub(crate) fn epoch_ms() -> f64 {
    pi_ai::js::now_ms() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callback_settings_and_documents_follow_pi_mcp() {
        let default = loopback_settings(&OAuthSettings::default()).expect("settings");
        assert_eq!((default.host.as_str(), default.path.as_str(), default.port), ("127.0.0.1", "/callback", None));
        let fixed = loopback_settings(&OAuthSettings { callback_port: Some(4321), ..Default::default() }).expect("s");
        assert_eq!(fixed.fixed_redirect_url.as_deref(), Some("http://127.0.0.1:4321/callback"));
        assert!(lists_redirect_url("http://127.0.0.1:5/callback"));
        assert!(!lists_redirect_url("http://127.0.0.1:5/cb"));
        assert!(offers_client_metadata_document(&OAuthSettings::default(), "http://127.0.0.1:5/callback"));
        let named = OAuthSettings { client_name: Some("x".into()), ..Default::default() };
        assert!(!offers_client_metadata_document(&named, "http://127.0.0.1:5/callback"));
        assert_eq!(callback_id("http://h/mcp").len(), 12);
    }
}
