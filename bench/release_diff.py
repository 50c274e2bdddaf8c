"""Compares two release directories file by file (sha256 of the bytes): which files are the same,
which differ, which only one has. Files that record the run (the manifest, the notes, the DuckDB
file, whose bytes differ between identical builds) are listed apart.

    python -m bench.release_diff RELEASE_A RELEASE_B

Exit 0 when every data file is byte-identical, 1 otherwise."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

# files that hold the release id, wall-clock times or the code version, or are not deterministic
RECORDS_THE_RUN = ("manifest.json", "release-notes.md", "search.duckdb", "bench/metrics.json", "bench/timings.json")


def digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def compare(a: Path, b: Path) -> tuple[list[str], list[str], list[str], list[str]]:
    """(same, different, only in a, only in b), relative paths, sorted."""
    da, db = digests(a), digests(b)
    same = sorted(k for k in da.keys() & db.keys() if da[k] == db[k])
    diff = sorted(k for k in da.keys() & db.keys() if da[k] != db[k])
    return same, diff, sorted(da.keys() - db.keys()), sorted(db.keys() - da.keys())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    same, diff, only_a, only_b = compare(args.a, args.b)
    recorded = [d for d in diff if d in RECORDS_THE_RUN or d.endswith(RECORDS_THE_RUN)]
    data = [d for d in diff if d not in recorded]
    print(f"{len(same)} files byte-identical, {len(data)} data files differ, "
          f"{len(recorded)} files that record the run differ, {len(only_a)} only in A, {len(only_b)} only in B")
    for label, rows in (("differs", data), ("records the run", recorded), ("only in A", only_a), ("only in B", only_b)):
        for r in rows:
            print(f"  {label}: {r}")
    return 0 if not (data or only_a or only_b) else 1


if __name__ == "__main__":
    sys.exit(main())
