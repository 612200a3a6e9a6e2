//! `google-generative-ai` (the Gemini API) and `google-vertex` (Vertex AI): pi's `google-shared`
//! conversion and stream loop, sent as the `@google/genai` SDK sends them
//! (`POST …/models/{id}:streamGenerateContent?alt=sse`).
//!
//! - Request: the leading system prompt (everything collapsed into it: Gemini has no
//!   mid-conversation system messages) as `systemInstruction`, the `contents` list, the current tools
//!   as `functionDeclarations` (`parametersJsonSchema`, `const` as one-value `enum`), the
//!   function-calling mode, and `generationConfig` with the thinking budget or level.
//! - Response: [`GoogleStream`]: text and thought parts become text and thinking blocks (signatures
//!   kept), function calls arrive whole, `finishReason` and `usageMetadata` set the stop reason and
//!   usage.
//! - Vertex authenticates with an API key (`x-goog-api-key`) or, without one, Application Default
//!   Credentials ([`adc`]) with `GOOGLE_CLOUD_PROJECT`/`GCLOUD_PROJECT` and `GOOGLE_CLOUD_LOCATION`.

pub mod adc;
mod request;
mod stream;
mod wire;

pub use request::{
    convert_tools, function_calling_mode, resolve_level, rewrite_const_as_enum, sanitize_for_open_api, supports_strict,
    thinking_config, uses_thinking_level,
};
pub use stream::{GoogleStream, map_stop_reason};
pub use wire::{Flavor, normalize_tool_call_id, requires_tool_call_id};

use std::sync::Arc;

use crate::http::body::BodyContext;
use crate::http::{
    BodySource, ErrorStyle, HeaderMap, HttpRequest, ProviderOutput, StreamContext, stream_sse, user_agent,
};
use crate::options::StreamOptions;
use crate::provider::ApiProvider;
use crate::stream::AssistantMessageEventStream;
use crate::transcript::TranscriptContext;
use crate::types::Model;

/// The Gemini API's id.
pub const GEMINI_API: &str = "google-generative-ai";
/// Vertex AI's id.
pub const VERTEX_API: &str = "google-vertex";
/// The key pi's environment lookup puts in place of a Vertex API key when ADC is configured.
pub const VERTEX_CREDENTIALS_MARKER: &str = "gcp-vertex-credentials";

/// The `google-generative-ai` provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct GoogleGenerativeAi;

/// The `google-vertex` provider. ADC reads the process environment unless
/// [`GoogleVertex::with_env`] gave it one.
#[derive(Clone, Debug, Default)]
pub struct GoogleVertex {
    env: Option<std::sync::Arc<std::collections::HashMap<String, String>>>,
}

impl GoogleVertex {
    /// A provider that resolves `GOOGLE_APPLICATION_CREDENTIALS`, `GOOGLE_CLOUD_PROJECT`,
    /// `GCLOUD_PROJECT`, `GOOGLE_CLOUD_LOCATION` and `CLOUDSDK_CONFIG` from `vars` only.
    pub fn with_env(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        GoogleVertex { env: Some(std::sync::Arc::new(vars.into_iter().collect())) }
    }
}

impl ApiProvider for GoogleGenerativeAi {
    fn api(&self) -> &str {
        GEMINI_API
    }

    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
        let out = ProviderOutput::new(model);
        let request = build_request_from(model, BodyContext::Owned(Arc::new(context)), &options);
        let ctx = StreamContext { model: model.clone(), options };
        stream_sse(ctx, out, request, ErrorStyle::Google, GoogleStream::new("Google"))
    }
}

impl ApiProvider for GoogleVertex {
    fn api(&self) -> &str {
        VERTEX_API
    }

    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
        let out = ProviderOutput::new(model);
        let model = model.clone();
        let context = Arc::new(context);
        if vertex_api_key(&options).is_some() {
            let request = vertex_request_from(&model, BodyContext::Owned(context.clone()), &options, None);
            let ctx = StreamContext { model, options };
            return stream_sse(ctx, out, request, ErrorStyle::Google, GoogleStream::new("Google Vertex"));
        }
        let vars = self.env.clone();
        let request_env = options.env.clone();
        AssistantMessageEventStream::new(async_stream::stream! {
            // The request's provider environment (a stored credential's `env`) first.
            let env = |name: &str| match request_env.as_ref().and_then(|e| e.get(name)) {
                Some(value) => Some(value.clone()),
                None => match &vars {
                    Some(vars) => vars.get(name).cloned(),
                    None => std::env::var(name).ok(),
                },
            };
            let request = match vertex_target(&env) {
                Err(text) => Err(text),
                Ok(target) if options.is_cancelled() => vertex_request_from(&model, BodyContext::Owned(context.clone()), &options, Some((target, None))),
                Ok(target) => match adc::access_token(&env).await {
                    Ok(token) => vertex_request_from(&model, BodyContext::Owned(context.clone()), &options, Some((target, Some(token)))),
                    Err(text) => Err(text),
                },
            };
            let ctx = StreamContext { model, options };
            let mut inner = stream_sse(ctx, out, request, ErrorStyle::Google, GoogleStream::new("Google Vertex"));
            while let Some(event) = futures::StreamExt::next(&mut inner).await {
                yield event;
            }
        })
    }
}

/// The project and location of an ADC request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexTarget {
    /// `GOOGLE_CLOUD_PROJECT` or `GCLOUD_PROJECT`.
    pub project: String,
    /// `GOOGLE_CLOUD_LOCATION`.
    pub location: String,
}

/// pi's `resolveProject` and `resolveLocation`.
pub fn vertex_target(env: &dyn Fn(&str) -> Option<String>) -> Result<VertexTarget, String> {
    let get = |n: &str| env(n).filter(|v| !v.is_empty());
    let project = get("GOOGLE_CLOUD_PROJECT").or_else(|| get("GCLOUD_PROJECT")).ok_or_else(|| {
        "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass project in options."
            .to_owned()
    })?;
    let location = get("GOOGLE_CLOUD_LOCATION").ok_or_else(|| {
        "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options.".to_owned()
    })?;
    Ok(VertexTarget { project, location })
}

/// pi's `resolveApiKey` for Vertex: a real key, not the ADC marker or a `<placeholder>`.
pub fn vertex_api_key(options: &StreamOptions) -> Option<&str> {
    let key = options.api_key.as_deref()?.trim();
    let placeholder =
        key.len() > 2 && key.starts_with('<') && key.ends_with('>') && !key[1..key.len() - 1].contains(['<', '>']);
    (!key.is_empty() && key != VERTEX_CREDENTIALS_MARKER && !placeholder).then_some(key)
}

fn common_headers(model: &Model, options: &StreamOptions, auth: (&str, String)) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.set("Content-Type", "application/json");
    headers.set("User-Agent", user_agent());
    if let Some(h) = &model.headers {
        headers.merge_json(h);
    }
    headers.merge(options.headers.iter().map(|(k, v)| (k.as_str(), v.clone())));
    headers.set(auth.0, auth.1);
    headers
}

/// The body from a borrowed transcript (built whole) or one the request owns (a large body is
/// written into the connection as it is produced).
fn body(
    model: &Model,
    context: &BodyContext<'_>,
    options: &StreamOptions,
    flavor: Flavor,
) -> Result<(bytes::Bytes, Option<BodySource>), String> {
    let current = crate::transcript::current_tools(context.get().messages());
    crate::providers::constrained::check_tools(&current, supports_strict(model), None)?;
    let size_hint = crate::http::body::size_hint_for(context.get().messages().len());
    let (model, options) = (model.clone(), options.clone());
    let memo = crate::http::body::HandoffMemo::default();
    crate::http::body::request_body(context, size_hint, move |context, out, flush| {
        write_body(&model, context, &options, flavor, &memo, out, flush)
    })
}

/// Writes the JSON body into `out`, calling `flush` between contents.
fn write_body(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    flavor: Flavor,
    memo: &crate::http::body::HandoffMemo,
    out: &mut Vec<u8>,
    flush: &mut dyn FnMut(&mut Vec<u8>),
) -> Result<(), String> {
    let messages = context.messages();
    let current = crate::transcript::current_tools(messages);
    let head = crate::http::body::collapsed_head(messages, false);
    let view = crate::http::body::resolved_view(messages, &head, false);
    let system = head.as_ref().and_then(|m| match m {
        crate::types::Message::System(s) => Some(crate::transcript::system_message_text(s)),
        _ => None,
    });
    let handed_off = memo.handed_off(&view, || {
        crate::http::shared::plan_for_model(&view, model, &|id, _| normalize_tool_call_id(model, id))
    });
    let contents = wire::Contents { flavor, items: wire::convert(model, &handed_off) };
    let fields = request::body_fields(model, system.as_deref().unwrap_or_default(), &current, options)?;
    crate::http::body::encode_body_flushing(&fields, "contents", &contents, out, flush)
}

/// The Gemini API request (URL, headers, body), or the setup error text.
pub fn build_request_ref(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    build_request_from(model, BodyContext::Borrowed(context), options)
}

fn build_request_from(model: &Model, context: BodyContext<'_>, options: &StreamOptions) -> Result<HttpRequest, String> {
    let key = options
        .api_key
        .clone()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
    let (body, source) = body(model, &context, options, Flavor::Gemini)?;
    let base = match model.base_url.trim_end_matches('/') {
        "" => "https://generativelanguage.googleapis.com/v1beta",
        base => base,
    };
    let url = format!("{base}/models/{}:streamGenerateContent?alt=sse", model.id);
    Ok(HttpRequest { url, headers: common_headers(model, options, ("x-goog-api-key", key)), body, source })
}

/// Whether a base URL already names an API version (`/v1`, `/v1beta1`, …).
fn includes_api_version(base: &str) -> bool {
    base.split('/').any(|part| {
        part.strip_prefix('v').is_some_and(|rest| {
            let digits = rest.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && {
                let tail = &rest[digits..];
                tail.is_empty() || tail.strip_prefix("beta").is_some_and(|b| b.chars().all(|c| c.is_ascii_digit()))
            }
        })
    })
}

/// The Vertex URL: a custom base URL (one without `{location}`) as a collection; otherwise the
/// global endpoint with an API key, or the regional project path with ADC.
pub fn vertex_url(model: &Model, target: Option<&VertexTarget>) -> String {
    let custom = model.base_url.trim();
    let method = format!("publishers/google/models/{}:streamGenerateContent?alt=sse", model.id);
    if !custom.is_empty() && !custom.contains("{location}") {
        let base = custom.trim_end_matches('/');
        return if includes_api_version(base) { format!("{base}/{method}") } else { format!("{base}/v1/{method}") };
    }
    match target {
        None => format!("https://aiplatform.googleapis.com/v1/{method}"),
        Some(t) => {
            let host = if t.location == "global" {
                "aiplatform.googleapis.com".to_owned()
            } else {
                format!("{}-aiplatform.googleapis.com", t.location)
            };
            format!("https://{host}/v1/projects/{}/locations/{}/{method}", t.project, t.location)
        }
    }
}

/// The Vertex request: with an API key when `adc` is `None`, else with the ADC target and token
/// (a missing token only when the request was cancelled before it was fetched).
pub fn build_vertex_request(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    adc: Option<(VertexTarget, Option<adc::AccessToken>)>,
) -> Result<HttpRequest, String> {
    vertex_request_from(model, BodyContext::Borrowed(context), options, adc)
}

fn vertex_request_from(
    model: &Model,
    context: BodyContext<'_>,
    options: &StreamOptions,
    adc: Option<(VertexTarget, Option<adc::AccessToken>)>,
) -> Result<HttpRequest, String> {
    let (body, source) = body(model, &context, options, Flavor::Vertex)?;
    match adc {
        None => {
            let key = vertex_api_key(options).unwrap_or_default().to_owned();
            let url = vertex_url(model, None);
            Ok(HttpRequest { url, headers: common_headers(model, options, ("x-goog-api-key", key)), body, source })
        }
        Some((target, token)) => {
            let url = vertex_url(model, Some(&target));
            let token = token.unwrap_or(adc::AccessToken { token: String::new(), quota_project: None });
            let mut headers = common_headers(model, options, ("Authorization", format!("Bearer {}", token.token)));
            if let Some(project) = token.quota_project {
                headers.set("x-goog-user-project", project);
            }
            Ok(HttpRequest { url, headers, body, source })
        }
    }
}

/// [`build_vertex_request`] for the offline body snapshot (API-key form).
pub fn build_vertex_request_ref(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    build_vertex_request(model, context, options, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_urls() {
        let mut m = Model {
            id: "gemini-x".into(),
            base_url: "https://{location}-aiplatform.googleapis.com".into(),
            ..Default::default()
        };
        let t = VertexTarget { project: "p".into(), location: "us-central1".into() };
        assert_eq!(
            vertex_url(&m, Some(&t)),
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-x:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            vertex_url(&m, None),
            "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-x:streamGenerateContent?alt=sse"
        );
        m.base_url = "http://h/proxy".into();
        assert_eq!(
            vertex_url(&m, Some(&t)),
            "http://h/proxy/v1/publishers/google/models/gemini-x:streamGenerateContent?alt=sse"
        );
        m.base_url = "http://h/v1beta1/".into();
        assert_eq!(
            vertex_url(&m, None),
            "http://h/v1beta1/publishers/google/models/gemini-x:streamGenerateContent?alt=sse"
        );
    }

    #[test]
    fn vertex_keys() {
        let o = |k: &str| StreamOptions { api_key: Some(k.into()), ..Default::default() };
        assert_eq!(vertex_api_key(&o(" k ")), Some("k"));
        assert_eq!(vertex_api_key(&o("<authenticated>")), None);
        assert_eq!(vertex_api_key(&o(VERTEX_CREDENTIALS_MARKER)), None);
        assert!(vertex_target(&|_| None).unwrap_err().contains("project ID"));
    }
}
