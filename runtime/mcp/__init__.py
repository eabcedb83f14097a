"""`POST /mcp`: the Model Context Protocol server, its HTTP transport and the JSON-RPC helpers."""
