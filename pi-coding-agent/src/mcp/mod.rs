//! MCP servers as tools: `mcp.json`, stdio and streamable-HTTP clients on `rmcp`, exposure rules.
