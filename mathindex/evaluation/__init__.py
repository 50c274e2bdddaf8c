"""Benchmark suites, retrieval metrics and the release gate (pure functions, no Prefect)."""
