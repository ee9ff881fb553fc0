"""Shared test helpers: a raw JSON-RPC MCP client over a real ``pm-mcp`` subprocess."""
