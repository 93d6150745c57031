"""Tests of the MCP servers."""
