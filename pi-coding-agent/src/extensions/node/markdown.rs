//! `pi.registerMarkdownTransformer` from a JavaScript extension: the host reports the message
//! types of the extension's transformer when it loads, and the transcript's Markdown asks the
//! host (`markdown.transform`, answered synchronously as renderers are) for each rewrite. A
//! transformer that throws, or a host that does not answer, keeps the current Markdown (pi's
//! `applyMarkdownTransformers`); the failure is reported as the extension's error.

use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use super::NodeHost;
use crate::extensions::api::ExtensionApi;
use crate::extensions::errors::{BoxError, ExtensionError};
use crate::extensions::runtime::lock;

/// The host method that runs a transformer.
const METHOD_TRANSFORM: &str = "markdown.transform";

/// Registers the transformer the initialize answer declares (`markdownTransformerTypes`).
pub(super) fn register(api: &ExtensionApi, host: &Arc<NodeHost>, path: &str, answer: &Value) -> Result<(), BoxError> {
    let Some(types) = answer.get("markdownTransformerTypes").and_then(Value::as_array) else { return Ok(()) };
    let types: Vec<String> = types.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect();
    let host: Weak<NodeHost> = Arc::downgrade(host);
    let path = path.to_owned();
    let transformer = move |markdown: &str, context: &crate::extensions::MarkdownTransformContext| {
        let host = host.upgrade()?;
        let conn = lock(&host.current).clone().filter(|c| !c.is_dead())?;
        let mut ctx = json!({
            "messageType": context.message_type,
            "isStreaming": context.is_streaming,
            "availableWidth": context.available_width,
        });
        if let Some(obj) = ctx.as_object_mut() {
            if let Some(id) = &context.message_id {
                obj.insert("messageId".into(), json!(id));
            }
            if let Some(timestamp) = &context.timestamp {
                obj.insert("timestamp".into(), json!(timestamp));
            }
        }
        let params = json!({"extensionPath": path, "markdown": markdown, "context": ctx});
        match conn.call_blocking(METHOD_TRANSFORM, params, host.options.call_timeout) {
            Ok(answer) => answer.get("markdown").and_then(Value::as_str).map(str::to_owned),
            Err(error) => {
                if let Some(runtime) = host.runtime.upgrade() {
                    runtime.report(ExtensionError::new(&path, "markdown_transform", error));
                }
                None
            }
        }
    };
    let types: Vec<&str> = types.iter().map(String::as_str).collect();
    api.register_markdown_transformer(transformer, Some(&types))?;
    Ok(())
}
