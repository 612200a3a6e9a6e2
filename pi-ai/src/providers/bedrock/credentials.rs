//! Where Bedrock's credentials and region come from (the reference's config plus the AWS SDK's
//! default chain):
//!
//! 1. `AWS_BEDROCK_SKIP_AUTH=1`: dummy keys (for proxies that need no auth);
//! 2. a bearer token: the request's API key or `AWS_BEARER_TOKEN_BEDROCK`;
//! 3. `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`);
//! 4. the profile (`AWS_PROFILE`, else `default`) of the shared files (`AWS_SHARED_CREDENTIALS_FILE`
//!    or `~/.aws/credentials`, `AWS_CONFIG_FILE` or `~/.aws/config`): a role to assume
//!    ([`super::assume_role`]), static keys, a `web_identity_token_file`, a `credential_process`,
//!    or IAM Identity Center (SSO): the cached token of `~/.aws/sso/cache/<sha1>.json` exchanged
//!    at the portal for role credentials;
//! 5. web identity, the container endpoint or the EC2 instance metadata service ([`super::remote`]).

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;

use super::assume_role::ProfileError;
use super::sigv4::Credentials;

/// How a request authenticates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// SigV4 with these keys.
    SigV4(Credentials),
}

/// The provider environment (pi's `options.env`): entries here win over the process environment,
/// `None` hiding a variable. Process-wide; `None` clears it.
static PROVIDER_ENV: std::sync::RwLock<Option<HashMap<String, Option<String>>>> = std::sync::RwLock::new(None);

/// Sets (or with `None` clears) the provider environment Bedrock reads before the process's.
pub fn set_provider_env(env: Option<HashMap<String, Option<String>>>) {
    *PROVIDER_ENV.write().unwrap_or_else(std::sync::PoisonError::into_inner) = env;
}

tokio::task_local! {
    /// The provider environment of the request being polled ([`StreamOptions::env`](crate::options::StreamOptions::env)).
    static REQUEST_ENV: Option<std::sync::Arc<HashMap<String, String>>>;
}

/// Polls `inner` with `env` as the request's provider environment: [`env()`] reads it first, so two
/// requests with different environments never see each other's.
pub fn with_request_env<S: futures::Stream + Send>(
    env: Option<std::sync::Arc<HashMap<String, String>>>,
    inner: S,
) -> impl futures::Stream<Item = S::Item> + Send {
    let mut inner = Box::pin(inner);
    futures::stream::poll_fn(move |cx| REQUEST_ENV.sync_scope(env.clone(), || inner.as_mut().poll_next(cx)))
}

/// Reads a variable (the request's provider environment, then the process-wide one of
/// [`set_provider_env`], then the process's), empty counting as unset.
pub fn env(name: &str) -> Option<String> {
    let request = REQUEST_ENV.try_with(|env| env.as_ref().and_then(|e| e.get(name).cloned())).ok().flatten();
    if let Some(value) = request {
        return Some(value).filter(|v| !v.is_empty());
    }
    let overrides = PROVIDER_ENV.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(value) = overrides.as_ref().and_then(|m| m.get(name)) {
        return value.clone().filter(|v| !v.is_empty());
    }
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// One profile's keys and values.
pub type Profile = HashMap<String, String>;

/// Parses an INI file into sections (`[profile x]` and `[x]` both named `x`; `[sso-session x]`
/// named `sso-session x`).
pub fn parse_ini(text: &str, config_file: bool) -> HashMap<String, Profile> {
    let mut sections: HashMap<String, Profile> = HashMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim();
            let name = match name.strip_prefix("profile ") {
                Some(p) if config_file => p.trim().to_owned(),
                _ => name.to_owned(),
            };
            sections.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        if let (Some(section), Some((k, v))) = (&current, line.split_once('=')) {
            sections.entry(section.clone()).or_default().insert(k.trim().to_owned(), v.trim().to_owned());
        }
    }
    sections
}

fn home() -> Option<PathBuf> {
    env("HOME").map(PathBuf::from).or_else(dirs::home_dir)
}

fn read_ini(var: &str, default: &str, config_file: bool) -> HashMap<String, Profile> {
    let path = env(var).map(PathBuf::from).or_else(|| home().map(|h| h.join(".aws").join(default)));
    path.and_then(|p| std::fs::read_to_string(p).ok()).map(|t| parse_ini(&t, config_file)).unwrap_or_default()
}

/// The active profile name: `AWS_PROFILE`, else `default`.
pub fn profile_name() -> String {
    env("AWS_PROFILE").unwrap_or_else(|| "default".to_owned())
}

/// The active profile merged from both files (the credentials file wins).
pub fn load_profile(name: &str) -> (Profile, HashMap<String, Profile>) {
    let config = read_ini("AWS_CONFIG_FILE", "config", true);
    let credentials = read_ini("AWS_SHARED_CREDENTIALS_FILE", "credentials", false);
    let mut profile = config.get(name).cloned().unwrap_or_default();
    if let Some(c) = credentials.get(name) {
        profile.extend(c.clone());
    }
    (profile, config)
}

/// Every profile of both files, merged per name (the credentials file's keys win), with the
/// config file's other sections (`sso-session x`).
pub fn all_profiles() -> HashMap<String, Profile> {
    let mut all = read_ini("AWS_CONFIG_FILE", "config", true);
    for (name, keys) in read_ini("AWS_SHARED_CREDENTIALS_FILE", "credentials", false) {
        all.entry(name).or_default().extend(keys);
    }
    all
}

/// The region of the active profile's config.
pub fn profile_region() -> Option<String> {
    load_profile(&profile_name()).0.get("region").cloned().filter(|r| !r.is_empty())
}

/// Keys from the environment.
pub fn env_credentials() -> Option<Credentials> {
    let id = env("AWS_ACCESS_KEY_ID")?;
    let secret = env("AWS_SECRET_ACCESS_KEY")?;
    Some(Credentials { access_key_id: id, secret_access_key: secret, session_token: env("AWS_SESSION_TOKEN") })
}

/// Resolves the request's auth (see the module docs); the error is shown to the user.
pub async fn resolve(api_key: Option<&str>) -> Result<Auth, String> {
    if env("AWS_BEDROCK_SKIP_AUTH").as_deref() == Some("1") {
        return Ok(Auth::SigV4(Credentials::new("dummy-access-key", "dummy-secret-key", None)));
    }
    let bearer = api_key.filter(|k| !k.is_empty() && *k != "<authenticated>").map(str::to_owned);
    if let Some(token) = bearer.or_else(|| env("AWS_BEARER_TOKEN_BEDROCK")) {
        return Ok(Auth::Bearer(token));
    }
    if let Some(credentials) = env_credentials() {
        return Ok(Auth::SigV4(credentials));
    }
    let name = profile_name();
    let profiles = all_profiles();
    let profile = profiles.get(&name).cloned().unwrap_or_default();
    let mut passed_over = None;
    if super::assume_role::is_assume_role(&profile) {
        match super::assume_role::resolve(&name, &profiles, &super::remote::default_sts_region()).await {
            Ok(credentials) => return Ok(Auth::SigV4(credentials)),
            Err(ProfileError::Stop(e)) => return Err(e),
            Err(ProfileError::Next(reason)) => passed_over = Some(reason),
        }
    } else if let Some(credentials) = profile_credentials(&profile, &profiles).await? {
        return Ok(Auth::SigV4(credentials));
    }
    match super::remote::credentials().await? {
        super::remote::Remote::Found(credentials) => Ok(Auth::SigV4(credentials)),
        super::remote::Remote::Missing(reason) => match reason.or(passed_over) {
            None => Err(format!("Could not load credentials from any providers (profile \"{name}\")")),
            Some(reason) => {
                Err(format!("Could not load credentials from any providers (profile \"{name}\"; {reason})"))
            }
        },
    }
}

/// The profile's own credentials (static keys, web identity, `credential_process`, SSO); `None`
/// when it names no source.
pub(super) async fn profile_credentials(
    profile: &Profile,
    config: &HashMap<String, Profile>,
) -> Result<Option<Credentials>, String> {
    if let (Some(id), Some(secret)) = (profile.get("aws_access_key_id"), profile.get("aws_secret_access_key")) {
        return Ok(Some(Credentials {
            access_key_id: id.clone(),
            secret_access_key: secret.clone(),
            session_token: profile.get("aws_session_token").cloned(),
        }));
    }
    if let (Some(file), Some(role)) = (profile.get("web_identity_token_file"), profile.get("role_arn")) {
        let session = profile.get("role_session_name").cloned();
        return super::remote::web_identity(file, role, session).await.map(Some);
    }
    if let Some(command) = profile.get("credential_process") {
        return process_credentials(command).await.map(Some);
    }
    if profile.contains_key("sso_session") || profile.contains_key("sso_start_url") {
        return sso_credentials(profile, config).await.map(Some);
    }
    Ok(None)
}

async fn process_credentials(command: &str) -> Result<Credentials, String> {
    let output = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .output()
        .await
        .map_err(|e| format!("credential_process failed: {e}"))?;
    if !output.status.success() {
        return Err(format!("credential_process failed: {}", String::from_utf8_lossy(&output.stderr).trim()));
    }
    let v: Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("credential_process returned invalid JSON: {e}"))?;
    let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    match (field("AccessKeyId"), field("SecretAccessKey")) {
        (Some(id), Some(secret)) => {
            Ok(Credentials { access_key_id: id, secret_access_key: secret, session_token: field("SessionToken") })
        }
        _ => Err("credential_process returned no AccessKeyId/SecretAccessKey".to_owned()),
    }
}

/// The SSO token cache file for a session name (or a legacy start URL).
pub fn sso_cache_path(key: &str) -> Option<PathBuf> {
    Some(
        home()?
            .join(".aws")
            .join("sso")
            .join("cache")
            .join(format!("{}.json", super::sigv4::hex(&sha1(key.as_bytes())))),
    )
}

async fn sso_credentials(profile: &Profile, config: &HashMap<String, Profile>) -> Result<Credentials, String> {
    let session = profile.get("sso_session").and_then(|s| config.get(&format!("sso-session {s}")).map(|c| (s, c)));
    let (cache_key, region) = match session {
        Some((name, s)) => (name.clone(), s.get("sso_region").cloned()),
        None => (profile.get("sso_start_url").cloned().unwrap_or_default(), profile.get("sso_region").cloned()),
    };
    let region = region.ok_or("The SSO profile has no sso_region")?;
    let path = sso_cache_path(&cache_key).ok_or("No home directory for the SSO cache")?;
    let text = std::fs::read_to_string(&path)
        .map_err(|_| "The SSO session associated with this profile has expired or is otherwise invalid. To refresh this SSO session run aws sso login with the corresponding profile.".to_owned())?;
    let token: Value = serde_json::from_str(&text).map_err(|e| format!("Invalid SSO token cache: {e}"))?;
    let access = token.get("accessToken").and_then(Value::as_str).ok_or("The SSO token cache has no accessToken")?;
    let (Some(account), Some(role)) = (profile.get("sso_account_id"), profile.get("sso_role_name")) else {
        return Err("The SSO profile needs sso_account_id and sso_role_name".to_owned());
    };
    let base = env("AWS_ENDPOINT_URL_SSO").unwrap_or_else(|| format!("https://portal.sso.{region}.amazonaws.com"));
    let url = format!(
        "{}/federation/credentials?account_id={}&role_name={}",
        base.trim_end_matches('/'),
        super::sigv4::uri_encode(account),
        super::sigv4::uri_encode(role)
    );
    let response = crate::http::client()
        .get(&url)
        .header("x-amz-sso_bearer_token", access)
        .send()
        .await
        .map_err(|e| format!("SSO GetRoleCredentials failed: {e}"))?;
    let status = response.status();
    let body: Value = response.json().await.map_err(|e| format!("SSO GetRoleCredentials failed: {e}"))?;
    if !status.is_success() {
        return Err(format!("SSO GetRoleCredentials failed ({}): {body}", status.as_u16()));
    }
    let role = &body["roleCredentials"];
    let field = |k: &str| role.get(k).and_then(Value::as_str).map(str::to_owned);
    match (field("accessKeyId"), field("secretAccessKey")) {
        (Some(id), Some(secret)) => {
            Ok(Credentials { access_key_id: id, secret_access_key: secret, session_token: field("sessionToken") })
        }
        _ => Err("SSO GetRoleCredentials returned no credentials".to_owned()),
    }
}

/// SHA-1 (only for the SSO cache file name, as the AWS CLI and SDK name it).
pub fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0];
    let mut message = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&bit_len.to_be_bytes());
    for chunk in message.chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in chunk.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(k).wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 20];
    for (i, word) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&word.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_known_answers() {
        assert_eq!(super::super::sigv4::hex(&sha1(b"abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(super::super::sigv4::hex(&sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    }

    #[test]
    fn ini_profiles() {
        let text = "[default]\nregion = us-west-2\n\n[profile dev]\nsso_session = corp\n# c\n[sso-session corp]\nsso_region=eu-west-1\n";
        let parsed = parse_ini(text, true);
        assert_eq!(parsed["default"]["region"], "us-west-2");
        assert_eq!(parsed["dev"]["sso_session"], "corp");
        assert_eq!(parsed["sso-session corp"]["sso_region"], "eu-west-1");
        let credentials = parse_ini("[profile x]\na=1", false);
        assert!(credentials.contains_key("profile x"));
    }
}

#[cfg(test)]
mod request_env_tests {
    use std::sync::Arc;

    use futures::StreamExt;

    use super::*;

    #[tokio::test]
    async fn each_request_reads_its_own_environment() {
        let vars = |profile: &str| Some(Arc::new(HashMap::from([("AWS_PROFILE".to_owned(), profile.to_owned())])));
        let read = || futures::stream::iter([env("AWS_PROFILE"), env("AWS_BEDROCK_SKIP_AUTH_TEST_UNSET")]);
        let mut a =
            Box::pin(with_request_env(vars("alpha"), futures::stream::once(async {}).flat_map(move |_| read())));
        let mut b = Box::pin(with_request_env(vars("beta"), futures::stream::once(async {}).flat_map(move |_| read())));
        assert_eq!(b.next().await, Some(Some("beta".to_owned())));
        assert_eq!(a.next().await, Some(Some("alpha".to_owned())));
        assert_eq!(a.next().await, Some(None));
        let empty = Some(Arc::new(HashMap::from([("AWS_PROFILE".to_owned(), String::new())])));
        let mut hidden = Box::pin(with_request_env(empty, futures::stream::once(async { env("AWS_PROFILE") })));
        assert_eq!(hidden.next().await, Some(None));
    }
}
