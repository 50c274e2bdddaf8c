"""The lexical stage's local executors compared, cold: the texts tokenised in one loop in the stage's
own thread (`loop`, the baseline and the local default: tasks/search_index.py LOCAL_LOOP), the
content-keyed shards one at a time (`serial`), and the shards on every core's thread at once, one
shard a core at least, as Prefect's ThreadPoolTaskRunner runs them (`threads`). Each round builds
the lexical index of the same texts into an empty token cache; rounds rotate the modes so the
machine's noise falls on each alike, and each starts with the tokenizer's memo empty. Prints the median wall and CPU seconds per mode, its ratio to
`loop`, and exits 1 when a mode's lexical files differ from `loop`'s.

    python -m bench.lexical_runner {release} [--limit 100000] [--rounds 3] [--shard-texts 50000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from bench.common.machine import cpu_model, cpu_seconds
from bench.common.rounds import paired_rounds
from mathindex.search import text as tokenizer
from mathindex.search.lexical import build_text_index, informal_texts, text_rows, write_text_index
from mathindex.search.token_cache import token_store, uncached
from mathindex.search.token_shards import SHARD_TEXTS, plan_shards, tokenise_shard

MODES = ("loop", "serial", "threads")


def sharded(mode: str, texts: pa.Table, out: Path, cache_dir: Path, shard_texts: int) -> None:
    """The stage as `tasks.search_index.lexical_in_shards` runs it off the loop: plan, shards, reduce."""
    cores = 1 if mode == "serial" else os.cpu_count() or 1
    rows = text_rows(texts)
    found, todo = uncached(rows.select("key", "text"), cache_dir, informal_texts(rows))
    shards = plan_shards(todo, shard_texts, cores)
    with ThreadPoolExecutor(cores) as pool:
        done = list(pool.map(lambda s: tokenise_shard(s, cache_dir), shards))
    known = pl.concat([found, *(pl.from_arrow(d.rows) for d in done)]).unique("key", keep="first", maintain_order=True)
    token_store(cache_dir).compact()
    write_text_index(rows, known, out)


def one_round(mode: str, texts: pa.Table, shard_texts: int, out: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of the lexical index of `texts` into `out`, cold, with `mode`."""
    tokenizer._stem.cache_clear()  # the tokenizer's memo of stems, as in a fresh flow process
    tokenizer._symbol.cache_clear()
    with tempfile.TemporaryDirectory(prefix="lexical-runner-") as cache_dir:
        t0, c0 = time.perf_counter(), cpu_seconds()
        if mode == "loop":
            build_text_index(texts, out, Path(cache_dir))
        else:
            sharded(mode, texts, out, Path(cache_dir), shard_texts)
        return time.perf_counter() - t0, cpu_seconds() - c0


def files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path, help="a release directory (its embedding_texts.parquet)")
    ap.add_argument("--limit", type=int, default=0, help="about N texts, evenly spaced through the table (0: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shard-texts", type=int, default=SHARD_TEXTS, help="distinct texts a shard (at least a shard a core)")
    ap.add_argument("--modes", default=",".join(MODES), help=f"a comma-separated subset of {','.join(MODES)}")
    args = ap.parse_args()
    modes = [m for m in MODES if m in args.modes.split(",")]
    texts = pq.read_table(args.release / "embedding_texts.parquet")
    if args.limit and args.limit < texts.num_rows:
        texts = texts.take(pa.array(range(0, texts.num_rows, -(-texts.num_rows // args.limit))))
    print(f"{texts.num_rows} texts, {args.rounds} rounds, shards of {args.shard_texts}; {cpu_model()}; "
          f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="lexical-runner-out-") as work:

        def run(mode: str, r: int) -> tuple[float, float, dict[str, bytes]]:
            out = Path(work) / f"{mode}-{r}"
            return (*one_round(mode, texts, args.shard_texts, out), files(out))

        sys.exit(paired_rounds(modes, args.rounds, run, "lexical files"))


if __name__ == "__main__":
    main()
