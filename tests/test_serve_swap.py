"""Hot release swaps: a release published while clients query is switched in without losing a
request; a corrupt or missing one is refused and the old one keeps serving."""

from __future__ import annotations

import http.client
import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import pytest

from mathindex.serve.app import create_app
from mathindex.serve.release import ReleaseRefused
from mathindex.serve.swap import ReleaseHolder
from mathindex.store.layout import MANIFEST
from mathindex.store.releases import publish
from tests.serving import ServerThread, clone_release, copy_root, get_json

QUERIES = ["lattice join meet", "Nat.Prime.two_le", "$a^2 + b^2 \\ge 2ab$", "prime divides product",
           "continuous function on a connected space", "group inverse unique", "MA04", "`n + 0 = n`"]
MAX_REQUESTS = 5000  # the client loop is bounded in count as well as in time


def _wait(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout_s:g} s for {what}")
        time.sleep(0.05)


def _client_loop(port: int, stop: threading.Event, out: list, lock: threading.Lock, offset: int):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    i = offset
    while not stop.is_set():
        with lock:
            if len(out) >= MAX_REQUESTS:
                return
        q = QUERIES[i % len(QUERIES)]
        i += 1
        try:
            conn.request("GET", f"/search?q={quote(q, safe='')}&k=5")
            r = conn.getresponse()
            body = r.read()
            rid = json.loads(body).get("release_id") if r.status == 200 else body[:200]
            row = (r.status, rid)
        except Exception as exc:  # noqa: BLE001 - a lost request is what this test looks for
            row = (None, f"{type(exc).__name__}: {exc}")
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        with lock:
            out.append(row)


@pytest.fixture()
def root(sample_release_root, tmp_path):
    return copy_root(sample_release_root, tmp_path / "root")


def test_a_swap_under_load_loses_no_request_and_refuses_a_corrupt_release(root):
    holder = ReleaseHolder(root)
    old = holder.current.release_id
    holder.watch(0.1)
    results: list = []
    lock, stop = threading.Lock(), threading.Event()
    try:
        with ServerThread(create_app(holder, threads=2)) as server:
            clients = [threading.Thread(target=_client_loop, args=(server.port, stop, results, lock, n)) for n in range(4)]
            for c in clients:
                c.start()
            try:
                _wait(lambda: len(results) >= 20, 60, "answers before the swap")
                new = "29990101T000000Z-swapped"
                clone_release(root, old, new)
                publish(root, new)
                _wait(lambda: holder.current.release_id == new, 120, "the new release to be switched in")
                seen_at_swap = len(results)
                _wait(lambda: len(results) >= seen_at_swap + 20, 60, "answers after the swap")
            finally:
                stop.set()
                for c in clients:
                    c.join(timeout=60)

            assert len(results) <= MAX_REQUESTS
            assert [r for r in results if r[0] != 200] == []
            ids = [r[1] for r in results]
            assert set(ids) == {old, new}
            first_new = ids.index(new)
            assert ids[:first_new].count(old) == first_new and ids.count(old) + ids.count(new) == len(ids)
            status, health = get_json(server.port, "/health")
            assert status == 200 and health["release_id"] == new and health["swaps"] == 1

            # a release whose file differs from its manifest's sha256: refused, the current one stays
            clone_release(root, new, "29990102T000000Z-corrupt", corrupt="vector/vector.index")
            publish(root, "29990102T000000Z-corrupt")
            _wait(lambda: len(holder.refused) == 1, 60, "the corrupt release to be refused")
            assert "vector/vector.index: sha256 mismatch" in holder.refused[0].reason
            status, body = get_json(server.port, "/search?q=lattice&k=3")
            assert status == 200 and body["release_id"] == new
            # a published id with no release behind it: refused too
            publish(root, "29990103T000000Z-missing")
            _wait(lambda: len(holder.refused) == 2, 30, "the missing release to be refused")
            status, health = get_json(server.port, "/health")
            assert health["release_id"] == new and [r["release_id"] for r in health["refused"]] == [
                "29990102T000000Z-corrupt", "29990103T000000Z-missing"]
    finally:
        holder.stop()


class _Stub(SimpleNamespace):
    pass


def _stub_opener(unavailable_by_id: dict[str, dict]):
    def opener(path: Path):
        if not (path / MANIFEST).is_file():
            raise ReleaseRefused("no manifest")
        return _Stub(release_id=path.name, unavailable=unavailable_by_id.get(path.name, {}))
    return opener


def _release(root: Path, rid: str):
    (root / "releases" / rid).mkdir(parents=True)
    (root / "releases" / rid / MANIFEST).write_text("{}")


def test_refresh_switches_once_refuses_a_release_that_lost_a_channel_and_keeps_a_pin(tmp_path):
    for rid in ("a", "b", "c"):
        _release(tmp_path, rid)
    publish(tmp_path, "a")
    holder = ReleaseHolder(tmp_path, opener=_stub_opener({"c": {"embedding": "model missing"}}))
    assert holder.current.release_id == "a" and holder.refresh() is False
    publish(tmp_path, "b")
    assert holder.refresh() is True and holder.current.release_id == "b" and holder.swaps == 1
    publish(tmp_path, "c")
    assert holder.refresh() is False and holder.current.release_id == "b"
    assert "embedding" in holder.refused[-1].reason
    assert holder.refresh() is False and len(holder.refused) == 1  # refused once, not every poll
    (tmp_path / "published.json").unlink()
    assert holder.refresh() is False and holder.current.release_id == "b"
    pinned = ReleaseHolder(tmp_path, "a", opener=_stub_opener({}))
    pinned.watch(0.01)
    assert pinned.pinned and not pinned.watching
