//! grep and find over a generated 50 000-file tree, beside `rg` and `fd` run the way pi runs them
//! (when they are installed; they are never required).
//!
//! Run: `cargo bench -p pi-coding-agent --bench tools`

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use pi_agent_core::{AgentTool, ToolContext};
use serde_json::{Map, Value, json};

/// 50 top directories × 10 subdirectories × 100 files = 50 000 files, made once per run.
fn tree() -> &'static Path {
    static TREE: OnceLock<tempfile::TempDir> = OnceLock::new();
    TREE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        for a in 0..50 {
            for b in 0..10 {
                let sub = dir.path().join(format!("pkg{a:02}/mod{b}"));
                std::fs::create_dir_all(&sub).expect("mkdir");
                for c in 0..100 {
                    let n = (a * 10 + b) * 100 + c;
                    let ext = if c % 2 == 0 { "rs" } else { "ts" };
                    let needle = if n % 997 == 0 { "let needle_value = compute();\n" } else { "" };
                    let body = format!(
                        "// file {n}\nuse std::fmt;\n\nfn item_{n}(x: u32) -> u32 {{\n    let y = x * {n};\n    {needle}    y + 1\n}}\n\nstruct Thing{n} {{ field: String }}\n"
                    );
                    std::fs::write(sub.join(format!("file{c:03}.{ext}")), body).expect("write");
                }
            }
        }
        dir
    })
    .path()
}

fn call(rt: &tokio::runtime::Runtime, tool: &Arc<dyn AgentTool>, args: Value) -> usize {
    let args: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
    let r = rt.block_on(tool.execute("bench", args, ToolContext::detached())).expect("tool ran");
    r.content.len()
}

fn which(name: &str) -> Option<PathBuf> {
    let candidates = [format!("/opt/fd/bin/{name}"), format!("/usr/bin/{name}"), format!("/usr/local/bin/{name}")];
    candidates.iter().map(PathBuf::from).find(|p| p.exists())
}

fn run_external(program: &Path, args: &[&str], cwd: &Path) -> usize {
    let out = Command::new(program).args(args).current_dir(cwd).output().expect("external tool ran");
    out.stdout.len()
}

fn bench(c: &mut Criterion) {
    let root = tree();
    let root_str = root.to_string_lossy().into_owned();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let grep = pi_coding_agent::tools::grep_tool(&root_str);
    let find = pi_coding_agent::tools::find_tool(&root_str);

    let mut g = c.benchmark_group("tools_50k");
    g.sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_secs(2));

    g.bench_function("grep rare literal (51 matches)", |b| {
        b.iter(|| call(&rt, &grep, json!({"pattern": "needle_value"})))
    });
    g.bench_function("grep regex, stops at limit 100", |b| {
        b.iter(|| call(&rt, &grep, json!({"pattern": r"fn item_\d+"})))
    });
    g.bench_function("find *.rs, stops at limit 1000", |b| b.iter(|| call(&rt, &find, json!({"pattern": "*.rs"}))));
    g.bench_function("find rare name (walks all)", |b| b.iter(|| call(&rt, &find, json!({"pattern": "file099.ts"}))));

    if let Some(rg) = which("rg") {
        let base = ["--no-config", "--json", "--line-number", "--color=never", "--hidden"];
        g.bench_function("rg rare literal (51 matches)", |b| {
            b.iter(|| run_external(&rg, &[&base[..], &["--", "needle_value", "."]].concat(), root))
        });
        // pi kills rg after the 101st match; the whole search is the upper bound of its cost.
        g.bench_function("rg regex, full search", |b| {
            b.iter(|| run_external(&rg, &[&base[..], &["--", r"fn item_\d+", "."]].concat(), root))
        });
    }
    if let Some(fd) = which("fd") {
        let base = ["--color=never", "--hidden", "--no-require-git", "--glob", "--max-results", "1001"];
        g.bench_function("fd *.rs, max 1001", |b| {
            b.iter(|| run_external(&fd, &[&base[..], &["--", "*.rs", &root_str]].concat(), root))
        });
        g.bench_function("fd rare name (walks all)", |b| {
            b.iter(|| run_external(&fd, &[&base[..], &["--", "file099.ts", &root_str]].concat(), root))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
