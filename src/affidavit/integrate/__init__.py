"""MCP client config writers: install the memory server, wrap servers behind the proxy."""
