//! Calling a model for summaries, and `compact`.

use std::sync::Arc;

use pi_ai::options::{CacheRetention, StreamOptions};
use pi_ai::transcript::{TranscriptContext, blocks_text, normalize_context};
use pi_ai::{
    ApiProvider, AssistantBlock, AssistantMessage, Context, Message, Model, StopReason, ThinkingLevel, Usage,
    UserMessage,
};
use serde_json::json;

use crate::compaction::prepare::CompactionPreparation;
use crate::compaction::prompts::{
    SPLIT_TURN_SEPARATOR, SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT, TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
};
use crate::compaction::serialize::{compute_file_lists, format_file_operations, serialize_conversation};
use crate::messages::{CodingAgentMessage, convert_to_llm};
use crate::session::now_ms;

/// A function that starts one model request: the agent's own [`pi_agent_core::StreamFn`] (one
/// name, one type).
pub use pi_agent_core::StreamFn;

/// A summarization failure; the message is pi's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SummarizationError(pub String);

/// The model that writes summaries, and the options of its requests.
#[derive(Clone)]
pub struct Summarizer {
    /// The model.
    pub model: Model,
    stream: StreamFn,
    /// API key for the requests.
    pub api_key: Option<String>,
    /// Extra headers.
    pub headers: Vec<(String, Option<String>)>,
    /// The session's thinking level (sent as `reasoning` when the model reasons and it is not off).
    pub thinking_level: Option<ThinkingLevel>,
    /// Routing session id; a fresh UUIDv7 per request when `None`.
    pub session_id: Option<String>,
    /// Cancels the requests.
    pub cancel: Option<tokio_util::sync::CancellationToken>,
}

impl std::fmt::Debug for Summarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Summarizer").field("model", &self.model.id).field("provider", &self.model.provider).finish()
    }
}

impl Summarizer {
    /// Summaries through `provider` with `model`.
    pub fn new(provider: Arc<dyn ApiProvider>, model: Model) -> Self {
        Self::with_stream_fn(model, Arc::new(move |m: &Model, c, o| provider.stream(m, c, o)))
    }

    /// Summaries through any stream function.
    pub fn with_stream_fn(model: Model, stream: StreamFn) -> Self {
        Summarizer {
            model,
            stream,
            api_key: None,
            headers: Vec::new(),
            thinking_level: None,
            session_id: None,
            cancel: None,
        }
    }

    /// The request context of a summary: the summarization system prompt and one user message.
    pub fn request_context(prompt_text: &str) -> TranscriptContext {
        normalize_context(Context {
            system_prompt: Some(SUMMARIZATION_SYSTEM_PROMPT.to_owned()),
            messages: vec![Message::User(
                serde_json::from_value::<UserMessage>(json!({
                    "role": "user", "content": [{"type": "text", "text": prompt_text}], "timestamp": now_ms()
                }))
                .unwrap_or_else(|_| UserMessage::new(prompt_text))
                .into(),
            )],
            tools: None,
        })
    }

    /// The request options: no prompt caching, a routing session id, reasoning when applicable.
    pub fn request_options(&self) -> StreamOptions {
        StreamOptions {
            api_key: self.api_key.clone(),
            headers: self.headers.clone(),
            cancel: self.cancel.clone(),
            cache_retention: Some(CacheRetention::None),
            session_id: Some(self.session_id.clone().unwrap_or_else(crate::session::new_session_id)),
            reasoning: self.thinking_level.filter(|l| self.model.reasoning && *l != ThinkingLevel::Off),
            ..Default::default()
        }
    }

    /// Sends one summary request and waits for the final message.
    pub async fn complete(&self, prompt_text: &str) -> AssistantMessage {
        let stream = (self.stream)(&self.model, Self::request_context(prompt_text), self.request_options());
        stream.result().await
    }
}

/// pi's `getSummarizationFailure`: an error or a length stop cannot become a checkpoint.
pub fn summarization_failure(response: &AssistantMessage, label: &str) -> Option<String> {
    match response.stop_reason {
        StopReason::Error => Some(format!(
            "{label} failed: {}",
            response.error_message.as_deref().filter(|m| !m.is_empty()).unwrap_or("Unknown error")
        )),
        StopReason::Length => {
            Some(format!("{label} failed: generation hit the token cap and the summary is incomplete"))
        }
        _ => None,
    }
}

fn checked_text(response: &AssistantMessage, label: &str) -> Result<String, SummarizationError> {
    if let Some(f) = summarization_failure(response, label) {
        return Err(SummarizationError(f));
    }
    if response.content.iter().any(|b| matches!(b, AssistantBlock::ToolCall(_))) {
        return Err(SummarizationError(format!("{label} attempted to call a tool")));
    }
    Ok(blocks_text(&response.content, "\n"))
}

/// The prompt of a history summary (`generateSummary`).
pub fn summary_prompt(
    messages: &[CodingAgentMessage],
    custom_instructions: Option<&str>,
    previous_summary: Option<&str>,
) -> String {
    let previous_summary = previous_summary.filter(|p| !p.is_empty());
    let mut base =
        if previous_summary.is_some() { UPDATE_SUMMARIZATION_PROMPT } else { SUMMARIZATION_PROMPT }.to_owned();
    if let Some(ci) = custom_instructions.filter(|c| !c.is_empty()) {
        base = format!("{base}\n\nAdditional focus: {ci}");
    }
    let conversation = serialize_conversation(&convert_to_llm(messages));
    let mut prompt = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    if let Some(prev) = previous_summary {
        prompt.push_str(&format!("<previous-summary>\n{prev}\n</previous-summary>\n\n"));
    }
    prompt.push_str(&base);
    prompt
}

/// The prompt of a split turn's prefix summary.
pub fn turn_prefix_prompt(messages: &[CodingAgentMessage], custom_instructions: Option<&str>) -> String {
    let conversation = serialize_conversation(&convert_to_llm(messages));
    let mut prompt = format!("# Conversation\n{conversation}\n\n# Instructions\n{TURN_PREFIX_SUMMARIZATION_PROMPT}");
    if let Some(ci) = custom_instructions.filter(|c| !c.is_empty()) {
        prompt = format!("{prompt}\n\nAdditional focus: {ci}");
    }
    prompt
}

/// Generates (or, with a previous summary, updates) a history summary; returns text and usage.
pub async fn generate_summary(
    summarizer: &Summarizer,
    messages: &[CodingAgentMessage],
    custom_instructions: Option<&str>,
    previous_summary: Option<&str>,
) -> Result<(String, Usage), SummarizationError> {
    let response = summarizer.complete(&summary_prompt(messages, custom_instructions, previous_summary)).await;
    Ok((checked_text(&response, "Summarization")?, response.usage))
}

/// The result of a compaction, ready for [`SessionManager::append_compaction`](crate::session::SessionManager::append_compaction).
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionResult {
    /// The summary, with the file lists appended.
    pub summary: String,
    /// The first kept entry.
    pub first_kept_entry_id: String,
    /// Estimated tokens before.
    pub tokens_before: u64,
    /// Usage of the summary request(s).
    pub usage: Option<Usage>,
    /// `{readFiles, modifiedFiles}`.
    pub details: serde_json::Value,
}

/// pi's `combineUsage`: two usages summed (a sum is provider-reported only when both are).
pub(crate) fn combine_usage(a: &Usage, b: &Usage) -> Usage {
    let opt_sum =
        |x: Option<u64>, y: Option<u64>| (x.is_some() || y.is_some()).then(|| x.unwrap_or(0) + y.unwrap_or(0));
    let mut cost = a.cost.clone();
    cost.input += b.cost.input;
    cost.output += b.cost.output;
    cost.cache_read += b.cost.cache_read;
    cost.cache_write += b.cost.cache_write;
    cost.total += b.cost.total;
    cost.total_from_provider =
        Some(a.cost.total_from_provider == Some(true) && b.cost.total_from_provider == Some(true));
    Usage {
        input: a.input + b.input,
        output: a.output + b.output,
        cache_read: a.cache_read + b.cache_read,
        cache_write: a.cache_write + b.cache_write,
        cache_write_1h: opt_sum(a.cache_write_1h, b.cache_write_1h),
        reasoning: opt_sum(a.reasoning, b.reasoning),
        total_tokens: a.total_tokens + b.total_tokens,
        cost,
        ..Default::default()
    }
}

/// Summarizes a prepared compaction (pi's `compact`): a history summary, plus a turn-prefix
/// summary joined by the split-turn separator when the cut splits a turn; then the file lists.
pub async fn compact(
    preparation: &CompactionPreparation,
    summarizer: &Summarizer,
    custom_instructions: Option<&str>,
) -> Result<CompactionResult, SummarizationError> {
    let p = preparation;
    let (mut summary, usage) = if p.is_split_turn && !p.turn_prefix_messages.is_empty() {
        let (history, history_usage) = if p.messages_to_summarize.is_empty() {
            (p.previous_summary.clone().unwrap_or_else(|| "No prior history.".to_owned()), None)
        } else {
            let (t, u) = generate_summary(
                summarizer,
                &p.messages_to_summarize,
                custom_instructions,
                p.previous_summary.as_deref(),
            )
            .await?;
            (t, Some(u))
        };
        let response = summarizer.complete(&turn_prefix_prompt(&p.turn_prefix_messages, custom_instructions)).await;
        let prefix = checked_text(&response, "Turn prefix summarization")?;
        let usage = match history_usage {
            Some(h) => combine_usage(&h, &response.usage),
            None => response.usage,
        };
        (format!("{history}{SPLIT_TURN_SEPARATOR}{prefix}"), usage)
    } else {
        generate_summary(summarizer, &p.messages_to_summarize, custom_instructions, p.previous_summary.as_deref())
            .await?
    };
    let (read, modified) = compute_file_lists(&p.file_ops);
    summary.push_str(&format_file_operations(&read, &modified));
    Ok(CompactionResult {
        summary,
        first_kept_entry_id: p.first_kept_entry_id.clone(),
        tokens_before: p.tokens_before,
        usage: Some(usage),
        details: json!({"readFiles": read, "modifiedFiles": modified}),
    })
}
