//! A codemode script making 100 tool calls through the QuickJS sandbox: 100 `read` calls of a
//! small file, in parallel (`Promise.all`) and one after another. Measures the sandbox (VM start,
//! prelude, bridge, settling) plus the real `read` tool, not the model.

use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use pi_agent_core::{AgentTool, ToolContext};
use pi_coding_agent::builtin_extensions::codemode::sandbox::{SandboxHost, SandboxTool, ScriptRequest, run_script};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

struct ReadHost {
    read: Arc<dyn AgentTool>,
}

#[async_trait]
impl SandboxHost for ReadHost {
    async fn call_tool(&self, _name: &str, args: Option<Value>, cancel: CancellationToken) -> Result<Value, String> {
        let args: Map<String, Value> = match args {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let result =
            self.read.execute("bench", args, ToolContext::new(cancel, None)).await.map_err(|e| e.to_string())?;
        let text = result
            .content
            .iter()
            .filter_map(|b| if let pi_ai::UserBlock::Text(t) = b { Some(t.text.clone()) } else { None })
            .collect::<String>();
        Ok(Value::String(text))
    }

    async fn call_global(&self, name: &str, _: Option<Value>, _: CancellationToken) -> Result<Option<Value>, String> {
        Err(format!("Unknown global \"{name}\""))
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("note.txt"), "hello\n").expect("file");
    let tools = pi_coding_agent::tools::all_tools(dir.path().to_str().expect("utf-8 temp dir"), &Default::default());
    let read = tools.into_iter().find(|t| t.name() == "read").expect("read tool");
    let host: Arc<dyn SandboxHost> = Arc::new(ReadHost { read });
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let request = |code: &str| ScriptRequest {
        code: code.to_owned(),
        tools: vec![SandboxTool { name: "read".into(), js_name: "read".into(), description: "Read a file".into() }],
        ..Default::default()
    };
    let parallel = "const r = await Promise.all(Array.from({ length: 100 }, () => tools.read({ path: \"note.txt\" })));\nreturn r.length;";
    let sequential =
        "let n = 0;\nfor (let i = 0; i < 100; i++) n += (await tools.read({ path: \"note.txt\" })).length;\nreturn n;";
    for (name, code) in [("codemode_100_calls_parallel", parallel), ("codemode_100_calls_sequential", sequential)] {
        c.bench_function(name, |b| {
            b.iter(|| {
                let outcome = runtime.block_on(run_script(request(code), host.clone(), CancellationToken::new()));
                assert!(outcome.error.is_none(), "{:?}", outcome.error);
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
