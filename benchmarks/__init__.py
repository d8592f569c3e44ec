"""Performance benchmarks for colibri-router: ``uv run python -m benchmarks.run`` (see docs/performance.md)."""
