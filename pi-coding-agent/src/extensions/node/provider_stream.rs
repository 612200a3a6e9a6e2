//! Providers whose `streamSimple` is JavaScript (`pi.registerProvider(name, { …, streamSimple })`):
//! a request to one of their models asks the host (`provider.stream`) to run the function; the
//! host sends each event of the returned stream back (`provider.event`, in order, before its
//! answer), and pi-rs turns them into the request's [`AssistantMessageEventStream`]. Aborting the
//! request tells the host (`provider.abort`, the function's `signal`); a function that throws, or
//! a host that dies, ends the stream with an error event. Its options and callbacks are
//! `provider_options`'.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use pi_ai::options::StreamOptions;
use pi_ai::transcript::TranscriptContext;
use pi_ai::{AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, Model, StopReason};
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::request_auth;
use super::{NodeHost, provider_options};
use crate::extensions::RegisteredProvider;
use crate::extensions::runtime::{Runtime, lock};
use crate::extensions::subprocess::protocol::RpcError;

/// The host method that runs a provider's `streamSimple`.
const METHOD_STREAM: &str = "provider.stream";
/// The host's notification carrying one event.
const METHOD_EVENT: &str = "provider.event";
/// Tells the host the request was aborted.
const METHOD_ABORT: &str = "provider.abort";
/// A stream has no deadline of its own (pi's has none); a day bounds a host that never answers.
const STREAM_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

type Streams = Mutex<HashMap<u64, UnboundedSender<AssistantMessageEvent>>>;

fn streams() -> &'static Streams {
    static STREAMS: OnceLock<Streams> = OnceLock::new();
    STREAMS.get_or_init(Default::default)
}

static NEXT_STREAM: AtomicU64 = AtomicU64::new(1);

/// Whether `method` is the host's event notification (it runs in arrival order).
pub(crate) fn handles(method: &str) -> bool {
    method == METHOD_EVENT
}

/// Delivers one event of a running stream; `None` for any other method.
pub(crate) fn host_call(method: &str, params: &Value) -> Option<Result<Value, RpcError>> {
    if !handles(method) {
        return None;
    }
    let id = params.get("streamId").and_then(Value::as_u64).unwrap_or_default();
    if let Some(event) = params.get("event").and_then(parse_event)
        && let Some(tx) = lock(streams()).get(&id)
    {
        let _ = tx.send(event);
    }
    Some(Ok(Value::Null))
}

/// pi-ai's event as the host sends it (`block`: the partial's block at `contentIndex`).
fn parse_event(v: &Value) -> Option<AssistantMessageEvent> {
    use AssistantMessageEvent as E;
    fn from<T: serde::de::DeserializeOwned>(v: Option<&Value>) -> Option<T> {
        serde_json::from_value(v?.clone()).ok()
    }
    let content_index = v.get("contentIndex").and_then(Value::as_u64).unwrap_or(0) as usize;
    let block = v.get("block");
    let delta = || v.get("delta").and_then(Value::as_str).map(str::to_owned);
    Some(match v.get("type")?.as_str()? {
        "start" => E::Start { partial: from(v.get("partial"))? },
        "text_start" => E::TextStart { content_index, block: from(block)? },
        "text_delta" => E::TextDelta { content_index, delta: delta()? },
        "text_end" => E::TextEnd { content_index, block: from(block)? },
        "thinking_start" => E::ThinkingStart { content_index, block: from(block)? },
        "thinking_delta" => E::ThinkingDelta { content_index, delta: delta()? },
        "thinking_end" => E::ThinkingEnd { content_index, block: from(block)? },
        "toolcall_start" => E::ToolCallStart { content_index, tool_call: from(block)? },
        "toolcall_delta" => E::ToolCallDelta { content_index, delta: delta()? },
        "toolcall_end" => E::ToolCallEnd { content_index, tool_call: from(v.get("toolCall").or(block))? },
        "done" => E::Done { reason: from(v.get("reason"))?, message: from(v.get("message"))? },
        "error" => E::Error { reason: from(v.get("reason"))?, error: from(v.get("error"))? },
        _ => return None,
    })
}

fn error_event(model: &Model, error: String, aborted: bool) -> AssistantMessageEvent {
    let reason = if aborted { StopReason::Aborted } else { StopReason::Error };
    let error = AssistantMessage {
        api: model.api.clone(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        stop_reason: reason,
        error_message: Some(error),
        timestamp: pi_ai::now_ms(),
        ..Default::default()
    };
    AssistantMessageEvent::Error { reason, error: Box::new(error) }
}

async fn run(
    runtime: Arc<Runtime>,
    params: Value,
    cancel: Option<tokio_util::sync::CancellationToken>,
    id: u64,
) -> Result<(), String> {
    let host = lock(&runtime.node_host).upgrade().and_then(|h| h.downcast::<NodeHost>().ok());
    let host = host.ok_or_else(|| "The JavaScript extension host is not running".to_owned())?;
    let conn = host.connection().await?;
    let watcher = cancel.map(|cancel| {
        let conn = conn.clone();
        tokio::spawn(async move {
            cancel.cancelled().await;
            conn.notify(METHOD_ABORT, json!({"streamId": id}));
        })
    });
    let outcome = conn.call(METHOD_STREAM, METHOD_STREAM, params, STREAM_TIMEOUT).await.map(drop);
    if let Some(watcher) = watcher {
        watcher.abort();
    }
    outcome
}

impl crate::extensions::ExtensionRunner {
    /// The response of `provider`'s JavaScript `streamSimple` for `model`.
    pub fn js_provider_stream(
        &self,
        provider: &RegisteredProvider,
        model: &Model,
        transcript: TranscriptContext,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        js_stream(self.runtime.clone(), provider, model, transcript, options, true)
    }
}

/// Whether `provider`'s requests run in the JavaScript host.
pub(crate) fn is_js_provider(provider: &RegisteredProvider) -> bool {
    provider.config.get("streamSimple").and_then(Value::as_bool) == Some(true)
}

/// The response of `provider`'s JavaScript functions for `model`: `streamSimple`, or with
/// `simple == false` (pi's `modelRegistry.stream`) a native provider's API-specific `stream`
/// when it has one (a provider registered by name uses its `streamSimple` for both, as pi).
pub(crate) fn js_stream(
    runtime: Arc<Runtime>,
    provider: &RegisteredProvider,
    model: &Model,
    transcript: TranscriptContext,
    options: StreamOptions,
    simple: bool,
) -> AssistantMessageEventStream {
    {
        let (tx, mut rx) = unbounded_channel();
        let id = NEXT_STREAM.fetch_add(1, Ordering::Relaxed);
        lock(streams()).insert(id, tx);
        provider_options::remember(id, model, &options);
        let headers = provider_options::merged_headers(provider, &options);
        let registered = provider.clone();
        let mut params = json!({
            "extensionPath": provider.extension_path,
            "provider": provider.name,
            "streamId": id,
            "model": model,
            "context": transcript,
            "simple": simple,
        });
        let cancel = options.cancel.clone();
        let model = model.clone();
        tokio::spawn(async move {
            let aborted = cancel.clone();
            // The request's own key, else the provider's (its OAuth credential through `getApiKey`).
            let api_key = match options.api_key.clone() {
                Some(key) => Ok(Some(key)),
                None => request_auth::resolve_registered(&runtime, &registered).await.map(|a| a.api_key),
            };
            let outcome = match api_key {
                Ok(api_key) => {
                    let headers = provider_options::transformed_headers(headers, &model, &options).await;
                    params["options"] = provider_options::options_json(&model, &options, api_key, &headers);
                    run(runtime, params, cancel, id).await
                }
                Err(error) => Err(error),
            };
            provider_options::forget(id);
            let tx = lock(streams()).remove(&id);
            if let (Err(error), Some(tx)) = (outcome, tx) {
                let aborted = aborted.is_some_and(|c| c.is_cancelled());
                let _ = tx.send(error_event(&model, error, aborted));
            }
        });
        let mut finished = false;
        AssistantMessageEventStream::new(futures::stream::poll_fn(move |cx| {
            if finished {
                return std::task::Poll::Ready(None);
            }
            let polled = rx.poll_recv(cx);
            if let std::task::Poll::Ready(Some(event)) = &polled {
                finished = event.is_terminal();
            }
            polled
        }))
    }
}
