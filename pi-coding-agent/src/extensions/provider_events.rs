//! The provider events: `before_provider_headers` (handlers edit the headers in place),
//! `after_provider_response` and `provider_stream_event` (awaited notifications), and
//! [`ExtensionRequestObserver`], the pi-ai request observer that emits them (pi's
//! `transformHeaders`, `onResponse` and `onProviderStreamEvent` of `sdk.js`).
//!
//! The observer asks the runner whether any handler listens before each step, so a session
//! without such handlers pays nothing per request or per streamed event.

use std::sync::Arc;

use indexmap::IndexMap;
use pi_ai::Model;
use pi_ai::options::{ObserverFuture, ProviderResponse, RequestObserver};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::errors::ExtensionError;
use super::events::{ExtensionEvent, NotifyEvent};
use super::runner::ExtensionRunner;

/// Request headers as pi passes them (`Record<string, string | null>`; `null` deletes a header).
pub type ProviderHeaders = IndexMap<String, Option<String>>;

/// `before_provider_headers`: the extra request headers, before the provider HTTP call.
/// Handlers edit `headers` in place; their return value is ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BeforeProviderHeadersEvent {
    /// The headers (after earlier handlers).
    pub headers: ProviderHeaders,
}

impl ExtensionEvent for BeforeProviderHeadersEvent {
    const NAME: &'static str = "before_provider_headers";
    type Output = ();
}

impl ExtensionRunner {
    /// `before_provider_headers` (pi's `emitBeforeProviderHeaders`): every handler edits the same
    /// headers; a failing handler is reported and what it changed before failing stays.
    pub async fn emit_before_provider_headers(&self, headers: ProviderHeaders) -> ProviderHeaders {
        let ctx = self.create_context();
        let mut event = BeforeProviderHeadersEvent { headers };
        for (path, handler) in self.snapshot::<BeforeProviderHeadersEvent>(BeforeProviderHeadersEvent::NAME) {
            if let Err(error) = self.call_handler(&handler, &mut event, &ctx).await {
                self.report(ExtensionError::new(path.as_ref(), BeforeProviderHeadersEvent::NAME, error));
            }
        }
        event.headers
    }
}

/// Emits the provider events of one session's requests (set as
/// [`pi_ai::options::StreamOptions::request_observer`]).
#[derive(Clone)]
pub struct ExtensionRequestObserver {
    runner: Arc<ExtensionRunner>,
}

impl ExtensionRequestObserver {
    /// An observer emitting through `runner`.
    pub fn new(runner: Arc<ExtensionRunner>) -> Self {
        ExtensionRequestObserver { runner }
    }
}

impl std::fmt::Debug for ExtensionRequestObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExtensionRequestObserver")
    }
}

impl RequestObserver for ExtensionRequestObserver {
    fn wants_headers(&self) -> bool {
        self.runner.has_handlers(BeforeProviderHeadersEvent::NAME)
    }

    fn transform_headers(
        &self,
        headers: Vec<(String, Option<String>)>,
        _model: &Model,
    ) -> ObserverFuture<Vec<(String, Option<String>)>> {
        let runner = self.runner.clone();
        Box::pin(async move {
            // Later duplicates win, as when the headers are merged.
            let map: ProviderHeaders = headers.into_iter().collect();
            runner.emit_before_provider_headers(map).await.into_iter().collect()
        })
    }

    fn wants_response(&self) -> bool {
        self.runner.has_handlers("after_provider_response")
    }

    fn response(&self, response: ProviderResponse, _model: &Model) -> ObserverFuture<()> {
        let runner = self.runner.clone();
        Box::pin(async move {
            runner.emit(NotifyEvent::after_provider_response(response.status, &response.headers)).await;
        })
    }

    fn wants_stream_events(&self) -> bool {
        self.runner.has_handlers("provider_stream_event")
    }

    fn stream_event(&self, data: Value, model: &Model) -> ObserverFuture<()> {
        let runner = self.runner.clone();
        let event = NotifyEvent::provider_stream_event(data, model);
        Box::pin(async move {
            runner.emit(event).await;
        })
    }
}
