//! `ctx.modelRegistry`'s image and classifier models across the process boundary (the JSON-RPC
//! protocol and the JavaScript host): the snapshot's `typedModels` (their keys added to
//! `available`), and `ctx.modelRegistry.classify` / `ctx.modelRegistry.generateImages`, which
//! answer pi's result (errors included) through the session's registry.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::extensions::ExtensionActions;

/// `ctx.modelRegistry.classify`.
pub(crate) const METHOD_CLASSIFY: &str = "ctx.modelRegistry.classify";
/// `ctx.modelRegistry.generateImages`.
pub(crate) const METHOD_GENERATE_IMAGES: &str = "ctx.modelRegistry.generateImages";

/// Adds the session's image and classifier models to a `ctx.modelRegistry` snapshot.
pub(crate) fn add_typed_models(actions: &dyn ExtensionActions, snapshot: &mut Value) {
    let Some((all, keys)) = actions.typed_models() else { return };
    if let Some(available) = snapshot.get_mut("available").and_then(Value::as_array_mut) {
        for key in keys.into_iter().map(Value::String) {
            if !available.contains(&key) {
                available.push(key);
            }
        }
    }
    snapshot["typedModels"] = Value::Array(all);
}

/// Runs a typed call (`{model, context, options}`) through the session's registry.
pub(crate) async fn typed_call(
    actions: &dyn ExtensionActions,
    method: &str,
    params: Value,
    cancel: CancellationToken,
) -> Result<Value, String> {
    match actions.typed_model_call(method, params, cancel) {
        Some(call) => call.await,
        None => Err("The model registry has no session to run requests".into()),
    }
}
