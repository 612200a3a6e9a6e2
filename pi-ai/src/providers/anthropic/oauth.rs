//! Claude subscription OAuth tokens (`sk-ant-oat…`, from `/login` or `ANTHROPIC_OAUTH_TOKEN`): pi
//! sends them as `Authorization: Bearer` with Claude Code's identity — its user agent and
//! `x-app` header, the `claude-code` and `oauth` betas, its system line first, and tool names in
//! Claude Code's casing (mapped back to the caller's names in the reply).

/// The Claude Code version pi presents.
pub const CLAUDE_CODE_VERSION: &str = "2.1.322";

/// The first system block of a subscription request.
pub const CLAUDE_CODE_IDENTITY: &str = "You are Claude Code, Anthropic's official CLI for Claude.";

/// The betas a subscription token needs, first in the list.
pub const OAUTH_BETAS: [&str; 2] = ["claude-code-20250219", "oauth-2025-04-20"];

/// Claude Code 2.x tool names (canonical casing).
const CLAUDE_CODE_TOOLS: [&str; 17] = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// Whether `key` is a subscription OAuth token.
pub fn is_oauth_token(key: &str) -> bool {
    key.contains("sk-ant-oat")
}

/// A tool name in Claude Code's casing when it is one of Claude Code's tools (case-insensitive).
///
/// ```
/// use pi_ai::providers::anthropic::oauth::to_claude_code_name;
/// assert_eq!(to_claude_code_name("read"), "Read");
/// assert_eq!(to_claude_code_name("todowrite"), "TodoWrite");
/// assert_eq!(to_claude_code_name("get_weather"), "get_weather");
/// ```
pub fn to_claude_code_name(name: &str) -> &str {
    CLAUDE_CODE_TOOLS.iter().find(|t| t.eq_ignore_ascii_case(name)).copied().unwrap_or(name)
}

/// A tool name from the reply mapped back to the caller's tool of the same name, ignoring case.
pub fn from_claude_code_name(name: &str, tools: &[String]) -> String {
    tools.iter().find(|t| t.eq_ignore_ascii_case(name)).cloned().unwrap_or_else(|| name.to_owned())
}
