//! The host's JavaScript, kept in `pi-coding-agent/js-host/`, embedded in the binary and written
//! to a cache folder named after its content the first time a session needs it.

use std::path::{Path, PathBuf};

/// `(relative path, content)` of every host file.
const FILES: &[(&str, &str)] = &[
    ("host.mjs", include_str!("../../../js-host/host.mjs")),
    ("rpc.mjs", include_str!("../../../js-host/rpc.mjs")),
    ("hooks.mjs", include_str!("../../../js-host/hooks.mjs")),
    ("loader.mjs", include_str!("../../../js-host/loader.mjs")),
    ("context.mjs", include_str!("../../../js-host/context.mjs")),
    ("dispatch.mjs", include_str!("../../../js-host/dispatch.mjs")),
    ("bus.mjs", include_str!("../../../js-host/bus.mjs")),
    ("components.mjs", include_str!("../../../js-host/components.mjs")),
    ("virtual-models.mjs", include_str!("../../../js-host/virtual-models.mjs")),
    ("provider-stream.mjs", include_str!("../../../js-host/provider-stream.mjs")),
    ("provider-oauth.mjs", include_str!("../../../js-host/provider-oauth.mjs")),
    ("provider-validate.mjs", include_str!("../../../js-host/provider-validate.mjs")),
    ("model_registry.mjs", include_str!("../../../js-host/model_registry.mjs")),
    ("session_manager.mjs", include_str!("../../../js-host/session_manager.mjs")),
    ("signals.mjs", include_str!("../../../js-host/signals.mjs")),
    ("shims/pi-tui.mjs", include_str!("../../../js-host/shims/pi-tui.mjs")),
    ("shims/pi-tui/autocomplete.mjs", include_str!("../../../js-host/shims/pi-tui/autocomplete.mjs")),
    ("shims/pi-tui/basic.mjs", include_str!("../../../js-host/shims/pi-tui/basic.mjs")),
    ("shims/pi-tui/mouse.mjs", include_str!("../../../js-host/shims/pi-tui/mouse.mjs")),
    ("shims/pi-tui/editor-autocomplete.mjs", include_str!("../../../js-host/shims/pi-tui/editor-autocomplete.mjs")),
    ("shims/pi-tui/editor-layout.mjs", include_str!("../../../js-host/shims/pi-tui/editor-layout.mjs")),
    ("shims/pi-tui/editor.mjs", include_str!("../../../js-host/shims/pi-tui/editor.mjs")),
    ("shims/pi-tui/fuzzy.mjs", include_str!("../../../js-host/shims/pi-tui/fuzzy.mjs")),
    ("shims/pi-tui/image.mjs", include_str!("../../../js-host/shims/pi-tui/image.mjs")),
    ("shims/pi-tui/input.mjs", include_str!("../../../js-host/shims/pi-tui/input.mjs")),
    ("shims/pi-tui/keys.mjs", include_str!("../../../js-host/shims/pi-tui/keys.mjs")),
    ("shims/pi-tui/loader.mjs", include_str!("../../../js-host/shims/pi-tui/loader.mjs")),
    ("shims/pi-tui/latex.mjs", include_str!("../../../js-host/shims/pi-tui/latex.mjs")),
    ("shims/pi-tui/latex-tables.mjs", include_str!("../../../js-host/shims/pi-tui/latex-tables.mjs")),
    ("shims/pi-tui/markdown-host.mjs", include_str!("../../../js-host/shims/pi-tui/markdown-host.mjs")),
    ("shims/pi-tui/markdown.mjs", include_str!("../../../js-host/shims/pi-tui/markdown.mjs")),
    ("shims/pi-tui/select-list.mjs", include_str!("../../../js-host/shims/pi-tui/select-list.mjs")),
    ("shims/pi-tui/settings-list.mjs", include_str!("../../../js-host/shims/pi-tui/settings-list.mjs")),
    ("shims/pi-tui/text-edit.mjs", include_str!("../../../js-host/shims/pi-tui/text-edit.mjs")),
    ("shims/pi-tui/terminal-image.mjs", include_str!("../../../js-host/shims/pi-tui/terminal-image.mjs")),
    ("shims/pi-tui/text.mjs", include_str!("../../../js-host/shims/pi-tui/text.mjs")),
    ("shims/pi-ai.mjs", include_str!("../../../js-host/shims/pi-ai.mjs")),
    ("shims/pi-agent-core.mjs", include_str!("../../../js-host/shims/pi-agent-core.mjs")),
    ("shims/pi-coding-agent.mjs", include_str!("../../../js-host/shims/pi-coding-agent.mjs")),
    ("shims/typebox.mjs", include_str!("../../../js-host/shims/typebox.mjs")),
];

/// FNV-1a over every file, naming the cache folder (a changed host gets a new folder).
fn content_hash() -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, content) in FILES {
        for byte in name.bytes().chain(content.bytes()) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("PI_JS_HOST_DIR") {
        return PathBuf::from(dir);
    }
    dirs::cache_dir().unwrap_or_else(std::env::temp_dir).join("pi-rs").join("js-host")
}

/// Writes the host files (once per content) and returns the path of `host.mjs`.
pub(crate) fn install() -> std::io::Result<PathBuf> {
    install_in(&cache_root())
}

/// [`install`] under `root`.
fn install_in(root: &Path) -> std::io::Result<PathBuf> {
    let dir = root.join(format!("{:016x}", content_hash()));
    let entry = dir.join("host.mjs");
    if is_complete(&dir) {
        return Ok(entry);
    }
    // Write into a private folder, then move it in place, so concurrent sessions never see a
    // half-written host.
    let staging = dir.with_extension(format!("tmp{}", std::process::id()));
    for (name, content) in FILES {
        let path = staging.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content)?;
    }
    match std::fs::rename(&staging, &dir) {
        Ok(()) => Ok(entry),
        Err(_) if is_complete(&dir) => {
            let _ = std::fs::remove_dir_all(&staging);
            Ok(entry)
        }
        Err(_) if dir.is_dir() => {
            // A copy that is not whole or was changed (a file edited or deleted): replaced.
            tracing::warn!(dir = %dir.display(), "the JavaScript host's files differ from this pi's; writing them again");
            let _ = std::fs::remove_dir_all(&dir);
            let moved = std::fs::rename(&staging, &dir);
            if moved.is_err() {
                let _ = std::fs::remove_dir_all(&staging);
            }
            match moved {
                Ok(()) => Ok(entry),
                Err(_) if is_complete(&dir) => Ok(entry),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

fn is_complete(dir: &Path) -> bool {
    FILES.iter().all(|(name, content)| std::fs::read_to_string(dir.join(name)).is_ok_and(|c| c == *content))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_that_was_changed_is_written_again() {
        let root = tempfile::tempdir().expect("temp dir");
        let entry = install_in(root.path()).expect("installed");
        let dir = entry.parent().expect("the host's folder").to_path_buf();
        assert!(is_complete(&dir));
        let (name, content) = FILES[0];
        std::fs::write(dir.join(name), "// edited").expect("edit");
        std::fs::remove_file(entry.clone()).ok();
        assert_eq!(install_in(root.path()).expect("installed again"), entry);
        assert!(is_complete(&dir));
        assert_eq!(std::fs::read_to_string(dir.join(name)).expect("restored"), content);
        // No staging folder is left behind.
        assert_eq!(std::fs::read_dir(root.path()).expect("root").count(), 1);
    }
}
