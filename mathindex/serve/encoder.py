"""Query encoding shared by the server's query threads: the texts in flight run as packs.

One short query is a small matrix product per layer, which a CPU core runs at a fraction of its
speed; several queries packed into one row of tokens (embed/onnx.py `run_packed`: no padding,
attention kept inside each text) cost less per token (bench/experiments/query_encode.py --packed). The texts
of one call (the renderings a prose query's candidates lack) and those of threads that meet here
(a server run with more query threads than cores) are packed with no waiting on purpose: a thread
whose rows are queued runs the next pack itself (whatever is queued, oldest first, up to
PACK_TOKENS tokens) when fewer than `runners` packs are running, else it waits for one to finish.
Alone, a query is a pack of one and runs at once, as before.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

import numpy as np

PACK_TOKENS = 192  # tokens a pack holds at most (one longer text runs alone): attention and its mask grow with the
# square of a pack's tokens; packs of 16 queries (373 tokens) cost 0.78 of one by one, of 4-8 (93-186) 0.66


class _Request:
    __slots__ = ("out", "left", "error")

    def __init__(self, rows: int, dim: int):
        self.out = np.zeros((rows, dim), dtype=np.float32)
        self.left = rows
        self.error: BaseException | None = None


class PackedEncoder:
    """`encode(texts)` from any thread: `tokenise(texts)` gives each text's token ids, `run(rows)`
    unit vectors for a pack of token rows (`embed.onnx.run_packed` over a packed session).
    `runners`: packs running at once (one per core: each run is single-threaded)."""

    def __init__(self, tokenise: Callable[[list[str]], list[list[int]]], run: Callable[[list[list[int]]], np.ndarray],
                 dim: int, runners: int = 1, max_tokens: int = PACK_TOKENS):
        self.tokenise, self.run, self.dim = tokenise, run, dim
        self.runners, self.max_tokens = max(1, runners), max_tokens
        self._queue: deque[tuple[list[int], _Request, int]] = deque()
        self._running = 0
        self._cond = threading.Condition()
        self.stats = {"packs": 0, "texts": 0, "tokens": 0}

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit float32 vectors (len(texts), dim), row-aligned with `texts`."""
        request = _Request(len(texts), self.dim)
        if not texts:
            return request.out
        rows = self.tokenise(texts)
        with self._cond:
            self._queue.extend((ids, request, i) for i, ids in enumerate(rows))
        while True:
            with self._cond:
                while request.left and not (self._queue and self._running < self.runners):
                    self._cond.wait()
                if not request.left:
                    break
                pack = self._take()
                self._running += 1
            self._run(pack)
        if request.error is not None:
            raise request.error
        return request.out

    def _take(self) -> list[tuple[list[int], _Request, int]]:
        """The oldest queued rows within max_tokens (at least one); the caller holds the lock."""
        pack = [self._queue.popleft()]
        tokens = len(pack[0][0])
        while self._queue and tokens + len(self._queue[0][0]) <= self.max_tokens:
            row = self._queue.popleft()
            pack.append(row)
            tokens += len(row[0])
        return pack

    def _run(self, pack: list[tuple[list[int], _Request, int]]) -> None:
        """Runs one pack outside the lock and hands each row's vector (or the error) to its request."""
        vectors, error = None, None
        try:
            vectors = self.run([ids for ids, _, _ in pack])
        except BaseException as exc:  # every waiting request of the pack gets it, not only this thread's
            error = exc
        with self._cond:
            for j, (ids, request, i) in enumerate(pack):
                if error is None:
                    request.out[i] = vectors[j]
                elif request.error is None:
                    request.error = error
                request.left -= 1
            self._running -= 1
            self.stats["packs"] += 1
            self.stats["texts"] += len(pack)
            self.stats["tokens"] += sum(len(ids) for ids, _, _ in pack)
            self._cond.notify_all()
