//! Google Application Default Credentials for Vertex AI, as `google-auth-library` resolves them:
//! `GOOGLE_APPLICATION_CREDENTIALS` (a service-account key, signed into a JWT bearer grant, or an
//! `authorized_user` refresh token), then gcloud's `application_default_credentials.json`, then
//! the GCE metadata server. Access tokens are cached until five minutes before they expire.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::Value;

/// The OAuth scope Vertex requests ask for.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
const REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

/// An access token and the project to bill (`quota_project_id`), if the credentials name one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessToken {
    /// The bearer token.
    pub token: String,
    /// `x-goog-user-project`.
    pub quota_project: Option<String>,
}

static CACHE: Mutex<Option<HashMap<String, (AccessToken, SystemTime)>>> = Mutex::new(None);

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Where the credentials come from: the file `GOOGLE_APPLICATION_CREDENTIALS` names, else gcloud's
/// well-known file when it exists, else `None` (the metadata server).
pub fn credentials_file(env: &dyn Fn(&str) -> Option<String>) -> Option<std::path::PathBuf> {
    if let Some(path) = env("GOOGLE_APPLICATION_CREDENTIALS").filter(|p| !p.trim().is_empty()) {
        return Some(path.into());
    }
    let dir = match env("CLOUDSDK_CONFIG").filter(|p| !p.is_empty()) {
        Some(dir) => std::path::PathBuf::from(dir),
        None => dirs::home_dir()?.join(".config").join("gcloud"),
    };
    let file = dir.join("application_default_credentials.json");
    file.is_file().then_some(file)
}

/// A token for the environment's credentials (cached), or the reason there is none.
pub async fn access_token(env: &(dyn Fn(&str) -> Option<String> + Sync)) -> Result<AccessToken, String> {
    let file = credentials_file(env);
    let key = file.as_ref().map_or_else(|| "metadata".to_owned(), |f| f.display().to_string());
    if let Ok(guard) = CACHE.lock()
        && let Some((token, expires)) = guard.as_ref().and_then(|c| c.get(&key))
        && SystemTime::now() + REFRESH_MARGIN < *expires
    {
        return Ok(token.clone());
    }
    let (token, lifetime) = match &file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("Could not read Google credentials {}: {e}", path.display()))?;
            let creds: Value = serde_json::from_str(&text)
                .map_err(|e| format!("Google credentials {} are not JSON: {e}", path.display()))?;
            from_credentials(&creds).await?
        }
        None => from_metadata_server(env).await?,
    };
    if let Ok(mut guard) = CACHE.lock() {
        guard.get_or_insert_with(HashMap::new).insert(key, (token.clone(), SystemTime::now() + lifetime));
    }
    Ok(token)
}

fn field<'a>(creds: &'a Value, name: &str) -> Result<&'a str, String> {
    creds.get(name).and_then(Value::as_str).ok_or_else(|| format!("The Google credentials have no {name}"))
}

async fn from_credentials(creds: &Value) -> Result<(AccessToken, Duration), String> {
    let quota_project = creds.get("quota_project_id").and_then(Value::as_str).map(str::to_owned);
    let form: Vec<(&str, String)> = match creds.get("type").and_then(Value::as_str) {
        Some("service_account") => {
            let uri = creds.get("token_uri").and_then(Value::as_str).unwrap_or(DEFAULT_TOKEN_URI);
            let assertion =
                service_account_jwt(field(creds, "client_email")?, field(creds, "private_key")?, uri, now_secs())?;
            let form = vec![
                ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned()),
                ("assertion", assertion),
            ];
            return token_request(uri, &form).await.map(|(token, life)| (AccessToken { token, quota_project }, life));
        }
        Some("authorized_user") => vec![
            ("client_id", field(creds, "client_id")?.to_owned()),
            ("client_secret", field(creds, "client_secret")?.to_owned()),
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", field(creds, "refresh_token")?.to_owned()),
        ],
        other => return Err(format!("Unsupported Google credentials type: {}", other.unwrap_or("undefined"))),
    };
    let uri = creds.get("token_uri").and_then(Value::as_str).unwrap_or(DEFAULT_TOKEN_URI);
    token_request(uri, &form).await.map(|(token, life)| (AccessToken { token, quota_project }, life))
}

/// The signed JWT a service account exchanges for an access token (RS256, one hour).
pub fn service_account_jwt(email: &str, pem: &str, audience: &str, now: u64) -> Result<String, String> {
    let der = pem_to_der(pem)?;
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der)
        .map_err(|e| format!("The Google service account's private key is not a PKCS#8 RSA key: {e}"))?;
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
    let claims = serde_json::json!({"iss": email, "scope": SCOPE, "aud": audience, "exp": now + 3600, "iat": now});
    let signing_input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(claims.to_string()));
    let mut signature = vec![0u8; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| "Could not sign the Google service account's token request".to_owned())?;
    Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature)))
}

fn pem_to_der(pem: &str) -> Result<Vec<u8>, String> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).map(str::trim).collect();
    STANDARD.decode(body).map_err(|e| format!("The Google service account's private key is not PEM: {e}"))
}

async fn token_request(uri: &str, form: &[(&str, String)]) -> Result<(String, Duration), String> {
    let body: String = form.iter().map(|(k, v)| format!("{k}={}", url_encode(v))).collect::<Vec<_>>().join("&");
    let response = crate::http::client()
        .post(uri)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("Google token request failed: {e}"))?;
    parse_token_response(response).await
}

async fn parse_token_response(response: reqwest::Response) -> Result<(String, Duration), String> {
    let status = response.status().as_u16();
    let text = response.text().await.map_err(|e| format!("Google token request failed: {e}"))?;
    let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        let detail = json
            .get("error_description")
            .or_else(|| json.get("error"))
            .and_then(Value::as_str)
            .map_or(text.clone(), str::to_owned);
        return Err(format!("Google token request failed ({status}): {detail}"));
    }
    let token = json
        .get("access_token")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("Google token response has no access_token: {text}"))?;
    let lifetime = Duration::from_secs(json.get("expires_in").and_then(Value::as_u64).unwrap_or(3600));
    Ok((token.to_owned(), lifetime))
}

async fn from_metadata_server(
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<(AccessToken, Duration), String> {
    let host =
        env("GCE_METADATA_HOST").or_else(|| env("GCE_METADATA_IP")).unwrap_or_else(|| "169.254.169.254".to_owned());
    let url = format!("http://{host}/computeMetadata/v1/instance/service-accounts/default/token");
    let response = crate::http::client_with_connect_timeout(Duration::from_secs(3))
        .get(&url)
        .header("Metadata-Flavor", "Google")
        .send()
        .await
        .map_err(|_| {
            "Could not load the default credentials. Browse to https://cloud.google.com/docs/authentication/getting-started for more information.".to_owned()
        })?;
    let (token, life) = parse_token_response(response).await?;
    Ok((AccessToken { token, quota_project: None }, life))
}

/// `application/x-www-form-urlencoded` escaping.
fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding() {
        assert_eq!(url_encode("a b+c/=é"), "a+b%2Bc%2F%3D%C3%A9");
    }

    #[test]
    fn explicit_file_wins() {
        let env = |n: &str| (n == "GOOGLE_APPLICATION_CREDENTIALS").then(|| "/x/key.json".to_owned());
        assert_eq!(credentials_file(&env), Some("/x/key.json".into()));
        let gcloud = |n: &str| (n == "CLOUDSDK_CONFIG").then(|| "/nonexistent-dir".to_owned());
        assert_eq!(credentials_file(&gcloud), None);
    }
}
