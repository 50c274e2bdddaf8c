"""Calibrates the `match` verdict (mathindex/search/confidence.py): every query of a release's suites
and a set of generated nonsense through the engine, then the confusion table of match value against
where the gold landed (rank 1, ranks 2-10, not in the first 10) and the nonsense, per suite.

    python -m bench.match_calibration RELEASE [--suite SUITE.json ...] [--nonsense 200] [--seed 0]
        [--rows-out ROWS.json]
    python -m bench.match_calibration --rows ROWS.json   # the tables again from saved evidence

Without --suite, the suites the release's manifest names. --rows re-judges saved evidence with the
thresholds as they are now, so they can be tuned without running the engine again.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import string
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from mathindex.evaluation.suites import load_suite
from mathindex.search.confidence import MATCH_VALUES, Evidence, match_of
from mathindex.search.engine import SearchEngine
from mathindex.store.integrity import read_manifest

OUTCOMES = ("rank 1", "rank 2-10", "not found", "nonsense")
_VOWELS, _CONSONANTS = "aeiou", "bcdfghjklmnprstvwxz"
# Hostile and off-topic strings (markup, injection, control characters, symbols, identifiers the
# release cannot have), cycled with generated tags and names.
HOSTILE = ("<script>alert(1)</script>", "'; DROP TABLE nodes; --", "../../../../etc/passwd", "%s%s%s%n",
           "\u0000\u0001\u0002", "🙂🙃🙂 🙃", "{{7*7}} ${jndi:ldap://x}", "\\text{<img src=x onerror=alert(1)>}",
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "?????", "ﷺ ﷻ ꧁꧂", "\u202etxt.exe", "null undefined NaN",
           "SELECT * FROM declarations", "javascript:alert(document.cookie)")


def nonsense(n: int, seed: int) -> list[tuple[str, str]]:
    """`n` distinct (kind, text) pairs: each hostile string once, then in turn random letter strings,
    pronounceable pseudo-words, Stacks-tag-like codes and dotted Lean-like names of pseudo-words."""
    rng = random.Random(seed)

    def letters() -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))

    def pseudo() -> str:
        return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) + rng.choice(["", "", "r", "sh", "n"])
                       for _ in range(rng.randint(1, 3)))

    makers = (("letters", lambda: " ".join(letters() for _ in range(rng.randint(1, 4)))),
              ("pseudo-words", lambda: " ".join(pseudo() for _ in range(rng.randint(1, 5)))),
              ("tag", lambda: "0" + "".join(rng.choice(string.digits + "XYZQ") for _ in range(3))),
              ("dotted-name", lambda: ".".join([pseudo().capitalize(), pseudo() + "_" + pseudo()])))
    out = {text: "hostile" for text in HOSTILE[:n]}
    for i in range(100 * n):
        if len(out) >= n:
            break
        kind, make = makers[i % len(makers)]
        out.setdefault(make(), kind)
    return [(kind, text) for text, kind in out.items()]


def run(release: Path, suites: list[Path], n_nonsense: int, seed: int) -> list[dict]:
    """One row per query: suite, style, text, outcome, the engine's evidence and notice."""
    engine = SearchEngine(release, queries_only=True)
    rows = []
    items = [(s.name, q.style, q.text, q.gold) for path in suites for s in [load_suite(path)] for q in s.queries]
    items += [("nonsense", kind, text, None) for kind, text in nonsense(n_nonsense, seed)]
    started = time.perf_counter()
    for suite, style, text, gold in items:
        result = engine.search(text, 10)
        if result.evidence is None:  # refused (a blank or non-UTF-8 generated string): no verdict to judge
            continue
        names = [h.name for h in result.hits]
        rank = next((i for i, n in enumerate(names, 1) if n in gold), None) if gold else None
        outcome = "nonsense" if gold is None else "rank 1" if rank == 1 else "rank 2-10" if rank else "not found"
        rows.append({"suite": suite, "style": style, "query": text, "outcome": outcome,
                     "notice": result.notice, "evidence": asdict(result.evidence)})
    print(f"{len(rows)} queries in {time.perf_counter() - started:.0f} s on {cpu_model()}")
    return rows


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else the machine type."""
    try:
        lines = Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), platform.machine())


def table(rows: list[dict]) -> str:
    """The confusion table (match value x outcome) of `rows`, as Markdown, with each column's count."""
    cells = Counter((match_of(Evidence(**r["evidence"]), r["notice"]), r["outcome"]) for r in rows)
    totals = Counter(r["outcome"] for r in rows)
    columns = [o for o in OUTCOMES if totals[o]]
    lines = ["| match | " + " | ".join(f"{o} ({totals[o]})" for o in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    for value in MATCH_VALUES:
        lines.append(f"| {value} | " + " | ".join(f"{cells[value, o]} ({100 * cells[value, o] / totals[o]:.0f} %)"
                                                    for o in columns) + " |")
    return "\n".join(lines)


def report(rows: list[dict]) -> None:
    """A table per suite (its queries with the nonsense beside them), per nonsense kind, and the
    headline shares: rank-1 answers judged strong, nonsense judged none."""
    nonsense_rows = [r for r in rows if r["outcome"] == "nonsense"]
    for suite in sorted({r["suite"] for r in rows} - {"nonsense"}):
        print(f"\n{suite} (with the nonsense)\n" + table([r for r in rows if r["suite"] == suite] + nonsense_rows))
    print("\nnonsense by kind: " + ", ".join(
        f"{kind} {sum(match_of(Evidence(**r['evidence']), r['notice']) == 'none' for r in nonsense_rows if r['style'] == kind)}"
        f"/{sum(r['style'] == kind for r in nonsense_rows)} none" for kind in sorted({r["style"] for r in nonsense_rows})))
    judged = [(match_of(Evidence(**r["evidence"]), r["notice"]), r["outcome"]) for r in rows]
    first = [m for m, o in judged if o == "rank 1"]
    junk = [m for m, o in judged if o == "nonsense"]
    if first:
        print(f"rank-1 answers judged strong: {100 * first.count('strong') / len(first):.1f} % of {len(first)}")
    if junk:
        print(f"nonsense judged none: {100 * junk.count('none') / len(junk):.1f} % of {len(junk)}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("release", type=Path, nargs="?", help="a release directory")
    p.add_argument("--suite", type=Path, action="append", default=[], help="a suite (default: the release's own)")
    p.add_argument("--nonsense", type=int, default=200, help="generated nonsense queries (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rows", type=Path, help="judge saved rows (--rows-out of an earlier run) instead of running")
    p.add_argument("--rows-out", type=Path, help="save each query's evidence here")
    args = p.parse_args()
    if args.rows is not None:
        rows = json.loads(args.rows.read_text(encoding="utf-8"))
    elif args.release is None:
        p.error("give a RELEASE or --rows")
    else:
        suites = args.suite or [Path(s.path) for s in read_manifest(args.release).bench.suites]
        rows = run(args.release, suites, args.nonsense, args.seed)
        if args.rows_out is not None:
            args.rows_out.write_text(json.dumps(rows, ensure_ascii=False, indent=0), encoding="utf-8")
    report(rows)


if __name__ == "__main__":
    main()
