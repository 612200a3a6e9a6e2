//! `pi.registerVirtualModel` (pi's `virtual-models.js`): a selectable catalog entry whose router
//! picks a physical model and thinking level for every request. The catalog entry has the API
//! [`VIRTUAL_MODEL_API`]; providers only ever receive the physical model the router returned.
//! Router state is kept on the session branch as `custom` entries of type
//! [`VIRTUAL_MODEL_STATE_ENTRY`].

use std::sync::Arc;

use futures::future::BoxFuture;
use pi_ai::{AssistantMessage, Message, Model, ModelCost, StopReason, ThinkingLevel};
use serde_json::Value;

use super::api::ExtensionApi;
use super::errors::ExtensionApiError;
use super::registrations::VirtualModelSlot;
use super::runtime::{ExtensionContext, Runtime, lock};
use crate::session::SessionEntry;

/// The API id of virtual catalog entries (pi's `VIRTUAL_MODEL_API`).
pub const VIRTUAL_MODEL_API: &str = "pi-virtual";

/// The custom entry type that stores router state on the session branch.
pub const VIRTUAL_MODEL_STATE_ENTRY: &str = "pi.virtual-model-state";

/// Why a request is made (pi's `reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteReason {
    /// The first request after a message the user wrote.
    User,
    /// Any other request of the agent loop (after tool results, extension messages).
    Continuation,
    /// An automatic retry after a failed request.
    Retry,
    /// A request made outside the agent loop (a compaction summary, `streamSimple`).
    Direct,
}

impl RouteReason {
    /// pi's string for the reason.
    pub fn as_str(self) -> &'static str {
        match self {
            RouteReason::User => "user",
            RouteReason::Continuation => "continuation",
            RouteReason::Retry => "retry",
            RouteReason::Direct => "direct",
        }
    }
}

/// A physical model and thinking level a request used (pi's `previous` / `failed`).
#[derive(Clone, Debug)]
pub struct RoutedPair {
    /// The physical model.
    pub model: Model,
    /// Its thinking level, when the response recorded one.
    pub thinking_level: Option<ThinkingLevel>,
    /// For `failed`: the failed assistant message (with `stopReason` and `errorMessage`).
    pub message: Option<AssistantMessage>,
}

/// What a router sees for one request (pi's `VirtualModelRouteRequest`).
#[derive(Clone, Debug)]
pub struct RouteRequest {
    /// The selected virtual model.
    pub model: Model,
    /// The selected (virtual) thinking level.
    pub thinking_level: ThinkingLevel,
    /// Why the request is made.
    pub reason: RouteReason,
    /// The physical model and level of the latest successful response in `messages`.
    pub previous: Option<RoutedPair>,
    /// For a retry: the failed request's model, level and message.
    pub failed: Option<RoutedPair>,
    /// The router state last returned on this branch (none for `direct` requests).
    pub state: Option<Value>,
    /// The conversation of the request, as the model sees it.
    pub messages: Vec<Message>,
}

/// A router's answer (pi's `VirtualModelRoute`).
#[derive(Clone, Debug)]
pub struct Route {
    /// The physical model to send the request to.
    pub model: Model,
    /// The thinking level for it (clamped to the model).
    pub thinking_level: ThinkingLevel,
    /// New router state; `None` keeps the current one.
    pub state: Option<Value>,
}

/// A router: the route for one request, or the error that ends the request.
pub type VirtualModelRouter =
    Arc<dyn Fn(RouteRequest, ExtensionContext) -> BoxFuture<'static, Result<Route, String>> + Send + Sync>;

/// What `pi.registerVirtualModel` takes (pi's `VirtualModelDefinition`).
#[derive(Clone)]
pub struct VirtualModelDefinition {
    /// The provider it is listed under (any id).
    pub provider: String,
    /// Its id (not one of a physical model of that provider).
    pub id: String,
    /// Its display name.
    pub name: String,
    /// The levels offered for selection (default `["off"]`).
    pub thinking_levels: Option<Vec<ThinkingLevel>>,
    /// The context window shown before the first response.
    pub context_window: Option<u64>,
    /// The output limit shown before the first response.
    pub max_tokens: Option<u64>,
    /// Input types offered (default text and images).
    pub input: Option<Vec<String>>,
    /// The router.
    pub route: VirtualModelRouter,
}

impl std::fmt::Debug for VirtualModelDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtualModelDefinition").field("provider", &self.provider).field("id", &self.id).finish()
    }
}

/// A registered virtual model: its catalog entry and router.
#[derive(Clone, Debug)]
pub struct RegisteredVirtualModel {
    /// The catalog entry (API [`VIRTUAL_MODEL_API`]).
    pub model: Model,
    /// The definition.
    pub definition: VirtualModelDefinition,
    /// The extension that registered it.
    pub extension_path: String,
}

/// Whether a model (or the model named by a message) is virtual (pi's `isVirtualModel`).
pub fn is_virtual_model(model: &Model) -> bool {
    model.api == VIRTUAL_MODEL_API
}

/// The catalog entry of a virtual model (pi's `createVirtualModel`).
pub fn create_virtual_model(definition: &VirtualModelDefinition) -> Model {
    let levels = definition.thinking_levels.clone().unwrap_or_else(|| vec![ThinkingLevel::Off]);
    let mut map = serde_json::Map::new();
    for level in ThinkingLevel::ALL {
        let value = if levels.contains(&level) { Value::from(level.as_str()) } else { Value::Null };
        map.insert(level.as_str().to_owned(), value);
    }
    Model {
        id: definition.id.clone(),
        name: definition.name.clone(),
        api: VIRTUAL_MODEL_API.to_owned(),
        provider: definition.provider.clone(),
        base_url: String::new(),
        reasoning: levels.iter().any(|l| *l != ThinkingLevel::Off),
        thinking_level_map: Some(map),
        input: definition.input.clone().unwrap_or_else(|| vec!["text".to_owned(), "image".to_owned()]),
        cost: ModelCost::default(),
        context_window: definition.context_window.unwrap_or(0),
        max_tokens: definition.max_tokens.unwrap_or(0),
        ..Default::default()
    }
}

/// The latest successful response (pi's `findLatestResponse`): failed and aborted ones are skipped.
pub fn find_latest_response(messages: &[Message]) -> Option<&AssistantMessage> {
    messages.iter().rev().find_map(|m| match m {
        Message::Assistant(a) if !matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) => Some(&**a),
        _ => None,
    })
}

/// The router state a branch stores for a virtual model (pi's `getVirtualModelState`).
pub fn virtual_model_state(branch: &[&SessionEntry], provider: &str, model_id: &str) -> Option<Value> {
    branch.iter().rev().find_map(|entry| match entry {
        SessionEntry::Custom(c) if c.custom_type == VIRTUAL_MODEL_STATE_ENTRY => {
            let data = c.data.as_ref()?;
            let same = data.get("provider").and_then(Value::as_str) == Some(provider)
                && data.get("modelId").and_then(Value::as_str) == Some(model_id);
            same.then(|| data.get("state").cloned().unwrap_or(Value::Null))
        }
        _ => None,
    })
}

impl ExtensionApi {
    /// pi's `registerVirtualModel(definition)`: lists a virtual model under `provider`; registering
    /// the same provider and id again replaces it.
    pub fn register_virtual_model(&self, definition: VirtualModelDefinition) -> Result<(), ExtensionApiError> {
        self.assert_active()?;
        if definition.provider.trim().is_empty() || definition.id.trim().is_empty() {
            return Err(ExtensionApiError::Invalid("Virtual model provider and id must not be empty.".to_owned()));
        }
        let model = create_virtual_model(&definition);
        store(
            &self.runtime,
            RegisteredVirtualModel { model, definition, extension_path: self.record.path.to_string() },
        );
        Ok(())
    }

    /// pi's `unregisterVirtualModel(provider, id)`.
    pub fn unregister_virtual_model(&self, provider: &str, id: &str) {
        remove(&self.runtime, provider, id);
    }
}

impl super::runner::ExtensionRunner {
    /// The virtual models extensions registered, in registration order.
    pub fn virtual_models(&self) -> Vec<RegisteredVirtualModel> {
        all(&self.runtime)
    }

    /// The registered virtual model `provider`/`id`.
    pub fn virtual_model(&self, provider: &str, id: &str) -> Option<RegisteredVirtualModel> {
        all(&self.runtime).into_iter().find(|m| m.model.provider == provider && m.model.id == id)
    }
}

/// Registers (or replaces) a virtual model in the runtime.
pub(crate) fn store(runtime: &Runtime, entry: RegisteredVirtualModel) {
    let slot = VirtualModelSlot {
        provider: entry.model.provider.clone(),
        id: entry.model.id.clone(),
        extension_path: entry.extension_path.clone(),
        entry: Arc::new(entry),
    };
    let mut models = lock(&runtime.virtual_models);
    models.retain(|m| !(m.provider == slot.provider && m.id == slot.id));
    models.push(slot);
}

/// Removes the virtual model `provider`/`id`.
pub(crate) fn remove(runtime: &Runtime, provider: &str, id: &str) {
    lock(&runtime.virtual_models).retain(|m| !(m.provider == provider && m.id == id));
}

fn all(runtime: &Runtime) -> Vec<RegisteredVirtualModel> {
    let slots = lock(&runtime.virtual_models).clone();
    slots.iter().filter_map(|s| s.entry.downcast_ref::<RegisteredVirtualModel>().cloned()).collect()
}

/// Adds the virtual models to a model list: each hides a physical model with its provider and id
/// (pi's `withVirtualModels`).
pub fn with_virtual_models(mut models: Vec<Model>, virtual_models: &[RegisteredVirtualModel]) -> Vec<Model> {
    models.retain(|m| {
        is_virtual_model(m) || !virtual_models.iter().any(|v| v.model.provider == m.provider && v.model.id == m.id)
    });
    for v in virtual_models {
        models.retain(|m| !(m.provider == v.model.provider && m.id == v.model.id));
        models.push(v.model.clone());
    }
    models
}

/// pi's `ModelRuntime.resolveModel`: asks the router of the virtual `request.model` and checks its
/// answer (a physical model whose provider has credentials; the level clamped to it).
/// `request.previous` is filled from `request.messages`; `request.failed` holds the failed message
/// of a retry (its model is looked up here). The error is pi's message.
pub async fn resolve_virtual_route(ctx: &ExtensionContext, mut request: RouteRequest) -> Result<Route, String> {
    let model = request.model.clone();
    let name = format!("Virtual model {}/{}", model.provider, model.id);
    let Some(virtual_model) =
        all(&ctx.runtime).into_iter().find(|m| m.model.provider == model.provider && m.model.id == model.id)
    else {
        return Err(format!("{name} is not registered."));
    };
    let registry = ctx.model_registry();
    let physical = |provider: &str, id: &str| registry.find(provider, id).filter(|m| !is_virtual_model(m));
    request.previous = find_latest_response(&request.messages).and_then(|latest| {
        let model = physical(&latest.provider, &latest.model)?;
        Some(RoutedPair { model, thinking_level: latest.thinking_level, message: None })
    });
    if let Some(failed) = request.failed.take() {
        let message = failed.message.clone();
        request.failed = message.as_ref().and_then(|m| physical(&m.provider, &m.model)).map(|model| RoutedPair {
            model,
            thinking_level: failed.thinking_level,
            message,
        });
    }
    let route = (virtual_model.definition.route)(request, ctx.clone()).await?;
    let routed = format!("{name} routed to {}/{}", route.model.provider, route.model.id);
    let Some(target) = physical(&route.model.provider, &route.model.id) else {
        return Err(format!("{routed}, which is not a physical model."));
    };
    // pi's availability check resolves a registered provider's key (a `$VAR` key whose variable
    // is unset gives none).
    let keyed = registry.get_registered_provider_config(&target.provider).is_some_and(|c| c.get("apiKey").is_some());
    let unresolved = keyed && !matches!(registry.get_provider_auth(&target.provider).await, Ok(Some(_)));
    if !registry.has_configured_auth(&target) || unresolved {
        return Err(format!("{routed}, which has no credentials."));
    }
    let thinking_level = pi_ai::models::clamp_thinking_level(&target, route.thinking_level);
    Ok(Route { model: target, thinking_level, state: route.state })
}
