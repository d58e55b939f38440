"""The model-facing protocol: prompt, parse, align and resolve quotes."""
