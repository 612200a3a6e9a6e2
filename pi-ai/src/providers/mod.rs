//! Provider implementations, one module per wire protocol.

pub mod anthropic;
pub mod azure_openai_responses;
pub mod bedrock;
pub mod constrained;
pub mod copilot_headers;
pub mod faux;
pub mod google;
pub mod mistral;
pub mod openai_codex_responses;
pub mod openai_completions;
pub mod openai_responses;
pub mod pi_messages;
pub mod typed;

/// Every built-in HTTP API (the ten of pi 1.6.0's `KnownApi`), ready for
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
        std::sync::Arc::new(google::GoogleGenerativeAi),
        std::sync::Arc::new(google::GoogleVertex::default()),
        std::sync::Arc::new(mistral::MistralConversations),
        std::sync::Arc::new(azure_openai_responses::AzureOpenAiResponses),
        std::sync::Arc::new(openai_codex_responses::OpenAiCodexResponses),
        std::sync::Arc::new(bedrock::BedrockConverseStream),
        std::sync::Arc::new(pi_messages::PiMessages),
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
        let offline =
            if model.api == openai_codex_responses::API { openai_codex_responses::OFFLINE_TOKEN } else { "offline" };
        options.api_key = Some(offline.to_owned());
    }
    let request = match model.api.as_str() {
        "openai-completions" => {
            openai_completions::build_request_ref(model, context, &options, &openai_completions::resolve_compat(model))
        }
        "openai-responses" => openai_responses::build_request_ref(model, context, &options),
        "anthropic-messages" => anthropic::build_request_ref(model, context, &options),
        google::GEMINI_API => google::build_request_ref(model, context, &options),
        google::VERTEX_API => google::build_vertex_request_ref(model, context, &options),
        mistral::API => mistral::build_request_ref(model, context, &options),
        azure_openai_responses::API => azure_openai_responses::build_request_ref(model, context, &options),
        openai_codex_responses::API => openai_codex_responses::build_request_ref(model, context, &options),
        "bedrock-converse-stream" => bedrock::build_request_ref(model, context, &options, false).map(|built| built.0),
        "pi-messages" => pi_messages::build_request_ref(model, context, &options),
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
