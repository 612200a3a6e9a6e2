//! The built-in extensions besides MCP: codemode, tool_search and llama.
