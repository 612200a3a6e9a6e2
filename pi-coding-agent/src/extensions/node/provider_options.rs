//! The options a provider's JavaScript `streamSimple` receives, as pi's request passes them
//! (`reasoning`, `maxTokens`, `sessionId`, `apiKey`, the merged and transformed `headers`,
//! `cacheRetention`, `timeoutMs`, `transport`, …), and its callbacks: `onPayload`,
//! `onResponse` and `onProviderStreamEvent` are functions in the host that call back
//! (`provider.payload`, `provider.response`, `provider.streamEvent`) into the request's hooks
//! here (`before_provider_request`, `after_provider_response`, `provider_stream_event`).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use pi_ai::Model;
use pi_ai::options::{CacheRetention, ProviderResponse, StreamOptions, ToolChoice};
use serde_json::{Map, Value, json};

use crate::extensions::RegisteredProvider;
use crate::extensions::runtime::lock;
use crate::extensions::subprocess::protocol::{ERROR_INVALID_PARAMS, RpcError};

/// The host's call running the request's payload hook.
const METHOD_PAYLOAD: &str = "provider.payload";
/// The host's call reporting the provider's HTTP response.
const METHOD_RESPONSE: &str = "provider.response";
/// The host's call reporting one raw provider event.
const METHOD_STREAM_EVENT: &str = "provider.streamEvent";

/// The model and options of a running stream, for its callbacks.
type Requests = Mutex<HashMap<u64, (Model, StreamOptions)>>;

fn requests() -> &'static Requests {
    static REQUESTS: OnceLock<Requests> = OnceLock::new();
    REQUESTS.get_or_init(Default::default)
}

/// Keeps the stream's options for its callbacks until [`forget`].
pub(crate) fn remember(id: u64, model: &Model, options: &StreamOptions) {
    lock(requests()).insert(id, (model.clone(), options.clone()));
}

/// Drops the stream's options.
pub(crate) fn forget(id: u64) {
    lock(requests()).remove(&id);
}

/// Whether `method` is one of the callbacks (they await the hooks, so they do not run in order).
pub(crate) fn handles(method: &str) -> bool {
    [METHOD_PAYLOAD, METHOD_RESPONSE, METHOD_STREAM_EVENT].contains(&method)
}

/// Runs one callback of a running stream; `None` for any other method.
pub(crate) async fn host_call(method: &str, params: &Value) -> Option<Result<Value, RpcError>> {
    if !handles(method) {
        return None;
    }
    let id = params.get("streamId").and_then(Value::as_u64).unwrap_or_default();
    let Some((model, options)) = lock(requests()).get(&id).cloned() else {
        return Some(Err(RpcError {
            code: ERROR_INVALID_PARAMS,
            message: format!("No running provider stream {id}"),
            data: None,
        }));
    };
    Some(Ok(match method {
        METHOD_PAYLOAD => {
            let payload = params.get("payload").cloned().unwrap_or(Value::Null);
            match options.active_payload_hook() {
                Some(hook) => hook(&payload, &model).await.unwrap_or(payload),
                None => payload,
            }
        }
        METHOD_RESPONSE => {
            let response = response_of(params);
            if let Some(hook) = &options.on_response {
                hook(&response, &model);
            }
            if let Some(observer) = options.request_observer.as_ref().filter(|o| o.wants_response()) {
                observer.response(response, &model).await;
            }
            Value::Null
        }
        _ => {
            let data = params.get("data").cloned().unwrap_or(Value::Null);
            if let Some(hook) = &options.on_provider_stream_event {
                hook(&data, &model);
            }
            if let Some(observer) = options.request_observer.as_ref().filter(|o| o.wants_stream_events()) {
                observer.stream_event(data, &model).await;
            }
            Value::Null
        }
    }))
}

/// pi's `{status, headers}` (headers as an object, or pairs).
fn response_of(params: &Value) -> ProviderResponse {
    let status = params.get("status").and_then(Value::as_u64).unwrap_or_default() as u16;
    let headers = match params.get("headers") {
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string())))
            .collect(),
        _ => Vec::new(),
    };
    ProviderResponse { status, headers }
}

/// The provider's configured `headers` (values resolved as in models.json), then the request's
/// own (which win), as pi's `prepareRequest` merges them before `transformHeaders`.
pub(crate) fn merged_headers(provider: &RegisteredProvider, options: &StreamOptions) -> Vec<(String, Option<String>)> {
    let mut headers: Vec<(String, Option<String>)> = Vec::new();
    if let Some(configured) = provider.config.get("headers").and_then(Value::as_object) {
        for (name, value) in configured {
            if let Some(v) = value.as_str().and_then(pi_ai::models::resolve_config_value) {
                headers.push((name.clone(), Some(v)));
            }
        }
    }
    for (name, value) in &options.headers {
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        headers.push((name.clone(), value.clone()));
    }
    headers
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The options object as the host builds `streamSimple`'s (pi's names; unset ones absent), with
/// `wants` telling the host which callbacks have anyone listening.
pub(crate) fn options_json(
    model: &Model,
    options: &StreamOptions,
    api_key: Option<String>,
    headers: &[(String, Option<String>)],
) -> Value {
    let mut o = Map::new();
    let mut put = |k: &str, v: Value| {
        if !v.is_null() {
            o.insert(k.to_owned(), v);
        }
    };
    put("model", json!(model));
    put("reasoning", json!(options.reasoning));
    put("maxTokens", json!(options.max_tokens));
    put("temperature", json!(options.temperature));
    put("sessionId", json!(options.session_id));
    put("apiKey", json!(api_key));
    let headers: Map<String, Value> =
        headers.iter().filter_map(|(k, v)| Some((k.clone(), Value::String(v.clone()?)))).collect();
    put("headers", Value::Object(headers));
    put("timeoutMs", json!(millis(options.idle_timeout())));
    if options.max_retries > 0 {
        put("maxRetries", json!(options.max_retries));
    }
    put("maxRetryDelayMs", json!(options.max_retry_delay.map(millis)));
    put("websocketConnectTimeoutMs", json!(options.websocket_connect_timeout.map(millis)));
    put("transport", json!(options.transport.map(|t| t.as_str())));
    put(
        "cacheRetention",
        json!(options.cache_retention.map(|c| match c {
            CacheRetention::None => "none",
            CacheRetention::Short => "short",
            CacheRetention::Long => "long",
        })),
    );
    put(
        "toolChoice",
        json!(options.tool_choice.map(|c| match c {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
        })),
    );
    put("metadata", json!(options.metadata));
    if let Some(b) = options.thinking_budgets {
        put("thinkingBudgets", json!({"minimal": b.minimal, "low": b.low, "medium": b.medium, "high": b.high}));
    }
    put("env", json!(options.env.as_deref()));
    let observer = options.request_observer.as_ref();
    put(
        "wants",
        json!({
            "payload": options.active_payload_hook().is_some(),
            "response": options.on_response.is_some() || observer.is_some_and(|o| o.wants_response()),
            "streamEvents": options.on_provider_stream_event.is_some()
                || observer.is_some_and(|o| o.wants_stream_events()),
        }),
    );
    Value::Object(o)
}

/// The headers after the request's observer (`before_provider_headers`), when it wants them.
pub(crate) async fn transformed_headers(
    headers: Vec<(String, Option<String>)>,
    model: &Model,
    options: &StreamOptions,
) -> Vec<(String, Option<String>)> {
    match options.request_observer.clone().filter(|o| o.wants_headers()) {
        Some(observer) => observer.transform_headers(headers, model).await,
        None => headers,
    }
}
