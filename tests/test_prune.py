"""`mathindex prune ROOT --keep N` (store/prune.py, store/serving.py): each rule that keeps a release
(the N newest, the published one, a served one, a kept release's gate baseline), the leftovers of
dead runs and never a live run's staging, the removal that never leaves half a release that looks
whole, bad input, and the release flow's prune after publishing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from mathindex.cli import main
from mathindex.flows.finish import ReleaseOutcome, prune_after_publish
from mathindex.serve.swap import ReleaseHolder
from mathindex.store import prune as prune_module
from mathindex.store.layout import RootLayout
from mathindex.store.lock import root_lock
from mathindex.cli.prune import human
from mathindex.store.prune import complete_releases, plan, prune, tree_size
from mathindex.store.releases import publish
from mathindex.store.serving import ServedMarker, host_name, process_start, servers
from tests.manifests import manifest_json
from tests.serving import clone_release, copy_root, free_port

IDS = [f"2026120{d}T000000Z-0000000{d}" for d in range(1, 8)]  # oldest first


def make_release(root: Path, rid: str, baseline: str | None = None, old_style: bool = False) -> Path:
    """A complete release by hand: a data file and a manifest naming the release it was gated
    against (`previous_release`, or only `bench.baseline` as older manifests have it)."""
    release = RootLayout(root).release(rid).dir
    release.mkdir(parents=True)
    (release / "nodes.parquet").write_bytes(b"x" * 1000)
    fields = {"bench": {"baseline": f"release {baseline}" if baseline else "bench/baselines"}}
    if baseline and not old_style:
        fields["previous_release"] = baseline
    (release / "manifest.json").write_text(json.dumps(manifest_json(rid, **fields)))
    return release


@pytest.fixture
def root(tmp_path) -> Path:
    """Seven releases, each gated against the one before (the first against the committed
    baselines); the newest is published."""
    root = tmp_path / "root"
    for i, rid in enumerate(IDS):
        make_release(root, rid, IDS[i - 1] if i else None)
    publish(root, IDS[-1])
    return root


def cli(*argv: str) -> int:
    return main(["prune", *map(str, argv)])


def test_keeps_the_newest_and_the_gate_baseline_of_each_and_removes_the_rest(root, capsys):
    sizes = {rid: tree_size(RootLayout(root).release(rid).dir) for rid in IDS}
    assert cli(root, "--keep", "2") == 0
    # IDS[6], IDS[5] newest; IDS[5] is IDS[6]'s baseline, IDS[4] is IDS[5]'s: one step back, no further
    assert complete_releases(root) == [IDS[6], IDS[5], IDS[4]]
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"keep    {IDS[6]}  (one of the 2 newest; published)"
    assert out[1] == f"keep    {IDS[5]}  (one of the 2 newest; the gate baseline of {IDS[6]})"
    assert out[2] == f"keep    {IDS[4]}  (the gate baseline of {IDS[5]})"
    assert out[3:7] == [f"removed {rid}  ({human(sizes[rid])})" for rid in reversed(IDS[:4])]
    assert out[-1] == f"mathindex prune: removed 4 release(s), {human(sum(sizes[r] for r in IDS[:4]))}; kept 3"
    assert not RootLayout(root).trash.exists()


def test_dry_run_lists_what_would_go_and_removes_nothing(root, capsys):
    before = sorted(p.name for p in RootLayout(root).releases.iterdir())
    assert cli(root, "--keep", "2", "--dry-run") == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in out if line.startswith("would")] == [["would", "remove", r] for r in reversed(IDS[:4])]
    assert out[-1].startswith("mathindex prune: dry run, would remove 4 release(s), ") and out[-1].endswith("; kept 3")
    assert sorted(p.name for p in RootLayout(root).releases.iterdir()) == before


def test_the_published_release_stays_however_old(root):
    publish(root, IDS[0])  # withdrawn to the first one
    prune(root, 1)
    assert complete_releases(root) == [IDS[6], IDS[5], IDS[0]]


def test_a_baseline_is_read_from_an_old_manifest_without_previous_release(tmp_path):
    root = tmp_path / "root"
    make_release(root, IDS[0])
    make_release(root, IDS[1])
    make_release(root, IDS[2], IDS[0], old_style=True)
    prune(root, 1)
    assert complete_releases(root) == [IDS[2], IDS[0]]


def test_a_served_release_stays_while_its_server_runs_and_not_after(root):
    holder = ReleaseHolder(root, IDS[1], opener=lambda path: SimpleNamespace(release_id=path.name, unavailable={}))
    [server] = servers(root)
    assert server.live and server.releases == (IDS[1],) and server.pid == os.getpid()
    assert plan(root, 1).verdicts[5].reasons == ("served (pid %d)" % os.getpid(),)
    prune(root, 1)
    assert complete_releases(root) == [IDS[6], IDS[5], IDS[1], IDS[0]]  # and IDS[0]: the served one's baseline
    holder.stop()
    assert servers(root) == []
    prune(root, 1)
    assert complete_releases(root) == [IDS[6], IDS[5]]


def test_a_swapping_server_marks_both_releases_until_the_old_one_is_let_go(root):
    publish(root, IDS[2])
    holder = ReleaseHolder(root, opener=lambda path: SimpleNamespace(release_id=path.name, unavailable={}))
    assert servers(root)[0].releases == (IDS[2],)
    publish(root, IDS[6])
    assert holder.refresh()
    assert servers(root)[0].releases == (IDS[2], IDS[6])  # requests may still run on the old one
    holder._marker.hold([holder.current.release_id])  # what the watcher does once they are done
    assert servers(root)[0].releases == (IDS[6],)
    holder.stop()


def test_a_server_that_fails_to_open_its_release_leaves_no_marker(root):
    def broken(path):
        raise OSError("unreadable")

    with pytest.raises(OSError):
        ReleaseHolder(root, IDS[3], opener=broken)
    assert servers(root) == []


def _marker(root: Path, name: str, **record) -> Path:
    folder = RootLayout(root).serving
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(json.dumps({"host": host_name(), "since": 0, **record}))
    return path


def test_stale_markers_protect_nothing_and_are_removed(root, capsys):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = _marker(root, "dead.json", pid=int(dead.stdout), start=None, release_ids=[IDS[0]])
    reused = _marker(root, "reused.json", pid=os.getpid(), start=process_start(os.getpid()) + 1, release_ids=[IDS[1]])
    assert cli(root, "--keep", "1") == 0
    assert complete_releases(root) == [IDS[6], IDS[5]]
    assert not gone.exists() and not reused.exists()
    out = capsys.readouterr().out
    assert f"is no longer running" in out and "now belongs to another process" in out


def test_a_marker_from_another_host_counts_as_live(root):
    _marker(root, "elsewhere.json", host="another-host", pid=1, start=5, release_ids=[IDS[2]])
    prune(root, 1)
    assert complete_releases(root) == [IDS[6], IDS[5], IDS[2], IDS[1]]


def test_leftovers_of_dead_runs_go_and_a_running_build_blocks_the_prune(root, capsys):
    staging = RootLayout(root).staging(IDS[6] + "-2")
    staging.mkdir()
    held, release = threading.Event(), threading.Event()

    def build():  # another run holding the root's lock (another thread: another lock file description)
        with root_lock(root):
            held.set()
            release.wait(30)

    thread = threading.Thread(target=build)
    thread.start()
    held.wait(30)
    try:
        assert cli(root, "--keep", "1") == 5  # busy: nothing removed, the live staging untouched
        assert "another release is running" in capsys.readouterr().err
        assert staging.is_dir() and len(complete_releases(root)) == 7
    finally:
        release.set()
        thread.join()
    assert cli(root, "--keep", "1", "--dry-run") == 0
    assert f"would remove {staging}  (an interrupted run's staging directory)" in capsys.readouterr().out
    assert staging.is_dir()
    assert cli(root, "--keep", "1") == 0
    assert not staging.exists()


def test_a_crash_mid_removal_leaves_no_half_release_that_looks_whole(root, monkeypatch):
    def crash(path, *args, **kwargs):
        (Path(path) / "nodes.parquet").unlink()  # part of it deleted, then the process dies
        raise KeyboardInterrupt

    monkeypatch.setattr(prune_module.shutil, "rmtree", crash)
    with pytest.raises(KeyboardInterrupt):
        prune(root, 5)  # IDS[0] goes (IDS[1] stays: the baseline of IDS[2])
    monkeypatch.undo()
    assert complete_releases(root) == IDS[:0:-1]  # IDS[0] is gone from releases/, not half there
    assert [p.name for p in RootLayout(root).trash.iterdir()] == [IDS[0]]
    lines = prune(root, 5)
    assert [path.name for path, _ in lines.leftovers] == [IDS[0]]
    assert not RootLayout(root).trash.exists()


@pytest.mark.parametrize("keep", ["0", "-1", "two", "1.5"])
def test_keep_below_one_or_not_a_number_is_exit_2(root, keep, capsys):
    assert cli(root, "--keep", keep) == 2
    assert "not a whole number of at least 1" in capsys.readouterr().err
    assert len(complete_releases(root)) == 7


def test_a_path_that_is_no_root_is_exit_2(root, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    for path, says in ((tmp_path / "empty", "is not a release root"), (RootLayout(root).release(IDS[6]).dir, "is a release, not"),
                       (tmp_path / "missing", "directory not found")):  # fmt: skip
        assert cli(path, "--keep", "1") == 2
        assert says in capsys.readouterr().err
    assert cli(root) == 2  # --keep is required
    assert "--keep" in capsys.readouterr().err


def test_an_unreadable_pointer_or_kept_manifest_removes_nothing(root, capsys):
    RootLayout(root).published.write_text("{trunc")
    assert cli(root, "--keep", "1") == 4
    assert len(complete_releases(root)) == 7
    publish(root, IDS[6])
    (RootLayout(root).release(IDS[6]).manifest).write_text("{trunc")
    assert cli(root, "--keep", "1") == 4
    assert f"cannot tell which release {IDS[6]} was gated against" in capsys.readouterr().err
    assert len(complete_releases(root)) == 7


def test_the_release_flow_prunes_only_after_publishing(root, monkeypatch):
    logged = []
    monkeypatch.setattr("mathindex.flows.finish.get_run_logger",
                        lambda: SimpleNamespace(info=logged.append, error=logged.append))
    failed = ReleaseOutcome(release_dir=RootLayout(root).release(IDS[6]).dir, passed=False, gate={})
    assert prune_after_publish(root, 1, failed) == [] and len(complete_releases(root)) == 7
    passed = ReleaseOutcome(release_dir=RootLayout(root).release(IDS[6]).dir, passed=True, gate={})
    assert prune_after_publish(root, None, passed) == [] and len(complete_releases(root)) == 7
    assert prune_after_publish(root, 1, passed) == [f"pruned release {rid} (keep 1)" for rid in reversed(IDS[:5])]
    assert logged == [f"pruned release {rid} (keep 1)" for rid in reversed(IDS[:5])]
    (RootLayout(root).release(IDS[6]).manifest).write_text("{trunc")  # a failing prune: logged, not raised
    [line] = prune_after_publish(root, 1, passed)
    assert line.startswith(f"prune --keep 1 failed after publishing {IDS[6]}: cannot tell which release")


@pytest.mark.e2e
def test_a_running_mathindex_serve_keeps_its_release_and_removes_its_marker_on_sigterm(sample_release_root, tmp_path):
    root = copy_root(sample_release_root, tmp_path / "root")
    [rid] = complete_releases(root)
    older = "20000101T000000Z-00000000"  # older than the sample and no one's baseline: only the server keeps it
    clone_release(root, rid, older)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "mathindex", "serve", str(root), "--release", older, "--port",
                             str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        [server] = servers(root)
        assert (server.pid, server.releases, server.live) == (proc.pid, (older,), True)
        prune(root, 1)
        assert complete_releases(root) == [rid, older]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(60)
        finally:
            proc.kill()
    assert code == 128 + signal.SIGTERM, proc.stderr.read()[-2000:]
    assert servers(root) == []
    prune(root, 1)
    assert complete_releases(root) == [rid]
