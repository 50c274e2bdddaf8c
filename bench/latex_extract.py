"""Benchmark: LaTeX extraction over the Stacks Project against a bare regex scan of the same files.

Usage: .venv/bin/python -m bench.latex_extract [STACKS_DIR] [--repeat 3] [--workers N]
Prints files, statements by environment against raw `\\begin{...}` counts (coverage), tagged share,
formulas, errors, wall time (median of the repeats) and its ratio to the regex scan run beside it.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections import Counter
from pathlib import Path

from mathindex.latex import extract_latex_tree
from mathindex.latex.tree import read_tags

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "stacks-project"
THEOREM_LIKE = ["lemma", "definition", "remark", "example", "exercise", "proposition", "theorem", "situation", "remarks"]
BEGIN = re.compile(r"\\begin\{([A-Za-z*]+)\}")


def regex_scan(root: Path) -> Counter:
    """The baseline: raw `\\begin{...}` counts over every .tex file (comments included)."""
    counts: Counter = Counter()
    for path in sorted(root.rglob("*.tex")):
        counts.update(BEGIN.findall(path.read_text(encoding="utf-8", errors="replace")))
    return counts


def timed(fn, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, statistics.median(times), times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    if not args.root.is_dir():
        print(f"no corpus at {args.root}")
        return 2
    raw, t_regex, _ = timed(lambda: regex_scan(args.root), args.repeat)
    result, t_extract, runs = timed(lambda: extract_latex_tree(args.root, "stacks", workers=args.workers), args.repeat)
    st = result.statements.to_pylist()
    envs = Counter(r["env"] for r in st)
    files = len(list(args.root.rglob("*.tex"))) + len(list(args.root.rglob("*.xml")))
    print(f"corpus {args.root}  files {files}")
    print(f"{'env':<14}{'raw':>8}{'extracted':>11}{'coverage':>10}")
    tot_raw = tot_got = 0
    for env in THEOREM_LIKE:
        tot_raw += raw[env]
        tot_got += envs[env]
        cov = 100.0 * envs[env] / raw[env] if raw[env] else float("nan")
        print(f"{env:<14}{raw[env]:>8}{envs[env]:>11}{cov:>9.2f}%")
    print(f"{'all':<14}{tot_raw:>8}{tot_got:>11}{100.0 * tot_got / tot_raw:>9.2f}%")
    slogans = sum(1 for r in st if r["slogan"])
    proofs = sum(1 for r in st if r["proof"])
    print(f"{'slogan':<14}{raw['slogan']:>8}{slogans:>11}{100.0 * slogans / max(raw['slogan'], 1):>9.2f}%  (attached to statements)")
    print(f"{'proof':<14}{raw['proof']:>8}{proofs:>11}{100.0 * proofs / max(raw['proof'], 1):>9.2f}%  (statements with a proof)")
    tags_path = args.root / "tags" / "tags"
    tags = read_tags(tags_path) if tags_path.is_file() else {}
    labelled = [r for r in st if r["full_label"]]
    in_tags = [r for r in labelled if r["full_label"] in tags]
    tagged = [r for r in in_tags if r["tag"] == tags[r["full_label"]]]
    print(f"labelled statements {len(labelled)}; label in tags/tags {len(in_tags)}; carrying that tag {len(tagged)} "
          f"({100.0 * len(tagged) / max(len(in_tags), 1):.2f}%)")
    kinds = Counter(r["kind"] for r in st)
    print("kinds: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))))
    displays = Counter(result.formulas.column("display").to_pylist())
    owned = result.formulas.num_rows - result.formulas.column("statement_id").null_count
    print(f"formulas {result.formulas.num_rows} ({owned} inside statements or proofs): "
          + ", ".join(f"{k} {n}" for k, n in displays.most_common()))
    print(f"errors {result.errors.num_rows}")
    for row in result.errors.to_pylist()[:10]:
        print(f"  {row['file']}:{row['line']}: {row['reason']}")
    print(f"wall time extract {t_extract:.2f} s (median of {args.repeat}: {', '.join(f'{t:.2f}' for t in runs)}); "
          f"regex scan {t_regex:.2f} s; ratio {t_extract / t_regex:.1f}x; target <= 20 s: "
          f"{'met' if t_extract <= 20 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
