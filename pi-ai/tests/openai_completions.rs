//! `openai-completions` over real HTTP: event sequences, usage, stop reasons.

mod support;

use pi_ai::options::StreamOptions;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::transcript::normalize_context;
use pi_ai::{ApiProvider, AssistantBlock, Context, Message, StopReason, UserMessage};
use serde_json::json;
use support::{MockServer, Reply, data, run};

fn context() -> pi_ai::transcript::TranscriptContext {
    normalize_context(Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![Message::User(UserMessage::new("Weather in Paris?").into())],
        tools: None,
    })
}

fn options() -> StreamOptions {
    StreamOptions { api_key: Some("k".into()), ..Default::default() }
}

fn chunk(delta: serde_json::Value, finish: Option<&str>) -> String {
    data(
        &json!({"id": "chatcmpl-1", "model": "test-model", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
    )
}

/// pi's ✔ sequence: thinking, text and a streamed tool call; every `*_end` after the stream.
fn tool_stream() -> String {
    [
        chunk(json!({"role": "assistant", "content": null}), None),
        chunk(json!({"reasoning_content": "Need weather."}), None),
        chunk(json!({"content": "Let me check."}), None),
        chunk(json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}), None),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"ci"}}]}), None),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "ty\":\"Paris\"}"}}]}), None),
        chunk(json!({}), Some("tool_calls")),
        data(&json!({"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 10}}})),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat()
}

#[tokio::test]
async fn thinking_text_and_tool_call_sequence() {
    for size in [usize::MAX, 7, 1] {
        let server = MockServer::start([Reply::sse(tool_stream()).chunked(size)]).await;
        let model = support::fixtures::model("openai-completions", &server.url());
        let (events, message) = run(OpenAiCompletions.stream(&model, context(), options())).await;
        assert_eq!(
            events,
            [
                "start",
                "thinking_start@0",
                "thinking_delta@0 \"Need weather.\"",
                "text_start@1",
                "text_delta@1 \"Let me check.\"",
                "toolcall_start@2",
                "toolcall_delta@2 \"\"",
                "toolcall_delta@2 \"{\\\"ci\"",
                "toolcall_delta@2 \"ty\\\":\\\"Paris\\\"}\"",
                "thinking_end@0",
                "text_end@1",
                "toolcall_end@2",
                "done:toolUse",
            ],
            "chunk size {size}"
        );
        assert_eq!(message.stop_reason, StopReason::ToolUse);
        assert_eq!(message.raw_stop_reason.as_deref(), Some("tool_calls"));
        assert_eq!(message.response_id.as_deref(), Some("chatcmpl-1"));
        let AssistantBlock::ToolCall(call) = &message.content[2] else { panic!("tool call") };
        assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1", "get_weather"));
        assert_eq!(serde_json::Value::Object(call.arguments.clone()), json!({"city": "Paris"}));
        let AssistantBlock::Thinking(t) = &message.content[0] else { panic!("thinking") };
        assert_eq!(t.thinking_signature.as_deref(), Some("reasoning_content"));
        // ✔ prompt 50, cached 10, completion 20 → input 40, total 70; cost from the model's rates.
        let u = &message.usage;
        assert_eq!((u.input, u.output, u.cache_read, u.cache_write, u.total_tokens), (40, 20, 10, 0, 70));
        assert!((u.cost.total - (40.0 * 1.0 + 20.0 * 2.0 + 10.0 * 0.5) / 1e6).abs() < 1e-12);
    }
}

#[tokio::test]
async fn stop_with_tool_calls_stays_stop_and_whole_calls_in_one_fragment() {
    let body = [
        chunk(json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "x", "arguments": "{\"n\":1}"}}, {"index": 1, "id": "b", "function": {"name": "y", "arguments": "{}"}}]}), None),
        chunk(json!({}), Some("stop")),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let server = MockServer::start([Reply::sse(body)]).await;
    let model = support::fixtures::model("openai-completions", &server.url());
    let (events, message) = run(OpenAiCompletions.stream(&model, context(), options())).await;
    assert_eq!(
        events,
        [
            "start",
            "toolcall_start@0",
            "toolcall_delta@0 \"{\\\"n\\\":1}\"",
            "toolcall_start@1",
            "toolcall_delta@1 \"{}\"",
            "toolcall_end@0",
            "toolcall_end@1",
            "done:stop"
        ]
    );
    assert_eq!(message.tool_calls().count(), 2);
}

#[tokio::test]
async fn unknown_finish_reason_is_an_error_and_missing_ids_stay_empty() {
    let body = [
        chunk(json!({"tool_calls": [{"function": {"name": "x", "arguments": "{}"}}]}), None),
        chunk(json!({}), Some("content_filter")),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let server = MockServer::start([Reply::sse(body)]).await;
    let model = support::fixtures::model("openai-completions", &server.url());
    let (events, message) = run(OpenAiCompletions.stream(&model, context(), options())).await;
    assert_eq!(events.last().unwrap(), "error:error");
    assert_eq!(message.error_message.as_deref(), Some("Provider finish_reason: content_filter"));
    assert_eq!(message.tool_calls().next().unwrap().id, "");
}

#[tokio::test]
async fn missing_finish_reason_is_inferred_when_compat_says_so() {
    let body = [chunk(json!({"content": "hi"}), None), "data: [DONE]\n\n".to_owned()].concat();
    let server = MockServer::start([Reply::sse(body.clone()), Reply::sse(body)]).await;
    let mut model = support::fixtures::model("openai-completions", &server.url());
    let message = OpenAiCompletions.stream(&model, context(), options()).result().await;
    assert_eq!(message.error_message.as_deref(), Some("Stream ended without finish_reason"));
    model.compat = Some(serde_json::from_value(json!({"supportsFinishReason": false})).unwrap());
    let message = OpenAiCompletions.stream(&model, context(), options()).result().await;
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.text(), "hi");
}

#[tokio::test]
async fn missing_api_key_is_a_setup_error_without_start() {
    let model = support::fixtures::model("openai-completions", "http://127.0.0.1:9");
    let (events, message) = run(OpenAiCompletions.stream(&model, context(), StreamOptions::default())).await;
    assert_eq!(events, ["error:error"]);
    assert_eq!(message.error_message.as_deref(), Some("No API key for provider: local"));
}

/// The message list a request writes as it converts it (issue 20: no wire list held beside the
/// transcript) is the list `convert_messages` converts whole, under every compat flag that changes
/// the conversion (system messages with tool additions, thinking, tool calls, images, unicode:
/// the pi fixture transcript).
#[test]
fn the_streamed_message_list_is_the_converted_list() {
    use pi_ai::providers::openai_completions::{build_body, convert_messages, resolve_compat};
    use pi_ai::transcript::{ToolChangeSupport, resolve_transcript_tools};
    let messages: Vec<Message> =
        serde_json::from_str(include_str!("fixtures/messages.json")).expect("the fixture transcript");
    let context = normalize_context(Context { system_prompt: None, messages, tools: None });
    let base = support::fixtures::model("openai-completions", "http://127.0.0.1:1/v1");
    let flags = [
        "{}",
        r#"{"requiresAssistantAfterToolResult":true,"requiresToolResultName":true}"#,
        r#"{"requiresThinkingAsText":true,"requiresNonNullAssistantContent":true}"#,
        r#"{"requiresReasoningContentOnAssistantMessages":true,"supportsDeveloperRole":true}"#,
        r#"{"supportsMidConvoSystemMessages":true,"supportsMidConvoToolAdditions":true}"#,
    ];
    for (flags, reasoning) in flags.iter().flat_map(|f| [(f, false), (f, true)]) {
        let mut model = base.clone();
        model.reasoning = reasoning;
        model.input = vec!["text".into(), "image".into()];
        model.compat = Some(serde_json::from_str(flags).expect("compat"));
        let compat = resolve_compat(&model);
        let support = if compat.supports_mid_convo_system_messages && compat.supports_mid_convo_tool_additions {
            ToolChangeSupport::Additions
        } else {
            ToolChangeSupport::None
        };
        let view: Vec<&Message> = context.messages().iter().collect();
        let whole = convert_messages(&model, &context, &compat, &resolve_transcript_tools(&view, support));
        let body = build_body(&model, &context, &options(), &compat);
        assert_eq!(body["messages"], serde_json::Value::Array(whole.clone()), "{flags} reasoning {reasoning}");
        assert!(whole.len() > 5, "{flags}: {whole:?}");
    }
}
