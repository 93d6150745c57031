"""The tool plane: a transparent JSON-RPC relay that verifies what MCP tools claim."""
