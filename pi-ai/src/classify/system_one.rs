//! TypeSafe's System One protocol (`typesafe-system-one`: `POST <base>/systemone` with
//! `{ model, state, questions }`, also served by OpenRouter, Vercel, OpenCode and Copilot) and
//! Cloudflare Workers AI's envelope around it (`cloudflare-workers-ai-system-one`: `POST <base>/run`
//! with `{ model, input }`). Public `bool` questions are the wire's `noul`. Images go in the form
//! the model's `compat.imageInput` names, else the one detected from the provider.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::shared::{Failure, Post, default_headers, join_url, merge_headers, parse_usage, post_json, required_number};
use super::{
    ClassifierAnswer, ClassifierContext, ClassifierImage, ClassifierModel, ClassifierQuestion, ClassifierResult,
};
use super::{ClassifyOptions, error_result};
use crate::json::{JsNumber, to_js_json};

/// The TypeSafe API id.
pub const TYPESAFE_API: &str = "typesafe-system-one";
/// The Cloudflare Workers AI API id.
pub const CLOUDFLARE_API: &str = "cloudflare-workers-ai-system-one";
const CLOUDFLARE_LABEL: &str = "Cloudflare Workers AI";
/// Clef accepts at most this many images per request.
const MAX_DATA_URL_IMAGES: usize = 4;

/// Which service speaks the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// TypeSafe's own endpoint (and the services that serve it unchanged).
    TypeSafe,
    /// Cloudflare Workers AI's `ai/run`.
    Cloudflare,
}

/// How a service takes images.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ImageInput {
    /// System One `assets` referenced from the state.
    Assets,
    /// An `images` list of data URLs (Clef).
    Images,
    /// `image_url` parts before the state (OpenRouter).
    StateImageUrls,
}

impl Transport {
    fn api(self) -> &'static str {
        match self {
            Transport::TypeSafe => TYPESAFE_API,
            Transport::Cloudflare => CLOUDFLARE_API,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Transport::TypeSafe => "System One API",
            Transport::Cloudflare => CLOUDFLARE_LABEL,
        }
    }

    /// (image input, send TypeSafe's opt-in header) when the model's compat does not say.
    fn detect(self, model: &ClassifierModel) -> (ImageInput, bool) {
        match self {
            Transport::TypeSafe if model.provider == "openrouter" || model.base_url.contains("openrouter.ai") => {
                (ImageInput::StateImageUrls, false)
            }
            Transport::TypeSafe => (ImageInput::Assets, true),
            Transport::Cloudflare if model.id.starts_with("@cf/cloudflare/clef") => (ImageInput::Images, false),
            Transport::Cloudflare => (ImageInput::Assets, false),
        }
    }

    fn url(self, model: &ClassifierModel) -> String {
        join_url(&model.base_url, if self == Transport::TypeSafe { "systemone" } else { "run" })
    }

    fn payload(self, model: &ClassifierModel, request: Map<String, Value>) -> Value {
        match self {
            Transport::TypeSafe => {
                let mut payload = Map::new();
                payload.insert("model".into(), json!(model.id));
                payload.extend(request);
                Value::Object(payload)
            }
            Transport::Cloudflare => json!({ "model": model.id, "input": Value::Object(request) }),
        }
    }

    /// The System One output inside the service's answer.
    fn output(self, body: Value) -> Result<Map<String, Value>, Failure> {
        let unexpected = || Failure::Message(format!("{} returned an unexpected response", self.label()));
        let Value::Object(body) = body else { return Err(unexpected()) };
        if self == Transport::TypeSafe {
            return Ok(body);
        }
        if body.get("success") == Some(&Value::Bool(false)) {
            return Err(Failure::Message(cloudflare_error(body.get("errors"))));
        }
        let Some(Value::Object(result)) = body.get("result") else { return Err(unexpected()) };
        if result.contains_key("answers") {
            return Ok(result.clone());
        }
        if result.get("state").and_then(Value::as_str) != Some("Completed") {
            let state = match result.get("state") {
                None => "undefined".to_owned(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            return Err(Failure::Message(format!("{CLOUDFLARE_LABEL} run did not complete (state: {state})")));
        }
        match result.get("result") {
            Some(Value::Object(inner)) => Ok(inner.clone()),
            _ => Err(unexpected()),
        }
    }
}

fn cloudflare_error(errors: Option<&Value>) -> String {
    let messages: Vec<&str> = errors
        .and_then(Value::as_array)
        .map(|errors| errors.iter().filter_map(|e| e.get("message").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    if messages.is_empty() {
        format!("{CLOUDFLARE_LABEL} request failed")
    } else {
        format!("{CLOUDFLARE_LABEL} error: {}", messages.join("; "))
    }
}

/// A question on the wire: `bool` is `noul`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum WireQuestion<'a> {
    Choice { instructions: &'a str, criteria: &'a IndexMap<String, String> },
    Score { instructions: &'a str, criteria: &'a [String] },
    Noul { instructions: &'a str, criteria: &'a super::BoolCriteria },
}

fn wire_request(context: &ClassifierContext) -> Map<String, Value> {
    let questions: Map<String, Value> = context
        .questions
        .iter()
        .map(|(id, q)| {
            let wire = match q {
                ClassifierQuestion::Choice { instructions, criteria } => {
                    WireQuestion::Choice { instructions, criteria }
                }
                ClassifierQuestion::Score { instructions, criteria } => WireQuestion::Score { instructions, criteria },
                ClassifierQuestion::Bool { instructions, criteria } => WireQuestion::Noul { instructions, criteria },
            };
            (id.clone(), serde_json::to_value(wire).unwrap_or(Value::Null))
        })
        .collect();
    let mut request = Map::new();
    request.insert("state".into(), context.state.clone());
    request.insert("questions".into(), Value::Object(questions));
    request
}

fn data_url(image: &ClassifierImage) -> String {
    format!("data:{};base64,{}", image.mime_type, image.data)
}

/// Adds the images to `request` in the service's form (pi's `addImages`).
fn add_images(
    label: &str,
    model: &ClassifierModel,
    input: ImageInput,
    images: &[ClassifierImage],
    request: &mut Map<String, Value>,
) -> Result<(), Failure> {
    let state = request.get("state").cloned().unwrap_or(Value::Null);
    match input {
        ImageInput::Images => {
            if images.len() > MAX_DATA_URL_IMAGES {
                return Err(Failure::Message(format!(
                    "{label} accepts at most {MAX_DATA_URL_IMAGES} images for {}, got {}",
                    model.id,
                    images.len()
                )));
            }
            let mut urls = Vec::new();
            for image in images {
                if !["image/png", "image/jpeg", "image/webp"].contains(&image.mime_type.as_str()) {
                    return Err(Failure::Message(format!(
                        "{label} accepts PNG, JPEG, and WebP images for {}, got {}",
                        model.id, image.mime_type
                    )));
                }
                urls.push(Value::String(data_url(image)));
            }
            request.insert("images".into(), Value::Array(urls));
        }
        ImageInput::StateImageUrls => {
            let mut parts: Vec<Value> =
                images.iter().map(|i| json!({"type": "image_url", "image_url": {"url": data_url(i)}})).collect();
            parts.push(state);
            request.insert("state".into(), Value::Array(parts));
        }
        ImageInput::Assets => {
            let mut assets = Map::new();
            for (index, image) in images.iter().enumerate() {
                let format = match image.mime_type.as_str() {
                    "image/png" => "png",
                    "image/jpeg" => "jpeg",
                    other => {
                        return Err(Failure::Message(format!(
                            "{label} accepts PNG and JPEG images for {}, got {other}",
                            model.id
                        )));
                    }
                };
                assets.insert(
                    format!("<image-{}>", index + 1),
                    json!({"type": "image", "format": format, "data_base64": image.data}),
                );
            }
            let mut names: Vec<Value> = assets.keys().map(|k| Value::String(k.clone())).collect();
            names.push(state);
            request.insert("assets".into(), Value::Object(assets));
            request.insert("state".into(), Value::Array(names));
        }
    }
    Ok(())
}

fn image_input(model: &ClassifierModel, detected: ImageInput) -> ImageInput {
    match model.compat.as_ref().and_then(|c| c.get("imageInput")).and_then(Value::as_str) {
        Some("images") => ImageInput::Images,
        Some("state-image-urls") => ImageInput::StateImageUrls,
        Some("assets") => ImageInput::Assets,
        _ => detected,
    }
}

fn probabilities(label: &str, value: Option<&Value>, id: &str) -> Result<IndexMap<String, JsNumber>, Failure> {
    let Some(Value::Object(map)) = value else {
        return Err(Failure::Message(format!("{label} returned invalid probabilities for {id}")));
    };
    map.iter()
        .map(|(key, p)| {
            Ok((key.clone(), JsNumber(required_number(label, Some(p), &format!("probability for {id}.{key}"))?)))
        })
        .collect()
}

fn parse_answers(
    label: &str,
    value: Option<&Value>,
    context: &ClassifierContext,
) -> Result<IndexMap<String, ClassifierAnswer>, Failure> {
    let Some(Value::Object(answers)) = value else {
        return Err(Failure::Message(format!("{label} returned an unexpected response")));
    };
    let mut out = IndexMap::new();
    for (id, question) in &context.questions {
        let Some(Value::Object(answer)) = answers.get(id) else {
            return Err(Failure::Message(format!("{label} did not return an answer for {id}")));
        };
        let kind = answer.get("type").and_then(Value::as_str);
        let number = |field: &str, what: String| required_number(label, answer.get(field), &what);
        let parsed = match question {
            ClassifierQuestion::Choice { .. } => {
                let Some(choice) = answer.get("choice").and_then(Value::as_str).filter(|_| kind == Some("choice"))
                else {
                    return Err(Failure::Message(format!("{label} did not return a choice answer for {id}")));
                };
                ClassifierAnswer::Choice {
                    choice: choice.to_owned(),
                    probabilities: probabilities(label, answer.get("probabilities"), id)?,
                    confidence: JsNumber(number("confidence", format!("confidence for {id}"))?),
                }
            }
            ClassifierQuestion::Score { .. } => {
                if kind != Some("score") {
                    return Err(Failure::Message(format!("{label} did not return a score answer for {id}")));
                }
                ClassifierAnswer::Score {
                    score: JsNumber(number("score", format!("score for {id}"))?),
                    confidence: JsNumber(number("confidence", format!("confidence for {id}"))?),
                }
            }
            ClassifierQuestion::Bool { .. } => {
                if kind != Some("noul") {
                    return Err(Failure::Message(format!("{label} did not return a bool answer for {id}")));
                }
                ClassifierAnswer::Bool { probability: JsNumber(number("noul", format!("probability for {id}"))?) }
            }
        };
        out.insert(id.clone(), parsed);
    }
    Ok(out)
}

/// Runs one System One classification over `transport` (pi's `classifySystemOne`).
pub async fn classify(
    transport: Transport,
    model: &ClassifierModel,
    context: &ClassifierContext,
    options: &ClassifyOptions,
) -> ClassifierResult {
    let mut output = ClassifierResult::new(model);
    if let Err(failure) = run(transport, model, context, options, &mut output).await {
        let timestamp = output.timestamp;
        let usage = output.usage.take();
        output = error_result(model, failure.format(&format!("{} error", transport.label())), options.cancelled());
        output.timestamp = timestamp;
        output.usage = usage;
    }
    output
}

async fn run(
    transport: Transport,
    model: &ClassifierModel,
    context: &ClassifierContext,
    options: &ClassifyOptions,
    output: &mut ClassifierResult,
) -> Result<(), Failure> {
    let label = transport.label();
    if model.api != transport.api() {
        return Err(Failure::Message(format!("Unsupported classifier API: {}", model.api)));
    }
    let mut request = wire_request(context);
    let mut extra_headers = Vec::new();
    let images = context.images();
    if !images.is_empty() {
        if !model.supports_images() {
            return Err(Failure::Message(format!("{label} does not support image input for {}", model.id)));
        }
        let (detected, opt_in) = transport.detect(model);
        add_images(label, model, image_input(model, detected), images, &mut request)?;
        let send_opt_in = model
            .compat
            .as_ref()
            .and_then(|c| c.get("sendImageOptInHeader"))
            .and_then(Value::as_bool)
            .unwrap_or(opt_in);
        if send_opt_in {
            extra_headers.push(("TypeSafe-Danger-Zone-Images".to_owned(), Some("true".to_owned())));
        }
    }
    let Some(api_key) = options.api_key.as_deref() else {
        return Err(Failure::Message(format!("No API key for provider: {}", model.provider)));
    };
    extra_headers.extend(options.headers.iter().cloned());
    let post = Post {
        label,
        url: transport.url(model),
        headers: merge_headers(default_headers(Some(api_key)), model.headers.as_ref(), &extra_headers),
        body: to_js_json(&transport.payload(model, request)),
        no_retry_statuses: &[],
    };
    let body = post_json(&post, options).await?;
    let result = transport.output(body)?;
    // Set before parsing answers: a request with malformed answers was still billed.
    output.usage = parse_usage(result.get("usage"), model);
    output.answers = parse_answers(label, result.get("answers"), context)?;
    Ok(())
}
