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
