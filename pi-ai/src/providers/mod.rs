//! Provider implementations, one module per wire protocol.

pub mod anthropic;
pub mod constrained;
pub mod faux;
pub mod openai_completions;
pub mod openai_responses;

/// The three HTTP APIs (`openai-completions`, `openai-responses`, `anthropic-messages`), ready for
/// [`Models::register_api`](crate::registry::Models::register_api).
///
/// ```
/// let mut models = pi_ai::registry::Models::from_catalog();
/// for api in pi_ai::providers::http_apis() {
///     models.register_api(api);
/// }
/// ```
pub fn http_apis() -> Vec<std::sync::Arc<dyn crate::provider::ApiProvider>> {
    vec![
        std::sync::Arc::new(openai_completions::OpenAiCompletions),
        std::sync::Arc::new(openai_responses::OpenAiResponses),
        std::sync::Arc::new(anthropic::AnthropicMessages),
    ]
}

/// The exact JSON body the built-in HTTP provider of `model.api` would send for `context`, built
/// offline by the same code as a real request (payload hook included; no network, and a
/// placeholder key when `options` has none). Use it to snapshot what a provider receives.
///
/// ```
/// use pi_ai::transcript::normalize_context;
/// let model = pi_ai::models::get_model("openai", "gpt-4o-mini").unwrap().clone();
/// let context = normalize_context(pi_ai::Context {
///     messages: vec![pi_ai::Message::User(pi_ai::UserMessage::new("hi").into())],
///     ..Default::default()
/// });
/// let body = futures::executor::block_on(pi_ai::providers::request_body(&model, &context, &Default::default())).unwrap();
/// assert_eq!(body["model"], "gpt-4o-mini");
/// assert!(body.to_string().contains("\"hi\""));
/// ```
pub async fn request_body(
    model: &crate::Model,
    context: &crate::transcript::TranscriptContext,
    options: &crate::options::StreamOptions,
) -> Result<serde_json::Value, String> {
    let mut options = options.clone();
    if options.api_key.as_deref().is_none_or(str::is_empty) {
        options.api_key = Some("offline".to_owned());
    }
    let request = match model.api.as_str() {
        "openai-completions" => {
            openai_completions::build_request_ref(model, context, &options, &openai_completions::resolve_compat(model))
        }
        "openai-responses" => openai_responses::build_request_ref(model, context, &options),
        "anthropic-messages" => anthropic::build_request_ref(model, context, &options),
        other => return Err(format!("No built-in request body for API: {other}")),
    }?;
    let force_stream = model.api == "anthropic-messages";
    let body = crate::http::body::apply_payload_hook(request.body, &options, model, |v| {
        if force_stream {
            anthropic::force_stream(v);
        }
    })
    .await?;
    serde_json::from_slice(&body).map_err(|e| format!("The request body is not JSON: {e}"))
}
