//! The layering rules of DESIGN.md, checked on the source: the SDK never imports `modes/` or
//! `cli/`, and the SDK's modules (and pi-agent-core's loop and tool executor) form no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The source without `#[cfg(test)]` modules and comments (doc links are not imports).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_sdk_imports_nothing_from_modes_or_cli() {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sdk");
    for file in rust_files(&sdk) {
        let code = code(&file);
        for upward in ["crate::modes", "crate::cli", "super::super::modes", "super::super::cli"] {
            assert!(!code.contains(upward), "{} imports {upward}", file.display());
        }
    }
}

/// Edges between the SDK's top-level modules (`session/` counts as one).
fn sdk_graph() -> BTreeMap<String, BTreeSet<String>> {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sdk");
    let module_of = |file: &Path| -> String {
        let rel = file.strip_prefix(&sdk).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        first.trim_end_matches(".rs").to_owned()
    };
    let files = rust_files(&sdk);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(f)).filter(|m| m != "mod").collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(file);
        if from == "mod" {
            continue;
        }
        let in_session = from == "session";
        let code = code(file);
        for to in &modules {
            if *to == from {
                continue;
            }
            let mut paths = vec![format!("crate::sdk::{to}")];
            paths.push(if in_session && file.file_name().is_some_and(|n| n != "mod.rs") {
                format!("super::super::{to}")
            } else {
                format!("super::{to}")
            });
            if paths.iter().any(|p| code.contains(&format!("{p}::")) || code.contains(&format!("{p};"))) {
                graph.entry(from.clone()).or_default().insert(to.clone());
            }
        }
    }
    graph
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|n| n == node) {
            return Some(stack[i..].to_vec());
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_sdk_modules_form_no_cycle() {
    let graph = sdk_graph();
    assert!(graph.get("extension_bridge").is_some_and(|d| d.contains("session")), "the scan sees imports: {graph:?}");
    assert_eq!(find_cycle(&graph), None, "{graph:?}");
}

#[test]
fn the_agent_loop_and_the_tool_executor_form_no_cycle() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pi-agent-core/src");
    let tool_exec = code(&core.join("tool_exec.rs"));
    assert!(code(&core.join("agent_loop.rs")).contains("crate::tool_exec::"));
    assert!(!tool_exec.contains("crate::agent_loop"), "tool_exec imports agent_loop");
}

/// Edges between the extension system's top-level modules (`subprocess/` and `node/` count as
/// one each): `super::x` / `crate::extensions::x` in a file of `extensions/`, `super::super::x` in
/// a file of a sub-folder.
fn extensions_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/extensions");
    let module_of = |file: &Path| -> String {
        let rel = file.strip_prefix(&root).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        first.trim_end_matches(".rs").to_owned()
    };
    let files = rust_files(&root);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(f)).filter(|m| m != "mod").collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(file);
        if from == "mod" {
            continue;
        }
        let nested = file.parent() != Some(root.as_path());
        let own_mod = file.file_name().is_some_and(|n| n == "mod.rs");
        let code = code(file);
        for to in modules.iter().filter(|m| **m != from) {
            let relative = if nested && !own_mod { format!("super::super::{to}") } else { format!("super::{to}") };
            let paths = [format!("crate::extensions::{to}"), relative];
            if paths.iter().any(|p| code.contains(&format!("{p}::")) || code.contains(&format!("{p};"))) {
                graph.entry(from.clone()).or_default().insert(to.clone());
            }
        }
    }
    graph
}

#[test]
fn the_extension_modules_form_no_cycle() {
    let graph = extensions_graph();
    assert!(graph.get("runner").is_some_and(|d| d.contains("api")), "the scan sees imports: {graph:?}");
    assert!(graph.get("node").is_some_and(|d| d.contains("subprocess")), "the scan sees sub-folders: {graph:?}");
    assert_eq!(find_cycle(&graph), None, "{graph:?}");
}
