"""Reading files into canonical text, blocks and chunks."""
