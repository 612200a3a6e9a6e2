//! The built-in catalog is parsed per provider, on first read, once per process: building
//! collections from it, applying a models.json and looking models up parse only the providers
//! they read, and every collection shares what was parsed. One test: it watches the process-wide
//! catalog, which another test in the same binary would disturb.

use pi_ai::models::{ModelList, ModelsConfig, builtin_catalog_owned, builtin_providers_list, get_model};
use pi_ai::registry::Models;

fn parsed() -> Vec<&'static str> {
    builtin_providers_list().iter().filter(|p| p.is_parsed()).map(|p| p.id()).collect()
}

#[test]
fn only_the_providers_read_are_parsed_and_they_are_shared() {
    // Collections of the whole catalog, a custom provider added: nothing parsed.
    let first = Models::from_catalog();
    let mut catalog = builtin_catalog_owned();
    let config = ModelsConfig::parse(
        "models.json",
        r#"{"providers":{"local":{"baseUrl":"http://127.0.0.1:1/v1","api":"openai-completions","apiKey":"none",
            "models":[{"id":"smollm2-135m"}]},
            "groq":{"modelOverrides":{"llama-3.1-8b-instant":{"maxTokens":77}}},
            "anthropic":{"apiKey":"sk-test"}}}"#,
    )
    .expect("models.json parses");
    assert_eq!(parsed(), Vec::<&str>::new(), "parsing models.json");
    config.apply(&mut catalog).expect("applies");
    // The overridden provider is read (to change it), the key-only one is not.
    assert_eq!(parsed(), ["groq"]);
    assert_eq!(catalog["local"].len(), 1);
    assert!(!catalog["anthropic"].is_parsed() && catalog["anthropic"].is_builtin());
    assert!(!catalog["groq"].is_builtin());
    let groq = catalog["groq"].iter().find(|m| m.id == "llama-3.1-8b-instant").expect("groq model");
    assert_eq!(groq.max_tokens, 77);
    assert_ne!(get_model("groq", "llama-3.1-8b-instant").expect("built-in").max_tokens, 77);

    // Counting and listing ids and names parses nothing.
    let total: usize = catalog.values().map(ModelList::len).sum();
    assert_eq!(total, 1698 + 1);
    assert!(catalog["openrouter"].keys().any(|(id, _)| id.starts_with("anthropic/")));
    assert_eq!(parsed(), ["groq"]);

    // A lookup parses its provider only, and every collection then shares that list.
    let mut second = Models::new();
    for (id, models) in catalog {
        second.set_provider(pi_ai::registry::ProviderEntry {
            id,
            models,
            auth: pi_ai::registry::ProviderAuth::EnvKey,
            apis: Default::default(),
        });
    }
    let opus = second.get_models(Some("anthropic"))[0].clone();
    assert_eq!(parsed(), ["anthropic", "groq"]);
    let from_first = first.get_model("anthropic", &opus.id).expect("in the first collection");
    let from_second = second.get_model("anthropic", &opus.id).expect("in the second collection");
    assert!(std::ptr::eq(from_first, from_second), "one parse, shared");
    assert!(second.get_model("local", "smollm2-135m").is_some());
    assert!(first.get_model("openai", "no-such-model").is_none());
    assert_eq!(parsed(), ["anthropic", "groq"], "an unknown id parses nothing");

    // Listing every model reads the whole catalog, once.
    assert_eq!(first.get_models(None).len(), 1698);
    assert_eq!(parsed().len(), builtin_providers_list().len());
}
