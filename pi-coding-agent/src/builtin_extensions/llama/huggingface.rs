//! Hugging Face's model API as pi's `huggingface.js` uses it: GGUF search and a repository's
//! quantizations, with the token found where the `huggingface_hub` tools keep it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::client::{REQUEST_TIMEOUT, form_encode};

/// Hugging Face's address.
pub const DEFAULT_HUGGING_FACE_URL: &str = "https://huggingface.co";

static QUANTIZATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:^|[-_.])((?:UD-)?(?:IQ\d(?:_[A-Z0-9]+)+|Q\d(?:_[A-Z0-9]+)+|BF16|F16|F32|MXFP\d(?:_[A-Z0-9]+)*))$",
    )
    .unwrap_or_else(|e| panic!("the quantization pattern is valid: {e}"))
});
static SHARD_SUFFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-\d{5}-of-\d{5}$").unwrap_or_else(|e| panic!("the shard pattern is valid: {e}")));

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// `owner/repository`.
    pub id: String,
    /// Its download count.
    pub downloads: u64,
}

/// One quantization of a repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantization {
    /// `Q4_K_M`, `F16`, …
    pub name: String,
    /// The bytes of all its files, when every size is known.
    pub size: Option<u64>,
}

/// A repository's access and quantizations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelDetails {
    /// The repository id as Hugging Face spells it.
    pub id: String,
    /// `auto` or `manual` when gated.
    pub gated: Option<String>,
    /// `Q4_K_M` first, then by size and name.
    pub quantizations: Vec<Quantization>,
}

/// pi's `findHuggingFaceToken`: `HF_TOKEN`, then `$HF_TOKEN_PATH`, `$HF_HOME/token`,
/// `$XDG_CACHE_HOME/huggingface/token`, `~/.cache/huggingface/token`.
pub fn find_token(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if let Some(token) = env("HF_TOKEN").map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()) {
        return Some(token);
    }
    let mut paths: Vec<PathBuf> = Vec::new();
    if let Some(p) = env("HF_TOKEN_PATH").filter(|p| !p.is_empty()) {
        paths.push(p.into());
    }
    if let Some(p) = env("HF_HOME").filter(|p| !p.is_empty()) {
        paths.push(PathBuf::from(p).join("token"));
    }
    if let Some(p) = env("XDG_CACHE_HOME").filter(|p| !p.is_empty()) {
        paths.push(PathBuf::from(p).join("huggingface").join("token"));
    }
    if let Some(home) = dirs::home_dir() {
        paths.push(home.join(".cache").join("huggingface").join("token"));
    }
    let mut seen = std::collections::HashSet::new();
    paths
        .into_iter()
        .filter(|p| seen.insert(p.clone()))
        .find_map(|p| std::fs::read_to_string(p).ok().map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()))
}

/// A client of Hugging Face's API (pi's `HuggingFaceClient`).
#[derive(Clone, Debug)]
pub struct HuggingFaceClient {
    token: Option<String>,
    base_url: String,
    http: reqwest::Client,
}

impl HuggingFaceClient {
    /// A client of `base_url` (Hugging Face itself by default), with an optional token.
    pub fn new(token: Option<String>, base_url: &str) -> Self {
        HuggingFaceClient { token, base_url: base_url.trim_end_matches('/').to_owned(), http: reqwest::Client::new() }
    }

    async fn request(&self, path: &str, cancel: &CancellationToken) -> Result<Value, String> {
        let mut request = self.http.get(format!("{}{path}", self.base_url)).timeout(REQUEST_TIMEOUT);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let response = tokio::select! {
            r = request.send() => r.map_err(|e| if e.is_timeout() { "The operation was aborted due to timeout".to_owned() } else { "fetch failed".to_owned() })?,
            _ = cancel.cancelled() => return Err("Cancelled".into()),
        };
        let status = response.status();
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let (retry_after, ratelimit) = (header("retry-after"), header("ratelimit"));
        let payload = tokio::select! {
            b = response.bytes() => b.ok().and_then(|b| serde_json::from_slice::<Value>(&b).ok()).unwrap_or(Value::Null),
            _ = cancel.cancelled() => return Err("Cancelled".into()),
        };
        if status.is_success() {
            return Ok(payload);
        }
        if status.as_u16() == 429 {
            let delay = retry_after.and_then(|v| v.trim().parse::<u64>().ok()).filter(|d| *d > 0).or_else(|| {
                let value = ratelimit?;
                value.split(';').find_map(|part| part.strip_prefix("t=")).and_then(|t| t.parse().ok())
            });
            return Err(match delay {
                Some(d) => format!("Hugging Face rate limit reached; retry in {d}s"),
                None => "Hugging Face rate limit reached".into(),
            });
        }
        Err(payload
            .get("error")
            .and_then(Value::as_str)
            .filter(|e| !e.is_empty())
            .map_or_else(|| format!("Hugging Face returned HTTP {}", status.as_u16()), str::to_owned))
    }

    /// The 20 most downloaded GGUF repositories matching `query`.
    pub async fn search(&self, query: &str, cancel: &CancellationToken) -> Result<Vec<SearchResult>, String> {
        let path =
            format!("/api/models?search={}&filter=gguf&sort=downloads&direction=-1&limit=20", form_encode(query));
        let payload = self.request(&path, cancel).await?;
        let Some(list) = payload.as_array() else { return Err("Hugging Face returned invalid search results".into()) };
        Ok(list
            .iter()
            .filter_map(|v| {
                let id = v.get("id")?.as_str()?.to_owned();
                let downloads = v.get("downloads").and_then(Value::as_f64).map_or(0, |d| d as u64);
                Some(SearchResult { id, downloads })
            })
            .collect())
    }

    /// A repository's gating and GGUF quantizations (`/api/models/<id>?blobs=true`).
    pub async fn details(&self, id: &str, cancel: &CancellationToken) -> Result<ModelDetails, String> {
        let encoded: Vec<String> = id.split('/').map(uri_component).collect();
        let payload = self.request(&format!("/api/models/{}?blobs=true", encoded.join("/")), cancel).await?;
        if !payload.is_object() {
            return Err("Hugging Face returned invalid model details".into());
        }
        let mut sizes: Vec<(String, u64, bool)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for file in payload.get("siblings").and_then(Value::as_array).into_iter().flatten() {
            let Some(name) = file.get("rfilename").and_then(Value::as_str) else { continue };
            if !name.to_lowercase().ends_with(".gguf") {
                continue;
            }
            let filename = name.rsplit('/').next().unwrap_or(name);
            if filename.to_lowercase().starts_with("mmproj") {
                continue;
            }
            let stem = SHARD_SUFFIX.replace(&filename[..filename.len() - 5], "").into_owned();
            let Some(quant) = QUANTIZATION.captures(&stem).and_then(|c| c.get(1)).map(|m| m.as_str().to_uppercase())
            else {
                continue;
            };
            let slot = *index.entry(quant.clone()).or_insert_with(|| {
                sizes.push((quant, 0, true));
                sizes.len() - 1
            });
            match file.get("size").and_then(Value::as_f64) {
                Some(size) => sizes[slot].1 += size as u64,
                None => sizes[slot].2 = false,
            }
        }
        let mut quantizations: Vec<Quantization> = sizes
            .into_iter()
            .map(|(name, total, complete)| Quantization { name, size: complete.then_some(total) })
            .collect();
        quantizations.sort_by(|a, b| {
            use std::cmp::Ordering;
            match (a.name == "Q4_K_M", b.name == "Q4_K_M") {
                (true, _) => Ordering::Less,
                (_, true) => Ordering::Greater,
                _ => a.size.unwrap_or(u64::MAX).cmp(&b.size.unwrap_or(u64::MAX)).then_with(|| a.name.cmp(&b.name)),
            }
        });
        let gated = payload.get("gated").and_then(Value::as_str).filter(|g| *g == "auto" || *g == "manual");
        Ok(ModelDetails {
            id: payload.get("id").and_then(Value::as_str).unwrap_or(id).to_owned(),
            gated: gated.map(str::to_owned),
            quantizations,
        })
    }
}

/// pi's `encodeURIComponent`.
fn uri_component(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'!' | b'~' | b'*' | b'\'' | b'(' | b')' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantizations_are_read_from_file_names() {
        let q = |name: &str| QUANTIZATION.captures(name).and_then(|c| c.get(1)).map(|m| m.as_str().to_uppercase());
        assert_eq!(q("gemma-3-4b-it-Q4_K_M").as_deref(), Some("Q4_K_M"));
        assert_eq!(q("model.UD-IQ2_XXS").as_deref(), Some("UD-IQ2_XXS"));
        assert_eq!(q("model-f16").as_deref(), Some("F16"));
        assert_eq!(q("model"), None);
        assert_eq!(SHARD_SUFFIX.replace("big-Q8_0-00001-of-00003", ""), "big-Q8_0");
    }

    #[test]
    fn the_token_comes_from_the_environment_first() {
        let env = |n: &str| (n == "HF_TOKEN").then(|| " hf_x ".to_owned());
        assert_eq!(find_token(&env).as_deref(), Some("hf_x"));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), "hf_file\n").unwrap();
        let home = dir.path().to_string_lossy().into_owned();
        let env = move |n: &str| (n == "HF_HOME").then(|| home.clone());
        assert_eq!(find_token(&env).as_deref(), Some("hf_file"));
    }
}
