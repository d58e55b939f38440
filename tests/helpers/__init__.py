"""Builders shared by several test modules (importable thanks to pytest's pythonpath)."""
