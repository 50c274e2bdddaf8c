"""The deployments' operations against a real Prefect server (the session's harness): `prefect deploy
--all` from prefect.yaml, then what the server stores and does. Overlapping runs of a deployment
queue (concurrency limit 1, ENQUEUE) instead of failing on the root's lock; and the failure
notification of docs/deployment.md (`mathindex.flows.automation`) is created, read back, and fired
by a flow run of the nightly deployment that ends Failed, a local HTTP receiver getting the POST.

No worker runs here: the flow runs are moved through their states with the client, as a worker
would move them (Pending, Running, then Completed or Failed); the server applies its own
orchestration rules and emits its own events, which is what these settings act on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate
from prefect.exceptions import ObjectNotFound
from prefect.settings import PREFECT_API_URL
from prefect.states import Completed, Failed, Pending, Running
from prefect.workers.process import ProcessWorker

from mathindex.flows import automation

REPO = Path(__file__).resolve().parents[1]
DEPLOYMENTS = ("release/nightly-release", "reembed/reembed")
FIRE_TIMEOUT_S = 120  # the event goes through the server's trigger and action services


@pytest.fixture(scope="module")
def deployed(prefect_harness, tmp_path_factory) -> str:
    """Both deployments registered on the harness's server by `prefect deploy --all`, as an
    operator registers them; the server's API URL."""
    api = PREFECT_API_URL.value()
    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool("mathindex")
        except ObjectNotFound:
            client.create_work_pool(WorkPoolCreate(name="mathindex", type="process",
                                                   base_job_template=ProcessWorker.get_default_base_job_template()))
    env = {**os.environ, "PREFECT_API_URL": api, "MATHINDEX_OUT": str(tmp_path_factory.mktemp("deployed-root")),
           "MATHINDEX_HOME": str(REPO), "PYTHONPATH": str(REPO)}  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "prefect", "--no-prompt", "deploy", "--all"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return api


def _state(client, run_id, state):
    return client.set_flow_run_state(run_id, state).state


def test_each_deployment_stores_a_queueing_concurrency_limit_of_one(deployed):
    for name in DEPLOYMENTS:
        stored = httpx.get(f"{deployed}/deployments/name/{name}", timeout=30).json()
        limit = stored["global_concurrency_limit"]  # the server's record (`concurrency_limit` is its deprecated, always-null alias)
        assert (limit["limit"], limit["active"], limit["name"]) == (1, True, f"deployment:{stored['id']}"), limit
        assert stored["concurrency_options"]["collision_strategy"] == "ENQUEUE", stored["concurrency_options"]


def test_a_second_nightly_run_waits_for_the_first_instead_of_failing(deployed):
    with get_client(sync_client=True) as client:
        nightly = client.read_deployment_by_name(DEPLOYMENTS[0])
        first, second = (client.create_flow_run_from_deployment(nightly.id) for _ in range(2))
        assert _state(client, first.id, Pending()).type.value == "PENDING"  # the first takes the one slot
        queued = _state(client, second.id, Pending())
        assert (queued.type.value, queued.name) == ("SCHEDULED", "AwaitingConcurrencySlot")  # queued, not failed
        assert client.read_flow_run(second.id).state.name == "AwaitingConcurrencySlot"
        _state(client, first.id, Running())
        _state(client, first.id, Completed())
        assert _state(client, second.id, Pending()).type.value == "PENDING"  # its turn, once the first ended
        _state(client, second.id, Running())
        _state(client, second.id, Completed())


class _Receiver(BaseHTTPRequestHandler):
    """Records each POST's JSON body on the server object."""

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.received.append(json.loads(body or b"{}"))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_a_failed_nightly_run_sends_the_documented_notification(deployed, receiver, capsys):
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    assert automation.main(["--url", url]) == 0
    name = automation.automation_name(DEPLOYMENTS[0])
    with get_client(sync_client=True) as client:
        try:
            stored = client.read_automations_by_name(name)
            assert len(stored) == 1 and capsys.readouterr().out.strip() == f"automation {stored[0].id}: {name}"
            nightly = client.read_deployment_by_name(DEPLOYMENTS[0])
            trigger, [action] = stored[0].trigger, stored[0].actions
            assert trigger.expect == {"prefect.flow-run.Failed"} and trigger.posture.value == "Reactive"
            assert trigger.threshold == 1
            assert trigger.match_related.model_dump() == {"prefect.resource.id": f"prefect.deployment.{nightly.id}",
                                                          "prefect.resource.role": "deployment"}  # fmt: skip
            assert action.type == "send-notification" and "{{ flow_run.state.message }}" in action.body
            block = client.read_block_document(action.block_document_id)
            assert block.name == automation.BLOCK_NAME and block.data["url"] == url

            assert automation.main(["--url", url]) == 0  # run again: replaced, not doubled
            assert len(client.read_automations_by_name(name)) == 1

            run = client.create_flow_run_from_deployment(nightly.id)
            _state(client, run.id, Pending())
            _state(client, run.id, Running())
            message = "gate failed: sample/ndcg@10 fell 14.85 points (88.30 -> 73.45)"
            assert _state(client, run.id, Failed(message=message)).type.value == "FAILED"
            deadline = time.monotonic() + FIRE_TIMEOUT_S
            while not receiver.received and time.monotonic() < deadline:
                time.sleep(0.5)
            assert receiver.received, f"no notification within {FIRE_TIMEOUT_S} s"
            [sent] = receiver.received
            assert sent["subject"] == f"mathindex: nightly-release run {run.name} failed"
            assert sent["body"] == (f"Flow run {run.name} ({run.id}) of deployment nightly-release ended Failed: "
                                    f"{message}")
        finally:  # the session's other flow runs must not fire it
            for old in client.read_automations_by_name(name):
                client.delete_automation(old.id)
            client.delete_block_document(client.read_block_document_by_name(
                automation.BLOCK_NAME, "custom-webhook").id)


def test_the_automation_refuses_a_bad_url_and_an_unknown_deployment(deployed, capsys):
    assert automation.main(["--url", "file:///etc/passwd"]) == 1
    assert "not an http(s) URL" in capsys.readouterr().err
    assert automation.main(["--url", "http://127.0.0.1:9/x", "--deployment", "release/no-such", "--block-name",
                            "mathindex-test-unknown"]) == 1
    assert capsys.readouterr().err.startswith("mathindex automation: error:")
    with get_client(sync_client=True) as client:
        assert client.read_automations_by_name(automation.automation_name("release/no-such")) == []
        with pytest.raises(ObjectNotFound):  # the deployment is checked before the block is saved
            client.read_block_document_by_name("mathindex-test-unknown", "custom-webhook")
