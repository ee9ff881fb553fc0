"""The ``pm-mcp`` server: an adapter from the MCP SDK (stdio and Streamable HTTP) to the host.

Holds no business rules: requests become host calls, results become wire objects.
"""
