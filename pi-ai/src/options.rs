//! Options of one request, shared by every API.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::types::{Model, ThinkingLevel};

/// Prompt-cache retention preference; providers map it to what they support.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CacheRetention {
    /// No caching markers.
    None,
    /// The provider's default (short) retention. pi's default.
    #[default]
    Short,
    /// Long retention (e.g. Anthropic's 1h), also chosen by env `PI_CACHE_RETENTION=long`.
    Long,
}

impl CacheRetention {
    /// pi's default: `Long` when `PI_CACHE_RETENTION=long`, else `Short`.
    pub fn from_env() -> Self {
        match std::env::var("PI_CACHE_RETENTION").as_deref() {
            Ok("long") => CacheRetention::Long,
            _ => CacheRetention::Short,
        }
    }
}

/// Provider-neutral tool selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
}

/// Preferred transport for providers that have more than one (pi's `Transport`; only
/// `openai-codex-responses` has a WebSocket transport).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Server-sent events over HTTP only.
    #[default]
    Sse,
    /// A WebSocket first, SSE when it cannot be used.
    WebSocket,
    /// A WebSocket reused across turns of a session, sending only the new input after the
    /// previous response (`previous_response_id`); SSE when it cannot be used.
    WebSocketCached,
    /// pi's default: as [`WebSocketCached`](Self::WebSocketCached).
    Auto,
}

impl Transport {
    /// pi's name (`sse`, `websocket`, `websocket-cached`, `auto`).
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Sse => "sse",
            Transport::WebSocket => "websocket",
            Transport::WebSocketCached => "websocket-cached",
            Transport::Auto => "auto",
        }
    }

    /// Parses pi's name.
    pub fn parse(name: &str) -> Option<Self> {
        [Transport::Sse, Transport::WebSocket, Transport::WebSocketCached, Transport::Auto]
            .into_iter()
            .find(|t| t.as_str() == name)
    }
}

/// Token budgets per thinking level, for token-budget providers (Anthropic).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThinkingBudgets {
    /// Budget for `minimal`.
    pub minimal: Option<u64>,
    /// Budget for `low`.
    pub low: Option<u64>,
    /// Budget for `medium`.
    pub medium: Option<u64>,
    /// Budget for `high`.
    pub high: Option<u64>,
}

/// Status and headers of an HTTP response, for [`StreamOptions::on_response`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProviderResponse {
    /// HTTP status.
    pub status: u16,
    /// Response headers (lower-case names).
    pub headers: Vec<(String, String)>,
}

/// What a [`PayloadHook`] returns: a future of the replacement body (`None` keeps the body).
pub type PayloadFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Option<Value>> + Send + 'static>>;

/// Hook that may replace the request body before it is sent (pi's `onPayload`, which may return a
/// promise): it sees the body and the model and returns a future of the replacement (`None` keeps
/// the body). The future runs on the request's task, awaited (never blocking a worker thread), and
/// is abandoned when the request is cancelled. [`sync_payload_hook`] wraps a plain function.
pub type PayloadHook = Arc<dyn Fn(&Value, &Model) -> PayloadFuture + Send + Sync>;

/// Whether a [`PayloadHook`] wants the body of the request about to be sent
/// ([`StreamOptions::on_payload_wanted`]).
pub type PayloadWanted = Arc<dyn Fn() -> bool + Send + Sync>;

/// A [`PayloadHook`] from a synchronous function.
///
/// ```
/// let hook = pi_ai::options::sync_payload_hook(|body, _model| {
///     let mut body = body.clone();
///     body["temperature"] = serde_json::json!(0);
///     Some(body)
/// });
/// let out = futures::executor::block_on(hook(&serde_json::json!({}), &pi_ai::Model::default()));
/// assert_eq!(out, Some(serde_json::json!({"temperature": 0})));
/// ```
pub fn sync_payload_hook(f: impl Fn(&Value, &Model) -> Option<Value> + Send + Sync + 'static) -> PayloadHook {
    Arc::new(move |body: &Value, model: &Model| {
        let out = f(body, model);
        Box::pin(std::future::ready(out))
    })
}
/// Hook called with the HTTP status and headers before the body is read (`onResponse`).
pub type ResponseHook = Arc<dyn Fn(&ProviderResponse, &Model) + Send + Sync>;
/// Hook called with the status and headers of a failed HTTP response, once the provider-level
/// retries are over (Rust only; pi's `onResponse` sees successful responses only). A caller
/// retrying at a higher level reads `Retry-After` from it ([`crate::http::server_retry_delay`]).
pub type ErrorResponseHook = Arc<dyn Fn(&ProviderResponse) + Send + Sync>;
/// Hook called with each raw provider stream event before normalisation (`onProviderStreamEvent`).
pub type ProviderEventHook = Arc<dyn Fn(&Value, &Model) + Send + Sync>;

/// A future returned by a [`RequestObserver`] hook.
pub type ObserverFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'static>>;

/// Asynchronous observers of a request, awaited by the stream (pi's `transformHeaders`,
/// `onResponse` and `onProviderStreamEvent`, which may return promises).
///
/// Each `wants_*` method is asked once per request, before the step it guards: when it answers
/// `false` the step costs nothing (no copy of the headers, nothing per stream event). Headers are
/// transformed by [`crate::registry::Models::stream`] after the provider's auth headers were
/// merged into [`StreamOptions::headers`]; the response and the raw events are observed by the
/// HTTP (SSE) providers, each raw event before the events normalized from it are yielded.
pub trait RequestObserver: Send + Sync {
    /// Whether [`RequestObserver::transform_headers`] should run for this request.
    fn wants_headers(&self) -> bool {
        false
    }

    /// Replaces the request's extra headers (`None` removes a default header).
    fn transform_headers(
        &self,
        headers: Vec<(String, Option<String>)>,
        _model: &Model,
    ) -> ObserverFuture<Vec<(String, Option<String>)>> {
        Box::pin(std::future::ready(headers))
    }

    /// Whether [`RequestObserver::response`] should run for this request.
    fn wants_response(&self) -> bool {
        false
    }

    /// Sees the status and headers of the successful response before its body is read.
    fn response(&self, _response: ProviderResponse, _model: &Model) -> ObserverFuture<()> {
        Box::pin(std::future::ready(()))
    }

    /// Whether [`RequestObserver::stream_event`] should run for this request's events.
    fn wants_stream_events(&self) -> bool {
        false
    }

    /// Sees one parsed provider stream event before it is normalized.
    fn stream_event(&self, _data: Value, _model: &Model) -> ObserverFuture<()> {
        Box::pin(std::future::ready(()))
    }
}

/// The idle timeout when [`StreamOptions::timeout`] is not set: 5 minutes (pi's
/// `httpIdleTimeoutMs` default).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// The connect timeout when [`StreamOptions::connect_timeout`] is not set: 30 seconds.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Options of one request (pi's `StreamOptions` and `SimpleStreamOptions` in one struct).
///
/// ```
/// use pi_ai::options::StreamOptions;
/// let opts = StreamOptions { max_tokens: Some(256), temperature: Some(0.0), ..Default::default() };
/// assert_eq!(opts.max_retries, 0);
/// ```
#[derive(Clone, Default)]
pub struct StreamOptions {
    /// Cancels the request; the stream then ends with an `Aborted` error event.
    pub cancel: Option<CancellationToken>,
    /// API key; wins over any resolved credential.
    pub api_key: Option<String>,
    /// Extra headers, merged case-insensitively over defaults; `None` removes a default header.
    pub headers: Vec<(String, Option<String>)>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Output token limit.
    pub max_tokens: Option<u64>,
    /// Session id for providers with session-based caching or routing.
    pub session_id: Option<String>,
    /// Idle timeout: the longest wait for the response headers and then between two reads of
    /// the body (pi's `timeoutMs`). `None`: [`DEFAULT_IDLE_TIMEOUT`] (5 minutes, pi's
    /// `httpIdleTimeoutMs` default), so no request waits forever; `Duration::MAX` disables it.
    pub timeout: Option<Duration>,
    /// The longest wait for a connection (TCP and TLS) to the provider. `None`:
    /// [`DEFAULT_CONNECT_TIMEOUT`] (30 seconds). A connection that cannot be made ends as the
    /// usual connection error, which is retried like any other.
    pub connect_timeout: Option<Duration>,
    /// Retries of 408/409/429/5xx before any byte of the answer streamed (pi's default: 0).
    pub max_retries: u32,
    /// A server-requested retry delay above this fails at once (default 60 s; `Some(ZERO)` disables the cap).
    pub max_retry_delay: Option<Duration>,
    /// Prompt-cache retention.
    pub cache_retention: Option<CacheRetention>,
    /// Extra sampling parameters merged last into OpenAI-compatible bodies.
    pub sampling_params: Option<Map<String, Value>>,
    /// Request metadata (Anthropic reads `user_id`).
    pub metadata: Option<Map<String, Value>>,
    /// Reasoning level; `None` means off (`SimpleStreamOptions.reasoning`).
    pub reasoning: Option<ThinkingLevel>,
    /// Token budgets per thinking level.
    pub thinking_budgets: Option<ThinkingBudgets>,
    /// Tool selection.
    pub tool_choice: Option<ToolChoice>,
    /// May replace the request body.
    pub on_payload: Option<PayloadHook>,
    /// Whether [`StreamOptions::on_payload`] wants this request's body (asked once per request);
    /// when it answers `false` the hook is skipped and the body is never read back as JSON. For
    /// a hook installed for handlers that may or may not exist. `None`: always wanted.
    pub on_payload_wanted: Option<PayloadWanted>,
    /// Sees the response status and headers.
    pub on_response: Option<ResponseHook>,
    /// Sees the status and headers of the failed response a request ends with.
    pub on_error_response: Option<ErrorResponseHook>,
    /// Sees each raw provider event.
    pub on_provider_stream_event: Option<ProviderEventHook>,
    /// Awaited observers of the headers, the response and the raw events (see [`RequestObserver`]).
    pub request_observer: Option<Arc<dyn RequestObserver>>,
    /// Preferred transport (pi's `transport`); `None` is SSE only, see README "Deliberate
    /// differences".
    pub transport: Option<Transport>,
    /// The longest wait for a WebSocket to open (pi's `websocketConnectTimeoutMs`, default 15 s).
    pub websocket_connect_timeout: Option<Duration>,
    /// The request's provider environment (pi's `options.env`, read by `getProviderEnvValue`
    /// before the process environment): a stored credential's `env` (Bedrock's `AWS_PROFILE`,
    /// Vertex's project, location and credentials file). Per request, so two sessions may differ.
    pub env: Option<Arc<std::collections::HashMap<String, String>>>,
}

impl StreamOptions {
    /// A variable of the request's provider environment ([`StreamOptions::env`]), else of the
    /// process; empty counts as unset.
    pub fn provider_env(&self, name: &str) -> Option<String> {
        match self.env.as_ref().and_then(|env| env.get(name)) {
            Some(value) => Some(value.clone()),
            None => std::env::var(name).ok(),
        }
        .filter(|v| !v.is_empty())
    }

    /// The payload hook to run for this request: [`StreamOptions::on_payload`] unless
    /// [`StreamOptions::on_payload_wanted`] says it does not want the body.
    pub fn active_payload_hook(&self) -> Option<&PayloadHook> {
        self.on_payload.as_ref().filter(|_| self.on_payload_wanted.as_ref().is_none_or(|wanted| wanted()))
    }
}

impl fmt::Debug for StreamOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamOptions")
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("headers", &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("session_id", &self.session_id)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_retries", &self.max_retries)
            .field("reasoning", &self.reasoning)
            .field("tool_choice", &self.tool_choice)
            .finish_non_exhaustive()
    }
}

impl StreamOptions {
    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(CancellationToken::is_cancelled)
    }

    /// The idle timeout in effect: [`timeout`](Self::timeout) or [`DEFAULT_IDLE_TIMEOUT`].
    pub fn idle_timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT)
    }

    /// The connect timeout in effect: [`connect_timeout`](Self::connect_timeout) or
    /// [`DEFAULT_CONNECT_TIMEOUT`].
    pub fn effective_connect_timeout(&self) -> Duration {
        self.connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT)
    }

    /// The cancellation token, or a fresh one that never fires.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone().unwrap_or_default()
    }
}
