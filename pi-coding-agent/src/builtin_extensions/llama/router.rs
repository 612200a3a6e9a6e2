//! One model of the router's catalog (`GET /models` `data[]`) and the progress records of its
//! event stream, read as pi's `client.js` reads them.

use serde_json::Value;

use super::client::{Progress, format_bytes};

/// A model the router lists: `{id, status: {value, args?, failed?, exit_code?, progress?},
/// source?, meta?: {n_ctx?, n_ctx_train?}, architecture?: {input_modalities?, output_modalities?}}`.
#[derive(Clone, Debug, PartialEq)]
pub struct RouterModel {
    /// The model id.
    pub id: String,
    /// `status.value`: `loaded`, `sleeping`, `unloaded`, `loading`, `downloading`, …
    pub status: String,
    raw: Value,
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn positive(value: Option<&Value>) -> Option<u64> {
    value.and_then(Value::as_f64).filter(|v| *v > 0.0 && v.fract() == 0.0).map(|v| v as u64)
}

impl RouterModel {
    /// pi's `isModelInfo`: a string `id` and a string `status.value`.
    pub fn parse(value: &Value) -> Option<Self> {
        let id = value.get("id")?.as_str()?.to_owned();
        let status = value.get("status")?.get("value")?.as_str()?.to_owned();
        Some(RouterModel { id, status, raw: value.clone() })
    }

    /// A model known only by id and status.
    pub fn new(id: &str, status: &str) -> Self {
        let raw = serde_json::json!({"id": id, "status": {"value": status}});
        RouterModel { id: id.to_owned(), status: status.to_owned(), raw }
    }

    /// The record as the router sent it.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// The `status` object.
    pub fn raw_status(&self) -> &Value {
        self.raw.get("status").unwrap_or(&Value::Null)
    }

    /// `status.failed`.
    pub fn failed(&self) -> bool {
        self.raw_status().get("failed").and_then(Value::as_bool) == Some(true)
    }

    /// `status.exit_code`.
    pub fn exit_code(&self) -> Option<i64> {
        self.raw_status().get("exit_code").and_then(Value::as_i64)
    }

    /// `status.args`: the command line of the model's server.
    pub fn args(&self) -> Vec<String> {
        strings(self.raw_status().get("args"))
    }

    /// `source` (`preset`, `cache`, `models-dir`, …).
    pub fn source(&self) -> Option<&str> {
        self.raw.get("source").and_then(Value::as_str)
    }

    /// `meta.n_ctx` (the running context) when positive.
    pub fn n_ctx(&self) -> Option<u64> {
        positive(self.raw.get("meta").and_then(|m| m.get("n_ctx")))
    }

    /// `meta.n_ctx_train` when positive.
    pub fn n_ctx_train(&self) -> Option<u64> {
        positive(self.raw.get("meta").and_then(|m| m.get("n_ctx_train")))
    }

    /// `architecture.input_modalities`.
    pub fn input_modalities(&self) -> Vec<String> {
        strings(self.raw.get("architecture").and_then(|a| a.get("input_modalities")))
    }

    /// `architecture.output_modalities`.
    pub fn output_modalities(&self) -> Vec<String> {
        strings(self.raw.get("architecture").and_then(|a| a.get("output_modalities")))
    }

    /// Loaded or sleeping (pi's `modelIsLoaded`).
    pub fn is_loaded(&self) -> bool {
        self.status == "loaded" || self.status == "sleeping"
    }

    /// The `--ctx-size` / `-c` / `-ctx` value of its server's arguments, when positive.
    pub fn configured_context(&self) -> Option<u64> {
        let args = self.args();
        args.windows(2)
            .find(|w| matches!(w[0].as_str(), "--ctx-size" | "-c" | "-ctx") && w[1].parse::<u64>().is_ok_and(|v| v > 0))
            .and_then(|w| w[1].parse().ok())
    }
}

/// pi's `parseLoadProgress`: `{progress: {current|stage, stages?, value?}}` of a status event.
pub fn parse_load_progress(data: &Value) -> Option<Progress> {
    let progress = data.get("progress")?;
    if !progress.is_object() {
        return None;
    }
    let stage =
        progress.get("current").and_then(Value::as_str).or_else(|| progress.get("stage").and_then(Value::as_str));
    let stages = strings(progress.get("stages"));
    let stage_ratio = progress.get("value").and_then(Value::as_f64).map(|v| v.clamp(0.0, 1.0));
    let mut ratio = stage_ratio;
    if let Some(stage) = stage
        && let Some(index) = stages.iter().position(|s| s == stage)
    {
        ratio = Some((index as f64 + stage_ratio.unwrap_or(0.0)) / stages.len() as f64);
    }
    Some(Progress {
        message: stage.map_or_else(|| "Loading model".to_owned(), |s| format!("Loading {}", s.replace('_', " "))),
        ratio,
        detail: None,
    })
}

/// pi's `parseDownloadProgress`: the sums of `{done, total}` per file (under `progress` or at
/// the top level).
pub fn parse_download_progress(data: &Value) -> Option<Progress> {
    let files = data.get("progress").filter(|p| p.is_object()).unwrap_or(data).as_object()?;
    let (mut done, mut total) = (0.0, 0.0);
    for entry in files.values() {
        if let (Some(d), Some(t)) =
            (entry.get("done").and_then(Value::as_f64), entry.get("total").and_then(Value::as_f64))
        {
            done += d;
            total += t;
        }
    }
    if total <= 0.0 {
        return None;
    }
    Some(Progress {
        message: "Downloading model".into(),
        ratio: Some(done / total),
        detail: Some(format!("{} / {}", format_bytes(done as u64), format_bytes(total as u64))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn load_progress_spans_the_stages() {
        let p = parse_load_progress(
            &json!({"progress": {"current": "load_tensors", "stages": ["init", "load_tensors"], "value": 0.5}}),
        )
        .unwrap();
        assert_eq!((p.message.as_str(), p.ratio), ("Loading load tensors", Some(0.75)));
        assert_eq!(parse_load_progress(&json!({"status": "loaded"})), None);
    }

    #[test]
    fn download_progress_sums_the_files() {
        let p = parse_download_progress(
            &json!({"progress": {"a.gguf": {"done": 1024, "total": 2048}, "b": {"done": 0, "total": 2048}}}),
        )
        .unwrap();
        assert_eq!((p.ratio, p.detail.as_deref()), (Some(0.25), Some("1.00 KiB / 4.00 KiB")));
    }

    #[test]
    fn models_need_an_id_and_a_status() {
        assert!(RouterModel::parse(&json!({"id": "x"})).is_none());
        let m = RouterModel::parse(&json!({"id": "x", "status": {"value": "loaded", "args": ["-c", "8192"]}})).unwrap();
        assert_eq!(m.configured_context(), Some(8192));
    }
}
