"""The ``affidavit`` command: one typer app with a sub-app or commands per plane.

Command modules import their plane lazily, inside the command body, so ``affidavit pack verify``
never pays for importing the MCP SDK or the embedding model.
"""
