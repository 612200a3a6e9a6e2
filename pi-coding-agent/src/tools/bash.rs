//! The `bash` tool: runs a command with `bash -c` in its own process group, streams its merged
//! stdout/stderr as updates, and kills the whole group on timeout or cancellation.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use serde_json::{Map, Value, json};

use super::args::{js_number, optional_f64, required_str};
use super::output::{OutputAccumulator, OutputSnapshot};
use super::shell::{EXIT_STDIO_GRACE, SESSION_ENV_KEYS, output_chunks, resolve_shell, spawn_shell, track_group};
pub use super::shell::{kill_process_tree, kill_tracked_process_groups};
use super::truncate::{DEFAULT_MAX_BYTES, TruncatedBy, format_size};

const DESCRIPTION: &str = "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.";
const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;
/// Most bytes of `structured_content.output`.
const STRUCTURED_OUTPUT_MAX_BYTES: usize = 1024 * 1024;
/// Least time between two streamed updates (pi's `BASH_UPDATE_THROTTLE_MS`).
const UPDATE_THROTTLE: Duration = Duration::from_millis(100);

/// What a command is spawned with; a [`BashSpawnHook`] may change any of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BashSpawnContext {
    /// The command (after the command prefix).
    pub command: String,
    /// The working directory.
    pub cwd: String,
    /// The whole environment of the shell.
    pub env: BTreeMap<String, String>,
}

/// Adjusts the command, cwd or environment before execution (pi's `spawnHook`).
pub type BashSpawnHook = Arc<dyn Fn(BashSpawnContext) -> BashSpawnContext + Send + Sync>;

/// Options of the bash tool (pi's `BashToolOptions`).
#[derive(Clone, Default)]
pub struct BashToolOptions {
    /// Prepended to every command as `prefix\ncommand` (pi's `commandPrefix`, e.g. shell setup).
    pub command_prefix: Option<String>,
    /// Shell to use instead of `/bin/bash` (pi's `shellPath` setting).
    pub shell_path: Option<String>,
    /// Session variables exposed to commands (`PI_SESSION_ID`, `PI_SESSION_FILE`, `PI_PROVIDER`,
    /// `PI_MODEL`, `PI_REASONING_LEVEL`), set by the session that owns the tool.
    pub session_env: BTreeMap<String, String>,
    /// Hook adjusting the spawn context.
    pub spawn_hook: Option<BashSpawnHook>,
}

impl fmt::Debug for BashToolOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BashToolOptions")
            .field("command_prefix", &self.command_prefix)
            .field("shell_path", &self.shell_path)
            .field("session_env", &self.session_env)
            .field("spawn_hook", &self.spawn_hook.is_some())
            .finish()
    }
}

/// The `bash` tool. Build it with [`super::bash_tool`].
pub struct BashTool {
    cwd: String,
    options: BashToolOptions,
    parameters: Value,
}

impl BashTool {
    /// A bash tool running commands in `cwd`.
    pub fn new(cwd: impl Into<String>, options: BashToolOptions) -> Self {
        let parameters = json!({
            "type": "object",
            "required": ["command"],
            "properties": {
                "command": {"type": "string", "description": "Shell command to execute"},
                "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"}
            }
        });
        BashTool { cwd: cwd.into(), options, parameters }
    }
}

/// How the process run ended.
enum Ending {
    Exited(i32),
    TimedOut { shell_exit: Option<(i32, f64)> },
    Aborted,
}

fn format_output(snapshot: &OutputSnapshot, last_line_bytes: usize, empty_text: &str) -> (String, Value) {
    let t = &snapshot.truncation;
    let mut text = if snapshot.content.is_empty() { empty_text.to_owned() } else { snapshot.content.clone() };
    // pi's `details` is undefined unless the output was truncated (no `"details": {}` in files).
    let mut details = Value::Null;
    if t.truncated {
        let mut d = Map::new();
        d.insert("truncation".into(), json!(t));
        if let Some(p) = &snapshot.full_output_path {
            d.insert("fullOutputPath".into(), json!(p));
        }
        details = Value::Object(d);
        let path = snapshot.full_output_path.as_deref().unwrap_or("undefined");
        let start = t.total_lines - t.output_lines + 1;
        let end = t.total_lines;
        if t.last_line_partial {
            text += &format!(
                "\n\n[Showing last {} of line {end} (line is {}). Full output: {path}]",
                format_size(t.output_bytes),
                format_size(last_line_bytes)
            );
        } else if t.truncated_by == Some(TruncatedBy::Lines) {
            text += &format!("\n\n[Showing lines {start}-{end} of {}. Full output: {path}]", t.total_lines);
        } else {
            text += &format!(
                "\n\n[Showing lines {start}-{end} of {} ({} limit). Full output: {path}]",
                t.total_lines,
                format_size(DEFAULT_MAX_BYTES)
            );
        }
    }
    (text, details)
}

fn append_status(text: &str, status: &str) -> String {
    if text.is_empty() { status.to_owned() } else { format!("{text}\n\n{status}") }
}

fn update_of(snapshot: &OutputSnapshot) -> AgentToolResult {
    let mut details = Map::new();
    if snapshot.truncation.truncated {
        details.insert("truncation".into(), json!(snapshot.truncation));
    }
    if let Some(p) = &snapshot.full_output_path {
        details.insert("fullOutputPath".into(), json!(p));
    }
    AgentToolResult::text(snapshot.content.clone()).with_details(Value::Object(details))
}

#[async_trait]
impl AgentTool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn constrained_sampling(&self) -> Option<Value> {
        Some(serde_json::json!({"type": "json_schema", "strict": "prefer"}))
    }

    /// pi's `bashOutputSchema`: what a codemode script's `tools.bash()` resolves to.
    fn output_schema(&self) -> Option<Value> {
        Some(serde_json::json!({
            "type": "object",
            "properties": {
                "output": {"type": "string", "description": "Combined stdout and stderr, possibly truncated"},
                "truncated": {"type": "boolean"},
                "full_output_path": {"type": "string", "description": "Full output, when truncated"},
                "exit_code": {"type": "number"},
                "wall_time_seconds": {"type": "number"}
            },
            "required": ["output", "truncated", "exit_code", "wall_time_seconds"]
        }))
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    async fn execute(
        &self,
        _id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let command = required_str(&args, "command")?;
        let timeout = optional_f64(&args, "timeout")?;
        let command = match &self.options.command_prefix {
            Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
            _ => command.to_owned(),
        };
        let mut env: BTreeMap<String, String> = std::env::vars().collect();
        for key in SESSION_ENV_KEYS {
            env.remove(key);
        }
        env.extend(self.options.session_env.iter().map(|(k, v)| (k.clone(), v.clone())));
        let mut spawn = BashSpawnContext { command, cwd: self.cwd.clone(), env };
        if let Some(hook) = &self.options.spawn_hook {
            spawn = hook(spawn);
        }

        ctx.update(AgentToolResult { content: Vec::new(), details: Value::Object(Map::new()), ..Default::default() });
        let mut output = OutputAccumulator::new("pi-bash");
        let started = Instant::now();
        let ending = run(&spawn, timeout, &self.options, &ctx, &mut output).await;
        output.finish();
        let snapshot = output.snapshot(true);
        output.close_temp_file();
        let last_line_bytes = output.last_line_bytes();
        let ending = match ending {
            Ok(e) => e,
            Err(e) => return Err(e),
        };
        match ending {
            Ending::Aborted => {
                let (text, _) = format_output(&snapshot, last_line_bytes, "");
                Err(ToolError::new(append_status(&text, "Command aborted")))
            }
            Ending::TimedOut { shell_exit } => {
                let (text, _) = format_output(&snapshot, last_line_bytes, "");
                let secs = timeout.map_or_else(String::new, js_number);
                let mut status = format!("Command timed out after {secs} seconds");
                if let Some((code, after)) = shell_exit {
                    status += &format!(
                        ". The shell exited with code {code} after {} seconds, but background processes it started kept writing output until the timeout.",
                        js_number(after)
                    );
                }
                Err(ToolError::new(append_status(&text, &status)))
            }
            Ending::Exited(code) => {
                let (text, details) = format_output(&snapshot, last_line_bytes, "(no output)");
                let wall = (started.elapsed().as_millis() as f64 / 100.0).round() / 10.0;
                let (full, truncated) = output.read_full_output(STRUCTURED_OUTPUT_MAX_BYTES);
                let mut structured = Map::new();
                structured.insert("output".into(), json!(full));
                structured.insert("truncated".into(), json!(truncated));
                if let (true, Some(p)) = (truncated, &snapshot.full_output_path) {
                    structured.insert("full_output_path".into(), json!(p));
                }
                structured.insert("exit_code".into(), json!(code));
                structured.insert("wall_time_seconds".into(), json!(wall));
                let text =
                    if code != 0 { append_status(&text, &format!("Command exited with code {code}")) } else { text };
                let mut result = AgentToolResult::text(text).with_details(details);
                result.structured_content = Some(Value::Object(structured));
                result.is_error = code != 0;
                Ok(result)
            }
        }
    }
}

/// Validates the timeout in seconds (pi's `resolveTimeoutMs`).
fn resolve_timeout(timeout: Option<f64>) -> Result<Option<Duration>, ToolError> {
    let Some(t) = timeout else { return Ok(None) };
    if !t.is_finite() || t <= 0.0 {
        return Err(ToolError::new("Invalid timeout: must be a finite number of seconds"));
    }
    if t * 1000.0 > MAX_TIMEOUT_MS {
        return Err(ToolError::new(format!(
            "Invalid timeout: maximum is {} seconds",
            js_number(MAX_TIMEOUT_MS / 1000.0)
        )));
    }
    Ok(Some(Duration::from_secs_f64(t)))
}

async fn run(
    spawn: &BashSpawnContext,
    timeout: Option<f64>,
    options: &BashToolOptions,
    ctx: &ToolContext,
    output: &mut OutputAccumulator,
) -> Result<Ending, ToolError> {
    let timeout = resolve_timeout(timeout)?;
    if ctx.is_cancelled() {
        return Ok(Ending::Aborted);
    }
    let shell = resolve_shell(options.shell_path.as_deref()).map_err(ToolError::new)?;
    if !std::path::Path::new(&spawn.cwd).exists() {
        return Err(ToolError::new(format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            spawn.cwd
        )));
    }
    let mut child = spawn_shell(&shell, &spawn.command, &spawn.cwd, &spawn.env)
        .map_err(|e| ToolError::new(format!("Failed to spawn {shell}: {e}")))?;
    let pid = child.id().unwrap_or(0);
    let _tracked = track_group(pid);
    tracing::debug!(pid, "bash: spawned");
    let mut rx = output_chunks(&mut child);

    let started = Instant::now();
    let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
    let mut exit: Option<(i32, f64)> = None;
    let mut killed_for: Option<Ending> = None;
    let mut pipes_open = true;
    let mut idle_deadline: Option<tokio::time::Instant> = None;
    let mut dirty = false;
    let mut last_update: Option<Instant> = None;

    loop {
        if exit.is_some() && !pipes_open {
            break;
        }
        let update_due =
            last_update.map_or(tokio::time::Instant::now(), |t| tokio::time::Instant::from_std(t + UPDATE_THROTTLE));
        tokio::select! {
            chunk = rx.recv(), if pipes_open => match chunk {
                Some(data) => {
                    output.append(&data);
                    dirty = true;
                    if exit.is_some() {
                        idle_deadline = Some(tokio::time::Instant::now() + EXIT_STDIO_GRACE);
                    }
                }
                None => pipes_open = false,
            },
            status = child.wait(), if exit.is_none() => {
                let code = match status {
                    Ok(s) => {
                        use std::os::unix::process::ExitStatusExt;
                        s.code().or_else(|| s.signal().map(|sig| 128 + sig)).unwrap_or(1)
                    }
                    Err(_) => 1,
                };
                exit = Some((code, (started.elapsed().as_millis() as f64 / 100.0).round() / 10.0));
                idle_deadline = Some(tokio::time::Instant::now() + EXIT_STDIO_GRACE);
            },
            _ = async { tokio::time::sleep_until(idle_deadline.unwrap_or_else(tokio::time::Instant::now)).await }, if idle_deadline.is_some() && exit.is_some() && pipes_open => {
                // Background processes hold the pipes but are quiet: stop waiting for them.
                pipes_open = false;
            },
            _ = async { tokio::time::sleep_until(deadline.unwrap_or_else(tokio::time::Instant::now)).await }, if deadline.is_some() && killed_for.is_none() => {
                let shell_exit = exit;
                kill_process_tree(pid);
                killed_for = Some(Ending::TimedOut { shell_exit });
                if exit.is_some() {
                    pipes_open = false;
                }
            },
            _ = ctx.cancel_token().cancelled(), if killed_for.is_none() => {
                kill_process_tree(pid);
                killed_for = Some(Ending::Aborted);
                if exit.is_some() {
                    pipes_open = false;
                }
            },
            _ = tokio::time::sleep_until(update_due), if dirty => {
                dirty = false;
                last_update = Some(Instant::now());
                ctx.update(update_of(&output.snapshot(true)));
            },
        }
    }
    if dirty {
        ctx.update(update_of(&output.snapshot(true)));
    }
    Ok(match killed_for {
        Some(e) => e,
        None => Ending::Exited(exit.map_or(1, |(c, _)| c)),
    })
}
