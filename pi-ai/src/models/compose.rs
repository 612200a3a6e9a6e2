//! pi's composition of one provider's `models.json` entry with its models (`provider-composer.js`):
//! [`apply_models_json`] (`applyModelsJson`: the entry's `baseUrl` and `compat` over every model,
//! its `models` added or replacing by id, each from `modelFromJson` with the api and baseUrl of
//! `findModelDefaults`), then [`apply_model_overrides`] (`applyModelOverride`, the topmost layer).
//! Models are pi's JSON (`Model` serialised); errors are pi's messages, naming the provider.

use serde_json::{Map, Value};

/// A model's type: `chat` when the entry names none (pi's `getModelType`).
fn model_type(model: &Value) -> &str {
    model.get("type").and_then(Value::as_str).unwrap_or("chat")
}

/// A non-empty string field (pi tests these for truthiness).
fn text<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// A JavaScript-truthy field.
fn truthy(object: &Value, key: &str) -> bool {
    match object.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(_) => true,
    }
}

/// `{ ...base, ...over }` of two optional objects (a value that is not an object adds nothing).
fn spread(base: Option<&Value>, over: Option<&Value>) -> Value {
    let mut merged = base.and_then(Value::as_object).cloned().unwrap_or_default();
    if let Some(Value::Object(over)) = over {
        merged.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    Value::Object(merged)
}

/// Sets `key` to `value`, or removes it for `None` (JavaScript's `undefined`).
fn set(model: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    match value {
        Some(v) => {
            model.insert(key.to_owned(), v);
        }
        None => {
            model.remove(key);
        }
    }
}

/// pi's `mergeCompat`: `override` over `base`, with the nested routing and chat-template objects
/// merged one level deeper.
pub fn merge_compat(base: Option<&Value>, over: Option<&Value>) -> Option<Value> {
    let Some(over) = over else { return base.cloned() };
    let mut merged = spread(base, Some(over));
    for key in ["openRouterRouting", "vercelGatewayRouting", "chatTemplateKwargs", "chatTemplateArgs"] {
        let (b, o) = (base.and_then(|b| b.get(key)), over.get(key));
        if b.is_some_and(Value::is_object) || o.is_some_and(Value::is_object) {
            merged[key] = spread(b, o);
        }
    }
    Some(merged)
}

/// pi's `mergeInputLimits`.
fn merge_input_limits(base: Option<&Value>, over: Option<&Value>) -> Option<Value> {
    let Some(over) = over else { return base.cloned() };
    let mut merged = spread(base, Some(over));
    let base_images = base.and_then(|b| b.get("images"));
    let images = match over.get("images") {
        Some(images) => {
            let mut combined = spread(base_images, Some(images));
            let base_resize = base_images.and_then(|i| i.get("resize"));
            let resize = match images.get("resize") {
                Some(resize) => Some(spread(base_resize, Some(resize))),
                None => base_resize.cloned(),
            };
            if let Value::Object(map) = &mut combined {
                set(map, "resize", resize);
            }
            Some(combined)
        }
        None => base_images.cloned(),
    };
    if let Value::Object(map) = &mut merged {
        set(map, "images", images);
    }
    Some(merged)
}

/// pi's `mergeSamplingParamsByThinkingLevel`: each level of `override` merged over the base's.
fn merge_sampling_by_level(base: Option<&Value>, over: Option<&Value>) -> Option<Value> {
    let Some(over) = over else { return base.cloned() };
    let mut merged = spread(base, None);
    for level in ["off", "minimal", "low", "medium", "high", "xhigh", "max"] {
        if let Some(params) = over.get(level).filter(|p| !p.is_null()) {
            merged[level] = spread(base.and_then(|b| b.get(level)), Some(params));
        }
    }
    Some(merged)
}

/// pi's `applyModelOverride`: a `modelOverrides` entry over one model.
pub fn apply_model_override(model: &mut Map<String, Value>, over: &Value) {
    let shallow = |model: &Map<String, Value>, key: &str| match over.get(key) {
        Some(o) => Some(spread(model.get(key), Some(o))),
        None => model.get(key).cloned(),
    };
    for key in ["name", "reasoning", "input", "contextWindow", "maxTokens"] {
        if let Some(v) = over.get(key).filter(|v| !v.is_null()) {
            model.insert(key.to_owned(), v.clone());
        }
    }
    let thinking = shallow(model, "thinkingLevelMap");
    set(model, "thinkingLevelMap", thinking);
    let limits = merge_input_limits(model.get("inputLimits"), over.get("inputLimits"));
    set(model, "inputLimits", limits);
    if let Some(cost) = over.get("cost") {
        let old = model.get("cost").cloned().unwrap_or(Value::Null);
        let mut merged = Map::new();
        for key in ["input", "output", "cacheRead", "cacheWrite", "tiers"] {
            let value = cost.get(key).filter(|v| !v.is_null()).or_else(|| old.get(key));
            if let Some(v) = value {
                merged.insert(key.to_owned(), v.clone());
            }
        }
        model.insert("cost".into(), Value::Object(merged));
    }
    let cache = shallow(model, "promptCache");
    set(model, "promptCache", cache);
    let sampling = shallow(model, "samplingParams");
    set(model, "samplingParams", sampling);
    let by_level =
        merge_sampling_by_level(model.get("samplingParamsByThinkingLevel"), over.get("samplingParamsByThinkingLevel"));
    set(model, "samplingParamsByThinkingLevel", by_level);
    let compat = merge_compat(model.get("compat"), over.get("compat"));
    set(model, "compat", compat);
}

/// pi's `modelOverrides` layer: each chat model with an entry gets it applied.
pub fn apply_model_overrides(models: &mut [Value], config: &Value) {
    let Some(Value::Object(overrides)) = config.get("modelOverrides") else { return };
    for model in models.iter_mut().filter(|m| model_type(m) == "chat") {
        let over = model.get("id").and_then(Value::as_str).and_then(|id| overrides.get(id)).cloned();
        if let (Some(over), Value::Object(map)) = (over, &mut *model) {
            apply_model_override(map, &over);
        }
    }
}

/// pi's `findModelDefaults`: among the chat models, the one with the id, else one of the api,
/// else an `openai-completions` one, else the first.
pub fn find_model_defaults<'a>(models: &'a [Value], id: &str, api: Option<&str>) -> Option<&'a Value> {
    let chat: Vec<&Value> = models.iter().filter(|m| model_type(m) == "chat").collect();
    let with =
        |key: &str, value: &str| chat.iter().copied().find(|m| m.get(key).and_then(Value::as_str) == Some(value));
    with("id", id)
        .or_else(|| api.and_then(|a| with("api", a)))
        .or_else(|| with("api", "openai-completions"))
        .or_else(|| chat.first().copied())
}

/// pi's `modelFromJson`: a `models` entry completed with defaults.
fn model_from_json(
    provider: &str,
    definition: &Value,
    config: &Value,
    defaults: Option<&Value>,
) -> Result<Value, String> {
    let id = definition.get("id").and_then(Value::as_str).unwrap_or_default();
    let Some(api) =
        text(definition, "api").or_else(|| text(config, "api")).or_else(|| defaults.and_then(|d| text(d, "api")))
    else {
        return Err(format!("Provider {provider}, model {id}: no \"api\" specified. Set at provider or model level."));
    };
    let Some(base_url) = text(definition, "baseUrl")
        .or_else(|| text(config, "baseUrl"))
        .or_else(|| defaults.and_then(|d| text(d, "baseUrl")))
    else {
        return Err(format!("Provider {provider}: \"baseUrl\" is required when defining custom models."));
    };
    for key in ["contextWindow", "maxTokens"] {
        if definition.get(key).and_then(Value::as_f64).is_some_and(|n| n <= 0.0) {
            return Err(format!("Provider {provider}, model {id}: invalid {key}"));
        }
    }
    let field = |key: &str| definition.get(key).filter(|v| !v.is_null()).cloned();
    let mut model = Map::new();
    model.insert("id".into(), Value::String(id.to_owned()));
    model.insert("name".into(), field("name").unwrap_or_else(|| Value::String(id.to_owned())));
    model.insert("api".into(), Value::String(api.to_owned()));
    model.insert("provider".into(), Value::String(provider.to_owned()));
    model.insert("baseUrl".into(), Value::String(base_url.to_owned()));
    model.insert("reasoning".into(), field("reasoning").unwrap_or(Value::Bool(false)));
    set(&mut model, "thinkingLevelMap", field("thinkingLevelMap"));
    model.insert("input".into(), field("input").unwrap_or_else(|| serde_json::json!(["text"])));
    set(&mut model, "inputLimits", field("inputLimits"));
    let zero = serde_json::json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0});
    model.insert("cost".into(), field("cost").unwrap_or(zero));
    set(&mut model, "promptCache", field("promptCache"));
    model.insert("contextWindow".into(), field("contextWindow").unwrap_or(Value::from(128000)));
    model.insert("maxTokens".into(), field("maxTokens").unwrap_or(Value::from(16384)));
    set(&mut model, "samplingParams", field("samplingParams"));
    set(&mut model, "samplingParamsByThinkingLevel", field("samplingParamsByThinkingLevel"));
    set(&mut model, "compat", merge_compat(config.get("compat"), definition.get("compat")));
    Ok(Value::Object(model))
}

/// pi's `applyModelsJson`: `base` (the provider's models) with its `models.json` entry `config`
/// applied, or the entry's error (`Provider X: …`).
pub fn apply_models_json(provider: &str, base: Vec<Value>, config: &Value) -> Result<Vec<Value>, String> {
    if truthy(config, "oauth") && !truthy(config, "baseUrl") {
        return Err(format!("Provider {provider}: \"baseUrl\" is required when \"oauth\" is set."));
    }
    let listed = config.get("models").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let overrides = config.get("modelOverrides").and_then(Value::as_object).is_some_and(|o| !o.is_empty());
    let sets_something = !listed.is_empty()
        || ["baseUrl", "headers", "compat", "apiKey", "oauth"].iter().any(|k| truthy(config, k))
        || overrides
        || config.get("authHeader").is_some();
    if !sets_something {
        return Err(format!(
            "Provider {provider}: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\"."
        ));
    }
    let radius = config.get("oauth").and_then(Value::as_str) == Some("radius");
    let base_url = if radius { None } else { text(config, "baseUrl") };
    let compat = config.get("compat").filter(|c| truthy(config, "compat") && c.is_object());
    let mut models: Vec<Value> = base
        .into_iter()
        .map(|mut model| {
            let kind = model_type(&model).to_owned();
            if let Value::Object(map) = &mut model {
                if let Some(url) = base_url {
                    map.insert("baseUrl".into(), Value::String(url.to_owned()));
                }
                if kind == "chat" {
                    let merged = merge_compat(map.get("compat"), compat);
                    set(map, "compat", merged);
                } else if kind == "classifier" && compat.is_some() {
                    map.insert("compat".into(), spread(map.get("compat"), compat));
                }
            }
            model
        })
        .collect();
    for definition in listed {
        let id = definition.get("id").and_then(Value::as_str).unwrap_or_default();
        let existing =
            models.iter().position(|m| model_type(m) == "chat" && m.get("id").and_then(Value::as_str) == Some(id));
        let api = text(definition, "api").or_else(|| text(config, "api"));
        let model = model_from_json(provider, definition, config, find_model_defaults(&models, id, api))?;
        match existing {
            Some(i) => models[i] = model,
            None => models.push(model),
        }
    }
    Ok(models)
}

/// Whether applying `config` changes the provider's models at all (a key-only or headers-only
/// entry leaves them as they are, so a built-in list need not be read).
pub fn changes_models(config: &Value) -> bool {
    let overrides = config.get("modelOverrides").and_then(Value::as_object).is_some_and(|o| !o.is_empty());
    let listed = config.get("models").and_then(Value::as_array).is_some_and(|m| !m.is_empty());
    let radius = config.get("oauth").and_then(Value::as_str) == Some("radius");
    listed || overrides || truthy(config, "compat") || (truthy(config, "baseUrl") && !radius)
}

#[cfg(test)]
#[path = "compose_tests.rs"]
mod tests;
