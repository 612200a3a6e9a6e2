//! Bedrock's credentials from the AWS SDK default chain's last links, each against a server on
//! 127.0.0.1 reached through the endpoint overrides the SDK honours: the container endpoint
//! (`AWS_CONTAINER_CREDENTIALS_FULL_URI` + authorization token), the EC2 instance metadata service
//! (`AWS_EC2_METADATA_SERVICE_ENDPOINT`, IMDSv2 and the v1 fallback), and web identity through STS
//! `AssumeRoleWithWebIdentity` (`AWS_ENDPOINT_URL_STS`), and the chain's order.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, Method, StatusCode, Uri};
use pi_ai::providers::bedrock::credentials::{Auth, resolve, set_provider_env};
use pi_ai::providers::bedrock::sigv4::Credentials;

/// Every variable the chain reads, unset unless a test sets it.
const VARS: [&str; 22] = [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_BEDROCK_SKIP_AUTH",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_ENDPOINT_URL_STS",
    "AWS_ENDPOINT_URL",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    "AWS_EC2_METADATA_V1_DISABLED",
];

/// The provider environment is process-wide: one test at a time.
static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn env(set: &[(&str, &str)]) {
    let mut vars: HashMap<String, Option<String>> = VARS.iter().map(|v| (v.to_string(), None)).collect();
    vars.insert("AWS_CONFIG_FILE".into(), Some("/nonexistent".into()));
    vars.insert("AWS_SHARED_CREDENTIALS_FILE".into(), Some("/nonexistent".into()));
    for (k, v) in set {
        vars.insert(k.to_string(), Some(v.to_string()));
    }
    set_provider_env(Some(vars));
}

#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    headers: HashMap<String, String>,
    body: String,
}

type Handler = Arc<dyn Fn(&Seen) -> (u16, String) + Send + Sync>;

/// A server answering every request with `handler`, recording what it saw.
async fn server(handler: Handler) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let app = axum::Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap, body: String| {
        let log = log.clone();
        let handler = handler.clone();
        async move {
            let seen = Seen {
                method: method.to_string(),
                path: uri.to_string(),
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                    .collect(),
                body,
            };
            let (status, reply) = handler(&seen);
            log.lock().expect("lock").push(seen);
            (StatusCode::from_u16(status).expect("status"), reply)
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    (url, seen)
}

fn keys(id: &str, secret: &str, token: &str) -> Auth {
    Auth::SigV4(Credentials::new(id, secret, Some(token)))
}

const JSON_CREDS: &str = r#"{"AccessKeyId":"ASIACONTAINER","SecretAccessKey":"container-secret","Token":"container-token","Expiration":"2099-01-01T00:00:00Z","Code":"Success"}"#;

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pi-bedrock-creds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

#[tokio::test]
async fn container_endpoint_with_a_token_file_and_cached_until_expiry() {
    let _guard = LOCK.lock().await;
    let (url, seen) = server(Arc::new(|_| (200, JSON_CREDS.to_owned()))).await;
    let token = temp_file("container-token", "Bearer from-file");
    env(&[
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", &format!("{url}/v2/credentials/abc")),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token.to_str().expect("path")),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "ignored-when-a-file-is-set"),
    ]);
    let expected = keys("ASIACONTAINER", "container-secret", "container-token");
    assert_eq!(resolve(None).await, Ok(expected.clone()));
    assert_eq!(resolve(None).await, Ok(expected), "served from the cache");
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("GET", "/v2/credentials/abc"));
    assert_eq!(seen[0].headers.get("authorization").map(String::as_str), Some("Bearer from-file"));
}

#[tokio::test]
async fn container_endpoint_errors() {
    let _guard = LOCK.lock().await;
    env(&[("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://example.com/creds")]);
    assert!(resolve(None).await.unwrap_err().starts_with(
        "Could not load credentials from any providers (profile \"default\"; URL not accepted. It must either be HTTPS"
    ));
    let (url, _) = server(Arc::new(|_| (403, r#"{"Code":"AccessDenied"}"#.to_owned()))).await;
    env(&[
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", &format!("{url}/denied")),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "t"),
    ]);
    assert_eq!(
        resolve(None).await,
        Err("Could not load credentials from any providers (profile \"default\"; Server responded with status: 403)"
            .to_owned())
    );
    let (url, _) = server(Arc::new(|_| (200, r#"{"AccessKeyId":"A"}"#.to_owned()))).await;
    env(&[("AWS_CONTAINER_CREDENTIALS_FULL_URI", &format!("{url}/partial"))]);
    assert!(
        resolve(None).await.unwrap_err().contains("; HTTP credential provider response not of the required format")
    );
}

fn imds(token_status: u16) -> Handler {
    Arc::new(move |s: &Seen| {
        let token_ok = |s: &Seen| {
            token_status != 200 || s.headers.get("x-aws-ec2-metadata-token").map(String::as_str) == Some("imds-token")
        };
        match (s.method.as_str(), s.path.as_str()) {
            ("PUT", "/latest/api/token") => {
                (token_status, if token_status == 200 { "imds-token".into() } else { String::new() })
            }
            ("GET", "/latest/meta-data/iam/security-credentials/") if token_ok(s) => (200, "web-role\n".into()),
            ("GET", "/latest/meta-data/iam/security-credentials/web-role") if token_ok(s) => {
                (200, JSON_CREDS.replace("CONTAINER", "IMDS"))
            }
            _ => (401, String::new()),
        }
    })
}

#[tokio::test]
async fn instance_metadata_v2_with_a_session_token() {
    let _guard = LOCK.lock().await;
    let (url, seen) = server(imds(200)).await;
    env(&[("AWS_EC2_METADATA_SERVICE_ENDPOINT", &format!("{url}/"))]);
    assert_eq!(resolve(None).await, Ok(keys("ASIAIMDS", "container-secret", "container-token")));
    let seen = seen.lock().expect("lock").clone();
    let calls: Vec<(String, String)> = seen.iter().map(|s| (s.method.clone(), s.path.clone())).collect();
    assert_eq!(
        calls,
        [
            ("PUT".into(), "/latest/api/token".into()),
            ("GET".into(), "/latest/meta-data/iam/security-credentials/".into()),
            ("GET".into(), "/latest/meta-data/iam/security-credentials/web-role".into()),
        ]
    );
    assert_eq!(seen[0].headers.get("x-aws-ec2-metadata-token-ttl-seconds").map(String::as_str), Some("21600"));
}

#[tokio::test]
async fn instance_metadata_v1_fallback_and_its_block() {
    let _guard = LOCK.lock().await;
    let (url, seen) = server(imds(405)).await;
    env(&[("AWS_EC2_METADATA_SERVICE_ENDPOINT", &url)]);
    assert_eq!(resolve(None).await, Ok(keys("ASIAIMDS", "container-secret", "container-token")));
    assert!(seen.lock().expect("lock").iter().all(|s| !s.headers.contains_key("x-aws-ec2-metadata-token")));
    let (url, _) = server(imds(404)).await;
    env(&[("AWS_EC2_METADATA_SERVICE_ENDPOINT", &url), ("AWS_EC2_METADATA_V1_DISABLED", "true")]);
    assert!(resolve(None).await.unwrap_err().contains("; AWS EC2 Metadata v1 fallback has been blocked"));
    let (url, _) = server(imds(400)).await;
    env(&[("AWS_EC2_METADATA_SERVICE_ENDPOINT", &url)]);
    assert_eq!(
        resolve(None).await,
        Err("Could not load credentials from any providers (profile \"default\"; EC2 Metadata token request returned error)".to_owned())
    );
    env(&[("AWS_EC2_METADATA_DISABLED", "true")]);
    assert_eq!(
        resolve(None).await,
        Err("Could not load credentials from any providers (profile \"default\")".to_owned())
    );
}

const STS_REPLY: &str = "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIAWEB</AccessKeyId><SecretAccessKey>web-secret</SecretAccessKey><SessionToken>web-token</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";

#[tokio::test]
async fn web_identity_through_sts() {
    let _guard = LOCK.lock().await;
    let (url, seen) = server(Arc::new(|_| (200, STS_REPLY.to_owned()))).await;
    let token = temp_file("web-token", "eyJ.web.token\n");
    env(&[
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token.to_str().expect("path")),
        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/pi"),
        ("AWS_ROLE_SESSION_NAME", "pi session"),
        ("AWS_ENDPOINT_URL_STS", &url),
        // Both below lose: web identity comes first.
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:9/never"),
    ]);
    assert_eq!(resolve(None).await, Ok(keys("ASIAWEB", "web-secret", "web-token")));
    let seen = seen.lock().expect("lock").clone();
    assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("POST", "/"));
    assert_eq!(seen[0].headers.get("content-type").map(String::as_str), Some("application/x-www-form-urlencoded"));
    assert_eq!(
        seen[0].body,
        "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fpi&RoleSessionName=pi%20session&WebIdentityToken=eyJ.web.token"
    );
    assert!(!seen[0].headers.contains_key("authorization"), "the call is not signed");
}

#[tokio::test]
async fn web_identity_errors_reach_the_user() {
    let _guard = LOCK.lock().await;
    let reply = "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>Token expired</Message></Error></ErrorResponse>";
    let (url, _) = server(Arc::new(move |_| (400, reply.to_owned()))).await;
    let token = temp_file("web-token-bad", "bad");
    env(&[
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token.to_str().expect("path")),
        ("AWS_ROLE_ARN", "arn:aws:iam::1:role/x"),
        ("AWS_ENDPOINT_URL", &url),
    ]);
    assert_eq!(
        resolve(None).await,
        Err("STS AssumeRoleWithWebIdentity failed (InvalidIdentityToken): Token expired".to_owned())
    );
}

/// The SDK's order: environment keys, then the profile, then web identity, then the container
/// endpoint, then instance metadata.
#[tokio::test]
async fn the_chain_order() {
    let _guard = LOCK.lock().await;
    let (container, hits) = server(Arc::new(|_| (200, JSON_CREDS.to_owned()))).await;
    let (metadata, imds_hits) = server(imds(200)).await;
    let full = format!("{container}/order");
    let base = [
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", full.as_str()),
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", metadata.as_str()),
    ];
    let mut with_env = base.to_vec();
    with_env.extend([("AWS_ACCESS_KEY_ID", "AKENV"), ("AWS_SECRET_ACCESS_KEY", "env-secret")]);
    env(&with_env);
    assert_eq!(resolve(None).await, Ok(Auth::SigV4(Credentials::new("AKENV", "env-secret", None))));
    let profile =
        temp_file("credentials", "[default]\naws_access_key_id = AKPROFILE\naws_secret_access_key = p-secret\n");
    let mut with_profile = base.to_vec();
    with_profile.push(("AWS_SHARED_CREDENTIALS_FILE", profile.to_str().expect("path")));
    env(&with_profile);
    assert_eq!(resolve(None).await, Ok(Auth::SigV4(Credentials::new("AKPROFILE", "p-secret", None))));
    assert!(hits.lock().expect("lock").is_empty());
    env(&base);
    assert_eq!(resolve(None).await, Ok(keys("ASIACONTAINER", "container-secret", "container-token")));
    assert!(imds_hits.lock().expect("lock").is_empty(), "the container endpoint wins over instance metadata");
    set_provider_env(None);
}

/// The `Credential=<key>/<date>/<region>/<service>` scope of a SigV4 `Authorization`, without
/// the date.
fn scope(authorization: &str) -> Option<String> {
    let credential = authorization.split("Credential=").nth(1)?.split(',').next()?;
    let parts: Vec<&str> = credential.split('/').collect();
    Some(format!("{}/{}/{}", parts.first()?, parts.get(2)?, parts.get(3)?))
}

/// Profiles that assume a role, replayed against what the real pi-ai (the AWS SDK's `fromIni`)
/// did with the same files (`scripts/fixtures/bedrock_assume_role.mjs`): the STS `AssumeRole`
/// requests (parameters, order, signed with the source credentials in the right region), the
/// credentials Bedrock is then signed with, and the errors.
#[tokio::test]
async fn profiles_that_assume_a_role_match_the_sdk() {
    let _guard = LOCK.lock().await;
    let dir = format!("{}/tests/fixtures/bedrock", env!("CARGO_MANIFEST_DIR"));
    let scenarios: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/assume_role_scenarios.json")).expect("scenarios"))
            .expect("JSON");
    let recorded: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/assume_role.json")).expect("fixture"))
            .expect("JSON");
    for (scenario, theirs) in scenarios.iter().zip(&recorded) {
        let name = scenario["name"].as_str().expect("name");
        let (url, seen) = server(Arc::new(|req: &Seen| {
            if req.path.starts_with("/container") {
                return (200, JSON_CREDS.to_owned());
            }
            let role = req.body.split('&').find_map(|p| p.strip_prefix("RoleArn=")).unwrap_or_default();
            let role = role.rsplit("%2F").next().unwrap_or_default().to_uppercase();
            (200, format!("<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>ASIA{role}</AccessKeyId><SecretAccessKey>secret-{role}</SecretAccessKey><SessionToken>token-{role}</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>"))
        }))
        .await;
        let config = temp_file(&format!("{name}.config"), scenario["config"].as_str().expect("config"));
        let credentials = temp_file(&format!("{name}.credentials"), scenario["credentials"].as_str().expect("creds"));
        let extra: Vec<(String, String)> = scenario["env"]
            .as_object()
            .expect("env")
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().expect("value").replace("$BASE", &url)))
            .collect();
        let mut vars: Vec<(&str, &str)> = vec![
            ("AWS_CONFIG_FILE", config.to_str().expect("path")),
            ("AWS_SHARED_CREDENTIALS_FILE", credentials.to_str().expect("path")),
            ("AWS_ENDPOINT_URL_STS", &url),
            ("AWS_EC2_METADATA_DISABLED", "true"),
        ];
        vars.extend(extra.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        env(&vars);
        let result = resolve(None).await;
        let ours: Vec<serde_json::Value> = seen
            .lock()
            .expect("lock")
            .iter()
            .map(|r| {
                let auth = r.headers.get("authorization").and_then(|a| scope(a));
                serde_json::json!({"method": r.method, "path": r.path, "scope": auth, "token": r.headers.get("x-amz-security-token"),
                    "body": r.body})
            })
            .collect();
        let requests = theirs["requests"].as_array().expect("requests");
        let expected: Vec<serde_json::Value> = requests
            .iter()
            .filter(|r| !r["path"].as_str().unwrap_or_default().starts_with("/model/"))
            .map(|r| {
                let auth = r["headers"]["authorization"].as_str().and_then(scope);
                serde_json::json!({"method": r["method"], "path": r["path"], "scope": auth,
                    "token": r["headers"]["x-amz-security-token"], "body": r["body"]})
            })
            .collect();
        pretty_assertions::assert_eq!(ours, expected, "{name}: what STS and the container endpoint saw");
        match requests.iter().find(|r| r["path"].as_str().unwrap_or_default().starts_with("/model/")) {
            Some(bedrock) => {
                let key = scope(bedrock["headers"]["authorization"].as_str().expect("auth")).expect("scope");
                let key = key.split('/').next().expect("key").to_owned();
                let token = bedrock["headers"]["x-amz-security-token"].as_str().expect("token");
                let Ok(Auth::SigV4(c)) = result else { panic!("{name}: {result:?}") };
                assert_eq!(
                    (c.access_key_id.as_str(), c.session_token.as_deref()),
                    (key.as_str(), Some(token)),
                    "{name}"
                );
            }
            None => {
                let message = result.expect_err(name);
                let theirs = theirs["errorMessage"].as_str().expect("error");
                assert!(message.starts_with(theirs), "{name}: {message} vs {theirs}");
                if name == "cycle" {
                    assert!(message.ends_with("(profile \"a\"; Detected a cycle attempting to resolve credentials for profile a. Profiles visited: b, a)"), "{message}");
                }
            }
        }
    }
    set_provider_env(None);
}
