//! The classifier model, its request context and its result, as pi-ai's JSON.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::json::JsNumber;
use crate::json_object;
use crate::types::{ModelCost, StopReason, Usage, now_ms};

json_object! {
    /// A classifier model (pi's `ClassifierModel`): `type` is always `classifier`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ClassifierModel {
        /// `"classifier"`.
        model_type: req String = "type",
        /// Model id sent to the service.
        id: req String = "id",
        /// Display name.
        name: req String = "name",
        /// API id: `typesafe-system-one`, `cloudflare-workers-ai-system-one`, `openai-decisions`,
        /// `llama-cpp-classify`.
        api: req String = "api",
        /// Provider id.
        provider: req String = "provider",
        /// Base URL; the API appends its path.
        base_url: req String = "baseUrl",
        /// Input modalities: `"text"`, `"image"`.
        input: req Vec<String> = "input",
        /// Per-million-token rates.
        cost: req ModelCost = "cost",
        /// Context window in tokens.
        context_window: opt u64 = "contextWindow",
        /// System One compatibility: `imageInput` (`assets`, `images`, `state-image-urls`) and
        /// `sendImageOptInHeader`.
        compat: opt Map<String, Value> = "compat",
        /// Extra HTTP headers.
        headers: opt Map<String, Value> = "headers",
    }
}

impl ClassifierModel {
    /// Whether the model judges images.
    pub fn supports_images(&self) -> bool {
        self.input.iter().any(|i| i == "image")
    }

    /// The model as a chat [`Model`](crate::Model) carrying its rates, for
    /// [`calculate_cost`](crate::models::calculate_cost).
    pub(crate) fn pricing(&self) -> crate::Model {
        crate::Model { cost: self.cost.clone(), ..Default::default() }
    }
}

/// An image judged together with the state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassifierImage {
    /// Always `"image"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Base64 data.
    pub data: String,
    /// MIME type (`image/png`).
    #[serde(rename = "mimeType")]
    pub mime_type: String,
}

/// What a bool question's `true` and `false` mean.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BoolCriteria {
    /// Meaning of `true`.
    #[serde(rename = "true")]
    pub yes: String,
    /// Meaning of `false`.
    #[serde(rename = "false")]
    pub no: String,
}

/// One question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ClassifierQuestion {
    /// Pick one label; `criteria` maps each label to its meaning.
    Choice {
        /// The question.
        instructions: String,
        /// Label → meaning.
        criteria: IndexMap<String, String>,
    },
    /// An ordered scale; `criteria` describes each level, lowest first.
    Score {
        /// The question.
        instructions: String,
        /// The levels.
        criteria: Vec<String>,
    },
    /// Yes or no.
    Bool {
        /// The question.
        instructions: String,
        /// The meanings of `true` and `false`.
        criteria: BoolCriteria,
    },
}

impl ClassifierQuestion {
    /// The question text.
    pub fn instructions(&self) -> &str {
        match self {
            ClassifierQuestion::Choice { instructions, .. }
            | ClassifierQuestion::Score { instructions, .. }
            | ClassifierQuestion::Bool { instructions, .. } => instructions,
        }
    }
}

/// The request: state, optional images, questions by id (pi's `ClassifierContext`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassifierContext {
    /// The data to classify.
    pub state: Value,
    /// Images judged with the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<ClassifierImage>>,
    /// Questions by id, answered in this order.
    pub questions: IndexMap<String, ClassifierQuestion>,
}

impl ClassifierContext {
    /// The images, empty when there are none.
    pub fn images(&self) -> &[ClassifierImage] {
        self.images.as_deref().unwrap_or(&[])
    }
}

/// One answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ClassifierAnswer {
    /// The chosen label with every label's probability.
    Choice {
        /// The chosen label.
        choice: String,
        /// Label → probability.
        probabilities: IndexMap<String, JsNumber>,
        /// Confidence in `[0, 1]`.
        confidence: JsNumber,
    },
    /// The expected level index.
    Score {
        /// From 0 to `criteria.len() - 1`.
        score: JsNumber,
        /// Confidence in `[0, 1]`.
        confidence: JsNumber,
    },
    /// Probability of `true`.
    Bool {
        /// Probability of `true`.
        probability: JsNumber,
    },
}

/// The result (pi's `ClassifierResult`); failures are in `stop_reason` and `error_message`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassifierResult {
    /// The model's API.
    pub api: String,
    /// The model's provider.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Answers by question id (empty on failure).
    pub answers: IndexMap<String, ClassifierAnswer>,
    /// `stop`, `error` or `aborted`.
    #[serde(rename = "stopReason")]
    pub stop_reason: StopReason,
    /// When the call started (ms since the epoch).
    pub timestamp: u64,
    /// Token counts and cost, when the service reported them (also on some failures: the request
    /// was billed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The failure.
    #[serde(rename = "errorMessage", default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

impl ClassifierResult {
    /// An empty successful result for `model`, stamped now.
    pub fn new(model: &ClassifierModel) -> Self {
        ClassifierResult {
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            answers: IndexMap::new(),
            stop_reason: StopReason::Stop,
            timestamp: now_ms(),
            usage: None,
            error_message: None,
        }
    }
}
