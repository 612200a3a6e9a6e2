//! `openai-completions` reads the common text chunk typed and borrowing (issue 20) and every
//! other chunk as JSON values: both paths must give the same events and message. A raw-event hook
//! forces the `Value` path, so each stream is run with and without one and the results compared.

mod support;

use pi_ai::options::StreamOptions;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::transcript::normalize_context;
use pi_ai::{ApiProvider, Context, Message, UserMessage};
use support::{MockServer, Reply, run};

fn context() -> pi_ai::transcript::TranscriptContext {
    normalize_context(Context {
        system_prompt: None,
        messages: vec![Message::User(UserMessage::new("hi").into())],
        tools: None,
    })
}

/// Events and final message of `sse`, with or without a raw-event hook (which forces the
/// `Value` path); the hook's count of raw events is returned too.
async fn events(sse: &str, hooked: bool) -> (Vec<String>, pi_ai::AssistantMessage, usize) {
    let server = MockServer::start([Reply::sse(sse.to_owned()).chunked(5)]).await;
    let model = support::fixtures::model("openai-completions", &server.url());
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = seen.clone();
    let mut options = StreamOptions { api_key: Some("k".into()), ..Default::default() };
    if hooked {
        options.on_provider_stream_event = Some(std::sync::Arc::new(move |_, _| {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }));
    }
    let (lines, mut message) = run(OpenAiCompletions.stream(&model, context(), options)).await;
    message.timestamp = 0;
    message.duration_ms = None;
    (lines, message, seen.load(std::sync::atomic::Ordering::SeqCst))
}

const STREAMS: &[&[&str]] = &[
    // The common shape: role, text deltas with the usual extra fields, finish, usage.
    &[
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"other-model","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"c1","model":"other-model","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}"#,
        r#"{"id":"c2","choices":[{"index":0,"delta":{"content":"lo \"q\" \u00e9\n"},"finish_reason":null}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"id":"c1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
    ],
    // Nulls everywhere, an empty id, a numeric model, a choice-level usage, an odd finish reason.
    &[
        r#"{"id":"","model":null,"choices":[{"delta":null,"finish_reason":null}]}"#,
        r#"{"id":null,"model":7,"choices":[{"index":0,"delta":{"content":"a","tool_calls":null,"reasoning":null},"finish_reason":""}]}"#,
        r#"{"id":"c9","choices":[{"index":0,"delta":{"content":"b"},"usage":{"prompt_tokens":1,"completion_tokens":1}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"c"},"finish_reason":"content_filter"}]}"#,
    ],
    // Reasoning, then text, then a tool call: the typed path hands these to the Value path.
    &[
        r#"{"id":"c1","choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"content":"x"}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t1","function":{"name":"f","arguments":"{}"}}]}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"content":"y"},"finish_reason":"tool_calls"}]}"#,
    ],
    // Chunks that are not the common shape: no choices, a string delta, a duplicate key, an
    // error member, a second choice.
    &[
        r#"{"id":"c1"}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":"text"}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"content":"one","content":"two"}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"content":"p"}},{"index":1,"delta":{"content":"q"}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
    ],
    &[r#"{"id":"c1","choices":[{"index":0,"delta":{"content":"p"}}]}"#, r#"{"error":{"message":"boom"}}"#],
    // Keys spelled with escapes, unknown members of every kind (an exponent, nesting, escapes),
    // duplicates of an unknown member, members of the wrong type.
    &[
        r#"{"\u0069d":"c1","choices":[{"index":0,"delta":{"\u0063ontent":"a\/b\t\u00e9\ud83d\ude00"}}]}"#,
        r#"{"id":"c1","created":1.5e3,"x":[{"y":[null,true,false,-0.25,"z\"\\"]}],"x":{},"choices":[{"index":0,"delta":{"content":"c","role":"assistant","refusal":null},"logprobs":{"content":[]}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"content":7}}]}"#,
        r#"{"id":"c1","choices":{"index":0}}"#,
        r#"{"id":"c1","choices":null}"#,
        r#"{"id":"c1","id":"c2","choices":[{"index":0,"delta":{"content":"d"}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"content":"e"},"finish_reason":"length","finish_reason":"stop"}]}"#,
        r#"{"id":"c1","choices":[null]}"#,
        r#"{"id":"c1","usage":null,"error":null,"choices":[{"index":0,"usage":null,"delta":{"content":"f","reasoning_details":null}}]} "#,
    ],
    // Text deltas that differ only in their text (the later ones read in the first one's frame),
    // and chunks that share its start and end but are something else: a string that closes
    // early, a member after it, a finish reason, reasoning, an unescaped control character.
    &[
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":"one"},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":" two \"2\" \u00e9\n"},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":"a","content":"b"},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":"three"},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":"x","reasoning_content":"hm"},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":"four"},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":"fi\\"},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":"five"},"logprobs":null,"finish_reason":"stop"}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":"six"},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":"eight"},"logprobs":null,"finish_reason":null}]}"#,
        concat!(
            r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m2","choices":[{"index":0,"delta":{"content":"se"#,
            "\t",
            r#"ven"},"logprobs":null,"finish_reason":null}]}"#
        ),
    ],
    // Tool-call fragments: a custom one (even null), a fractional or huge index, a null function.
    &[
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t1","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":null,"custom":null}]}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1.0,"function":{"arguments":"1"}}]}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":99999999999999999999,"function":{"arguments":"2"}}]}}]}"#,
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]},"finish_reason":"tool_calls"}]}"#,
    ],
];

#[tokio::test]
async fn typed_and_value_paths_agree() {
    for chunks in STREAMS {
        let sse: String = chunks.iter().map(|c| format!("data: {c}\n\n")).chain(["data: [DONE]\n\n".into()]).collect();
        let (typed, typed_message, none) = events(&sse, false).await;
        let (values, value_message, raw) = events(&sse, true).await;
        assert_eq!(none, 0);
        assert!(raw > 0, "the hooked run saw the raw events");
        assert_eq!(typed, values, "{chunks:?}");
        assert_eq!(typed_message, value_message, "{chunks:?}");
    }
}

#[tokio::test]
async fn text_deltas_build_the_message() {
    let (lines, message, _) =
        events(&STREAMS[0].iter().map(|c| format!("data: {c}\n\n")).collect::<String>(), false).await;
    assert_eq!(
        lines,
        [
            "start",
            "text_start@0",
            "text_delta@0 \"Hel\"",
            "text_delta@0 \"lo \\\"q\\\" é\\n\"",
            "text_end@0",
            "done:stop"
        ]
    );
    assert_eq!(message.text(), "Hello \"q\" é\n");
    assert_eq!(message.response_id.as_deref(), Some("c1"));
    assert_eq!(message.response_model.as_deref(), Some("other-model"));
    assert_eq!(message.usage.input, 5);
}
