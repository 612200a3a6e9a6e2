//! `openai-responses` over real HTTP: event sequences, signatures, usage, stop reasons.

mod support;

use pi_ai::options::StreamOptions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::transcript::normalize_context;
use pi_ai::{ApiProvider, AssistantBlock, Context, Message, StopReason, UserMessage};
use serde_json::{Value, json};
use support::{MockServer, Reply, event, run};

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

fn ev(kind: &str, mut body: Value) -> String {
    body["type"] = json!(kind);
    event(kind, &body)
}

fn completed(status: &str, extra: Value) -> String {
    let mut response = json!({"id": "resp_1", "status": status, "output": [], "usage": {"input_tokens": 50, "output_tokens": 20, "total_tokens": 75, "input_tokens_details": {"cached_tokens": 10}, "output_tokens_details": {"reasoning_tokens": 5}}});
    if let (Some(r), Some(e)) = (response.as_object_mut(), extra.as_object()) {
        r.extend(e.clone());
    }
    ev(if status == "incomplete" { "response.incomplete" } else { "response.completed" }, json!({"response": response}))
}

fn full_stream() -> String {
    let reasoning =
        json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Need weather."}]});
    let message = json!({"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}], "phase": "commentary"});
    [
        ev("response.created", json!({"response": {"id": "resp_1"}})),
        ev("response.output_item.added", json!({"output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}})),
        ev("response.reasoning_summary_text.delta", json!({"output_index": 0, "delta": "Need weather."})),
        ev("response.reasoning_summary_part.done", json!({"output_index": 0})),
        ev("response.output_item.done", json!({"output_index": 0, "item": reasoning})),
        ev("response.output_item.added", json!({"output_index": 1, "item": {"type": "message", "id": "msg_1", "content": []}})),
        ev("response.output_text.delta", json!({"output_index": 1, "delta": "Checking."})),
        ev("response.output_item.done", json!({"output_index": 1, "item": message})),
        ev("response.output_item.added", json!({"output_index": 2, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": ""}})),
        ev("response.function_call_arguments.delta", json!({"output_index": 2, "delta": "{\"city\":"})),
        ev("response.function_call_arguments.done", json!({"output_index": 2, "arguments": "{\"city\":\"Paris\"}"})),
        ev("response.output_item.done", json!({"output_index": 2, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}})),
        completed("completed", json!({})),
    ]
    .concat()
}

#[tokio::test]
async fn reasoning_text_and_function_call_sequence() {
    for size in [usize::MAX, 9, 1] {
        let server = MockServer::start([Reply::sse(full_stream()).chunked(size)]).await;
        let model = support::fixtures::model("openai-responses", &server.url());
        let (events, message) = run(OpenAiResponses.stream(&model, context(), options())).await;
        assert_eq!(
            events,
            [
                "start",
                "thinking_start@0",
                "thinking_delta@0 \"Need weather.\"",
                "thinking_delta@0 \"\\n\\n\"",
                "thinking_end@0",
                "text_start@1",
                "text_delta@1 \"Checking.\"",
                "text_end@1",
                "toolcall_start@2",
                "toolcall_delta@2 \"{\\\"city\\\":\"",
                "toolcall_delta@2 \"\\\"Paris\\\"}\"",
                "toolcall_end@2",
                "done:toolUse",
            ],
            "chunk size {size}"
        );
        let AssistantBlock::Thinking(t) = &message.content[0] else { panic!("thinking") };
        assert_eq!(t.thinking, "Need weather.");
        let sig: Value = serde_json::from_str(t.thinking_signature.as_deref().unwrap()).unwrap();
        assert_eq!(sig["id"], "rs_1");
        let AssistantBlock::Text(text) = &message.content[1] else { panic!("text") };
        assert_eq!(text.text_signature.as_deref(), Some(r#"{"v":1,"id":"msg_1","phase":"commentary"}"#));
        let call = message.tool_calls().next().unwrap();
        assert_eq!(call.id, "call_1|fc_1");
        assert_eq!(Value::Object(call.arguments.clone()), json!({"city": "Paris"}));
        assert_eq!(message.response_id.as_deref(), Some("resp_1"));
        assert_eq!(message.raw_stop_reason.as_deref(), Some("completed"));
        let u = &message.usage;
        // input = 50 − 10 cached; total as reported.
        assert_eq!((u.input, u.output, u.cache_read, u.reasoning, u.total_tokens), (40, 20, 10, Some(5), 75));
    }
}

#[tokio::test]
async fn statuses_and_failures() {
    let cases = [
        (
            completed("incomplete", json!({"incomplete_details": {"reason": "max_output_tokens"}})),
            Ok(StopReason::Length),
        ),
        (
            completed("incomplete", json!({"incomplete_details": {"reason": "content_filter"}})),
            Err("Response incomplete: content_filter"),
        ),
        (completed("cancelled", json!({})), Err("An unknown error occurred")),
        (
            ev(
                "response.failed",
                json!({"response": {"status": "failed", "error": {"code": "server_error", "message": "boom"}}}),
            ),
            Err("server_error: boom"),
        ),
        // The OpenAI SDK raises `event: error` itself with the message; a bare `type: "error"` reaches pi.
        (ev("error", json!({"code": "rate_limit", "message": "slow down"})), Err("slow down")),
        (
            support::data(&json!({"type": "error", "code": "rate_limit", "message": "slow down"})),
            Err("Error Code rate_limit: slow down"),
        ),
        (
            ev("response.created", json!({"response": {"id": "r"}})),
            Err("OpenAI Responses stream ended before a terminal response event"),
        ),
    ];
    for (body, expected) in cases {
        let server = MockServer::start([Reply::sse(body)]).await;
        let model = support::fixtures::model("openai-responses", &server.url());
        let (events, message) = run(OpenAiResponses.stream(&model, context(), options())).await;
        match expected {
            Ok(stop) => assert_eq!(message.stop_reason, stop),
            Err(text) => {
                assert_eq!(events.last().unwrap(), "error:error");
                assert_eq!(message.error_message.as_deref(), Some(text));
            }
        }
    }
}
