//! The built-in `codemode` extension (pi's `extensions/codemode/`): a `codemode` tool whose input
//! is JavaScript run in an embedded QuickJS sandbox ([`sandbox`]) that calls pi's tools, MCP tools
//! included. The tool is registered inactive; `--tools codemode`, `defaultTools`, or the MCP
//! extension (for servers with `codemode` exposure) activates it.

pub mod declarations;
pub mod description;
pub mod discovery;
pub mod format;
pub mod loadout;
pub mod models;
pub mod renderer;
pub mod sandbox;
pub mod source;
pub mod tool;

use std::sync::Arc;

use async_trait::async_trait;
use pi_agent_core::AgentTool;

pub use description::{CODEMODE_STORE_ENTRY_TYPE, CODEMODE_TOOL_NAME};
pub use models::{LazyModelCatalog, ModelCatalog};
pub use tool::CodemodeTool;

use crate::builtin_extensions::tool_search::ToolCatalog;
use crate::extensions::{BoxError, Extension, ExtensionApi, ToolDefinition};

/// The built-in `codemode` extension.
pub struct CodemodeExtension {
    catalogs: Vec<Arc<dyn ToolCatalog>>,
    active: bool,
    inline_budget: Option<u64>,
    models: LazyModelCatalog,
    only: bool,
}

impl CodemodeExtension {
    /// The extension; scripts may call the active tools and the tools of `catalogs`. `active` when
    /// `--tools` or `defaultTools` name it. `inline_budget` is `codemode.inlineBudget`.
    pub fn new(catalogs: Vec<Arc<dyn ToolCatalog>>, active: bool, inline_budget: Option<u64>) -> Self {
        CodemodeExtension { catalogs, active, inline_budget, models: LazyModelCatalog::default(), only: false }
    }

    /// The model catalog scripts reach through `models.*`.
    pub fn with_models(mut self, models: ModelCatalog) -> Self {
        self.models = LazyModelCatalog::ready(models);
        self
    }

    /// `codemode.mode: "only"`: while codemode is declared, the other declared tools are listed in
    /// its description and their declarations left out of requests.
    pub fn with_mode_only(mut self, only: bool) -> Self {
        self.only = only;
        self
    }

    /// The model catalog scripts reach through `models.*`, built when a script first asks.
    pub fn with_lazy_models(mut self, models: LazyModelCatalog) -> Self {
        self.models = models;
        self
    }
}

#[async_trait]
impl Extension for CodemodeExtension {
    fn path(&self) -> &str {
        "builtin:codemode"
    }

    async fn setup(&self, api: &ExtensionApi) -> Result<(), BoxError> {
        // Built-in tools have `direct` exposure and MCP tools are deferred, so no tool is listed.
        let budget = self.inline_budget.unwrap_or(description::DEFAULT_CODEMODE_INLINE_BUDGET);
        let text = description::create_codemode_description(&[], true, Some(budget));
        let loadout = loadout::LoadoutOptions { only: self.only, inline_budget: budget };
        let tool: Arc<dyn AgentTool> = Arc::new(
            CodemodeTool::new(api.clone(), self.catalogs.clone(), text, self.models.clone()).with_loadout(loadout),
        );
        api.register_tool(ToolDefinition {
            tool,
            prompt_snippet: Some(description::CODEMODE_PROMPT_SNIPPET.into()),
            prompt_guidelines: Some(vec![description::CODEMODE_PROMPT_GUIDELINE.into()]),
        })?;
        if !self.active {
            // Registered inactive (pi's `defaultActive: false`).
            let api2 = api.clone();
            api.on_notify("session_start", move |_event, _ctx| {
                if let Ok(active) = api2.get_active_tools()
                    && active.iter().any(|n| n == CODEMODE_TOOL_NAME)
                {
                    let rest: Vec<String> = active.into_iter().filter(|n| n != CODEMODE_TOOL_NAME).collect();
                    let _ = api2.set_active_tools(&rest);
                }
                Box::pin(async { Ok(None) })
            });
        }
        Ok(())
    }
}
