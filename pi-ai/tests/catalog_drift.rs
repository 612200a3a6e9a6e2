//! The built-in catalog is pi-ai 1.6.0's `models.generated.js`, whole: every provider and every
//! chat model of every API, each field kept. `scripts/fixtures/pi_ai_catalog.mjs` regenerates
//! `catalog.json` from the installed reference; the last test reruns it and fails when the
//! committed catalog has drifted (it skips, saying so, when the reference is not installed).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn committed() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/models/catalog.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("catalog.json")).expect("catalog.json parses")
}

#[test]
fn every_provider_and_model_of_the_reference_is_built_in() {
    let catalog = pi_ai::models::builtin_catalog();
    assert_eq!(catalog.len(), 43, "providers");
    assert_eq!(catalog.values().map(|l| l.len()).sum::<usize>(), 1698, "chat models");
    let mut apis: Vec<&str> = catalog.values().flat_map(|l| l.iter()).map(|m| m.api.as_str()).collect();
    apis.sort_unstable();
    apis.dedup();
    assert_eq!(
        apis,
        [
            "anthropic-messages",
            "azure-openai-responses",
            "bedrock-converse-stream",
            "google-generative-ai",
            "google-vertex",
            "mistral-conversations",
            "openai-codex-responses",
            "openai-completions",
            "openai-responses",
            "pi-messages"
        ]
    );
}

#[test]
fn the_parsed_catalog_keeps_every_field() {
    let ours = serde_json::to_value(pi_ai::models::builtin_catalog()).expect("serialize");
    assert!(ours == committed(), "a field of catalog.json is lost or changed when parsed into Model");
}

fn anchor() -> Option<(PathBuf, String)> {
    let home = std::env::var_os("PI_ANCHOR_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/pi-anchor")))?;
    let generated = home.join("node_modules/@earendil-works/pi-ai/dist/models.generated.js");
    let script = Path::new("/work/shared/tools/anchor.sh");
    (generated.exists() && script.exists()).then(|| (script.to_path_buf(), home.display().to_string()))
}

#[test]
fn the_committed_catalog_matches_the_installed_reference() {
    let Some((anchor, base)) = anchor() else {
        eprintln!(
            "SKIP the_committed_catalog_matches_the_installed_reference: the reference pi (anchor.sh) is not installed"
        );
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/fixtures/pi_ai_catalog.mjs");
    let out = Command::new(anchor).arg("node").arg(script).arg(base).output().expect("run the generator");
    assert!(out.status.success(), "generator failed: {}", String::from_utf8_lossy(&out.stderr));
    let fresh: Value = serde_json::from_slice(&out.stdout).expect("generator JSON");
    assert!(
        fresh == committed(),
        "pi-ai/src/models/catalog.json differs from the installed reference: regenerate it with scripts/fixtures/pi_ai_catalog.mjs"
    );
}

fn committed_typed(path: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    serde_json::from_str(&std::fs::read_to_string(&path).expect("typed catalog")).expect("typed catalog parses")
}

#[test]
fn the_parsed_classifier_and_image_catalogs_keep_every_field() {
    let classifiers = serde_json::to_value(pi_ai::classify::builtin_classifier_models()).expect("serialize");
    assert!(classifiers == committed_typed("src/classify/catalog.json"), "a classifier model field is lost");
    let images = serde_json::to_value(pi_ai::images::builtin_image_models()).expect("serialize");
    assert!(images == committed_typed("src/images/catalog.json"), "an image model field is lost");
}

#[test]
fn the_committed_classifier_and_image_catalogs_match_the_installed_reference() {
    let Some((anchor, base)) = anchor() else {
        eprintln!(
            "SKIP the_committed_classifier_and_image_catalogs_match_the_installed_reference: the reference pi (anchor.sh) is not installed"
        );
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/fixtures/pi_ai_catalog.mjs");
    for (kind, path) in [("classifier", "src/classify/catalog.json"), ("image", "src/images/catalog.json")] {
        let out =
            Command::new(&anchor).arg("node").arg(&script).arg(&base).arg(kind).output().expect("run the generator");
        assert!(out.status.success(), "generator failed: {}", String::from_utf8_lossy(&out.stderr));
        let fresh: Value = serde_json::from_slice(&out.stdout).expect("generator JSON");
        assert!(
            fresh == committed_typed(path),
            "pi-ai/{path} differs from the installed reference: regenerate it with scripts/fixtures/pi_ai_catalog.mjs <base> {kind}"
        );
    }
}
