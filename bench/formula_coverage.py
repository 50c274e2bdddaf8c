"""Parse coverage and parse time of the formula grammar over the formulas of a LaTeX corpus.

Targets: issue 4, grammar without fallback on at least 95 % of Stacks formulas, median parse under
0.5 ms, p95 under 2 ms; issue 15, at least 98.5 % on each corpus by other authors
(bench/sources/{hott-book,napkin,lebl-ra}.yaml), 99.9 % on Stacks, median parse under 0.05 ms and
unchanged against the old grammar (`--against REV`: the grammar of git revision REV, loaded beside
the current one and timed on the same formulas, alternating which goes first), and bad input (100 k
characters, 10 k nesting, 10 k `\\left`) given a status within 50 ms (`--bounds`). Baseline beside
the coverage figure: latex2mathml (the fallback) on a seeded sample.

    .venv/bin/python -m bench.formula_coverage [--cache build/bench/stacks_formulas.parquet]
    .venv/bin/python -m bench.formula_coverage --corpus bench/sources/napkin.yaml [--corpus DIR]...
    .venv/bin/python -m bench.formula_coverage --corpus stacks --against main --bounds
    .venv/bin/python -m bench.formula_coverage --bounds   (bad input alone)
"""

from __future__ import annotations

import argparse
import collections
import importlib
import importlib.util
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.common.formulas import ROOT, corpus_formulas, formula_texts, quantile, stacks_formulas
from mathindex.formula.api import analyse
from mathindex.formula.grammar import ParseError, parse_latex

_GRAMMAR_FILES = ("grammar.py", "symbols.py", "tokens.py", "parser.py", "optree.py")


def load_grammar_at(rev: str):
    """The `grammar` module of git revision `rev`, importable beside the current one: its grammar
    files are copied into a private package whose imports are rewritten to point at it."""
    pkg = "grammar_at_" + "".join(c if c.isalnum() else "_" for c in rev)
    tmp = Path(tempfile.mkdtemp(prefix="h15-grammar-"))
    (tmp / pkg).mkdir()
    (tmp / pkg / "__init__.py").write_text("")
    for name in _GRAMMAR_FILES:
        out = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:mathindex/formula/{name}"],
                             capture_output=True, text=True)
        if out.returncode == 0:
            (tmp / pkg / name).write_text(out.stdout.replace("mathindex.formula.", pkg + "."))
    spec = importlib.util.spec_from_file_location(pkg, tmp / pkg / "__init__.py", submodule_search_locations=[str(tmp / pkg)])
    sys.modules[pkg] = importlib.util.module_from_spec(spec)  # the private package, by name: its modules import each other
    spec.loader.exec_module(sys.modules[pkg])
    return importlib.import_module(pkg + ".grammar")


def coverage(texts: list[str]) -> dict:
    """Own-grammar share (no fallback; an internal error counts as a rejection), parse times,
    the fallback chain's parsers and statuses, and the commonest rejection reasons."""
    times: list[float] = []
    ok = internal = 0
    reasons: collections.Counter = collections.Counter()
    for s in texts:
        t0 = time.perf_counter()
        try:
            parse_latex(s)
            ok += 1
        except ParseError as exc:
            reasons[str(exc).split(",")[0][:40]] += 1
        except Exception as exc:  # noqa: BLE001 - counted: analyse() turns these into a fallback
            internal += 1
            reasons["internal " + type(exc).__name__] += 1
        times.append(time.perf_counter() - t0)
    times.sort()
    distinct = set(texts)
    ok_distinct = sum(1 for s in distinct if _parses(s))
    statuses: collections.Counter = collections.Counter()
    full_times: list[float] = []
    for s in texts:
        t0 = time.perf_counter()
        _, parser, status, _ = analyse(s)
        statuses[f"{parser}/{status}"] += 1
        full_times.append(time.perf_counter() - t0)
    full_times.sort()
    n = len(texts)
    return {
        "formulas": n, "distinct": len(distinct), "grammar_share": ok / n,
        "grammar_share_distinct": ok_distinct / len(distinct), "internal_errors": internal,
        "parsers_with_fallback": dict(statuses),
        "parse_median_ms": quantile(times, 0.5) * 1e3, "parse_p95_ms": quantile(times, 0.95) * 1e3,
        "parse_max_ms": times[-1] * 1e3,
        "analyse_median_ms": quantile(full_times, 0.5) * 1e3, "analyse_p95_ms": quantile(full_times, 0.95) * 1e3,
        "top_reasons": reasons.most_common(8),
    }


def _parses(s: str) -> bool:
    try:
        parse_latex(s)
        return True
    except Exception:  # noqa: BLE001 - ParseError or an internal error: not parsed
        return False


def latex2mathml_baseline(texts: list[str], size: int) -> dict:
    """Median time of the fallback (latex2mathml) against the grammar on a seeded sample."""
    from latex2mathml.converter import convert

    sample = random.Random(20261130).sample(texts, min(size, len(texts)))
    base: list[float] = []
    ours: list[float] = []
    for s in sample:
        t0 = time.perf_counter()
        try:
            convert(s)
        except Exception:  # noqa: BLE001 - the baseline fails on some inputs; time counts anyway
            pass
        base.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        _parses(s)
        ours.append(time.perf_counter() - t0)
    base.sort()
    ours.sort()
    return {"sample": len(sample), "sample_grammar_median_ms": quantile(ours, 0.5) * 1e3,
            "sample_latex2mathml_median_ms": quantile(base, 0.5) * 1e3,
            "sample_ratio_latex2mathml_over_grammar": quantile(base, 0.5) / max(quantile(ours, 0.5), 1e-9)}


def paired_against(texts: list[str], rev: str, rounds: int = 3) -> dict:
    """Parse time of the current grammar against the grammar of `rev` on the same formulas: each
    formula parsed by both in turn (which goes first alternates), `rounds` times; medians of each
    side and of the per-formula ratio new/old, and the shares each grammar parses."""
    old = load_grammar_at(rev)
    new_t: list[float] = []
    old_t: list[float] = []
    ratios: list[float] = []
    old_ok = new_ok = 0
    for k, s in enumerate(texts):
        best_new = best_old = float("inf")
        for r in range(rounds):
            for side in ((0, 1) if (k + r) % 2 else (1, 0)):
                t0 = time.perf_counter()
                ok = _parses(s) if side == 0 else _parses_with(old, s)
                dt = time.perf_counter() - t0
                if side == 0:
                    best_new = min(best_new, dt)
                    new_ok += ok and r == 0
                else:
                    best_old = min(best_old, dt)
                    old_ok += ok and r == 0
        new_t.append(best_new)
        old_t.append(best_old)
        ratios.append(best_new / max(best_old, 1e-9))
    for xs in (new_t, old_t, ratios):
        xs.sort()
    return {"against": rev, "formulas": len(texts), "new_median_ms": quantile(new_t, 0.5) * 1e3,
            "old_median_ms": quantile(old_t, 0.5) * 1e3, "median_ratio_new_over_old": quantile(ratios, 0.5),
            "new_p95_ms": quantile(new_t, 0.95) * 1e3, "old_p95_ms": quantile(old_t, 0.95) * 1e3,
            "new_share": new_ok / len(texts), "old_share": old_ok / len(texts)}


def _parses_with(grammar, s: str) -> bool:
    try:
        grammar.parse_latex(s)
        return True
    except Exception:  # noqa: BLE001 - ParseError or an internal error of the old grammar
        return False


BOUNDS = {
    "100k characters": "x + " * 25_000,
    "10k nesting": "{" * 10_000 + "x" + "}" * 10_000,
    "10k \\left without \\right": "\\left( x " * 10_000,
}


def bounds(runs: int = 5) -> dict:
    """Median wall and CPU milliseconds (of `runs`) for `analyse` to give each bad input of BOUNDS a
    status (CPU time is what a loaded machine does not inflate)."""
    out = {}
    for label, src in BOUNDS.items():
        wall, cpu = [], []
        for _ in range(runs):
            t0, c0 = time.perf_counter(), time.process_time()
            _, parser, status, _ = analyse(src)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        wall.sort()
        cpu.sort()
        out[label] = {"median_ms": quantile(wall, 0.5) * 1e3, "max_ms": wall[-1] * 1e3,
                      "cpu_median_ms": quantile(cpu, 0.5) * 1e3, "parser": parser, "status": status}
    return out


def texts_of(corpus: str, cache: Path | None) -> tuple[str, list[str], float]:
    """(name, formula texts, extraction seconds) of `stacks` or of a directory / sources file."""
    if corpus == "stacks":
        formulas, took = stacks_formulas(cache)
        return "stacks", formula_texts(formulas), took
    name, formulas, took = corpus_formulas(Path(corpus))
    return name, formula_texts(formulas), took


def print_report(name: str, res: dict) -> None:
    n = res["formulas"]
    target = "99.9%" if name == "stacks" else "98.5%"
    print(f"== {name}: {n} formulas ({res['distinct']} distinct), extraction {res['extract_s']} s")
    print(f"{'grammar without fallback, all formulas':44s} {100 * res['grammar_share']:>11.2f}% {'>= ' + target:>10s}")
    print(f"{'grammar without fallback, distinct':44s} {100 * res['grammar_share_distinct']:>11.2f}%")
    print(f"{'parse median / p95 / max (ms)':44s} {res['parse_median_ms']:.4f} / {res['parse_p95_ms']:.4f} / {res['parse_max_ms']:.2f}")
    print(f"{'grammar+fallback median / p95 (ms)':44s} {res['analyse_median_ms']:.4f} / {res['analyse_p95_ms']:.4f}")
    print(f"{'parser/status after fallback':44s} {res['parsers_with_fallback']}")
    if "sample" in res:
        print(f"baseline on a seeded sample of {res['sample']}: latex2mathml median "
              f"{res['sample_latex2mathml_median_ms']:.4f} ms vs grammar {res['sample_grammar_median_ms']:.4f} ms "
              f"(ratio {res['sample_ratio_latex2mathml_over_grammar']:.1f}x)")
    if "paired" in res:
        p = res["paired"]
        print(f"paired against {p['against']} ({p['formulas']} formulas): median {p['new_median_ms']:.4f} ms "
              f"vs {p['old_median_ms']:.4f} ms, median ratio new/old {p['median_ratio_new_over_old']:.3f}; "
              f"p95 {p['new_p95_ms']:.4f} vs {p['old_p95_ms']:.4f} ms; "
              f"shares {100 * p['new_share']:.2f}% vs {100 * p['old_share']:.2f}%")
    print("grammar rejections:", ", ".join(f"{r} ({c})" for r, c in res["top_reasons"][:6]))


def main() -> None:
    """Coverage per corpus (default: Stacks), optional paired timing and bounds; text or --json."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, default=None, help="Parquet cache of the Stacks formulas table")
    ap.add_argument("--corpus", action="append", default=None,
                    help="'stacks', a corpus directory or a sources file; repeatable (default: stacks)")
    ap.add_argument("--baseline-sample", type=int, default=5000)
    ap.add_argument("--against", default=None, help="git revision whose grammar is timed beside this one")
    ap.add_argument("--paired-sample", type=int, default=20_000, help="formulas per corpus for --against")
    ap.add_argument("--bounds", action="store_true", help="time bad inputs: 100 k chars, 10 k nesting, 10 k \\left")
    ap.add_argument("--lean-dir", type=Path, default=None,
                    help="also measure the grammar on Lean statement types under this directory")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    report: dict = {}
    for corpus in args.corpus or ([] if args.bounds else ["stacks"]):  # --bounds alone: no corpus
        name, texts, took = texts_of(corpus, args.cache)
        res = {"extract_s": round(took, 1), **coverage(texts)}
        if args.baseline_sample:
            res.update(latex2mathml_baseline(texts, args.baseline_sample))
        if args.against:
            sample = random.Random(15).sample(texts, min(args.paired_sample, len(texts)))
            res["paired"] = paired_against(sample, args.against)
        report[name] = res
    if args.bounds:
        report["bounds"] = bounds()
    if args.lean_dir is not None:
        report["lean"] = lean_coverage(args.lean_dir)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for name, res in report.items():
        if name not in ("bounds", "lean"):
            print_report(name, res)
    if "bounds" in report:
        for label, b in report["bounds"].items():
            print(f"bad input, {label}: {b['parser']}/{b['status']} in {b['median_ms']:.1f} ms median, "
                  f"{b.get('cpu_median_ms', float('nan')):.1f} ms CPU (max {b['max_ms']:.1f}; target < 50 ms)")
    if "lean" in report:
        lc = report["lean"]
        print(f"Lean statement types under {args.lean_dir}: {lc['types']} types, grammar "
              f"{100 * lc['grammar_share']:.2f}% ({lc['internal_errors']} internal errors), median {lc['median_ms']:.4f} ms, p95 {lc['p95_ms']:.4f} ms")


def lean_coverage(root: Path) -> dict:
    """Grammar share and parse time over the `type` of every declaration the Lean scanner finds."""
    from mathindex.formula.grammar import parse_lean
    from mathindex.lean import extract_lean_tree

    cache = ROOT / "build/bench" / ("lean_types_" + root.name + ".parquet")
    if cache.exists():
        types = pq.read_table(cache).column("type").to_pylist()
    else:
        decls = extract_lean_tree(root, "lean").declarations
        types = [" ".join(t.split()) for t in decls.column("type").to_pylist() if t]
        cache.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"type": types}), cache)
    ok = internal = 0
    times: list[float] = []
    for s in types:
        t0 = time.perf_counter()
        try:
            parse_lean(s)
            ok += 1
        except ParseError:
            pass
        except Exception:  # noqa: BLE001 - counted: analyse() turns these into a fallback
            internal += 1
        times.append(time.perf_counter() - t0)
    times.sort()
    return {"types": len(types), "grammar_share": ok / max(len(types), 1), "internal_errors": internal,
            "median_ms": quantile(times, 0.5) * 1e3, "p95_ms": quantile(times, 0.95) * 1e3}


if __name__ == "__main__":
    main()
