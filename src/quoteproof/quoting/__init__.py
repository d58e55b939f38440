"""quoting."""
