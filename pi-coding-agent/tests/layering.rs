//! The layering rules of DESIGN.md, checked on the source: the SDK never imports `modes/` or
//! `cli/`; the SDK's modules and pi-agent-core's modules form no cycle (every `crate::`,
//! `super::` and `self::` path resolved, brace groups and re-exports followed); nothing blocks an
//! async worker on another runtime (`block_in_place`, a nested runtime in the library layers);
//! the SDK hands out no lock guard.

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

/// A source file's module path relative to the crate root (`src/sdk/session/retry.rs` →
/// `["sdk", "session", "retry"]`; `mod.rs` and `lib.rs` name their directory's module).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    if last != "mod.rs" && last != "lib.rs" {
        parts.push(last.trim_end_matches(".rs").to_owned());
    }
    parts
}

/// Every path the code names from `crate::`, `super::` or `self::` (in `use` trees, brace groups
/// included, and inline), resolved to a path from the crate root.
fn referenced_paths(code: &str, own: &[String]) -> Vec<Vec<String>> {
    let tokens: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '{' || c == '}' || c == ','))
        .filter(|t| !t.is_empty())
        .collect();
    // Re-join so that `use super::{a, b::c}` stays one token stream.
    let text = tokens.join(" ");
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        let at_word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let head = ["crate::", "super::", "self::"].into_iter().find(|h| rest.starts_with(h));
        let Some(head) = head.filter(|_| at_word_start) else {
            i += 1;
            continue;
        };
        // The module a relative path starts from: a file's own module for `self`, its parent
        // for `super` (a `mod.rs` file *is* its directory's module).
        let mut base: Vec<String> = match head {
            "crate::" => Vec::new(),
            _ => own.to_vec(),
        };
        let mut j = i + head.len();
        if head == "super::" {
            base.pop();
        }
        while text[j..].starts_with("super::") {
            base.pop();
            j += "super::".len();
        }
        for path in expand_use_tree(&text[j..]) {
            let mut full = base.clone();
            full.extend(path);
            out.push(full);
        }
        i = j;
    }
    out
}

/// The leading paths of a use tree: `a::b` → `[a, b]`; `{a::x, b}` → `[a, x]`, `[b]`.
fn expand_use_tree(tail: &str) -> Vec<Vec<String>> {
    let tail = tail.trim_start();
    if let Some(inner) = tail.strip_prefix('{') {
        let mut depth = 0;
        let mut end = inner.len();
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    end = k;
                    break;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        let mut parts = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        let group = &inner[..end];
        for (k, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&group[start..k]);
                    start = k + 1;
                }
                _ => {}
            }
        }
        parts.push(&group[start..]);
        return parts.into_iter().flat_map(expand_use_tree).collect();
    }
    let word: String = tail.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
    let segments: Vec<String> = word.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect();
    let after = &tail[word.len()..];
    if word.ends_with("::") && after.starts_with('{') {
        return expand_use_tree(after).into_iter().map(|p| segments.iter().cloned().chain(p).collect()).collect();
    }
    if segments.is_empty() { Vec::new() } else { vec![segments] }
}

/// `pub use child::{A, B}` / `pub use child::A` re-exports of the module file `root_file`: item
/// name → the child module defining it (so `crate::sdk::AgentSession` counts as `session`).
fn re_exports(root_file: &Path, own: &[String]) -> BTreeMap<String, String> {
    let code = code(root_file);
    let mut map = BTreeMap::new();
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(tree) = statement.strip_prefix("pub use ").or_else(|| statement.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let tree = tree.split_whitespace().collect::<Vec<_>>().join(" ");
        for path in expand_use_tree(&tree) {
            let path: Vec<String> = match path.first().map(String::as_str) {
                Some("self") => path[1..].to_vec(),
                Some("crate") => {
                    let rest = path[1..].to_vec();
                    if rest.starts_with(own) { rest[own.len()..].to_vec() } else { continue }
                }
                _ => path,
            };
            if path.len() >= 2 {
                let item = path.last().cloned().unwrap_or_default();
                let item = item.split(" as ").last().unwrap_or_default().trim().to_owned();
                map.insert(item, path[0].clone());
            }
        }
    }
    map
}

/// Edges between the child modules of `root` (a module directory of a crate whose source is at
/// `src`; `root` = `src` for the crate itself): every `crate::…`, `super::…` and `self::…` path
/// of a file, resolved, that lands in another child (directly or through a re-export of the
/// root's module file).
fn module_graph(src: &Path, root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let root_mod = module_path(src, &root.join("mod.rs"));
    let root_file = if root == src { src.join("lib.rs") } else { root.join("mod.rs") };
    let exports = re_exports(&root_file, &root_mod);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(root) {
        let own = module_path(src, &file);
        let Some(from) = own.get(root_mod.len()).cloned() else { continue };
        graph.entry(from.clone()).or_default();
        for path in referenced_paths(&code(&file), &own) {
            if !path.starts_with(&root_mod) || path.len() <= root_mod.len() {
                continue;
            }
            let first = &path[root_mod.len()];
            let to = exports.get(first).cloned().unwrap_or_else(|| first.clone());
            let is_child = root.join(format!("{to}.rs")).exists() || root.join(&to).join("mod.rs").exists();
            if is_child && to != from {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    graph
}

/// Edges between the SDK's top-level modules (`session/` counts as one).
fn sdk_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    module_graph(&src, &src.join("sdk"))
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
fn pi_agent_core_modules_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pi-agent-core/src");
    let graph = module_graph(&src, &src);
    assert!(graph.get("agent_loop").is_some_and(|d| d.contains("tool_exec")), "the scan sees imports: {graph:?}");
    assert_eq!(find_cycle(&graph), None, "{graph:?}");
}

/// The scanner itself: brace groups, `super::super`, `self::` and re-exports are followed.
#[test]
fn the_scanner_resolves_use_trees() {
    let own = vec!["sdk".to_owned(), "session".to_owned(), "retry".to_owned()];
    let code = "use super::{events::persist, AgentSession};\nuse super::super::error::SdkError;\nlet x = crate::tools::bash::run();\nuse self::inner::X;";
    let paths = referenced_paths(code, &own);
    let names: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        names,
        [
            "sdk::session::events::persist",
            "sdk::session::AgentSession",
            "sdk::error::SdkError",
            "tools::bash::run",
            "sdk::session::retry::inner::X"
        ]
    );
    let cyclic: BTreeMap<String, BTreeSet<String>> =
        [("a".to_owned(), BTreeSet::from(["b".to_owned()])), ("b".to_owned(), BTreeSet::from(["a".to_owned()]))].into();
    assert_eq!(find_cycle(&cyclic), Some(vec!["a".to_owned(), "b".to_owned()]));
}

fn library_sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = rust_files(&root.join("src"));
    files.extend(rust_files(&root.join("../pi-ai/src")));
    files.extend(rust_files(&root.join("../pi-agent-core/src")));
    files
}

/// No worker thread is parked on a nested `block_on`: hooks are async end to end.
#[test]
fn nothing_blocks_in_place_or_nests_a_runtime() {
    for file in library_sources() {
        let code = code(&file);
        assert!(!code.contains("block_in_place"), "{} blocks a worker in place", file.display());
        let layer = file.to_string_lossy();
        let async_layers = ["/src/sdk/", "/src/session/", "/src/tools/", "pi-ai/src/", "pi-agent-core/src/"];
        if async_layers.iter().any(|l| layer.contains(l)) {
            for nested in ["new_current_thread", "Runtime::new", "futures::executor::block_on"] {
                assert!(!code.contains(nested), "{} starts a nested runtime ({nested})", file.display());
            }
        }
    }
}

/// `AgentSession` and the SDK hand out no `MutexGuard` (one held across an `.await` stalls every
/// event of the session): closures and getters instead.
#[test]
fn the_sdk_hands_out_no_lock_guard() {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sdk");
    for file in rust_files(&sdk) {
        let code = code(&file).split_whitespace().collect::<Vec<_>>().join(" ");
        for signature in code.split("pub fn ").skip(1) {
            let head = signature.split('{').next().unwrap_or_default();
            assert!(!head.contains("MutexGuard"), "{}: pub fn {head}", file.display());
        }
    }
}

/// The tools' prologue is written once (`tools/prologue.rs`): no built-in tool spawns its own
/// blocking section or repeats the cancellation check.
#[test]
fn the_tools_share_one_prologue() {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools");
    let mut users = 0;
    for file in rust_files(&tools) {
        if file.ends_with("prologue.rs") {
            continue;
        }
        let code = code(&file).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(!code.contains("spawn_blocking"), "{} runs its own blocking section", file.display());
        assert!(!code.contains("return Err(aborted())"), "{} repeats the cancellation check", file.display());
        users += usize::from(code.contains("check_cancelled(") || code.contains("run_blocking("));
    }
    assert!(users >= 6, "read, edit, write, grep, find and ls use the prologue ({users})");
}

/// One definition per name across the library crates: the JavaScript-compatibility helpers live
/// in `pi_ai::js`, and names that meant different things were renamed (or, for pi's one
/// `BashResult`, unified).
#[test]
fn each_helper_and_name_is_defined_once() {
    let names = [
        ("fn", "js_len"),
        ("fn", "now_ms"),
        ("fn", "is_truthy"),
        ("fn", "js_number_to_string"),
        ("fn", "js_number_value"),
        ("fn", "tool_list_error"),
        ("struct", "BashResult"),
        ("type", "StreamFn"),
        ("enum", "DiagnosticKind"),
        ("enum", "FlagValue"),
    ];
    let sources = library_sources();
    let texts: Vec<(PathBuf, String)> = sources.iter().map(|f| (f.clone(), code(f))).collect();
    for (kind, name) in names {
        let defining: Vec<String> = texts
            .iter()
            .filter(|(_, code)| {
                code.lines().any(|l| {
                    let l = l.trim_start();
                    let l = l.strip_prefix("pub(crate) ").or_else(|| l.strip_prefix("pub ")).unwrap_or(l);
                    l.starts_with(&format!("{kind} {name}("))
                        || l.starts_with(&format!("{kind} {name} "))
                        || l.starts_with(&format!("{kind} {name}<"))
                })
            })
            .map(|(f, _)| f.display().to_string())
            .collect();
        assert!(defining.len() <= 1, "{kind} {name} is defined {} times: {defining:?}", defining.len());
        assert!(!defining.is_empty() || name == "js_number_value", "{kind} {name} is defined somewhere");
    }
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
