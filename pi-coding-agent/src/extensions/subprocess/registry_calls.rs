//! `pi.registerProvider` / `pi.unregisterProvider` and `pi.registerMcpServer` /
//! `pi.unregisterMcpServer` from an out-of-process extension: the same registries and rules as
//! [`ExtensionApi`](crate::extensions::ExtensionApi)'s, allowed while loading (pi queues them
//! until the load commits).

use serde_json::Value;

use super::protocol::{ERROR_ACTION_FAILED, ERROR_INVALID_PARAMS, RpcError};
use crate::extensions::registrations::RegisteredMcpServer;
use crate::extensions::runtime::{Runtime, lock};

const METHODS: &[&str] =
    &["pi.registerProvider", "pi.unregisterProvider", "pi.registerMcpServer", "pi.unregisterMcpServer"];

/// Whether `method` is one of these.
pub(crate) fn handles(method: &str) -> bool {
    METHODS.contains(&method)
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError { code: ERROR_INVALID_PARAMS, message: message.into(), data: None }
}

fn text(params: &Value, name: &str) -> Result<String, RpcError> {
    params.get(name).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| invalid(format!("invalid \"{name}\"")))
}

/// Runs one registry call.
pub(crate) fn handle(runtime: &Runtime, method: &str, params: &Value) -> Result<Value, RpcError> {
    let path = params.get("extensionPath").and_then(Value::as_str).unwrap_or_default().to_owned();
    let name = text(params, "name")?;
    let config = params.get("config").cloned().unwrap_or(Value::Null);
    match method {
        "pi.registerProvider" => {
            if !config.is_object() {
                return Err(invalid("Provider config is required when registering by name"));
            }
            crate::extensions::provider_validation::register_provider(runtime, &name, config, &path)
                .map_err(|message| RpcError { code: ERROR_ACTION_FAILED, message, data: None })?;
        }
        "pi.unregisterProvider" => lock(&runtime.providers).retain(|p| p.name != name),
        "pi.registerMcpServer" => {
            if !config.is_object() {
                return Err(invalid(format!("server \"{name}\" must be an object")));
            }
            let mut servers = lock(&runtime.mcp_servers);
            if let Some(other) = servers.iter().find(|s| s.name == name && s.extension_path != path) {
                return Err(invalid(format!(
                    "MCP server \"{name}\" is already registered by {}",
                    other.extension_path
                )));
            }
            let server = RegisteredMcpServer { name: name.clone(), config, extension_path: path };
            match servers.iter_mut().find(|s| s.name == name) {
                Some(existing) => *existing = server,
                None => servers.push(server),
            }
            drop(servers);
            runtime.mcp_servers_changed();
        }
        _ => {
            lock(&runtime.mcp_servers).retain(|s| !(s.name == name && s.extension_path == path));
            runtime.mcp_servers_changed();
        }
    }
    Ok(Value::Null)
}
