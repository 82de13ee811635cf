"""Conformance of newch against PyTorch: THE op table and its runner."""
