"""MCP servers over the planes: memory (vault tools), packs (verified_memory_*), dev (git/CI).

What the three share: :mod:`.toolkit` (a tool's spec, the argument validator, the one error
line, the policy for bugs) and :mod:`.stdio` (the transport, answering even a line it cannot
read: :mod:`.malformed`). Each server imports the planes only through their ``__init__``.
"""
