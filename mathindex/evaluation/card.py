"""The model card of a trained embedder: `README.md` for people, `mathindex-training.json` for tools."""

from __future__ import annotations

import json
from pathlib import Path

from mathindex.evaluation.pool import compare_lines

CARD_JSON = "mathindex-training.json"


def write_card(model_dir: Path, record: dict) -> None:
    """Writes both card files into `model_dir` (before its revision is computed, so the revision covers them)."""
    (Path(model_dir) / CARD_JSON).write_text(json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    (Path(model_dir) / "README.md").write_text(card_markdown(record), encoding="utf-8")


def card_markdown(r: dict) -> str:
    """The card as markdown: base, recipe, data pin and counts, cost, and the benchmark before and after."""
    recipe = r["recipe"]
    lines = [
        f"# {recipe['name']}", "",
        f"A sentence-transformers embedder adapted by `mathindex train-embedder` (mathindex {r['code_version']}).", "",
        "## Base model", "",
        f"- name: `{r['base']['name']}`", f"- revision: `{r['base']['revision']}`", "",
        "## Training data", "",
        f"- mined from release `{r['release']}` ({', '.join(r['release_tables'])})",
        f"- sha256 of the pairs: `{r['data']['sha256']}`",
        "- pairs by kind: " + ", ".join(f"{k} {v:,}" for k, v in r["data"]["pairs"].items()),
        "- dropped: " + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in r["data"]["dropped"].items()),
        "- suites whose queries and targets were kept out: " + (", ".join(f"`{s}`" for s in r["data"]["excluded_suites"]) or "none"),
        "", "## Recipe", "",
        "MultipleNegativesRankingLoss (in-batch negatives" + (" plus one hard negative from the same module or file" if recipe["hard_negatives"] else "") + ").", "",
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
