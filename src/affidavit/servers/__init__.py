"""MCP servers over the planes: memory (vault tools), packs (verified_memory_*), dev (git/CI)."""
