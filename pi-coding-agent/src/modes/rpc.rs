//! RPC mode (`--mode rpc`): JSON commands on stdin, responses and session events on stdout.
//! Shutdown on stdin EOF (the active run is aborted and awaited).

use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantBlock, Model, ThinkingLevel};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::json_event::{JsonEventEncoder, agent_settled};
use super::output::write_record;
use super::rpc_command::{RpcCommand, RpcRequest, failure, parse_command, success};
use crate::sdk::AgentSession;

/// What RPC mode needs besides the session.
pub struct RpcContext {
    /// Models with credentials, for `set_model` and `cycle_model`.
    pub available_models: Vec<Model>,
}

fn state(session: &AgentSession) -> Value {
    let mut data = json!({
        "model": serde_json::to_value(session.model()).unwrap_or_default(),
        "thinkingLevel": session.thinking_level().as_str(),
        "isStreaming": session.is_streaming(),
        "isCompacting": false,
        "steeringMode": "one-at-a-time",
        "followUpMode": "one-at-a-time",
        "sessionId": session.session_id(),
        "autoCompactionEnabled": false,
        "messageCount": session.messages().len(),
        "pendingMessageCount": 0,
    });
    if let (Some(f), Value::Object(o)) = (session.session_file(), &mut data) {
        o.insert("sessionFile".into(), json!(f.display().to_string()));
    }
    if let (Some(n), Value::Object(o)) = (session.session_manager().session_name(), &mut data) {
        o.insert("sessionName".into(), json!(n));
    }
    data
}

fn stats(session: &AgentSession) -> Value {
    let messages = session.messages();
    let (mut user, mut assistant, mut calls, mut results) = (0, 0, 0, 0);
    let (mut input, mut output, mut cache_read, mut cache_write, mut cost) = (0u64, 0u64, 0u64, 0u64, 0f64);
    for m in &messages {
        match m {
            AgentMessage::User(_) => user += 1,
            AgentMessage::Assistant(a) => {
                assistant += 1;
                calls += a.content.iter().filter(|b| matches!(b, AssistantBlock::ToolCall(_))).count();
                input += a.usage.input;
                output += a.usage.output;
                cache_read += a.usage.cache_read;
                cache_write += a.usage.cache_write;
                cost += a.usage.cost.total;
            }
            AgentMessage::ToolResult(_) => results += 1,
            _ => {}
        }
    }
    let mut data = json!({
        "sessionId": session.session_id(),
        "userMessages": user, "assistantMessages": assistant, "toolCalls": calls, "toolResults": results,
        "totalMessages": messages.len(),
        "tokens": {"input": input, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
                   "total": input + output + cache_read + cache_write},
        "cost": cost,
    });
    if let (Some(f), Value::Object(o)) = (session.session_file(), &mut data) {
        o.insert("sessionFile".into(), json!(f.display().to_string()));
    }
    data
}

/// Runs the RPC loop until stdin closes; returns the exit status.
pub async fn run_rpc(session: AgentSession, ctx: RpcContext) -> i32 {
    let encoder = Arc::new(Mutex::new(JsonEventEncoder::new()));
    let enc = encoder.clone();
    let _sub = session.subscribe(move |event| {
        let record = enc.lock().unwrap_or_else(|e| e.into_inner()).encode(event);
        if let Some(record) = record {
            write_record(&record);
        }
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut running: Option<tokio::task::JoinHandle<()>> = None;
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        let request = match parse_command(&line) {
            Ok(r) => r,
            Err(response) => {
                write_record(&response);
                continue;
            }
        };
        let response = handle(&session, &ctx, request, &mut running).await;
        write_record(&response);
    }
    if session.is_streaming() {
        session.abort().await;
    }
    if let Some(task) = running.take() {
        let _ = task.await;
    }
    session.dispose().await;
    0
}

async fn handle(
    session: &AgentSession,
    ctx: &RpcContext,
    request: RpcRequest,
    running: &mut Option<tokio::task::JoinHandle<()>>,
) -> Value {
    let RpcRequest { id, kind, command } = request;
    let id = id.as_deref();
    match command {
        RpcCommand::Prompt { message, streaming_behavior } => {
            if session.is_streaming() {
                return match streaming_behavior.as_deref() {
                    Some("steer") => {
                        session.steer(&message);
                        success(id, &kind, Some(json!({"disposition": "queued"})))
                    }
                    Some("followUp") => {
                        session.follow_up(&message);
                        success(id, &kind, Some(json!({"disposition": "queued"})))
                    }
                    _ => failure(id, &kind, &crate::sdk::SdkError::Busy.to_string()),
                };
            }
            let s = session.clone();
            *running = Some(tokio::spawn(async move {
                if let Err(e) = s.prompt(&message).await {
                    tracing::error!(error = %e, "prompt failed");
                }
                write_record(&agent_settled(super::json::last_aborted(&s)));
            }));
            success(id, &kind, Some(json!({"disposition": "started"})))
        }
        RpcCommand::Steer { message } => {
            session.steer(&message);
            success(id, &kind, Some(json!({"disposition": "queued"})))
        }
        RpcCommand::FollowUp { message } => {
            session.follow_up(&message);
            success(id, &kind, Some(json!({"disposition": "queued"})))
        }
        RpcCommand::Abort => {
            session.abort().await;
            success(id, &kind, None)
        }
        RpcCommand::Bash { command, exclude_from_context } => {
            match session.execute_bash(&command, exclude_from_context).await {
                Ok(r) => {
                    let mut data = json!({"output": r.output, "cancelled": r.cancelled, "truncated": r.truncated});
                    if let Value::Object(o) = &mut data {
                        if let Some(c) = r.exit_code {
                            o.insert("exitCode".into(), json!(c));
                        }
                        if let Some(p) = r.full_output_path {
                            o.insert("fullOutputPath".into(), json!(p));
                        }
                    }
                    success(id, &kind, Some(data))
                }
                Err(e) => failure(id, &kind, &e.to_string()),
            }
        }
        RpcCommand::GetState => success(id, &kind, Some(state(session))),
        RpcCommand::GetMessages => {
            let messages = serde_json::to_value(session.messages()).unwrap_or_default();
            success(id, &kind, Some(json!({"messages": messages})))
        }
        RpcCommand::SetModel { provider, model_id } => {
            match ctx.available_models.iter().find(|m| m.provider == provider && m.id == model_id) {
                Some(m) => match session.set_model(m.clone()) {
                    Ok(()) => success(id, &kind, Some(serde_json::to_value(m).unwrap_or_default())),
                    Err(e) => failure(id, &kind, &e.to_string()),
                },
                None => failure(id, &kind, &format!("Model not found: {provider}/{model_id}")),
            }
        }
        RpcCommand::CycleModel => {
            if ctx.available_models.len() <= 1 {
                return success(id, &kind, Some(Value::Null));
            }
            let current = session.model();
            let pos = ctx.available_models.iter().position(|m| m.same_as(&current)).map_or(0, |p| p + 1);
            let next = ctx.available_models[pos % ctx.available_models.len()].clone();
            match session.set_model(next.clone()) {
                Ok(()) => success(
                    id,
                    &kind,
                    Some(json!({"model": serde_json::to_value(&next).unwrap_or_default(),
                        "thinkingLevel": session.thinking_level().as_str(), "isScoped": false})),
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
        RpcCommand::GetSessionStats => success(id, &kind, Some(stats(session))),
        RpcCommand::Other(other) => failure(id, &other, &format!("Unknown command: {other}")),
    }
}
