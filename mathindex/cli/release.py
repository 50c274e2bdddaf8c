"""`mathindex release` (the release flow) and `mathindex reembed` (a new release re-embedding every
text of another): both write a release under ROOT's lock and end on the gate's verdict."""

from __future__ import annotations

import argparse
from pathlib import Path

from prefect.task_runners import ThreadPoolTaskRunner

from mathindex.cli.exits import EXIT_GATE, EXIT_OK, UsageError
from mathindex.cli.release_arg import resolved_release
from mathindex.embed.models import ModelError, resolve_model
from mathindex.evaluation.gate import NOT_GATED, MetricCheck
from mathindex.flows.finish import ReleaseOutcome
from mathindex.flows.logs import quiet_flow_errors
from mathindex.flows.recipe import resolve_recipe
from mathindex.flows.reembed import reembed_flow
from mathindex.flows.release import cluster_runner, release_flow, resolve_informaliser, resolve_inputs
from mathindex.flows.server import tie_temporary_server
from mathindex.store.lock import root_lock


def run(args: argparse.Namespace) -> int:
    return reembed(args) if args.command == "reembed" else release(args)


def release(args: argparse.Namespace) -> int:
    sources = str(args.sources) if args.sources else None
    try:  # bad inputs fail here, in a second, before Prefect starts
        resolve_inputs(sources, args.lean, args.latex, args.suite)
        resolve_informaliser(sources, args.lean, args.latex, args.informaliser)
        resolve_recipe(sources, args.lean, args.latex, args.model)
    except ValueError as exc:
        raise UsageError(f"mathindex release: {' '.join(str(exc).split())}") from None
    check_model("release", args.model, args.out)
    if args.dask_address and args.runner != "dask":
        raise UsageError("mathindex release: --dask-address needs --runner dask")
    flow = release_flow.with_options(task_runner=ThreadPoolTaskRunner())  # not $MATHINDEX_DASK_ADDRESS's
    if args.runner == "dask":
        from prefect_dask import DaskTaskRunner  # loads dask.distributed (~0.3 s), needed by --runner dask only

        runner = cluster_runner(args.dask_address) or DaskTaskRunner(cluster_kwargs={"n_workers": 2, "threads_per_worker": 1})
        flow = release_flow.with_options(task_runner=runner)
    state = _run_locked(args.out, args.wait, flow, out=str(args.out), sources_file=sources,
                        lean=[str(d) for d in args.lean], latex=[str(d) for d in args.latex],
                        suites=[str(s) for s in args.suite], model=args.model, no_gate=args.no_gate,
                        precision=args.precision, informaliser=args.informaliser, keep=args.keep)
    return _report_release(_outcome_of(state))


def reembed(args: argparse.Namespace) -> int:
    source = resolved_release(args)
    check_model("reembed", args.model, args.out)
    state = _run_locked(args.out, args.wait, reembed_flow, release=str(source), model=args.model, out=str(args.out),
                        no_gate=args.no_gate, precision=args.precision)
    return _report_release(_outcome_of(state))


def check_model(verb: str, spec: str | None, root: Path) -> None:
    """The model `spec` names for releases under `root` (no --model: the last published release's
    model, else the bundled one) must resolve to a directory with weights; checked before Prefect
    starts, writing nothing (`embed.models.resolve_model`)."""
    try:
        resolve_model(spec, root)
    except ModelError as exc:
        raise UsageError(f"mathindex {verb}: {' '.join(str(exc).split())}") from None


def _run_locked(root: Path, wait_s: float, flow, **params):
    """The final state of a release-writing flow run under ROOT's lock, taken here before Prefect
    starts (RootBusy, exit 5, in a second), with Prefect's temporary server tied to this process."""
    with root_lock(root, wait_s):
        tie_temporary_server()
        with quiet_flow_errors():
            return flow(**params, return_state=True)


def _outcome_of(state) -> ReleaseOutcome:
    """The ReleaseOutcome a release-writing flow's final state carries: Completed (gate passed) or
    Failed with the outcome as data (gate failed); any other failure is raised as its exception."""
    result = state.result(raise_on_failure=False)
    if isinstance(result, BaseException):
        raise result
    if not isinstance(result, ReleaseOutcome):
        raise RuntimeError(state.message or f"flow run ended {state.type.value} without a release")
    return result


def _report_release(outcome: ReleaseOutcome) -> int:
    """The release directory, each reason the gate failed (also what an ungated gate would have
    said) and the verdict: exit 0 when published (gate passed, or --no-gate), else 3."""
    print(f"release: {outcome.release_dir}")
    for problem in outcome.gate.get("problems", []):
        print(f"  FAIL {problem}")
    for c in outcome.gate["checks"]:
        if not c["ok"]:
            print(f"  FAIL {MetricCheck(**c).reason()}")
    gated = outcome.gate.get("gated", True)
    print(f"gate: {NOT_GATED if not gated else 'passed' if outcome.passed else 'FAILED'}")
    return EXIT_OK if outcome.passed else EXIT_GATE
