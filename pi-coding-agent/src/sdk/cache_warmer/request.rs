//! Starting a warming run from one of the agent's requests (pi's `streamFn` wrapper in
//! `createAgentSession`).

use std::sync::Arc;

use pi_ai::Model;
use pi_ai::options::StreamOptions;
use pi_ai::transcript::TranscriptContext;

use super::{IsCurrent, WarmRequest};
use crate::sdk::session::{SessionShared, lock};

/// Starts warming the cache entry of the request the agent is about to send. Only session
/// requests replace the entry (compaction and summaries use their own ids); warming continues
/// while the selected model is the request's and the transcript still extends its messages.
pub(crate) fn start_for_request(
    shared: &Arc<SessionShared>,
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
) {
    let session_id = lock(&shared.session_manager).session_id().to_owned();
    if options.session_id.as_deref() != Some(session_id.as_str()) {
        return;
    }
    let Some(agent) = shared.agent.get().cloned() else { return };
    let Some(live) = agent.upgrade() else { return };
    let messages = live.messages();
    let (provider, id) = (model.provider.clone(), model.id.clone());
    let is_current: IsCurrent = Box::new(move || {
        let Some(agent) = agent.upgrade() else { return false };
        agent.with_state(|s| {
            s.model.provider == provider
                && s.model.id == id
                && messages.len() <= s.messages.len()
                && messages.iter().zip(&s.messages).all(|(a, b)| a == b)
        })
    });
    let request = WarmRequest { model: model.clone(), context: context.clone(), options: options.clone() };
    shared.cache_warmer.start(request, is_current);
}
