//! `bedrock-converse-stream`: Amazon Bedrock's Converse API
//! (`POST {endpoint}/model/{modelId}/converse-stream`), the request the reference's AWS SDK sends.
//!
//! - Request: [`build_request_ref`]: system messages fold into the leading prompt (`system`, with a
//!   `cachePoint` for Claude models that cache), consecutive tool results form one user message
//!   (a Claude error result's images move after all results), the last user message gets a
//!   `cachePoint`, thinking goes to `additionalModelRequestFields` (adaptive or budget for Claude,
//!   effort for GPT models), tools declaring JSON-schema constrained sampling go strict when
//!   `compat.supportsStrictMode` allows.
//! - Auth: [`credentials`] (bearer token, environment keys, shared profiles, `credential_process`,
//!   SSO cache), signed by [`sigv4`]; region and endpoint by [`request::resolve_target`].
//! - Response: the binary [`eventstream`] framing, decoded by us, events mapped by [`BedrockStream`].
//! - Retries as the AWS SDK's default: three attempts for throttling, 5xx and connection errors.
//!   A strict-tool-limit rejection is retried once with `"prefer"` tools non-strict, and the session
//!   remembers it ([`constrained::strict_limits`](crate::providers::constrained::strict_limits)).
//!
//! Not ported: HTTP proxies, `AWS_BEDROCK_FORCE_HTTP1` (we always speak HTTP/1.1 to http:// and let
//! TLS negotiate otherwise), ECS/IMDS/web-identity credentials, request metadata.

pub mod assume_role;
pub mod credentials;
pub mod eventstream;
pub mod models;
pub mod remote;
pub mod request;
pub mod sigv4;
mod stream;
mod wire;

use std::time::Duration;

use serde_json::Value;

pub use stream::{BedrockStream, error_prefix, map_stop_reason};

use crate::http::{HeaderMap, HttpError, HttpRequest, ProviderOutput, ResponseBody, StreamContext};
use crate::options::StreamOptions;
use crate::provider::ApiProvider;
use crate::providers::constrained::strict_limits;
use crate::stream::AssistantMessageEventStream;
use crate::transcript::TranscriptContext;
use crate::types::{Model, now_ms};
use credentials::Auth;

/// The API id.
pub const API: &str = "bedrock-converse-stream";

/// The AWS SDK's default attempts per request.
const MAX_ATTEMPTS: u32 = 3;

/// The `bedrock-converse-stream` provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct BedrockConverseStream;

impl ApiProvider for BedrockConverseStream {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
        run(model.clone(), context, options)
    }
}

/// The unsigned request: URL (with the region's endpoint), headers and body, and whether a
/// `"prefer"` tool was sent strict. `no_prefer` sends `"prefer"` tools non-strict.
pub fn build_request_ref(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    no_prefer: bool,
) -> Result<(HttpRequest, String, bool), String> {
    let (endpoint, region) = request::resolve_target(model)?;
    let head = crate::http::body::collapsed_head(context.messages(), false);
    let view = crate::http::body::resolved_view(context.messages(), &head, false);
    let handed_off = request::handoff(model, &view);
    let (fields, messages, has_preferred) =
        request::build_parts(model, context.messages(), &view, &handed_off, options, no_prefer)?;
    let model_id = model.id.clone();
    let hint = crate::http::body::body_size_hint(&view);
    let body = crate::http::body::encode_body(fields, "messages", &messages, hint)?;
    let url = format!("{endpoint}/model/{}/converse-stream", sigv4::uri_encode(&model_id));
    let mut headers = HeaderMap::new();
    headers.set("Content-Type", "application/json");
    let ua = format!("pi/{}", crate::http::PI_VERSION);
    headers.set("User-Agent", crate::http::user_agent());
    headers.set("X-Amz-User-Agent", ua);
    // Caller headers are signed; SigV4 and auth headers stay ours.
    let custom = model
        .headers
        .iter()
        .flat_map(|h| h.iter().map(|(k, v)| (k.clone(), v.as_str().map(str::to_owned))))
        .chain(options.headers.iter().cloned())
        .filter(|(k, _)| {
            let k = k.to_ascii_lowercase();
            !k.starts_with("x-amz-") && k != "authorization" && k != "host"
        });
    headers.merge(custom);
    Ok((HttpRequest { url, headers, body: body.into(), source: None }, region, has_preferred))
}

/// Awaits the payload hook on `request`'s body as pi's hook sees it (`modelId` first, the
/// `ConverseStreamCommand` input); a `modelId` the hook changes moves the request's URL.
pub async fn apply_payload_hook(
    request: &mut HttpRequest,
    model: &Model,
    options: &StreamOptions,
) -> Result<(), String> {
    let Some(hook) = options.active_payload_hook() else { return Ok(()) };
    let fields: serde_json::Map<String, Value> =
        serde_json::from_slice(&request.body).map_err(|e| format!("Could not serialize the request: {e}"))?;
    let mut input = serde_json::Map::new();
    input.insert("modelId".into(), Value::String(model.id.clone()));
    input.extend(fields);
    let mut value = Value::Object(input);
    if let Some(replaced) = hook(&value, model).await {
        value = replaced;
    }
    let mut model_id = model.id.clone();
    if let Some(o) = value.as_object_mut()
        && let Some(Value::String(id)) = o.remove("modelId")
    {
        model_id = id;
    }
    if model_id != model.id {
        let (endpoint, _) = request::resolve_target(model)?;
        request.url = format!("{endpoint}/model/{}/converse-stream", sigv4::uri_encode(&model_id));
    }
    request.body = serde_json::to_vec(&value).map_err(|e| format!("Could not serialize the request: {e}"))?.into();
    Ok(())
}

/// Signs `request` (or sets the bearer token) for one attempt.
pub fn authorize(request: &mut HttpRequest, region: &str, auth: &Auth, amz_date: &str) {
    match auth {
        Auth::Bearer(token) => request.headers.set("Authorization", format!("Bearer {token}")),
        Auth::SigV4(credentials) => {
            let rest = request.url.split_once("://").map_or(request.url.as_str(), |(_, r)| r);
            let (host, path_query) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
            let host = host.strip_suffix(":443").filter(|_| request.url.starts_with("https:")).unwrap_or(host);
            request.headers.set("X-Amz-Date", amz_date);
            request.headers.set("X-Amz-Content-Sha256", sigv4::payload_hash(&request.body));
            if let Some(token) = &credentials.session_token {
                request.headers.set("X-Amz-Security-Token", token.clone());
            }
            let mut signed: Vec<(String, String)> = request
                .headers
                .iter()
                .filter(|(k, _)| !k.eq_ignore_ascii_case("user-agent") && !k.eq_ignore_ascii_case("authorization"))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            signed.push(("host".to_owned(), host.to_owned()));
            signed.push(("content-length".to_owned(), request.body.len().to_string()));
            let input = sigv4::SigningInput {
                method: "POST",
                path,
                query,
                headers: &signed,
                payload: &request.body,
                region,
                service: "bedrock",
                amz_date,
                escape_path: true,
            };
            let authorization = sigv4::sign(credentials, &input);
            request.headers.set("Authorization", authorization);
        }
    }
}

/// An HTTP failure as the reference words it (the SDK names the exception from
/// `x-amzn-errortype` and reads `message`; pi prefixes the known names).
pub fn format_status_error(status: u16, headers: &[(String, String)], body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let header_name = headers
        .iter()
        .find(|(k, _)| k == "x-amzn-errortype")
        .map(|(_, v)| v.split(':').next().unwrap_or_default().to_owned());
    let body_name = parsed.as_ref().and_then(|p| {
        p.get("__type")
            .or_else(|| p.get("code"))
            .and_then(Value::as_str)
            .map(|t| t.rsplit('#').next().unwrap_or(t).to_owned())
    });
    let message = parsed
        .as_ref()
        .and_then(|p| p.get("message").or_else(|| p.get("Message")).or_else(|| p.get("errorMessage")))
        .and_then(Value::as_str);
    let text = match (header_name.or(body_name), message) {
        (Some(name), Some(message)) => format!("{}: {message}", error_prefix(&name)),
        (Some(name), None) => format!("{}: {status}: {body}", error_prefix(&name)),
        (None, _) => format!("Unknown: {status}: {body}"),
    };
    if text.to_lowercase().contains("data retention mode") {
        return format!(
            "{text} See https://docs.aws.amazon.com/bedrock/latest/userguide/data-retention.html for supported data retention modes."
        );
    }
    text
}

fn is_retryable(status: u16) -> bool {
    status == 429 || status >= 500
}

fn retry_delay(headers: &[(String, String)], attempt: u32, cap: Option<Duration>) -> Result<Duration, String> {
    let header = |n: &str| headers.iter().find(|(k, _)| k == n).and_then(|(_, v)| v.trim().parse::<f64>().ok());
    let server = header("retry-after-ms").or_else(|| header("retry-after").map(|s| s * 1000.0));
    if let Some(ms) = server.filter(|m| m.is_finite() && *m >= 0.0) {
        let max = cap.unwrap_or(Duration::from_secs(60));
        if !max.is_zero() && ms > max.as_secs_f64() * 1000.0 {
            return Err(format!(
                "Server requested {}s retry delay (max: {}s).",
                (ms / 1000.0).ceil(),
                max.as_secs_f64().ceil()
            ));
        }
        return Ok(Duration::from_secs_f64(ms / 1000.0));
    }
    // The SDK's full-jitter backoff: up to 100 ms · 2^attempt, at most 20 s.
    let nanos = u64::from(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().subsec_nanos(),
    );
    let ceiling = (100u64 << attempt.min(8)).min(20_000);
    Ok(Duration::from_millis(nanos % (ceiling + 1)))
}

/// What one attempt ended with.
enum Attempt {
    Ok(u16, Vec<(String, String)>, ResponseBody),
    Status(u16, Vec<(String, String)>, String),
    Failed(HttpError),
}

async fn attempt(request: &HttpRequest, options: &StreamOptions) -> Attempt {
    let cancel = options.cancel_token();
    let client = crate::http::client_with_connect_timeout(options.effective_connect_timeout());
    let mut builder = client.post(&request.url).body(request.body.clone());
    for (name, value) in request.headers.iter() {
        builder = builder.header(name, value);
    }
    let idle = options.idle_timeout();
    let sent = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Attempt::Failed(HttpError::Aborted),
        r = tokio::time::timeout(idle, builder.send()) => r,
    };
    let response = match sent {
        Err(_) => return Attempt::Failed(HttpError::Timeout),
        Ok(Err(e)) if e.is_timeout() => return Attempt::Failed(HttpError::Timeout),
        Ok(Err(e)) => return Attempt::Failed(HttpError::Connection { cause: deepest(&e) }),
        Ok(Ok(r)) => r,
    };
    let status = response.status().as_u16();
    let headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_ascii_lowercase(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let mut body = ResponseBody::from_stream(response.bytes_stream(), Some(idle), cancel);
    if (200..300).contains(&status) {
        return Attempt::Ok(status, headers, body);
    }
    let mut bytes = Vec::new();
    loop {
        match body.next_chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(HttpError::Aborted) => return Attempt::Failed(HttpError::Aborted),
            Err(_) => break,
        }
    }
    Attempt::Status(status, headers, String::from_utf8_lossy(&bytes).into_owned())
}

fn deepest(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

fn http_error_text(error: &HttpError) -> String {
    match error {
        HttpError::Connection { cause } => format!("Connection error.: {cause}"),
        HttpError::Body { cause } => format!("terminated: {cause}"),
        HttpError::Timeout | HttpError::BodyTimeout => "Request timed out.".to_owned(),
        HttpError::Aborted => "Request was aborted".to_owned(),
        other => other.to_string(),
    }
}

/// Sends with the SDK's retries; `Err((text, status))` is the failure.
async fn send(
    request: &mut HttpRequest,
    region: &str,
    auth: &Auth,
    options: &StreamOptions,
) -> Result<(u16, Vec<(String, String)>, ResponseBody), (String, Option<u16>)> {
    let cancel = options.cancel_token();
    let mut tries = 0;
    loop {
        authorize(request, region, auth, &sigv4::amz_date_now());
        tries += 1;
        let (retryable, text, status, headers) = match attempt(request, options).await {
            Attempt::Ok(status, headers, body) => return Ok((status, headers, body)),
            Attempt::Status(status, headers, body) => {
                (is_retryable(status), format_status_error(status, &headers, &body), Some(status), headers)
            }
            Attempt::Failed(HttpError::Aborted) => return Err(("Request was aborted".to_owned(), None)),
            Attempt::Failed(error) => (true, http_error_text(&error), None, Vec::new()),
        };
        if !retryable || tries >= MAX_ATTEMPTS.max(options.max_retries + 1) {
            return Err((text, status));
        }
        let delay =
            retry_delay(&headers, tries, options.max_retry_delay).map_err(|why| (format!("{why} {text}"), status))?;
        tokio::select! {
            _ = cancel.cancelled() => return Err(("Request was aborted".to_owned(), None)),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

/// The text of a request cancelled before its answer started (the SDK's abort error as pi shows it;
/// a cancellation while the answer streams reads "Request was aborted").
const ABORTED_BEFORE_ANSWER: &str = "Request aborted: This operation was aborted (20)";

fn run(model: Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
    let mut out = ProviderOutput::new(&model);
    let request_env = options.env.clone();
    let mut options = options;
    // pi's `onProviderStreamEvent` and `onResponse` are awaited: so are the request's observer's.
    let observed = crate::http::ObservedEvents::install(&mut options);
    let response_observer = options.request_observer.clone().filter(|o| o.wants_response());
    let ctx = StreamContext { model, options };
    AssistantMessageEventStream::new(credentials::with_request_env(
        request_env,
        async_stream::stream! {
            out.message_mut().timestamp = now_ms();
            let fail = |out: &mut ProviderOutput, text: String, aborted: bool| out.fail(text, aborted);
            if ctx.aborted() {
                fail(&mut out, ABORTED_BEFORE_ANSWER.to_owned(), true);
                for e in out.take_events() { yield e; }
                return;
            }
            let auth = match credentials::resolve(ctx.options.api_key.as_deref()).await {
                Ok(auth) => auth,
                Err(text) => {
                    fail(&mut out, text, false);
                    for e in out.take_events() { yield e; }
                    return;
                }
            };
            let session = ctx.options.session_id.clone();
            let mut no_prefer = strict_limits::has_exceeded(session.as_deref());
            let (status, headers, mut body) = loop {
                let (mut request, region, has_preferred) = match build_request_ref(&ctx.model, &context, &ctx.options, no_prefer) {
                    Ok(built) => built,
                    Err(text) => {
                        fail(&mut out, text, false);
                        for e in out.take_events() { yield e; }
                        return;
                    }
                };
                if let Err(text) = apply_payload_hook(&mut request, &ctx.model, &ctx.options).await {
                    fail(&mut out, text, false);
                    for e in out.take_events() { yield e; }
                    return;
                }
                match send(&mut request, &region, &auth, &ctx.options).await {
                    Ok(response) => break response,
                    Err((text, Some(400))) if has_preferred && !no_prefer && text.starts_with("Validation error: ")
                        && strict_limits::is_limit_error(&text) => {
                        no_prefer = true;
                        strict_limits::mark_exceeded(session.as_deref());
                        let message = text.strip_prefix("Validation error: ").unwrap_or(&text).to_owned();
                        let diagnostic = serde_json::json!({"type": "bedrock_strict_tools_fallback", "timestamp": now_ms(),
                            "error": {"message": message}, "details": {"reason": "strict_tool_limits_exceeded"}});
                        out.message_mut().diagnostics.get_or_insert_with(Vec::new).push(diagnostic);
                    }
                    Err((text, _)) => {
                        let aborted = ctx.aborted();
                        fail(&mut out, if aborted { ABORTED_BEFORE_ANSWER.to_owned() } else { text }, aborted);
                        for e in out.take_events() { yield e; }
                        return;
                    }
                }
            };
            let response = crate::options::ProviderResponse { status, headers };
            if let Some(hook) = &ctx.options.on_response {
                hook(&response, &ctx.model);
            }
            if let Some(observer) = &response_observer {
                observer.response(response, &ctx.model).await;
            }
            let mut handler = BedrockStream::new();
            let mut decoder = eventstream::Decoder::default();
            let mut failure: Option<String> = None;
            let mut started = false;
            'read: loop {
                match body.next_chunk().await {
                    Ok(Some(chunk)) => decoder.push(&chunk),
                    Ok(None) => break,
                    Err(HttpError::Aborted) => break,
                    Err(error) => {
                        failure = Some(http_error_text(&error));
                        break;
                    }
                }
                loop {
                    match decoder.next_message() {
                        Ok(Some(frame)) => {
                            if !started && frame.header(":event-type") == Some("messageStart") {
                                started = true;
                                out.start();
                            }
                            let handled = handler.on_frame(&frame, &ctx, &mut out);
                            if let Some(observed) = &observed {
                                observed.deliver(&ctx.model).await;
                                for e in out.take_events() { yield e; }
                            }
                            if let Err(text) = handled {
                                failure = Some(text);
                                break 'read;
                            }
                        }
                        Ok(None) => break,
                        Err(error) => {
                            failure = Some(error.to_string());
                            break 'read;
                        }
                    }
                }
                for e in out.take_events() { yield e; }
            }
            let result = match failure {
                Some(text) => Err(text),
                None if ctx.aborted() => Err("Request was aborted".to_owned()),
                None => handler.on_end(&mut out),
            };
            match result {
                Ok(()) => out.done(),
                Err(text) => {
                    handler.flush(&mut out);
                    crate::http::shared::settle_open_tool_calls(&mut out);
                    let aborted = ctx.aborted();
                    fail(&mut out, if aborted { "Request was aborted".to_owned() } else { text }, aborted);
                }
            }
            for e in out.take_events() { yield e; }
        },
    ))
}
