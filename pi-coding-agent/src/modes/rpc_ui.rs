//! `ctx.ui` in RPC mode (pi's `createExtensionUIContext` of `rpc-mode`, `docs/rpc-extension-ui.md`):
//! dialogs (`select`, `confirm`, `input`, `editor`) are `extension_ui_request` records on stdout
//! answered by the client's `extension_ui_response` lines on stdin; `notify`, `setStatus`,
//! `setWidget` (lines only), `setTitle` and `set_editor_text` are fire-and-forget requests; the rest
//! answers as pi's RPC mode does (no-ops, `""`, `false`, "Theme switching not supported in RPC
//! mode").

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use crate::ui::{DialogOptions, NotifyKind, UiHost, WidgetContent, WidgetPlacement};

/// Where records go (stdout in the `pi` binary).
pub type RecordSink = Arc<dyn Fn(&Value) + Send + Sync>;

/// The RPC mode's [`UiHost`].
pub struct RpcUi {
    sink: RecordSink,
    pending: Mutex<HashMap<String, oneshot::Sender<Value>>>,
}

impl std::fmt::Debug for RpcUi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcUi").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl RpcUi {
    /// A host writing its records to `sink`.
    pub fn new(sink: RecordSink) -> Arc<RpcUi> {
        Arc::new(RpcUi { sink, pending: Mutex::new(HashMap::new()) })
    }

    /// Handles a stdin line if it is an `extension_ui_response` (then `true`: not a command). A
    /// response to no pending dialog is ignored, as pi does.
    pub fn handle_line(&self, line: &str) -> bool {
        let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(line.trim_end_matches('\r')) else {
            return false;
        };
        if obj.get("type").and_then(Value::as_str) != Some("extension_ui_response") {
            return false;
        }
        let id = obj.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        if let Some(tx) = lock(&self.pending).remove(&id) {
            let _ = tx.send(Value::Object(obj));
        }
        true
    }

    fn request(method: &str, fields: Value) -> (String, Value) {
        let id = uuid::Uuid::new_v4().to_string();
        let mut record = Map::new();
        record.insert("type".into(), json!("extension_ui_request"));
        record.insert("id".into(), json!(id));
        record.insert("method".into(), json!(method));
        if let Value::Object(fields) = fields {
            for (k, v) in fields {
                if !v.is_null() {
                    record.insert(k, v);
                }
            }
        }
        (id, Value::Object(record))
    }

    fn fire(&self, method: &str, fields: Value) {
        let (_, record) = Self::request(method, fields);
        (self.sink)(&record);
    }

    /// Sends a dialog and waits for its response; `None` on timeout or cancellation (pi's default).
    async fn dialog(&self, method: &str, fields: Value, opts: &DialogOptions) -> Option<Value> {
        if opts.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            return None;
        }
        let (id, record) = Self::request(method, fields);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        (self.sink)(&record);
        let cancelled = async {
            match &opts.cancel {
                Some(c) => c.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let timeout = async {
            match opts.timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let answer = tokio::select! {
            r = rx => r.ok(),
            () = cancelled => None,
            () = timeout => None,
        };
        lock(&self.pending).remove(&id);
        answer.filter(|r| !r.get("cancelled").and_then(Value::as_bool).unwrap_or(false))
    }
}

fn value_of(response: Option<Value>) -> Option<String> {
    response.and_then(|r| r.get("value").and_then(Value::as_str).map(str::to_owned))
}

fn timeout_ms(opts: &DialogOptions) -> Value {
    opts.timeout.map(|t| json!(t.as_millis() as u64)).unwrap_or(Value::Null)
}

#[async_trait]
impl UiHost for RpcUi {
    fn has_ui(&self) -> bool {
        true
    }

    async fn select(&self, title: &str, options: &[String], opts: DialogOptions) -> Option<String> {
        let fields = json!({"title": title, "options": options, "timeout": timeout_ms(&opts)});
        value_of(self.dialog("select", fields, &opts).await)
    }

    async fn confirm(&self, title: &str, message: &str, opts: DialogOptions) -> bool {
        let fields = json!({"title": title, "message": message, "timeout": timeout_ms(&opts)});
        let answer = self.dialog("confirm", fields, &opts).await;
        answer.and_then(|r| r.get("confirmed").and_then(Value::as_bool)).unwrap_or(false)
    }

    async fn input(&self, title: &str, placeholder: Option<&str>, opts: DialogOptions) -> Option<String> {
        let fields = json!({"title": title, "placeholder": placeholder, "timeout": timeout_ms(&opts)});
        value_of(self.dialog("input", fields, &opts).await)
    }

    async fn editor(&self, title: &str, prefill: Option<&str>) -> Option<String> {
        let fields = json!({"title": title, "prefill": prefill});
        value_of(self.dialog("editor", fields, &DialogOptions::default()).await)
    }

    fn notify(&self, message: &str, kind: NotifyKind) {
        self.fire("notify", json!({"message": message, "notifyType": kind.as_str()}));
    }

    fn set_status(&self, key: &str, text: Option<&str>) {
        self.fire("setStatus", json!({"statusKey": key, "statusText": text}));
    }

    fn set_widget(&self, key: &str, content: Option<WidgetContent>, placement: WidgetPlacement) {
        let lines = match content {
            None => Value::Null,
            Some(WidgetContent::Lines(lines)) => json!(lines),
            // Component factories need a terminal (pi ignores them in RPC mode).
            Some(WidgetContent::Component(_)) => return,
        };
        self.fire("setWidget", json!({"widgetKey": key, "widgetLines": lines, "widgetPlacement": placement.as_str()}));
    }

    fn set_title(&self, title: &str) {
        self.fire("setTitle", json!({"title": title}));
    }

    fn paste_to_editor(&self, text: &str) {
        self.set_editor_text(text);
    }

    fn set_editor_text(&self, text: &str) {
        self.fire("set_editor_text", json!({"text": text}));
    }

    fn set_theme(&self, _name: &str) -> Result<(), String> {
        Err("Theme switching not supported in RPC mode".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> (Arc<RpcUi>, Arc<Mutex<Vec<Value>>>) {
        let records = Arc::new(Mutex::new(Vec::new()));
        let sink = records.clone();
        (RpcUi::new(Arc::new(move |v: &Value| lock(&sink).push(v.clone()))), records)
    }

    #[tokio::test]
    async fn a_dialog_is_a_request_answered_by_its_response() {
        let (ui, records) = host();
        let asking = {
            let ui = ui.clone();
            tokio::spawn(async move {
                ui.select("Allow?", &["Allow".into(), "Block".into()], DialogOptions::default()).await
            })
        };
        let request = loop {
            if let Some(r) = lock(&records).first().cloned() {
                break r;
            }
            tokio::task::yield_now().await;
        };
        assert_eq!(request["type"], "extension_ui_request");
        assert_eq!(request["method"], "select");
        assert_eq!(request["options"], json!(["Allow", "Block"]));
        assert!(request.get("timeout").is_none());
        let keys: Vec<&String> = request.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "id", "method", "title", "options"]);
        let id = request["id"].as_str().unwrap();
        assert!(!ui.handle_line(r#"{"type":"get_state"}"#));
        assert!(ui.handle_line(&json!({"type": "extension_ui_response", "id": id, "value": "Block"}).to_string()));
        assert_eq!(asking.await.unwrap().as_deref(), Some("Block"));
    }

    #[tokio::test]
    async fn cancelled_and_timed_out_dialogs_answer_pis_defaults() {
        let (ui, records) = host();
        let asking = {
            let ui = ui.clone();
            tokio::spawn(async move { ui.confirm("Clear?", "All lost.", DialogOptions::default()).await })
        };
        let id = loop {
            if let Some(r) = lock(&records).first().cloned() {
                break r["id"].as_str().unwrap().to_owned();
            }
            tokio::task::yield_now().await;
        };
        ui.handle_line(&json!({"type": "extension_ui_response", "id": id, "cancelled": true}).to_string());
        assert!(!asking.await.unwrap());
        let opts = DialogOptions { cancel: None, timeout: Some(std::time::Duration::from_millis(1)) };
        assert_eq!(ui.input("Name", None, opts).await, None);
        assert_eq!(lock(&records)[1]["timeout"], 1);
        ui.set_status("k", None);
        assert_eq!(
            lock(&records)[2].as_object().unwrap().keys().collect::<Vec<_>>(),
            ["type", "id", "method", "statusKey"]
        );
        assert_eq!(ui.set_theme("dark"), Err("Theme switching not supported in RPC mode".to_owned()));
    }
}
