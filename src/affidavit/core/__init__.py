"""Core: errors, paths, canonical JSON, hash chains, atomic files, the offline guard.

Nothing in ``core`` imports a plane; every plane may import ``core``.
"""
