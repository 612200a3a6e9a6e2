//! Session benchmarks: opening a 100 MB session and building its context, the projection of an
//! open session (its branch kept between calls), and append latency.
//!
//! `cargo bench -p pi-coding-agent --bench session`. The 100 MB file is generated in a temporary
//! directory first; the peak memory of one open + build (VmHWM growth, Linux) is printed once.

use std::hint::black_box;
use std::io::Write;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use pi_ai::UserMessage;
use pi_coding_agent::session::{NewSessionOptions, SessionManager};
use serde_json::json;

const TARGET_BYTES: usize = 100 * 1024 * 1024;

struct Gen {
    f: std::io::BufWriter<std::fs::File>,
    parent: Option<String>,
    n: u64,
    written: usize,
}

impl Gen {
    fn line(&mut self, v: &serde_json::Value) {
        let s = v.to_string();
        self.f.write_all(s.as_bytes()).unwrap();
        self.f.write_all(b"\n").unwrap();
        self.written += s.len() + 1;
    }

    fn push(&mut self, message: serde_json::Value) {
        self.n += 1;
        let id = format!("{:08x}", self.n);
        let entry = json!({"type": "message", "id": id, "parentId": self.parent, "timestamp": "2025-01-01T00:00:00.000Z", "message": message});
        self.line(&entry);
        self.parent = Some(id);
    }
}

/// Writes a realistic session (user / assistant tool call / tool result / assistant text turns,
/// text-heavy tool results) of about `TARGET_BYTES`.
fn generate(path: &Path) -> usize {
    let mut g =
        Gen { f: std::io::BufWriter::new(std::fs::File::create(path).unwrap()), parent: None, n: 0, written: 0 };
    g.line(&json!({"type": "session", "version": 3, "id": "bench", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/bench"}));
    let usage = json!({"input": 1000, "output": 100, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1100,
                       "cost": {"input": 0.003, "output": 0.0015, "cacheRead": 0, "cacheWrite": 0, "total": 0.0045}});
    let body: String = "fn main() { println!(\"hello, world\"); } // some source line\n".repeat(120);
    while g.written < TARGET_BYTES {
        let n = g.n;
        g.push(json!({"role": "user", "content": [{"type": "text", "text": format!("please look at file {n}")}], "timestamp": n}));
        g.push(json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "Let me read it.", "thinkingSignature": "sig"}, {"type": "toolCall", "id": format!("call_{n}"), "name": "read", "arguments": {"path": format!("src/file{n}.rs")}}],
            "api": "openai-completions", "provider": "p", "model": "m", "usage": usage, "stopReason": "toolUse", "timestamp": n}));
        g.push(json!({"role": "toolResult", "toolCallId": format!("call_{n}"), "toolName": "read", "content": [{"type": "text", "text": body}], "isError": false, "timestamp": n}));
        g.push(json!({"role": "assistant", "content": [{"type": "text", "text": "The file prints a greeting. Nothing else to change here."}],
            "api": "openai-completions", "provider": "p", "model": "m", "usage": usage, "stopReason": "stop", "timestamp": n}));
    }
    g.f.flush().unwrap();
    g.written
}

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn vm_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    let bytes = generate(&big);

    // Memory: peak growth of one open + context build.
    let rss_before = vm_rss_kib().unwrap_or(0);
    let start = std::time::Instant::now();
    {
        let s = SessionManager::open(&big, None, None).unwrap();
        let projection = s.build_session_projection();
        black_box(projection.entries.len());
    }
    let once = start.elapsed();
    if let Some(hwm) = vm_hwm_kib() {
        eprintln!(
            "session file {:.1} MB; one open+build {:.0} ms; peak RSS {:.1} MB (growth {:.1} MB = {:.2}x the file)",
            bytes as f64 / 1e6,
            once.as_secs_f64() * 1e3,
            hwm as f64 * 1024.0 / 1e6,
            (hwm.saturating_sub(rss_before)) as f64 * 1024.0 / 1e6,
            (hwm.saturating_sub(rss_before)) as f64 * 1024.0 / bytes as f64
        );
    }

    let mut g = c.benchmark_group("session_100mb");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(15));
    g.bench_function("open_and_build_context", |b| {
        b.iter(|| {
            let s = SessionManager::open(&big, None, None).unwrap();
            let p = s.build_session_projection();
            black_box(p.entries.len());
        })
    });
    g.bench_function("open_build_and_convert_to_llm", |b| {
        b.iter(|| {
            let s = SessionManager::open(&big, None, None).unwrap();
            let p = s.build_session_projection();
            let msgs: Vec<_> = p.messages().filter_map(pi_coding_agent::messages::message_to_llm).collect();
            black_box(msgs.len());
        })
    });
    // The SDK asks for the branch several times before the first request: the path is built
    // once and kept (issue 20), so every later projection only walks the kept positions.
    let opened = SessionManager::open(&big, None, None).unwrap();
    g.bench_function("projection_of_an_open_session", |b| {
        b.iter(|| black_box(opened.build_session_projection().entries.len()))
    });
    g.bench_function("branch_of_an_open_session", |b| b.iter(|| black_box(opened.get_branch(None).len())));
    g.finish();

    let mut g = c.benchmark_group("append");
    let dir2 = tempfile::tempdir().unwrap();
    let mut s = SessionManager::create("/bench", Some(dir2.path()), NewSessionOptions::default()).unwrap();
    s.append_message(UserMessage::new("start").into()).unwrap();
    g.bench_function("persistent_user_message_fsync", |b| {
        b.iter(|| s.append_message(UserMessage::new("a short user message of typical size").into()).unwrap())
    });
    let mut m = SessionManager::in_memory("/bench");
    g.bench_function("in_memory_user_message", |b| {
        b.iter(|| m.append_message(UserMessage::new("a short user message of typical size").into()).unwrap())
    });
    g.finish();
}

criterion_group!(session, benches);
criterion_main!(session);
