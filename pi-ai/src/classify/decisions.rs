//! OpenAI's Decisions API (`openai-decisions`): `POST <base>/decisions` with
//! `{ model, input, questions }`. The state is sent as JSON text; with images the input is one
//! user message of the state as `input_text` and the images as `input_image` data URLs. `choice`
//! and `score` keep their names, `bool` is a `predicate` whose instructions carry the meanings.

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::shared::{Failure, Post, default_headers, join_url, merge_headers, parse_usage, post_json, required_number};
use super::{ClassifierAnswer, ClassifierContext, ClassifierModel, ClassifierQuestion, ClassifierResult};
use super::{ClassifyOptions, error_result};
use crate::json::{JsNumber, to_js_json};

/// The API id.
pub const API: &str = "openai-decisions";
const LABEL: &str = "OpenAI Decisions";
/// The endpoint accepts at most this many image parts per request.
const MAX_IMAGES: usize = 128;
/// Cloudflare in front of api.openai.com answers 504 for long requests; a retry hits it again.
const NO_RETRY_STATUSES: [u16; 1] = [504];

fn predicate_instructions(instructions: &str, yes: &str, no: &str) -> String {
    let meanings: Vec<String> = [("True", yes), ("False", no)]
        .iter()
        .filter(|(_, m)| !m.is_empty())
        .map(|(w, m)| format!("{w} means: {m}"))
        .collect();
    if meanings.is_empty() { instructions.to_owned() } else { format!("{instructions}\n\n{}", meanings.join("\n")) }
}

fn wire_question(name: &str, question: &ClassifierQuestion) -> Value {
    match question {
        ClassifierQuestion::Choice { instructions, criteria } => {
            let choices: Vec<Value> = criteria
                .iter()
                .map(
                    |(value, d)| {
                        if d.is_empty() { json!({"value": value}) } else { json!({"value": value, "description": d}) }
                    },
                )
                .collect();
            json!({"type": "choice", "name": name, "instructions": instructions, "choices": choices})
        }
        ClassifierQuestion::Score { instructions, criteria } => {
            let levels: Vec<Value> = criteria.iter().map(|label| json!({"label": label})).collect();
            json!({"type": "score", "name": name, "instructions": instructions, "levels": levels})
        }
        ClassifierQuestion::Bool { instructions, criteria } => json!({
            "type": "predicate",
            "name": name,
            "instructions": predicate_instructions(instructions, &criteria.yes, &criteria.no),
        }),
    }
}

fn wire_input(context: &ClassifierContext) -> Result<Value, Failure> {
    let state = to_js_json(&context.state);
    let images = context.images();
    if images.is_empty() {
        return Ok(Value::String(state));
    }
    if images.len() > MAX_IMAGES {
        return Err(Failure::Message(format!("{LABEL} accepts at most {MAX_IMAGES} images, got {}", images.len())));
    }
    let mut content = vec![json!({"type": "input_text", "text": state})];
    content.extend(
        images
            .iter()
            .map(|i| json!({"type": "input_image", "image_url": format!("data:{};base64,{}", i.mime_type, i.data)})),
    );
    Ok(json!([{ "role": "user", "content": content }]))
}

fn fail(text: String) -> Failure {
    Failure::Message(text)
}

fn choice_probabilities(value: Option<&Value>, id: &str) -> Result<IndexMap<String, JsNumber>, Failure> {
    let invalid = || fail(format!("{LABEL} returned invalid probabilities for {id}"));
    let entries = value.and_then(Value::as_array).ok_or_else(invalid)?;
    entries
        .iter()
        .map(|entry| {
            let key = entry.get("value").and_then(Value::as_str).filter(|_| entry.is_object()).ok_or_else(invalid)?;
            let p = required_number(LABEL, entry.get("probability"), &format!("probability for {id}.{key}"))?;
            Ok((key.to_owned(), JsNumber(p)))
        })
        .collect()
}

fn parse_answer(
    id: &str,
    question: &ClassifierQuestion,
    answer: &Map<String, Value>,
) -> Result<ClassifierAnswer, Failure> {
    let kind = answer.get("type").and_then(Value::as_str);
    if kind == Some("refusal") {
        return Err(fail(format!("{LABEL} refused to answer {id}")));
    }
    let number = |field: &str, what: String| required_number(LABEL, answer.get(field), &what).map(JsNumber);
    Ok(match question {
        ClassifierQuestion::Choice { .. } => {
            let Some(choice) = answer.get("choice").and_then(Value::as_str).filter(|_| kind == Some("choice")) else {
                return Err(fail(format!("{LABEL} did not return a choice answer for {id}")));
            };
            ClassifierAnswer::Choice {
                choice: choice.to_owned(),
                probabilities: choice_probabilities(answer.get("probabilities"), id)?,
                confidence: number("confidence", format!("confidence for {id}"))?,
            }
        }
        ClassifierQuestion::Score { .. } => {
            if kind != Some("score") {
                return Err(fail(format!("{LABEL} did not return a score answer for {id}")));
            }
            ClassifierAnswer::Score {
                score: number("score", format!("score for {id}"))?,
                confidence: number("confidence", format!("confidence for {id}"))?,
            }
        }
        ClassifierQuestion::Bool { .. } => {
            if kind != Some("predicate") {
                return Err(fail(format!("{LABEL} did not return a predicate answer for {id}")));
            }
            ClassifierAnswer::Bool { probability: number("probability", format!("probability for {id}"))? }
        }
    })
}

fn parse_answers(
    value: Option<&Value>,
    context: &ClassifierContext,
) -> Result<IndexMap<String, ClassifierAnswer>, Failure> {
    let answers =
        value.and_then(Value::as_array).ok_or_else(|| fail(format!("{LABEL} returned an unexpected response")))?;
    let mut by_name: IndexMap<&str, &Map<String, Value>> = IndexMap::new();
    for answer in answers {
        if let Some(object) = answer.as_object()
            && let Some(name) = object.get("name").and_then(Value::as_str)
        {
            by_name.insert(name, object);
        }
    }
    context
        .questions
        .iter()
        .map(|(id, question)| {
            let answer =
                by_name.get(id.as_str()).ok_or_else(|| fail(format!("{LABEL} did not return an answer for {id}")))?;
            Ok((id.clone(), parse_answer(id, question, answer)?))
        })
        .collect()
}

fn error_message(failure: &Failure) -> String {
    if failure.status() == Some(504) {
        return format!(
            "{LABEL} error (504): the request timed out at the gateway. Very large inputs (above roughly 600K tokens) currently exceed its time limit."
        );
    }
    failure.format(&format!("{LABEL} error"))
}

/// Classification through OpenAI's Decisions API.
pub async fn classify(
    model: &ClassifierModel,
    context: &ClassifierContext,
    options: &ClassifyOptions,
) -> ClassifierResult {
    let mut output = ClassifierResult::new(model);
    if let Err(failure) = run(model, context, options, &mut output).await {
        let (timestamp, usage) = (output.timestamp, output.usage.take());
        output = error_result(model, error_message(&failure), options.cancelled());
        output.timestamp = timestamp;
        output.usage = usage;
    }
    output
}

async fn run(
    model: &ClassifierModel,
    context: &ClassifierContext,
    options: &ClassifyOptions,
    output: &mut ClassifierResult,
) -> Result<(), Failure> {
    if model.api != API {
        return Err(fail(format!("Unsupported classifier API: {}", model.api)));
    }
    let input = wire_input(context)?;
    let questions: Vec<Value> = context.questions.iter().map(|(id, q)| wire_question(id, q)).collect();
    let Some(api_key) = options.api_key.as_deref() else {
        return Err(fail(format!("No API key for provider: {}", model.provider)));
    };
    let post = Post {
        label: LABEL,
        url: join_url(&model.base_url, "decisions"),
        headers: merge_headers(default_headers(Some(api_key)), model.headers.as_ref(), &options.headers),
        body: to_js_json(&json!({"model": model.id, "input": input, "questions": questions})),
        no_retry_statuses: &NO_RETRY_STATUSES,
    };
    let body = post_json(&post, options).await?;
    let Value::Object(body) = body else { return Err(fail(format!("{LABEL} returned an unexpected response"))) };
    // Set before parsing answers: a request with malformed or refused answers was still billed.
    output.usage = parse_usage(body.get("usage"), model);
    output.answers = parse_answers(body.get("answers"), context)?;
    Ok(())
}
