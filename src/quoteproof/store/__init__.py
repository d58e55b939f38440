"""Index storage: the Store protocol and its SQLite implementation."""
