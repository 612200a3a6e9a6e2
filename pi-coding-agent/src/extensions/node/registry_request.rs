//! One request of `ctx.modelRegistry` (`stream`, `streamSimple`, `complete`), wherever the
//! extension runs (Rust, the JavaScript host, a subprocess): a virtual model is routed with
//! reason `direct` (`streamSimple`) or refused (`stream`), as pi's `ModelRuntime`; a JavaScript
//! provider's request runs in the host; any other through the session's providers.

use std::sync::Arc;

use futures::StreamExt;
use pi_ai::options::StreamOptions;
use pi_ai::transcript::normalize_context;
use pi_ai::{AssistantMessageEventStream, Context, Model, ThinkingLevel};

use super::request_auth;
use crate::extensions::runtime::{ExtensionContext, Runtime};
use crate::extensions::virtual_models::{RouteReason, RouteRequest, is_virtual_model, resolve_virtual_route};

/// One request of `ctx.modelRegistry` (`simple`: `streamSimple`, else `stream`): a virtual model is
/// routed (`streamSimple`) or refused (`stream`); a JavaScript provider's request runs in the host;
/// any other through the session's providers.
pub(crate) fn registry_request(
    runtime: &Arc<Runtime>,
    model: &Model,
    context: Context,
    options: StreamOptions,
    simple: bool,
) -> AssistantMessageEventStream {
    if is_virtual_model(model) {
        if !simple {
            let message = format!("Virtual model {}/{} must be routed before streaming", model.provider, model.id);
            return failed(model, message);
        }
        let ctx = ExtensionContext { runtime: runtime.clone(), command: false };
        return direct_request(ctx, model.clone(), context, options);
    }
    if let Some(provider) = request_auth::registered(runtime, &model.provider)
        && super::provider_stream::is_js_provider(&provider)
    {
        return super::provider_stream::js_stream(
            runtime.clone(),
            &provider,
            model,
            normalize_context(context),
            options,
            simple,
        );
    }
    let stream = runtime.actions().ok().and_then(|a| a.stream_request(model, normalize_context(context), options));
    stream.unwrap_or_else(|| failed(model, "The model registry has no session to run requests".to_owned()))
}

/// A stream that fails at once for `model` with `message`.
fn failed(model: &Model, message: String) -> AssistantMessageEventStream {
    crate::auth::failed_request(model, message)
}

/// pi's `streamSimple` of a virtual model: routed with reason `direct` when the stream is first
/// read; a routing error ends it naming the virtual model.
fn direct_request(
    ctx: ExtensionContext,
    model: Model,
    context: Context,
    options: StreamOptions,
) -> AssistantMessageEventStream {
    let routed = async move {
        let transcript = normalize_context(context.clone());
        let request = RouteRequest {
            model: model.clone(),
            thinking_level: options.reasoning.unwrap_or(ThinkingLevel::Off),
            reason: RouteReason::Direct,
            previous: None,
            failed: None,
            state: None,
            messages: transcript.into_messages(),
        };
        let route = match resolve_virtual_route(&ctx, request).await {
            Ok(route) => route,
            Err(message) => return failed(&model, message),
        };
        let limit = route.model.max_tokens;
        let mut options = options;
        options.max_tokens = options.max_tokens.map(|m| if limit > 0 { m.min(limit) } else { m });
        options.reasoning = (route.thinking_level != ThinkingLevel::Off).then_some(route.thinking_level);
        // The caller's credentials were meant for the virtual model's provider.
        if route.model.provider != model.provider {
            options.api_key = None;
            options.headers = Vec::new();
            options.env = None;
        }
        registry_request(&ctx.runtime, &route.model, context, options, true)
    };
    AssistantMessageEventStream::new(futures::stream::once(routed).flatten())
}
