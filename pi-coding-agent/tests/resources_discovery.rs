//! Skill and prompt-template discovery, the skills listing and input expansion, compared with
//! what pi 1.6.0 gives for the same file tree (fixture: scripts/fixtures/pi_resources.mjs).

use std::path::Path;

use pi_coding_agent::sdk::system_prompt::{SystemPromptOptions, build_system_prompt_sections};
use pi_coding_agent::sdk::{
    DefaultResourceLoader, LoadedResources, ResourceDiagnostic, format_skills_for_prompt, parse_command_args,
    parse_skill_block, substitute_args,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn fixture() -> Value {
    let text = include_str!("fixtures/resources/resources.json");
    serde_json::from_str(text).expect("fixture is JSON")
}

/// Writes the fixture's file tree under a fresh temp dir.
fn build_tree(fx: &Value) -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    for (rel, content) in fx["files"].as_object().expect("files") {
        let path = root.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content.as_str().expect("content")).expect("write");
    }
    for (rel, target) in fx["links"].as_object().expect("links") {
        std::os::unix::fs::symlink(target.as_str().expect("target"), root.path().join(rel)).expect("symlink");
    }
    root
}

fn rel(root: &Path, p: &Path) -> String {
    p.display().to_string().replace(&root.display().to_string(), "<root>")
}

fn diagnostics_json(root: &Path, diagnostics: &[ResourceDiagnostic]) -> Vec<Value> {
    diagnostics
        .iter()
        .map(|d| {
            let mut v = json!({ "type": d.kind.as_str(), "message": d.message, "path": rel(root, &d.path) });
            if let Some(c) = &d.collision {
                v["collision"] = json!({
                    "resourceType": c.resource_type,
                    "name": c.name,
                    "winnerPath": rel(root, &c.winner_path),
                    "loserPath": rel(root, &c.loser_path),
                });
            }
            v
        })
        .collect()
}

/// YAML syntax errors carry the parser's own wording, which differs between pi's JavaScript
/// parser and ours; everything else about them (kind, file, position in the list) must match.
fn mask_yaml_errors(mut diagnostics: Vec<Value>) -> Vec<Value> {
    for d in &mut diagnostics {
        let path = d["path"].as_str().unwrap_or_default().to_owned();
        if path.contains("broken") {
            d["message"] = json!("<yaml syntax error>");
        }
    }
    diagnostics
}

async fn load_case(fx: &Value, root: &Path, case: &Value) -> LoadedResources {
    let mut loader =
        DefaultResourceLoader::new(root.join(fx["cwd"].as_str().unwrap()), root.join(fx["agentDir"].as_str().unwrap()));
    loader.home_dir = Some(root.join(fx["home"].as_str().unwrap()));
    loader.project_trusted = case["trusted"].as_bool().unwrap();
    loader.no_extensions = true;
    let opts = &case["options"];
    loader.no_skills = opts["noSkills"].as_bool().unwrap_or(false);
    loader.no_prompt_templates = opts["noPromptTemplates"].as_bool().unwrap_or(false);
    let paths = |key: &str| -> Vec<std::path::PathBuf> {
        opts[key].as_array().map(|a| a.iter().map(|p| p.as_str().unwrap().into()).collect()).unwrap_or_default()
    };
    loader.additional_skill_paths = paths("additionalSkillPaths");
    loader.additional_prompt_template_paths = paths("additionalPromptTemplatePaths");
    loader.reload().await.expect("reload");
    loader.resources().expect("loaded").clone()
}

#[tokio::test]
async fn discovery_matches_pi() {
    let fx = fixture();
    let tree = build_tree(&fx);
    let root = tree.path();
    for case in fx["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let r = load_case(&fx, root, case).await;
        let skills: Vec<Value> = r
            .skills()
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "description": s.description,
                    "filePath": rel(root, &s.file_path),
                    "baseDir": rel(root, &s.base_dir),
                    "disableModelInvocation": s.disable_model_invocation,
                })
            })
            .collect();
        assert_eq!(Value::Array(skills), case["skills"], "skills of {name}");
        let want: Vec<Value> = case["skillDiagnostics"].as_array().unwrap().clone();
        assert_eq!(
            mask_yaml_errors(diagnostics_json(root, &r.skill_diagnostics)),
            mask_yaml_errors(want),
            "skill diagnostics of {name}"
        );
        let prompts: Vec<Value> = r
            .prompt_templates()
            .iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "description": p.description,
                    "argumentHint": p.argument_hint,
                    "content": p.content,
                    "filePath": rel(root, &p.file_path),
                })
            })
            .collect();
        assert_eq!(Value::Array(prompts), case["prompts"], "prompts of {name}");
        let want: Vec<Value> = case["promptDiagnostics"].as_array().unwrap().clone();
        assert_eq!(
            mask_yaml_errors(diagnostics_json(root, &r.prompt_diagnostics)),
            mask_yaml_errors(want),
            "prompt diagnostics of {name}"
        );
    }
}

#[tokio::test]
async fn yaml_errors_are_reported_with_the_parsers_message() {
    let fx = fixture();
    let tree = build_tree(&fx);
    let r = load_case(&fx, tree.path(), &fx["cases"][0]).await;
    let broken: Vec<&ResourceDiagnostic> = r
        .skill_diagnostics
        .iter()
        .chain(&r.prompt_diagnostics)
        .filter(|d| d.path.ends_with("broken.md") || d.path.ends_with("broken/SKILL.md"))
        .collect();
    assert_eq!(broken.len(), 2);
    for d in broken {
        assert!(!d.message.is_empty(), "a YAML error says what is wrong");
    }
}

#[tokio::test]
async fn skills_listing_matches_pi() {
    let fx = fixture();
    let tree = build_tree(&fx);
    let root = tree.path();
    let r = load_case(&fx, root, &fx["cases"][0]).await;
    for (label, listing) in fx["listings"].as_object().unwrap() {
        if label == "only_hidden_skills" {
            let hidden: Vec<_> = r.skills().iter().filter(|s| s.disable_model_invocation).cloned().collect();
            assert_eq!(
                format_skills_for_prompt(&hidden, pi_coding_agent::sdk::SkillReader::Read),
                listing.as_str().unwrap()
            );
            continue;
        }
        let strings = |v: &Value| -> Vec<String> {
            v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect()
        };
        let mut options = SystemPromptOptions::with_builtin_tools("/tmp/proj");
        options.selected_tools = Some(strings(&listing["selectedTools"]));
        options.hidden_tools = strings(&listing["hiddenTools"]);
        options.skills = r.skills().to_vec();
        let sections = build_system_prompt_sections(&options).unwrap();
        let got = sections.get("skills").flatten().map(|s| rel(root, Path::new(s)));
        assert_eq!(got.as_deref(), listing["skills"].as_str(), "listing {label}");
        if got.is_some() {
            let names: Vec<&str> = sections.keys().collect();
            let at = names.iter().position(|n| *n == "skills").unwrap();
            assert_eq!(names[at + 1], "cwd", "the skills section comes right before cwd");
        }
    }
}

#[tokio::test]
async fn input_expansion_matches_pi() {
    let fx = fixture();
    let tree = build_tree(&fx);
    let root = tree.path();
    let r = load_case(&fx, root, &fx["cases"][0]).await;
    for case in fx["expansions"].as_array().unwrap() {
        let input = case["input"].as_str().unwrap();
        let got = rel(root, Path::new(&r.expand_input(input)));
        assert_eq!(got, case["output"].as_str().unwrap(), "expansion of {input:?}");
    }
}

#[test]
fn argument_parsing_and_substitution_match_pi() {
    let fx = fixture();
    for case in fx["parseArgs"].as_array().unwrap() {
        let input = case["input"].as_str().unwrap();
        let want: Vec<String> = serde_json::from_value(case["args"].clone()).unwrap();
        assert_eq!(parse_command_args(input), want, "args of {input:?}");
    }
    for case in fx["substitutions"].as_array().unwrap() {
        let content = case["content"].as_str().unwrap();
        let args: Vec<String> = serde_json::from_value(case["args"].clone()).unwrap();
        assert_eq!(substitute_args(content, &args), case["output"].as_str().unwrap(), "{content:?} with {args:?}");
    }
}

#[test]
fn skill_blocks_parse_as_in_pi() {
    let fx = fixture();
    for case in fx["skillBlocks"].as_array().unwrap() {
        let input = case["input"].as_str().unwrap();
        let got = parse_skill_block(input).map(|b| {
            let mut v = json!({ "name": b.name, "location": b.location, "content": b.content });
            if let Some(u) = b.user_message {
                v["userMessage"] = json!(u);
            }
            v
        });
        assert_eq!(got.unwrap_or(Value::Null), case["block"], "{input:?}");
    }
}
