//! Vertex AI with Application Default Credentials: a service-account key signed into a JWT bearer
//! grant (verified here with the key's public half), an `authorized_user` refresh token, token
//! caching, a revoked token, and the missing project/location errors. The token endpoint is the
//! key file's `token_uri`, served on 127.0.0.1.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use pi_ai::options::StreamOptions;
use pi_ai::providers::google::GoogleVertex;
use pi_ai::transcript::normalize_context;
use pi_ai::{ApiProvider, Context, Message, StopReason, UserMessage};
use serde_json::{Value, json};

use super::common::{model, ok_reply};
use super::support::{MockServer, Reply};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/http/apis/vertex_adc");

fn context() -> pi_ai::transcript::TranscriptContext {
    normalize_context(Context { messages: vec![Message::User(UserMessage::new("hi").into())], ..Default::default() })
}

/// A fresh credentials file (a unique path, so the token cache starts empty).
fn credentials(name: &str, creds: &Value) -> String {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("pi-vertex-adc-{}-{name}-{stamp}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("credentials.json");
    std::fs::write(&path, creds.to_string()).expect("write credentials");
    path.display().to_string()
}

fn env(file: &str) -> GoogleVertex {
    GoogleVertex::with_env([
        ("GOOGLE_APPLICATION_CREDENTIALS".to_owned(), file.to_owned()),
        ("GOOGLE_CLOUD_PROJECT".to_owned(), "proj".to_owned()),
        ("GOOGLE_CLOUD_LOCATION".to_owned(), "europe-west4".to_owned()),
    ])
}

fn form(raw: &str) -> std::collections::HashMap<String, String> {
    let decode = |s: &str| {
        let s = s.replace('+', " ");
        let mut out = Vec::new();
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' && i + 3 <= bytes.len() {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("00");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    raw.split('&').filter_map(|kv| kv.split_once('=')).map(|(k, v)| (decode(k), decode(v))).collect()
}

fn token_reply(token: &str) -> Reply {
    Reply::error(200, json!({"access_token": token, "expires_in": 3600, "token_type": "Bearer"}).to_string())
}

fn options() -> StreamOptions {
    StreamOptions { api_key: Some("<authenticated>".into()), ..Default::default() }
}

#[tokio::test]
async fn service_account_jwt_grant_then_cached_token() {
    let server = MockServer::start([
        token_reply("ya29.sa"),
        Reply::sse(ok_reply("google-vertex")),
        Reply::sse(ok_reply("google-vertex")),
    ])
    .await;
    let key = std::fs::read_to_string(format!("{DIR}/test_key.pem")).expect("key");
    let token_uri = format!("{}/token", server.url());
    let creds = json!({"type": "service_account", "project_id": "proj", "private_key": key, "client_email": "sa@proj.iam.gserviceaccount.com", "token_uri": token_uri, "quota_project_id": "billing"});
    let provider = env(&credentials("sa", &creds));
    let m = model("google-vertex", &server.url());
    let result = provider.stream(&m, context(), options()).result().await;
    assert_eq!((result.stop_reason, result.error_message.as_deref()), (StopReason::Stop, None));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/token");
    let grant = form(&requests[0].raw);
    assert_eq!(grant["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
    let parts: Vec<&str> = grant["assertion"].split('.').collect();
    assert_eq!(parts.len(), 3);
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).expect("b64")).expect("json");
    assert_eq!(header, json!({"alg": "RS256", "typ": "JWT"}));
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).expect("b64")).expect("json");
    assert_eq!(claims["iss"], "sa@proj.iam.gserviceaccount.com");
    assert_eq!(claims["scope"], "https://www.googleapis.com/auth/cloud-platform");
    assert_eq!(claims["aud"], token_uri);
    assert_eq!(claims["exp"].as_u64().unwrap_or(0) - claims["iat"].as_u64().unwrap_or(0), 3600);
    let public = STANDARD
        .decode(std::fs::read_to_string(format!("{DIR}/test_key.pub.der.b64")).expect("pub").trim())
        .expect("b64");
    let signature = URL_SAFE_NO_PAD.decode(parts[2]).expect("b64");
    ring::signature::UnparsedPublicKey::new(&ring::signature::RSA_PKCS1_2048_8192_SHA256, &public)
        .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
        .expect("the JWT is signed with the service account's key");
    let call = &requests[1];
    assert_eq!(call.path, "/v1/publishers/google/models/gemini-3-pro-preview:streamGenerateContent?alt=sse");
    assert_eq!(call.header("authorization"), Some("Bearer ya29.sa"));
    assert_eq!(call.header("x-goog-user-project"), Some("billing"));
    assert_eq!(call.header("x-goog-api-key"), None);

    let again = provider.stream(&m, context(), options()).result().await;
    assert_eq!(again.stop_reason, StopReason::Stop);
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "the cached token is reused");
    assert_eq!(requests[2].header("authorization"), Some("Bearer ya29.sa"));
}

#[tokio::test]
async fn authorized_user_refresh_and_revoked_tokens() {
    let server = MockServer::start([token_reply("ya29.user"), Reply::sse(ok_reply("google-vertex"))]).await;
    let creds = json!({"type": "authorized_user", "client_id": "cid", "client_secret": "sec", "refresh_token": "1//rt", "token_uri": format!("{}/token", server.url())});
    let provider = env(&credentials("user", &creds));
    let result = provider.stream(&model("google-vertex", &server.url()), context(), options()).result().await;
    assert_eq!(result.error_message, None);
    let requests = server.requests();
    let grant = form(&requests[0].raw);
    assert_eq!(
        (
            grant["grant_type"].as_str(),
            grant["refresh_token"].as_str(),
            grant["client_id"].as_str(),
            grant["client_secret"].as_str()
        ),
        ("refresh_token", "1//rt", "cid", "sec")
    );
    assert_eq!(requests[1].header("authorization"), Some("Bearer ya29.user"));

    let revoked =
        Reply::error(400, r#"{"error":"invalid_grant","error_description":"Token has been expired or revoked."}"#);
    let server = MockServer::start([revoked]).await;
    let creds = json!({"type": "authorized_user", "client_id": "cid", "client_secret": "sec", "refresh_token": "old", "token_uri": format!("{}/token", server.url())});
    let provider = env(&credentials("revoked", &creds));
    let (events, result) =
        super::support::run(provider.stream(&model("google-vertex", &server.url()), context(), options())).await;
    assert_eq!(events, ["error:error"]);
    assert_eq!(
        result.error_message.as_deref(),
        Some("Google token request failed (400): Token has been expired or revoked.")
    );
    assert_eq!(server.requests().len(), 1, "no model request without a token");
}

#[tokio::test]
async fn project_and_location_are_required() {
    let provider = GoogleVertex::with_env([("GOOGLE_CLOUD_LOCATION".to_owned(), "us".to_owned())]);
    let result = provider.stream(&model("google-vertex", "http://127.0.0.1:9"), context(), options()).result().await;
    assert_eq!(
        result.error_message.as_deref(),
        Some("Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass project in options.")
    );
    let provider = GoogleVertex::with_env([("GCLOUD_PROJECT".to_owned(), "p".to_owned())]);
    let result = provider.stream(&model("google-vertex", "http://127.0.0.1:9"), context(), options()).result().await;
    assert_eq!(
        result.error_message.as_deref(),
        Some("Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options.")
    );
}
