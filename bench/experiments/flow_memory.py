"""Where the release flow's memory goes: runs `mathindex release ARGS…` in this process and records,
at the end of every stage, the flow process's resident memory split into anonymous and file-backed
pages (/proc/self/status RssAnon, RssFile), its peak in the stage (VmHWM) and the bytes pyarrow's
pool holds (the tables); a sampler thread adds a timeline every `--every` seconds.

    .venv/bin/python -m bench.experiments.flow_memory --json OUT.json -- release --sources S --out ROOT …

Anonymous memory that outlives its stage is what the flow holds; file-backed pages are mapped files
the kernel can drop. Linux only."""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa

from mathindex.flows.progress import status_mb

FIELDS = ("VmRSS", "RssAnon", "RssFile", "VmHWM")


def status_fields() -> dict[str, int]:
    """The FIELDS of /proc/self/status in MB."""
    return {f: status_mb(f) or 0 for f in FIELDS}


def snapshot() -> dict[str, int]:
    return {**status_fields(), "arrow": pa.total_allocated_bytes() >> 20}


def trimmed() -> dict[str, int]:
    """Anonymous memory after the allocators return their free pages (glibc's malloc_trim, pyarrow's
    pool) and a full garbage collection, with the count of Python objects: what the flow truly holds."""
    gc.collect()
    pa.default_memory_pool().release_unused()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return {"anon_trimmed": status_fields()["RssAnon"], "py_objects": len(gc.get_objects())}


def patch_stages(rows: list[dict], trim: bool) -> None:
    """Each stage's end figures appended to `rows` (the stage's peak is VmHWM: progress resets it)."""
    from mathindex.flows import progress

    exit_ = progress._Stage.__exit__

    def __exit__(self, *exc):
        row = {"stage": self.name, "seconds": round(time.perf_counter() - self.start, 1), **snapshot()}
        rows.append(row | (trimmed() if trim else {}))
        return exit_(self, *exc)

    progress._Stage.__exit__ = __exit__


def deep_mb(obj, seen: set[int]) -> float:
    """MB reachable from `obj` not already in `seen`: Python objects by sys.getsizeof, numpy arrays
    and Arrow tables or arrays by their buffers (a polars frame through its Arrow form). Memory
    behind C++ objects (FAISS indexes, ONNX sessions, torch modules' tensors aside) is not seen."""
    import numpy as np
    import polars as pl

    total, todo = 0, [obj]
    while todo:
        o = todo.pop()
        if id(o) in seen or isinstance(o, type):
            continue
        seen.add(id(o))
        if isinstance(o, np.ndarray):
            total += o.nbytes if o.base is None else 0
            continue
        if isinstance(o, (pa.Table, pa.RecordBatch, pa.Array, pa.ChunkedArray)):
            total += o.get_total_buffer_size()
            continue
        if isinstance(o, pl.DataFrame):
            total += o.estimated_size()
            continue
        if type(o).__module__.startswith("torch"):
            torch = sys.modules["torch"]
            if isinstance(o, torch.nn.Module):
                total += sum(p.numel() * p.element_size() for p in o.parameters())
            elif isinstance(o, torch.Tensor):
                total += o.numel() * o.element_size()
            continue  # torch's namespaces and C++ objects are not walked
        total += sys.getsizeof(o)
        if isinstance(o, (str, bytes, int, float)):
            continue
        todo.extend(gc.get_referents(o))
    return total / 2**20


def patch_finish(held: dict) -> None:
    """At `finish_release` (every stage done, the flow's locals alive), the MB each of the flow's
    locals holds (`deep_mb`, in the order the flow made them: a shared object counts once)."""
    from mathindex.flows import release

    finish = release.finish_release

    def finish_release(*a, **kw):
        frame = sys._getframe(1)
        seen: set[int] = set()
        for name, value in list(frame.f_locals.items()):
            try:
                held[name] = round(deep_mb(value, seen), 1)
            except Exception as exc:  # noqa: BLE001 - a diagnosis: name what could not be sized
                held[name] = f"unsized: {exc}"
        return finish(*a, **kw)

    release.finish_release = finish_release


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--every", type=float, default=2.0)
    ap.add_argument("--trim", action="store_true", help="also the anonymous memory left after trimming (`trimmed`)")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="-- then the mathindex command line")
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    rows: list[dict] = []
    timeline: list[dict] = []
    done = threading.Event()
    t0 = time.perf_counter()

    def sample() -> None:
        while not done.wait(a.every):
            timeline.append({"t": round(time.perf_counter() - t0, 1), **snapshot()})

    patch_stages(rows, a.trim)
    held: dict[str, float] = {}
    patch_finish(held)
    threading.Thread(target=sample, daemon=True).start()
    from mathindex.cli import main as cli

    try:
        rc = cli(args)
    finally:
        done.set()
        a.json.write_text(json.dumps({"args": args, "stages": rows, "held_mb": held, "timeline": timeline}, indent=1))
    print(f"{'stage':<14}{'s':>8}{'peak':>8}{'rss':>8}{'anon':>8}{'file':>8}{'arrow':>8}{'trim':>8}  (MB at the stage's end)")
    for r in rows:
        print(f"{r['stage']:<14}{r['seconds']:>8}{r['VmHWM']:>8}{r['VmRSS']:>8}{r['RssAnon']:>8}{r['RssFile']:>8}"
              f"{r['arrow']:>8}{r.get('anon_trimmed', ''):>8}")
    print("held at finish_release (MB):", ", ".join(f"{k} {v}" for k, v in held.items() if not isinstance(v, float) or v >= 1))
    raise SystemExit(rc)


if __name__ == "__main__":
    main()
