"""SymPy canonical forms for trees that convert (polynomial identities, linear relations).

`to_spec` is the cheap pre-check and conversion (no SymPy import): a small nested tuple with bound
variables renamed canonically (b0, b1, ...). `CanonicalWorker` evaluates specs in a worker process
(formula/sympy_worker.py, the one module that imports SymPy) under a hard time budget per formula;
a formula past its budget kills the worker (status `timeout`) and a fresh worker takes the rest of
the batch.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path

log = logging.getLogger(__name__)

MAX_SPEC_NODES = 80
MAX_EXPONENT = 64
_RELATIONS = {"eq": "Eq", "neq": "Ne", "lt": "Lt", "le": "Le"}
_BOUND_OPS = {"sum": "Sum", "prod": "Product"}
WORKER_DOWN = "the SymPy worker did not start"  # a transient `error`, never cached


class Unsupported(ValueError):
    """The tree is outside the classes SymPy normalises here."""


def to_spec(tree: tuple) -> tuple | None:
    """A SymPy-buildable spec of `tree`, or None when the tree does not convert (cheap)."""
    try:
        count = [0]
        spec = _spec(tree, {}, count)
    except Unsupported:
        return None
    return None if spec[0] in ("s", "n") else spec  # a lone symbol has nothing to normalise


def _spec(node: tuple, bound: dict[str, str], count: list[int]) -> tuple:
    count[0] += 1
    if count[0] > MAX_SPEC_NODES:
        raise Unsupported("too large")
    tag = node[0]
    if tag == "#v":
        name = node[1]
        return ("s", bound.get(name, name))
    if tag == "#n":
        return ("n", node[1])
    if tag == "#c":
        if node[1] == "inf":
            raise Unsupported("infinity")
        raise Unsupported(f"constant {node[1]}")
    if tag[0] == "#":
        raise Unsupported(tag)
    if tag == "sub":
        base, idx = node[1], node[2]
        if base[0] == "#v" and idx[0] in ("#v", "#n"):
            return ("s", bound.get(base[1], base[1]) + "_" + bound.get(idx[1], idx[1]))
        raise Unsupported("subscript")
    if tag in ("add", "mul"):
        return (tag, *(_spec(c, bound, count) for c in node[1:]))
    if tag == "neg":
        return ("neg", _spec(node[1], bound, count))
    if tag == "frac":
        return ("frac", _spec(node[1], bound, count), _spec(node[2], bound, count))
    if tag == "pow":
        exp = node[2]
        if exp[0] == "#n" and (not exp[1].isdigit() or int(exp[1]) > MAX_EXPONENT):
            raise Unsupported("exponent")
        return ("pow", _spec(node[1], bound, count), _spec(exp, bound, count))
    if tag == "sqrt":
        return ("pow", _spec(node[1], bound, count), ("frac", ("n", "1"), ("n", "2")))
    if tag == "inv":
        return ("pow", _spec(node[1], bound, count), ("neg", ("n", "1")))
    if (tag in _RELATIONS or tag == "and") and count[0] > 1:
        raise Unsupported("relation below the root")
    if tag in _RELATIONS and len(node) == 3:
        return ("rel", _RELATIONS[tag], _spec(node[1], bound, count), _spec(node[2], bound, count))
    if tag == "eq" and len(node) > 3:  # a = b = c: Eq(a, b) and Eq(a, c)
        first = _spec(node[1], bound, count)
        return ("and", *(("rel", "Eq", first, _spec(c, bound, count)) for c in node[2:]))
    if tag == "and" and all(c[0] in _RELATIONS and len(c) == 3 for c in node[1:]):  # a < b <= c
        return ("and", *(("rel", _RELATIONS[c[0]], _spec(c[1], bound, count), _spec(c[2], bound, count))
                         for c in node[1:]))
    if tag in _BOUND_OPS:
        lo, hi, body = node[1], node[2], node[3]
        if lo[0] != "eq" or len(lo) != 3 or lo[1][0] != "#v" or hi[0] == "#e":
            raise Unsupported("big operator without var = lo .. hi")
        var = lo[1][1]
        inner = dict(bound)
        inner[var] = f"b{len(bound)}"
        return ("bound", _BOUND_OPS[tag], inner[var], _spec(lo[2], bound, count),
                _spec(hi, bound, count), _spec(body, inner, count))
    raise Unsupported(f"operator {tag}")


class CanonicalWorker:
    """A killable SymPy worker process; `run` evaluates a batch with a budget per formula.

    The worker is a fresh interpreter (`python -c`, not fork: safe beside threads, and it never
    re-imports the caller's main module) talking over two pipes. It says `ready` once SymPy is
    imported; the per-formula budget only starts counting after that."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._tx: Connection | None = None
        self._rx: Connection | None = None
        self._ready = False
        self.starts = 0
        self.lock = threading.Lock()
        self._inflight: list[tuple[int, tuple]] = []
        self._start_budget_s = 60.0

    def start(self) -> None:
        """Starts the worker process if none is running (returns at once; SymPy loads meanwhile)."""
        if self._alive():
            return
        self._kill()
        r1, w1 = os.pipe()  # parent -> child
        r2, w2 = os.pipe()  # child -> parent
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        code = f"from mathindex.formula.sympy_worker import main; main({r1}, {w2})"
        try:
            self._proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=(r1, w2), env=env,
                                          stdin=subprocess.DEVNULL)
        finally:
            os.close(r1)
            os.close(w2)
        self._tx = Connection(w1, readable=False)
        self._rx = Connection(r2, writable=False)
        self._ready = False
        self.starts += 1

    def ready(self, wait_s: float = 0.0) -> bool:
        """True once the running worker has imported SymPy (waits up to wait_s for it)."""
        if not self._alive():
            return False
        if not self._ready:
            got = self._recv(wait_s) if wait_s > 0 else (self._rx.recv() if self._rx.poll() else None)
            self._ready = got == ("ready",)
        return self._ready

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _kill(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait(10)
            self._tx.close()
            self._rx.close()
        self._proc = self._tx = self._rx = None
        self._ready = False

    def close(self) -> None:
        """Stops the worker process."""
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._tx.send(None)
                self._proc.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()

    def __enter__(self) -> CanonicalWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._kill()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def submit(self, items: list[tuple[int, tuple]], start_budget_s: float = 60.0) -> None:
        """Sends a batch to the worker and returns at once; `collect` reads its results."""
        self._inflight = list(items)
        self._start_budget_s = start_budget_s
        if self._inflight:
            self._send(self._inflight)

    def _send(self, items: list[tuple[int, tuple]]) -> bool:
        self.start()
        if not self.ready(self._start_budget_s):
            self._kill()
            return False
        try:
            self._tx.send(items)
        except OSError:
            self._kill()
            return False
        return True

    def collect(self, budget_s: float) -> Iterator[tuple[int, str, str | None]]:
        """Yields (index, status, canonical-or-reason) for the submitted batch, in order. A formula
        past budget_s (counted from when its result is awaited) kills the worker: `timeout`, and
        the rest of the batch goes to a fresh worker."""
        pending, self._inflight = self._inflight, []
        sent = bool(pending) and self._alive()
        while pending:
            if not sent:
                for idx, _spec in pending:
                    yield idx, "error", WORKER_DOWN
                return
            done = 0
            for pos, (idx, _spec) in enumerate(pending):
                got = self._recv(budget_s)
                done = pos + 1
                if got is None:
                    self._kill()
                    yield idx, "timeout", f"SymPy took longer than {budget_s:g} s"
                    break
                yield got
            pending = pending[done:]
            if pending:
                sent = self._send(pending)

    def run(self, items: list[tuple[int, tuple]], budget_s: float,
            start_budget_s: float = 60.0) -> Iterator[tuple[int, str, str | None]]:
        """Yields (index, status, canonical-or-reason) for every item, in input order."""
        self.submit(items, start_budget_s)
        yield from self.collect(budget_s)

    def _recv(self, limit: float) -> tuple | None:
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                if self._rx.poll(min(left, 1.0)):
                    return self._rx.recv()
            except (EOFError, OSError):
                return None
            if not self._alive():
                return None


_IDLE: list[CanonicalWorker] = []  # this process's workers between two formula shards
_IDLE_LOCK = threading.Lock()


@contextmanager
def lent_worker() -> Iterator[CanonicalWorker]:
    """An idle worker of this process, else a new one, taken back when done (closed when the block
    raised): the formula shards that one process runs one after another load SymPy once (about
    0.7 s of CPU a start), and shards that run at once get a worker each."""
    with _IDLE_LOCK:
        worker = _IDLE.pop() if _IDLE else CanonicalWorker()
    try:
        yield worker
    except BaseException:
        worker.close()
        raise
    with _IDLE_LOCK:
        _IDLE.append(worker)


def close_idle_workers() -> int:
    """Stops this process's idle workers (`lent_worker`); how many there were."""
    with _IDLE_LOCK:
        idle, _IDLE[:] = list(_IDLE), []
    for worker in idle:
        worker.close()
    return len(idle)


_SHARED: CanonicalWorker | None = None


def shared_worker() -> CanonicalWorker:
    """A process-wide worker for one-off calls (describe_formula, query-time canonical keys)."""
    global _SHARED
    if _SHARED is None:
        _SHARED = CanonicalWorker()
    return _SHARED


def canonical_forms(specs: Iterable[tuple | None], budget_s: float,
                    worker: CanonicalWorker | None = None,
                    wait_ready: bool = True) -> list[tuple[str, str | None]]:
    """(canonical_status, canonical) per spec; None specs are `unsupported` without SymPy.
    With wait_ready=False a worker still loading SymPy is not waited for (all `unsupported`)."""
    specs = list(specs)
    out: list[tuple[str, str | None]] = [("unsupported", None)] * len(specs)
    items = [(i, s) for i, s in enumerate(specs) if s is not None]
    if not items:
        return out
    w = worker or shared_worker()
    with w.lock:
        if not wait_ready and not (w.ready() or (w.start() or w.ready())):
            return out  # query time: never wait for SymPy to load; the next query will have it
        for idx, status, value in w.run(items, budget_s):
            out[idx] = (status, value if status == "ok" else None)
    return out
