//! GitHub Copilot: an optional GitHub Enterprise domain, GitHub's device-code login, then the
//! Copilot token (`copilot_internal/v2/token`, refreshed with the GitHub token kept as `refresh`),
//! the account's model list (`availableModelIds`) and, for models whose policy is unconfigured,
//! enabling them. Requests go to the proxy endpoint the token names.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::device::{PollOptions, PollStatus, poll_device_code};
use super::rate_limit::{RetryPolicy, send_with_rate_limit_retry};
use super::support::{Body, Reply, SendError, SimpleUrl, credential, form, send, str_of, trusted_http_url};
use super::{Endpoints, LoginOptions, OAuthFlow, OAuthRequestAuth};
use crate::auth::Credential;
use crate::auth::login::{AuthEvent, AuthInteraction, AuthPrompt, LoginError};

const CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
const USER_AGENT: &str = "GitHubCopilotChat/0.35.0";
/// The headers Copilot requests carry (VS Code's Copilot Chat identity).
pub const COPILOT_HEADERS: [(&str, &str); 4] = [
    ("User-Agent", USER_AGENT),
    ("Editor-Version", "vscode/1.107.0"),
    ("Editor-Plugin-Version", "copilot-chat/0.35.0"),
    ("Copilot-Integration-Id", "vscode-chat"),
];
const COPILOT_API_VERSION: &str = "2026-06-01";
const INDIVIDUAL: &str = "https://api.individual.githubcopilot.com";

/// GitHub Copilot's OAuth.
#[derive(Clone, Debug, Default)]
pub struct GitHubCopilotOAuth {
    endpoints: Endpoints,
}

fn normalize_domain(input: &str) -> Option<String> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return None;
    }
    let url = if trimmed.contains("://") {
        SimpleUrl::parse(trimmed)
    } else {
        SimpleUrl::parse(&format!("https://{trimmed}"))
    };
    url.map(|u| u.host().to_ascii_lowercase()).filter(|h| !h.is_empty())
}

/// The API base URL of a Copilot token: its `proxy-ep` with `proxy.` turned into `api.`, else the
/// enterprise's `copilot-api.` host, else the individual endpoint.
///
/// ```
/// use pi_coding_agent::auth::oauth::copilot_base_url;
/// assert_eq!(copilot_base_url("tid=1;proxy-ep=proxy.business.githubcopilot.com;x=1", None), "https://api.business.githubcopilot.com");
/// assert_eq!(copilot_base_url("tid=1", Some("ghe.example.com")), "https://copilot-api.ghe.example.com");
/// assert_eq!(copilot_base_url("tid=1", None), "https://api.individual.githubcopilot.com");
/// ```
pub fn copilot_base_url(token: &str, enterprise_domain: Option<&str>) -> String {
    if let Some(rest) = token.split(';').find_map(|p| p.strip_prefix("proxy-ep=")).filter(|h| !h.is_empty()) {
        let host = rest.strip_prefix("proxy.").map_or_else(|| rest.to_owned(), |h| format!("api.{h}"));
        return format!("https://{host}");
    }
    match enterprise_domain {
        Some(domain) => format!("https://copilot-api.{domain}"),
        None => INDIVIDUAL.to_owned(),
    }
}

fn enterprise_of(credential: &Credential) -> Option<String> {
    credential.get("enterpriseUrl").and_then(Value::as_str).filter(|s| !s.is_empty()).and_then(normalize_domain)
}

fn fail(reply: &Reply) -> String {
    format!("{} {}: {}", reply.status, reply.status_text, reply.text)
}

struct Catalog {
    available: Vec<String>,
    policy: Vec<String>,
}

fn parse_catalog(raw: Option<Map<String, Value>>, allow_policy_fallback: bool) -> Result<Catalog, String> {
    let Some(Value::Array(data)) = raw.and_then(|mut r| r.remove("data")) else {
        return Err("Invalid Copilot models response".into());
    };
    let models: Vec<(String, bool, Option<String>)> = data
        .iter()
        .filter_map(|item| {
            let id = item.get("id")?.as_str()?.to_owned();
            if item.pointer("/capabilities/supports/tool_calls") == Some(&Value::Bool(false)) {
                return None;
            }
            let picker = item.get("model_picker_enabled") == Some(&Value::Bool(true));
            let policy = item.pointer("/policy/state").and_then(Value::as_str).map(str::to_owned);
            Some((id, picker, policy))
        })
        .collect();
    let picker: Vec<String> =
        models.iter().filter(|(_, p, s)| *p && s.as_deref() != Some("disabled")).map(|(id, ..)| id.clone()).collect();
    let use_fallback = allow_policy_fallback && picker.is_empty();
    let available = if !picker.is_empty() || !allow_policy_fallback {
        picker
    } else {
        models.iter().filter(|(_, _, s)| s.as_deref() == Some("enabled")).map(|(id, ..)| id.clone()).collect()
    };
    let known: Vec<String> = pi_ai::models::builtin_catalog()
        .get("github-copilot")
        .map(|list| list.iter().map(|m| m.id.clone()).collect())
        .unwrap_or_default();
    let policy = models
        .iter()
        .filter(|(id, p, s)| s.as_deref() == Some("unconfigured") && known.contains(id) && (*p || use_fallback))
        .map(|(id, ..)| id.clone())
        .collect();
    Ok(Catalog { available, policy })
}

impl GitHubCopilotOAuth {
    /// Requests go to `endpoints`.
    pub fn new(endpoints: Endpoints) -> Self {
        GitHubCopilotOAuth { endpoints }
    }

    async fn copilot_token(
        &self,
        github_token: &str,
        enterprise: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Credential, String> {
        let domain = enterprise.unwrap_or("github.com");
        let auth = format!("Bearer {github_token}");
        let mut headers = vec![("Accept", "application/json"), ("Authorization", auth.as_str())];
        headers.extend(COPILOT_HEADERS);
        let url = format!("https://api.{domain}/copilot_internal/v2/token");
        let reply = send(&self.endpoints, "GET", &url, &headers, Body::None, Duration::from_secs(60), cancel)
            .await
            .map_err(|e| e.to_string())?;
        if !reply.ok() {
            return Err(fail(&reply));
        }
        let raw = reply.object().ok_or("Invalid Copilot token response")?;
        let (Some(token), Some(expires_at)) = (str_of(&raw, "token"), raw.get("expires_at").and_then(Value::as_f64))
        else {
            return Err("Invalid Copilot token response fields".into());
        };
        let mut fields = vec![
            ("refresh", Value::from(github_token)),
            ("access", Value::from(token)),
            ("expires", Value::from((expires_at * 1000.0 - 5.0 * 60.0 * 1000.0).round() as i64)),
        ];
        if let Some(e) = enterprise {
            fields.push(("enterpriseUrl", Value::from(e)));
        }
        Ok(credential(fields))
    }

    async fn models(
        &self,
        token: &str,
        enterprise: Option<&str>,
        cancel: &CancellationToken,
        policy: RetryPolicy,
    ) -> Result<Catalog, String> {
        let base = copilot_base_url(token, enterprise);
        let auth = format!("Bearer {token}");
        let mut headers = vec![("Accept", "application/json"), ("Authorization", auth.as_str())];
        headers.extend(COPILOT_HEADERS);
        headers.push(("X-GitHub-Api-Version", COPILOT_API_VERSION));
        let url = format!("{base}/models");
        let reply = send_with_rate_limit_retry(&self.endpoints, "GET", &url, &headers, Body::None, cancel, policy)
            .await
            .map_err(|e| e.to_string())?;
        if !reply.ok() {
            return Err(fail(&reply));
        }
        parse_catalog(reply.object(), base == INDIVIDUAL)
    }

    /// Enables each model's policy, best effort: a request that fails skips its model, a rate
    /// limit that outlasts its retries stops the batch, cancelling stops the login.
    async fn enable(
        &self,
        token: &str,
        ids: &[String],
        enterprise: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, SendError> {
        let base = copilot_base_url(token, enterprise);
        let auth = format!("Bearer {token}");
        let mut enabled = Vec::new();
        for id in ids {
            let mut headers = vec![("Content-Type", "application/json"), ("Authorization", auth.as_str())];
            headers.extend(COPILOT_HEADERS);
            headers.extend([("openai-intent", "chat-policy"), ("x-interaction-type", "chat-policy")]);
            let body = Body::Json(serde_json::json!({"state": "enabled"}));
            let url = format!("{base}/models/{id}/policy");
            match send_with_rate_limit_retry(&self.endpoints, "POST", &url, &headers, body, cancel, RetryPolicy::LOGIN)
                .await
            {
                Ok(reply) if reply.status == 429 => break,
                Ok(reply) if reply.ok() => enabled.push(id.clone()),
                Err(SendError::Cancelled) => return Err(SendError::Cancelled),
                _ => {}
            }
        }
        Ok(enabled)
    }

    async fn start_device(
        &self,
        domain: &str,
        cancel: &CancellationToken,
    ) -> Result<(String, String, String, Option<f64>, f64), LoginError> {
        let headers = [
            ("Accept", "application/json"),
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("User-Agent", USER_AGENT),
        ];
        let body = Body::Form(form(&[("client_id", CLIENT_ID), ("scope", "read:user")]));
        let url = format!("https://{domain}/login/device/code");
        let reply = send(&self.endpoints, "POST", &url, &headers, body, Duration::from_secs(60), cancel).await?;
        if !reply.ok() {
            return Err(LoginError::Failed(fail(&reply)));
        }
        let data = reply.object().ok_or_else(|| LoginError::Failed("Invalid device code response".into()))?;
        let interval = data.get("interval");
        let fields = (
            str_of(&data, "device_code"),
            str_of(&data, "user_code"),
            str_of(&data, "verification_uri"),
            data.get("expires_in").and_then(Value::as_f64),
        );
        let (Some(device), Some(user), Some(_), Some(expires)) = fields else {
            return Err(LoginError::Failed("Invalid device code response fields".into()));
        };
        if interval.is_some_and(|i| !i.is_number()) {
            return Err(LoginError::Failed("Invalid device code response fields".into()));
        }
        let verification = trusted_http_url(data.get("verification_uri"))
            .ok_or_else(|| LoginError::Failed("Untrusted verification_uri in device code response".into()))?;
        Ok((device.to_owned(), user.to_owned(), verification, interval.and_then(Value::as_f64), expires))
    }
}

fn access_token_status(reply: &Reply) -> Result<PollStatus<String>, LoginError> {
    if !reply.ok() {
        return Err(LoginError::Failed(fail(reply)));
    }
    let raw = reply.object();
    Ok(match raw {
        Some(r) if str_of(&r, "access_token").is_some() => {
            PollStatus::Complete(str_of(&r, "access_token").unwrap_or_default().to_owned())
        }
        Some(r) if str_of(&r, "error").is_some() => match str_of(&r, "error").unwrap_or_default() {
            "authorization_pending" => PollStatus::Pending,
            "slow_down" => PollStatus::SlowDown(r.get("interval").and_then(Value::as_f64)),
            error => {
                let suffix = str_of(&r, "error_description")
                    .filter(|d| !d.is_empty())
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                PollStatus::Failed(format!("Device flow failed: {error}{suffix}"))
            }
        },
        _ => PollStatus::Failed("Invalid device token response".into()),
    })
}

#[async_trait]
impl OAuthFlow for GitHubCopilotOAuth {
    fn name(&self) -> &str {
        "GitHub Copilot"
    }

    async fn login(
        &self,
        interaction: &dyn AuthInteraction,
        _options: &LoginOptions,
    ) -> Result<Credential, LoginError> {
        let input = interaction
            .prompt(AuthPrompt::Text {
                message: "GitHub Enterprise URL/domain (blank for github.com)".into(),
                placeholder: Some("company.ghe.com".into()),
            })
            .await?;
        let cancel = interaction.cancel();
        if cancel.is_cancelled() {
            return Err(LoginError::Cancelled);
        }
        let enterprise = normalize_domain(&input);
        if !input.trim().is_empty() && enterprise.is_none() {
            return Err(LoginError::Failed("Invalid GitHub Enterprise URL/domain".into()));
        }
        let domain = enterprise.clone().unwrap_or_else(|| "github.com".into());
        let (device_code, user_code, verification_uri, interval, expires_in) =
            self.start_device(&domain, &cancel).await?;
        interaction.notify(AuthEvent::DeviceCode {
            user_code,
            verification_uri,
            open_browser_on_confirm: true,
            copy_code_on_confirm: true,
            interval_seconds: interval.map(|i| i as u64),
            expires_in_seconds: Some(expires_in as u64),
        });
        let options = PollOptions {
            interval_seconds: interval,
            expires_in_seconds: Some(expires_in),
            wait_before_first_poll: true,
        };
        let url = format!("https://{domain}/login/oauth/access_token");
        let body = form(&[
            ("client_id", CLIENT_ID),
            ("device_code", &device_code),
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ]);
        let github_token = poll_device_code(options, &cancel, || {
            let (url, body, cancel) = (url.clone(), body.clone(), cancel.clone());
            async move {
                let headers = [
                    ("Accept", "application/json"),
                    ("Content-Type", "application/x-www-form-urlencoded"),
                    ("User-Agent", USER_AGENT),
                ];
                let reply =
                    send(&self.endpoints, "POST", &url, &headers, Body::Form(body), Duration::from_secs(60), &cancel)
                        .await?;
                access_token_status(&reply)
            }
        })
        .await?;
        let enterprise = enterprise.as_deref();
        let mut credential =
            self.copilot_token(&github_token, enterprise, &cancel).await.map_err(LoginError::Failed)?;
        let access = credential.access().unwrap_or_default().to_owned();
        let catalog =
            self.models(&access, enterprise, &cancel, RetryPolicy::LOGIN).await.map_err(LoginError::Failed)?;
        let mut enabled = Vec::new();
        if !catalog.policy.is_empty() {
            interaction.notify(AuthEvent::Progress { message: "Enabling models...".into() });
            enabled = self.enable(&access, &catalog.policy, enterprise, &cancel).await?;
        }
        let mut ids = catalog.available;
        for id in enabled {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        credential.set("availableModelIds", Value::from(ids));
        Ok(credential)
    }

    async fn refresh(&self, credential: &Credential) -> Result<Credential, String> {
        let enterprise = enterprise_of(credential);
        let cancel = CancellationToken::new();
        let mut next =
            self.copilot_token(credential.refresh().unwrap_or_default(), enterprise.as_deref(), &cancel).await?;
        let access = next.access().unwrap_or_default().to_owned();
        let catalog = self.models(&access, enterprise.as_deref(), &cancel, RetryPolicy::NONE).await?;
        next.set("availableModelIds", Value::from(catalog.available));
        Ok(next)
    }

    fn to_auth(&self, credential: &Credential) -> OAuthRequestAuth {
        let access = credential.access().unwrap_or_default();
        OAuthRequestAuth {
            api_key: Some(access.to_owned()),
            headers: Vec::new(),
            // Through `endpoints`, so tests with `PI_TEST_OAUTH_ORIGIN` reach their own server.
            base_url: Some(self.endpoints.url(&copilot_base_url(access, enterprise_of(credential).as_deref()))),
        }
    }
}
