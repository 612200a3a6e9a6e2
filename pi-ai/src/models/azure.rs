//! Azure OpenAI endpoints as pi-ai resolves them (`azure-openai-config.js`): the base URL from
//! `AZURE_OPENAI_BASE_URL`, else `https://{AZURE_OPENAI_RESOURCE_NAME}.openai.azure.com/openai/v1`,
//! else the model's `baseUrl` (Azure hosts normalised to `/openai/v1`), and the deployment sent as
//! the request's model from `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (`model=deployment,…`).

/// The variables Azure reads besides the key.
pub const AZURE_ENV: [&str; 4] = [
    "AZURE_OPENAI_BASE_URL",
    "AZURE_OPENAI_RESOURCE_NAME",
    "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
    "AZURE_OPENAI_API_VERSION",
];

/// The deployment for `model_id`: its entry in `AZURE_OPENAI_DEPLOYMENT_NAME_MAP`, else the id.
///
/// ```
/// use pi_ai::models::resolve_azure_deployment;
/// let env = |n: &str| (n == "AZURE_OPENAI_DEPLOYMENT_NAME_MAP").then(|| " gpt-5=prod-gpt5 , bad, x=".to_owned());
/// assert_eq!(resolve_azure_deployment("gpt-5", &env), "prod-gpt5");
/// assert_eq!(resolve_azure_deployment("x", &env), "x");
/// ```
pub fn resolve_azure_deployment(model_id: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let map = env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP").unwrap_or_default();
    for entry in map.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let mut parts = entry.splitn(2, '=');
        let (Some(id), Some(deployment)) = (parts.next(), parts.next()) else { continue };
        if !id.is_empty() && !deployment.is_empty() && id.trim() == model_id {
            return deployment.trim().to_owned();
        }
    }
    model_id.to_owned()
}

/// The base URL requests go to, or pi's error when none is configured.
///
/// ```
/// use pi_ai::models::resolve_azure_base_url;
/// let none = |_: &str| None;
/// assert_eq!(resolve_azure_base_url("https://r.openai.azure.com/", &none).unwrap(), "https://r.openai.azure.com/openai/v1");
/// let res = |n: &str| (n == "AZURE_OPENAI_RESOURCE_NAME").then(|| "res".to_owned());
/// assert_eq!(resolve_azure_base_url("", &res).unwrap(), "https://res.openai.azure.com/openai/v1");
/// assert!(resolve_azure_base_url("", &none).unwrap_err().starts_with("Azure OpenAI base URL is required."));
/// ```
pub fn resolve_azure_base_url(model_base_url: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let get = |n: &str| env(n).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let chosen = get("AZURE_OPENAI_BASE_URL")
        .or_else(|| get("AZURE_OPENAI_RESOURCE_NAME").map(|r| format!("https://{r}.openai.azure.com/openai/v1")))
        .or_else(|| Some(model_base_url.to_owned()).filter(|u| !u.is_empty()))
        .ok_or_else(|| {
            "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, or pass azureBaseUrl, azureResourceName, or model.baseUrl.".to_owned()
        })?;
    let trimmed = chosen.trim().trim_end_matches('/');
    let mut url = reqwest::Url::parse(trimmed).map_err(|_| format!("Invalid Azure OpenAI base URL: {chosen}"))?;
    let host = url.host_str().unwrap_or_default().to_owned();
    let azure =
        [".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com"].iter().any(|s| host.ends_with(s));
    let path = url.path().trim_end_matches('/').to_owned();
    if azure && ["", "/", "/openai", "/openai/v1/responses"].contains(&path.as_str()) {
        url.set_path("/openai/v1");
        url.set_query(None);
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}
