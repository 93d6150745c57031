"""servers."""
