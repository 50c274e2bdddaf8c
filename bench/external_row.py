"""The external baseline row of a release's notes, rendered after the fact: a release's per-query
results (`bench_results`: top k and gold per query) scored again per query style, beside the
published figures of the suite's external file, as the notes of a release built with that file
show them. Reads the release only (never writes into it).

    python -m bench.external_row RELEASE [--sources bench/sources/mathlib.yaml] [--suite NAME]

Prints, per suite of the sources file that names an external file and that the release ran,
whether the scores from `bench_results` equal the release's `bench/metrics.json`, then the
Markdown section (`evaluation.notes.external_section`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mathindex.evaluation.bench import summarise_results
from mathindex.evaluation.notes import external_section
from mathindex.evaluation.suites import load_suite
from mathindex.sources import PACKAGE_ROOT, load_suite_specs, read_external
from mathindex.store.layout import ReleaseLayout
from mathindex.store.tables import read_table

DEFAULT_SOURCES = PACKAGE_ROOT / "bench" / "sources" / "mathlib.yaml"


def render(release: Path, sources: Path, only: str | None = None) -> list[str]:
    """Markdown lines: for each suite of `sources` with an external file (or only `only`) that
    `release` ran, where its scores come from and the external section of its notes."""
    rows = read_table(release, "bench_results").to_pylist()
    recorded = json.loads(ReleaseLayout(release).metrics.read_text(encoding="utf-8"))["suites"]
    out = []
    for spec in load_suite_specs(sources):
        if not spec.external or (only is not None and spec.name != only) or spec.name not in recorded:
            continue
        suite = load_suite(Path(spec.path), spec.name)
        summary = summarise_results(rows, suite)
        same = all(summary.get(k) == recorded[spec.name].get(k) for k in ("queries", "metrics", "by_style", "fair"))
        out += [f"## Suite `{spec.name}` of release {release.name}: {summary['queries']} queries", "",
                f"Scored again from `bench_results` ({'equal to' if same else 'DIFFERENT FROM'} its `bench/metrics.json`); "
                f"external figures from `{Path(spec.external).name}`.", "",
                *external_section(summary, read_external(spec)[0].figures), ""]  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--sources", type=Path, default=DEFAULT_SOURCES, help="the sources file naming the suites (default: %(default)s)")
    ap.add_argument("--suite", default=None, help="only this suite")
    args = ap.parse_args(argv)
    lines = render(args.release, args.sources, args.suite)
    if not lines:
        print(f"no suite of {args.sources} with an external file was run by {args.release}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
