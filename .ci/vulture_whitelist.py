"""Names vulture cannot see being used (``vulture`` reads src/affidavit with this file; .ci/run).

Every entry says who uses it. Dead code does not belong here: remove it instead.
"""

# ruff: noqa: B018, F821  (a whitelist is names mentioned, on purpose, and nothing else)

# Entry points (pyproject.toml [project.entry-points."affidavit.verifiers"]).
FilesystemVerifier
GitVerifier
GitHubVerifier
ResourceVerifier
SQLiteVerifier
DockerVerifier

# Attributes set on third-party objects, which read them.
_.preserve_quotes  # ruamel.yaml's YAML (integrate/formats.py)
_.intra_op_num_threads  # onnxruntime's SessionOptions (recall/embedder.py)
_.inter_op_num_threads
_.log_severity_level
_.enable_cpu_mem_arena
_.should_exit  # uvicorn's Server, which stops when it is set (console/server.py)

# Methods a framework calls on our subclasses.
_.format_commands  # click.Group: writes the Commands section of --help (cli/lazy.py)
_.convert  # click.ParamType: turns an argument into its value (cli/params.py)
_.handleError  # logging.Handler: called when a record cannot be written (cli/logs.py)

# Keys of JSON values (TypedDicts): read by whoever receives the JSON (--json, MCP clients).
superseded_by  # recall/views.py, recall/wire.py
notice
truncated
conflicts
forgotten
shredded
removed
relation_id  # recall/wire.py, and servers/memory/shapes.py (memory_unlink's argument)
include_seeded  # servers/memory/shapes.py: Compartment's flag, accepted, ignored (ADR 199)
duplicate  # recall/wire.py: Compartment's names on a store result (ADR 227)
reaffirmed
in_recall
passed
search_p50_ms
indexed
vector_index
size_bytes  # vault/status.py
auto_lock_minutes

# Used by tests and benchmarks, not by the product itself.
is_armed  # core/sandbox.py: tests/packs/test_sandbox.py checks the sandbox is armed
_.as_args  # packs/trust.py: tests/packs/test_trust_flags.py round-trips the trust flags
is_expired  # recall/lifecycle.py: the expiry rule, tested on its own (tests/recall/test_claims.py)
_.wait_ready  # recall/ranking/channels.py: benchmarks/recall_measures.py, tests of the HNSW build
_.message_count  # exports/model.py: tests/exports/test_readers.py counts what a reader read

# Wire fields only Compartment's callers read (recall/stamp.py, recall/wire.py; ADR 0228).
_.created_local
