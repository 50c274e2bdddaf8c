"""The model card of a trained embedder: `README.md` for people, `mathindex-training.json` for tools."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mathindex import __version__
from mathindex.embed.models import CARD_JSON, TRAINING_DIR, install_model, slug
from mathindex.embed.pairs import NEEDED
from mathindex.embed.recipe import RECIPE_KEYS
from mathindex.evaluation.pool import compare_lines


def write_card(model_dir: Path, record: dict) -> None:
    """Writes both card files into `model_dir` (before its revision is computed, so the revision covers them)."""
    (Path(model_dir) / CARD_JSON).write_text(json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    (Path(model_dir) / "README.md").write_text(card_markdown(record), encoding="utf-8")


def training_record(base: dict, recipe: dict, release: str, data: dict, result, benchmark: dict | None) -> dict:
    """What a card records: the base model (name, revision), the recipe, where the pairs came from
    (`release`), the data (`pairs_sha256` and the miner's counts), the training's cost
    (`embed.train.TrainResult`) and the pool benchmark before and after (None: not run)."""
    return {
        "code_version": __version__, "base": base, "recipe": recipe, "release": release,
        "release_tables": sorted(NEEDED), "data": data,
        "training": {"steps": result.steps, "resumed_from": result.resumed_from, "seconds": round(result.seconds, 1),
                     "peak_rss_mb": result.peak_rss_mb, "final_loss": result.final_loss},
        "benchmark": benchmark,
    }  # fmt: skip


def install_with_card(trained: Path, models_dir: Path, name: str, record: dict) -> Path:
    """The trained model directory copied under the models directory's training runs, its card
    written into the copy (so the revision covers it) and installed as `<name>@<rev16>`
    (`embed.models.install_model`); returns the entry's path. `trained` is left as it is."""
    staged = Path(models_dir) / TRAINING_DIR / f"install-{slug(name)}"
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(trained, staged)
    write_card(staged, record)
    return install_model(staged, models_dir, name, move=True)


def _hard_negatives(how, negatives: dict | None) -> str:
    """The card's words for the recipe's hard negatives (`hard_negatives`, and where engine ones came from)."""
    if not how:
        return ""
    if how == "engine" and (negatives or {}).get("source") == "engine":
        return (f" plus one hard negative: the best near-miss of release `{negatives['release']}`'s engine for "
                f"{negatives['replaced']:,} drawn pairs, the same module or file for {negatives['kept_module']:,}")
    if how == "engine":
        return (" plus one hard negative from the same module or file (engine negatives asked, none taken: "
                f"{(negatives or {}).get('why', 'no engine')})")
    return " plus one hard negative from the same module or file"


def card_markdown(r: dict) -> str:
    """The card as markdown: base, recipe, data pin and counts, cost, and the benchmark before and after."""
    recipe = r["recipe"]
    keys = r.get(RECIPE_KEYS)
    made_by = "the embedder stage of `mathindex release` (a sources file's embedder recipe)" if keys else \
        "`mathindex train-embedder`"
    lines = [
        f"# {recipe['name']}", "",
        f"A sentence-transformers embedder adapted by {made_by} (mathindex {r['code_version']}).", "",
        "## Base model", "",
        f"- name: `{r['base']['name']}`", f"- revision: `{r['base']['revision']}`", "",
        "## Training data", "",
        f"- mined from release `{r['release']}` ({', '.join(r['release_tables'])})",
        f"- sha256 of the pairs: `{r['data']['sha256']}`",
        "- pairs by kind: " + ", ".join(f"{k} {v:,}" for k, v in r["data"]["pairs"].items()),
        "- dropped: " + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in r["data"]["dropped"].items()),
        "- suites whose queries and targets were kept out: " + (", ".join(f"`{s}`" for s in r["data"]["excluded_suites"]) or "none"),
        *([f"- recipe key `{keys['recipe']}`, held-out suites `{keys['holdout']}`, tables `{keys['tables']}` "
           f"(corpora {', '.join(keys['corpora'])}): what a release looks for before training again"] if keys else []),
        "", "## Recipe", "",
        "MultipleNegativesRankingLoss (in-batch negatives" + _hard_negatives(recipe["hard_negatives"], r["data"].get("negatives")) + ").", "",
        "| field | value |", "|---|---|", *[f"| {k} | {v} |" for k, v in sorted(recipe.items())], "",
        "## Cost", "",
        (f"- {r['training']['steps']} steps ({r['training']['steps'] * recipe['batch_size']:,} examples), "
        f"{r['training']['seconds']:.0f} s of training over all runs (the last run started at step {r['training']['resumed_from']}), "
         f"peak memory {r['training']['peak_rss_mb']:.0f} MB, final loss {r['training']['final_loss']}"), "",
        "## Benchmark (embedding channel alone, candidate pool)", "",
    ]
    bench = r.get("benchmark")
    if not bench:
        lines.append("Not run: the release names no suite with targets in it.")
    else:
        lines.append(f"Pool: {bench['after']['nodes']:,} nodes ({bench['pool']['size']:,} sampled with seed "
                     f"{bench['pool']['seed']} plus every gold node), {bench['after']['texts']:,} texts; exact search.")
        lines.append("")
        lines += compare_lines(bench["after"], bench["before"])
    return "\n".join(lines) + "\n"
