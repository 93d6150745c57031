"""The ``affidavit`` command: one click tree (:mod:`affidavit.cli.app`), a group per plane.

Commands are imported when they run (:mod:`affidavit.cli.lazy`) and import their plane inside
the command body, so ``affidavit pack verify`` never pays for the MCP SDK or the embedding
model. :mod:`affidavit.cli.main` is the entry point and the one place errors become exit codes.
"""
