"""crypto."""
