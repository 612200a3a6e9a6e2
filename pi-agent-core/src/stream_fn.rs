//! The function the loop calls to stream one response.

use std::sync::Arc;

use pi_ai::options::StreamOptions;
use pi_ai::transcript::TranscriptContext;
use pi_ai::{ApiProvider, AssistantMessageEventStream, Model};

/// Streams one response for a normalized transcript (pi's `streamFn`).
///
/// It must not block and must never panic; with an already-cancelled token it must return a stream
/// that ends in an `Aborted` error (pi-ai's providers do).
pub type StreamFn = Arc<dyn Fn(&Model, TranscriptContext, StreamOptions) -> AssistantMessageEventStream + Send + Sync>;

/// A [`StreamFn`] that sends every request to one wire protocol implementation.
///
/// ```ignore
/// let stream_fn = pi_agent_core::provider_stream_fn(std::sync::Arc::new(faux.clone()));
/// ```
pub fn provider_stream_fn(provider: Arc<dyn ApiProvider>) -> StreamFn {
    Arc::new(move |model, context, options| provider.stream(model, context, options))
}
