"""Two small LaTeX extractions on threads at once (as Prefect's thread pool runs them) must give
the same tables as each alone: in-process extraction state is per thread."""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mathindex.latex import extract_latex_tree

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"


def _run(args):
    root, corpus = args
    ex = extract_latex_tree(root, corpus)
    return ex.statements.num_rows, sorted(t for t in ex.statements.column("tag").to_pylist() if t)


def test_concurrent_extractions_do_not_share_state():
    jobs = [(SAMPLE / "latex", "sample-latex"), (SAMPLE / "xml", "sample-wiki")] * 3
    alone = [_run(j) for j in jobs[:2]]
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(_run, jobs))
    assert together == alone * 3
    assert len(alone[0][1]) >= 25  # the sample's tags file reaches its statements
