//! `models.*` for scripts (pi's `createModelGlobals`): the model catalog by type (`chat`,
//! `classifier`, `image`; an entry without `type` is a chat model), and `classify()` /
//! `generateImages()` run through pi-ai's classifier and image APIs with the session's
//! credentials (`models/calls.rs`). Chat models are listed but cannot be run from scripts.

mod calls;
mod checks;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use calls::{CallSink, ModelAuth, ModelCall, ModelCalls};

use super::sandbox::SandboxGlobal;
pub(crate) use checks::describe_value;

/// The catalog scripts see: every known model and the ones with working credentials.
#[derive(Clone, Debug, Default)]
pub struct ModelCatalog {
    /// Every known model, as pi's JSON (`{ id, name, api, provider, … }`).
    pub all: Vec<Value>,
    /// The models whose provider has credentials.
    pub available: Vec<Value>,
}

/// A [`ModelCatalog`] built on first use: a run whose scripts never ask for `models.*` (nearly
/// every run) does not turn the ~1 700-model catalog into JSON. It carries the session's
/// credentials for `classify()` and `generateImages()` ([`LazyModelCatalog::with_auth`]).
#[derive(Clone)]
pub struct LazyModelCatalog(std::sync::Arc<LazyInner>, Option<ModelAuth>);

struct LazyInner {
    cell: std::sync::OnceLock<ModelCatalog>,
    build: Box<dyn Fn() -> ModelCatalog + Send + Sync>,
}

impl LazyModelCatalog {
    /// A catalog `build` makes when a script first needs it.
    pub fn new(build: impl Fn() -> ModelCatalog + Send + Sync + 'static) -> Self {
        LazyModelCatalog(
            std::sync::Arc::new(LazyInner { cell: std::sync::OnceLock::new(), build: Box::new(build) }),
            None,
        )
    }

    /// The same catalog, running models with the credentials `auth` resolves per provider
    /// (without it every `classify()` and `generateImages()` fails as unconfigured).
    pub fn with_auth(mut self, auth: ModelAuth) -> Self {
        self.1 = Some(auth);
        self
    }

    /// The credential lookup, if any.
    pub fn auth(&self) -> Option<&ModelAuth> {
        self.1.as_ref()
    }

    /// A catalog that is already built.
    pub fn ready(catalog: ModelCatalog) -> Self {
        let cell = std::sync::OnceLock::new();
        let _ = cell.set(catalog);
        LazyModelCatalog(std::sync::Arc::new(LazyInner { cell, build: Box::new(ModelCatalog::default) }), None)
    }

    /// The catalog, built now if this is the first use.
    pub fn get(&self) -> &ModelCatalog {
        self.0.cell.get_or_init(|| (self.0.build)())
    }
}

impl Default for LazyModelCatalog {
    fn default() -> Self {
        LazyModelCatalog::ready(ModelCatalog::default())
    }
}

impl std::fmt::Debug for LazyModelCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyModelCatalog").field("built", &self.0.cell.get().is_some()).finish()
    }
}

/// The `models.*` globals, all taking their arguments spread.
pub fn model_globals() -> Vec<SandboxGlobal> {
    ["getModelsOfType", "getAvailableOfType", "getModelOfType", "classify", "generateImages"]
        .into_iter()
        .map(|m| SandboxGlobal { name: format!("models.{m}"), spread: true })
        .collect()
}

const MODEL_TYPES: [&str; 3] = ["chat", "image", "classifier"];

/// A catalog entry without `headers` (models.json headers can carry credentials).
fn model_info(model: &Value) -> Value {
    let mut info = model.clone();
    if let Some(map) = info.as_object_mut() {
        map.remove("headers");
    }
    info
}

fn model_type(value: Option<&Value>) -> Result<&str, String> {
    match value.and_then(Value::as_str) {
        Some(t) if MODEL_TYPES.contains(&t) => Ok(t),
        _ => Err(format!(
            "Unknown model type {}. Use \"chat\", \"image\", or \"classifier\".",
            value.map(Value::to_string).unwrap_or_else(|| "undefined".into())
        )),
    }
}

fn provider(value: Option<&Value>) -> Result<Option<&str>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err("provider must be a string".into()),
    }
}

fn with_article(word: &str) -> String {
    let article = if word.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    format!("{article} {word}")
}

fn of_type<'a>(models: &'a [Value], kind: &str, provider: Option<&str>) -> Vec<&'a Value> {
    models
        .iter()
        .filter(|m| m.get("type").and_then(Value::as_str).unwrap_or("chat") == kind)
        .filter(|m| provider.is_none_or(|p| m.get("provider").and_then(Value::as_str) == Some(p)))
        .collect()
}

fn find<'a>(models: &'a [Value], kind: &str, provider: &str, id: &str) -> Option<&'a Value> {
    of_type(models, kind, Some(provider)).into_iter().find(|m| m.get("id").and_then(Value::as_str) == Some(id))
}

/// `classify()` / `generateImages()`: the model is resolved by provider and id and the context
/// checked before anything runs.
fn resolve_model<'a>(catalog: &'a ModelCatalog, name: &str, kind: &str, args: &[Value]) -> Result<&'a Value, String> {
    let list_hint = format!("List the {kind} models you can use with models.getAvailableOfType(\"{kind}\").");
    let model = args.first();
    let (Some(provider), Some(id)) = (
        model.and_then(|m| m.get("provider")).and_then(Value::as_str),
        model.and_then(|m| m.get("id")).and_then(Value::as_str),
    ) else {
        let undefined_hint = if model.is_none_or(Value::is_null) {
            " models.getModelOfType() returns undefined for an unknown provider or id."
        } else {
            ""
        };
        return Err(format!(
            "{name}() expects {} model as its first argument, got {}.{undefined_hint} {list_hint}",
            with_article(kind),
            describe_value(model)
        ));
    };
    let reference = format!("{provider}/{id}");
    match find(&catalog.all, kind, provider, id) {
        Some(model) => Ok(model),
        None => {
            let actual =
                MODEL_TYPES.iter().find(|other| **other != kind && find(&catalog.all, other, provider, id).is_some());
            Err(match actual {
                Some(actual) => format!(
                    "\"{reference}\" is {} model, not {} model. {list_hint}",
                    with_article(actual),
                    with_article(kind)
                ),
                None => format!("Unknown {kind} model \"{reference}\". {list_hint}"),
            })
        }
    }
}

/// Runs `models.classify` / `models.generateImages`: resolved, checked, then run and recorded.
pub async fn call_model_run(
    models: &LazyModelCatalog,
    calls: &ModelCalls,
    name: &str,
    args: &[Value],
    cancel: CancellationToken,
    sink: &CallSink<'_>,
) -> Result<Option<Value>, String> {
    let kind = if name == "models.classify" { "classifier" } else { "image" };
    let model = resolve_model(models.get(), name, kind, args)?.clone();
    let context = if kind == "classifier" {
        checks::check_classifier_context(args.get(1))?
    } else {
        checks::check_images_context(args.get(1))?
    };
    let call = ModelCall { name, kind, model, context, auth: models.auth(), cancel };
    calls.run(call, sink).await.map(Some)
}

/// Runs the catalog's `models.<method>` (the listings) with the script's spread arguments.
pub fn call_model_global(catalog: &ModelCatalog, name: &str, args: &[Value]) -> Result<Option<Value>, String> {
    let list = |models: &[Value]| -> Result<Option<Value>, String> {
        let kind = model_type(args.first())?;
        let provider = provider(args.get(1))?;
        Ok(Some(Value::Array(of_type(models, kind, provider).into_iter().map(model_info).collect())))
    };
    match name {
        "models.getModelsOfType" => list(&catalog.all),
        "models.getAvailableOfType" => list(&catalog.available),
        "models.getModelOfType" => {
            let (provider, id) = match (args.get(1).and_then(Value::as_str), args.get(2).and_then(Value::as_str)) {
                (Some(p), Some(i)) => (p, i),
                _ => {
                    let described: Vec<String> = args.iter().map(|a| describe_value(Some(a))).collect();
                    return Err(format!(
                        "models.getModelOfType(type, provider, id) expects three strings, got ({}). The provider and the id are separate arguments, for example models.getModelOfType(\"classifier\", \"typesafe\", \"jev-latest\").",
                        described.join(", ")
                    ));
                }
            };
            let kind = model_type(args.first())?;
            Ok(find(&catalog.all, kind, provider, id).map(model_info))
        }
        other => Err(format!("Unknown global \"{other}\"")),
    }
}

/// The built-in classifier and image models as catalog entries, with models.json's provider-level
/// `baseUrl`, `headers` and `compat` applied (the registry's
/// [`builtin_entries`](crate::auth::typed_models::builtin_entries)).
pub fn typed_model_entries(config: Option<&pi_ai::models::ModelsConfig>) -> Vec<Value> {
    crate::auth::typed_models::builtin_entries(config)
}
