//! The built-in tools declare constrained sampling as pi 1.6.0's do: read, bash, edit and write ask
//! for strict JSON-schema sampling when possible (`{"type": "json_schema", "strict": "prefer"}`),
//! grep, find and ls declare nothing; the declaration reaches the model-facing tool list.

use pi_agent_core::AgentTool;
use pi_coding_agent::tools;
use serde_json::json;

#[test]
fn built_in_tools_declare_what_pi_declares() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_str().unwrap();
    let all: Vec<std::sync::Arc<dyn AgentTool>> = vec![
        tools::read_tool(cwd),
        tools::bash_tool(cwd),
        tools::edit_tool(cwd),
        tools::write_tool(cwd),
        tools::grep_tool(cwd),
        tools::find_tool(cwd),
        tools::ls_tool(cwd),
    ];
    for tool in all {
        let declaration = tool.declaration();
        let expected = match tool.name() {
            "read" | "bash" | "edit" | "write" => Some(json!({"type": "json_schema", "strict": "prefer"})),
            _ => None,
        };
        assert_eq!(declaration.constrained_sampling, expected, "{}", tool.name());
        let wire = serde_json::to_value(pi_ai::transcript::to_tool_declaration(&declaration)).unwrap();
        assert_eq!(wire.get("constrainedSampling").cloned(), expected, "{}", tool.name());
    }
}
