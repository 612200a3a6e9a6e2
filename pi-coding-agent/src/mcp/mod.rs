//! MCP servers as tools: `mcp.json`, stdio and streamable-HTTP clients on `rmcp`, exposure rules.
//!
//! - [`config`]: the `mcpServers` shape, validation, user/project precedence, file edits.
//! - [`naming`]: `mcp__<server>__<tool>` names, namespaces, summaries.
//! - [`values`]: `${VAR}` / `!command` values and `~/` expansion.
//! - [`client`]: one connection on the official Rust SDK (`rmcp`).
//! - [`content`]: results as the model sees them (20 KB limit with a temp-file spill).
//! - [`section`]: the `mcp_servers` system-prompt section.
//! - [`tools`]: MCP tools as agent tools; [`manager`]: the servers of a session;
//!   [`extension`]: the built-in `mcp` extension, [`command`]: its `/mcp`; [`cli`]: `pi mcp add|remove|list`.
//! - OAuth for HTTP servers: [`oauth_store`] (`mcp-auth.json`), [`oauth_http`] (discovery,
//!   registration, token requests), [`oauth`] (the flow), [`oauth_signin`] (the browser step on a
//!   loopback callback), [`oauth_client`] (tokens on requests, refresh after a 401);
//!   [`oauth_cli`]: `pi mcp login|logout`.
//! - [`manager_ui`] and [`manager_view`]: the `/mcp` manager screen of the interactive mode.

pub mod cli;
pub mod client;
pub mod command;
pub mod config;
pub mod content;
pub mod extension;
pub mod manager;
pub mod manager_ui;
pub mod manager_view;
pub mod naming;
pub mod oauth;
pub mod oauth_cli;
pub mod oauth_client;
pub mod oauth_http;
pub mod oauth_signin;
pub mod oauth_store;
pub mod output_schemas;
pub mod section;
pub mod tools;
pub mod values;

pub use config::{Exposure, LoadedMcpConfig, McpServerEntry, Scope, load_mcp_config};
pub use extension::McpExtension;
pub use naming::{create_mcp_tool_name, mcp_namespace, mcp_server_summary};
pub use section::{MCP_SERVERS_SECTION, render_servers_section};

/// JSON text as `JSON.stringify(value, null, indent)` writes it.
pub(crate) mod json_text {
    use serde::Serialize;
    use serde_json::Value;

    /// `value` pretty-printed with `indent`.
    pub(crate) fn to_string_indented(value: &Value, indent: &str) -> String {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        if value.serialize(&mut ser).is_err() {
            return value.to_string();
        }
        String::from_utf8(out).unwrap_or_default()
    }
}
