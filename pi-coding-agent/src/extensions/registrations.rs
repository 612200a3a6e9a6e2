//! What extensions register with the session beside handlers: MCP servers and model providers
//! (plain data, read by the MCP extension and the model registry).

use serde_json::Value;

/// An MCP server an extension registered (pi's `pi.registerMcpServer(name, config)`): the same
/// shape as an `mcpServers` entry. The MCP extension validates it and connects it beside the
/// servers of `mcp.json`, which take precedence.
#[derive(Clone, Debug, PartialEq)]
pub struct RegisteredMcpServer {
    /// The server name.
    pub name: String,
    /// The entry.
    pub config: Value,
    /// The extension that registered it.
    pub extension_path: String,
}

/// A model provider an extension registered (pi's `pi.registerProvider(name, config)`): the
/// `config` has the shape of a `models.json` provider entry (`baseUrl`, `apiKey`, `api`,
/// `headers`, `models`, …). Registering a name again replaces it; the last registration wins.
#[derive(Clone, Debug, PartialEq)]
pub struct RegisteredProvider {
    /// The provider name.
    pub name: String,
    /// The configuration.
    pub config: Value,
    /// The extension that registered it.
    pub extension_path: String,
}

impl RegisteredProvider {
    /// The provider's models as `pi_ai::Model` JSON: each entry of `config.models` with the
    /// provider's `provider`, `baseUrl` and `api` filled in where the entry has none.
    pub fn model_values(&self) -> Vec<Value> {
        let models = self.config.get("models").and_then(Value::as_array).cloned().unwrap_or_default();
        models
            .into_iter()
            .filter_map(|m| {
                let mut m = m.as_object()?.clone();
                m.insert("provider".into(), Value::String(self.name.clone()));
                for key in ["baseUrl", "api"] {
                    if !m.contains_key(key)
                        && let Some(v) = self.config.get(key)
                    {
                        m.insert(key.into(), v.clone());
                    }
                }
                if !m.contains_key("name")
                    && let Some(id) = m.get("id").cloned()
                {
                    m.insert("name".into(), id);
                }
                Some(Value::Object(m))
            })
            .collect()
    }
}

/// A virtual model an extension registered, as the runtime keeps it (plain data here: the
/// `RegisteredVirtualModel` with its router is opaque to this module).
#[derive(Clone)]
pub(crate) struct VirtualModelSlot {
    /// The provider it is listed under.
    pub(crate) provider: String,
    /// Its id.
    pub(crate) id: String,
    /// The extension that registered it.
    pub(crate) extension_path: String,
    /// The `RegisteredVirtualModel`.
    pub(crate) entry: std::sync::Arc<dyn std::any::Any + Send + Sync>,
}
