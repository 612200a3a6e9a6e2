//! What a provider's API-key auth resolves to (pi-ai's `ApiKeyAuth.resolve` of each provider):
//! a key, headers that carry the credential instead (`ANTHROPIC_AUTH_TOKEN` as a bearer token,
//! Cloudflare AI Gateway's `cf-aig-authorization`), and variables the request needs besides the
//! key (Cloudflare's account and gateway ids, filled into `{NAME}` placeholders of the base URL).

use std::collections::HashMap;

use super::env::{ANTHROPIC_AUTH_TOKEN_ENV, env_api_key_with};

/// A resolved credential for one request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolvedAuth {
    /// The API key, when the provider takes one.
    pub api_key: Option<String>,
    /// Headers to send (`None` removes a header the API would set).
    pub headers: Vec<(String, Option<String>)>,
    /// Variables for the request: `{NAME}` in the model's base URL is replaced by each.
    pub env: HashMap<String, String>,
}

impl ResolvedAuth {
    /// Just a key.
    pub fn key(key: impl Into<String>) -> Self {
        ResolvedAuth { api_key: Some(key.into()), ..Default::default() }
    }

    /// `base_url` with `{NAME}` replaced by this auth's variables (unknown names stay).
    ///
    /// ```
    /// use pi_ai::models::ResolvedAuth;
    /// let mut auth = ResolvedAuth::key("k");
    /// auth.env.insert("CLOUDFLARE_ACCOUNT_ID".into(), "acc".into());
    /// assert_eq!(auth.fill_base_url("https://x/{CLOUDFLARE_ACCOUNT_ID}/{OTHER}"), "https://x/acc/{OTHER}");
    /// ```
    pub fn fill_base_url(&self, base_url: &str) -> String {
        let mut url = base_url.to_owned();
        for (name, value) in &self.env {
            url = url.replace(&format!("{{{name}}}"), value);
        }
        url
    }
}

const CLOUDFLARE_API_KEY: &str = "CLOUDFLARE_API_KEY";
const CLOUDFLARE_ACCOUNT_ID: &str = "CLOUDFLARE_ACCOUNT_ID";
const CLOUDFLARE_GATEWAY_ID: &str = "CLOUDFLARE_GATEWAY_ID";

/// Resolves `provider`'s auth as pi-ai does: `key` (a stored or runtime key) wins; otherwise the
/// provider's environment variables through `env` (which should see a stored credential's `env`
/// object before the process environment). `None` when the provider has no usable credential.
///
/// ```
/// use pi_ai::models::resolve_provider_auth;
/// let env = |n: &str| (n == "ANTHROPIC_AUTH_TOKEN").then(|| "tok".to_owned());
/// let auth = resolve_provider_auth("anthropic", None, &env).unwrap();
/// assert_eq!(auth.api_key, None);
/// assert_eq!(auth.headers, vec![("Authorization".to_owned(), Some("Bearer tok".to_owned()))]);
/// ```
pub fn resolve_provider_auth(
    provider: &str,
    key: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<ResolvedAuth> {
    let get = |name: &str| env(name).filter(|v| !v.is_empty());
    let key = key.filter(|k| !k.is_empty()).map(str::to_owned);
    match provider {
        "cloudflare-workers-ai" | "cloudflare-ai-gateway" => {
            let gateway = provider == "cloudflare-ai-gateway";
            let api_key = key.or_else(|| get(CLOUDFLARE_API_KEY))?;
            let mut vars = HashMap::new();
            vars.insert(CLOUDFLARE_ACCOUNT_ID.to_owned(), get(CLOUDFLARE_ACCOUNT_ID)?);
            if !gateway {
                return Some(ResolvedAuth { api_key: Some(api_key), headers: Vec::new(), env: vars });
            }
            vars.insert(CLOUDFLARE_GATEWAY_ID.to_owned(), get(CLOUDFLARE_GATEWAY_ID)?);
            let headers = vec![
                ("cf-aig-authorization".to_owned(), Some(format!("Bearer {api_key}"))),
                ("Authorization".to_owned(), None),
                ("x-api-key".to_owned(), None),
            ];
            Some(ResolvedAuth { api_key: None, headers, env: vars })
        }
        "anthropic" => {
            if let Some(key) = key {
                return Some(ResolvedAuth::key(key));
            }
            if let Some(token) = get(ANTHROPIC_AUTH_TOKEN_ENV) {
                let headers = vec![("Authorization".to_owned(), Some(format!("Bearer {token}")))];
                return Some(ResolvedAuth { headers, ..Default::default() });
            }
            env_api_key_with(provider, get).map(ResolvedAuth::key)
        }
        "azure" => {
            let mut auth = key.or_else(|| env_api_key_with(provider, get)).map(ResolvedAuth::key)?;
            for name in super::azure::AZURE_ENV {
                if let Some(value) = get(name) {
                    auth.env.insert(name.to_owned(), value);
                }
            }
            Some(auth)
        }
        _ => key.or_else(|| env_api_key_with(provider, get)).map(ResolvedAuth::key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |n: &str| map.get(n).cloned()
    }

    #[test]
    fn cloudflare_needs_the_account_and_the_gateway() {
        let env = vars(&[("CLOUDFLARE_API_KEY", "cf")]);
        assert_eq!(resolve_provider_auth("cloudflare-workers-ai", None, &env), None);
        let env = vars(&[("CLOUDFLARE_API_KEY", "cf"), ("CLOUDFLARE_ACCOUNT_ID", "acc")]);
        let auth = resolve_provider_auth("cloudflare-workers-ai", None, &env).unwrap();
        assert_eq!(auth.api_key.as_deref(), Some("cf"));
        assert_eq!(
            auth.fill_base_url("https://api.cloudflare.com/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1"),
            "https://api.cloudflare.com/client/v4/accounts/acc/ai/v1"
        );
        assert_eq!(resolve_provider_auth("cloudflare-ai-gateway", None, &env), None);
        let env = vars(&[("CLOUDFLARE_ACCOUNT_ID", "acc"), ("CLOUDFLARE_GATEWAY_ID", "gw")]);
        let auth = resolve_provider_auth("cloudflare-ai-gateway", Some("stored"), &env).unwrap();
        assert_eq!(auth.api_key, None);
        assert_eq!(auth.headers[0], ("cf-aig-authorization".to_owned(), Some("Bearer stored".to_owned())));
        assert_eq!(
            auth.fill_base_url("https://g/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/compat"),
            "https://g/v1/acc/gw/compat"
        );
    }

    #[test]
    fn anthropic_order_is_key_bearer_token_oauth_token_api_key() {
        let all = vars(&[("ANTHROPIC_AUTH_TOKEN", "t"), ("ANTHROPIC_OAUTH_TOKEN", "o"), ("ANTHROPIC_API_KEY", "k")]);
        assert_eq!(resolve_provider_auth("anthropic", Some("s"), &all), Some(ResolvedAuth::key("s")));
        assert_eq!(resolve_provider_auth("anthropic", None, &all).unwrap().api_key, None);
        let two = vars(&[("ANTHROPIC_OAUTH_TOKEN", "o"), ("ANTHROPIC_API_KEY", "k")]);
        assert_eq!(resolve_provider_auth("anthropic", None, &two), Some(ResolvedAuth::key("o")));
        assert_eq!(resolve_provider_auth("groq", None, &vars(&[("GROQ_API_KEY", "g")])), Some(ResolvedAuth::key("g")));
        assert_eq!(resolve_provider_auth("groq", None, &vars(&[])), None);
    }
}
