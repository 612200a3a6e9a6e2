//! JavaScript extension host benchmarks: host start (a fresh runner loading one TypeScript
//! extension: Node starts, the host loads, the module is imported and its factory runs) and the
//! cost of one `tool_call` round trip to one JavaScript handler, beside the same handler in
//! process (Rust). The reference's in-process figure comes from
//! `scripts/bench/reference_tool_call.mjs`.
//!
//! `PI_NODE=… cargo bench -p pi-coding-agent --bench js_extensions` (skips without Node.js 22).

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use pi_coding_agent::extensions::subprocess::SubprocessExtension;
use pi_coding_agent::extensions::{Extension, ExtensionRunner, FnExtension, ToolCallEvent, ToolCallResult};
use serde_json::Map;

const EXTENSION: &str = r#"export default function (pi: any) {
    pi.on("tool_call", (event: { toolName: string }) => (event.toolName === "bash" ? { block: true, reason: "no" } : undefined));
}
"#;

fn event() -> ToolCallEvent {
    ToolCallEvent { tool_call_id: "c1".into(), tool_name: "read".into(), input: Map::new(), parent_tool_call_id: None }
}

fn bench(c: &mut Criterion) {
    if std::env::var_os("PI_NODE").is_none() {
        eprintln!("SKIP: set PI_NODE to a Node.js 22 to run the JavaScript host benchmarks");
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bench.ts");
    std::fs::write(&path, EXTENSION).expect("write extension");
    let cwd = dir.path().to_string_lossy().into_owned();
    let load = |path: &std::path::Path| {
        let ext: Arc<dyn Extension> = Arc::new(SubprocessExtension::new(path.to_string_lossy()));
        rt.block_on(ExtensionRunner::load(vec![ext], cwd.clone()))
    };

    let mut group = c.benchmark_group("js_host");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.bench_function("start_and_load_one_ts_extension", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                let runner = load(&path);
                assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
                total += start.elapsed();
                drop(runner);
            }
            total
        })
    });
    group.finish();

    let runner = load(&path);
    let mut group = c.benchmark_group("tool_call_one_handler");
    group.bench_function("javascript_host", |b| {
        b.iter(|| {
            let mut e = event();
            let r: Option<ToolCallResult> = rt.block_on(runner.emit_tool_call(&mut e)).expect("answer");
            assert!(r.is_none());
        })
    });
    let rust = FnExtension::new("<inline:bench>", |pi| {
        pi.on_sync::<ToolCallEvent>(|e, _| Ok((e.tool_name == "bash").then(|| ToolCallResult::block("no"))));
        Ok(())
    });
    let in_process = rt.block_on(ExtensionRunner::load(vec![Arc::new(rust) as Arc<dyn Extension>], cwd.clone()));
    group.bench_function("rust_in_process", |b| {
        b.iter(|| {
            let mut e = event();
            let r = rt.block_on(in_process.emit_tool_call(&mut e)).expect("answer");
            assert!(r.is_none());
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
