"""The operator's walkthrough, as docs/deployment.md "Step by step" tells it:
a Prefect server on 127.0.0.1 (a free port, its own PREFECT_HOME), a process work pool, `prefect
deploy --all` from prefect.yaml (refused first without MATHINDEX_OUT), a worker, the nightly
deployment triggered by hand, and the release that comes out checked: published, every file
matching its manifest (`mathindex verify`), the notes and metrics attached as artifacts.

Every step is bounded (WALKTHROUGH_TIMEOUT_S in all, default 1500 s: on 2 cores at load 7-11 the
server took 3 min to answer and the first ONNX export of the model 6 min) and every process it starts is stopped, with its process group, at the
end, whatever happened."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[1]
TOTAL_S = float(os.environ.get("WALKTHROUGH_TIMEOUT_S", "1500"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Operator:
    """Runs `prefect …` commands as an operator would, each in its own process group, within one
    deadline; `stop` ends every process it started (SIGINT, then SIGTERM, then SIGKILL)."""

    def __init__(self, env: dict[str, str], logs: Path, total_s: float):
        self.env, self.logs, self.deadline = env, logs, time.monotonic() + total_s
        self.started: list[tuple[subprocess.Popen, object]] = []

    def left(self, cap: float) -> float:
        left = self.deadline - time.monotonic()
        if left <= 1:
            pytest.fail(f"the walkthrough ran past its {TOTAL_S:.0f} s")
        return min(cap, left)

    def run(self, *args: str, cap: float = 300, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "prefect", *args], cwd=REPO, env={**self.env, **env},
                              capture_output=True, text=True, timeout=self.left(cap), start_new_session=True)

    def start(self, name: str, *args: str) -> subprocess.Popen:
        out = open(self.logs / f"{name}.log", "w")
        proc = subprocess.Popen([sys.executable, "-m", "prefect", *args], cwd=REPO, env=self.env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        self.started.append((proc, out))
        return proc

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def stop(self) -> None:
        for proc, out in reversed(self.started):
            for sig, wait_s in ((signal.SIGINT, 20), (signal.SIGTERM, 10), (signal.SIGKILL, 10)):
                if proc.poll() is not None:
                    break
                try:
                    os.killpg(proc.pid, sig)  # the worker's flow-run children are in its group
                except ProcessLookupError:
                    break
                try:
                    proc.wait(wait_s)
                except subprocess.TimeoutExpired:
                    continue
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # whatever it left in its group
            except ProcessLookupError:
                pass
            out.close()


def wait_healthy(op: Operator, api: str, server: subprocess.Popen) -> None:
    while True:
        if server.poll() is not None:
            pytest.fail(f"prefect server exited {server.returncode}: {op.log('server')[-2000:]}")
        try:
            if httpx.get(f"{api}/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(min(2.0, op.left(2.0)))


@pytest.fixture
def operator(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update({
        "PREFECT_HOME": str(tmp_path / "prefect-home"),  # its own database, settings and results
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
        "MATHINDEX_HOME": str(REPO),  # the pull step: the checkout the worker imports the flows from
        "MATHINDEX_OUT": str(tmp_path / "root"),
        "PYTHONPATH": str(REPO),  # this checkout's mathindex, also in the worker's flow-run processes
    })  # fmt: skip
    (tmp_path / "logs").mkdir()
    op = Operator(env, tmp_path / "logs", TOTAL_S)
    op.port, op.api, op.root = port, env["PREFECT_API_URL"], tmp_path / "root"
    try:
        yield op
    finally:
        op.stop()
    for proc, _ in op.started:
        assert proc.poll() is not None, f"process {proc.args} still running"


@pytest.mark.e2e
def test_operator_walkthrough(operator):
    op = operator
    server = op.start("server", "server", "start", "--host", "127.0.0.1", "--port", str(op.port))
    wait_healthy(op, op.api, server)

    pool = op.run("work-pool", "create", "mathindex", "--type", "process")
    assert pool.returncode == 0, pool.stdout + pool.stderr

    refused = op.run("--no-prompt", "deploy", "--all", MATHINDEX_OUT="")  # the build step refuses it
    assert refused.returncode != 0
    assert "the release root (`out`) is empty" in refused.stdout + refused.stderr
    assert httpx.post(f"{op.api}/deployments/filter", json={}, timeout=30).json() == []  # nothing registered

    deployed = op.run("--no-prompt", "deploy", "--all")
    assert deployed.returncode == 0, deployed.stdout[-3000:] + deployed.stderr[-3000:]
    names = {d["name"] for d in httpx.post(f"{op.api}/deployments/filter", json={}, timeout=30).json()}
    assert names == {"nightly-release", "reembed"}
    nightly = httpx.get(f"{op.api}/deployments/name/release/nightly-release", timeout=30).json()
    assert nightly["parameters"]["out"] == str(op.root)
    assert [s["schedule"]["cron"] for s in nightly["schedules"]] == ["0 2 * * *"]
    limit = nightly["global_concurrency_limit"]  # one run at a time, a second one queued (tests/test_deployment_ops.py)
    assert (limit["limit"], nightly["concurrency_options"]["collision_strategy"]) == (1, "ENQUEUE")

    worker = op.start("worker", "worker", "start", "--pool", "mathindex")
    run = op.run("deployment", "run", "release/nightly-release", "--watch", "--watch-timeout", str(int(op.left(1200))),
                 cap=1200)
    assert worker.poll() is None, op.log("worker")[-3000:]
    assert run.returncode == 0, run.stdout[-3000:] + op.log("worker")[-3000:]
    assert "Flow run finished successfully in 'Completed'" in run.stdout

    published = json.loads((op.root / "published.json").read_text())["release_id"]
    release = op.root / "releases" / published
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["published"] is True and manifest["gate"]["passed"] is True
    assert manifest["row_counts"]["declarations"] > 0
    verify = subprocess.run([sys.executable, "-m", "mathindex", "verify", str(op.root)], cwd=REPO, env=op.env,
                            capture_output=True, text=True, timeout=op.left(120))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert verify.stdout.startswith(f"release {published}: {len(manifest['files'])} files match the manifest")

    runs = httpx.post(f"{op.api}/flow_runs/filter", json={}, timeout=30).json()
    done = [r for r in runs if r["deployment_id"] == nightly["id"] and r["state_type"] == "COMPLETED"]
    assert len(done) == 1
    artifacts = httpx.post(f"{op.api}/artifacts/filter", json={}, timeout=30).json()
    keys = {a["key"] for a in artifacts if a["flow_run_id"] == done[0]["id"]}
    assert {"release-notes-sample", "metrics-sample"} <= keys
    worker_log = op.log("worker")
    assert "release: 12/12 publish" in worker_log  # the stage lines, plain: no terminal, no carriage returns
    assert "\r" not in worker_log
    logs = httpx.post(f"{op.api}/logs/filter", timeout=30, json={
        "logs": {"flow_run_id": {"any_": [done[0]["id"]]}}, "sort": "TIMESTAMP_DESC", "limit": 200}).json()
    messages = [entry["message"] for entry in logs]
    assert any(m.startswith("release: 4/12 embed ") for m in messages)  # stage timings in the flow run's logs
    assert any(m.startswith("release: 12/12 publish ") for m in messages)

    # A gate failure under the worker: the published release's headline raised past what the sample
    # reaches (a new file renamed over the old one), the nightly triggered again: a Failed flow run
    # whose message names the metric and its drop, and nothing published.
    metrics_file = release / "bench" / "metrics.json"
    metrics = json.loads(metrics_file.read_text())
    metrics["headline"] = {k: min(100.0, v + 10.0) for k, v in metrics["headline"].items()}
    (release / "bench" / "metrics.json.new").write_text(json.dumps(metrics))
    os.replace(release / "bench" / "metrics.json.new", metrics_file)
    failed = op.run("deployment", "run", "release/nightly-release", "--watch", "--watch-timeout",
                    str(int(op.left(900))), cap=900)
    assert failed.returncode != 0, failed.stdout[-3000:]
    runs = httpx.post(f"{op.api}/flow_runs/filter", json={}, timeout=30).json()
    bad = [r for r in runs if r["deployment_id"] == nightly["id"] and r["state_type"] == "FAILED"]
    assert len(bad) == 1, [r["state_type"] for r in runs]
    assert "sample/ndcg@10 fell" in bad[0]["state"]["message"], bad[0]["state"]["message"]
    assert json.loads((op.root / "published.json").read_text())["release_id"] == published
