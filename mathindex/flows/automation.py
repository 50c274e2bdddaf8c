"""A Prefect automation that sends a notification when a flow run of a mathindex deployment ends
Failed (a failing gate, a broken stage): a webhook notification block, and an automation whose event
trigger is `prefect.flow-run.Failed` of that deployment and whose action is SendNotification. Run
`python -m mathindex.flows.automation --url URL` against the server PREFECT_API_URL names;
docs/deployment.md walks through it."""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from urllib.parse import urlsplit
from uuid import UUID

from prefect.automations import Automation, EventTrigger, Posture, ResourceSpecification, SendNotification
from prefect.blocks.notifications import CustomWebhookNotificationBlock
from prefect.client.orchestration import get_client

DEPLOYMENT = "release/nightly-release"
BLOCK_NAME = "mathindex-failures"
FAILED_EVENT = "prefect.flow-run.Failed"
# Jinja templates the server renders when the automation fires (the flow run, its deployment, its state)
SUBJECT = "mathindex: {{ deployment.name }} run {{ flow_run.name }} failed"
BODY = ("Flow run {{ flow_run.name }} ({{ flow_run.id }}) of deployment {{ deployment.name }} ended "
        "{{ flow_run.state.name }}: {{ flow_run.state.message }}")
# what the webhook block POSTs: the rendered subject and body as JSON
WEBHOOK_JSON = {"subject": "{{subject}}", "body": "{{body}}"}


def automation_name(deployment: str) -> str:
    return f"mathindex: {deployment} failed"


def failure_trigger(deployment_id: UUID) -> EventTrigger:
    """Fires once for each `prefect.flow-run.Failed` event related to the deployment: each flow
    run of it that ends Failed, as the server records it."""
    return EventTrigger(
        expect={FAILED_EVENT},
        match_related=ResourceSpecification({"prefect.resource.id": f"prefect.deployment.{deployment_id}",
                                             "prefect.resource.role": "deployment"}),
        posture=Posture.Reactive, threshold=1, within=timedelta(0),
    )  # fmt: skip


def webhook_block(url: str, name: str = BLOCK_NAME) -> UUID:
    """A CustomWebhookNotificationBlock POSTing `WEBHOOK_JSON` to `url`, saved (replacing one of the
    same name); its block document id. ValueError for a URL that is not http(s)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an http(s) URL: {url!r}")
    block = CustomWebhookNotificationBlock(name=name, url=url, method="POST", json_data=dict(WEBHOOK_JSON))
    return block.save(name, overwrite=True)


def deployment_id(deployment: str) -> UUID:
    """The id of a registered deployment, `flow/deployment`; Prefect's ObjectNotFound otherwise."""
    with get_client(sync_client=True) as client:
        return client.read_deployment_by_name(deployment).id


def create_failure_notification(block_document_id: UUID, deployment: str = DEPLOYMENT) -> Automation:
    """The automation for `deployment` (`flow/deployment`, which must be registered), created on the
    server; an automation of the same name is replaced, so running this again changes it rather
    than adding a second one."""
    name = automation_name(deployment)
    target = deployment_id(deployment)
    with get_client(sync_client=True) as client:
        for old in client.read_automations_by_name(name):
            client.delete_automation(old.id)
    automation = Automation(
        name=name, description=f"A notification for each flow run of {deployment} that ends Failed",
        trigger=failure_trigger(target),
        actions=[SendNotification(block_document_id=block_document_id, subject=SUBJECT, body=BODY)],
    )  # fmt: skip
    return automation.create()


def saved_block_id(slug: str) -> UUID:
    """The block document id of a saved notification block, `block-type/name`
    (`slack-webhook/ops`): ValueError in one line when there is none."""
    block_type, _, name = slug.partition("/")
    if not block_type or not name:
        raise ValueError(f"give a saved block as block-type/name, not {slug!r}")
    with get_client(sync_client=True) as client:
        return client.read_block_document_by_name(name=name, block_type_slug=block_type).id


def main(argv: list[str] | None = None) -> int:
    """The command line: the deployment checked, a webhook block for --url (or a saved --block),
    then the automation; 1 with one line on stderr when any of it fails."""
    p = argparse.ArgumentParser(prog="python -m mathindex.flows.automation",
                                description="Notify when a flow run of a mathindex deployment ends Failed.")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--url", help="a webhook URL: a CustomWebhookNotificationBlock POSTs {subject, body} as JSON there")
    target.add_argument("--block", help="a saved notification block instead, as block-type/name (e.g. slack-webhook/ops)")
    p.add_argument("--deployment", default=DEPLOYMENT, help=f"flow/deployment (default {DEPLOYMENT})")
    p.add_argument("--block-name", default=BLOCK_NAME, help=f"the webhook block's name (default {BLOCK_NAME})")
    args = p.parse_args(argv)
    try:
        deployment_id(args.deployment)  # before anything is saved
        block_id = webhook_block(args.url, args.block_name) if args.url else saved_block_id(args.block)
        automation = create_failure_notification(block_id, args.deployment)
    except Exception as exc:  # noqa: BLE001 - one line for an operator: a bad URL, an unknown deployment or block, no server
        print(f"mathindex automation: error: {' '.join(str(exc).split()) or type(exc).__name__}", file=sys.stderr)
        return 1
    print(f"automation {automation.id}: {automation.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
