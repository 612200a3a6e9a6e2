//! The members of pi's `ExtensionCommandContext` (the `ctx` of a `/command`): wait for idle, the
//! session controls (`newSession`, `fork`, `navigateTree`, `switchSession`) and `reload`, and
//! `getSystemPromptOptions`. Outside a command they fail, as pi's event context has none of them.

use serde_json::Value;

use super::actions::{ExtensionActions, ForkPosition, NavigateTreeRequest};
use super::errors::ExtensionApiError;
use super::runtime::ExtensionContext;

/// A command context member called from an event handler's context.
fn not_a_command(member: &str) -> ExtensionApiError {
    ExtensionApiError::Invalid(format!("ctx.{member}() is only available in a command's context"))
}

impl ExtensionContext {
    fn command_actions(&self, member: &str) -> Result<std::sync::Arc<dyn ExtensionActions>, ExtensionApiError> {
        if !self.command {
            return Err(not_a_command(member));
        }
        self.runtime.actions()
    }

    /// `ctx.waitForIdle()`: resolves when the agent is idle.
    pub async fn wait_for_idle(&self) -> Result<(), ExtensionApiError> {
        let actions = self.command_actions("waitForIdle")?;
        actions.wait_for_idle().await.map_err(|e| ExtensionApiError::Action(e.to_string()))
    }

    /// `ctx.newSession({parentSession})`: `Ok(true)` when a `session_before_switch` handler
    /// cancelled (pi's `{cancelled}`).
    pub async fn new_session(&self, parent_session: Option<String>) -> Result<bool, ExtensionApiError> {
        let actions = self.command_actions("newSession")?;
        actions.new_session(parent_session).await.map_err(|e| ExtensionApiError::Action(e.to_string()))
    }

    /// `ctx.newSession({parentSession, setup})`: `setup` changes the new session's manager
    /// (appends entries) before `session_start` and the first prompt, as pi runs it.
    pub async fn new_session_with_setup(
        &self,
        parent_session: Option<String>,
        setup: impl FnOnce(&mut crate::session::SessionManager) -> Result<(), super::errors::BoxError> + Send + 'static,
    ) -> Result<bool, ExtensionApiError> {
        let actions = self.command_actions("newSession")?;
        let setup: super::actions::SessionSetup = Box::new(setup);
        let ready: super::actions::SessionSetupFuture = Box::pin(async move { Ok(setup) });
        actions
            .new_session_with_setup(parent_session, ready)
            .await
            .map_err(|e| ExtensionApiError::Action(e.to_string()))
    }

    /// `ctx.fork(entryId, {position})`: `Ok(true)` when a `session_before_fork` handler cancelled.
    pub async fn fork(&self, entry_id: &str, position: ForkPosition) -> Result<bool, ExtensionApiError> {
        let actions = self.command_actions("fork")?;
        actions.fork(entry_id, position).await.map_err(|e| ExtensionApiError::Action(e.to_string()))
    }

    /// `ctx.navigateTree(targetId, options)`: `Ok(true)` when cancelled.
    pub async fn navigate_tree(
        &self,
        target_id: &str,
        options: NavigateTreeRequest,
    ) -> Result<bool, ExtensionApiError> {
        let actions = self.command_actions("navigateTree")?;
        actions.navigate_tree(target_id, options).await.map_err(|e| ExtensionApiError::Action(e.to_string()))
    }

    /// `ctx.switchSession(sessionPath)`: `Ok(true)` when a `session_before_switch` handler cancelled.
    pub async fn switch_session(&self, session_path: &str) -> Result<bool, ExtensionApiError> {
        let actions = self.command_actions("switchSession")?;
        actions.switch_session(session_path).await.map_err(|e| ExtensionApiError::Action(e.to_string()))
    }

    /// `ctx.reload()`: `session_shutdown` (`reload`), every extension loads again,
    /// `session_start` (`reload`). Do not use registrations captured before it.
    pub async fn reload(&self) -> Result<(), ExtensionApiError> {
        let actions = self.command_actions("reload")?;
        actions.reload().await.map_err(|e| ExtensionApiError::Action(e.to_string()))
    }

    /// `ctx.getSystemPromptOptions()`: the base options the system prompt is built from, as JSON.
    pub fn get_system_prompt_options(&self) -> Result<Value, ExtensionApiError> {
        Ok(self.command_actions("getSystemPromptOptions")?.get_system_prompt_options())
    }
}
