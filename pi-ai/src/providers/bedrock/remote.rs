//! The AWS SDK default chain's last links, after the shared files: web identity
//! (`fromTokenFile`), then the container endpoint (`fromHttp`, ECS/EKS) or, without one, the EC2
//! instance metadata service (`fromInstanceMetadata`, IMDSv2 with the SDK's v1 fallback).
//!
//! - Web identity: `AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN` (+ `AWS_ROLE_SESSION_NAME`,
//!   default `aws-sdk-js-session-<ms>`), exchanged by STS `AssumeRoleWithWebIdentity` (an unsigned
//!   query-protocol POST to `https://sts.<region>.amazonaws.com/`, or `AWS_ENDPOINT_URL_STS` /
//!   `AWS_ENDPOINT_URL`; region `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's, else us-east-1).
//! - Container: `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` (on `http://169.254.170.2`) or
//!   `AWS_CONTAINER_CREDENTIALS_FULL_URI` (HTTPS, loopback or the ECS/EKS hosts only), with
//!   `Authorization` from `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` or
//!   `AWS_CONTAINER_AUTHORIZATION_TOKEN`.
//! - IMDS: unless `AWS_EC2_METADATA_DISABLED`; `AWS_EC2_METADATA_SERVICE_ENDPOINT` (else
//!   `http://169.254.169.254`, or `http://[fd00:ec2::254]` with the `IPv6` endpoint mode): `PUT
//!   /latest/api/token`, then the role name and its credentials under
//!   `/latest/meta-data/iam/security-credentials/`, with the token (without it when the token
//!   request answered 403/404/405 or timed out, unless `AWS_EC2_METADATA_V1_DISABLED`).
//!
//! Credentials with an `Expiration` are reused until five minutes before it.

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::credentials::env;
use super::sigv4::Credentials;

/// The SDK's timeout for metadata and container endpoints.
const METADATA_TIMEOUT: Duration = Duration::from_secs(1);
const EXPIRY_MARGIN: Duration = Duration::from_secs(5 * 60);

static CACHE: Mutex<Option<(String, Credentials, SystemTime)>> = Mutex::new(None);

pub(super) fn cached(source: &str) -> Option<Credentials> {
    let guard = CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (key, credentials, expires) = guard.as_ref()?;
    (key == source && SystemTime::now() + EXPIRY_MARGIN < *expires).then(|| credentials.clone())
}

pub(super) fn remember(source: &str, credentials: &Credentials, expiration: Option<&str>) {
    if let Some(expires) = expiration.and_then(parse_rfc3339) {
        *CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((source.to_owned(), credentials.clone(), expires));
    }
}

/// What the last links found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Remote {
    /// Credentials.
    Found(Credentials),
    /// None: no link applies, or (with its reason) the container endpoint or instance metadata
    /// failed, which the SDK's chain passes over to its final "Could not load credentials".
    Missing(Option<String>),
}

/// The next links of the chain. A web identity failure is an error (the SDK's chain stops there).
pub async fn credentials() -> Result<Remote, String> {
    if let (Some(file), Some(role)) = (env("AWS_WEB_IDENTITY_TOKEN_FILE"), env("AWS_ROLE_ARN")) {
        return web_identity(&file, &role, env("AWS_ROLE_SESSION_NAME")).await.map(Remote::Found);
    }
    let found = if env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").is_some()
        || env("AWS_CONTAINER_CREDENTIALS_FULL_URI").is_some()
    {
        container().await
    } else if env("AWS_EC2_METADATA_DISABLED").is_some_and(|v| v != "false") {
        return Ok(Remote::Missing(None));
    } else {
        instance_metadata().await
    };
    Ok(match found {
        Ok(credentials) => Remote::Found(credentials),
        Err(reason) => {
            tracing::debug!(%reason, "AWS remote credentials unavailable");
            Remote::Missing(Some(reason))
        }
    })
}

fn client() -> reqwest::Client {
    crate::http::client_with_connect_timeout(METADATA_TIMEOUT)
}

/// `Y-M-DTH:M:S[.f](Z|±hh:mm)` as a time.
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let (date, time) = text.split_once(['T', 't', ' '])?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (clock, offset) = match time.find(['Z', 'z', '+', '-']) {
        Some(i) => time.split_at(i),
        None => (time, "Z"),
    };
    let mut c = clock.split(':');
    let (h, min) = (c.next()?.parse::<i64>().ok()?, c.next()?.parse::<i64>().ok()?);
    let s = c.next()?.split('.').next()?.parse::<i64>().ok()?;
    let offset_s = match offset.chars().next() {
        Some('+' | '-') => {
            let (oh, om) = offset[1..].split_once(':')?;
            let v = oh.parse::<i64>().ok()? * 3600 + om.parse::<i64>().ok()? * 60;
            if offset.starts_with('-') { -v } else { v }
        }
        _ => 0,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + min * 60 + s - offset_s;
    u64::try_from(secs).ok().map(|s| UNIX_EPOCH + Duration::from_secs(s))
}

fn json_credentials(body: &Value, token_key: &str) -> Option<Credentials> {
    let field = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_owned);
    Some(Credentials {
        access_key_id: field("AccessKeyId")?,
        secret_access_key: field("SecretAccessKey")?,
        session_token: field(token_key),
    })
}

/// Whether `fromHttp` accepts the URL: HTTPS, loopback, or the ECS/EKS container hosts.
pub fn container_url_allowed(url: &reqwest::Url) -> bool {
    if url.scheme() == "https" {
        return true;
    }
    let Some(host) = url.host_str() else { return false };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => {
            ip.is_loopback() || ip.octets() == [169, 254, 170, 2] || ip.octets() == [169, 254, 170, 23]
        }
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback() || ip.segments() == [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23],
        Err(_) => host == "localhost",
    }
}

pub(super) async fn container() -> Result<Credentials, String> {
    let address = match env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
        Some(relative) => format!("http://169.254.170.2{relative}"),
        None => env("AWS_CONTAINER_CREDENTIALS_FULL_URI").unwrap_or_default(),
    };
    if let Some(c) = cached(&address) {
        return Ok(c);
    }
    let url = reqwest::Url::parse(&address).map_err(|e| format!("Invalid container credentials URI: {e}"))?;
    if !container_url_allowed(&url) {
        return Err("URL not accepted. It must either be HTTPS or match one of the following:\n  - loopback CIDR 127.0.0.0/8 or [::1/128]\n  - ECS container host 169.254.170.2\n  - EKS container host 169.254.170.23 or [fd00:ec2::23]".to_owned());
    }
    let token = match env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
        Some(file) => Some(
            std::fs::read_to_string(&file)
                .map_err(|e| format!("Could not read the container authorization token {file}: {e}"))?,
        ),
        None => env("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
    };
    let mut request = client().get(url).timeout(METADATA_TIMEOUT);
    if let Some(token) = token {
        if token.contains(['\r', '\n']) {
            return Err("Invalid authorization token: it contains a line break".to_owned());
        }
        request = request.header("Authorization", token);
    }
    let response = request.send().await.map_err(|e| format!("Container credentials request failed: {e}"))?;
    let status = response.status().as_u16();
    let text = response.text().await.map_err(|e| format!("Container credentials request failed: {e}"))?;
    if status != 200 {
        return Err(format!("Server responded with status: {status}"));
    }
    let body: Value = serde_json::from_str(&text).map_err(|e| format!("Invalid container credentials: {e}"))?;
    let expiration = body.get("Expiration").and_then(Value::as_str);
    let credentials = json_credentials(&body, "Token").filter(|c| c.session_token.is_some() && expiration.is_some()).ok_or(
        "HTTP credential provider response not of the required format, an object matching: { AccessKeyId: string, SecretAccessKey: string, Token: string, Expiration: string(rfc3339) }",
    )?;
    remember(&address, &credentials, expiration);
    Ok(credentials)
}

fn imds_endpoint() -> String {
    if let Some(endpoint) = env("AWS_EC2_METADATA_SERVICE_ENDPOINT") {
        return endpoint.trim_end_matches('/').to_owned();
    }
    if env("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE").is_some_and(|m| m.eq_ignore_ascii_case("ipv6")) {
        "http://[fd00:ec2::254]".to_owned()
    } else {
        "http://169.254.169.254".to_owned()
    }
}

async fn imds_get(url: &str, token: Option<&str>) -> Result<String, String> {
    let mut request = client().get(url).timeout(METADATA_TIMEOUT);
    if let Some(token) = token {
        request = request.header("x-aws-ec2-metadata-token", token);
    }
    let response = request.send().await.map_err(|e| format!("EC2 instance metadata request failed: {e}"))?;
    let status = response.status().as_u16();
    let text = response.text().await.map_err(|e| format!("EC2 instance metadata request failed: {e}"))?;
    if status != 200 {
        return Err(format!("EC2 instance metadata request failed with status {status}"));
    }
    Ok(text)
}

pub(super) async fn instance_metadata() -> Result<Credentials, String> {
    let base = imds_endpoint();
    if let Some(c) = cached(&base) {
        return Ok(c);
    }
    let put = client()
        .put(format!("{base}/latest/api/token"))
        .header("x-aws-ec2-metadata-token-ttl-seconds", "21600")
        .timeout(METADATA_TIMEOUT)
        .send()
        .await;
    let token = match put {
        Ok(r) if r.status().as_u16() == 200 => {
            Some(r.text().await.map_err(|e| format!("EC2 Metadata token request failed: {e}"))?)
        }
        Ok(r) if r.status().as_u16() == 400 => return Err("EC2 Metadata token request returned error".to_owned()),
        Ok(r) if ![403, 404, 405].contains(&r.status().as_u16()) => {
            return Err(format!("EC2 Metadata token request failed with status {}", r.status().as_u16()));
        }
        Err(e) if !e.is_timeout() => return Err(format!("EC2 Metadata token request failed: {e}")),
        _ => None,
    };
    if token.is_none() && env("AWS_EC2_METADATA_V1_DISABLED").is_some_and(|v| v != "false") {
        return Err("AWS EC2 Metadata v1 fallback has been blocked by AWS SDK configuration in the following: [process environment variable (AWS_EC2_METADATA_V1_DISABLED)].".to_owned());
    }
    let path = format!("{base}/latest/meta-data/iam/security-credentials/");
    let role = imds_get(&path, token.as_deref()).await?;
    let role = role.trim();
    let text = imds_get(&format!("{path}{role}"), token.as_deref()).await?;
    let body: Value = serde_json::from_str(&text).map_err(|e| format!("Invalid instance metadata credentials: {e}"))?;
    let credentials =
        json_credentials(&body, "Token").ok_or("Invalid response received from instance metadata service.")?;
    remember(&base, &credentials, body.get("Expiration").and_then(Value::as_str));
    Ok(credentials)
}

/// The region STS is called in without another choice: `AWS_REGION`, `AWS_DEFAULT_REGION`, the
/// profile's, else `us-east-1`.
pub(super) fn default_sts_region() -> String {
    env("AWS_REGION")
        .or_else(|| env("AWS_DEFAULT_REGION"))
        .or_else(super::credentials::profile_region)
        .unwrap_or_else(|| "us-east-1".to_owned())
}

fn sts_endpoint() -> String {
    sts_endpoint_in(&default_sts_region())
}

/// STS's endpoint for `region` (`AWS_ENDPOINT_URL_STS` or `AWS_ENDPOINT_URL` when set).
pub(super) fn sts_endpoint_in(region: &str) -> String {
    if let Some(e) = env("AWS_ENDPOINT_URL_STS").or_else(|| env("AWS_ENDPOINT_URL")) {
        return e.trim_end_matches('/').to_owned();
    }
    format!("https://sts.{region}.amazonaws.com")
}

fn form_encode(text: &str) -> String {
    super::sigv4::uri_encode(text)
}

/// The text of the first `<tag>…</tag>` of an XML answer, unescaped.
pub(super) fn xml_text(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&format!("</{tag}>"))?;
    Some(
        xml[start..end]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

/// STS `AssumeRoleWithWebIdentity` for the token in `file` (session name `session`, else the
/// SDK's `aws-sdk-js-session-<ms>`).
pub(super) async fn web_identity(file: &str, role: &str, session: Option<String>) -> Result<Credentials, String> {
    let source = format!("web-identity:{file}:{role}");
    if let Some(c) = cached(&source) {
        return Ok(c);
    }
    let token =
        std::fs::read_to_string(file).map_err(|e| format!("Could not read the web identity token {file}: {e}"))?;
    let session = session.filter(|s| !s.is_empty()).unwrap_or_else(|| {
        let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        format!("aws-sdk-js-session-{ms}")
    });
    let body = format!(
        "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn={}&RoleSessionName={}&WebIdentityToken={}",
        form_encode(role),
        form_encode(&session),
        form_encode(token.trim())
    );
    let response = crate::http::client()
        .post(format!("{}/", sts_endpoint()))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("STS AssumeRoleWithWebIdentity failed: {e}"))?;
    let status = response.status().as_u16();
    let xml = response.text().await.map_err(|e| format!("STS AssumeRoleWithWebIdentity failed: {e}"))?;
    if status != 200 {
        let code = xml_text(&xml, "Code").unwrap_or_else(|| status.to_string());
        let message = xml_text(&xml, "Message").unwrap_or_default();
        return Err(format!("STS AssumeRoleWithWebIdentity failed ({code}): {message}"));
    }
    let credentials = match (xml_text(&xml, "AccessKeyId"), xml_text(&xml, "SecretAccessKey")) {
        (Some(id), Some(secret)) => {
            Credentials { access_key_id: id, secret_access_key: secret, session_token: xml_text(&xml, "SessionToken") }
        }
        _ => return Err("STS AssumeRoleWithWebIdentity returned no credentials".to_owned()),
    };
    remember(&source, &credentials, xml_text(&xml, "Expiration").as_deref());
    Ok(credentials)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times() {
        let t = parse_rfc3339("2026-12-01T20:00:00Z").unwrap();
        assert_eq!(t.duration_since(UNIX_EPOCH).unwrap().as_secs(), 1_796_155_200);
        let offset = parse_rfc3339("2026-12-01T21:00:00.123+01:00").unwrap();
        assert_eq!(offset, t);
        assert!(parse_rfc3339("yesterday").is_none());
    }

    #[test]
    fn container_hosts() {
        let ok = |u: &str| container_url_allowed(&reqwest::Url::parse(u).unwrap());
        assert!(ok("http://127.0.0.1:9/creds"));
        assert!(ok("http://169.254.170.2/v2/credentials/x"));
        assert!(ok("https://example.com/c"));
        assert!(ok("http://[::1]:8/c"));
        assert!(!ok("http://example.com/c"));
        assert!(!ok("http://10.0.0.1/c"));
    }

    #[test]
    fn xml_fields() {
        let xml = "<R><Credentials><AccessKeyId>AK</AccessKeyId><SessionToken>a&amp;b</SessionToken></Credentials></R>";
        assert_eq!(xml_text(xml, "AccessKeyId").as_deref(), Some("AK"));
        assert_eq!(xml_text(xml, "SessionToken").as_deref(), Some("a&b"));
        assert_eq!(xml_text(xml, "Nope"), None);
    }
}
