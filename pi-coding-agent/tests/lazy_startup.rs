//! `pi -p`'s start-up parses only the built-in catalog providers it needs: the registries
//! (the CLI's and the SDK's, each with auth.json and models.json), the available models and the
//! `--model` candidates leave every provider without credentials and not named by the pattern
//! unparsed. One test: it watches the process-wide catalog.

use pi_coding_agent::cli::model_candidates::cli_model_candidates;
use pi_coding_agent::cli::model_resolver::{CliModelRequest, resolve_cli_model};
use pi_coding_agent::cli::registry::CliRegistry;

fn parsed() -> Vec<&'static str> {
    pi_ai::models::builtin_providers_list().iter().filter(|p| p.is_parsed()).map(|p| p.id()).collect()
}

#[test]
fn a_custom_provider_run_parses_no_builtin_provider() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("auth.json"), "{}").expect("auth.json");
    std::fs::write(
        dir.path().join("models.json"),
        r#"{"providers":{"local":{"baseUrl":"http://127.0.0.1:1/v1","api":"openai-completions","apiKey":"none",
            "models":[{"id":"smollm2-135m","contextWindow":8192000,"maxTokens":256}]},
            "groq":{"apiKey":"gsk-test"}}}"#,
    )
    .expect("models.json");
    let (registry, error) = CliRegistry::load(dir.path());
    assert!(error.is_none(), "{error:?}");
    let (sdk, error) = pi_coding_agent::sdk::ModelRegistry::load(dir.path());
    assert!(error.is_none(), "{error:?}");
    assert_eq!(parsed(), Vec::<&str>::new(), "loading the registries");

    // The available models: only providers with credentials are read (groq through its
    // models.json key; any the environment of this test run gives a key to).
    let available = registry.available_models();
    assert!(available.iter().any(|m| m.provider == "local"));
    assert!(available.iter().any(|m| m.provider == "groq"));
    assert_eq!(sdk.available_models().len(), available.len());
    let with_auth: Vec<&str> = pi_ai::models::get_providers().into_iter().filter(|p| registry.has_auth(p)).collect();
    assert!(parsed().iter().all(|p| with_auth.contains(p)), "parsed {:?}, with auth {with_auth:?}", parsed());

    // `--model local/smollm2-135m`: the candidates are the local provider's model; nothing more is parsed.
    let before = parsed();
    let request = CliModelRequest { model: "local/smollm2-135m", ..Default::default() };
    let candidates = cli_model_candidates(registry.models(), &request);
    let resolved = resolve_cli_model(&request, &candidates, &|p| registry.has_auth(p)).expect("resolves");
    assert_eq!((resolved.model.provider.as_str(), resolved.model.id.as_str()), ("local", "smollm2-135m"));
    assert_eq!(parsed(), before, "resolving a custom provider's model");

    // `--model sonnet`: the providers with a matching model are read, not the whole catalog.
    let request = CliModelRequest { model: "sonnet", ..Default::default() };
    let candidates = cli_model_candidates(registry.models(), &request);
    assert!(candidates.iter().any(|m| m.provider == "anthropic"));
    assert!(!parsed().contains(&"deepseek"), "deepseek has no sonnet");
    assert!(parsed().len() < pi_ai::models::builtin_providers_list().len());

    // `--list-models` style: every model of every provider (still parsed once each).
    assert_eq!(registry.all_models().len(), 1698 + 1);
    assert_eq!(parsed().len(), pi_ai::models::builtin_providers_list().len());
}
