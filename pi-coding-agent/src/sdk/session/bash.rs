//! User shell commands (`!cmd` / `!!cmd`): pi's `user_bash` event, `executeBash` and
//! `recordBashResult`.

use pi_agent_core::AgentMessage;
use serde_json::{Map, Value, json};

use super::AgentSession;
use super::events::persist;
use crate::extensions::{UserBashEvent, UserBashOperations, UserBashResult};
use crate::messages::{BashExecutionMessage, CodingMessage};
use crate::sdk::SdkError;
use crate::tools::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationOptions, truncate_tail};

/// The result of a user `!command` ([`AgentSession::execute_bash`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BashResult {
    /// Combined output (possibly truncated).
    pub output: String,
    /// Exit code, if the process exited.
    pub exit_code: Option<i64>,
    /// Whether it was cancelled.
    pub cancelled: bool,
    /// Whether the output was truncated.
    pub truncated: bool,
    /// Where the full output was saved, when truncated.
    pub full_output_path: Option<String>,
}

impl BashResult {
    /// pi's wire shape `{output, exitCode?, cancelled, truncated, fullOutputPath?}`.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("output".into(), json!(self.output));
        if let Some(c) = self.exit_code {
            o.insert("exitCode".into(), json!(c));
        }
        o.insert("cancelled".into(), json!(self.cancelled));
        o.insert("truncated".into(), json!(self.truncated));
        if let Some(p) = &self.full_output_path {
            o.insert("fullOutputPath".into(), json!(p));
        }
        Value::Object(o)
    }
}

impl From<crate::extensions::BashResult> for BashResult {
    fn from(r: crate::extensions::BashResult) -> Self {
        BashResult {
            output: r.output,
            exit_code: r.exit_code,
            cancelled: r.cancelled,
            truncated: r.truncated,
            full_output_path: r.full_output_path,
        }
    }
}

impl AgentSession {
    /// Runs a user `!command` and records it as a `bashExecution` message
    /// (`exclude_from_context`: visible to extensions and UIs, never to the model).
    ///
    /// First the `user_bash` event (as pi's hosts emit it before `executeBash`): a handler may
    /// return a finished result (recorded as is) or operations to run the command elsewhere; a
    /// failing handler's error is returned and nothing runs.
    pub async fn execute_bash(&self, command: &str, exclude_from_context: bool) -> Result<BashResult, SdkError> {
        let mut operations = None;
        if let Some(runner) = self.shared.runner.as_ref().filter(|r| r.has_handlers("user_bash")) {
            let event = UserBashEvent { command: command.to_owned(), exclude_from_context, cwd: self.session_cwd() };
            match runner.emit_user_bash(event).await {
                Err(error) => return Err(SdkError::Failed(error.error)),
                Ok(Some(UserBashResult::Result(result))) => {
                    let result = BashResult::from(result);
                    self.record_bash_result(command, &result, exclude_from_context);
                    return Ok(result);
                }
                Ok(Some(UserBashResult::Operations(ops))) => operations = Some(ops),
                Ok(None) => {}
            }
        }
        let result = match operations {
            Some(ops) => self.run_with_operations(command, ops.as_ref()).await,
            None => self.run_locally(command).await,
        };
        self.record_bash_result(command, &result, exclude_from_context);
        Ok(result)
    }

    fn session_cwd(&self) -> String {
        self.session_manager().cwd().to_owned()
    }

    async fn run_locally(&self, command: &str) -> BashResult {
        let tool = crate::tools::bash_tool(&self.cwd);
        let mut args = Map::new();
        args.insert("command".into(), json!(command));
        let cancel = self.agent.signal().unwrap_or_default();
        let ctx = pi_agent_core::ToolContext::new(cancel.clone(), None);
        let outcome = tool.execute("user-bash", args, ctx).await;
        let (text, details, failed) = match &outcome {
            Ok(r) => (
                r.content.iter().filter_map(|b| b.as_text()).collect::<Vec<_>>().join("\n"),
                r.details.clone(),
                r.is_error,
            ),
            Err(e) => (e.message().to_owned(), Value::Null, true),
        };
        parse_bash_outcome(&text, &details, failed, cancel.is_cancelled())
    }

    /// pi's `executeBashWithOperations` over an extension's operations: output collected with
    /// carriage returns removed, kept as a tail within pi's limits.
    async fn run_with_operations(&self, command: &str, ops: &dyn UserBashOperations) -> BashResult {
        let collected = std::sync::Mutex::new(Vec::<u8>::new());
        let on_data = |chunk: &[u8]| collected.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(chunk);
        let cancel = tokio_util::sync::CancellationToken::new();
        let outcome = ops.exec(command, &self.session_cwd(), &on_data, cancel.clone()).await;
        let bytes = collected.into_inner().unwrap_or_else(|e| e.into_inner());
        let text = String::from_utf8_lossy(&bytes).replace('\r', "");
        let truncation =
            truncate_tail(&text, TruncationOptions { max_lines: DEFAULT_MAX_LINES, max_bytes: DEFAULT_MAX_BYTES });
        match outcome {
            Ok(exit_code) => BashResult {
                output: truncation.content,
                exit_code,
                cancelled: cancel.is_cancelled(),
                truncated: truncation.truncated,
                full_output_path: None,
            },
            Err(e) => BashResult {
                output: if text.is_empty() { e.to_string() } else { truncation.content },
                exit_code: None,
                cancelled: cancel.is_cancelled(),
                truncated: truncation.truncated,
                full_output_path: None,
            },
        }
    }

    /// pi's `recordBashResult`: a `bashExecution` message; while streaming it is held until the
    /// run ends so it cannot split a tool call from its result.
    pub fn record_bash_result(&self, command: &str, result: &BashResult, exclude_from_context: bool) {
        let message = AgentMessage::Custom(CodingMessage::BashExecution(BashExecutionMessage {
            command: command.to_owned(),
            output: result.output.clone(),
            exit_code: result.exit_code,
            cancelled: result.cancelled,
            truncated: result.truncated,
            full_output_path: result.full_output_path.clone(),
            timestamp: pi_ai::now_ms(),
            exclude_from_context: exclude_from_context.then_some(true),
            ..Default::default()
        }));
        if self.is_streaming() {
            self.shared.run_state().pending_bash.push(message);
        } else {
            persist(&self.shared, &message);
            self.refresh_context();
        }
    }
}

/// Reads the bash tool's result back into a [`BashResult`].
fn parse_bash_outcome(text: &str, details: &Value, failed: bool, cancelled: bool) -> BashResult {
    let full_output_path = details.get("fullOutputPath").and_then(Value::as_str).map(str::to_owned);
    let truncated =
        details.get("truncation").is_some_and(|t| t.get("truncated").and_then(Value::as_bool) == Some(true));
    // The tool appends "\n\nCommand exited with code N" to a failing command's output.
    let (output, exit_code) = match text.rsplit_once("\n\nCommand exited with code ") {
        Some((out, code)) if failed => (out.to_owned(), code.trim().parse::<i64>().ok()),
        _ => (text.to_owned(), if failed { None } else { Some(0) }),
    };
    BashResult { output, exit_code, cancelled, truncated, full_output_path }
}
