//! Tool renderers (pi's tool `renderCall` / `renderResult` and `pi.registerToolRenderer`): how a
//! tool's row is drawn in the interactive transcript. A renderer is registered for one tool name,
//! or for every tool with [`ANY_TOOL`]; the first extension in load order whose renderer draws
//! something wins, else the built-in drawing is used.

use std::sync::Arc;

use pi_tui::{Component, Theme};
use serde_json::{Map, Value};

/// The tool name of a renderer that is asked for every tool (a JavaScript extension's
/// `registerToolRenderer(resolver)`, which decides by name).
pub const ANY_TOOL: &str = "*";

/// Options of a result renderer call (pi's `ToolRenderResultOptions`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolRenderOptions {
    /// Whether the user expanded the tool output.
    pub expanded: bool,
    /// Whether the result is partial (the tool still runs).
    pub is_partial: bool,
}

/// Draws a tool call line: `(tool name, arguments, theme)`; `None` keeps the built-in line.
pub type ToolCallRenderer = Arc<dyn Fn(&str, &Map<String, Value>, &Theme) -> Option<Box<dyn Component>> + Send + Sync>;

/// Draws a tool result: `(tool name, arguments, result {content, details, isError}, options,
/// theme)`; `None` keeps the built-in drawing.
pub type ToolResultRenderer = Arc<
    dyn Fn(&str, &Map<String, Value>, &Value, &ToolRenderOptions, &Theme) -> Option<Box<dyn Component>> + Send + Sync,
>;

/// The renderers of one tool (pi's `ToolRenderers`).
#[derive(Clone, Default)]
pub struct ToolRenderers {
    /// Draws the call.
    pub render_call: Option<ToolCallRenderer>,
    /// Draws the result.
    pub render_result: Option<ToolResultRenderer>,
}

impl std::fmt::Debug for ToolRenderers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRenderers")
            .field("render_call", &self.render_call.is_some())
            .field("render_result", &self.render_result.is_some())
            .finish()
    }
}
