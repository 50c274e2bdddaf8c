"""Scale benchmark: releases of a synthetic corpus k times a base (renamed copies of Mathlib and the
Stacks Project, bench/common/scale_corpus.py), each cold in a fresh root, with the one-layer test
embedder (tests/models.py cut_minilm) and --no-gate, so the plumbing is measured and not the model.

    python -m bench.scale --fraction 0.02 --ks 1,3,10 --work build/h-scale   # a seeded 2 % of the base
    python -m bench.scale --sample --ks 1,2 --work /tmp/scale                  # the bundled sample as base

Per k it reports each stage's seconds (the manifest's stages.seconds) and peak memory, the release
process's wall and CPU seconds, the vector index (rebuilt from the root's embedding cache: build
seconds, file size, same bytes as the release's, recall@10 of the release's index against exact
search, FAISS IndexFlatIP, on a seeded sample of its vectors), the lexical index, the DuckDB file and
the serving RSS (a process that opens the release as `mathindex serve` does and answers a few
queries). Then the growth exponent per stage: the least-squares slope of log seconds on log k
(target <= 1.1; stages above it are flagged). Prints Markdown tables with the CPU model; --json
writes everything.

Each k's figures are saved in WORK/k<k>.json with the run key they were measured under (CPU, base
share and seed, code); a later run with the same key takes them from there (`--fresh` measures
again), so the whole-corpus benchmark, hours per k, can be spread over several sittings.

Memory: "peak RSS" is the largest single process of the release (the flow process or one of its
workers; ru_maxrss from wait4, which covers the reaped descendants); "peak tree RSS" is the sum of
RSS over the release's process tree, sampled from /proc every 0.5 s; a stage's peak is the tree's
peak between the end of the stage before it and its own end (the CLI's progress lines). Run it under
`nice -n 10` on a shared machine: wall seconds are then upper bounds, CPU seconds are given beside.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

from bench.common.machine import cpu_model
from bench.common.scale_corpus import COPY_MARK, link_corpus, select_base, write_copies
from mathindex.embed.embedder import EMBED_BACKEND, EmbeddingCache, SentenceTransformerEmbedder
from mathindex.embed.texts import embedded_texts
from mathindex.embed.truth import exact_neighbours
from mathindex.embed.vector_index import INDEX_FILE, VectorIndex, content_key, embedder_info
from mathindex.flows.progress import status_mb
from mathindex.sources import PACKAGE_ROOT, read_sources_file
from mathindex.store.layout import ReleaseLayout, RootLayout
from mathindex.store.releases import published_release
from tests.models import cut_minilm

BASE_SOURCES = PACKAGE_ROOT / "bench" / "sources" / "mathlib-stacks.yaml"
SAMPLE = PACKAGE_ROOT / "data" / "sample"
TARGET = 1.1  # the bound on a stage's growth exponent
NOISE_S = 1.0  # a stage under this many seconds at the largest k: its exponent is noise, not flagged
RECALL_QUERIES, RECALL_SEED, RECALL_K = 1000, 1, 10  # another sample than the build's (seed 0)
PROBE_QUERIES = ("continuous function on a compact space", "prime number", "x^2 + y^2", "ring homomorphism")
STAGE_LINE = re.compile(r"^release: \d+/\d+ (?P<stage>.+?) (?P<seconds>\d+\.\d+) s$")
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "DO_NOT_TRACK": "1",
       "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120", "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
       "PREFECT_LOGGING_LEVEL": "WARNING"}


@dataclass
class Measured:
    """A child process's figures: wall and CPU seconds, its largest process's peak RSS (wait4), the
    tree's sampled peak RSS, each stage's peak tree RSS and CPU seconds, its exit status and the
    tail of its output."""

    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    peak_tree_mb: float
    peak_tree_anon_mb: float
    stage_peak_mb: dict[str, float]
    stage_peak_anon_mb: dict[str, float]
    stage_cpu_s: dict[str, float]
    returncode: int
    tail: str


TICK_S = 1 / os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_usage(pid: int) -> tuple[float, float, float]:
    """(RSS MB, anonymous RSS MB, CPU seconds) of `pid` and every process below it: RSS summed over
    the live ones, CPU their user + system time with that of the children they reaped (/proc/<p>/stat)."""
    stats: dict[int, list[str]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                text = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            stats[int(entry.name)] = text[text.rfind(")") + 2 :].split()
    children: dict[int, list[int]] = {}
    for p, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(p)
    rss = anon = cpu = 0.0
    todo = [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, ()))
        fields = stats.get(p)
        if fields is not None:
            cpu += sum(int(f) for f in fields[11:15]) * TICK_S  # utime, stime, cutime, cstime
            rss += int(fields[21]) * PAGE / 2**20
            anon += status_mb("RssAnon", p) or 0  # without mapped files, such as the flow's tables (tasks/spill.py)
    return rss, anon, cpu


def per_stage(samples: list[tuple[float, float, float, float]], ends: list[tuple[float, str]]) -> tuple[dict, dict, dict]:
    """(stage -> peak tree RSS MB, stage -> peak tree anonymous RSS MB, stage -> CPU seconds) from
    samples (time, RSS, anonymous RSS, CPU) and the times the stages ended: a stage is the span since
    the end of the one before; after the last, "finish"."""
    peak: dict[str, float] = {}
    anon: dict[str, float] = {}
    cpu: dict[str, float] = {}
    start, before = float("-inf"), samples[0][3] if samples else 0.0
    for end, name in [*ends, (float("inf"), "finish")]:
        inside = [s for s in samples if start < s[0] <= end]
        if inside:
            peak[name] = max(s[1] for s in inside)
            anon[name] = max(s[2] for s in inside)
            cpu[name] = round(max(inside[-1][3] - before, 0.0), 2)
            before = inside[-1][3]
        start = end
    return peak, anon, cpu


def measure(cmd: list[str], env: dict, interval_s: float = 0.5) -> Measured:
    """Runs `cmd`, sampling its process tree's RSS and CPU and reading its progress lines as they
    come; the largest process's peak and the total CPU seconds come from wait4's rusage."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    samples: list[tuple[float, float, float, float]] = []
    ends: list[tuple[float, str]] = []
    lines: list[str] = []
    stop = threading.Event()

    def read() -> None:
        for line in proc.stdout:
            lines.append(line)
            m = STAGE_LINE.match(line.strip())
            if m:
                ends.append((time.perf_counter(), m.group("stage")))

    def sample() -> None:
        while not stop.wait(interval_s):
            samples.append((time.perf_counter(), *tree_usage(proc.pid)))

    threads = [threading.Thread(target=read), threading.Thread(target=sample)]
    for t in threads:
        t.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    stop.set()
    for t in threads:
        t.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    samples.append((time.perf_counter(), 0.0, 0.0, cpu))  # the end: every process reaped, the total known
    peak, anon, stage_cpu = per_stage(samples, ends)
    return Measured(wall, cpu, usage.ru_maxrss / 1024, max((s[1] for s in samples), default=0.0),
                    max((s[2] for s in samples), default=0.0), peak, anon, stage_cpu, proc.returncode,
                    "".join(lines[-40:]))


def stage_figures(manifest: dict, field: str = "seconds") -> dict[str, float]:
    """A manifest's `stages.seconds` or `stages.peak_rss_mb` ("pin 0.01, extract 0.14, formal index
    0.06, ...") as a dict; empty when the manifest has no such field."""
    out = {}
    text = manifest.get("stages", {}).get(field) or ""
    for part in filter(None, text.split(", ")):
        name, _, seconds = part.rpartition(" ")
        out[name] = float(seconds)
    return out


def exponent(ks: list[int], values: list[float]) -> float | None:
    """The least-squares slope of log value on log k (None with fewer than two positive points)."""
    pts = [(k, v) for k, v in zip(ks, values) if v and v > 0]
    if len(pts) < 2 or len({k for k, _ in pts}) < 2:
        return None
    x, y = np.log([k for k, _ in pts]), np.log([v for _, v in pts])
    return float(np.polyfit(x, y, 1)[0])


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0


def exact_top_scores(vectors: np.ndarray, queries: np.ndarray, k: int, block: int = 262_144) -> np.ndarray:
    """The exact top-k inner products of each query over every vector, descending: IndexFlatIP over
    blocks of `block` vectors (one block's copy in memory at a time, not all of them), merged."""
    best = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    for start in range(0, len(vectors), block):
        scores, _ = exact_neighbours(vectors[start : start + block], queries, min(k, len(vectors) - start))
        best = -np.sort(-np.concatenate([best, scores], axis=1), axis=1)[:, :k]
    return best


def vector_figures(release: Path, cache_dir: Path, manifest: dict, work: Path) -> dict:
    """The vector index rebuilt from the root's embedding cache as the release built it (seconds,
    same bytes), its file size, and recall@10 of the release's index against exact search
    (IndexFlatIP over the same vectors) on RECALL_QUERIES seeded rows, each query's own row left
    out; a returned row counts when its exact score reaches the 10th exact score (ties count)."""
    texts = embedded_texts(pq.read_table(ReleaseLayout(release).table("embedding_texts"))).sort_by("text_id")
    info = embedder_info(manifest["embedder"])
    cache = EmbeddingCache(cache_dir, info["name"], info["revision"], info["dim"])
    raw = np.frombuffer(bytes.fromhex("".join(texts.column("sha256").to_pylist())), dtype="S32")
    uniq, inverse = np.unique(raw, return_inverse=True)
    found, vecs = cache.lookup(uniq)
    if not found.all():
        raise SystemExit(f"{int((~found).sum())} vectors of {release} are not in {cache_dir}")
    vectors = np.ascontiguousarray(vecs[inverse.reshape(-1)], dtype=np.float32)
    ids, shas = texts.column("text_id").to_numpy(), texts.column("sha256").to_pylist()
    out = work / "vector-rebuild"
    shutil.rmtree(out, ignore_errors=True)
    t0, c0 = time.perf_counter(), time.process_time()
    VectorIndex.build(vectors, ids, info, out, content_key=content_key(texts, info, {}), shas=shas)
    build_s, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    built = ReleaseLayout(release).vector / INDEX_FILE
    same = (out / INDEX_FILE).read_bytes() == built.read_bytes()
    shutil.rmtree(out, ignore_errors=True)
    index = VectorIndex.open(ReleaseLayout(release).vector, info)
    rng = np.random.default_rng(RECALL_SEED)
    sample = np.sort(rng.choice(len(ids), size=min(RECALL_QUERIES, len(ids)), replace=False))
    k = min(RECALL_K, len(ids) - 1)
    approx, _ = index.search(vectors[sample], k + 1)
    exact_scores = exact_top_scores(vectors, vectors[sample], k + 1)
    row_of = {int(t): r for r, t in enumerate(ids)}
    hits = 0
    for q, row in enumerate(sample):
        got = [row_of[int(t)] for t in approx[q] if int(t) != -1 and int(t) != int(ids[row])][:k]
        bar = exact_scores[q][k] - 1e-5  # the 10th neighbour after the query's own row
        hits += sum(float(vectors[row] @ vectors[r]) >= bar for r in got)
    return {"vectors": int(len(ids)), "distinct_vectors": int(len(uniq)), "build_s": round(build_s, 2),
            "build_cpu_s": round(build_cpu, 2), "index_bytes": built.stat().st_size,
            "flat_float32_bytes": int(vectors.nbytes), "same_bytes_as_release": same,
            "ef_search": index.sidecar["ef_search"], "recall_at_10": round(float(hits) / max(1, k * len(sample)), 5),
            "recall_queries": int(len(sample)), "sidecar_recall_at_10": index.sidecar.get("recall_at_10")}


def serve_probe(release: Path) -> None:
    """The child `--serve-probe` runs: the release opened as `mathindex serve` opens it, a few queries."""
    from mathindex.serve.app import configure_runtime  # in the child only: it loads the serving stack
    from mathindex.serve.release import ServedRelease  # in the child only (as above)

    configure_runtime()
    t0 = time.perf_counter()
    served = ServedRelease(release)
    opened = time.perf_counter() - t0
    for q in PROBE_QUERIES:
        served.search(q, 10)
    served.close()
    print(json.dumps({"open_s": round(opened, 2), "queries": len(PROBE_QUERIES)}))


def serve_figures(release: Path, env: dict) -> dict:
    """Peak RSS (wait4) and opening seconds of a process serving the release (`serve_probe`)."""
    run = measure([sys.executable, "-m", "bench.scale", "--serve-probe", str(release)], env)
    if run.returncode:
        raise SystemExit(f"serving probe failed ({run.returncode}):\n{run.tail}")
    opened = json.loads(next(line for line in reversed(run.tail.splitlines()) if line.startswith("{")))
    return {"serving_rss_mb": round(run.peak_rss_mb, 1), "open_s": opened["open_s"], "wall_s": round(run.wall_s, 2)}


def base_roots(args) -> tuple[Path | None, Path | None]:
    """The base's Lean and LaTeX roots: the sample, the options, else the sources file's."""
    if args.sample:
        return SAMPLE / "lean", SAMPLE / "latex"
    lean, latex = args.lean, args.latex
    if lean is None or latex is None:
        for spec in read_sources_file(args.base_sources).sources:
            path = (args.base_sources.parent / spec.path).resolve()
            if spec.kind == "lean" and lean is None:
                lean = path
            elif spec.kind == "latex" and latex is None:
                latex = path
    for path in (lean, latex):
        if path is not None and not path.is_dir():
            raise SystemExit(f"base corpus not found: {path}")
    return lean, latex


def prepare_model(work: Path, onnx_dir: Path) -> Path:
    """The one-layer cut of the bundled MiniLM, and its ONNX exports made before any timed run (a
    release would otherwise pay for them in its first embed stage only)."""
    model = work / "model" / "minilm-1layer"
    if not model.is_dir():
        cut_minilm(model, 1)
    embedder = SentenceTransformerEmbedder(str(model), backend=EMBED_BACKEND, onnx_dir=onnx_dir)
    embedder.packed_onnx()
    embedder.close()
    return model


def write_sources(path: Path, lean: Path | None, latex: Path | None, k: int) -> None:
    sources = []
    if lean is not None:
        sources.append({"name": f"scale-lean-x{k}", "kind": "lean", "path": str(lean)})
    if latex is not None:
        sources.append({"name": f"scale-latex-x{k}", "kind": "latex", "path": str(latex)})
    path.write_text("# a synthetic corpus of bench/scale.py\n" + yaml.safe_dump({"sources": sources}, sort_keys=False))


def one_k(k: int, base, args, model: Path, env: dict) -> dict:
    """One cold release of k copies and its figures."""
    here = args.work / f"k{k}"
    shutil.rmtree(here, ignore_errors=True)
    here.mkdir(parents=True)
    lean, latex = link_corpus(base, k, args.work / "copies", here / "corpus")
    write_sources(here / "sources.yaml", lean, latex, k)
    root = here / "root"
    cmd = [sys.executable, "-m", "mathindex", "release", "--sources", str(here / "sources.yaml"), "--out", str(root),
           "--model", str(model), "--precision", args.precision, "--no-gate"]
    print(f"k={k}: {' '.join(cmd[2:])}", flush=True)
    run = measure(cmd, {**env, "PREFECT_HOME": str(here / "prefect")})
    if run.returncode:
        raise SystemExit(f"release of k={k} failed ({run.returncode}):\n{run.tail}")
    release = published_release(root)
    layout = ReleaseLayout(release)
    manifest = json.loads(layout.manifest.read_text())
    seconds = stage_figures(manifest)
    counts = manifest["row_counts"]
    names = pq.read_table(layout.table("declarations"), columns=["full_name"]).column("full_name")
    result = {
        "k": k, "release": release.name, "wall_s": round(run.wall_s, 1), "cpu_s": round(run.cpu_s, 1),
        "peak_rss_mb": round(run.peak_rss_mb, 1), "peak_tree_rss_mb": round(run.peak_tree_mb, 1),
        "peak_tree_anon_mb": round(run.peak_tree_anon_mb, 1), "precision": args.precision,
        "stage_seconds": seconds, "stage_cpu_s": run.stage_cpu_s,
        "stage_peak_tree_rss_mb": {s: round(v, 1) for s, v in run.stage_peak_mb.items()},
        "stage_peak_tree_anon_mb": {s: round(v, 1) for s, v in run.stage_peak_anon_mb.items()},
        "rows": {t: counts.get(t, 0) for t in ("declarations", "dependencies", "latex_statements", "embedding_texts",
                                               "formulas", "nodes", "same_as")},
        "unmarked_declarations": int(pc.sum(pc.invert(pc.match_substring_regex(names, COPY_MARK))).as_py() or 0),
        "lexical_bytes": dir_bytes(layout.lexical),
        "duckdb_bytes": layout.duckdb.stat().st_size,
        "release_bytes": dir_bytes(release),
    }
    result["vector"] = vector_figures(release, RootLayout(root).cache, manifest, here)
    result["serving"] = serve_figures(release, env)
    if not args.keep:
        shutil.rmtree(here / "corpus", ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
    print(f"k={k}: wall {result['wall_s']} s, CPU {result['cpu_s']} s, peak tree RSS {result['peak_tree_rss_mb']} MB",
          flush=True)
    return result


def run_key(args, cpu: str) -> dict:
    """What a k's figures depend on besides k: the CPU, the base's share and seed, the embedding
    precision, and the code (the git trees of mathindex/ and bench/common/ at HEAD, and whether
    mathindex/ had no edits)."""
    def git(*a: str) -> str:
        out = subprocess.run(["git", "-C", str(PACKAGE_ROOT), *a], capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else "unknown"
    return {"cpu": cpu, "fraction": args.fraction, "seed": args.seed, "precision": args.precision, "code": [git("rev-parse", f"HEAD:{d}") for d in ("mathindex", "bench/common")],
            "clean": git("status", "--porcelain", "--untracked-files=no", "--", "mathindex") == ""}


def measured_k(k: int, base, args, model: Path, env: dict, cpu: str) -> dict:
    """k's figures: from WORK/k<k>.json when an earlier run measured them under the same run key (so a
    benchmark of hours per k can be spread over several sittings), else measured now and saved there."""
    saved, key = args.work / f"k{k}.json", run_key(args, cpu)
    if not args.fresh and saved.is_file():
        earlier = json.loads(saved.read_text())
        if earlier.get("key") == key and key["clean"]:
            print(f"k={k}: measured earlier ({earlier['result']['release']}), taken from {saved}", flush=True)
            return earlier["result"]
        print(f"k={k}: {saved} was measured under another run key, measuring again", flush=True)
    result = one_k(k, base, args, model, env)
    saved.write_text(json.dumps({"key": key, "result": result}, indent=1) + "\n")
    return result


def _mb(n: float) -> str:
    return f"{n / 2**20:.1f}"


def report(results: list[dict], cpu: str, command: str) -> tuple[str, dict]:
    """The Markdown tables and the exponents (stage -> slope) of the results."""
    ks = [r["k"] for r in results]
    stages = list(dict.fromkeys(s for r in results for s in r["stage_seconds"]))
    head = " | ".join(f"k={k}" for k in ks)
    lines = [f"CPU: {cpu}", "", f"command: `{command}`", "",
             "stage seconds (manifest) and growth exponent: each cell wall s / CPU s (the process tree's, sampled); "
             f"the exponent is the slope of log s on log k, target <= {TARGET}, flagged on CPU s; the last column "
             "is the CPU exponent between the two largest k alone (fixed costs weigh less there)", "",
             f"| stage | {head} | exponent wall | exponent CPU | | CPU exponent, last two k |",
             "|---|" + "---:|" * (len(ks) + 2) + "---|---:|"]
    slopes: dict[str, float | None] = {}
    show = lambda e: "" if e is None else f"{e:.2f}"  # noqa: E731
    for s in [*stages, "finish"]:
        wall = [r["stage_seconds"].get(s, 0.0) for r in results]
        cpu_s = [r["stage_cpu_s"].get(s, 0.0) for r in results]
        slopes[s] = exponent(ks, wall) if s != "finish" else None
        slopes[f"{s} (CPU)"] = e = exponent(ks, cpu_s)
        flag = ""
        if e is not None and e > TARGET:
            flag = "above target" if max(cpu_s) >= NOISE_S else f"above target (under {NOISE_S:.0f} CPU s: noise)"
        cells = " | ".join(("-" if s == "finish" else f"{w:.1f}") + f" / {c:.1f}" for w, c in zip(wall, cpu_s))
        name = f"{s} (CPU and memory: with the process start)" if s == stages[0] else s
        last = exponent(ks[-2:], cpu_s[-2:]) if len(ks) > 2 else None
        lines.append(f"| {name} | {cells} | {show(slopes[s])} | {show(e)} | {flag} | {show(last)} |")
    wall, cpu_s = [r["wall_s"] for r in results], [r["cpu_s"] for r in results]
    slopes["release wall s"], slopes["release CPU s"] = exponent(ks, wall), exponent(ks, cpu_s)
    cells = " | ".join(f"{w:.1f} / {c:.1f}" for w, c in zip(wall, cpu_s))
    last = exponent(ks[-2:], cpu_s[-2:]) if len(ks) > 2 else None
    lines.append(f"| **release** | {cells} | {show(slopes['release wall s'])} | {show(slopes['release CPU s'])} | | {show(last)} |")
    lines += ["", "peak memory, MB: per stage the process tree's peak RSS, then its anonymous part (RssAnon: "
              "without mapped files, such as the tables the flow holds memory-mapped), each its sum over the tree, "
              "sampled every 0.5 s (- no sample); peak RSS: the largest process (wait4)", "",
              f"| stage | {head} |", "|---|" + "---:|" * len(ks)]
    show_mb = lambda p: "-" if p is None else f"{p:.0f}"  # noqa: E731
    for s in [*stages, "finish"]:
        if any(s in r["stage_peak_tree_rss_mb"] for r in results):
            peaks = [r["stage_peak_tree_rss_mb"].get(s) for r in results]
            anon = [r.get("stage_peak_tree_anon_mb", {}).get(s) for r in results]
            name = f"{s} (with the process start)" if s == stages[0] else s
            lines.append(f"| {name} | " + " | ".join(f"{show_mb(p)} ({show_mb(a)})" for p, a in zip(peaks, anon)) + " |")
    lines.append("| **peak tree RSS (anonymous)** | " + " | ".join(
        f"{r['peak_tree_rss_mb']:.0f} ({show_mb(r.get('peak_tree_anon_mb'))})" for r in results) + " |")
    lines.append("| **peak RSS** | " + " | ".join(f"{r['peak_rss_mb']:.0f}" for r in results) + " |")
    if len(ks) > 1:
        per_copy = (results[-1]["peak_tree_rss_mb"] - results[0]["peak_tree_rss_mb"]) / (ks[-1] - ks[0])
        lines += ["", f"peak tree RSS per added copy: {per_copy:.0f} MB (k={ks[0]} to k={ks[-1]})"]
    rows = [
        ("declarations", lambda r: f"{r['rows']['declarations']:,}"),
        ("declarations without a copy mark (shared)", lambda r: f"{r.get('unmarked_declarations', 0):,}"),
        ("LaTeX statements", lambda r: f"{r['rows']['latex_statements']:,}"),
        ("embedding texts", lambda r: f"{r['rows']['embedding_texts']:,}"),
        ("vectors (distinct)", lambda r: f"{r['vector']['vectors']:,} ({r['vector']['distinct_vectors']:,})"),
        ("vector index build s (CPU s)", lambda r: f"{r['vector']['build_s']:.1f} ({r['vector']['build_cpu_s']:.1f})"),
        ("vector index MB (flat fp32 MB)", lambda r: f"{_mb(r['vector']['index_bytes'])} ({_mb(r['vector']['flat_float32_bytes'])})"),
        ("vector index rebuilt, same bytes", lambda r: "yes" if r["vector"]["same_bytes_as_release"] else "NO"),
        ("recall@10 vs exact (efSearch)", lambda r: f"{r['vector']['recall_at_10']:.4f} ({r['vector']['ef_search']})"),
        ("recall@10 in the sidecar", lambda r: f"{r['vector']['sidecar_recall_at_10']}"),
        ("lexical index MB", lambda r: _mb(r["lexical_bytes"])),
        ("DuckDB file MB", lambda r: _mb(r["duckdb_bytes"])),
        ("release MB", lambda r: _mb(r["release_bytes"])),
        ("serving RSS MB (open s)", lambda r: f"{r['serving']['serving_rss_mb']:.0f} ({r['serving']['open_s']:.1f})"),
    ]
    lines += ["", "indexes and serving", "", f"| | {head} |", "|---|" + "---:|" * len(ks)]
    lines += [f"| {label} | " + " | ".join(fn(r) for r in results) + " |" for label, fn in rows]
    for label, key in (("vector index build s", ("vector", "build_s")), ("vector index MB", ("vector", "index_bytes")),
                       ("serving RSS MB", ("serving", "serving_rss_mb")), ("DuckDB file MB", ("duckdb_bytes",)),
                       ("lexical index MB", ("lexical_bytes",))):
        values = [r[key[0]] if len(key) == 1 else r[key[0]][key[1]] for r in results]
        slopes[label] = exponent(ks, values)
    lines += ["", "growth exponent of the rest: " + ", ".join(f"{label} {slopes[label]:.2f}" for label in (
        "vector index build s", "vector index MB", "lexical index MB", "DuckDB file MB", "serving RSS MB") if slopes[label] is not None)]
    above = [s for s in stages if (e := slopes[f"{s} (CPU)"]) is not None and e > TARGET
             and max(r["stage_cpu_s"].get(s, 0.0) for r in results) >= NOISE_S]
    lines.append(f"stages above the target exponent {TARGET} (CPU s, at least {NOISE_S:.0f} s): "
                 f"{', '.join(above) if above else 'none'}")
    return "\n".join(lines) + "\n", slopes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="1,3,10", help="the copy counts, comma-separated")
    ap.add_argument("--fraction", type=float, default=1.0, help="the seeded share of the base's files and chapters")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, help="a scratch folder (copies, roots; e.g. build/h-scale)")
    ap.add_argument("--sample", action="store_true", help="the bundled sample (data/sample) as the base")
    ap.add_argument("--base-sources", type=Path, default=BASE_SOURCES, help="the sources file naming the base corpora")
    ap.add_argument("--lean", type=Path, help="the base's Lean root (instead of the sources file's)")
    ap.add_argument("--latex", type=Path, help="the base's LaTeX root (instead of the sources file's)")
    ap.add_argument("--json", type=Path, help="where the results go (default: WORK/scale.json)")
    ap.add_argument("--keep", action="store_true", help="keep each k's corpus and root")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "int8"],
                    help="the releases' embedding precision (default fp32: ONNX; the one-layer model at bf16 runs "
                         "on torch and took 1.2x fp32's CPU on Zen 4)")
    ap.add_argument("--fresh", action="store_true",
                    help="measure every k again (default: a k measured before in WORK on this CPU with the same "
                         "base and code is taken from its k<k>.json)")
    ap.add_argument("--serve-probe", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve_probe is not None:
        serve_probe(args.serve_probe)
        return
    if args.work is None:
        ap.error("--work is required")
    ks = sorted({int(k) for k in args.ks.split(",")})
    if not ks or ks[0] < 1 or not 0 < args.fraction <= 1:
        ap.error("--ks takes positive integers and --fraction a share in (0, 1]")
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    cpu = cpu_model()
    print(f"CPU: {cpu}; load average at the start: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)
    lean, latex = base_roots(args)
    t0 = time.perf_counter()
    base = select_base(lean, latex, args.fraction, args.seed)
    write_copies(base, max(ks), args.work / "copies")
    print(f"base: {len(base.lean_files)} Lean files of {lean}, {len(base.latex_files)} LaTeX files of {latex}, "
          f"{len(base.namespaces)} namespace components renamed; {max(ks)} copies written in {time.perf_counter() - t0:.0f} s",
          flush=True)
    onnx_dir = args.work / "onnx"
    env = {**os.environ, **ENV, "MATHINDEX_ONNX_DIR": str(onnx_dir)}
    model = prepare_model(args.work, onnx_dir)
    results = [measured_k(k, base, args, model, env, cpu) for k in ks]
    command = "python -m bench.scale " + " ".join(sys.argv[1:])
    text, slopes = report(results, cpu, command)
    print(text, end="")
    out = args.json or args.work / "scale.json"
    out.write_text(json.dumps({"cpu": cpu, "command": command, "fraction": args.fraction, "seed": args.seed,
                               "base": {"lean": str(lean), "latex": str(latex), "lean_files": len(base.lean_files),
                                        "latex_files": len(base.latex_files)},
                               "results": results, "exponents": slopes, "target": TARGET}, indent=1) + "\n")
    print(f"json: {out}; load average at the end: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")


if __name__ == "__main__":
    main()
