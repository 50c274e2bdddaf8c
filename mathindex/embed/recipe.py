"""An embedder recipe (a sources file's `embedder:` section) as the trainer runs it, and the keys
that say whether a release root already holds the model it makes.

A recipe's model is known by sha256 keys its card records (`models.CARD_JSON`, under
`RECIPE_KEYS`): `recipe` (the model's name, the base model's revision and every trainer field that
changes the weights), `holdout` (the content of every suite file kept out of training: a changed
suite changes what the leak guard drops), `tables` (the columns of the release tables the miner
reads, in release order) and `corpora` (the release's corpora by kind and name). `find_model`
picks the model a release embeds with: the published release's, when it was made by the same
recipe and holdout from the same corpora (a nightly keeps it when its tables change), else an
installed model of the same recipe, holdout and corpora (one made from these very tables first);
None means the root lacks it and the release trains it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa

from mathindex.cache.digest import table_digest
from mathindex.embed.base import default_model_path
from mathindex.embed.models import CARD_JSON, entries, published_model, read_card, reference_path
from mathindex.embed.train import DEFAULT_MIX, Recipe
from mathindex.errors import ModelError
from mathindex.schemas.manifest import CorpusPin, EmbedderRecipeSpec
from mathindex.sources import RECIPE_DEFAULT_BASE

RECIPE_KEYS = "recipe_keys"  # the card's record of the keys (RecipeKeys.card())


def trainer_recipe(spec: EmbedderRecipeSpec) -> Recipe:
    """The trainer's `Recipe` for a sources file's section: its fields, the trainer's defaults for
    the rest (MNRL's scale, frozen word embeddings), the pair kinds' shares as the mix."""
    return Recipe(name=spec.name, seed=spec.seed, steps=spec.steps, batch_size=spec.batch_size, lr=spec.lr,
                  warmup_ratio=spec.warmup_ratio, max_seq_length=spec.max_seq_length,
                  train_max_seq_length=spec.train_max_seq_length or 0, hard_negatives=spec.hard_negatives,
                  mix=dict(spec.pairs) if spec.pairs else dict(DEFAULT_MIX))


def base_model(spec: EmbedderRecipeSpec) -> Path:
    """The base model's directory: the bundled MiniLM for `default`, else the section's (resolved) path."""
    return default_model_path() if spec.base == RECIPE_DEFAULT_BASE else Path(spec.base)


def recipe_key(recipe: Recipe, base_revision: str, corpora: Sequence[str] = ()) -> str:
    """sha256 of the model's name, the base model's revision, the trainer fields that change the
    weights and the names of the recipe's training corpora (`kind:name`; their content is the tables key's)."""
    made = {"name": recipe.name, "base": base_revision, "recipe": recipe.key()}
    return _sha(made | {"corpora": sorted(corpora)} if corpora else made)


def holdout_key(suite_files: list[Path]) -> str:
    """sha256 of the content of the suite files kept out of training (their order and place aside)."""
    digests = sorted(hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in suite_files)
    return _sha(digests)


def tables_key(tables: dict[str, pa.Table], corpora: Sequence[CorpusPin] = ()) -> str:
    """sha256 of the miner's input tables (`embed.pairs.run_tables`), each by `cache.table_digest`,
    and of the recipe's training corpora by their pinned content (their tables are made only when
    the model is trained)."""
    digests = {name: table_digest(tables[name]) for name in sorted(tables)}
    return _sha({"tables": digests, "corpora": {p.name: p.sha256 for p in corpora}} if corpora else digests)


def _sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class RecipeKeys:
    """What identifies a recipe's model on a root (see the module's docstring)."""

    recipe: str
    holdout: str
    tables: str
    corpora: tuple[str, ...]  # `kind:name` of the release's corpora, sorted

    def card(self) -> dict:
        return {**asdict(self), "corpora": list(self.corpora)}

    def made(self, card: dict | None, same_tables: bool) -> bool:
        """Whether a model whose card is `card` was made by this recipe, holdout and corpora (and
        these tables, when `same_tables`)."""
        made = (card or {}).get(RECIPE_KEYS) or {}
        same = (made.get("recipe"), made.get("holdout"), tuple(made.get("corpora") or ())) == (
            self.recipe, self.holdout, self.corpora)
        return same and (not same_tables or made.get("tables") == self.tables)


def find_model(root: Path, keys: RecipeKeys) -> tuple[Path, str] | None:
    """(model directory, how it was found) for a release under `root`: `published` (the published
    release's model, made by the same recipe and holdout from the same corpora, whatever its
    tables), else `installed` (an entry of ROOT/models made so: one made from these very tables,
    else the one installed last, so that a release whose gate failed does not make the next one
    train again); None: the root lacks it."""
    _, reference = published_model(root)
    if reference is not None:
        try:
            path = reference_path(reference, root)
        except ModelError:
            path = None
        if path is not None and keys.made(read_card(path), same_tables=False):
            return path, "published"
    made = [(entry, card) for entry in entries(root) if keys.made(card := read_card(entry), same_tables=False)]
    exact = [entry for entry, card in made if card[RECIPE_KEYS].get("tables") == keys.tables]
    if exact:
        return exact[0], "installed"
    if made:
        return max((entry for entry, _ in made), key=lambda e: ((e / CARD_JSON).stat().st_mtime_ns, e.name)), "installed"
    return None
