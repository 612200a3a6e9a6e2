//! Image generation over OpenRouter's chat completions endpoint (`openrouter-images`): one user
//! message of text and `image_url` parts, `stream: false`, `modalities` `["image", "text"]` (or
//! `["image"]` for models without text output); the answer's `message.images` data URLs become
//! image blocks and a non-empty `message.content` a text block.

use serde_json::{Value, json};

use super::{ImageBlock, ImageModel, ImagesContext, ImagesOptions, ImagesResult};
use crate::http::{ErrorStyle, HttpError, HttpRequest, send_with_retries};
use crate::json::to_js_json;
use crate::options::StreamOptions;
use crate::types::{Cost, Usage};

/// The API id.
pub const API: &str = "openrouter-images";
/// The OpenAI SDK's default request timeout.
const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

fn params(model: &ImageModel, context: &ImagesContext) -> Value {
    let content: Vec<Value> = context
        .input
        .iter()
        .map(|block| match block {
            ImageBlock::Text { text } => json!({"type": "text", "text": text}),
            ImageBlock::Image { mime_type, data } => {
                json!({"type": "image_url", "image_url": {"url": format!("data:{mime_type};base64,{data}")}})
            }
        })
        .collect();
    let modalities = if model.output.iter().any(|o| o == "text") { json!(["image", "text"]) } else { json!(["image"]) };
    json!({
        "model": model.id,
        "messages": [{"role": "user", "content": content}],
        "stream": false,
        "modalities": modalities,
    })
}

fn tokens(value: Option<&Value>) -> u64 {
    value.and_then(Value::as_f64).filter(|n| n.is_finite() && *n > 0.0).map(|n| n as u64).unwrap_or(0)
}

/// pi's `parseUsage` for this API: cached and cache-write tokens split out of the prompt tokens.
fn parse_usage(raw: &Value, model: &ImageModel) -> Usage {
    let prompt = tokens(raw.get("prompt_tokens"));
    let details = raw.get("prompt_tokens_details");
    let reported_cached = tokens(details.and_then(|d| d.get("cached_tokens")));
    let cache_write = tokens(details.and_then(|d| d.get("cache_write_tokens")));
    let cache_read = if cache_write > 0 { reported_cached.saturating_sub(cache_write) } else { reported_cached };
    let input = prompt.saturating_sub(cache_read + cache_write);
    let output = tokens(raw.get("completion_tokens"));
    let rate = |r: f64, n: u64| (r / 1_000_000.0) * n as f64;
    let mut cost = Cost {
        input: rate(model.cost.input, input),
        output: rate(model.cost.output, output),
        cache_read: rate(model.cost.cache_read, cache_read),
        cache_write: rate(model.cost.cache_write, cache_write),
        total: 0.0,
        total_from_provider: Some(false),
        ..Default::default()
    };
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write;
    Usage {
        input,
        output,
        cache_read,
        cache_write,
        total_tokens: input + output + cache_read + cache_write,
        cost,
        ..Default::default()
    }
}

/// A `data:<mime>;base64,<data>` URL split, or `None`.
fn split_data_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    (!mime.is_empty() && !mime.contains(';') && !data.is_empty()).then(|| (mime.to_owned(), data.to_owned()))
}

fn read_output(response: &Value, output: &mut ImagesResult) {
    let Some(message) =
        response.get("choices").and_then(Value::as_array).and_then(|c| c.first()).map(|c| &c["message"])
    else {
        return;
    };
    if let Some(text) = message.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
        output.output.push(ImageBlock::Text { text: text.to_owned() });
    }
    for image in message.get("images").and_then(Value::as_array).into_iter().flatten() {
        let url = match image.get("image_url") {
            Some(Value::String(url)) => Some(url.as_str()),
            Some(other) => other.get("url").and_then(Value::as_str),
            None => None,
        };
        if let Some((mime_type, data)) = url.and_then(split_data_url) {
            output.output.push(ImageBlock::Image { mime_type, data });
        }
    }
}

/// Generates images through OpenRouter.
pub async fn generate_images(model: &ImageModel, context: &ImagesContext, options: &ImagesOptions) -> ImagesResult {
    let mut output = ImagesResult::new(model);
    let cancel = options.cancel.clone().unwrap_or_default();
    let aborted = || cancel.is_cancelled();
    let Some(api_key) = options.api_key.as_deref() else {
        return failed(output, format!("No API key for provider: {}", model.provider), aborted());
    };
    let mut headers = crate::http::HeaderMap::new();
    headers.set("User-Agent", crate::http::user_agent());
    headers.set("Authorization", format!("Bearer {api_key}"));
    headers.set("Content-Type", "application/json");
    if let Some(model_headers) = &model.headers {
        headers.merge_json(model_headers);
    }
    for (name, value) in &options.headers {
        match value {
            Some(value) => headers.set(name.clone(), value.clone()),
            None => headers.remove(name),
        }
    }
    let request = HttpRequest::new(
        format!("{}/chat/completions", model.base_url.trim_end_matches('/')),
        headers,
        to_js_json(&params(model, context)).into(),
    );
    let stream_options = StreamOptions {
        cancel: Some(cancel.clone()),
        timeout: Some(options.timeout.unwrap_or(DEFAULT_TIMEOUT)),
        max_retries: options.max_retries.unwrap_or(0),
        max_retry_delay: options.max_retry_delay,
        ..Default::default()
    };
    let style = ErrorStyle::OpenAiCompletions;
    let body = match send_with_retries(&request, &stream_options, &style).await {
        Ok((_, _, mut body)) => {
            let mut bytes = Vec::new();
            loop {
                match body.next_chunk().await {
                    Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
                    Ok(None) => break,
                    Err(error) => return failed(output, style.format(&error), aborted()),
                }
            }
            bytes
        }
        Err(HttpError::Aborted) => return failed(output, "Request was aborted.".to_owned(), true),
        Err(error) => return failed(output, style.format(&error), aborted()),
    };
    let response: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return failed(output, format!("Unexpected token in JSON: {e}"), aborted()),
    };
    output.response_id = response.get("id").and_then(Value::as_str).map(str::to_owned);
    if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
        output.usage = Some(parse_usage(usage, model));
    }
    read_output(&response, &mut output);
    output
}

fn failed(mut output: ImagesResult, message: String, aborted: bool) -> ImagesResult {
    output.stop_reason = if aborted { crate::types::StopReason::Aborted } else { crate::types::StopReason::Error };
    output.error_message = Some(message);
    output
}
