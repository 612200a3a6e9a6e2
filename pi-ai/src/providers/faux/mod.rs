//! The faux provider: scripted responses streamed like a real model, for tests and offline demos
//! (pi's `providers/faux.js`).
//!
//! ```
//! use futures::StreamExt;
//! use pi_ai::providers::faux::{FauxOptions, FauxProvider, TokenSize, faux_assistant_message, faux_text};
//! use pi_ai::{ApiProvider, Context, Message, UserMessage};
//! use pi_ai::transcript::normalize_context;
//!
//! # futures::executor::block_on(async {
//! let faux = FauxProvider::new(FauxOptions { token_size: TokenSize { min: 1, max: 1 }, ..Default::default() });
//! faux.set_responses(vec![faux_assistant_message(vec![faux_text("Hello world")], Default::default()).into()]);
//! let context = normalize_context(Context { messages: vec![Message::User(UserMessage::new("hi").into())], ..Default::default() });
//! let mut stream = faux.stream(&faux.model(), context, Default::default());
//! let mut kinds = Vec::new();
//! while let Some(event) = stream.next().await {
//!     kinds.push(event.kind());
//! }
//! assert_eq!(kinds, ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]);
//! assert_eq!(stream.partial().text(), "Hello world");
//! # });
//! ```

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::options::{CacheRetention, ProviderResponse, StreamOptions};
use crate::provider::ApiProvider;
use crate::stream::{AssistantMessageEvent as Ev, AssistantMessageEventStream};
use crate::tool_args::ToolCallArgumentsStream;
use crate::transcript::{TranscriptContext, system_message_text};
use crate::types::{
    AssistantBlock, AssistantMessage, Content, Message, Model, ModelCost, StopReason, TextContent, ThinkingContent,
    ToolCall, Usage, UserBlock, now_ms,
};

/// A text block.
pub fn faux_text(text: impl Into<String>) -> AssistantBlock {
    AssistantBlock::Text(TextContent::new(text))
}

/// A thinking block.
pub fn faux_thinking(thinking: impl Into<String>) -> AssistantBlock {
    AssistantBlock::Thinking(ThinkingContent::new(thinking))
}

/// A tool call; `id` defaults to `"tool:<ms>:<random>"`.
pub fn faux_tool_call(name: impl Into<String>, arguments: Value, id: Option<&str>) -> AssistantBlock {
    let arguments = match arguments {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let id = id.map(str::to_owned).unwrap_or_else(|| random_id("tool"));
    AssistantBlock::ToolCall(ToolCall::new(id, name, arguments))
}

/// Options of [`faux_assistant_message`]. `stop_reason` is never inferred: a tool-call reply
/// must pass `ToolUse`.
#[derive(Clone, Debug, Default)]
pub struct FauxMessageOptions {
    /// Defaults to `Stop`.
    pub stop_reason: Option<StopReason>,
    /// Error text (with `Error` or `Aborted`).
    pub error_message: Option<String>,
    /// Response id.
    pub response_id: Option<String>,
    /// Timestamp; defaults to now.
    pub timestamp: Option<u64>,
}

/// A scripted assistant message with the given blocks.
pub fn faux_assistant_message(content: Vec<AssistantBlock>, options: FauxMessageOptions) -> AssistantMessage {
    AssistantMessage {
        content,
        api: "faux".into(),
        provider: "faux".into(),
        model: "faux-1".into(),
        stop_reason: options.stop_reason.unwrap_or(StopReason::Stop),
        error_message: options.error_message,
        response_id: options.response_id,
        timestamp: options.timestamp.unwrap_or_else(now_ms),
        ..Default::default()
    }
}

/// What a factory step receives.
#[derive(Clone, Debug)]
pub struct FauxRequest {
    /// The transcript of the request.
    pub context: TranscriptContext,
    /// The request options.
    pub options: StreamOptions,
    /// The provider state at the time of the request.
    pub state: FauxState,
    /// The requested model.
    pub model: Model,
}

/// An async factory step: builds the reply from the request, or fails with a message.
pub type FauxFactory =
    Arc<dyn Fn(FauxRequest) -> Pin<Box<dyn Future<Output = Result<AssistantMessage, String>> + Send>> + Send + Sync>;

/// One scripted response.
#[derive(Clone)]
pub enum FauxStep {
    /// A fixed message.
    Message(Box<AssistantMessage>),
    /// A message built from the request.
    Factory(FauxFactory),
}

impl std::fmt::Debug for FauxStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FauxStep::Message(m) => f.debug_tuple("Message").field(m).finish(),
            FauxStep::Factory(_) => f.write_str("Factory"),
        }
    }
}

impl From<AssistantMessage> for FauxStep {
    fn from(message: AssistantMessage) -> Self {
        FauxStep::Message(Box::new(message))
    }
}

impl FauxStep {
    /// A factory step from an async closure.
    pub fn factory<F, Fut>(f: F) -> Self
    where
        F: Fn(FauxRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<AssistantMessage, String>> + Send + 'static,
    {
        FauxStep::Factory(Arc::new(move |request| Box::pin(f(request))))
    }
}

/// Counters of a faux provider.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FauxState {
    /// Requests started.
    pub call_count: u64,
}

/// Token size range of streamed chunks (a chunk is `4 × size` characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenSize {
    /// Smallest size (at least 1).
    pub min: usize,
    /// Largest size.
    pub max: usize,
}

impl Default for TokenSize {
    fn default() -> Self {
        TokenSize { min: 3, max: 5 }
    }
}

/// Options of [`FauxProvider::new`].
#[derive(Clone, Debug, Default)]
pub struct FauxOptions {
    /// API id; defaults to `"faux:<ms>:<random>"`.
    pub api: Option<String>,
    /// Provider id; defaults to `"faux"`.
    pub provider: Option<String>,
    /// Models; defaults to one `faux-1` ("Faux Model", text and image, 128000 / 16384).
    /// `api`, `provider` and `baseUrl` are overwritten.
    pub models: Vec<Model>,
    /// Pace of streaming; `None` yields between chunks without waiting.
    pub tokens_per_second: Option<f64>,
    /// Chunk sizes.
    pub token_size: TokenSize,
    /// Seed of the chunk-size and id generator (deterministic by default).
    pub seed: Option<u64>,
}

#[derive(Debug)]
struct Inner {
    pending: VecDeque<FauxStep>,
    state: FauxState,
    prompt_cache: HashMap<String, Vec<String>>,
    rng: u64,
}

/// The faux provider: an [`ApiProvider`] that replays scripted responses.
#[derive(Clone, Debug)]
pub struct FauxProvider {
    api: String,
    provider: String,
    models: Vec<Model>,
    tokens_per_second: Option<f64>,
    min: usize,
    max: usize,
    inner: Arc<Mutex<Inner>>,
}

impl FauxProvider {
    /// A provider with no responses queued.
    pub fn new(options: FauxOptions) -> Self {
        let api = options.api.unwrap_or_else(|| random_id("faux"));
        let provider = options.provider.unwrap_or_else(|| "faux".to_owned());
        let min = options.token_size.min.min(options.token_size.max).max(1);
        let max = options.token_size.max.max(min);
        let definitions = if options.models.is_empty() {
            vec![Model {
                id: "faux-1".into(),
                name: "Faux Model".into(),
                context_window: 128_000,
                max_tokens: 16_384,
                input: vec!["text".into(), "image".into()],
                ..Default::default()
            }]
        } else {
            options.models
        };
        let models = definitions
            .into_iter()
            .map(|d| Model {
                name: if d.name.is_empty() { d.id.clone() } else { d.name.clone() },
                api: api.clone(),
                provider: provider.clone(),
                base_url: "http://localhost:0".into(),
                input: if d.input.is_empty() { vec!["text".into(), "image".into()] } else { d.input.clone() },
                cost: if d.cost == ModelCost::default() { ModelCost::default() } else { d.cost.clone() },
                context_window: if d.context_window == 0 { 128_000 } else { d.context_window },
                max_tokens: if d.max_tokens == 0 { 16_384 } else { d.max_tokens },
                ..d
            })
            .collect();
        let inner = Inner {
            pending: VecDeque::new(),
            state: FauxState::default(),
            prompt_cache: HashMap::new(),
            rng: options.seed.unwrap_or(0x9E37_79B9_7F4A_7C15) | 1,
        };
        FauxProvider {
            api,
            provider,
            models,
            tokens_per_second: options.tokens_per_second,
            min,
            max,
            inner: Arc::new(Mutex::new(inner)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The provider id.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The models.
    pub fn models(&self) -> &[Model] {
        &self.models
    }

    /// The first model.
    pub fn model(&self) -> Model {
        self.models[0].clone()
    }

    /// A model by id (`get_model`).
    pub fn get_model(&self, id: &str) -> Option<Model> {
        self.models.iter().find(|m| m.id == id).cloned()
    }

    /// The counters.
    pub fn state(&self) -> FauxState {
        self.lock().state.clone()
    }

    /// Replaces the queue.
    pub fn set_responses(&self, responses: Vec<FauxStep>) {
        self.lock().pending = responses.into();
    }

    /// Appends to the queue.
    pub fn append_responses(&self, responses: Vec<FauxStep>) {
        self.lock().pending.extend(responses);
    }

    /// How many responses are queued.
    pub fn pending_response_count(&self) -> usize {
        self.lock().pending.len()
    }

    fn chunks(&self, text: &str) -> Vec<String> {
        let mut inner = self.lock();
        let mut chunks = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let size = self.min + (next_random(&mut inner.rng) % (self.max - self.min + 1) as u64) as usize;
            let (chunk, tail) = split_utf16(rest, size * 4);
            chunks.push(chunk.to_owned());
            rest = tail;
        }
        if chunks.is_empty() {
            chunks.push(String::new());
        }
        chunks
    }
}

fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn random_id(prefix: &str) -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0x2545_F491_4F6C_DD1D);
    let mut x = COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, std::sync::atomic::Ordering::Relaxed);
    let r = next_random(&mut x);
    format!("{prefix}:{}:{}", now_ms(), base36(r))
}

fn base36(mut n: u64) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(std::char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

/// Splits after `units` UTF-16 code units, never inside a surrogate pair.
fn split_utf16(text: &str, units: usize) -> (&str, &str) {
    let mut count = 0;
    for (i, c) in text.char_indices() {
        if count >= units {
            return text.split_at(i);
        }
        count += c.len_utf16();
    }
    (text, "")
}

use crate::js::js_len;

fn user_content_text(blocks: &[UserBlock]) -> String {
    blocks
        .iter()
        .map(|b| match b {
            UserBlock::Text(t) => t.text.clone(),
            UserBlock::Image(i) => format!("[image:{}:{}]", i.mime_type, js_len(&i.data)),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn assistant_text(content: &[AssistantBlock]) -> String {
    content
        .iter()
        .map(|b| match b {
            AssistantBlock::Text(t) => t.text.clone(),
            AssistantBlock::Thinking(t) => t.thinking.clone(),
            AssistantBlock::ToolCall(c) => {
                format!("{}:{}", c.name, serde_json::to_string(&c.arguments).unwrap_or_default())
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn message_text(message: &Message) -> String {
    match message {
        Message::System(m) => {
            let mut parts = vec![system_message_text(m)];
            for t in m.tools_removed.iter().flatten() {
                parts.push(format!("tool-:{}", serde_json::to_string(t).unwrap_or_default()));
            }
            for t in m.tools_added.iter().flatten() {
                parts.push(format!("tool+:{}", serde_json::to_string(t).unwrap_or_default()));
            }
            parts.retain(|p| !p.is_empty());
            parts.join("\n")
        }
        Message::User(m) => match &m.content {
            Content::Text(s) => s.clone(),
            Content::Blocks(b) => user_content_text(b),
        },
        Message::Assistant(m) => assistant_text(&m.content),
        Message::ToolResult(m) => {
            let mut parts = vec![m.tool_name.clone()];
            parts.extend(m.content.iter().map(|b| user_content_text(std::slice::from_ref(b))));
            parts.join("\n")
        }
    }
}

fn joined_length(entries: &[String], count: usize) -> usize {
    let separators = if count > 0 { (count - 1) * 2 } else { 0 };
    separators + entries[..count].iter().map(|e| js_len(e)).sum::<usize>()
}

fn common_prompt_prefix_length(previous: &[String], current: &[String]) -> usize {
    let mut index = 0;
    while index < previous.len() && index < current.len() && previous[index] == current[index] {
        index += 1;
    }
    let rest = |entries: &[String]| {
        if index == entries.len() {
            String::new()
        } else {
            format!("{}{}", if index > 0 { "\n\n" } else { "" }, entries[index..].join("\n\n"))
        }
    };
    let (a, b) = (rest(previous), rest(current));
    let common = a.encode_utf16().zip(b.encode_utf16()).take_while(|(x, y)| x == y).count();
    joined_length(previous, index) + common
}

fn ceil4(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

impl FauxProvider {
    fn usage_estimate(
        &self,
        content: &[AssistantBlock],
        context: &TranscriptContext,
        options: &StreamOptions,
    ) -> Usage {
        let prompt: Vec<String> =
            context.messages().iter().map(|m| format!("{}:{}", m.role(), message_text(m))).collect();
        let prompt_tokens = ceil4(joined_length(&prompt, prompt.len()));
        let output = ceil4(js_len(&assistant_text(content)));
        let (mut input, mut cache_read, mut cache_write) = (prompt_tokens, 0, 0);
        if let Some(session) = options.session_id.as_deref().filter(|s| !s.is_empty())
            && options.cache_retention != Some(CacheRetention::None)
        {
            let mut inner = self.lock();
            match inner.prompt_cache.get(session) {
                Some(previous) => {
                    cache_read = ceil4(common_prompt_prefix_length(previous, &prompt));
                    cache_write = prompt_tokens.saturating_sub(cache_read);
                }
                None => cache_write = prompt_tokens,
            }
            input = 0;
            inner.prompt_cache.insert(session.to_owned(), prompt);
        }
        Usage {
            input,
            output,
            cache_read,
            cache_write,
            total_tokens: input + output + cache_read + cache_write,
            ..Default::default()
        }
    }

    fn error_message(&self, model: &Model, text: String) -> AssistantMessage {
        AssistantMessage {
            api: self.api.clone(),
            provider: self.provider.clone(),
            model: model.id.clone(),
            stop_reason: StopReason::Error,
            error_message: Some(text),
            timestamp: now_ms(),
            ..Default::default()
        }
    }
}

/// Yields once to the executor (pi's microtask between chunks).
async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await
}

fn aborted(partial: &AssistantMessage) -> Ev {
    let mut error = partial.clone();
    error.stop_reason = StopReason::Aborted;
    error.error_message = Some("Request was aborted".into());
    error.timestamp = now_ms();
    Ev::Error { reason: StopReason::Aborted, error: Box::new(error) }
}

impl ApiProvider for FauxProvider {
    fn api(&self) -> &str {
        &self.api
    }

    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
        let step = {
            let mut inner = self.lock();
            inner.state.call_count += 1;
            inner.pending.pop_front()
        };
        let this = self.clone();
        let model = model.clone();
        let events = async_stream::stream! {
            if let Some(hook) = &options.on_response {
                hook(&ProviderResponse { status: 200, headers: Vec::new() }, &model);
            }
            let Some(step) = step else {
                let mut message = this.error_message(&model, "No more faux responses queued".into());
                message.usage = this.usage_estimate(&[], &context, &options);
                yield Ev::Error { reason: StopReason::Error, error: Box::new(message) };
                return;
            };
            let resolved = match step {
                FauxStep::Message(m) => Ok(*m),
                FauxStep::Factory(f) => {
                    let request = FauxRequest {
                        context: context.clone(),
                        options: options.clone(),
                        state: this.state(),
                        model: model.clone(),
                    };
                    f(request).await
                }
            };
            let mut message = match resolved {
                Ok(m) => m,
                Err(e) => {
                    yield Ev::Error { reason: StopReason::Error, error: Box::new(this.error_message(&model, e)) };
                    return;
                }
            };
            message.api = this.api.clone();
            message.provider = this.provider.clone();
            message.model = model.id.clone();
            if message.timestamp == 0 {
                message.timestamp = now_ms();
            }
            message.usage = this.usage_estimate(&message.content, &context, &options);
            if message.stop_reason == StopReason::Pending {
                yield Ev::Error {
                    reason: StopReason::Error,
                    error: Box::new(this.error_message(&model, "Faux response ended without a stop reason".into())),
                };
                return;
            }

            let cancelled = || options.is_cancelled();
            let mut partial = AssistantMessage { content: Vec::new(), stop_reason: StopReason::Pending, ..message.clone() };
            if cancelled() {
                yield aborted(&partial);
                return;
            }
            yield Ev::Start { partial: Box::new(partial.clone()) };
            for (index, block) in message.content.iter().enumerate() {
                if cancelled() {
                    yield aborted(&partial);
                    return;
                }
                let (text, start) = match block {
                    AssistantBlock::Thinking(t) => {
                        partial.content.push(faux_thinking(""));
                        (t.thinking.clone(), Ev::ThinkingStart { content_index: index, block: ThinkingContent::new("") })
                    }
                    AssistantBlock::Text(t) => {
                        partial.content.push(faux_text(""));
                        (t.text.clone(), Ev::TextStart { content_index: index, block: TextContent::new("") })
                    }
                    AssistantBlock::ToolCall(c) => {
                        let started = ToolCall::new(c.id.clone(), c.name.clone(), Map::new());
                        partial.content.push(AssistantBlock::ToolCall(started.clone()));
                        let json = serde_json::to_string(&c.arguments).unwrap_or_else(|_| "{}".into());
                        (json, Ev::ToolCallStart { content_index: index, tool_call: Box::new(started) })
                    }
                };
                yield start;
                let mut arguments = ToolCallArgumentsStream::new();
                for chunk in this.chunks(&text) {
                    match this.tokens_per_second.filter(|t| *t > 0.0) {
                        None => yield_now().await,
                        Some(tps) => {
                            let delay = Duration::from_secs_f64(ceil4(js_len(&chunk)) as f64 / tps);
                            let token = options.cancel_token();
                            tokio::select! {
                                _ = tokio::time::sleep(delay) => {}
                                _ = token.cancelled() => {}
                            }
                        }
                    }
                    if cancelled() {
                        yield aborted(&partial);
                        return;
                    }
                    match partial.content.get_mut(index) {
                        Some(AssistantBlock::Thinking(t)) => t.thinking.push_str(&chunk),
                        Some(AssistantBlock::Text(t)) => t.text.push_str(&chunk),
                        Some(AssistantBlock::ToolCall(c)) => c.arguments = arguments.append(&chunk).clone(),
                        None => {}
                    }
                    yield match block {
                        AssistantBlock::Thinking(_) => Ev::ThinkingDelta { content_index: index, delta: chunk },
                        AssistantBlock::Text(_) => Ev::TextDelta { content_index: index, delta: chunk },
                        AssistantBlock::ToolCall(_) => Ev::ToolCallDelta { content_index: index, delta: chunk },
                    };
                }
                partial.content[index] = block.clone();
                yield match block {
                    AssistantBlock::Thinking(t) => Ev::ThinkingEnd { content_index: index, block: t.clone() },
                    AssistantBlock::Text(t) => Ev::TextEnd { content_index: index, block: t.clone() },
                    AssistantBlock::ToolCall(c) => Ev::ToolCallEnd { content_index: index, tool_call: Box::new(c.clone()) },
                };
            }
            match message.stop_reason {
                StopReason::Error | StopReason::Aborted => {
                    yield Ev::Error { reason: message.stop_reason, error: Box::new(message) };
                }
                reason => yield Ev::Done { reason, message: Box::new(message) },
            }
        };
        AssistantMessageEventStream::new(events)
    }
}

#[cfg(test)]
mod tests;
