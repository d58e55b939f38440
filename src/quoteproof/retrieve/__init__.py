"""retrieve."""
