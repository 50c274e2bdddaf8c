"""mathindex: builds, benchmarks and gates releases of a mathematical search index."""

__version__ = "0.1.0"
