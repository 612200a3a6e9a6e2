use super::*;
use serde_json::json;

#[test]
fn custom_provider_models_get_defaults_and_the_provider_compat() {
    let text = r#"{"providers":{"ollama":{"baseUrl":"http://localhost:11434/v1","api":"openai-completions",
        "apiKey":"ollama","compat":{"supportsStore":false},"models":[{"id":"qwen","compat":{"x":1}}]}}}"#;
    let config = ModelsConfig::parse("models.json", text).expect("valid");
    let mut catalog = IndexMap::new();
    config.apply(&mut catalog).expect("composes");
    let m = &catalog["ollama"][0];
    assert_eq!((m.name.as_str(), m.context_window, m.max_tokens), ("qwen", 128000, 16384));
    assert_eq!(m.input, vec!["text"]);
    assert_eq!(serde_json::to_value(&m.compat).expect("json"), json!({"supportsStore": false, "x": 1}));
    assert_eq!(m.headers, None);
}

#[test]
fn builtin_provider_base_url_compat_and_overrides() {
    let first = super::super::get_models("groq")[0].clone();
    let text = r#"{"providers":{"groq":{"baseUrl":"https://proxy/v1","compat":{"supportsStore":true},
        "modelOverrides":{"MODEL":{"cost":{"input":9}}}}}}"#;
    let config = ModelsConfig::parse("m.json", &text.replace("MODEL", &first.id)).expect("valid");
    let mut catalog = super::super::builtin_catalog_owned();
    config.apply(&mut catalog).expect("composes");
    let m = &catalog["groq"][0];
    assert_eq!(m.base_url, "https://proxy/v1");
    assert_eq!((m.cost.input, m.cost.output), (9.0, first.cost.output));
    // The provider's compat reaches every built-in chat model, under the model's own.
    assert!(
        catalog["groq"].iter().all(|m| m.compat.as_ref().and_then(|c| c.get("supportsStore")) == Some(&json!(true)))
    );
}

#[test]
fn a_failing_entry_drops_only_its_provider() {
    let text = r#"{"providers":{
        "bad": {"baseUrl": "http://h", "models": [{"id": "m"}]},
        "groq": {"oauth": "radius"},
        "empty": {},
        "good": {"baseUrl": "http://h", "api": "openai-completions", "models": [{"id": "g"}]}}}"#;
    let config = ModelsConfig::parse("m.json", text).expect("schema-valid");
    let mut catalog = super::super::builtin_catalog_owned();
    let errors = config.apply(&mut catalog).expect_err("three providers fail");
    // Built-in providers first (catalog order), then the file's others.
    assert_eq!(
        errors.to_string(),
        "Provider \"groq\": Provider groq: \"baseUrl\" is required when \"oauth\" is set.\n\n\
         Provider \"bad\": Provider bad, model m: no \"api\" specified. Set at provider or model level.\n\n\
         Provider \"empty\": Provider empty: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\"."
    );
    assert!(errors.contains("bad") && !errors.contains("good"));
    assert!(!catalog.contains_key("bad") && !catalog.contains_key("empty"));
    assert_eq!(catalog["good"][0].id, "g");
    assert!(catalog["groq"].is_builtin());
}

#[test]
fn model_headers_are_the_overrides_then_the_definition() {
    let text = r#"{"providers":{"p":{"baseUrl":"u","api":"a","models":[{"id":"m","headers":{"a":"def","b":"def"}}],
        "modelOverrides":{"m":{"headers":{"a":"over","c":"over"}}}}}}"#;
    let config = ModelsConfig::parse("m.json", text).expect("valid");
    let headers = config.providers["p"].model_headers("m").expect("headers");
    assert_eq!(Value::Object(headers), json!({"a": "def", "c": "over", "b": "def"}));
    assert_eq!(config.providers["p"].model_headers("other"), None);
}

#[test]
fn comments_and_trailing_commas_are_read() {
    let text = "\u{feff}{\n // mine\n \"providers\": {\"p\": {\"apiKey\": \"k\",},},\n}";
    let config = ModelsConfig::parse("m.json", text).expect("lenient");
    assert_eq!(config.providers["p"].api_key.as_deref(), Some("k"));
}
