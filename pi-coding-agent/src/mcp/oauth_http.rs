//! The requests of an MCP OAuth sign-in (pi-mcp's `oauth/discovery.ts` and the request half of
//! `oauth/flow.ts`): protected resource and authorization server metadata discovery, dynamic
//! client registration, the PKCE authorization URL, and token requests (code exchange, refresh),
//! on `reqwest`, each bounded to 15 s.

use std::time::Duration;

use base64::Engine;
use reqwest::Url;
use serde_json::{Map, Value, json};
use sha2::Digest;

/// The MCP protocol version sent with metadata requests.
const PROTOCOL_VERSION: &str = "2025-11-25";
/// pi-mcp's `OAUTH_REQUEST_TIMEOUT_MS`.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// A failure of the OAuth flow.
#[derive(Clone, Debug, thiserror::Error)]
pub enum OAuthError {
    /// An OAuth error response (`error`, `error_description`).
    #[error("{message}")]
    Protocol {
        /// The `error` code.
        code: String,
        /// The description, else the code.
        message: String,
    },
    /// A token request to a non-HTTPS, non-loopback endpoint.
    #[error("Refusing to send OAuth credentials to non-HTTPS endpoint {0}")]
    Insecure(String),
    /// Anything else (network, invalid metadata, registration refused).
    #[error("{0}")]
    Other(String),
}

impl OAuthError {
    /// The OAuth error code, for protocol errors.
    pub fn code(&self) -> Option<&str> {
        match self {
            OAuthError::Protocol { code, .. } => Some(code),
            _ => None,
        }
    }
}

fn other(message: impl Into<String>) -> OAuthError {
    OAuthError::Other(message.into())
}

/// The HTTP client of OAuth requests (no redirects followed, 15 s per request).
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
        .build()
        .unwrap_or_default()
}

/// A `WWW-Authenticate` challenge (pi-mcp's `parseWwwAuthenticate`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Challenge {
    /// `resource_metadata`.
    pub resource_metadata_url: Option<String>,
    /// `scope`.
    pub scope: Option<String>,
    /// `error`.
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

fn challenge_field(header: &str, name: &str) -> Option<String> {
    let lower = header.to_ascii_lowercase();
    let needle = format!("{}=", name.to_ascii_lowercase());
    let mut from = 0;
    while let Some(found) = lower[from..].find(&needle) {
        let at = from + found;
        from = at + needle.len();
        let boundary = at == 0 || matches!(header.as_bytes()[at - 1], b',' | b' ' | b'\t');
        if !boundary {
            continue;
        }
        let rest = &header[at + needle.len()..];
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            quoted.split('"').next().unwrap_or("").to_owned()
        } else {
            rest.split(|c: char| c == ',' || c.is_whitespace()).next().unwrap_or("").to_owned()
        };
        return Some(value).filter(|v| !v.is_empty());
    }
    None
}

/// Parses a `Bearer` or `DPoP` challenge; other schemes give an empty one.
pub fn parse_www_authenticate(header: &str) -> Challenge {
    let scheme = header.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    if scheme != "bearer" && scheme != "dpop" {
        return Challenge::default();
    }
    Challenge {
        resource_metadata_url: challenge_field(header, "resource_metadata").filter(|u| Url::parse(u).is_ok()),
        scope: challenge_field(header, "scope"),
        error: challenge_field(header, "error"),
        error_description: challenge_field(header, "error_description"),
    }
}

fn is_loopback(url: &Url) -> bool {
    matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]" | "::1"))
}

fn is_http(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https")
}

/// The URL when it is https or on loopback (pi-mcp's `secureEndpoint`).
pub fn secure_endpoint(value: &str) -> Result<Url, OAuthError> {
    let url = Url::parse(value).map_err(|_| other(format!("Invalid URL {value}")))?;
    if url.scheme() != "https" && !is_loopback(&url) {
        return Err(OAuthError::Insecure(url.to_string()));
    }
    Ok(url)
}

fn absent(value: Option<&Value>) -> bool {
    matches!(value, None | Some(Value::Null)) || value.and_then(Value::as_str) == Some("")
}

fn safe_url(value: Option<&Value>, name: &str) -> Result<(), OAuthError> {
    let ok = value.and_then(Value::as_str).and_then(|s| Url::parse(s).ok()).is_some_and(|u| is_http(&u));
    if ok { Ok(()) } else { Err(other(format!("Invalid {name}"))) }
}

/// Drops `null` and `""` optional fields, as pi-mcp's parsers treat them as absent.
fn compact(mut input: Map<String, Value>, optional: &[&str]) -> Map<String, Value> {
    for key in optional {
        if absent(input.get(*key)) {
            input.shift_remove(*key);
        }
    }
    input
}

fn parse_resource_metadata(value: Value) -> Result<Map<String, Value>, OAuthError> {
    let Value::Object(input) = value else { return Err(other("Invalid OAuth protected resource metadata")) };
    safe_url(input.get("resource"), "OAuth protected resource metadata resource")?;
    if let Some(servers) = input.get("authorization_servers").and_then(Value::as_array) {
        for s in servers {
            safe_url(Some(s), "authorization server URL")?;
        }
    }
    Ok(compact(input, &["authorization_servers", "scopes_supported"]))
}

fn parse_server_metadata(value: Value) -> Result<Map<String, Value>, OAuthError> {
    let Value::Object(input) = value else { return Err(other("Invalid authorization server metadata")) };
    if !input.get("response_types_supported").is_some_and(Value::is_array) {
        return Err(other("Invalid response_types_supported"));
    }
    safe_url(input.get("issuer"), "authorization server issuer")?;
    safe_url(input.get("authorization_endpoint"), "authorization endpoint")?;
    safe_url(input.get("token_endpoint"), "token endpoint")?;
    if !absent(input.get("registration_endpoint")) {
        safe_url(input.get("registration_endpoint"), "registration endpoint")?;
    }
    Ok(compact(
        input,
        &[
            "registration_endpoint",
            "scopes_supported",
            "grant_types_supported",
            "token_endpoint_auth_methods_supported",
            "code_challenge_methods_supported",
        ],
    ))
}

async fn fetch_metadata(http: &reqwest::Client, url: &Url) -> Result<reqwest::Response, OAuthError> {
    http.get(url.clone())
        .header("Accept", "application/json")
        .header("MCP-Protocol-Version", PROTOCOL_VERSION)
        .send()
        .await
        .map_err(|e| other(format!("fetch failed: {e}")))
}

fn is_discovery_miss(status: u16) -> bool {
    (400..500).contains(&status) || status == 502
}

fn path_suffix(path: &str) -> &str {
    path.strip_suffix('/').unwrap_or(path)
}

fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

async fn json_body(response: reqwest::Response) -> Result<Value, OAuthError> {
    response.json::<Value>().await.map_err(|e| other(format!("Invalid JSON: {e}")))
}

/// What discovery found (pi-mcp's `discoverOAuthServerInfo`).
#[derive(Clone, Debug, Default)]
pub struct Discovered {
    /// The authorization server's URL.
    pub authorization_server_url: String,
    /// Its metadata, when it has any.
    pub authorization_server_metadata: Option<Map<String, Value>>,
    /// The protected resource metadata.
    pub resource_metadata: Option<Map<String, Value>>,
}

impl Discovered {
    /// As stored under `discovery`.
    pub fn to_json(&self, resource_metadata_url: Option<&str>) -> Value {
        let mut out = Map::new();
        out.insert("authorizationServerUrl".into(), json!(self.authorization_server_url));
        if let Some(m) = &self.authorization_server_metadata {
            out.insert("authorizationServerMetadata".into(), Value::Object(m.clone()));
        }
        if let Some(m) = &self.resource_metadata {
            out.insert("resourceMetadata".into(), Value::Object(m.clone()));
        }
        if let Some(u) = resource_metadata_url {
            out.insert("resourceMetadataUrl".into(), json!(u));
        }
        Value::Object(out)
    }
}

/// Protected resource metadata: the challenge's URL, else `/.well-known/oauth-protected-resource<path>`
/// then at the root. A network failure is an error; a missing document is `Ok(None)`.
async fn discover_resource_metadata(
    http: &reqwest::Client,
    server_url: &Url,
    resource_metadata_url: Option<&str>,
) -> Result<Option<Map<String, Value>>, OAuthError> {
    let first = match resource_metadata_url {
        Some(u) => Url::parse(u).map_err(|_| other("Invalid resource metadata URL"))?,
        None => Url::parse(&format!(
            "{}/.well-known/oauth-protected-resource{}",
            origin(server_url),
            path_suffix(server_url.path())
        ))
        .map_err(|e| other(e.to_string()))?,
    };
    let mut response = fetch_metadata(http, &first).await?;
    if resource_metadata_url.is_none() && server_url.path() != "/" && is_discovery_miss(response.status().as_u16()) {
        let root = Url::parse(&format!("{}/.well-known/oauth-protected-resource", origin(server_url)))
            .map_err(|e| other(e.to_string()))?;
        response = fetch_metadata(http, &root).await?;
    }
    if !response.status().is_success() {
        return Ok(None);
    }
    Ok(json_body(response).await.and_then(parse_resource_metadata).ok())
}

/// Authorization server metadata from the RFC 8414 and OpenID locations, with the issuer checked.
pub async fn discover_server_metadata(
    http: &reqwest::Client,
    authorization_server_url: &str,
) -> Result<Option<Map<String, Value>>, OAuthError> {
    let issuer = Url::parse(authorization_server_url).map_err(|_| other("Invalid authorization server URL"))?;
    let path = path_suffix(issuer.path());
    let base = origin(&issuer);
    let mut urls = vec![
        format!("{base}/.well-known/oauth-authorization-server{path}"),
        format!("{base}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{base}{path}/.well-known/openid-configuration"));
    }
    for url in urls {
        let url = Url::parse(&url).map_err(|e| other(e.to_string()))?;
        let response = fetch_metadata(http, &url).await?;
        let status = response.status().as_u16();
        if !response.status().is_success() {
            if is_discovery_miss(status) {
                continue;
            }
            return Err(other(format!("HTTP {status} loading authorization server metadata from {url}")));
        }
        let metadata = parse_server_metadata(json_body(response).await?)?;
        let trim = |v: &str| v.strip_suffix('/').unwrap_or(v).to_owned();
        let found = metadata.get("issuer").and_then(Value::as_str).unwrap_or("");
        if trim(found) != trim(authorization_server_url) {
            return Err(other(format!(
                "OAuth issuer mismatch: expected {}, received {}",
                json!(authorization_server_url),
                json!(found)
            )));
        }
        return Ok(Some(metadata));
    }
    Ok(None)
}

/// pi-mcp's `discoverOAuthServerInfo`.
pub async fn discover(
    http: &reqwest::Client,
    server_url: &str,
    resource_metadata_url: Option<&str>,
    authorization_server_metadata_url: Option<&Url>,
) -> Result<Discovered, OAuthError> {
    let server = Url::parse(server_url).map_err(|_| other(format!("Invalid URL {server_url}")))?;
    let resource_metadata = discover_resource_metadata(http, &server, resource_metadata_url).await?;
    if let Some(url) = authorization_server_metadata_url {
        let response = fetch_metadata(http, url).await?;
        if !response.status().is_success() {
            return Err(other(format!(
                "HTTP {} loading authorization server metadata from {url}",
                response.status().as_u16()
            )));
        }
        let metadata = parse_server_metadata(json_body(response).await?)?;
        let issuer = metadata.get("issuer").and_then(Value::as_str).unwrap_or("").to_owned();
        return Ok(Discovered {
            authorization_server_url: issuer,
            authorization_server_metadata: Some(metadata),
            resource_metadata,
        });
    }
    let authorization_server_url = resource_metadata
        .as_ref()
        .and_then(|m| m.get("authorization_servers"))
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{}/", origin(&server)));
    let authorization_server_metadata = discover_server_metadata(http, &authorization_server_url).await?;
    Ok(Discovered { authorization_server_url, authorization_server_metadata, resource_metadata })
}

/// The `resource` parameter (pi-mcp's `selectResource`): the metadata's resource, which must
/// contain the server URL.
pub fn select_resource(server_url: &str, metadata: Option<&Map<String, Value>>) -> Result<Option<String>, OAuthError> {
    let Some(metadata) = metadata else { return Ok(None) };
    let resource = metadata.get("resource").and_then(Value::as_str).unwrap_or("");
    let mut requested = Url::parse(server_url).map_err(|_| other("Invalid MCP server URL"))?;
    requested.set_fragment(None);
    let configured = Url::parse(resource).map_err(|_| other("Invalid resource"))?;
    let mismatch = || other(format!("Protected resource {resource} does not match MCP server {requested}"));
    if origin(&requested) != origin(&configured) {
        return Err(mismatch());
    }
    let slash = |p: &str| if p.ends_with('/') { p.to_owned() } else { format!("{p}/") };
    if !slash(requested.path()).starts_with(&slash(configured.path())) {
        return Err(mismatch());
    }
    Ok(Some(resource.to_owned()))
}

fn strings(metadata: Option<&Map<String, Value>>, key: &str) -> Vec<String> {
    metadata
        .and_then(|m| m.get(key))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// `native` for loopback or custom-scheme redirect URIs, else `web`.
fn application_type(redirect_uris: &[Value]) -> &'static str {
    let native = redirect_uris
        .iter()
        .filter_map(Value::as_str)
        .filter_map(|u| Url::parse(u).ok())
        .any(|u| !is_http(&u) || is_loopback(&u));
    if native { "native" } else { "web" }
}

/// Dynamic client registration (RFC 7591).
pub async fn register_client(
    http: &reqwest::Client,
    authorization_server_url: &str,
    metadata: Option<&Map<String, Value>>,
    client_metadata: &Map<String, Value>,
    scope: Option<&str>,
) -> Result<Map<String, Value>, OAuthError> {
    let endpoint = metadata.and_then(|m| m.get("registration_endpoint")).and_then(Value::as_str);
    if metadata.is_some() && endpoint.is_none() {
        return Err(other("Authorization server does not support dynamic client registration"));
    }
    let endpoint = match endpoint {
        Some(e) => e.to_owned(),
        None => join(authorization_server_url, "/register")?,
    };
    let mut body = client_metadata.clone();
    let redirects = client_metadata.get("redirect_uris").and_then(Value::as_array).cloned().unwrap_or_default();
    if !body.contains_key("application_type") {
        body.insert("application_type".into(), json!(application_type(&redirects)));
    }
    if let Some(scope) = scope.filter(|s| !s.is_empty()) {
        body.insert("scope".into(), json!(scope));
    }
    let response = http
        .post(&endpoint)
        .header("Accept", "application/json")
        .header("content-type", "application/json")
        .body(Value::Object(body).to_string())
        .send()
        .await
        .map_err(|e| other(format!("fetch failed: {e}")))?;
    let status = response.status().as_u16();
    if !response.status().is_success() {
        let text = response.text().await.unwrap_or_default();
        return Err(other(format!("OAuth dynamic client registration failed with status {status}: {text}")));
    }
    let Value::Object(mut info) = json_body(response).await? else {
        return Err(other("Invalid OAuth client registration response"));
    };
    if info.get("client_id").and_then(Value::as_str).is_none_or(str::is_empty) {
        return Err(other("Invalid client_id"));
    }
    if absent(info.get("client_secret")) {
        info.shift_remove("client_secret");
    }
    if !info.get("redirect_uris").is_some_and(Value::is_array) {
        info.insert("redirect_uris".into(), json!([]));
    }
    Ok(info)
}

/// `application/x-www-form-urlencoded` text of `params`.
fn form_body(params: &[(String, String)]) -> String {
    let Ok(mut url) = Url::parse("http://form/") else { return String::new() };
    url.query_pairs_mut().extend_pairs(params);
    url.query().unwrap_or("").to_owned()
}

fn join(base: &str, path: &str) -> Result<String, OAuthError> {
    Url::parse(base).and_then(|b| b.join(path)).map(|u| u.to_string()).map_err(|_| other(format!("Invalid URL {base}")))
}

fn random_bytes() -> [u8; 32] {
    let mut out = [0u8; 32];
    out[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    out[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    out
}

/// A random `state` (64 hex digits).
pub fn random_state() -> String {
    random_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

/// A PKCE pair: `(verifier, S256 challenge)`.
pub fn pkce() -> (String, String) {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let verifier = b64.encode(random_bytes());
    let challenge = b64.encode(sha2::Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

/// The parameters of an authorization request.
pub struct AuthorizationRequest<'a> {
    /// Authorization server metadata.
    pub metadata: Option<&'a Map<String, Value>>,
    /// The client id.
    pub client_id: &'a str,
    /// The redirect URI.
    pub redirect_url: &'a str,
    /// The requested scope.
    pub scope: Option<&'a str>,
    /// The `state`.
    pub state: &'a str,
    /// The `resource` indicator.
    pub resource: Option<&'a str>,
}

/// The authorization URL and the PKCE verifier (pi-mcp's `startAuthorization`).
pub fn start_authorization(
    authorization_server_url: &str,
    r: &AuthorizationRequest<'_>,
) -> Result<(Url, String), OAuthError> {
    if r.metadata.is_some() && !strings(r.metadata, "response_types_supported").iter().any(|t| t == "code") {
        return Err(other("Authorization server does not support authorization codes"));
    }
    let methods = r.metadata.and_then(|m| m.get("code_challenge_methods_supported"));
    if methods.is_some() && !strings(r.metadata, "code_challenge_methods_supported").iter().any(|m| m == "S256") {
        return Err(other("Authorization server does not support PKCE S256"));
    }
    let endpoint = match r.metadata.and_then(|m| m.get("authorization_endpoint")).and_then(Value::as_str) {
        Some(e) => e.to_owned(),
        None => join(authorization_server_url, "/authorize")?,
    };
    let mut url = Url::parse(&endpoint).map_err(|_| other(format!("Invalid authorization endpoint {endpoint}")))?;
    if !is_http(&url) {
        return Err(other(format!("Invalid authorization endpoint {url}")));
    }
    let (verifier, challenge) = pkce();
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code");
        q.append_pair("client_id", r.client_id);
        q.append_pair("code_challenge", &challenge);
        q.append_pair("code_challenge_method", "S256");
        q.append_pair("redirect_uri", r.redirect_url);
        if !r.state.is_empty() {
            q.append_pair("state", r.state);
        }
        if let Some(scope) = r.scope.filter(|s| !s.is_empty()) {
            q.append_pair("scope", scope);
            if scope.split_whitespace().any(|s| s == "offline_access") {
                q.append_pair("prompt", "consent");
            }
        }
        if let Some(resource) = r.resource {
            q.append_pair("resource", resource);
        }
    }
    Ok((url, verifier))
}

/// pi-mcp's `selectClientAuthMethod`.
fn client_auth_method(info: &Map<String, Value>, supported: &[String]) -> &'static str {
    let secret = info.get("client_secret").and_then(Value::as_str).is_some_and(|s| !s.is_empty());
    let hinted = info.get("token_endpoint_auth_method").and_then(Value::as_str);
    for method in ["client_secret_basic", "client_secret_post", "none"] {
        if hinted == Some(method) && (supported.is_empty() || supported.iter().any(|s| s == method)) {
            return method;
        }
    }
    let has = |m: &str| supported.iter().any(|s| s == m);
    if supported.is_empty() {
        return if secret { "client_secret_basic" } else { "none" };
    }
    if secret && has("client_secret_basic") {
        return "client_secret_basic";
    }
    if secret && has("client_secret_post") {
        return "client_secret_post";
    }
    if has("none") {
        return "none";
    }
    if secret { "client_secret_post" } else { "none" }
}

/// What a token request needs besides its grant.
pub struct TokenRequest<'a> {
    /// The authorization server URL.
    pub authorization_server_url: &'a str,
    /// Its metadata.
    pub metadata: Option<&'a Map<String, Value>>,
    /// The client.
    pub client: &'a Map<String, Value>,
    /// The `resource` indicator.
    pub resource: Option<&'a str>,
}

fn parse_tokens(value: Value) -> Result<Map<String, Value>, OAuthError> {
    let Value::Object(input) = value else { return Err(other("Invalid OAuth token response")) };
    let mut out = Map::new();
    for key in ["access_token", "token_type"] {
        match input.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()) {
            Some(v) => out.insert(key.into(), json!(v)),
            None => return Err(other(format!("Invalid {key}"))),
        };
    }
    if !absent(input.get("expires_in")) {
        let n = match input.get("expires_in") {
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        let Some(n) = n.filter(|n| n.is_finite()) else { return Err(other("Invalid expires_in")) };
        out.insert("expires_in".into(), super::oauth::number(n));
    }
    for key in ["scope", "refresh_token", "id_token"] {
        if !absent(input.get(key)) {
            match input.get(key).and_then(Value::as_str) {
                Some(v) => out.insert(key.into(), json!(v)),
                None => return Err(other(format!("Invalid {key}"))),
            };
        }
    }
    Ok(out)
}

/// A token request with `grant` parameters (pi-mcp's `tokenRequest`).
pub async fn token_request(
    http: &reqwest::Client,
    r: &TokenRequest<'_>,
    mut params: Vec<(String, String)>,
) -> Result<Map<String, Value>, OAuthError> {
    let endpoint = match r.metadata.and_then(|m| m.get("token_endpoint")).and_then(Value::as_str) {
        Some(e) => e.to_owned(),
        None => join(r.authorization_server_url, "/token")?,
    };
    let url = secure_endpoint(&endpoint)?;
    if let Some(resource) = r.resource {
        params.push(("resource".into(), resource.to_owned()));
    }
    let mut request =
        http.post(url).header("Accept", "application/json").header("content-type", "application/x-www-form-urlencoded");
    let method = client_auth_method(r.client, &strings(r.metadata, "token_endpoint_auth_methods_supported"));
    let client_id = r.client.get("client_id").and_then(Value::as_str).unwrap_or("").to_owned();
    let secret = r.client.get("client_secret").and_then(Value::as_str).map(str::to_owned);
    if method == "client_secret_basic" {
        let Some(secret) = secret else { return Err(other("client_secret_basic requires a client secret")) };
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("{client_id}:{secret}"));
        request = request.header("Authorization", format!("Basic {basic}"));
    } else {
        params.push(("client_id".into(), client_id));
        if method == "client_secret_post"
            && let Some(secret) = secret
        {
            params.push(("client_secret".into(), secret));
        }
    }
    let body = form_body(&params);
    let response = request.body(body).send().await.map_err(|e| other(format!("fetch failed: {e}")))?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    let value = serde_json::from_str::<Value>(&text).ok();
    if let Some(error) = value.as_ref().and_then(|v| v.get("error")).and_then(Value::as_str) {
        let description = value.as_ref().and_then(|v| v.get("error_description")).and_then(Value::as_str);
        return Err(OAuthError::Protocol { code: error.to_owned(), message: description.unwrap_or(error).to_owned() });
    }
    if !status.is_success() {
        return Err(OAuthError::Protocol {
            code: "server_error".into(),
            message: format!("HTTP {}: {text}", status.as_u16()),
        });
    }
    parse_tokens(value.unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed_as_pi_mcp_parses_them() {
        let c = parse_www_authenticate(
            r#"Bearer error="invalid_token", error_description="Authentication required", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.error_description.as_deref(), Some("Authentication required"));
        assert_eq!(
            c.resource_metadata_url.as_deref(),
            Some("http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(parse_www_authenticate("Basic realm=x"), Challenge::default());
        assert_eq!(parse_www_authenticate("Bearer scope=\"\"").scope, None);
    }

    #[test]
    fn resources_must_contain_the_server_url() {
        let m = |r: &str| json!({"resource": r}).as_object().cloned().unwrap_or_default();
        assert_eq!(
            select_resource("http://h/mcp", Some(&m("http://h/mcp"))).ok().flatten().as_deref(),
            Some("http://h/mcp")
        );
        assert!(select_resource("http://h/mcp", Some(&m("http://h/other"))).is_err());
        assert!(select_resource("http://h/mcp", Some(&m("http://g/mcp"))).is_err());
    }
}
