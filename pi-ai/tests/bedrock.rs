//! `bedrock-converse-stream` over real HTTP on 127.0.0.1: request bodies against what the real
//! pi 1.6.0 (through the AWS SDK) sent for the same contexts, our SigV4 signature against the SDK's
//! for the recorded requests, event-stream answers encoded here with correct CRCs (and a corrupt
//! one), the fault matrix with pi's texts (`scripts/fixtures/bedrock_requests.mjs`; the fault texts
//! were recorded from the reference the same way), bearer tokens and the credential chain.

mod issue16_support;
mod support;

use std::time::Duration;

use pi_ai::options::{StreamOptions, ToolChoice};
use pi_ai::providers::bedrock::eventstream::{HeaderValue, encode, encode_event};
use pi_ai::providers::bedrock::{BedrockConverseStream, sigv4};
use pi_ai::transcript::{TranscriptContext, normalize_context};
use pi_ai::{ApiProvider, Context, Message, StopReason, Tool, UserMessage};
use serde_json::{Value, json};
use support::{MockServer, Part, Reply, run};

/// The environment is process-wide: every test here holds this lock while it sets and uses it.
static ENV: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const ENV_VARS: [&str; 14] = [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_BEDROCK_SKIP_AUTH",
    "AWS_BEDROCK_FORCE_CACHE",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_ENDPOINT_URL_SSO",
    "PI_CACHE_RETENTION",
    "HOME",
];

/// The provider environment the tests set (process-wide, so each test holds `ENV`).
static VARS: std::sync::Mutex<Vec<(String, Option<String>)>> = std::sync::Mutex::new(Vec::new());

fn apply() {
    let vars = VARS.lock().unwrap().clone();
    pi_ai::providers::bedrock::credentials::set_provider_env(Some(vars.into_iter().collect()));
}

/// Resets the AWS environment to the recording's: fixed keys, region us-west-2, no files.
fn recording_env() {
    let mut vars: Vec<(String, Option<String>)> =
        ENV_VARS.iter().filter(|v| **v != "HOME").map(|v| ((*v).to_owned(), None)).collect();
    for (k, v) in [
        ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
        ("AWS_REGION", "us-west-2"),
        ("AWS_CONFIG_FILE", "/nonexistent"),
        ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent"),
        // The chain's last links (tests/bedrock_credentials.rs) stay out of these tests.
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ] {
        vars.retain(|(name, _)| name != k);
        vars.push((k.to_owned(), Some(v.to_owned())));
    }
    for k in
        ["AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"]
    {
        vars.push((k.to_owned(), None));
    }
    *VARS.lock().unwrap() = vars;
    apply();
}

fn set(var: &str, value: Option<&str>) {
    {
        let mut vars = VARS.lock().unwrap();
        vars.retain(|(name, _)| name != var);
        vars.push((var.to_owned(), value.map(str::to_owned)));
    }
    apply();
}

fn stream_reply(frames: Vec<Vec<u8>>) -> Reply {
    Reply {
        status: 200,
        headers: vec![("content-type".into(), "application/vnd.amazon.eventstream".into())],
        parts: vec![Part::Bytes(frames.concat())],
        stall: false,
    }
}

fn ev(kind: &str, payload: Value) -> Vec<u8> {
    encode_event(kind, payload.to_string().as_bytes())
}

fn ok_frames() -> Vec<Vec<u8>> {
    vec![
        ev("messageStart", json!({"role": "assistant"})),
        ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "ok"}})),
        ev("contentBlockStop", json!({"contentBlockIndex": 0})),
        ev("messageStop", json!({"stopReason": "end_turn"})),
        ev(
            "metadata",
            json!({"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 1}}),
        ),
    ]
}

fn hello_prefix() -> Vec<Vec<u8>> {
    vec![
        ev("messageStart", json!({"role": "assistant"})),
        ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "Hel"}})),
    ]
}

fn hello_rest() -> Vec<Vec<u8>> {
    vec![
        ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "lo"}})),
        ev("contentBlockStop", json!({"contentBlockIndex": 0})),
        ev("messageStop", json!({"stopReason": "end_turn"})),
        ev(
            "metadata",
            json!({"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}, "metrics": {"latencyMs": 1}}),
        ),
    ]
}

fn nova(base: &str) -> pi_ai::Model {
    let mut model = issue16_support::model("bedrock-converse-stream", base);
    model.id = "amazon.nova-pro-v1:0".into();
    model.name = "Nova".into();
    model
}

fn hi() -> TranscriptContext {
    normalize_context(Context { messages: vec![Message::User(UserMessage::new("hi").into())], ..Default::default() })
}

#[tokio::test]
async fn bodies_match_pi() {
    let _env = ENV.lock().await;
    recording_env();
    for name in issue16_support::scenario_names() {
        let server = MockServer::start([stream_reply(ok_frames())]).await;
        let (model, context, options) = issue16_support::scenario("bedrock-converse-stream", &name, &server.url());
        let result = BedrockConverseStream.stream(&model, context, options).result().await;
        assert_eq!(result.error_message, None, "{name}");
        let ours = &server.requests()[0];
        let pi = issue16_support::captured("bedrock-converse-stream", &name);
        assert_eq!(ours.path, pi["path"].as_str().unwrap(), "{name}: path");
        pretty_assertions::assert_eq!(
            serde_json::to_string_pretty(&ours.body).unwrap(),
            serde_json::to_string_pretty(&pi["body"]).unwrap(),
            "{name}: body differs from pi 1.6.0's"
        );
        assert_eq!(ours.header("content-type"), Some("application/json"), "{name}");
        let auth = ours.header("authorization").unwrap();
        let date = ours.header("x-amz-date").unwrap();
        assert!(
            auth.starts_with(&format!(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{}/us-west-2/bedrock/aws4_request, SignedHeaders=",
                &date[..8]
            )),
            "{auth}"
        );
        assert!(auth.contains("content-type;host;x-amz-content-sha256;x-amz-date;x-amz-user-agent"), "{auth}");
        assert_eq!(
            ours.header("x-amz-content-sha256").map(str::to_owned),
            Some(sigv4::payload_hash(ours.body.to_string().as_bytes()))
        );
        assert_eq!(result.stop_reason, StopReason::Stop);
    }
}

/// Our signer reproduces the AWS SDK's signature for each request it sent.
#[test]
fn sigv4_matches_the_aws_sdk_on_recorded_requests() {
    for name in issue16_support::scenario_names() {
        let pi = issue16_support::captured("bedrock-converse-stream", &name);
        let body = serde_json::to_vec(&pi["body"]).unwrap();
        let headers = pi["headers"].as_object().unwrap();
        assert_eq!(headers["x-amz-content-sha256"].as_str().unwrap(), sigv4::payload_hash(&body), "{name}: body bytes");
        let auth = headers["authorization"].as_str().unwrap();
        let signed_names = auth.split("SignedHeaders=").nth(1).unwrap().split(',').next().unwrap();
        let signed: Vec<(String, String)> =
            signed_names.split(';').map(|n| (n.to_owned(), headers[n].as_str().unwrap().to_owned())).collect();
        let credentials = sigv4::Credentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None);
        let path = pi["path"].as_str().unwrap();
        let input = sigv4::SigningInput {
            method: "POST",
            path,
            query: "",
            headers: &signed,
            payload: &body,
            region: "us-west-2",
            service: "bedrock",
            amz_date: headers["x-amz-date"].as_str().unwrap(),
            escape_path: true,
        };
        assert_eq!(sigv4::sign(&credentials, &input), auth, "{name}");
    }
}

#[tokio::test]
async fn a_full_answer_streams_in_small_pieces() {
    let _env = ENV.lock().await;
    recording_env();
    let frames = vec![
        ev("messageStart", json!({"role": "assistant"})),
        ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Think"}}})),
        ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "ing."}}})),
        ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig1"}}})),
        ev("contentBlockStop", json!({"contentBlockIndex": 0})),
        ev("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"text": "Let me check é."}})),
        ev("contentBlockStop", json!({"contentBlockIndex": 1})),
        ev(
            "contentBlockStart",
            json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tu_1", "name": "get_weather"}}}),
        ),
        ev("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"city\":"}}})),
        ev("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "\"Paris\"}"}}})),
        ev("contentBlockStop", json!({"contentBlockIndex": 2})),
        ev("messageStop", json!({"stopReason": "tool_use"})),
        ev(
            "metadata",
            json!({"usage": {"inputTokens": 10, "outputTokens": 20, "cacheReadInputTokens": 5, "cacheWriteInputTokens": 7,
            "cacheDetails": [{"ttl": "1h", "inputTokens": 4}, {"ttl": "5m", "inputTokens": 3}], "totalTokens": 42}}),
        ),
    ];
    let server = MockServer::start([stream_reply(frames).chunked(7)]).await;
    let model = issue16_support::model("bedrock-converse-stream", &server.url());
    let (events, message) = run(BedrockConverseStream.stream(&model, hi(), StreamOptions::default())).await;
    assert_eq!(
        events,
        [
            "start",
            "thinking_start@0",
            "thinking_delta@0 \"Think\"",
            "thinking_delta@0 \"ing.\"",
            "thinking_end@0",
            "text_start@1",
            "text_delta@1 \"Let me check é.\"",
            "text_end@1",
            "toolcall_start@2",
            "toolcall_delta@2 \"{\\\"city\\\":\"",
            "toolcall_delta@2 \"\\\"Paris\\\"}\"",
            "toolcall_end@2",
            "done:toolUse"
        ]
    );
    let json = serde_json::to_value(&message).unwrap();
    assert_eq!(json["content"][0], json!({"type": "thinking", "thinking": "Thinking.", "thinkingSignature": "sig1"}));
    assert_eq!(json["content"][2]["arguments"], json!({"city": "Paris"}));
    assert_eq!(json["usage"]["cacheWrite1h"], json!(4));
    assert_eq!(json["usage"]["totalTokens"], json!(42));
    assert!(message.usage.cost.total > 0.0);
}

#[tokio::test]
async fn redacted_reasoning_keeps_its_payload() {
    let _env = ENV.lock().await;
    recording_env();
    let frames = vec![
        ev("messageStart", json!({"role": "assistant"})),
        ev(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "AAEC"}}}),
        ),
        ev(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "AwQ="}}}),
        ),
        ev("contentBlockStop", json!({"contentBlockIndex": 0})),
        ev("messageStop", json!({"stopReason": "end_turn"})),
    ];
    let server = MockServer::start([stream_reply(frames)]).await;
    let model = nova(&server.url());
    let (events, message) = run(BedrockConverseStream.stream(&model, hi(), StreamOptions::default())).await;
    assert_eq!(
        events,
        ["start", "thinking_start@0", "thinking_delta@0 \"[Reasoning redacted]\"", "thinking_end@0", "done:stop"]
    );
    let json = serde_json::to_value(&message).unwrap();
    assert_eq!(
        json["content"][0],
        json!({"type": "thinking", "thinking": "[Reasoning redacted]", "thinkingSignature": "AAECAwQ=", "redacted": true})
    );
}

/// `(name, replies, events, error text, kept text, requests)`.
type FaultCase = (&'static str, Vec<Reply>, Vec<&'static str>, &'static str, &'static str, usize);

/// What pi 1.6.0 answered for the same bytes (recorded against the reference's AWS SDK).
#[tokio::test]
async fn fault_matrix_matches_pi() {
    let _env = ENV.lock().await;
    recording_env();
    let error = |status: u16, kind: Option<&str>, body: &str| {
        let reply = Reply::error(status, body);
        match kind {
            Some(k) => reply.header("x-amzn-errortype", k),
            None => reply,
        }
    };
    let with_prefix = |more: Vec<Vec<u8>>| stream_reply([hello_prefix(), more].concat());
    let mut bad = hello_prefix().concat();
    let at = bad.len() - 2;
    bad[at] ^= 1;
    let cases: Vec<FaultCase> = vec![
        (
            "403",
            vec![error(
                403,
                Some("UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/"),
                r#"{"message":"The security token included in the request is invalid."}"#,
            )],
            vec!["error:error"],
            "UnrecognizedClientException: The security token included in the request is invalid.",
            "",
            1,
        ),
        (
            "400",
            vec![error(
                400,
                Some("ValidationException:http://internal.amazon.com/coral/com.amazon.coral.validate/"),
                r#"{"message":"Too many strict tools (21)"}"#,
            )],
            vec!["error:error"],
            "Validation error: Too many strict tools (21)",
            "",
            1,
        ),
        (
            "500 three times",
            vec![error(500, None, r#"{"error":{"message":"Internal"}}"#); 3],
            vec!["error:error"],
            r#"Unknown: 500: {"error":{"message":"Internal"}}"#,
            "",
            3,
        ),
        (
            "bad crc",
            vec![stream_reply(vec![bad])],
            vec!["start", "error:error"],
            "The message checksum (1679009654) did not match the expected value of 1679009398",
            "",
            1,
        ),
        (
            "truncated",
            vec![with_prefix(vec![])],
            vec!["start", "text_start@0", "text_delta@0 \"Hel\"", "error:error"],
            "Bedrock stream ended without a stop reason",
            "Hel",
            1,
        ),
        (
            "exception",
            vec![with_prefix(vec![encode(
                &[
                    (":exception-type", HeaderValue::String("throttlingException".into())),
                    (":content-type", HeaderValue::String("application/json".into())),
                    (":message-type", HeaderValue::String("exception".into())),
                ],
                br#"{"message":"Slow down"}"#,
            )])],
            vec!["start", "text_start@0", "text_delta@0 \"Hel\"", "error:error"],
            "Throttling error: Slow down",
            "Hel",
            1,
        ),
        (
            "error message",
            vec![with_prefix(vec![encode(
                &[
                    (":error-code", HeaderValue::String("InternalFailure".into())),
                    (":error-message", HeaderValue::String("boom".into())),
                    (":message-type", HeaderValue::String("error".into())),
                ],
                b"{}",
            )])],
            vec!["start", "text_start@0", "text_delta@0 \"Hel\"", "error:error"],
            "boom",
            "Hel",
            1,
        ),
        (
            "guardrail",
            vec![with_prefix(vec![ev("messageStop", json!({"stopReason": "guardrail_intervened"}))])],
            vec!["start", "text_start@0", "text_delta@0 \"Hel\"", "error:error"],
            "Provider stopped with: guardrail_intervened",
            "Hel",
            1,
        ),
    ];
    for (name, replies, expected, text, kept, requests) in cases {
        let server = MockServer::start(replies).await;
        let (events, message) =
            run(BedrockConverseStream.stream(&nova(&server.url()), hi(), StreamOptions::default())).await;
        assert_eq!(events, expected, "{name}");
        assert_eq!(message.error_message.as_deref(), Some(text), "{name}");
        assert_eq!(message.text(), kept, "{name}");
        assert_eq!(server.requests().len(), requests, "{name}");
    }
    // max_tokens: done without closing the open text block, as pi.
    let server = MockServer::start([stream_reply(
        [hello_prefix(), vec![ev("messageStop", json!({"stopReason": "max_tokens"}))]].concat(),
    )])
    .await;
    let (events, message) =
        run(BedrockConverseStream.stream(&nova(&server.url()), hi(), StreamOptions::default())).await;
    assert_eq!(events, ["start", "text_start@0", "text_delta@0 \"Hel\"", "done:length"]);
    assert_eq!(message.text(), "Hel");
}

#[tokio::test]
async fn throttling_is_retried_like_the_sdk() {
    let _env = ENV.lock().await;
    recording_env();
    let replies = vec![
        Reply::error(429, r#"{"message":"Too many requests"}"#)
            .header("x-amzn-errortype", "ThrottlingException")
            .header("retry-after-ms", "10"),
        stream_reply([hello_prefix(), hello_rest()].concat()),
    ];
    let server = MockServer::start(replies).await;
    let (events, message) =
        run(BedrockConverseStream.stream(&nova(&server.url()), hi(), StreamOptions::default())).await;
    assert_eq!(events.last().map(String::as_str), Some("done:stop"));
    assert_eq!(message.text(), "Hello");
    assert_eq!(message.usage.total_tokens, 5);
    assert_eq!(server.requests().len(), 2);
    // The retry is signed again.
    assert!(server.requests()[1].header("authorization").is_some_and(|a| a.starts_with("AWS4-HMAC-SHA256 ")));
}

#[tokio::test]
async fn reset_and_cancel_mid_stream() {
    use futures::StreamExt;
    let _env = ENV.lock().await;
    recording_env();
    let reply = stream_reply(hello_prefix()).then(Part::Delay(Duration::from_millis(20))).then(Part::Reset);
    let server = MockServer::start([reply]).await;
    let (events, message) =
        run(BedrockConverseStream.stream(&nova(&server.url()), hi(), StreamOptions::default())).await;
    assert_eq!(events.last().map(String::as_str), Some("error:error"));
    assert_eq!(message.text(), "Hel");
    assert!(message.error_message.unwrap().starts_with("terminated: "));

    let server = MockServer::start([stream_reply(hello_prefix()).then(Part::Hang)]).await;
    let cancel = tokio_util::sync::CancellationToken::new();
    let options = StreamOptions { cancel: Some(cancel.clone()), ..Default::default() };
    let mut stream = BedrockConverseStream.stream(&nova(&server.url()), hi(), options);
    let mut kinds = Vec::new();
    while let Some(event) = stream.next().await {
        kinds.push(event.kind().to_owned());
        if event.kind() == "text_delta" {
            cancel.cancel();
        }
    }
    let message = stream.result().await;
    assert_eq!(kinds, ["start", "text_start", "text_delta", "error"]);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.error_message.as_deref(), Some("Request was aborted"));
    assert_eq!(message.text(), "Hel");
}

#[tokio::test]
async fn bearer_tokens_replace_signing() {
    let _env = ENV.lock().await;
    recording_env();
    set("AWS_BEARER_TOKEN_BEDROCK", Some("bedrock-key"));
    let server = MockServer::start([stream_reply(ok_frames()), stream_reply(ok_frames())]).await;
    let model = nova(&server.url());
    let result = BedrockConverseStream.stream(&model, hi(), StreamOptions::default()).result().await;
    assert_eq!(result.error_message, None);
    let options = StreamOptions { api_key: Some("explicit".into()), ..Default::default() };
    BedrockConverseStream.stream(&model, hi(), options).result().await;
    let requests = server.requests();
    assert_eq!(requests[0].header("authorization"), Some("Bearer bedrock-key"));
    assert_eq!(requests[1].header("authorization"), Some("Bearer explicit"));
    assert_eq!(requests[0].header("x-amz-date"), None);
    set("AWS_BEARER_TOKEN_BEDROCK", None);
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pi-bedrock-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn credential_of(server: &MockServer, i: usize) -> String {
    let auth = server.requests()[i].header("authorization").unwrap().to_owned();
    auth.split("Credential=").nth(1).unwrap().split('/').next().unwrap().to_owned()
}

#[tokio::test]
async fn profiles_credential_process_and_sso() {
    let _env = ENV.lock().await;
    recording_env();
    set("AWS_ACCESS_KEY_ID", None);
    set("AWS_SECRET_ACCESS_KEY", None);
    let dir = temp_dir("profiles");
    let credentials = dir.join("credentials");
    let config = dir.join("config");
    std::fs::write(&credentials, "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s1\n\n[dev]\naws_access_key_id = AKIDDEV\naws_secret_access_key = s2\naws_session_token = tok\n").unwrap();
    std::fs::write(
        &config,
        "[profile proc]\ncredential_process = printf '{\"Version\":1,\"AccessKeyId\":\"AKIDPROC\",\"SecretAccessKey\":\"s3\"}'\n\n[profile sso]\nsso_session = corp\nsso_account_id = 111122223333\nsso_role_name = Dev\nregion = eu-central-1\n\n[sso-session corp]\nsso_region = us-east-1\nsso_start_url = https://corp.awsapps.com/start\n",
    )
    .unwrap();
    set("AWS_SHARED_CREDENTIALS_FILE", Some(credentials.to_str().unwrap()));
    set("AWS_CONFIG_FILE", Some(config.to_str().unwrap()));
    set("HOME", Some(dir.to_str().unwrap()));
    let cache = dir.join(".aws/sso/cache");
    std::fs::create_dir_all(&cache).unwrap();
    let key = sigv4::hex(&pi_ai::providers::bedrock::credentials::sha1(b"corp"));
    std::fs::write(
        cache.join(format!("{key}.json")),
        r#"{"accessToken":"sso-token","expiresAt":"2999-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    let portal = MockServer::start([Reply::error(200, r#"{"roleCredentials":{"accessKeyId":"AKIDSSO","secretAccessKey":"s4","sessionToken":"ssotok","expiration":1}}"#)]).await;
    set("AWS_ENDPOINT_URL_SSO", Some(&portal.url()));

    let server = MockServer::start((0..4).map(|_| stream_reply(ok_frames()))).await;
    let model = nova(&server.url());
    for profile in [None, Some("dev"), Some("proc"), Some("sso")] {
        set("AWS_PROFILE", profile);
        let result = BedrockConverseStream.stream(&model, hi(), StreamOptions::default()).result().await;
        assert_eq!(result.error_message, None, "{profile:?}");
    }
    assert_eq!(credential_of(&server, 0), "AKIDDEFAULT");
    assert_eq!(credential_of(&server, 1), "AKIDDEV");
    assert_eq!(server.requests()[1].header("x-amz-security-token"), Some("tok"));
    assert_eq!(credential_of(&server, 2), "AKIDPROC");
    assert_eq!(credential_of(&server, 3), "AKIDSSO");
    assert_eq!(server.requests()[3].header("x-amz-security-token"), Some("ssotok"));
    let sso = &portal.requests()[0];
    assert_eq!(sso.path, "/federation/credentials?account_id=111122223333&role_name=Dev");
    assert_eq!(sso.header("x-amz-sso_bearer_token"), Some("sso-token"));

    // No credentials anywhere: the error reaches the user.
    set("AWS_PROFILE", Some("missing"));
    let result = BedrockConverseStream.stream(&model, hi(), StreamOptions::default()).result().await;
    assert_eq!(
        result.error_message.as_deref(),
        Some("Could not load credentials from any providers (profile \"missing\")")
    );
    set("AWS_PROFILE", None);
    set("HOME", None);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn regions_follow_the_reference() {
    let _env = ENV.lock().await;
    recording_env();
    use pi_ai::providers::bedrock::request::resolve_target;
    let mut model = nova("https://bedrock-runtime.us-east-1.amazonaws.com");
    // A configured region moves a standard endpoint.
    assert_eq!(
        resolve_target(&model).unwrap(),
        ("https://bedrock-runtime.us-west-2.amazonaws.com".into(), "us-west-2".into())
    );
    set("AWS_REGION", None);
    // Without one, the catalog endpoint and its region.
    assert_eq!(
        resolve_target(&model).unwrap(),
        ("https://bedrock-runtime.us-east-1.amazonaws.com".into(), "us-east-1".into())
    );
    // An ARN names its region; a custom endpoint is kept.
    model.id = "arn:aws:bedrock:eu-west-3:111122223333:application-inference-profile/abc".into();
    model.base_url = "http://127.0.0.1:9".into();
    assert_eq!(resolve_target(&model).unwrap(), ("http://127.0.0.1:9".into(), "eu-west-3".into()));
}

fn strict_tool() -> Tool {
    let mut tool = Tool::new(
        "read",
        "Read",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    );
    tool.constrained_sampling = Some(json!({"type": "json_schema", "strict": "prefer"}));
    tool
}

#[tokio::test]
async fn strict_tool_limits_fall_back_once_per_session() {
    let _env = ENV.lock().await;
    recording_env();
    let limit = Reply::error(400, r#"{"message":"Too many strict tools (21)"}"#)
        .header("x-amzn-errortype", "ValidationException");
    let server = MockServer::start([limit, stream_reply(ok_frames()), stream_reply(ok_frames())]).await;
    let mut model = nova(&server.url());
    model.compat = Some(json!({"supportsStrictMode": true}).as_object().unwrap().clone());
    let context = || {
        normalize_context(Context {
            tools: Some(vec![strict_tool()]),
            messages: vec![Message::User(UserMessage::new("hi").into())],
            ..Default::default()
        })
    };
    let options = StreamOptions {
        session_id: Some("bedrock-limits".into()),
        tool_choice: Some(ToolChoice::Auto),
        ..Default::default()
    };
    let result = BedrockConverseStream.stream(&model, context(), options.clone()).result().await;
    assert_eq!(result.error_message, None);
    let diagnostic = &result.diagnostics.as_ref().expect("a diagnostic")[0];
    assert_eq!(diagnostic["type"], "bedrock_strict_tools_fallback");
    assert_eq!(diagnostic["error"]["message"], "Too many strict tools (21)");
    let result = BedrockConverseStream.stream(&model, context(), options).result().await;
    assert_eq!(result.error_message, None);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let spec = |i: usize| requests[i].body["toolConfig"]["tools"][0]["toolSpec"].clone();
    assert_eq!(spec(0)["strict"], json!(true));
    assert_eq!(spec(1).get("strict"), None);
    assert_eq!(spec(2).get("strict"), None, "the session remembers the limit");
}

/// Cancelled before the request, and while the server has it but has not answered: aborted with
/// no `start`, in the SDK's words (pi 1.6.0's outcomes, recorded against the same server).
#[tokio::test]
async fn cancellation_before_the_answer() {
    let _env = ENV.lock().await;
    recording_env();
    let server = MockServer::start([Reply::stall()]).await;
    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let options = StreamOptions { cancel: Some(cancel), ..Default::default() };
    let (events, message) = run(BedrockConverseStream.stream(&nova(&server.url()), hi(), options)).await;
    assert_eq!(events, ["error:aborted"]);
    assert_eq!(message.error_message.as_deref(), Some("Request aborted: This operation was aborted (20)"));
    assert!(server.requests().is_empty());

    let server = std::sync::Arc::new(MockServer::start([Reply::stall()]).await);
    let cancel = tokio_util::sync::CancellationToken::new();
    let options = StreamOptions { cancel: Some(cancel.clone()), ..Default::default() };
    let stream = BedrockConverseStream.stream(&nova(&server.url()), hi(), options);
    let watcher = server.clone();
    tokio::spawn(async move {
        while watcher.requests().is_empty() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        cancel.cancel();
    });
    let (events, message) = run(stream).await;
    assert_eq!(events, ["error:aborted"]);
    assert_eq!(message.error_message.as_deref(), Some("Request aborted: This operation was aborted (20)"));
    assert_eq!(server.requests().len(), 1);
}

/// What an awaited request observer saw (pi's `onResponse` and `onProviderStreamEvent`), beside
/// the normalized events in the order they were yielded.
#[derive(Default)]
struct Observed {
    log: std::sync::Mutex<Vec<String>>,
}

impl pi_ai::options::RequestObserver for Observed {
    fn wants_response(&self) -> bool {
        true
    }

    fn response(
        &self,
        response: pi_ai::options::ProviderResponse,
        model: &pi_ai::Model,
    ) -> pi_ai::options::ObserverFuture<()> {
        let amz = response.headers.iter().find(|(k, _)| k == "x-amzn-requestid").map(|(_, v)| v.clone());
        self.log.lock().unwrap().push(format!("response {} {} {amz:?}", response.status, model.id));
        Box::pin(std::future::ready(()))
    }

    fn wants_stream_events(&self) -> bool {
        true
    }

    fn stream_event(&self, data: Value, _model: &pi_ai::Model) -> pi_ai::options::ObserverFuture<()> {
        self.log.lock().unwrap().push(format!("raw {data}"));
        Box::pin(std::future::ready(()))
    }
}

/// Bedrock reports the response (status and headers, before the body) and each decoded stream
/// item (`{"messageStart": {…}}`, as the AWS SDK yields them) to an awaited observer, each item
/// before the events normalized from it, as pi's `onResponse` / `onProviderStreamEvent`.
#[tokio::test]
async fn the_request_observer_sees_the_response_and_each_item() {
    let _env = ENV.lock().await;
    recording_env();
    let mut reply = stream_reply(ok_frames());
    reply.headers.push(("x-amzn-requestid".into(), "req-1".into()));
    let server = MockServer::start([reply]).await;
    let model = nova(&server.url());
    let observer = std::sync::Arc::new(Observed::default());
    let options = StreamOptions { request_observer: Some(observer.clone()), ..Default::default() };
    let mut stream = BedrockConverseStream.stream(&model, hi(), options);
    while let Some(event) = futures::StreamExt::next(&mut stream).await {
        observer.log.lock().unwrap().push(event.kind().to_owned());
    }
    let log = observer.log.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            "response 200 amazon.nova-pro-v1:0 Some(\"req-1\")",
            r#"raw {"messageStart":{"role":"assistant"}}"#,
            "start",
            r#"raw {"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"ok"}}}"#,
            "text_start",
            "text_delta",
            r#"raw {"contentBlockStop":{"contentBlockIndex":0}}"#,
            "text_end",
            r#"raw {"messageStop":{"stopReason":"end_turn"}}"#,
            r#"raw {"metadata":{"usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}}"#,
            "done",
        ]
    );
}
