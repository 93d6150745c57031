"""Tests of the dev MCP server (git, CI, files, SQLite)."""
