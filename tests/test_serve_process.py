"""`mathindex serve` as its own process: it runs under glibc's malloc (PYTHONMALLOC=malloc, which
the interpreter reads only at start), so a hot swap's freed memory goes back to the OS."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.serving import copy_root, free_port, get_json

pytestmark = pytest.mark.e2e


def _environ(pid: int) -> dict[str, str]:
    raw = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


@pytest.mark.parametrize("preset", [None, "pymalloc"])
def test_serve_reruns_itself_under_system_malloc_unless_told_otherwise(sample_release_root, tmp_path, preset):
    root = copy_root(sample_release_root, tmp_path / "root")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONMALLOC"}
    if preset:
        env["PYTHONMALLOC"] = preset
    proc = subprocess.Popen([sys.executable, "-m", "mathindex", "serve", str(root), "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the server did not answer /health"
            try:
                if get_json(port, "/health", 5)[0] == 200:
                    break
            except (OSError, ValueError):
                time.sleep(0.5)
        assert _environ(proc.pid).get("PYTHONMALLOC") == (preset or "malloc")  # same pid: replaced, not forked
        assert get_json(port, "/search?q=prime&k=3")[0] == 200
    finally:
        proc.terminate()
        proc.wait(30)
