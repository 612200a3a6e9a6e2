//! RPC mode (`--mode rpc`): JSON commands on stdin, responses and session events on stdout.
//! Shutdown on stdin EOF (running user commands and the active run are aborted; commands still
//! running are awaited).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

use pi_ai::{Model, ThinkingLevel};
use serde_json::{Map, Value, json};

use super::json_event::{JsonEventEncoder, agent_settled};
use super::output::{write_line, write_record};
use super::rpc_command::{RpcCommand, RpcRequest, failure, parse_command, success};
use super::rpc_queries::{self, SourceRoots, queue_mode_name};
use crate::cli::model_scope::ScopedModel;
use crate::extensions::{InputSource, StreamingBehavior};
use crate::sdk::{AgentSession, PreflightCallback, PromptDisposition, PromptOptions, QueueDisposition, SdkError};

/// The response of a queued input: `{disposition}` or the error.
fn queued(id: Option<&str>, kind: &str, result: Result<QueueDisposition, SdkError>) -> Value {
    match result {
        Ok(d) => success(id, kind, Some(json!({"disposition": d.as_str()}))),
        Err(e) => failure(id, kind, &e.to_string()),
    }
}

/// What RPC mode needs besides the session.
pub struct RpcContext {
    /// Models with credentials, for `set_model` and `cycle_model`.
    pub available_models: Vec<Model>,
    /// The `--models` / `enabledModels` scope `cycle_model` goes through when it is not empty.
    pub scoped_models: Vec<ScopedModel>,
    /// Project and agent directories, for `get_commands`' `sourceInfo`.
    pub roots: SourceRoots,
}

/// The models `get_available_models`, `set_model` and `cycle_model` see now (pi's available
/// snapshot): the registry's with credentials, then the models of the providers extensions have
/// registered that have configured auth (in registration order; a provider's replace the registry's of that name), then
/// the virtual models (each hiding a physical model with its provider and id).
fn current_models(session: &AgentSession, ctx: &RpcContext) -> Vec<Model> {
    let mut models = ctx.available_models.clone();
    let Some(runner) = session.extension_runner() else { return models };
    let providers = runner.registered_providers();
    models.retain(|m| !providers.iter().any(|p| p.name == m.provider));
    for provider in &runner.available_registered_providers() {
        models.extend(provider.model_values().into_iter().filter_map(|v| serde_json::from_value(v).ok()));
    }
    crate::extensions::with_virtual_models(models, &runner.virtual_models())
}

/// pi's `getNextCycleIndex` (forward): the first entry when the current model is not in the
/// list, nothing when it is the only one.
fn next_cycle_index(current: Option<usize>, len: usize) -> Option<usize> {
    match current {
        _ if len == 0 => None,
        None => Some(0),
        Some(_) if len == 1 => None,
        Some(i) => Some((i + 1) % len),
    }
}

fn state(session: &AgentSession) -> Value {
    // pi's key order; `sessionFile` and `sessionName` are left out when absent.
    let mut o = Map::new();
    o.insert("model".into(), serde_json::to_value(session.model()).unwrap_or_default());
    o.insert("thinkingLevel".into(), json!(session.thinking_level().as_str()));
    o.insert("isStreaming".into(), json!(session.is_streaming()));
    o.insert("isCompacting".into(), json!(session.is_compacting()));
    o.insert("steeringMode".into(), json!(queue_mode_name(session.agent().steering_mode())));
    o.insert("followUpMode".into(), json!(queue_mode_name(session.agent().follow_up_mode())));
    if let Some(f) = session.session_file() {
        o.insert("sessionFile".into(), json!(f.display().to_string()));
    }
    o.insert("sessionId".into(), json!(session.session_id()));
    if let Some(n) = session.session_name() {
        o.insert("sessionName".into(), json!(n));
    }
    o.insert("autoCompactionEnabled".into(), json!(session.settings().compaction.enabled));
    o.insert("messageCount".into(), json!(session.messages().len()));
    o.insert("pendingMessageCount".into(), json!(session.pending_message_count()));
    Value::Object(o)
}

/// Runs the RPC loop until stdin closes; returns the exit status.
///
/// As pi, every command line is handled concurrently: its handler runs at once, in line order, up
/// to the point where it waits (like the synchronous part of pi's async handler), and then goes on
/// as its own task, answering when it finishes. So `abort` reaches a running `compact`,
/// `abort_bash` a running `bash`, and `get_state` answers while they run; commands that never
/// wait answer in line order. Every record is written as one whole line.
pub async fn run_rpc(session: AgentSession, ctx: RpcContext) -> i32 {
    let mut ctx = ctx;
    // The models extensions registered are read when a command needs them (they change while
    // the session runs, as pi's snapshot does): the startup list keeps the registry's.
    if let Some(runner) = session.extension_runner() {
        let registered = crate::sdk::model_choice::extension_models(runner);
        ctx.available_models.retain(|m| !registered.iter().any(|e| e.same_as(m)));
    }
    let ctx = Arc::new(ctx);
    let encoder = Arc::new(Mutex::new(JsonEventEncoder::new()));
    let enc = encoder.clone();
    let _sub = session.subscribe(move |event| {
        if let crate::sdk::SessionEvent::AgentSettled { aborted } = event {
            write_record(&agent_settled(*aborted));
            return;
        }
        let record = enc.lock().unwrap_or_else(|e| e.into_inner()).encode(event);
        if let Some(record) = record {
            write_record(&record);
        }
    });
    let ui = super::rpc_ui::RpcUi::new(Arc::new(write_record));
    if let Some(runner) = session.extension_runner() {
        runner.set_ui(ui.clone());
        runner.set_mode(crate::extensions::ExtensionMode::Rpc, true);
    }
    // pi's `onError` in RPC mode: an `extension_error` record.
    let _errors = session.extension_runner().map(|runner| {
        runner.on_error(|e| {
            write_record(&json!({"type": "extension_error", "extensionPath": e.extension_path,
                "event": e.event, "error": e.error}));
        })
    });
    // pi's `shutdownHandler`: an extension's `ctx.shutdown()` ends the loop once no command is
    // being handled (a prompt counts until it settles) and the session is idle.
    let shutdown = Arc::new((AtomicBool::new(false), tokio::sync::Notify::new(), AtomicUsize::new(0)));
    let gate = shutdown.clone();
    session.set_extension_shutdown_handler(move || {
        gate.0.store(true, Ordering::SeqCst);
        gate.1.notify_one();
    });
    let gate = shutdown.clone();
    let _settled = session.subscribe(move |event| {
        if matches!(event, crate::sdk::SessionEvent::AgentSettled { .. }) {
            gate.1.notify_one();
        }
    });
    // Errors are reported by the listener registered above.
    session.bind_extensions(|_| {}).await;
    // A plain thread reads stdin, so a shutdown with stdin still open leaves no blocking read
    // the runtime would wait for (the process exits past it).
    let (line_tx, mut lines) = tokio::sync::mpsc::unbounded_channel();
    let reader = std::thread::Builder::new().name("rpc-stdin".into()).spawn(move || {
        let mut stdin = std::io::stdin().lock();
        while let Some(line) = next_line_blocking(&mut stdin) {
            if line_tx.send(line).is_err() {
                break;
            }
        }
    });
    if let Err(e) = reader {
        eprintln!("Error: reading stdin: {e}");
        return 1;
    }
    let mut running: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    loop {
        running.retain(|task| !task.is_finished());
        if shutdown.0.load(Ordering::SeqCst) && shutdown.2.load(Ordering::SeqCst) == 0 && !session.is_streaming() {
            break;
        }
        let line = tokio::select! {
            line = lines.recv() => match line {
                Some(line) => line,
                None => break,
            },
            _ = shutdown.1.notified() => continue,
        };
        if line.trim().is_empty() {
            continue;
        }
        if ui.handle_line(&line) {
            continue;
        }
        let request = match parse_command(&line) {
            Ok(r) => r,
            Err(response) => {
                write_record(&response);
                continue;
            }
        };
        let mut command = Box::pin(handle(session.clone(), ctx.clone(), request));
        match std::future::poll_fn(|cx| Poll::Ready(command.as_mut().poll(cx))).await {
            Poll::Ready(response) => {
                if let Some(response) = response {
                    write_record(&response);
                }
            }
            Poll::Pending => {
                let done = shutdown.clone();
                done.2.fetch_add(1, Ordering::SeqCst);
                running.push(tokio::spawn(async move {
                    if let Some(response) = command.await {
                        write_record(&response);
                    }
                    done.2.fetch_sub(1, Ordering::SeqCst);
                    done.1.notify_one();
                }));
            }
        }
    }
    // As pi's shutdown (`dispose` aborts user commands and the run) before the commands still
    // running are awaited.
    session.abort_bash();
    if session.is_streaming() {
        session.abort().await;
    }
    for task in running {
        let _ = task.await;
    }
    session.dispose().await;
    0
}

/// The next `\n`-terminated line of stdin (the last one may lack it), decoded as pi's
/// `StringDecoder` does: bytes that are not UTF-8 become U+FFFD, so a garbled line is answered with
/// the parse error and the loop goes on. `None` at end of input or on a read error.
fn next_line_blocking(reader: &mut impl std::io::BufRead) -> Option<String> {
    let mut bytes = Vec::new();
    match reader.read_until(b'\n', &mut bytes) {
        Ok(0) => None,
        Ok(_) => {
            if bytes.last() == Some(&b'\n') {
                bytes.pop();
            }
            Some(match String::from_utf8(bytes) {
                Ok(s) => s,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            })
        }
        Err(e) => {
            eprintln!("Error: reading stdin: {e}");
            None
        }
    }
}

/// Handles one command; `None` when the handler answered itself (`prompt`).
async fn handle(session: AgentSession, ctx: Arc<RpcContext>, request: RpcRequest) -> Option<Value> {
    let (session, ctx) = (&session, &*ctx);
    let RpcRequest { id, kind, command } = request;
    let id = id.as_deref();
    Some(match command {
        RpcCommand::Prompt { message, images, streaming_behavior } => {
            // As pi: the prompt starts at once and is answered when its preflight decides
            // (started / queued / handled), or with the error that stopped it before that.
            let streaming_behavior = match streaming_behavior.as_deref() {
                Some("steer") => Some(StreamingBehavior::Steer),
                Some("followUp") => Some(StreamingBehavior::FollowUp),
                _ => None,
            };
            let answered = Arc::new(AtomicBool::new(false));
            let (flag, answer_id, answer_kind) = (answered.clone(), id.map(str::to_owned), kind.clone());
            let preflight = PreflightCallback(Arc::new(move |d: PromptDisposition| {
                if !flag.swap(true, Ordering::SeqCst) {
                    let data = json!({"disposition": d.as_str()});
                    write_record(&success(answer_id.as_deref(), &answer_kind, Some(data)));
                }
            }));
            let options = PromptOptions {
                images,
                source: Some(InputSource::Rpc),
                streaming_behavior,
                preflight: Some(preflight),
                ..Default::default()
            };
            let result = session.prompt_with(&message, options).await;
            // stderr, never stdout: stdout carries the protocol.
            super::print::report_persist_error(session);
            if let Err(e) = result {
                if answered.swap(true, Ordering::SeqCst) {
                    tracing::error!(error = %e, "prompt failed");
                } else {
                    return Some(failure(id, &kind, &e.to_string()));
                }
            }
            return None;
        }
        RpcCommand::Steer { message, images } => queued(
            id,
            &kind,
            session.queue_user_input(&message, images, StreamingBehavior::Steer, InputSource::Rpc).await,
        ),
        RpcCommand::FollowUp { message, images } => queued(
            id,
            &kind,
            session.queue_user_input(&message, images, StreamingBehavior::FollowUp, InputSource::Rpc).await,
        ),
        RpcCommand::Abort => {
            session.abort().await;
            success(id, &kind, None)
        }
        RpcCommand::Bash { command, exclude_from_context } => {
            match session.execute_bash_with_id(&command, exclude_from_context, id).await {
                Ok(r) => success(id, &kind, Some(r.to_json())),
                Err(e) => failure(id, &kind, &e.to_string()),
            }
        }
        RpcCommand::AbortBash => {
            session.abort_bash();
            success(id, &kind, None)
        }
        RpcCommand::GetState => success(id, &kind, Some(state(session))),
        RpcCommand::GetMessages => {
            let messages = serde_json::to_value(session.messages()).unwrap_or_default();
            success(id, &kind, Some(json!({"messages": messages})))
        }
        RpcCommand::SetModel { provider, model_id } => {
            match current_models(session, ctx).iter().find(|m| m.provider == provider && m.id == model_id) {
                Some(m) => match session.set_model(m.clone()) {
                    Ok(()) => success(id, &kind, Some(serde_json::to_value(m).unwrap_or_default())),
                    Err(e) => failure(id, &kind, &e.to_string()),
                },
                None => failure(id, &kind, &format!("Model not found: {provider}/{model_id}")),
            }
        }
        RpcCommand::CycleModel => {
            let current = session.model();
            let available = current_models(session, ctx);
            // pi cycles through the `--models` scope (those with credentials) when there is one.
            let scoped: Vec<&ScopedModel> =
                ctx.scoped_models.iter().filter(|s| available.iter().any(|m| m.same_as(&s.model))).collect();
            let (next, level, is_scoped) = if ctx.scoped_models.is_empty() {
                let at = available.iter().position(|m| m.same_as(&current));
                match next_cycle_index(at, available.len()) {
                    Some(i) => (available[i].clone(), None, false),
                    None => return Some(success(id, &kind, Some(Value::Null))),
                }
            } else {
                let at = scoped.iter().position(|s| s.model.same_as(&current));
                match next_cycle_index(at, scoped.len()) {
                    Some(i) => {
                        let level = scoped[i].thinking_level.as_deref().and_then(ThinkingLevel::parse);
                        (scoped[i].model.clone(), level, true)
                    }
                    None => return Some(success(id, &kind, Some(Value::Null))),
                }
            };
            let result = session.set_model(next.clone()).and_then(|()| match level {
                Some(level) => session.set_thinking_level(level),
                None => Ok(()),
            });
            match result {
                Ok(()) => success(
                    id,
                    &kind,
                    Some(json!({"model": serde_json::to_value(&next).unwrap_or_default(),
                        "thinkingLevel": session.thinking_level().as_str(), "isScoped": is_scoped})),
                ),
                Err(e) => failure(id, &kind, &e.to_string()),
            }
        }
        RpcCommand::SetThinkingLevel { level } => match ThinkingLevel::parse(&level) {
            Some(l) => match session.set_thinking_level(l) {
                Ok(()) => success(id, &kind, None),
                Err(e) => failure(id, &kind, &e.to_string()),
            },
            None => failure(id, &kind, &format!("Invalid thinking level: {level}")),
        },
        RpcCommand::GetLastAssistantText => {
            success(id, &kind, Some(json!({"text": session.get_last_assistant_text()})))
        }
        RpcCommand::GetSessionStats => success(id, &kind, Some(session.get_session_stats().to_json())),
        RpcCommand::Compact { custom_instructions } => match session.compact(custom_instructions.as_deref()).await {
            Ok(result) => success(id, &kind, Some(result.to_json())),
            Err(e) => failure(id, &kind, &e.to_string()),
        },
        RpcCommand::SetAutoCompaction { enabled } => {
            session.set_auto_compaction_enabled(enabled);
            success(id, &kind, None)
        }
        RpcCommand::SetAutoRetry { enabled } => {
            session.set_auto_retry_enabled(enabled);
            success(id, &kind, None)
        }
        RpcCommand::AbortRetry => {
            session.abort_retry();
            success(id, &kind, None)
        }
        RpcCommand::ClearQueue => {
            let (steering, follow_up) = session.clear_queue();
            success(id, &kind, Some(json!({"steering": steering, "followUp": follow_up})))
        }
        RpcCommand::NewSession { parent_session } => match session.new_session(parent_session).await {
            Ok(r) => success(id, &kind, Some(json!({"cancelled": r.cancelled}))),
            Err(e) => failure(id, &kind, &e.to_string()),
        },
        RpcCommand::SwitchSession { session_path } => {
            match session.switch_session(std::path::Path::new(&session_path)).await {
                Ok(r) => success(id, &kind, Some(json!({"cancelled": r.cancelled}))),
                Err(e) => failure(id, &kind, &e.to_string()),
            }
        }
        RpcCommand::Fork { entry_id } => match session.fork(&entry_id).await {
            Ok(r) => {
                let mut data = Map::new();
                if let Some(text) = r.selected_text {
                    data.insert("text".into(), json!(text));
                }
                data.insert("cancelled".into(), json!(r.cancelled));
                success(id, &kind, Some(Value::Object(data)))
            }
            Err(e) => failure(id, &kind, &e.to_string()),
        },
        RpcCommand::Clone => {
            let leaf = session.leaf_id();
            let Some(leaf) = leaf else {
                return Some(failure(id, &kind, "Cannot clone session: no current entry selected"));
            };
            match session.clone_at(&leaf).await {
                Ok(r) => success(id, &kind, Some(json!({"cancelled": r.cancelled}))),
                Err(e) => failure(id, &kind, &e.to_string()),
            }
        }
        RpcCommand::GetForkMessages => {
            let messages = serde_json::to_value(session.get_fork_messages()).unwrap_or_default();
            success(id, &kind, Some(json!({"messages": messages})))
        }
        RpcCommand::CycleThinkingLevel => rpc_queries::cycle_thinking_level(session, id, &kind),
        RpcCommand::GetAvailableThinkingLevels => rpc_queries::available_thinking_levels(session, id, &kind),
        RpcCommand::GetAvailableModels => rpc_queries::available_models(&current_models(session, ctx), id, &kind),
        RpcCommand::SetSteeringMode { mode } => rpc_queries::set_queue_mode(session, id, &kind, &mode, true),
        RpcCommand::SetFollowUpMode { mode } => rpc_queries::set_queue_mode(session, id, &kind, &mode, false),
        RpcCommand::SetSessionName { name } => rpc_queries::set_session_name(session, id, &kind, &name),
        RpcCommand::GetEntries { since } => rpc_queries::entries(session, id, &kind, since.as_deref()),
        RpcCommand::GetTree => {
            // Written as text: a deep tree is never a nested value.
            write_line(&rpc_queries::tree_response_line(session, id, &kind));
            return None;
        }
        RpcCommand::GetCommands => rpc_queries::commands(session, &ctx.roots, id, &kind),
        RpcCommand::ExportHtml { output_path } => rpc_queries::export_html(session, id, &kind, output_path.as_deref()),
        RpcCommand::Other(other) => failure(id, &other, &format!("Unknown command: {other}")),
    })
}
