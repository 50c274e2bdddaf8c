"""Benchmarks of mathindex: the maintained ones (catalogued in bench/benchmarks.yaml, run as
`python -m bench.<name>` from the repository root), their shared code (`bench.common`) and the
one-off experiments whose decisions are taken (`bench.experiments`)."""
