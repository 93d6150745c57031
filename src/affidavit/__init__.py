"""affidavit: a trust layer for AI agents that speak MCP.

Three planes over one small core: an encrypted memory vault (``affidavit.vault``),
signed evidence packs (``affidavit.packs``) and a verifying tool proxy (``affidavit.proxy``).
"""

__version__ = "0.1.0"
