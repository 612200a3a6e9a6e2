//! `/llama` (pi's `index.js` command and `runWithProgress`): read the router's catalog (with
//! Retry / Close when it is unreachable), then load, unload or download until the user closes
//! the list. Every action ends with a fresh catalog, which also refreshes the provider's models.

use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::client::{LlamaClient, LlamaError, Progress, ProgressFn, format_bytes};
use super::provider::{self, LLAMA_PROVIDER_ID, LlamaModels};
use super::router::RouterModel;
use super::search::SearchState;
use super::view::{LlamaUi, ModelsAction, ProgressState};
use super::{LlamaExtension, Parts};
use crate::extensions::{BoxError, ExtensionApi, ExtensionContext, ExtensionMode};
use crate::ui::{CustomOptions, NotifyKind, UiHost};

/// pi's `connectionErrorMessage`.
fn connection_message(error: &LlamaError) -> String {
    if error.is_connection_error() { "Could not connect to the server.".to_owned() } else { error.to_string() }
}

/// pi's `parseHuggingFaceModel`: `owner/repository[:quant]`.
fn parse_hugging_face_model(value: &str) -> (String, Option<String>) {
    let after_slash = value.find('/').map_or(0, |i| i + 1);
    match value[after_slash..].find(':') {
        Some(i) => (value[..after_slash + i].to_owned(), Some(value[after_slash + i + 1..].to_owned())),
        None => (value.to_owned(), None),
    }
}

/// pi's `configuredClient`: `None` (after the notice) when llama.cpp is not configured.
fn configured_client(parts: &Parts<'_>, ui: &dyn UiHost) -> Result<Option<LlamaClient>, LlamaError> {
    let credential = provider::stored_credential(parts.agent_dir());
    let Some(auth) = provider::resolve_auth(credential.as_ref(), &provider::process_env) else {
        ui.notify(&format!("Configure llama.cpp with /login {LLAMA_PROVIDER_ID}"), NotifyKind::Warning);
        return Ok(None);
    };
    // The resolved key: the credential's, LLAMA_API_KEY, else `local` (sent as pi sends it).
    LlamaClient::new(&auth.server_url, Some(auth.api_key)).map(Some)
}

/// `/llama`.
pub(crate) async fn run_command(
    extension: &LlamaExtension,
    api: &ExtensionApi,
    ctx: &ExtensionContext,
) -> Result<(), BoxError> {
    let host = ctx.ui();
    if ctx.mode() != ExtensionMode::Tui {
        host.notify("/llama is available in interactive mode", NotifyKind::Warning);
        return Ok(());
    }
    let parts = Parts { extension, api };
    let client = match configured_client(&parts, host.as_ref()) {
        Ok(Some(client)) => client,
        Ok(None) => return Ok(()),
        Err(e) => {
            host.notify(&e.to_string(), NotifyKind::Error);
            return Ok(());
        }
    };
    let search = SearchState::new(Some(parts.hugging_face()), tokio::runtime::Handle::try_current().ok());
    let ui = LlamaUi::new(host.clone(), search);
    let factory_ui = ui.clone();
    let custom =
        host.custom(Box::new(move |theme, done| Box::new(factory_ui.component(theme, done))), CustomOptions::default());
    let run = async {
        if let Err(e) = manage(&parts, &ui, &client).await {
            host.notify(&e.to_string(), NotifyKind::Error);
        }
        ui.finish();
    };
    let mut custom = std::pin::pin!(custom);
    tokio::select! {
        _ = &mut custom => {}
        _ = run => { custom.await; }
    }
    Ok(())
}

/// pi's `syncCatalog`: the catalog (read now unless given) becomes the provider's models.
async fn sync_catalog(
    parts: &Parts<'_>,
    client: &LlamaClient,
    catalog: Option<Vec<RouterModel>>,
) -> Result<Vec<RouterModel>, LlamaError> {
    let cancel = CancellationToken::new();
    let current = match catalog {
        Some(c) => c,
        None => client.list(false, &cancel).await?,
    };
    parts.extension.provider.set(LlamaModels::from_catalog(&current, client.server_url(), false));
    // The refresh of the stored credential's server (pi's `modelRegistry.refresh`), live.
    if let Some(credential) = provider::stored_credential(parts.agent_dir()) {
        let stored = provider::read_stored(parts.agent_dir());
        if let Some(models) = provider::refresh_from_server(&credential, stored.as_ref(), &cancel).await? {
            parts.extension.provider.set(models.clone());
            provider::write_stored(parts.agent_dir(), &models).map_err(|e| LlamaError::Message(e.to_string()))?;
        }
    }
    parts.extension.publish(parts.api).map_err(|e| LlamaError::Message(e.to_string()))?;
    Ok(current)
}

async fn read_catalog(parts: &Parts<'_>, ui: &LlamaUi, client: &LlamaClient) -> Option<Vec<RouterModel>> {
    loop {
        match sync_catalog(parts, client, None).await {
            Ok(catalog) => return Some(catalog),
            Err(e) => {
                if !ui.connection_error(client.server_url(), &connection_message(&e)).await {
                    return None;
                }
            }
        }
    }
}

async fn manage(parts: &Parts<'_>, ui: &LlamaUi, client: &LlamaClient) -> Result<(), LlamaError> {
    let Some(mut catalog) = read_catalog(parts, ui, client).await else { return Ok(()) };
    let notify = |m: &str, k| ui.host.notify(m, k);
    loop {
        let action = ui.show_models(client.server_url(), &catalog).await;
        let result = match action {
            ModelsAction::Close => return Ok(()),
            ModelsAction::Download => download_model(parts, ui, client).await,
            ModelsAction::Model(model) if model.is_loaded() => unload_model(parts, ui, client, &model).await,
            ModelsAction::Model(model) if model.status == "unloaded" => {
                load_model(parts, ui, client, &catalog, &model).await
            }
            ModelsAction::Model(model) => {
                notify(&format!("{} is {}", model.id, model.status), NotifyKind::Warning);
                Ok(())
            }
        };
        let Some(refreshed) = read_catalog(parts, ui, client).await else { return Ok(()) };
        catalog = refreshed;
        if let Err(e) = result
            && !e.is_connection_error()
        {
            notify(&e.to_string(), NotifyKind::Error);
        }
    }
}

async fn load_model(
    parts: &Parts<'_>,
    ui: &LlamaUi,
    client: &LlamaClient,
    catalog: &[RouterModel],
    target: &RouterModel,
) -> Result<(), LlamaError> {
    let loaded: Vec<&RouterModel> = catalog.iter().filter(|m| m.id != target.id && m.is_loaded()).collect();
    let mut replace = false;
    if !loaded.is_empty() {
        let title = format!("{} model{} loaded", loaded.len(), if loaded.len() == 1 { " is" } else { "s are" });
        match ui.select(&title, &["Unload all and load", "Keep loaded and load", "Cancel"]).await.as_deref() {
            None | Some("Cancel") => return Ok(()),
            Some(choice) => replace = choice == "Unload all and load",
        }
    }
    let never = CancellationToken::new();
    let restore = async || -> Result<(), LlamaError> {
        ui.host.notify("Restoring previously loaded models", NotifyKind::Info);
        for model in &loaded {
            client.load_and_wait(&model.id, Arc::new(|_| {}), &never).await?;
        }
        sync_catalog(parts, client, None).await.map(|_| ())
    };
    if replace {
        for model in &loaded {
            client.unload_and_wait(&model.id, &never).await?;
        }
    }
    let (c1, c2, id) = (client.clone(), client.clone(), target.id.clone());
    let outcome = run_with_progress(
        ui,
        ("Loading model", &target.id, "Stop loading?"),
        move |cancel, progress| async move { c1.load_and_wait(&id, progress, &cancel).await },
        {
            let id = target.id.clone();
            move || async move { c2.unload(&id, &CancellationToken::new()).await }
        },
    )
    .await;
    match outcome {
        Ok(None) => {
            if replace {
                restore().await?;
            }
            Ok(())
        }
        Ok(Some(_)) => {
            let refreshed = sync_catalog(parts, client, None).await?;
            let status = refreshed.iter().find(|m| m.id == target.id).map(|m| m.status.as_str());
            let text = if status == Some("loaded") {
                format!("Loaded {}", target.id)
            } else {
                format!("Load started for {}", target.id)
            };
            ui.host.notify(&text, NotifyKind::Info);
            Ok(())
        }
        Err(e) => {
            if replace {
                let _ = restore().await;
            }
            Err(e)
        }
    }
}

async fn unload_model(
    parts: &Parts<'_>,
    ui: &LlamaUi,
    client: &LlamaClient,
    model: &RouterModel,
) -> Result<(), LlamaError> {
    if !ui.confirm("Unload model?", &model.id).await {
        return Ok(());
    }
    client.unload_and_wait(&model.id, &CancellationToken::new()).await?;
    sync_catalog(parts, client, None).await?;
    ui.host.notify(&format!("Unloaded {}", model.id), NotifyKind::Info);
    Ok(())
}

async fn download_model(parts: &Parts<'_>, ui: &LlamaUi, client: &LlamaClient) -> Result<(), LlamaError> {
    let hugging_face = parts.hugging_face();
    super::view::lock(&ui.shared).search.set_client(hugging_face.clone());
    let Some(selected) = ui.search_models().await else { return Ok(()) };
    let (repository, mut quantization) = parse_hugging_face_model(&selected);
    ui.show_status("Loading model details", &repository);
    let details = hugging_face.details(&repository, &CancellationToken::new()).await.map_err(hf_error)?;
    if let Some(gated) = &details.gated {
        let approval = if gated == "manual" { "Manual approval is required" } else { "Accept the access terms" };
        let title = format!(
            "Hugging Face access required\n{id}\n\n{approval} at:\nhttps://huggingface.co/{id}\n\nThe llama.cpp server needs HF_TOKEN with access.",
            id = details.id
        );
        if ui.select(&title, &["Continue", "Back"]).await.as_deref() != Some("Continue") {
            return Ok(());
        }
    }
    if quantization.is_none() && !details.quantizations.is_empty() {
        let options: Vec<String> = details
            .quantizations
            .iter()
            .map(|q| {
                let detail: Vec<String> =
                    [q.size.map(format_bytes), (q.name == "Q4_K_M").then(|| "recommended".to_owned())]
                        .into_iter()
                        .flatten()
                        .collect();
                if detail.is_empty() { q.name.clone() } else { format!("{} · {}", q.name, detail.join(" · ")) }
            })
            .collect();
        let refs: Vec<&str> = options.iter().map(String::as_str).collect();
        let Some(choice) = ui.select(&format!("Select quantization\n{}", details.id), &refs).await else {
            return Ok(());
        };
        let Some(index) = options.iter().position(|o| *o == choice) else { return Ok(()) };
        quantization = Some(details.quantizations[index].name.clone());
    }
    let model = match &quantization {
        Some(q) => format!("{}:{q}", details.id),
        None => details.id.clone(),
    };
    let (c1, c2, m1, m2) = (client.clone(), client.clone(), model.clone(), model.clone());
    let outcome = run_with_progress(
        ui,
        ("Downloading model", &model, "Stop download?"),
        move |cancel, progress| async move { c1.download_and_wait(&m1, progress, &cancel).await },
        move || async move { c2.unload(&m2, &CancellationToken::new()).await },
    )
    .await?;
    let Some(catalog) = outcome else { return Ok(()) };
    sync_catalog(parts, client, Some(catalog)).await?;
    ui.host.notify(&format!("Downloaded {model}"), NotifyKind::Info);
    Ok(())
}

/// A Hugging Face failure as a router error (`fetch failed` and timeouts count as connection
/// errors, as pi's `isConnectionError` reads them).
fn hf_error(message: String) -> LlamaError {
    if message.contains("timeout") { LlamaError::Timeout } else { LlamaError::Message(message) }
}

/// pi's `runWithProgress`: runs `run` under the progress screen; Escape asks to stop, and a
/// confirmed stop calls `cancel`, aborts `run` and answers `None`.
async fn run_with_progress<T, R, RF, C, CF>(
    ui: &LlamaUi,
    (title, model, cancel_title): (&str, &str, &str),
    run: R,
    cancel: C,
) -> Result<Option<T>, LlamaError>
where
    T: Send + 'static,
    R: FnOnce(CancellationToken, ProgressFn) -> RF,
    RF: Future<Output = Result<T, LlamaError>> + Send + 'static,
    C: FnOnce() -> CF,
    CF: Future<Output = Result<(), LlamaError>>,
{
    let state = Arc::new(Mutex::new(ProgressState {
        title: title.to_owned(),
        model: model.to_owned(),
        progress: Progress { message: "Starting…".into(), ..Default::default() },
    }));
    let token = CancellationToken::new();
    let on_progress: ProgressFn = {
        let (state, ui) = (state.clone(), ui.clone());
        Arc::new(move |progress: Progress| {
            let snapshot = {
                let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
                s.progress = progress;
                s.clone()
            };
            ui.update_progress(&snapshot);
        })
    };
    let mut task = tokio::spawn(run(token.clone(), on_progress));
    loop {
        let snapshot = state.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let stop = ui.progress(snapshot);
        tokio::select! {
            joined = &mut task => return joined.map_err(|e| LlamaError::Message(e.to_string()))?.map(Some),
            pressed = stop => if pressed.is_err() { continue },
        }
        if !ui.confirm(cancel_title, model).await || task.is_finished() {
            continue;
        }
        let cancelled = cancel().await;
        token.cancel();
        let _ = (&mut task).await;
        cancelled?;
        return Ok(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hugging_face_models_split_at_the_quantization() {
        assert_eq!(parse_hugging_face_model("o/r:Q4_K_M"), ("o/r".to_owned(), Some("Q4_K_M".to_owned())));
        assert_eq!(parse_hugging_face_model("o/r"), ("o/r".to_owned(), None));
    }
}
