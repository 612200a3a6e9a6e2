//! The session's cache warming surface (pi's `cacheWarmingStatus`, `setCacheWarmingMode`).

use std::sync::Arc;

use serde_json::json;

use super::{CacheWarmer, CacheWarmingStatus};
use crate::sdk::AgentSession;
use crate::settings::{CacheWarming, SettingsError};

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
