//! What every login flow shares: PKCE, random values, form encoding, JSON requests, the trusted-URL
//! check, and the test hook that points every provider endpoint at a local server.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::super::login::LoginError;

/// The variable the test suites set to point every OAuth endpoint at a local server: with
/// `PI_TEST_OAUTH_ORIGIN=http://127.0.0.1:9` a provider URL `https://auth.x.ai/oauth2/token`
/// becomes `http://127.0.0.1:9/auth.x.ai/oauth2/token`. Unset in normal use.
pub const TEST_ORIGIN_ENV: &str = "PI_TEST_OAUTH_ORIGIN";

/// `url` as requests send it: unchanged, or moved under the test origin (see [`TEST_ORIGIN_ENV`]).
///
/// ```
/// use pi_coding_agent::auth::oauth::support::endpoint_with;
/// assert_eq!(endpoint_with("https://auth.x.ai/oauth2/token", None), "https://auth.x.ai/oauth2/token");
/// assert_eq!(
///     endpoint_with("https://auth.x.ai/oauth2/token", Some("http://127.0.0.1:9")),
///     "http://127.0.0.1:9/auth.x.ai/oauth2/token"
/// );
/// ```
pub fn endpoint(url: &str) -> String {
    endpoint_with(url, std::env::var(TEST_ORIGIN_ENV).ok().filter(|o| !o.is_empty()).as_deref())
}

/// [`endpoint`] with the origin given.
pub fn endpoint_with(url: &str, origin: Option<&str>) -> String {
    match (origin, url.strip_prefix("https://")) {
        (Some(origin), Some(rest)) => format!("{}/{rest}", origin.trim_end_matches('/')),
        _ => url.to_owned(),
    }
}

/// `n` random bytes (from the operating system, through v4 UUIDs).
pub fn random_bytes(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 16);
    while out.len() < n {
        out.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    }
    out.truncate(n);
    out
}

/// Base64url without padding.
pub fn base64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A PKCE pair: a 32-byte random verifier (base64url) and its S256 challenge.
#[derive(Clone, Debug)]
pub struct Pkce {
    /// Sent with the token request.
    pub verifier: String,
    /// Sent with the authorization request.
    pub challenge: String,
}

impl Pkce {
    /// A new pair.
    pub fn generate() -> Self {
        let verifier = base64url(&random_bytes(32));
        Self::from_verifier(verifier)
    }

    /// The pair of a known verifier.
    ///
    /// ```
    /// use pi_coding_agent::auth::oauth::support::Pkce;
    /// // RFC 7636 appendix B.
    /// let pkce = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into());
    /// assert_eq!(pkce.challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    /// ```
    pub fn from_verifier(verifier: String) -> Self {
        let challenge = base64url(&Sha256::digest(verifier.as_bytes()));
        Pkce { verifier, challenge }
    }
}

/// `application/x-www-form-urlencoded` as `URLSearchParams` writes it.
///
/// ```
/// use pi_coding_agent::auth::oauth::support::form;
/// assert_eq!(form(&[("a", "x y"), ("b", "read:user/~*")]), "a=x+y&b=read%3Auser%2F%7E*");
/// ```
pub fn form(fields: &[(&str, &str)]) -> String {
    fields.iter().map(|(k, v)| format!("{}={}", form_component(k), form_component(v))).collect::<Vec<_>>().join("&")
}

fn form_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Decodes one form component (`+` is a space).
pub fn form_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The query of `url` (or of a bare query string) as pairs.
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (form_decode(k), form_decode(v))
        })
        .collect()
}

/// The first value of `name` in `pairs`.
pub fn query_get<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// A parsed absolute `http(s)` URL: scheme, host (with port), path, query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleUrl {
    /// `http` or `https`.
    pub scheme: String,
    /// Host and port as written.
    pub authority: String,
    /// The path (`/` when empty).
    pub path: String,
    /// The query without `?`.
    pub query: String,
}

impl SimpleUrl {
    /// Parses `value` when it is an absolute http(s) URL.
    pub fn parse(value: &str) -> Option<SimpleUrl> {
        let value = value.trim();
        let (scheme, rest) = value.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let rest = rest.split('#').next().unwrap_or("");
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let authority = rest[..end].to_owned();
        if authority.is_empty() || authority.contains(char::is_whitespace) {
            return None;
        }
        let tail = &rest[end..];
        let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
        let path = if path.is_empty() { "/".to_owned() } else { path.to_owned() };
        Some(SimpleUrl { scheme, authority, path, query: query.to_owned() })
    }

    /// The host without the port.
    pub fn host(&self) -> &str {
        let a = self.authority.rsplit('@').next().unwrap_or(&self.authority);
        if a.starts_with('[') {
            return a.split(']').next().map_or(a, |h| &h[1..]);
        }
        a.split(':').next().unwrap_or(a)
    }

    /// `scheme://authority`.
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
    }
}

/// pi's `trustedHttpUrl`: the value when it is an http(s) URL, else `None`.
pub fn trusted_http_url(value: Option<&Value>) -> Option<String> {
    let s = value?.as_str()?;
    let url = SimpleUrl::parse(s)?;
    let mut out = format!("{}://{}{}", url.scheme, url.authority.to_ascii_lowercase(), url.path);
    if !url.query.is_empty() {
        out.push('?');
        out.push_str(&url.query);
    }
    Some(out.replace(|c: char| c.is_control(), ""))
}

/// A response read whole.
#[derive(Clone, Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The status text.
    pub status_text: String,
    /// The body.
    pub text: String,
    /// The `Retry-After` header, when the reply has one.
    pub retry_after: Option<String>,
}

impl Reply {
    /// Whether the status is 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as a JSON object (`None` when it is not one).
    pub fn object(&self) -> Option<Map<String, Value>> {
        match serde_json::from_str(&self.text) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        }
    }
}

/// A body to send.
#[derive(Clone)]
pub enum Body {
    /// No body (a GET).
    None,
    /// `application/json`.
    Json(Value),
    /// `application/x-www-form-urlencoded`.
    Form(String),
}

/// Sends one request and reads the whole reply; `headers` are sent as given. Fails with
/// [`LoginError::Cancelled`] when `cancel` fires first.
pub async fn send(
    endpoints: &super::Endpoints,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Body,
    timeout: Duration,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<Reply, SendError> {
    let client = reqwest::Client::new();
    let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(|e| SendError::Failed(e.to_string()))?;
    let mut request = client.request(method, endpoints.url(url)).timeout(timeout);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    request = match body {
        Body::None => request,
        Body::Json(v) => request.body(v.to_string()),
        Body::Form(f) => request.body(f),
    };
    let run = async {
        let response = request.send().await.map_err(|e| SendError::Failed(fetch_error(&e)))?;
        let status = response.status();
        let retry_after =
            response.headers().get(reqwest::header::RETRY_AFTER).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let text = response.text().await.map_err(|e| SendError::Failed(fetch_error(&e)))?;
        Ok(Reply {
            status: status.as_u16(),
            status_text: status.canonical_reason().unwrap_or("").to_owned(),
            text,
            retry_after,
        })
    };
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(SendError::Cancelled),
        r = run => r,
    }
}

fn fetch_error(e: &reqwest::Error) -> String {
    if e.is_timeout() { "The operation was aborted due to timeout".to_owned() } else { "fetch failed".to_owned() }
}

/// Why [`send`] produced no reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// The login was cancelled.
    Cancelled,
    /// The request failed (Node's wording: "fetch failed").
    Failed(String),
}

impl From<SendError> for LoginError {
    fn from(e: SendError) -> Self {
        match e {
            SendError::Cancelled => LoginError::Cancelled,
            SendError::Failed(m) => LoginError::Failed(m),
        }
    }
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Cancelled => f.write_str("Login cancelled"),
            SendError::Failed(m) => f.write_str(m),
        }
    }
}

/// A string field of a JSON object.
pub fn str_of<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    map.get(name).and_then(Value::as_str)
}

/// A positive finite number field.
pub fn positive(map: &Map<String, Value>, name: &str) -> Option<f64> {
    map.get(name).and_then(Value::as_f64).filter(|v| v.is_finite() && *v > 0.0)
}

/// JSON of `value` as JavaScript's `JSON.stringify` writes it (`undefined` for none).
pub fn js_json(value: Option<&Map<String, Value>>) -> String {
    value.map_or_else(|| "null".to_owned(), |m| Value::Object(m.clone()).to_string())
}

/// Milliseconds since the epoch, as a float.
pub fn now() -> f64 {
    pi_ai::js::now_ms() as f64
}

/// An expiry `seconds` from now less `skew_ms`, as pi stores it (an integer of milliseconds).
pub fn expires_in(seconds: f64, skew_ms: f64) -> Value {
    let ms = now() + seconds * 1000.0 - skew_ms;
    Value::from(ms.round() as i64)
}

/// pi's `parseAuthorizationInput`: a redirect URL, `code#state`, a query string, or a bare code.
pub fn parse_authorization_input(input: &str) -> (Option<String>, Option<String>) {
    let value = input.trim();
    if value.is_empty() {
        return (None, None);
    }
    if let Some(url) = SimpleUrl::parse(value) {
        let q = query_pairs(&url.query);
        return (query_get(&q, "code").map(str::to_owned), query_get(&q, "state").map(str::to_owned));
    }
    if let Some((code, state)) = value.split_once('#') {
        return (Some(code.to_owned()), Some(state.to_owned()));
    }
    if value.contains("code=") {
        let q = query_pairs(value);
        return (query_get(&q, "code").map(str::to_owned), query_get(&q, "state").map(str::to_owned));
    }
    (Some(value.to_owned()), None)
}

/// A credential object with these fields in this order (`type` first, as pi writes it).
pub fn credential(fields: Vec<(&str, Value)>) -> crate::auth::Credential {
    let mut map = Map::new();
    map.insert("type".into(), "oauth".into());
    for (k, v) in fields {
        map.insert(k.to_owned(), v);
    }
    crate::auth::Credential::from_json(map)
}

/// The user-agent-free JSON headers most token endpoints get.
pub const JSON_HEADERS: [(&str, &str); 2] = [("Content-Type", "application/json"), ("Accept", "application/json")];

/// Form headers with `Accept: application/json`.
pub const FORM_HEADERS: [(&str, &str); 2] =
    [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")];
