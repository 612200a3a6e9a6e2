//! The session's side of the prompt cache warmer (`sdk/cache_warmer`): what the warmer reads and
//! writes through [`WarmHost`], starting a run from each of the agent's requests (pi's `streamFn`
//! wrapper in `createAgentSession`), and the session's warming surface (pi's
//! `cacheWarmingStatus`, `setCacheWarmingMode`).

use std::sync::{Arc, Weak};

use pi_ai::options::StreamOptions;
use pi_ai::transcript::TranscriptContext;
use pi_ai::{AssistantMessageEventStream, Model, Usage};
use serde_json::json;

use super::{AgentSession, SessionEvent, SessionShared, lock};
use crate::extensions::ExtensionRunner;
use crate::sdk::cache_warmer::{CacheWarmer, CacheWarmingStatus, IsCurrent, WarmHost, WarmRequest};
use crate::session::SessionEntry;
use crate::settings::{CacheWarming, SettingsError};

impl WarmHost for SessionShared {
    fn mode(&self) -> CacheWarming {
        self.settings_manager.cache_warming()
    }

    fn last_prompt_tokens(&self) -> u64 {
        let sm = lock(&self.session_manager);
        sm.get_branch(None)
            .into_iter()
            .rev()
            .find_map(|e| match e {
                SessionEntry::Message(m) => m.message.as_assistant().map(|a| {
                    let u = &a.usage;
                    u.input + u.cache_read + u.cache_write
                }),
                _ => None,
            })
            .unwrap_or(0)
    }

    fn runner(&self) -> Option<Arc<ExtensionRunner>> {
        self.runner.clone()
    }

    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream {
        (self.stream_fn)(model, context, options)
    }

    fn record_usage(&self, kind: &str, provider: &str, model: &str, usage: Usage, note: Option<&str>) {
        let entry = {
            let mut sm = lock(&self.session_manager);
            match sm.append_usage(kind, provider, model, usage, note) {
                Ok(id) => sm.entry(&id).cloned().map(Arc::new),
                Err(e) => {
                    tracing::warn!(error = %e, "cache warming usage was not recorded");
                    None
                }
            }
        };
        if let Some(entry) = entry {
            self.emit(&SessionEvent::EntryAppended { entry });
        }
    }
}

/// Binds the session's warmer to it.
pub(crate) fn bind_warmer(shared: &Arc<SessionShared>) {
    let host: Weak<dyn WarmHost> = Arc::downgrade(shared) as Weak<dyn WarmHost>;
    shared.cache_warmer.bind(host);
}

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
    shared.cache_warmer.start(model, options, || {
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
        (WarmRequest { model: model.clone(), context: context.clone(), options: options.clone() }, is_current)
    });
}

impl AgentSession {
    /// The warmer's status (what `/session` shows).
    pub fn cache_warming_status(&self) -> CacheWarmingStatus {
        self.shared.cache_warmer.status()
    }

    /// The session's cache warmer (its clock can be replaced, for tests).
    pub fn cache_warmer(&self) -> &Arc<CacheWarmer> {
        &self.shared.cache_warmer
    }

    /// Persists the global `cacheWarming` mode and reconciles an active run (pi's
    /// `setCacheWarmingMode`).
    pub fn set_cache_warming_mode(&self, mode: CacheWarming) -> Result<(), SettingsError> {
        let result = self.shared.settings_manager.set_global("cacheWarming", Some(json!(mode.as_str())));
        self.shared.cache_warmer.on_mode_changed();
        result
    }
}
