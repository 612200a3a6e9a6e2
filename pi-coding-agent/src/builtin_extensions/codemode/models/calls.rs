//! Running `models.classify()` and `models.generateImages()` for one script (pi's
//! `createModelGlobals` `runModelCall`): at most four calls at once, each recorded among the
//! script's calls, its usage summed into the `codemode` result, its credentials the session's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use pi_ai::Usage;
use pi_ai::classify::{ClassifierContext, ClassifierModel, ClassifyOptions};
use pi_ai::images::{ImageModel, ImagesContext, ImagesOptions};
use pi_ai::models::ResolvedAuth;
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::builtin_extensions::codemode::format::{CallRecord, truncate_text};

/// At most this many model calls run at once per script.
const MAX_CONCURRENT_MODEL_CALLS: usize = 4;
const ERROR_PREVIEW_CHARS: usize = 500;

/// The session's credential lookup for a provider id: its key, headers and variables.
pub type ModelAuth = Arc<dyn Fn(&str) -> Result<Option<ResolvedAuth>, String> + Send + Sync>;

/// Model calls of one script run: the limiter, the numbering, the summed usage and the count of
/// generated images (to notice a script that never shows them).
pub struct ModelCalls {
    limit: Semaphore,
    count: AtomicU64,
    usage: Mutex<Option<Usage>>,
    images: AtomicU64,
}

impl Default for ModelCalls {
    fn default() -> Self {
        ModelCalls {
            limit: Semaphore::new(MAX_CONCURRENT_MODEL_CALLS),
            count: AtomicU64::new(0),
            usage: Mutex::new(None),
            images: AtomicU64::new(0),
        }
    }
}

/// One checked call: which global, the model's type, its catalog entry, the context, the
/// credentials and the script's cancellation.
pub struct ModelCall<'a> {
    /// `models.classify` or `models.generateImages`.
    pub name: &'a str,
    /// `classifier` or `image`.
    pub kind: &'a str,
    /// The catalog entry.
    pub model: Value,
    /// The checked context.
    pub context: Value,
    /// The session's credential lookup.
    pub auth: Option<&'a ModelAuth>,
    /// Fires when the script ends or the run is aborted.
    pub cancel: CancellationToken,
}

/// Where a call is recorded: the script's call list and its update publisher.
pub struct CallSink<'a> {
    /// The `codemode` tool call id.
    pub tool_call_id: &'a str,
    /// The script's calls (`details.calls`).
    pub calls: &'a Mutex<Vec<CallRecord>>,
    /// Publishes the calls as a partial result.
    pub publish: &'a (dyn Fn() + Send + Sync),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// pi's `combineUsage`.
fn combine(a: &Usage, b: &Usage) -> Usage {
    let sum_opt =
        |x: Option<u64>, y: Option<u64>| (x.is_some() || y.is_some()).then(|| x.unwrap_or(0) + y.unwrap_or(0));
    let mut usage = Usage {
        input: a.input + b.input,
        output: a.output + b.output,
        cache_read: a.cache_read + b.cache_read,
        cache_write: a.cache_write + b.cache_write,
        cache_write_1h: sum_opt(a.cache_write_1h, b.cache_write_1h),
        reasoning: sum_opt(a.reasoning, b.reasoning),
        total_tokens: a.total_tokens + b.total_tokens,
        ..Default::default()
    };
    usage.cost.input = a.cost.input + b.cost.input;
    usage.cost.output = a.cost.output + b.cost.output;
    usage.cost.cache_read = a.cost.cache_read + b.cost.cache_read;
    usage.cost.cache_write = a.cost.cache_write + b.cost.cache_write;
    usage.cost.total = a.cost.total + b.cost.total;
    usage.cost.total_from_provider =
        Some(a.cost.total_from_provider == Some(true) && b.cost.total_from_provider == Some(true));
    usage
}

/// What a call needs of the session's auth: key, headers and the model's base URL filled.
struct Prepared {
    api_key: Option<String>,
    headers: Vec<(String, Option<String>)>,
    base_url: String,
}

fn prepare(auth: Option<&ModelAuth>, provider: &str, base_url: &str) -> Result<Prepared, String> {
    let resolved = match auth {
        Some(lookup) => lookup(provider)?,
        None => None,
    };
    let Some(resolved) = resolved else {
        return Err(format!("Provider is not configured: {provider}"));
    };
    Ok(Prepared {
        api_key: resolved.api_key.clone(),
        headers: resolved.headers.clone(),
        base_url: resolved.fill_base_url(base_url),
    })
}

impl ModelCalls {
    /// The usage of the script's model calls, if any reported some.
    pub fn usage(&self) -> Option<Usage> {
        lock(&self.usage).clone()
    }

    /// How many images `models.generateImages()` returned.
    pub fn generated_images(&self) -> u64 {
        self.images.load(Ordering::SeqCst)
    }

    /// Runs one checked call, recorded in `sink`.
    pub async fn run(&self, call: ModelCall<'_>, sink: &CallSink<'_>) -> Result<Value, String> {
        let ModelCall { name, kind, model, context, auth, cancel } = call;
        let model = &model;
        let provider = model.get("provider").and_then(Value::as_str).unwrap_or_default();
        let id = model.get("id").and_then(Value::as_str).unwrap_or_default();
        let n = self.count.fetch_add(1, Ordering::SeqCst) + 1;
        let index = {
            let mut calls = lock(sink.calls);
            calls.push(CallRecord {
                id: format!("{}/{name}/{n}", sink.tool_call_id),
                name: name.to_owned(),
                args: format!("{provider}/{id}"),
                status: "running".into(),
                duration_ms: None,
                error: None,
                cost: None,
            });
            calls.len() - 1
        };
        (sink.publish)();
        let started = Instant::now();
        let result = {
            let _permit = self.limit.acquire().await.map_err(|e| e.to_string())?;
            if kind == "classifier" {
                classify(model, context, auth, cancel).await?
            } else {
                generate(model, context, auth, cancel).await?
            }
        };
        if kind == "image" {
            let shown = result
                .get("output")
                .and_then(Value::as_array)
                .map_or(0, |o| o.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("image")).count());
            self.images.fetch_add(shown as u64, Ordering::SeqCst);
        }
        let usage: Option<Usage> = result.get("usage").and_then(|u| serde_json::from_value(u.clone()).ok());
        {
            let mut calls = lock(sink.calls);
            let record = &mut calls[index];
            record.duration_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
            record.status = match result.get("stopReason").and_then(Value::as_str) {
                Some("stop") => "ok",
                Some("aborted") => "cancelled",
                _ => "error",
            }
            .into();
            if let Some(error) = result.get("errorMessage").and_then(Value::as_str).filter(|e| !e.is_empty()) {
                record.error = Some(truncate_text(error, ERROR_PREVIEW_CHARS));
            }
            if let Some(usage) = &usage {
                record.cost = Some(usage.cost.total);
                let mut total = lock(&self.usage);
                *total = Some(match total.as_ref() {
                    Some(sum) => combine(sum, usage),
                    None => usage.clone(),
                });
            }
        }
        (sink.publish)();
        Ok(result)
    }
}

async fn classify(
    model: &Value,
    context: Value,
    auth: Option<&ModelAuth>,
    cancel: CancellationToken,
) -> Result<Value, String> {
    let mut model: ClassifierModel = serde_json::from_value(model.clone()).map_err(|e| e.to_string())?;
    let result = match serde_json::from_value::<ClassifierContext>(context) {
        Err(error) => pi_ai::classify::error_result(&model, error.to_string(), false),
        Ok(context) if !context.images().is_empty() && !model.supports_images() => {
            let text = format!("Model {}/{} does not accept image input", model.provider, model.id);
            pi_ai::classify::error_result(&model, text, false)
        }
        Ok(context) => match prepare(auth, &model.provider, &model.base_url) {
            Err(error) => pi_ai::classify::error_result(&model, error, cancel.is_cancelled()),
            Ok(prepared) => {
                model.base_url = prepared.base_url;
                let options = ClassifyOptions {
                    api_key: prepared.api_key,
                    headers: prepared.headers,
                    cancel: Some(cancel),
                    ..Default::default()
                };
                pi_ai::classify::classify(&model, &context, &options).await
            }
        },
    };
    serde_json::to_value(result).map_err(|e| e.to_string())
}

async fn generate(
    model: &Value,
    context: Value,
    auth: Option<&ModelAuth>,
    cancel: CancellationToken,
) -> Result<Value, String> {
    let mut model: ImageModel = serde_json::from_value(model.clone()).map_err(|e| e.to_string())?;
    let context: Result<ImagesContext, _> = serde_json::from_value(context);
    let result = match (context, prepare(auth, &model.provider, &model.base_url)) {
        (Err(error), _) => pi_ai::images::ImagesResult::failed(&model, error.to_string(), false),
        (_, Err(error)) => pi_ai::images::ImagesResult::failed(&model, error, cancel.is_cancelled()),
        (Ok(context), Ok(prepared)) => {
            model.base_url = prepared.base_url;
            let options = ImagesOptions {
                api_key: prepared.api_key,
                headers: prepared.headers,
                cancel: Some(cancel),
                ..Default::default()
            };
            pi_ai::images::generate_images(&model, &context, &options).await
        }
    };
    serde_json::to_value(result).map_err(|e| e.to_string())
}
