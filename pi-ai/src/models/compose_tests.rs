use super::*;
use serde_json::json;

#[test]
fn merge_compat_merges_the_nested_objects_one_level() {
    let base = json!({"a": 1, "openRouterRouting": {"only": ["x"], "order": ["y"]}, "chatTemplateKwargs": {"k": 1}});
    let over = json!({"b": 2, "openRouterRouting": {"order": ["z"]}, "vercelGatewayRouting": {"v": 1}});
    let merged = merge_compat(Some(&base), Some(&over)).expect("merged");
    assert_eq!(
        merged,
        json!({"a": 1, "openRouterRouting": {"only": ["x"], "order": ["z"]}, "chatTemplateKwargs": {"k": 1},
               "b": 2, "vercelGatewayRouting": {"v": 1}})
    );
    assert_eq!(merge_compat(Some(&base), None), Some(base.clone()));
    assert_eq!(merge_compat(None, None), None);
}

#[test]
fn a_model_override_merges_as_pi_does() {
    let mut model = json!({
        "id": "m", "name": "M", "reasoning": false, "input": ["text"],
        "cost": {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4},
        "contextWindow": 10, "maxTokens": 5,
        "thinkingLevelMap": {"low": "l", "high": "h"},
        "inputLimits": {"maxRequestBytes": 9, "images": {"maxPerMessage": 2, "resize": {"maxWidth": 5, "maxHeight": 6}}},
        "promptCache": {"short": 1}, "samplingParams": {"t": 1},
        "samplingParamsByThinkingLevel": {"low": {"a": 1}, "high": {"b": 1}},
        "compat": {"x": 1, "chatTemplateArgs": {"p": 1}}, "extra": true
    });
    let over = json!({
        "name": "N", "cost": {"output": 20, "tiers": []}, "thinkingLevelMap": {"high": null},
        "inputLimits": {"images": {"resize": {"maxWidth": 50}}}, "promptCache": {"long": 2},
        "samplingParams": {"u": 2}, "samplingParamsByThinkingLevel": {"low": {"c": 3}, "max": {"d": 4}},
        "compat": {"y": 2, "chatTemplateArgs": {"q": 2}}, "contextWindow": 100
    });
    let Value::Object(map) = &mut model else { unreachable!("object") };
    apply_model_override(map, &over);
    assert_eq!(
        model,
        json!({
            "id": "m", "name": "N", "reasoning": false, "input": ["text"],
            "cost": {"input": 1, "output": 20, "cacheRead": 3, "cacheWrite": 4, "tiers": []},
            "contextWindow": 100, "maxTokens": 5,
            "thinkingLevelMap": {"low": "l", "high": null},
            "inputLimits": {"maxRequestBytes": 9, "images": {"maxPerMessage": 2, "resize": {"maxWidth": 50, "maxHeight": 6}}},
            "promptCache": {"short": 1, "long": 2}, "samplingParams": {"t": 1, "u": 2},
            "samplingParamsByThinkingLevel": {"low": {"a": 1, "c": 3}, "high": {"b": 1}, "max": {"d": 4}},
            "compat": {"x": 1, "chatTemplateArgs": {"p": 1, "q": 2}, "y": 2}, "extra": true
        })
    );
}

#[test]
fn custom_models_take_api_and_base_url_from_find_model_defaults() {
    let base = vec![
        json!({"id": "a", "api": "anthropic-messages", "baseUrl": "https://a"}),
        json!({"id": "b", "api": "openai-completions", "baseUrl": "https://b"}),
        json!({"id": "c", "api": "openai-responses", "baseUrl": "https://c", "type": "image"}),
    ];
    let config = json!({"models": [{"id": "a", "name": "A2"}, {"id": "new"}, {"id": "r", "api": "openai-responses"}]});
    let models = apply_models_json("p", base, &config).expect("composes");
    let summary: Vec<(String, String, String)> = models
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap_or_default().into(),
                m["api"].as_str().unwrap_or_default().into(),
                m["baseUrl"].as_str().unwrap_or_default().into(),
            )
        })
        .collect();
    let expected = [
        ("a", "anthropic-messages", "https://a"), // same id: replaced in place
        ("b", "openai-completions", "https://b"),
        ("c", "openai-responses", "https://c"),
        ("new", "openai-completions", "https://b"), // no api: the openai-completions model
        ("r", "openai-responses", "https://b"),     // no chat model of its api: openai-completions' url
    ];
    let expected: Vec<(String, String, String)> =
        expected.iter().map(|(a, b, c)| ((*a).into(), (*b).into(), (*c).into())).collect();
    assert_eq!(summary, expected);
    assert_eq!(models[0]["name"], "A2");
    assert_eq!(models[3]["contextWindow"], 128000);
}

#[test]
fn entry_errors_are_pis() {
    let run = |config: Value| apply_models_json("p", Vec::new(), &config).expect_err("fails");
    assert_eq!(run(json!({"oauth": "radius"})), "Provider p: \"baseUrl\" is required when \"oauth\" is set.");
    assert_eq!(
        run(json!({"name": "x"})),
        "Provider p: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\"."
    );
    assert_eq!(
        run(json!({"baseUrl": "u", "models": [{"id": "m"}]})),
        "Provider p, model m: no \"api\" specified. Set at provider or model level."
    );
    assert_eq!(
        run(json!({"api": "a", "models": [{"id": "m"}]})),
        "Provider p: \"baseUrl\" is required when defining custom models."
    );
    assert!(apply_models_json("p", Vec::new(), &json!({"authHeader": false})).is_ok());
}

#[test]
fn a_radius_entry_keeps_the_models_base_url() {
    let base = vec![json!({"id": "a", "api": "x", "baseUrl": "https://a"})];
    let models = apply_models_json("p", base, &json!({"oauth": "radius", "baseUrl": "https://r"})).expect("ok");
    assert_eq!(models[0]["baseUrl"], "https://a");
}
