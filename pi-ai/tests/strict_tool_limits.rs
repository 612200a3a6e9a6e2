//! Claude's strict-tool limits on `anthropic-messages` (pi's `strict-tool-limits.js`): a 400 naming
//! them makes pi send the request once more with its `"prefer"` tools non-strict, record an
//! `anthropic_strict_tools_fallback` diagnostic, and keep them non-strict for the session; any other
//! 400 is the answer.

mod support;

use pi_ai::options::StreamOptions;
use pi_ai::providers::anthropic::AnthropicMessages;
use pi_ai::transcript::normalize_context;
use pi_ai::{ApiProvider, Context, Message, Tool, UserMessage};
use serde_json::json;
use support::{MockServer, Reply};

fn context() -> pi_ai::transcript::TranscriptContext {
    let mut tool = Tool::new(
        "read",
        "Read",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    );
    tool.constrained_sampling = Some(json!({"type": "json_schema", "strict": "prefer"}));
    normalize_context(Context {
        tools: Some(vec![tool]),
        messages: vec![Message::User(UserMessage::new("hi").into())],
        ..Default::default()
    })
}

fn ok() -> Reply {
    Reply::sse(support::fixtures::ok_reply("anthropic-messages"))
}

fn limit() -> Reply {
    Reply::error(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"Too many strict tools (21). The limit is 20."}}"#,
    )
}

fn model(base: &str) -> pi_ai::Model {
    let mut model = support::fixtures::model("anthropic-messages", base);
    model.compat = Some(json!({"supportsStrictTools": true}).as_object().unwrap().clone());
    model
}

#[tokio::test]
async fn the_limit_falls_back_once_and_the_session_remembers() {
    let server = MockServer::start([limit(), ok(), ok()]).await;
    let options =
        StreamOptions { api_key: Some("k".into()), session_id: Some("anthropic-limits".into()), ..Default::default() };
    let first = AnthropicMessages.stream(&model(&server.url()), context(), options.clone()).result().await;
    assert_eq!(first.error_message, None);
    let diagnostic = &first.diagnostics.as_ref().expect("a diagnostic")[0];
    assert_eq!(diagnostic["type"], "anthropic_strict_tools_fallback");
    assert_eq!(diagnostic["error"]["message"], "Too many strict tools (21). The limit is 20.");
    assert_eq!(diagnostic["details"], json!({"reason": "strict_tool_limits_exceeded"}));
    let second = AnthropicMessages.stream(&model(&server.url()), context(), options).result().await;
    assert_eq!(second.error_message, None);
    assert_eq!(second.diagnostics, None);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body["tools"][0]["strict"], json!(true));
    assert_eq!(requests[1].body["tools"][0].get("strict"), None);
    assert_eq!(requests[2].body["tools"][0].get("strict"), None, "the session remembers the limit");
}

#[tokio::test]
async fn another_rejection_is_the_answer() {
    let other =
        Reply::error(400, r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad schema"}}"#);
    let server = MockServer::start([other, ok()]).await;
    let options =
        StreamOptions { api_key: Some("k".into()), session_id: Some("anthropic-other".into()), ..Default::default() };
    let result = AnthropicMessages.stream(&model(&server.url()), context(), options).result().await;
    assert_eq!(
        result.error_message.as_deref(),
        Some(r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"bad schema"}}"#)
    );
    assert_eq!(server.requests().len(), 1);
}
