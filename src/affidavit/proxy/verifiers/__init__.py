"""Claim verifiers: plugins that re-derive what a tool or resource claims.

The contract is in :mod:`affidavit.proxy.verifiers.base`; built-in verifiers live beside it and
third-party ones register under the entry-point group ``affidavit.verifiers``.
"""
