//! `azure-openai-responses`: the Responses API on Azure OpenAI (`POST {base}/responses?api-version=…`
//! with an `api-key` header), built by the `openai-responses` code with Azure's differences.
//!
//! - Endpoint ([`crate::models::resolve_azure_base_url`]): `AZURE_OPENAI_BASE_URL`, else
//!   `https://{AZURE_OPENAI_RESOURCE_NAME}.openai.azure.com/openai/v1`, else the model's `baseUrl`
//!   (Azure hosts normalised to `/openai/v1`); `AZURE_OPENAI_API_VERSION` (default `v1`).
//! - The request's `model` is the deployment: the model's entry in
//!   `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (`model=deployment,…`), else its id.
//! - Tools carry `strict` by default (`supportsStrictMode` defaults to true), there is no
//!   `prompt_cache_retention` and no session headers; errors read `Azure OpenAI API error (…)`.

use crate::http::body::BodyContext;
use crate::http::{ErrorStyle, HeaderMap, HttpRequest, ProviderOutput, StreamContext, stream_sse, user_agent};
use crate::options::StreamOptions;
use crate::provider::ApiProvider;
use crate::providers::openai_responses::{self, ResponsesStream};
use crate::stream::AssistantMessageEventStream;
use crate::transcript::TranscriptContext;
use crate::types::Model;

/// The API id.
pub const API: &str = "azure-openai-responses";
/// pi's default `api-version`.
pub const DEFAULT_API_VERSION: &str = "v1";

/// The `azure-openai-responses` provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct AzureOpenAiResponses;

impl ApiProvider for AzureOpenAiResponses {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
        let out = ProviderOutput::new(model);
        let env = |name: &str| std::env::var(name).ok();
        let handler =
            ResponsesStream::new().with_grammar_tools(openai_responses::grammar_tool_properties(model, &context));
        let context = BodyContext::Owned(std::sync::Arc::new(context));
        let request = build_request_from(model, context, &options, &env);
        let ctx = StreamContext { model: model.clone(), options };
        stream_sse(ctx, out, request, ErrorStyle::OpenAiResponses("Azure OpenAI".to_owned()), handler)
    }
}

/// [`build_request_with_env`] with the process environment.
pub fn build_request_ref(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    build_request_with_env(model, context, options, &|name: &str| std::env::var(name).ok())
}

/// Builds the complete request (URL, headers, body) with `env` for Azure's variables.
pub fn build_request_with_env(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<HttpRequest, String> {
    build_request_from(model, BodyContext::Borrowed(context), options, env)
}

/// [`build_request_with_env`] from a borrowed transcript (the body built whole) or one the
/// request owns (a large body written into the connection as it is produced).
fn build_request_from(
    model: &Model,
    context: BodyContext<'_>,
    options: &StreamOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<HttpRequest, String> {
    let key = options
        .api_key
        .clone()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
    let base = crate::models::resolve_azure_base_url(&model.base_url, env)?;
    let api_version =
        env("AZURE_OPENAI_API_VERSION").filter(|v| !v.is_empty()).unwrap_or_else(|| DEFAULT_API_VERSION.to_owned());
    let deployment = crate::models::resolve_azure_deployment(&model.id, env);
    let mut compat = openai_responses::resolve_compat(model);
    compat.supports_strict_mode = model
        .compat
        .as_ref()
        .and_then(|c| c.get("supportsStrictMode"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(true);
    compat.supports_long_cache_retention = false;
    compat.supports_max_output_tokens = true;
    let declared = crate::transcript::declared_tools(context.get().messages());
    crate::providers::constrained::check_tools(&declared, compat.supports_strict_mode, None)?;
    let size_hint = crate::http::body::size_hint_for(context.get().messages().len());
    let (owned_model, owned_options) = (model.clone(), options.clone());
    let memo = crate::http::body::HandoffMemo::default();
    let (body, source) = crate::http::body::request_body(&context, size_hint, move |context, out, flush| {
        let supports_mid = compat.supports_mid_convo_system_messages;
        let head = crate::http::body::collapsed_head(context.messages(), supports_mid);
        let view = crate::http::body::resolved_view(context.messages(), &head, supports_mid);
        let handed_off = memo.handed_off(&view, || openai_responses::handoff_plan(&owned_model, &view));
        let (mut fields, items) =
            openai_responses::build_body_parts(&owned_model, &view, &handed_off, &owned_options, &compat);
        fields.insert("model".into(), serde_json::Value::String(deployment.clone()));
        crate::http::body::encode_body_flushing(&fields, "input", &items, out, flush)
    })?;
    let mut headers = HeaderMap::new();
    headers.set("Accept", "application/json");
    headers.set("Content-Type", "application/json");
    headers.set("User-Agent", user_agent());
    if let Some(h) = &model.headers {
        headers.merge_json(h);
    }
    headers.merge(options.headers.iter().map(|(k, v)| (k.as_str(), v.clone())));
    headers.set("api-key", key);
    let url = format!("{}/responses?api-version={api_version}", base.trim_end_matches('/'));
    Ok(HttpRequest { url, headers, body, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::normalize_context;

    #[test]
    fn deployment_and_endpoint_from_the_environment() {
        let model = Model { id: "gpt-5".into(), api: API.into(), provider: "azure".into(), ..Default::default() };
        let context = normalize_context(crate::Context::default());
        let options = StreamOptions { api_key: Some("k".into()), ..Default::default() };
        let env = |n: &str| match n {
            "AZURE_OPENAI_RESOURCE_NAME" => Some("res".to_owned()),
            "AZURE_OPENAI_DEPLOYMENT_NAME_MAP" => Some("gpt-5=prod".to_owned()),
            "AZURE_OPENAI_API_VERSION" => Some("2025-04-01-preview".to_owned()),
            _ => None,
        };
        let request = build_request_with_env(&model, &context, &options, &env).unwrap();
        assert_eq!(request.url, "https://res.openai.azure.com/openai/v1/responses?api-version=2025-04-01-preview");
        assert!(String::from_utf8_lossy(&request.body).starts_with(r#"{"model":"prod","#));
        assert_eq!(request.headers.get("api-key"), Some("k"));
        let none = |_: &str| None;
        assert!(
            build_request_with_env(&model, &context, &options, &none)
                .unwrap_err()
                .starts_with("Azure OpenAI base URL is required.")
        );
    }
}
