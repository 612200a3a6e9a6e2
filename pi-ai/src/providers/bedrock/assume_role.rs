//! Profiles that assume a role, as the AWS SDK's `fromIni` resolves them: `role_arn` with a
//! `source_profile` (whose own credentials may come from another role, chained to any depth) or a
//! `credential_source` (`Environment`, `Ec2InstanceMetadata`, `EcsContainer`), exchanged by STS
//! `AssumeRole` signed with the source credentials; and a profile's `web_identity_token_file`.
//!
//! The STS call is a SigV4-signed query-protocol POST to `https://sts.<region>.amazonaws.com/` (or
//! `AWS_ENDPOINT_URL_STS` / `AWS_ENDPOINT_URL`) with the SDK's parameters in its order:
//! `RoleArn`, `RoleSessionName` (`role_session_name`, else `aws-sdk-js-<ms>`), `DurationSeconds`
//! (`duration_seconds`, else 3600) and `ExternalId`. The region is the first role profile's
//! `region`, else the one Bedrock uses. A profile with `mfa_serial` fails with the SDK's message
//! (pi gives the SDK no MFA prompt); a `source_profile` cycle and an unknown `credential_source`
//! pass to the chain's next links, as in the SDK.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::time::{SystemTime, UNIX_EPOCH};

use super::credentials::{Profile, env_credentials};
use super::sigv4::{self, Credentials};

/// Why a profile gave no credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProfileError {
    /// The chain stops with this error (the SDK's `tryNextLink: false`, or a failing source).
    Stop(String),
    /// The chain goes on to its next links; the reason is kept for the final error.
    Next(String),
}

type Resolved<'a> = Pin<Box<dyn Future<Output = Result<Credentials, ProfileError>> + Send + 'a>>;

/// Whether `profile` assumes a role (the SDK's `isAssumeRoleProfile`).
pub fn is_assume_role(profile: &Profile) -> bool {
    profile.contains_key("role_arn")
        && (profile.contains_key("source_profile") != profile.contains_key("credential_source"))
}

/// Credentials for the role profile `name` of `profiles` (the merged config and credentials
/// files); `region` is the region Bedrock uses, for STS when the profile names none.
pub async fn resolve(
    name: &str,
    profiles: &HashMap<String, Profile>,
    region: &str,
) -> Result<Credentials, ProfileError> {
    let sts_region = profiles
        .get(name)
        .and_then(|p| p.get("region"))
        .filter(|r| !r.is_empty())
        .cloned()
        .unwrap_or(region.to_owned());
    let chain = Chain { profiles, sts_region };
    chain.assume(name.to_owned(), Vec::new()).await
}

struct Chain<'a> {
    profiles: &'a HashMap<String, Profile>,
    sts_region: String,
}

fn is_static(profile: &Profile) -> bool {
    profile.contains_key("aws_access_key_id") && profile.contains_key("aws_secret_access_key")
}

fn static_credentials(profile: &Profile) -> Credentials {
    Credentials {
        access_key_id: profile.get("aws_access_key_id").cloned().unwrap_or_default(),
        secret_access_key: profile.get("aws_secret_access_key").cloned().unwrap_or_default(),
        session_token: profile.get("aws_session_token").cloned(),
    }
}

impl<'a> Chain<'a> {
    /// The SDK's `resolveProfileData` for a profile reached as a `source_profile`.
    fn source(&'a self, name: String, visited: Vec<String>) -> Resolved<'a> {
        Box::pin(async move {
            let empty = Profile::new();
            let data = self.profiles.get(&name).unwrap_or(&empty);
            let credential_source_only = !data.contains_key("role_arn") && data.contains_key("credential_source");
            if is_static(data) {
                return Ok(static_credentials(data));
            }
            if credential_source_only || is_assume_role(data) {
                return self.assume(name, visited).await;
            }
            match super::credentials::profile_credentials(data, self.profiles).await {
                Ok(Some(credentials)) => Ok(credentials),
                Ok(None) => Err(ProfileError::Next(format!(
                    "Could not resolve credentials using profile: [{name}] in configuration/credentials file(s)."
                ))),
                Err(e) => Err(ProfileError::Stop(e)),
            }
        })
    }

    /// The SDK's `resolveAssumeRoleCredentials`.
    fn assume(&'a self, name: String, visited: Vec<String>) -> Resolved<'a> {
        Box::pin(async move {
            let empty = Profile::new();
            let data = self.profiles.get(&name).unwrap_or(&empty);
            let source = match data.get("source_profile") {
                Some(source) if visited.contains(source) => {
                    return Err(ProfileError::Next(format!(
                        "Detected a cycle attempting to resolve credentials for profile {}. Profiles visited: {}",
                        super::credentials::profile_name(),
                        visited.join(", ")
                    )));
                }
                Some(source) => {
                    let mut next = visited.clone();
                    next.push(source.clone());
                    self.source(source.clone(), next).await
                }
                None => credential_source(&name, data.get("credential_source").map_or("", String::as_str)).await,
            };
            let Some(role) = data.get("role_arn") else { return source };
            if data.contains_key("mfa_serial") {
                return Err(ProfileError::Stop(format!(
                    "Profile {name} requires multi-factor authentication, but no MFA code callback was provided."
                )));
            }
            let source = source?;
            let session = data.get("role_session_name").filter(|s| !s.is_empty()).cloned().unwrap_or_else(|| {
                let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
                format!("aws-sdk-js-{ms}")
            });
            let duration = data.get("duration_seconds").and_then(|d| leading_int(d)).unwrap_or(3600);
            let request = AssumeRole { role, session: &session, duration, external_id: data.get("external_id") };
            assume_role(&source, &request, &self.sts_region).await.map_err(ProfileError::Stop)
        })
    }
}

/// JavaScript's `parseInt(text, 10)` for the digits it accepts.
fn leading_int(text: &str) -> Option<i64> {
    let t = text.trim_start();
    let end = t.char_indices().take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-')).count();
    t[..end].parse().ok()
}

/// The credentials a `credential_source` names.
async fn credential_source(profile: &str, source: &str) -> Result<Credentials, ProfileError> {
    match source {
        "Environment" => env_credentials()
            .ok_or_else(|| ProfileError::Stop("Unable to find environment variable credentials.".into())),
        "Ec2InstanceMetadata" => super::remote::instance_metadata().await.map_err(ProfileError::Stop),
        "EcsContainer" => super::remote::container().await.map_err(ProfileError::Stop),
        other => Err(ProfileError::Next(format!(
            "Unsupported credential source in profile {profile}. Got {other}, expected EcsContainer or Ec2InstanceMetadata or Environment."
        ))),
    }
}

/// One `AssumeRole` call's parameters.
struct AssumeRole<'a> {
    role: &'a str,
    session: &'a str,
    duration: i64,
    external_id: Option<&'a String>,
}

/// STS `AssumeRole`, signed with `source`. Credentials with an `Expiration` are reused until five
/// minutes before it.
async fn assume_role(source: &Credentials, request: &AssumeRole<'_>, region: &str) -> Result<Credentials, String> {
    let key = format!("assume-role:{}:{}:{}", source.access_key_id, request.role, request.session);
    if let Some(c) = super::remote::cached(&key) {
        return Ok(c);
    }
    let mut body = format!(
        "Action=AssumeRole&Version=2011-06-15&RoleArn={}&RoleSessionName={}&DurationSeconds={}",
        sigv4::uri_encode(request.role),
        sigv4::uri_encode(request.session),
        request.duration
    );
    if let Some(id) = request.external_id {
        body.push_str(&format!("&ExternalId={}", sigv4::uri_encode(id)));
    }
    let url = format!("{}/", super::remote::sts_endpoint_in(region));
    let headers = signed_headers(source, &url, body.as_bytes(), region);
    let mut call = crate::http::client().post(&url);
    for (k, v) in &headers {
        if k != "host" && k != "content-length" {
            call = call.header(k.as_str(), v.as_str());
        }
    }
    let response = call.body(body).send().await.map_err(|e| format!("STS AssumeRole failed: {e}"))?;
    let status = response.status().as_u16();
    let xml = response.text().await.map_err(|e| format!("STS AssumeRole failed: {e}"))?;
    if status != 200 {
        let code = super::remote::xml_text(&xml, "Code").unwrap_or_else(|| status.to_string());
        let message = super::remote::xml_text(&xml, "Message").unwrap_or_default();
        return Err(format!("STS AssumeRole failed ({code}): {message}"));
    }
    let text = |tag: &str| super::remote::xml_text(&xml, tag);
    let credentials = match (text("AccessKeyId"), text("SecretAccessKey")) {
        (Some(id), Some(secret)) => {
            Credentials { access_key_id: id, secret_access_key: secret, session_token: text("SessionToken") }
        }
        _ => return Err("STS AssumeRole returned no credentials".to_owned()),
    };
    super::remote::remember(&key, &credentials, text("Expiration").as_deref());
    Ok(credentials)
}

/// The STS request's headers with its SigV4 `Authorization` (service `sts`).
fn signed_headers(source: &Credentials, url: &str, body: &[u8], region: &str) -> Vec<(String, String)> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host = host.strip_suffix(":443").filter(|_| url.starts_with("https:")).unwrap_or(host);
    let amz_date = sigv4::amz_date_now();
    let mut headers = vec![
        ("content-type".to_owned(), "application/x-www-form-urlencoded".to_owned()),
        ("host".to_owned(), host.to_owned()),
        ("content-length".to_owned(), body.len().to_string()),
        ("x-amz-content-sha256".to_owned(), sigv4::payload_hash(body)),
        ("x-amz-date".to_owned(), amz_date.clone()),
    ];
    if let Some(token) = &source.session_token {
        headers.push(("x-amz-security-token".to_owned(), token.clone()));
    }
    let input = sigv4::SigningInput {
        method: "POST",
        path: if path.is_empty() { "/" } else { path },
        query: "",
        headers: &headers,
        payload: body,
        region,
        service: "sts",
        amz_date: &amz_date,
        escape_path: true,
    };
    let authorization = sigv4::sign(source, &input);
    headers.push(("authorization".to_owned(), authorization));
    headers
}
