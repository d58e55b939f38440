"""Answer strategies: how a question becomes a verified Answer."""
