"""The dev MCP server: git, CI, files and SQLite in one repository, over the full MCP surface.

It is a real server any MCP host can use directly, and the backend the verifying proxy is
proven against. Modules: :mod:`.confine` (paths and refs), :mod:`.worktree`, :mod:`.files`,
:mod:`.ci`, :mod:`.sqlite_tools`, :mod:`.docker_tools`, :mod:`.tools` (schemas),
:mod:`.drafting` (sampling), :mod:`.interact` (roots, era-aware client requests),
:mod:`.resources`, :mod:`.prompts` and :mod:`.server` (wiring). Import :mod:`.server` only to
serve: it pulls in the MCP SDK.
"""
