//! Image-generation models (pi-ai's `generateImages`): the catalog's `image` models and the one
//! API they use, [`openrouter`] (OpenRouter's chat completions with image modalities).
//! [`generate_images`] dispatches on `model.api` and never fails: errors are in the result.
//!
//! ```
//! let m = pi_ai::images::get_image_model("openrouter", "google/gemini-2.5-flash-image").unwrap();
//! assert_eq!(m.api, "openrouter-images");
//! ```

pub mod openrouter;

use std::sync::OnceLock;
use std::time::Duration;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::json_object;
use crate::types::{ModelCost, StopReason, Usage, now_ms};

json_object! {
    /// An image model (pi's `ImageModel`): `type` is always `image`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ImageModel {
        /// `"image"`.
        model_type: req String = "type",
        /// Model id sent to the service.
        id: req String = "id",
        /// Display name.
        name: req String = "name",
        /// API id (`openrouter-images`).
        api: req String = "api",
        /// Provider id.
        provider: req String = "provider",
        /// Base URL; the API appends its path.
        base_url: req String = "baseUrl",
        /// Input modalities: `"text"`, `"image"`.
        input: req Vec<String> = "input",
        /// Output modalities: `"image"`, and `"text"` for models that also write text.
        output: req Vec<String> = "output",
        /// Per-million-token rates.
        cost: req ModelCost = "cost",
        /// Provider input limits.
        input_limits: opt Value = "inputLimits",
        /// Extra HTTP headers.
        headers: opt Map<String, Value> = "headers",
    }
}

/// A text or image block of the prompt or of the output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ImageBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// A base64 image.
    Image {
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Base64 data.
        data: String,
    },
}

/// The request (pi's `ImagesContext`): the prompt as text blocks plus reference images.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ImagesContext {
    /// Prompt blocks.
    pub input: Vec<ImageBlock>,
}

/// Options of one generation (pi's `ImagesOptions`).
#[derive(Clone, Debug, Default)]
pub struct ImagesOptions {
    /// The credential.
    pub api_key: Option<String>,
    /// Extra headers over the model's; `None` removes a header.
    pub headers: Vec<(String, Option<String>)>,
    /// Request timeout (default ten minutes, the OpenAI SDK's).
    pub timeout: Option<Duration>,
    /// Retries of retryable failures (default none).
    pub max_retries: Option<u32>,
    /// Longest server-requested retry delay honoured.
    pub max_retry_delay: Option<Duration>,
    /// Cancels the call.
    pub cancel: Option<CancellationToken>,
}

/// The result (pi's `ImagesResult`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImagesResult {
    /// The model's API.
    pub api: String,
    /// The model's provider.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Generated images, and text for models that also return text.
    pub output: Vec<ImageBlock>,
    /// `stop`, `error` or `aborted`.
    #[serde(rename = "stopReason")]
    pub stop_reason: StopReason,
    /// When the call started (ms since the epoch).
    pub timestamp: u64,
    /// The service's response id.
    #[serde(rename = "responseId", default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// Token counts and cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The failure.
    #[serde(rename = "errorMessage", default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

impl ImagesResult {
    /// An empty successful result for `model`, stamped now.
    pub fn new(model: &ImageModel) -> Self {
        ImagesResult {
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            output: Vec::new(),
            stop_reason: StopReason::Stop,
            timestamp: now_ms(),
            response_id: None,
            usage: None,
            error_message: None,
        }
    }

    /// An error result for `model`.
    pub fn failed(model: &ImageModel, message: String, aborted: bool) -> Self {
        let mut result = ImagesResult::new(model);
        result.stop_reason = if aborted { StopReason::Aborted } else { StopReason::Error };
        result.error_message = Some(message);
        result
    }
}

static CATALOG: OnceLock<IndexMap<String, Vec<ImageModel>>> = OnceLock::new();

/// pi-ai 1.6.0's built-in image models by provider (`IMAGE_MODELS` of `models.generated.js`,
/// generated by `scripts/fixtures/pi_ai_catalog.mjs … image`).
pub fn builtin_image_models() -> &'static IndexMap<String, Vec<ImageModel>> {
    CATALOG.get_or_init(|| match serde_json::from_str(include_str!("catalog.json")) {
        Ok(catalog) => catalog,
        Err(error) => {
            tracing::error!(%error, "the built-in image catalog does not parse");
            IndexMap::new()
        }
    })
}

/// A built-in image model (pi's `getBuiltinImageModel`).
pub fn get_image_model(provider: &str, id: &str) -> Option<&'static ImageModel> {
    builtin_image_models().get(provider)?.iter().find(|m| m.id == id)
}

/// Generates images with `model` through the API its `api` names.
pub async fn generate_images(model: &ImageModel, context: &ImagesContext, options: &ImagesOptions) -> ImagesResult {
    match model.api.as_str() {
        openrouter::API => openrouter::generate_images(model, context, options).await,
        other => ImagesResult::failed(model, format!("No API provider registered for api: {other}"), false),
    }
}
