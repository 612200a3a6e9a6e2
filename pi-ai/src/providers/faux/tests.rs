use futures::StreamExt;
use serde_json::json;

use super::*;
use crate::transcript::normalize_context;
use crate::types::{Context, Tool, ToolResultMessage, UserMessage};

fn one_by_one() -> FauxProvider {
    FauxProvider::new(FauxOptions { token_size: TokenSize { min: 1, max: 1 }, ..Default::default() })
}

fn echo() -> Tool {
    Tool::new(
        "echo",
        "Echo text",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    )
}

fn context(messages: Vec<Message>) -> TranscriptContext {
    normalize_context(Context { system_prompt: Some("Be brief.".into()), messages, tools: Some(vec![echo()]) })
}

fn reply() -> AssistantMessage {
    faux_assistant_message(
        vec![
            faux_thinking("think!"),
            faux_text("Hello world"),
            faux_tool_call("echo", json!({"text": "hi there"}), Some("c1")),
        ],
        FauxMessageOptions { stop_reason: Some(StopReason::ToolUse), ..Default::default() },
    )
}

fn describe(event: &Ev) -> String {
    let mut s = event.kind().to_owned();
    if let Some(i) = event.content_index() {
        s.push_str(&format!("@{i}"));
    }
    match event {
        Ev::TextDelta { delta, .. } | Ev::ThinkingDelta { delta, .. } | Ev::ToolCallDelta { delta, .. } => {
            s.push_str(&format!(" {}", serde_json::to_string(delta).unwrap()));
        }
        _ => {}
    }
    s
}

async fn run(stream: AssistantMessageEventStream) -> (Vec<String>, AssistantMessage) {
    let mut stream = stream;
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        events.push(describe(&e));
    }
    (events, stream.result().await)
}

fn session(id: &str) -> StreamOptions {
    StreamOptions { session_id: Some(id.into()), ..Default::default() }
}

#[tokio::test]
async fn exact_event_sequence_and_cache_usage() {
    let faux = one_by_one();
    faux.set_responses(vec![reply().into(), faux_assistant_message(vec![faux_text("ok")], Default::default()).into()]);
    let user = Message::User(UserMessage::new("Say hi").at(1).into());
    let (events, m1) = run(faux.stream(&faux.model(), context(vec![user.clone()]), session("s1"))).await;
    assert_eq!(
        events.join(" | "),
        r#"start | thinking_start@0 | thinking_delta@0 "thin" | thinking_delta@0 "k!" | thinking_end@0 | text_start@1 | text_delta@1 "Hell" | text_delta@1 "o wo" | text_delta@1 "rld" | text_end@1 | toolcall_start@2 | toolcall_delta@2 "{\"te" | toolcall_delta@2 "xt\":" | toolcall_delta@2 "\"hi " | toolcall_delta@2 "ther" | toolcall_delta@2 "e\"}" | toolcall_end@2 | done"#
    );
    assert_eq!((m1.usage.input, m1.usage.output, m1.usage.cache_read, m1.usage.cache_write), (0, 11, 0, 42));
    assert_eq!(m1.usage.total_tokens, 53);
    assert_eq!(m1.stop_reason, StopReason::ToolUse);
    assert_eq!(m1.api, faux.api());
    assert!(m1.duration_ms.is_some());
    let result = Message::ToolResult(
        ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "echo".into(),
            content: vec![UserBlock::Text(TextContent::new("hi there"))],
            timestamp: 2,
            ..Default::default()
        }
        .into(),
    );
    let messages = vec![user, Message::Assistant(m1.into()), result];
    let (_, m2) = run(faux.stream(&faux.model(), context(messages.clone()), session("s1"))).await;
    assert_eq!((m2.usage.input, m2.usage.output, m2.usage.cache_read, m2.usage.cache_write), (0, 1, 42, 21));
    let (events, m3) = run(faux.stream(&faux.model(), context(messages), Default::default())).await;
    assert_eq!(events, ["error"]);
    assert_eq!(m3.error_message.as_deref(), Some("No more faux responses queued"));
    assert_eq!((m3.usage.input, m3.usage.total_tokens), (63, 63));
    assert_eq!(faux.state().call_count, 3);
}

#[tokio::test]
async fn steps_are_taken_at_request_start_and_factories_see_the_request() {
    let faux = one_by_one();
    faux.set_responses(vec![
        FauxStep::factory(|req: FauxRequest| async move {
            let n = req.context.messages().len();
            Ok(faux_assistant_message(
                vec![faux_text(format!("{n} messages, call {}", req.state.call_count))],
                Default::default(),
            ))
        }),
        FauxStep::factory(|_req: FauxRequest| async move { Err("boom".to_owned()) }),
    ]);
    let ctx = context(vec![Message::User(UserMessage::new("hi").into())]);
    let first = faux.stream(&faux.model(), ctx.clone(), Default::default());
    let second = faux.stream(&faux.model(), ctx, Default::default());
    assert_eq!(faux.pending_response_count(), 0);
    let (events, m2) = run(second).await;
    assert_eq!((events, m2.error_message.as_deref()), (vec!["error".to_owned()], Some("boom")));
    assert_eq!(run(first).await.1.text(), "2 messages, call 2");
}

#[tokio::test]
async fn abort_before_and_during_the_stream() {
    let faux = one_by_one();
    faux.set_responses(vec![
        faux_assistant_message(vec![faux_text("Hello world, this is long")], Default::default()).into(),
        faux_assistant_message(vec![faux_text("x")], Default::default()).into(),
    ]);
    let token = tokio_util::sync::CancellationToken::new();
    let options = StreamOptions { cancel: Some(token.clone()), ..Default::default() };
    let mut stream = faux.stream(&faux.model(), context(vec![]), options.clone());
    let mut seen = Vec::new();
    while let Some(e) = stream.next().await {
        seen.push(e.kind());
        if stream.partial().text() == "Hello world, thi" {
            token.cancel();
        }
    }
    let m = stream.result().await;
    assert_eq!(seen.last(), Some(&"error"));
    assert_eq!((m.stop_reason, m.error_message.as_deref()), (StopReason::Aborted, Some("Request was aborted")));
    assert_eq!(m.text(), "Hello world, thi");
    let (events, m) = run(faux.stream(&faux.model(), context(vec![]), options)).await;
    assert_eq!(events, ["error"]);
    assert_eq!(m.stop_reason, StopReason::Aborted);
}

#[tokio::test]
async fn scripted_errors_and_pacing() {
    let faux = FauxProvider::new(FauxOptions { tokens_per_second: Some(1000.0), ..Default::default() });
    faux.set_responses(vec![
        faux_assistant_message(
            vec![faux_text("partial")],
            FauxMessageOptions {
                stop_reason: Some(StopReason::Error),
                error_message: Some("scripted".into()),
                ..Default::default()
            },
        )
        .into(),
    ]);
    let (events, m) = run(faux.stream(&faux.model(), context(vec![]), Default::default())).await;
    assert_eq!(events.first().map(String::as_str), Some("start"));
    assert_eq!(events.last().map(String::as_str), Some("error"));
    assert_eq!(
        (m.stop_reason, m.error_message.as_deref(), m.text().as_str()),
        (StopReason::Error, Some("scripted"), "partial")
    );
}

#[test]
fn empty_text_streams_one_empty_delta_and_ids_are_random() {
    let faux = one_by_one();
    assert_eq!(faux.chunks(""), vec![String::new()]);
    let a = faux_tool_call("t", json!({}), None);
    let b = faux_tool_call("t", json!({}), None);
    assert_ne!(a, b);
    assert!(faux.api().starts_with("faux:"));
}
