"""Language-model backends behind one small protocol."""
