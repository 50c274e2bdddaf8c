"""Two parts of the serving path, another checkout's code against this one's in one process,
alternating query by query: the served query encoder (serve/release.py `_thread_safe_encoding`)
and `SearchEngine.rank` over every query's recorded channel lists. Thread CPU a query and the
ratio per round; the outputs must be identical (vectors bit for bit, hits with scores and ranks).

    .venv/bin/python -m bench.experiments.serve_parts_pair RELEASE --suite bench/suites/mathlibqr-dev.json \
        --before /work/main [--rounds 5]

The other checkout's `serve/release.py` and `search/engine.py` are loaded by path beside this
checkout's package (what they import is this checkout's), so a pair measures the change in those
two modules alone. The informal channel is off (its query-time encoding is not measured).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
import types
from pathlib import Path

from bench.common.serving import suite_queries


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _rounds(label: str, before, after, items: list, rounds: int) -> None:
    """Thread CPU a call of `before(x)` and `after(x)`, alternating, per round; the median ratio."""
    ratios = []
    for r in range(rounds):
        spent = [0, 0]
        for x in items:
            for side, fn in enumerate((before, after)):
                t = time.thread_time_ns()
                fn(x)
                spent[side] += time.thread_time_ns() - t
        ratios.append(spent[1] / spent[0])
        print(f"{label} round {r}: before {spent[0] / len(items) / 1e6:.3f} ms, after {spent[1] / len(items) / 1e6:.3f} ms, "
              f"ratio {ratios[-1]:.3f}")
    print(f"{label}: median ratio {statistics.median(ratios):.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--suite", type=Path, required=True)
    ap.add_argument("--before", type=Path, required=True, help="the other checkout (its mathindex/ is read)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)

    import numpy as np

    import mathindex.search.engine as engine
    import mathindex.search.weights as settings
    from mathindex.embed.channel import VectorChannel
    from mathindex.serve import release as served
    from mathindex.serve.app import configure_runtime

    settings.INFORMAL_DEPTH = 0
    configure_runtime()
    old_release = _load(args.before / "mathindex/serve/release.py", "before_release")
    old_engine = _load(args.before / "mathindex/search/engine.py", "before_engine")
    queries = list(dict.fromkeys(q for _, q in suite_queries(args.suite)))

    now = engine.SearchEngine(args.release, verify="none")
    if now.formula is not None:
        now.formula.index.wait_ready()
    lists = [(q, now.channel_hits(q), now.resolver.resolve(q)) for q in queries]
    then = old_engine.SearchEngine.__new__(old_engine.SearchEngine)
    then.__dict__.update({k: getattr(now, k) for k in ("weights", "unavailable", "known", "fields", "prior")})
    differ = sum(repr(then.rank(q, r, s, 10).hits) != repr(now.rank(q, r, s, 10).hits) for q, r, s in lists)
    print(f"rank: {differ} of {len(lists)} queries' hits differ")
    _rounds("rank", lambda x: then.rank(x[0], x[1], x[2], 10), lambda x: now.rank(x[0], x[1], x[2], 10), lists, args.rounds)

    encoders = []
    for module in (old_release, served):
        vector = VectorChannel.__new__(VectorChannel)
        vector.embedder = type(now.vector.embedder).__new__(type(now.vector.embedder))
        vector.embedder.__dict__.update(now.vector.embedder.__dict__)  # its own encode, same model and session file
        module._thread_safe_encoding(types.SimpleNamespace(vector=vector))
        encoders.append(vector.embedder.encode)
    differ = sum(not np.array_equal(encoders[0]([q]), encoders[1]([q])) for q in queries)
    print(f"encode: {differ} of {len(queries)} queries' vectors differ")
    _rounds("encode", lambda q: encoders[0]([q]), lambda q: encoders[1]([q]), queries, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
