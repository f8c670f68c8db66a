"""Internals shared by every solver: problems, results, the registry and validation."""
