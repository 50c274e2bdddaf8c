"""A release root under hostile conditions (issue 16): damaged files, a truncated published.json,
two runs on one root, what killed runs leave, and a CLI killed outright. Every case ends in a
clear one-line message within a bound; no published release is damaged or mixed.

The damage is done to copies of the session's sample root (`sample_release_root`); the cases that
need a run build one release each in their copy."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mathindex.cli import main
from mathindex.search.engine import SearchEngine
from mathindex.store import releases as store_releases
from mathindex.store.integrity import IntegrityError, verify_release
from mathindex.store.layout import PUBLISHED, RELEASE_ID
from mathindex.store.lock import root_lock
from mathindex.store.releases import building, publish, published_release, staging_dir
from tests.serving import copy_root

REPO = Path(__file__).resolve().parent.parent
INDEX = "vector/vector.index"


def _root(sample_release_root: Path, dst: Path, caches: bool = False) -> Path:
    """A copy of the sample root: its releases, models and published.json (with `caches`, its
    caches too, so a run in the copy embeds nothing anew)."""
    if caches:
        shutil.copytree(sample_release_root, dst, ignore=shutil.ignore_patterns(".lock"))
        return dst
    return copy_root(sample_release_root, dst)


def _flip(path: Path, at: float = 0.5, width: int = 1) -> None:
    """`width` bytes at fraction `at` of the file inverted in place (same size, other sha256)."""
    data = bytearray(path.read_bytes())
    i = int(len(data) * at)
    data[i:i + width] = bytes(b ^ 0xFF for b in data[i:i + width])
    path.write_bytes(bytes(data))


def _one_line(err: str) -> str:
    err = err.strip()
    assert err and "\n" not in err and "Traceback" not in err, err
    return err


def _cli(*argv: str, timeout: float, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    """`python -m mathindex ARGV` in a fresh process, bounded; (the run, its seconds)."""
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "mathindex", *argv], cwd=REPO, capture_output=True, text=True,
                         timeout=timeout, env=env)
    return run, time.monotonic() - started


def _run_log(state) -> list[str]:
    """The messages of a flow run's log (and its task runs'), as the Prefect server has them."""
    from prefect import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.logging.handlers import APILogHandler

    APILogHandler().flush()
    with get_client(sync_client=True) as client:
        logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[state.state_details.flow_run_id])))
    return [log.message for log in logs]


# -- integrity --------------------------------------------------------------------------------------


def test_a_damaged_published_index_is_rebuilt_not_linked_into_the_next_release(sample_release_root, tmp_path, prefect_harness):
    """The issue's case: a published vector.index damaged in its data (FAISS still reads it) was
    hard-linked into the next release, recorded as good and published. Now its files are checked
    against the published manifest first; the next release builds its own index, and the run's
    log names the damaged file."""
    from mathindex.flows.release import release_flow

    root = _root(sample_release_root, tmp_path / "root", caches=True)
    published = published_release(root)
    _flip(published / INDEX)
    damaged = (published / INDEX).read_bytes()
    state = release_flow(out=str(root), return_state=True)
    outcome = state.result()
    new = outcome.release_dir / INDEX
    assert not os.path.samefile(new, published / INDEX), "the damaged index was linked into the new release"
    assert new.read_bytes() != damaged
    assert verify_release(outcome.release_dir) == []
    manifest = json.loads((outcome.release_dir / "manifest.json").read_text())
    assert manifest["vector_index"]["embedding"]["index_reused"] is False
    assert any(f"{INDEX}: sha256 mismatch" in m and published.name in m for m in _run_log(state))
    assert outcome.passed and published_release(root) == outcome.release_dir


def test_verify_names_each_bad_file_and_exits_4(sample_release_root, tmp_path, capsys):
    root = _root(sample_release_root, tmp_path / "root")
    release = published_release(root)
    assert main(["verify", str(root)]) == 0  # a root: its published release
    assert f"release {release.name}: " in capsys.readouterr().out
    _flip(release / INDEX)  # same size: only the full check sees it
    nodes = release / "nodes.parquet"
    size = nodes.stat().st_size
    nodes.write_bytes(nodes.read_bytes()[: size // 2])
    (release / "release-notes.md").unlink()
    assert main(["verify", str(release)]) == 4
    out, err = capsys.readouterr()
    assert out.splitlines() == [f"nodes.parquet: {size // 2} bytes, the manifest records {size}",
                                "release-notes.md: missing", f"{INDEX}: sha256 mismatch"]
    assert "3 bad file(s)" in _one_line(err)
    assert main(["verify", str(root), "--quick"]) == 4
    assert capsys.readouterr().out.splitlines() == [f"nodes.parquet: {size // 2} bytes, the manifest records {size}",
                                                    "release-notes.md: missing"]
    assert main(["verify", str(tmp_path)]) == 2  # neither a release nor a root
    _one_line(capsys.readouterr().err)


def test_a_damaged_release_opened_for_search_is_an_integrity_error_naming_the_file(sample_release_root, tmp_path, capsys):
    """Not a raw FAISS message, not a silently disabled channel: a truncated index fails the quick
    check at open; a same-size damaged header fails FAISS, and the full check that follows names
    the file; damage FAISS does not notice is found by the full check on request."""
    root = _root(sample_release_root, tmp_path / "root")
    release = published_release(root)
    index = release / INDEX
    intact = index.read_bytes()

    index.write_bytes(intact[: len(intact) // 2])
    assert main(["search", str(release), "lattice join meet"]) == 4
    assert INDEX in _one_line(capsys.readouterr().err)
    with pytest.raises(IntegrityError, match=f"{INDEX}: {len(intact) // 2} bytes"):
        SearchEngine(release)

    index.write_bytes(b"\0" * 16 + intact[16:])  # same size: FAISS fails on the header
    assert main(["search", str(release), "lattice join meet"]) == 4
    err = _one_line(capsys.readouterr().err)
    assert INDEX in err and "faiss" not in err.lower()
    with pytest.raises(IntegrityError, match=f"release {release.name}: {INDEX}: sha256 mismatch"):
        SearchEngine(release)

    index.write_bytes(intact)
    _flip(index)  # inside the vectors' codes: FAISS opens it and answers
    assert not SearchEngine(release).unavailable
    assert main(["search", str(release), "lattice join meet", "--verify"]) == 4
    assert INDEX in _one_line(capsys.readouterr().err)
    with pytest.raises(IntegrityError, match=f"{INDEX}: sha256 mismatch"):
        SearchEngine(release, verify="full")


def test_reembedding_a_damaged_release_copies_nothing_and_exits_4(sample_release_root, tmp_path, prefect_harness, capsys):
    """Reembed copies the source's tables into the new release: each is checked against the
    source's manifest first, so damage is never copied into a release recorded as good."""
    root = _root(sample_release_root, tmp_path / "root")
    source = published_release(root)
    _flip(source / "declarations.parquet")
    before = sorted(p.name for p in (root / "releases").iterdir())
    started = time.monotonic()
    assert main(["reembed", str(source), "--model", "default", "--out", str(root)]) == 4
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the stage progress line
    assert err.startswith("mathindex: error: ")
    assert "declarations.parquet: sha256 mismatch" in err and source.name in err
    assert sorted(p.name for p in (root / "releases").iterdir()) == before  # no release, no staging left
    assert time.monotonic() - started < 60


def test_a_truncated_published_json_is_an_error_naming_it(sample_release_root, tmp_path, capsys):
    root = _root(sample_release_root, tmp_path / "root")
    pointer = root / PUBLISHED
    pointer.write_text(pointer.read_text()[:10])
    releases = sorted(p.name for p in (root / "releases").iterdir())
    assert main(["release", "--out", str(root)]) == 4  # before Prefect starts: nothing else is read
    assert str(pointer) in _one_line(capsys.readouterr().err)
    assert main(["verify", str(root)]) == 4
    assert str(pointer) in _one_line(capsys.readouterr().err)
    assert sorted(p.name for p in (root / "releases").iterdir()) == releases
    with pytest.raises(IntegrityError, match=str(pointer)):
        published_release(root)


def test_published_json_is_flushed_before_it_replaces_the_old_one(tmp_path, monkeypatch):
    """A failed write (here the flush to disk) leaves the old pointer whole and no temporary."""
    publish(tmp_path, "20990101T000000Z-aaaaaaaa")

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        publish(tmp_path, "20990102T000000Z-bbbbbbbb")
    assert json.loads((tmp_path / PUBLISHED).read_text()) == {"release_id": "20990101T000000Z-aaaaaaaa"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [PUBLISHED]


# -- concurrency and leftovers ------------------------------------------------------------------

BUSY_S = 45
HOLD = """
import fcntl, os, sys, time
fd = os.open(os.path.join(sys.argv[1], ".lock"), os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, f"{os.getpid()}\\n".encode())
print("locked", flush=True)
time.sleep(300)
"""


def test_a_second_run_on_a_locked_root_exits_5_naming_the_holder(sample_release_root, tmp_path):
    """Another run holds ROOT/.lock (flock): `release` and `reembed` end with one line naming its
    pid, exit 5, in seconds (before Prefect starts), or after `--wait` seconds; once the holder
    dies (SIGKILL), the kernel drops its lock and a waiting run gets it."""
    root = _root(sample_release_root, tmp_path / "root").resolve()
    source = published_release(root)
    before = sorted(p.name for p in (root / "releases").iterdir())
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(root)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        busy = f"mathindex: error: another release is running on {root} (pid {holder.pid})"
        # BUSY_S: the interpreter and its imports on a loaded machine; a release takes minutes
        run, seconds = _cli("release", "--out", str(root), timeout=120)
        assert (run.returncode, _one_line(run.stderr)) == (5, busy) and seconds < BUSY_S, (run.stdout, seconds)
        run, seconds = _cli("reembed", str(source), "--model", "default", "--out", str(root), "--wait", "2", timeout=120)
        assert (run.returncode, _one_line(run.stderr)) == (5, f"{busy}; waited 2 s") and 2 <= seconds < BUSY_S + 2
        assert sorted(p.name for p in (root / "releases").iterdir()) == before
        holder.kill()
        holder.wait(timeout=10)
        started = time.monotonic()
        with root_lock(root, wait_s=10):
            assert (root / ".lock").read_text() == f"{os.getpid()}\n"
        assert time.monotonic() - started < 5
    finally:
        holder.kill()
        holder.wait(timeout=10)


def test_two_runs_of_one_id_never_delete_or_share_a_staging_directory(tmp_path):
    """Two runs that got one id: the second is refused; the first's staging directory stays as it was."""
    rid = "20990101T000000Z-aaaaaaaa"
    with building(tmp_path, rid) as first:
        (first / "declarations.parquet").write_text("the first run's")
        with pytest.raises(FileExistsError, match="being built by another run"):
            with building(tmp_path, rid):
                pass
        assert (first / "declarations.parquet").read_text() == "the first run's"


def test_release_ids_are_unique_within_one_second_and_sort_by_time(tmp_path, monkeypatch):
    from datetime import datetime, timezone

    from mathindex.flows.release import new_release_id

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2099, 1, 1, 12, 0, 0, tzinfo=timezone.utc)

    monkeypatch.setattr(store_releases, "datetime", Frozen)
    ids = []
    for _ in range(3):  # the same second, the same inputs
        ids.append(new_release_id([], tmp_path))
        staging_dir(tmp_path, ids[-1])
    assert len(set(ids)) == 3 and sorted(ids) == ids, ids
    assert all(RELEASE_ID.match(i) for i in ids)


def test_leftovers_of_killed_runs_are_removed_under_the_lock_and_logged(sample_release_root, tmp_path, prefect_harness):
    """A staging directory (a run killed while building) and a release without its manifest (killed
    between the rename and the manifest) are removed by the next run, which says so in its log;
    the published release and a directory no run made stay."""
    from mathindex.flows.release import release_flow

    root = _root(sample_release_root, tmp_path / "root", caches=True)
    published = published_release(root)
    staging = root / "releases" / ".staging-20990101T000000Z-aaaaaaaa"
    shutil.copytree(published, staging)
    half = root / "releases" / "20990101T000001Z-bbbbbbbb"
    shutil.copytree(published, half, ignore=shutil.ignore_patterns("manifest.json"))
    mine = root / "releases" / "notes"
    mine.mkdir()
    state = release_flow(out=str(root), return_state=True)
    assert state.result().passed
    assert not staging.exists() and not half.exists() and mine.is_dir()
    assert verify_release(published) == []
    log = _run_log(state)
    for path in (staging, half):
        assert any(f"removed {path} (" in m for m in log), (path, log)


def _children(pid: int) -> dict[int, list[str]]:
    """pid -> argv of each child of process `pid`."""
    found = {}
    try:
        listed = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:  # it ended
        return found
    for child in listed:
        try:
            found[int(child)] = Path(f"/proc/{child}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
    return found


def _server_port(argv: list[str]) -> int | None:
    """The port of Prefect's temporary server, when `argv` is one (uvicorn with --port)."""
    return int(argv[argv.index("--port") + 1]) if "uvicorn" in argv and "--port" in argv else None


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


STARTUP_S = 600  # the server's start-up, bounded: 10-20 s here, minutes on a machine loaded 5 times over


@pytest.mark.e2e
@pytest.mark.parametrize("moment", ["starting", "listening"])
def test_killing_the_cli_stops_its_prefect_server(tmp_path, moment):
    """`mathindex release` with no PREFECT_API_URL starts Prefect's temporary server; SIGKILL on the
    CLI alone (no atexit runs), while the server starts or once it listens, used to leave it
    running. Within 15 s its port is closed and no process the CLI started is left."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")  # its own database: nothing shared with the harness
    env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = str(STARTUP_S)
    with open(tmp_path / "cli.log", "w") as log:
        cli = subprocess.Popen([sys.executable, "-m", "mathindex", "release", "--out", str(tmp_path / "root")],
                               cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    children: dict[int, list[str]] = {}
    port = None
    try:
        deadline = time.monotonic() + STARTUP_S
        while port is None or (moment == "listening" and not _listening(port)):
            assert cli.poll() is None, (tmp_path / "cli.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the temporary server did not start"
            children |= _children(cli.pid)
            port = next((p for p in map(_server_port, children.values()) if p), None)
            time.sleep(0.05)
        children |= _children(cli.pid)
        cli.kill()
        cli.wait(timeout=10)
        deadline = time.monotonic() + 15
        while _listening(port) or not all(map(_gone, children)):
            assert time.monotonic() < deadline, f"outlived the CLI: {[c for c in children if not _gone(c)]}"
            time.sleep(0.2)
    finally:
        cli.kill()
        cli.wait(timeout=10)
        for child in children:
            if not _gone(child):
                os.kill(child, signal.SIGKILL)
