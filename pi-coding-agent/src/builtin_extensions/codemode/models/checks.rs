//! pi's `checkClassifierContext` / `checkImagesContext`: a script's context is checked before the
//! provider sees it, so mistakes fail with the expected shape instead of a provider error.

use serde_json::Value;

use crate::builtin_extensions::codemode::description::codemode_docs_path;

const CLASSIFIER_CONTEXT_SHAPE: &str = "{ state: { ... }, images?: [{ type: \"image\", data: <base64>, mimeType }], questions: { <id>: { type: \"choice\", instructions, criteria: { <label>: <meaning> } } | { type: \"score\", instructions, criteria: [<lowest level>, ..., <highest level>] } | { type: \"bool\", instructions, criteria: { true: <meaning>, false: <meaning> } } } }";

fn is_object(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::Object(_)))
}

fn is_image_block(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("image")
        && block.get("data").is_some_and(Value::is_string)
        && block.get("mimeType").is_some_and(Value::is_string)
}

fn strings<'a>(mut values: impl Iterator<Item = &'a Value>) -> bool {
    let mut any = false;
    let all = values.all(|v| {
        any = true;
        v.is_string()
    });
    any && all
}

/// The context of `models.classify()`, checked.
pub(super) fn check_classifier_context(context: Option<&Value>) -> Result<Value, String> {
    let fail = |problem: String| {
        format!(
            "models.classify() {problem}. Expected context: {CLASSIFIER_CONTEXT_SHAPE}. See \"Classify\" in {}.",
            codemode_docs_path().display()
        )
    };
    let Some(Value::Object(object)) = context else {
        return Err(fail(format!("expects a context object as its second argument, got {}", describe_value(context))));
    };
    let state = object.get("state");
    if !is_object(state) {
        return Err(fail(format!("context.state must be an object, got {}", describe_value(state))));
    }
    if let Some(images) = object.get("images") {
        let Value::Array(images) = images else {
            return Err(fail(format!("context.images must be an array, got {}", describe_value(Some(images)))));
        };
        for (index, image) in images.iter().enumerate() {
            if !is_image_block(image) {
                return Err(fail(format!(
                    "context.images[{index}] must be an image block, got {}",
                    describe_value(Some(image))
                )));
            }
        }
    }
    let questions = object.get("questions");
    let Some(Value::Object(questions)) = questions.filter(|q| q.as_object().is_some_and(|o| !o.is_empty())) else {
        return Err(fail(format!(
            "context.questions must map question IDs to questions, got {}",
            describe_value(questions)
        )));
    };
    for (id, question) in questions {
        let at = format!("context.questions.{id}");
        let Value::Object(question) = question else {
            return Err(fail(format!("{at} must be a question object, got {}", describe_value(Some(question)))));
        };
        if !question.get("instructions").is_some_and(Value::is_string) {
            return Err(fail(format!("{at}.instructions must be a string")));
        }
        let criteria = question.get("criteria");
        match question.get("type").and_then(Value::as_str) {
            Some("choice") => {
                if !criteria.and_then(Value::as_object).is_some_and(|c| strings(c.values())) {
                    return Err(fail(format!(
                        "{at} is a \"choice\" question, so criteria must map each label to its meaning"
                    )));
                }
            }
            Some("score") => {
                if !criteria.and_then(Value::as_array).is_some_and(|c| strings(c.iter())) {
                    return Err(fail(format!(
                        "{at} is a \"score\" question, so criteria must list the levels as strings, lowest first"
                    )));
                }
            }
            Some("bool") => {
                let ok = criteria.is_some_and(|c| {
                    c.get("true").is_some_and(Value::is_string) && c.get("false").is_some_and(Value::is_string)
                });
                if !ok {
                    return Err(fail(format!(
                        "{at} is a \"bool\" question, so criteria must be {{ true: string, false: string }}"
                    )));
                }
            }
            _ => {
                let kind = question.get("type").map(Value::to_string).unwrap_or_else(|| "undefined".into());
                return Err(fail(format!("{at}.type must be \"choice\", \"score\", or \"bool\", got {kind}")));
            }
        }
    }
    Ok(Value::Object(object.clone()))
}

/// The context of `models.generateImages()`, checked.
pub(super) fn check_images_context(context: Option<&Value>) -> Result<Value, String> {
    let fail = |problem: String| {
        format!(
            "models.generateImages() {problem}. Expected context: {{ input: [{{ type: \"text\", text: <prompt> }}, ...optional {{ type: \"image\", data: <base64>, mimeType }} references] }}. See \"Generate images\" in {}.",
            codemode_docs_path().display()
        )
    };
    let Some(Value::Object(object)) = context else {
        return Err(fail(format!("expects a context object as its second argument, got {}", describe_value(context))));
    };
    let input = object.get("input");
    let Some(Value::Array(blocks)) = input.filter(|i| i.as_array().is_some_and(|a| !a.is_empty())) else {
        return Err(fail(format!("context.input must be a non-empty array of blocks, got {}", describe_value(input))));
    };
    for (index, block) in blocks.iter().enumerate() {
        let text = block.get("type").and_then(Value::as_str) == Some("text")
            && block.get("text").is_some_and(Value::is_string);
        if !text && !is_image_block(block) {
            return Err(fail(format!(
                "context.input[{index}] must be a text or image block, got {}",
                describe_value(Some(block))
            )));
        }
    }
    Ok(Value::Object(object.clone()))
}

/// pi's `describeValue`: `undefined`, `a string`, `an array`, or the keys (`{ prompt }`).
pub(crate) fn describe_value(value: Option<&Value>) -> String {
    match value {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::Array(a)) => if a.is_empty() { "an empty array" } else { "an array" }.into(),
        Some(Value::Object(o)) if o.is_empty() => "{}".into(),
        Some(Value::Object(o)) => {
            let keys: Vec<&str> = o.keys().take(6).map(String::as_str).collect();
            format!("{{ {}{} }}", keys.join(", "), if o.len() > 6 { ", ..." } else { "" })
        }
        Some(Value::String(_)) => "a string".into(),
        Some(Value::Number(_)) => "a number".into(),
        Some(Value::Bool(_)) => "a boolean".into(),
    }
}
