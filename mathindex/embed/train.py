"""Domain adaptation of a sentence-transformers embedder on mined pairs, on CPU, seeded and resumable.

The loss is sentence-transformers' `MultipleNegativesRankingLoss`: in-batch negatives plus one
hard negative per pair (the same facet of a neighbour from the same module or file). The batch
schedule is drawn once from the seed, and a checkpoint (weights, optimiser, scheduler, RNG states,
step) is written atomically every `checkpoint_every` steps under a directory keyed by (base
revision, training-data sha256, recipe): running the same command again resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import resource
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from mathindex.embed.models import slug

log = logging.getLogger(__name__)

# description (module docs, curated lists: lean/descriptions.py) is the human-written English closest
# to prose queries; it takes 0.1 of docstring's former 0.6 (about 9 k Mathlib pairs after the leak guard)
ENGINE = "engine"  # hard_negatives: the negatives are the published release's near-misses (flows.recipe)
DEFAULT_MIX = {"docstring": 0.5, "description": 0.1, "informal": 0.25, "label": 0.13, "slogan": 0.02}


@dataclass(frozen=True)
class Recipe:
    """Everything that decides the trained weights besides the base model and the pairs."""

    name: str = "mathindex-minilm"
    seed: int = 0
    steps: int = 500
    batch_size: int = 32
    lr: float = 5e-5
    warmup_ratio: float = 0.1
    max_seq_length: int = 128  # the trained model's, at inference
    train_max_seq_length: int = 0  # texts are cut to this many tokens while training (0: max_seq_length)
    scale: float = 20.0  # MNRL's inverse temperature on cosine similarities
    hard_negatives: bool | str = True  # False, True (same module or file) or ENGINE (the engine's near-misses)
    freeze_embeddings: bool = True  # the word-embedding matrix is half of MiniLM's weights; freezing it halves optimiser work
    mix: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_MIX))  # share of training examples per pair kind
    checkpoint_every: int = 50
    threads: int = 0  # torch intra-op threads; 0: one per core

    def key(self) -> str:
        """sha256 of the recipe fields that change the weights (not checkpoint cadence or threads)."""
        fields = {k: v for k, v in asdict(self).items() if k not in {"checkpoint_every", "threads", "name"}}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def pairs_sha256(pairs: pa.Table) -> str:
    """sha256 of the pairs' content, in their stored order (the training data's pin)."""
    h = hashlib.sha256()
    for batch in pairs.select(["kind", "anchor", "positive", "negative"]).to_batches(8192):
        for row in zip(*(c.to_pylist() for c in batch.columns)):
            h.update(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
    return h.hexdigest()


def schedule(pairs: pa.Table, recipe: Recipe) -> np.ndarray:
    """(steps, batch_size) row indices of `pairs`, drawn per kind by `recipe.mix` from the seed.
    Each kind is sampled without replacement until it is used up, then reshuffled (epochs)."""
    rng = np.random.default_rng(recipe.seed)
    kinds = np.asarray(pairs.column("kind").to_pylist())
    usable = np.ones(len(kinds), dtype=bool)
    if recipe.hard_negatives:
        usable = ~np.asarray(pairs.column("negative").is_null().to_pylist())
    present = {k: np.flatnonzero((kinds == k) & usable) for k in recipe.mix}
    present = {k: v for k, v in present.items() if len(v)}
    if not present:
        raise ValueError("no pairs of the recipe's kinds: " + ", ".join(recipe.mix))
    total = recipe.steps * recipe.batch_size
    weight = np.asarray([recipe.mix[k] for k in present], dtype=float)
    counts = np.floor(weight / weight.sum() * total).astype(int)
    counts[0] += total - counts.sum()
    drawn = []
    for (k, rows), n in zip(present.items(), counts):
        epochs = [rng.permutation(rows) for _ in range(-(-n // len(rows)))]
        drawn.append(np.concatenate(epochs)[:n] if epochs else np.zeros(0, dtype=int))
    order = rng.permutation(np.concatenate(drawn))
    return order.reshape(recipe.steps, recipe.batch_size)


@dataclass
class TrainResult:
    model_dir: Path  # the trained model, saved (not yet installed in a models directory)
    steps: int
    resumed_from: int  # the step this run started at (steps: nothing left to train)
    seconds: float  # training wall time over every run that contributed, resumed ones included
    peak_rss_mb: float  # the highest peak resident memory of those runs
    final_loss: float


def _checkpoint_dir(root: Path, base_revision: str, data_sha: str, recipe: Recipe) -> Path:
    key = hashlib.sha256(f"{base_revision}\0{data_sha}\0{recipe.key()}".encode()).hexdigest()[:16]
    return Path(root) / key


def _save_checkpoint(ckpt: Path, model, optimiser, scheduler, step: int, losses: list[float], cost: dict) -> None:
    """Weights + optimiser + scheduler + RNG states, written to a temporary directory and renamed."""
    import torch  # heavy, optional: training only

    tmp = ckpt.with_name(ckpt.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save(str(tmp / "model"))
    torch.save({"optimiser": optimiser.state_dict(), "scheduler": scheduler.state_dict(), "step": step,
                "losses": losses, "cost": cost, "torch_rng": torch.get_rng_state(), "py_rng": random.getstate(),
                "np_rng": np.random.get_state()}, tmp / "state.pt")
    old = ckpt.with_name(ckpt.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if ckpt.exists():
        os.replace(ckpt, old)
    os.replace(tmp, ckpt)
    shutil.rmtree(old, ignore_errors=True)


def _load_model(path: Path, recipe: Recipe):
    from sentence_transformers import SentenceTransformer  # heavy, optional: training only

    model = SentenceTransformer(str(path), device="cpu")
    model.max_seq_length = recipe.max_seq_length
    if recipe.freeze_embeddings:
        model[0].auto_model.embeddings.word_embeddings.requires_grad_(False)
    return model


def train(pairs: pa.Table, base: Path, base_revision: str, work_dir: Path, recipe: Recipe,
          progress=None) -> TrainResult:
    """Trains `base` on `pairs` by `recipe`; resumes from the latest checkpoint under `work_dir`.
    Returns the saved model directory (`<checkpoint>/<name>`) and what training cost over all runs."""
    import torch  # heavy, optional: training only
    from sentence_transformers.sentence_transformer import losses as st_losses  # heavy, optional: training only
    from transformers import get_linear_schedule_with_warmup  # heavy, optional: training only

    t0 = time.perf_counter()
    torch.set_num_threads(recipe.threads or max(1, os.cpu_count() or 1))
    data_sha = pairs_sha256(pairs)
    ckpt_root = _checkpoint_dir(work_dir, base_revision, data_sha, recipe)
    ckpt = ckpt_root / "checkpoint"
    final_json = ckpt_root / "final.json"
    plan = schedule(pairs, recipe)
    anchors, positives = pairs.column("anchor").to_pylist(), pairs.column("positive").to_pylist()
    negatives = pairs.column("negative").to_pylist()

    torch.manual_seed(recipe.seed)
    random.seed(recipe.seed)
    np.random.seed(recipe.seed)
    start, losses, prior = 0, [], {"seconds": 0.0, "peak_rss_mb": 0.0}
    if final_json.is_file():  # trained already: the model and what it cost
        done = json.loads(final_json.read_text())
        if (ckpt_root / done["dir"]).is_dir():
            return TrainResult(ckpt_root / done["dir"], recipe.steps, recipe.steps, done["seconds"], done["peak_rss_mb"],
                               done["final_loss"])
    model = _load_model(ckpt / "model" if ckpt.is_dir() else base, recipe)
    params = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(params, lr=recipe.lr)
    scheduler = get_linear_schedule_with_warmup(optimiser, int(recipe.warmup_ratio * recipe.steps), recipe.steps)
    if ckpt.is_dir():
        state = torch.load(ckpt / "state.pt", weights_only=False)
        optimiser.load_state_dict(state["optimiser"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        random.setstate(state["py_rng"])
        np.random.set_state(state["np_rng"])
        start, losses, prior = int(state["step"]), list(state["losses"]), state.get("cost", prior)
        log.info("resuming training at step %d of %d from %s", start, recipe.steps, ckpt)
    loss_fn = st_losses.MultipleNegativesRankingLoss(model, scale=recipe.scale)
    model.max_seq_length = recipe.train_max_seq_length or recipe.max_seq_length
    model.train()
    for step in range(start, recipe.steps):
        rows = plan[step]
        columns = [[anchors[i] for i in rows], [positives[i] for i in rows]]
        if recipe.hard_negatives:
            columns.append([negatives[i] for i in rows])
        features = [model.preprocess(c) for c in columns]
        loss = loss_fn(features, None)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimiser.step()
        scheduler.step()
        optimiser.zero_grad(set_to_none=True)
        losses.append(round(float(loss.detach()), 5))
        if (step + 1) % 10 == 0 or step + 1 == recipe.steps:
            done = step + 1 - start
            log.info("step %d/%d loss %.4f (mean of last 10 %.4f), %.2f s/step", step + 1, recipe.steps, losses[-1],
                     float(np.mean(losses[-10:])), (time.perf_counter() - t0) / max(done, 1))
        if progress is not None:
            progress(step + 1, recipe.steps, losses[-1])
        if (step + 1) % recipe.checkpoint_every == 0 and step + 1 < recipe.steps:
            _save_checkpoint(ckpt, model, optimiser, scheduler, step + 1, losses, _cost(prior, t0))
    model.eval()
    model.max_seq_length = recipe.max_seq_length
    final = ckpt_root / slug(recipe.name)  # the model's directory name is its embedder name until installed
    tmp = ckpt_root / f"{final.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save(str(tmp))
    tail = losses[-min(len(losses), 20):]
    final_loss = round(float(np.mean(tail)), 5) if tail else float("nan")
    cost = _cost(prior, t0)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    final_json.write_text(json.dumps({"dir": final.name, "final_loss": final_loss, **cost, "losses": losses}))
    shutil.rmtree(ckpt, ignore_errors=True)
    return TrainResult(final, recipe.steps, start, cost["seconds"], cost["peak_rss_mb"], final_loss)


def _cost(prior: dict, t0: float) -> dict:
    """Training seconds and peak memory over the earlier runs (`prior`) and this one (since `t0`)."""
    return {"seconds": round(prior["seconds"] + time.perf_counter() - t0, 1),
            "peak_rss_mb": max(prior["peak_rss_mb"], _peak_rss_mb())}


def _peak_rss_mb() -> float:
    """Peak resident memory of this process and its finished children, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, kids) / 1024, 1)
