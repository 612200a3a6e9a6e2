//! `pi -p` against the catalog models of the APIs of issue 16 (`google-generative-ai`,
//! `google-vertex`, `mistral-conversations`, `azure-openai-responses`,
//! `openai-codex-responses`), each with its provider's base URL moved to a scripted server on
//! 127.0.0.1 through models.json: the binary routes the model to its API, which sends that API's
//! request and prints the streamed answer.

mod cli_support;

use cli_support::{Env, ScriptedServer};
use serde_json::{Value, json};

fn gemini_reply(text: &str) -> String {
    let chunk = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}});
    format!("data: {chunk}\r\n\r\n")
}

fn mistral_reply(text: &str) -> String {
    let chunk = json!({"id": "m1", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}});
    format!("data: {chunk}\n\ndata: [DONE]\n\n")
}

fn responses_reply(text: &str) -> String {
    let ev = |name: &str, mut body: Value| {
        body["type"] = json!(name);
        format!("event: {name}\ndata: {body}\n\n")
    };
    [
        ev("response.output_item.added", json!({"output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}})),
        ev("response.output_text.delta", json!({"output_index": 0, "delta": text})),
        ev("response.output_item.done", json!({"output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}})),
        ev("response.completed", json!({"response": {"id": "r1", "status": "completed", "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}}})),
    ]
    .concat()
}

/// Runs `pi -p hi` on `provider/model` with the provider's base URL at a server answering `reply`;
/// returns the body the server received.
fn run(provider: &str, model: &str, base_suffix: &str, reply: String, key: (&str, &str), extra: &[&str]) -> Value {
    let server = ScriptedServer::start(vec![reply]);
    let env = Env::new(&server.base_url);
    let base = server.base_url.trim_end_matches("/v1").to_owned() + base_suffix;
    let models = json!({"providers": {provider: {"baseUrl": base}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).expect("models.json");
    if provider == "openai-codex" {
        // pi's default transport tries a WebSocket first; this scripted server speaks HTTP only.
        std::fs::write(env.agent().join("settings.json"), r#"{"transport":"sse"}"#).expect("settings.json");
    }
    let target = format!("{provider}/{model}");
    let mut args = vec!["-p", "--model", target.as_str(), "--no-tools", "--no-session"];
    args.extend_from_slice(extra);
    args.push("hi");
    let mut command = env.pi();
    for name in [
        "GEMINI_API_KEY",
        "GOOGLE_CLOUD_API_KEY",
        "MISTRAL_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_BASE_URL",
        "AZURE_OPENAI_RESOURCE_NAME",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ] {
        command.env_remove(name);
    }
    if !key.0.is_empty() {
        command.env(key.0, key.1);
    }
    let out = command.args(&args).output().expect("run pi");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{target}: {stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Hello there\n", "{target}: {stderr}");
    let requests = server.requests.lock().expect("lock").clone();
    assert_eq!(requests.len(), 1, "{target}");
    requests[0].clone()
}

#[test]
fn gemini_models_stream_through_google_generative_ai() {
    let body = run("google", "gemini-2.5-flash", "/v1beta", gemini_reply("Hello there"), ("GEMINI_API_KEY", "k"), &[]);
    assert_eq!(body["contents"][0]["parts"][0]["text"], "hi");
    assert!(body["systemInstruction"]["parts"][0]["text"].is_string(), "{body}");
    assert_eq!(body["generationConfig"]["thinkingConfig"]["includeThoughts"], true, "{body}");
}

#[test]
fn vertex_models_stream_through_google_vertex() {
    let body = run(
        "google-vertex",
        "gemini-2.5-flash",
        "/v1",
        gemini_reply("Hello there"),
        ("GOOGLE_CLOUD_API_KEY", "k"),
        &[],
    );
    assert_eq!(body["contents"][0]["role"], "user");
}

#[test]
fn mistral_models_stream_through_mistral_conversations() {
    let body = run("mistral", "codestral-2508", "", mistral_reply("Hello there"), ("MISTRAL_API_KEY", "k"), &[]);
    assert_eq!(body["model"], "codestral-2508");
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][1], json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}));
}

#[test]
fn azure_models_stream_through_azure_openai_responses() {
    let body =
        run("azure", "gpt-4.1", "/openai/v1", responses_reply("Hello there"), ("AZURE_OPENAI_API_KEY", "k"), &[]);
    assert_eq!(body["model"], "gpt-4.1");
    assert_eq!(body["input"][1]["content"][0], json!({"type": "input_text", "text": "hi"}));
}

#[test]
fn codex_models_stream_through_openai_codex_responses() {
    // A ChatGPT token: the account id is read from its claims.
    let token = "e30.eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoiYWNjIn19.sig";
    let body = run(
        "openai-codex",
        "gpt-5.6-luna",
        "/backend-api",
        responses_reply("Hello there"),
        ("", ""),
        &["--api-key", token],
    );
    assert_eq!(body["model"], "gpt-5.6-luna");
    assert_eq!(body["text"], json!({"verbosity": "low"}));
    assert_eq!(body["parallel_tool_calls"], true);
}
