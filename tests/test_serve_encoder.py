"""serve/encoder.py: the query threads' texts run as packs; each request gets its own rows' vectors,
packs keep to their token budget and to `runners` at a time, an error reaches every request of its
pack, and a text alone runs at once."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from mathindex.serve.encoder import PackedEncoder

DIM = 4


def tokenise(texts: list[str]) -> list[list[int]]:
    """One token per character: a text's vector (below) says which text it was."""
    return [[ord(c) for c in t] for t in texts]


class Runner:
    """A pack runner that records its packs and how many ran at once, and takes `delay_s` a pack."""

    def __init__(self, delay_s: float = 0.0, fail: str | None = None):
        self.delay_s, self.fail = delay_s, fail
        self.packs: list[list[list[int]]] = []
        self.active = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, rows: list[list[int]]) -> np.ndarray:
        with self.lock:
            self.packs.append(rows)
            self.active += 1
            self.most = max(self.most, self.active)
        try:
            time.sleep(self.delay_s)
            if self.fail is not None and any(r == tokenise([self.fail])[0] for r in rows):
                raise RuntimeError("the model failed")
            return np.array([[len(r), sum(r), r[0], r[-1]] for r in rows], dtype=np.float32)
        finally:
            with self.lock:
                self.active -= 1


def want(texts: list[str]) -> np.ndarray:
    return np.array([[len(t), sum(map(ord, t)), ord(t[0]), ord(t[-1])] for t in texts], dtype=np.float32)


def run_threads(encoder: PackedEncoder, requests: list[list[str]]) -> list:
    """Every request from its own thread, released together; their answers (or exceptions)."""
    out: list = [None] * len(requests)
    start = threading.Barrier(len(requests))

    def one(i: int) -> None:
        start.wait()
        try:
            out[i] = encoder.encode(requests[i])
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            out[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "an encode never returned"
    return out


def test_a_text_alone_is_a_pack_of_one():
    runner = Runner()
    enc = PackedEncoder(tokenise, runner, DIM)
    assert np.array_equal(enc.encode(["abc"]), want(["abc"]))
    assert runner.packs == [tokenise(["abc"])] and enc.stats == {"packs": 1, "texts": 1, "tokens": 3}
    assert enc.encode([]).shape == (0, DIM)


def test_texts_in_flight_are_packed_and_each_request_gets_its_own_rows():
    runner = Runner(delay_s=0.05)
    enc = PackedEncoder(tokenise, runner, DIM, runners=1, max_tokens=64)
    requests = [[f"query {i}"] for i in range(12)] + [["two texts", "of one request"]]
    answers = run_threads(enc, requests)
    for texts, got in zip(requests, answers):
        assert np.array_equal(got, want(texts))
    assert runner.most == 1  # one pack at a time
    assert len(runner.packs) < 13 and max(len(p) for p in runner.packs) > 1  # the threads' texts were packed
    assert all(sum(map(len, p)) <= 64 for p in runner.packs)
    assert enc.stats["texts"] == 14 and enc.stats["packs"] == len(runner.packs)


def test_packs_keep_to_runners_and_a_long_text_runs_alone():
    runner = Runner(delay_s=0.03)
    enc = PackedEncoder(tokenise, runner, DIM, runners=2, max_tokens=16)
    long = "x" * 40
    requests = [[f"q{i:02d}"] for i in range(16)] + [[long]]
    answers = run_threads(enc, requests)
    assert all(np.array_equal(got, want(texts)) for texts, got in zip(requests, answers))
    assert runner.most <= 2
    assert [p for p in runner.packs if tokenise([long])[0] in p] == [[tokenise([long])[0]]]
    assert all(sum(map(len, p)) <= 16 for p in runner.packs if len(p) > 1)


def test_an_error_reaches_every_request_of_its_pack_and_the_encoder_goes_on():
    runner = Runner(delay_s=0.05, fail="bad")
    enc = PackedEncoder(tokenise, runner, DIM, runners=1)
    answers = run_threads(enc, [["bad"]] + [[f"ok {i}"] for i in range(6)])
    failed = {i for i, a in enumerate(answers) if isinstance(a, RuntimeError)}
    assert 0 in failed
    bad_pack = next(p for p in runner.packs if tokenise(["bad"])[0] in p)
    assert len(failed) == len(bad_pack)  # the whole pack, and only it
    for i, a in enumerate(answers):
        if i not in failed:
            assert np.array_equal(a, want([f"ok {i - 1}"]))
    assert np.array_equal(enc.encode(["fine"]), want(["fine"]))
    with pytest.raises(RuntimeError, match="the model failed"):
        enc.encode(["bad"])
