"""One-off tuning sweeps and diagnoses whose decisions are taken (bench/experiments/README.md);
kept runnable as `python -m bench.experiments.<name>`, not catalogued."""
