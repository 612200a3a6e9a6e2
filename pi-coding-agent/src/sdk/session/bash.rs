//! User shell commands (`!cmd` / `!!cmd`): pi's `user_bash` event, `executeBash` and
//! `recordBashResult`.

use std::sync::Arc;

use pi_agent_core::AgentMessage;
use tokio_util::sync::CancellationToken;

pub use super::bash_exec::BashResult;
use super::bash_exec::{LocalBashOperations, execute_bash_with_operations};
use super::events::persist_now;
use super::{AgentSession, SessionEvent};
use crate::extensions::{UserBashEvent, UserBashOperations, UserBashResult};
use crate::messages::{BashExecutionMessage, CodingMessage};
use crate::sdk::error::SdkError;

impl AgentSession {
    /// Runs a user `!command` and records it as a `bashExecution` message
    /// (`exclude_from_context`: visible to extensions and UIs, never to the model).
    ///
    /// First the `user_bash` event (as pi's hosts emit it before `executeBash`): a handler may
    /// return a finished result (recorded as is) or operations to run the command elsewhere; a
    /// failing handler's error is returned and nothing runs.
    pub async fn execute_bash(&self, command: &str, exclude_from_context: bool) -> Result<BashResult, SdkError> {
        self.execute_bash_with_id(command, exclude_from_context, None).await
    }

    /// [`Self::execute_bash`] whose `bash_execution_update` events carry `id` (RPC mode passes the
    /// command's id, as pi's `executeBash(command, undefined, {id})`).
    pub async fn execute_bash_with_id(
        &self,
        command: &str,
        exclude_from_context: bool,
        id: Option<&str>,
    ) -> Result<BashResult, SdkError> {
        let mut operations = None;
        if let Some(runner) = self.shared.runner.as_ref().filter(|r| r.has_handlers("user_bash")) {
            let event = UserBashEvent { command: command.to_owned(), exclude_from_context, cwd: self.session_cwd() };
            match runner.emit_user_bash(event).await {
                Err(error) => return Err(SdkError::Failed(error.error)),
                Ok(Some(UserBashResult::Result(result))) => {
                    self.record_bash_result(command, &result, exclude_from_context);
                    return Ok(result);
                }
                Ok(Some(UserBashResult::Operations(ops))) => operations = Some(ops),
                Ok(None) => {}
            }
        }
        let shell = &self.shared.shell;
        let ops: Arc<dyn UserBashOperations> =
            operations.unwrap_or_else(|| Arc::new(LocalBashOperations { shell_path: shell.shell_path.clone() }));
        // pi's `shellCommandPrefix`: run as `prefix\ncommand`; the command is recorded as typed.
        let resolved = match shell.command_prefix.as_deref() {
            Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
            _ => command.to_owned(),
        };
        let cancel = CancellationToken::new();
        let number = {
            let mut st = self.shared.run_state();
            st.next_bash += 1;
            let number = st.next_bash;
            st.bash_cancels.push((number, cancel.clone()));
            number
        };
        let shared = self.shared.clone();
        let id = id.map(str::to_owned);
        let on_chunk = move |delta: &str| {
            shared.emit(&SessionEvent::BashExecutionUpdate { id: id.clone(), delta: delta.to_owned() });
        };
        let result =
            execute_bash_with_operations(&resolved, &self.session_cwd(), ops.as_ref(), &cancel, &on_chunk).await;
        self.shared.run_state().bash_cancels.retain(|(n, _)| *n != number);
        let result = result.map_err(SdkError::Failed)?;
        self.record_bash_result(command, &result, exclude_from_context);
        Ok(result)
    }

    /// pi's `abortBash`: cancels every running user `!cmd` (not the agent's run; `abort` leaves
    /// them running).
    pub fn abort_bash(&self) {
        let cancels: Vec<CancellationToken> =
            self.shared.run_state().bash_cancels.iter().map(|(_, c)| c.clone()).collect();
        for cancel in cancels {
            cancel.cancel();
        }
    }

    /// pi's `isBashRunning`.
    pub fn is_bash_running(&self) -> bool {
        !self.shared.run_state().bash_cancels.is_empty()
    }

    fn session_cwd(&self) -> String {
        self.lock_session_manager().cwd().to_owned()
    }

    /// pi's `recordBashResult`: a `bashExecution` message; while streaming it is held until the
    /// run ends so it cannot split a tool call from its result.
    pub fn record_bash_result(&self, command: &str, result: &BashResult, exclude_from_context: bool) {
        let message = AgentMessage::Custom(CodingMessage::BashExecution(
            BashExecutionMessage {
                command: command.to_owned(),
                output: result.output.clone(),
                exit_code: result.exit_code,
                cancelled: result.cancelled,
                truncated: result.truncated,
                full_output_path: result.full_output_path.clone(),
                timestamp: pi_ai::now_ms(),
                exclude_from_context: exclude_from_context.then_some(true),
                ..Default::default()
            }
            .into(),
        ));
        if self.is_streaming() {
            self.shared.run_state().pending_bash.push(message);
        } else {
            persist_now(&self.shared, &message);
            self.refresh_context();
        }
    }
}
