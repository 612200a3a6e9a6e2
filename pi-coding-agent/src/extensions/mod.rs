//! The extension system of the coding agent (spec §3): in-process extensions, the runner with
//! pi 1.6.0's composition and isolation rules, and runtime-loaded extensions as subprocesses.
//!
//! - [`Extension`] / [`FnExtension`]: an extension registers on an [`ExtensionApi`] (pi's `pi`):
//!   typed handlers with [`ExtensionApi::on`], tools, commands, flags, renderers; actions
//!   ([`ExtensionApi::append_entry`], [`ExtensionApi::send_message`], …) go through the
//!   [`ExtensionActions`] the session binds later.
//! - [`ExtensionRunner`]: loads extensions and emits events: [`ExtensionRunner::emit_context`]
//!   (`context` then `context_with_system`, see [`context`]), `emit_tool_call` (fail-closed),
//!   `emit_tool_result`, `emit_message_end`, `emit_input`, `emit_before_agent_start`,
//!   `emit_user_bash`, `emit_before_provider_request`, and [`ExtensionRunner::emit`] for notify
//!   events.
//! - [`subprocess`]: extensions in any language, speaking JSON lines over stdio
//!   (`docs/extension-protocol.md`).
//!
//! `appendEntry` vs `sendMessage`: [`ExtensionApi::append_entry`] writes a `custom` session
//! entry that never reaches the model (state, audit notes); [`ExtensionApi::send_message`] adds a
//! `custom` message whose `content` reaches the model as user content while `display` and
//! `details` never do.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::sync::Arc;
//! use pi_coding_agent::extensions::{ContextEvent, Extension, ExtensionRunner, FnExtension};
//! use pi_ai::{SystemMessage, UserMessage};
//!
//! // Keep only the last message of the conversation; pi restores the prompt head.
//! let last_only = FnExtension::new("<inline:1>", |pi| {
//!     pi.on_sync::<ContextEvent>(|e, _| {
//!         let cut = e.messages.len().saturating_sub(1);
//!         Ok(Some(e.messages.split_off(cut)))
//!     });
//!     Ok(())
//! });
//! let runner = ExtensionRunner::load(vec![Arc::new(last_only) as Arc<dyn Extension>], ".").await;
//! let out = runner
//!     .emit_context(vec![SystemMessage::new("Be brief.").into(), UserMessage::new("one").into(), UserMessage::new("two").into()])
//!     .await;
//! assert_eq!(out.len(), 2);
//! assert_eq!(out[0].role(), "system");
//! # });
//! ```

mod actions;
mod api;
mod api_session;
pub(crate) mod assistant_event_wire;
mod boundary;
mod boundary_state;
mod bus;
mod command_context;
pub mod context;
mod context_messages;
pub mod discovery;
mod emit;
mod errors;
mod event_queue;
mod events;
mod exec;
mod handler;
mod lifecycle_events;
mod markdown;
mod markdown_run;
mod model_registry;
mod model_registry_typed;
pub mod node;
mod provider_availability;
mod provider_events;
mod provider_validation;
mod registrations;
mod runner;
mod runtime;
mod session_view;
mod shortcuts;
pub mod subprocess;
mod tool_renderers;
mod ui_prompt;
mod virtual_models;

pub use actions::{
    DeliverAs, ExtensionActions, ExtensionMessage, ForkPosition, NavigateTreeRequest, SendMessageOptions,
    SendUserMessageOptions, SessionControlFuture, SessionSetup, SessionSetupFuture, SlashCommandInfo, ToolInfo,
};
pub use api::{
    CommandHandler, EntryRenderOptions, EntryRenderer, Extension, ExtensionApi, ExtensionFlag, FlagType, FnExtension,
    Handler, HandlerFuture, MessageRenderOptions, MessageRenderer, RegisteredCommand, RegisteredMcpServer,
    RegisteredTool, SyncHandler, ToolDefinition, Unsubscribe,
};
pub use boundary::{
    ActivityOutcome, BoundaryContextPreview, BoundaryDraft, BoundaryOutcome, BoundaryResult, BoundaryState,
};
pub use bus::{BusSubscription, EventBus};
pub use context::ContextMessages;
pub use errors::{
    BoxError, ExtensionApiError, ExtensionError, ExtensionLoadError, INVALID_USER_BASH_RESULT, MESSAGE_END_SAME_ROLE,
    REMOVED_LEADING_SYSTEM_MESSAGE, RUNTIME_NOT_INITIALIZED,
};
pub use events::{
    AgentStartTrigger, BashResult, BeforeAgentStartEvent, BeforeAgentStartOutcome, BeforeAgentStartResult,
    BeforeProviderRequestEvent, ContextEvent, ContextWithSystemEvent, ExtensionEvent, InputEvent, InputOutcome,
    InputSource, MessageEndEvent, NotifyEvent, StreamingBehavior, ToolCallBlock, ToolCallEvent, ToolCallResult,
    ToolResultData, ToolResultEvent, ToolResultPatch, UserBashEvent, UserBashOperations, UserBashResult,
};
pub use exec::{DEFAULT_EXEC_MAX_BUFFER, ExecOptions, ExecResult, exec_command};
pub use lifecycle_events::{
    CacheWarmingAction, CacheWarmingDecisionEvent, CacheWarmingDecisionResult, DiscoveredPath, ResourcesDiscoverEvent,
    ResourcesDiscoverOutcome, ResourcesDiscoverResult, UiPromptKind, extension_source_label, mcp_server_json,
};
pub use markdown::{
    DEFAULT_MARKDOWN_MESSAGE_TYPES, MarkdownTransformContext, MarkdownTransformer, MarkdownTransformerRegistration,
};
pub use model_registry::{ExtensionModelRegistry, RequestAuth};
pub(crate) use model_registry_typed::{typed_call, typed_snapshot};
pub use node::request_auth::ProviderAuth;
pub use provider_availability::has_configured_auth;
pub use provider_events::{BeforeProviderHeadersEvent, ExtensionRequestObserver, ProviderHeaders};
pub use provider_validation::validate_provider;
pub use registrations::RegisteredProvider;
pub use runner::{ErrorListenerHandle, ExtensionRunner};
pub use runtime::{ExtensionContext, ExtensionMode, FlagValue};
pub use session_view::{ProjectedEntryView, ReadonlySessionManager, SessionProjectionView, SessionTreeView};
pub use shortcuts::{RegisteredShortcut, ShortcutHandler};
pub use tool_renderers::{ANY_TOOL, ToolCallRenderer, ToolRenderOptions, ToolRenderers, ToolResultRenderer};
pub use virtual_models::{
    RegisteredVirtualModel, Route, RouteReason, RouteRequest, RoutedPair, VIRTUAL_MODEL_API, VIRTUAL_MODEL_STATE_ENTRY,
    VirtualModelDefinition, VirtualModelRouter, create_virtual_model, find_latest_response, is_virtual_model,
    resolve_virtual_route, virtual_model_state, with_virtual_models,
};
