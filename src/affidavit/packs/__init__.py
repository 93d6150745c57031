"""The evidence plane: signed memory packs in the verified-memory format."""
