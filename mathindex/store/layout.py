"""Where things are in a release root and in a release directory: the one owner of those names
(`ReleaseLayout`, `RootLayout`), the release id's form, and the checks of a root a release may be
written to."""

from __future__ import annotations

import os
import re
from pathlib import Path

from mathindex.cache.layout import CacheLayout



class ReleaseLayout:
    """Where things are inside a release directory: the one owner of those names (relative paths,
    as the manifest's `files` keys spell them). `ReleaseLayout(directory)` gives the paths. What lies
    inside an index folder is its index module's (embed.vector_index, formula.formula_index, formal.formal_index,
    search.lexical, premises)."""

    MANIFEST = "manifest.json"  # written last: a directory without it is no release
    NOTES = "release-notes.md"
    DUCKDB = "search.duckdb"
    BENCH = "bench"  # metrics.json and the notes' plots
    METRICS = "bench/metrics.json"
    VECTOR = "vector"  # FAISS index, row-aligned ids, sidecar
    FORMULA = "formula"
    FORMAL = "formal"
    LEXICAL = "lexical"
    PREMISES = "premises"
    WORK = ".work"  # the tables the flow holds, memory-mapped while it builds (tasks/spill.py); removed before the manifest
    TABLE_SUFFIX = ".parquet"

    def __init__(self, directory: Path | str):
        self.dir = Path(directory)

    @staticmethod
    def table_file(name: str) -> str:
        """`<table>.parquet`: one file per registered table."""
        return f"{name}{ReleaseLayout.TABLE_SUFFIX}"

    def table(self, name: str) -> Path:
        return self.dir / self.table_file(name)

    def __truediv__(self, rel: str) -> Path:
        return self.dir / rel

    manifest = property(lambda self: self.dir / self.MANIFEST)
    notes = property(lambda self: self.dir / self.NOTES)
    duckdb = property(lambda self: self.dir / self.DUCKDB)
    bench = property(lambda self: self.dir / self.BENCH)
    metrics = property(lambda self: self.dir / self.METRICS)
    vector = property(lambda self: self.dir / self.VECTOR)
    formula = property(lambda self: self.dir / self.FORMULA)
    formal = property(lambda self: self.dir / self.FORMAL)
    lexical = property(lambda self: self.dir / self.LEXICAL)
    premises = property(lambda self: self.dir / self.PREMISES)
    work = property(lambda self: self.dir / self.WORK)

    def is_release(self) -> bool:
        return self.manifest.is_file()


class RootLayout:
    """Where things are inside a release root: releases, the published pointer, the lock, caches
    and models (the models directory's contents are embed.models')."""

    RELEASES = "releases"
    PUBLISHED = "published.json"  # names the last release that passed its gate
    LOCK = ".lock"
    CACHE = "cache"
    MODELS = "models"
    STAGING = ".staging-"  # releases/.staging-<id>/ while a run builds <id>
    SERVING = "serving"  # serving/<host>-<pid>.json: what a running server holds open (store/serving.py)
    TRASH = ".trash"  # releases/.trash/<id>/: a pruned release, renamed there, then removed (store/prune.py)

    def __init__(self, root: Path | str):
        self.root = Path(root)

    releases = property(lambda self: self.root / self.RELEASES)
    published = property(lambda self: self.root / self.PUBLISHED)
    lock = property(lambda self: self.root / self.LOCK)
    cache = property(lambda self: self.root / self.CACHE)
    caches = property(lambda self: CacheLayout(self.root / self.CACHE))  # what lies under `cache`: cache/layout.py
    models = property(lambda self: self.root / self.MODELS)
    serving = property(lambda self: self.root / self.SERVING)
    trash = property(lambda self: self.releases / self.TRASH)  # beside the releases: one file system, one rename

    def release(self, release_id: str) -> ReleaseLayout:
        return ReleaseLayout(self.releases / release_id)

    def staging(self, release_id: str) -> Path:
        return self.releases / f"{self.STAGING}{release_id}"

    def holds(self, path: Path | str) -> bool:
        """Whether `path` looks like a release root rather than a release directory."""
        path = Path(path)
        return not ReleaseLayout(path).is_release() and ((path / self.PUBLISHED).is_file() or (path / self.RELEASES).is_dir())


MANIFEST, PUBLISHED, LOCK, STAGING = ReleaseLayout.MANIFEST, RootLayout.PUBLISHED, RootLayout.LOCK, RootLayout.STAGING
# `<UTC second>Z-<8 hex of the inputs>`, and `-2`, `-3`, … for a second run on the same inputs in one second
RELEASE_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{8}(-[0-9]+)?$")


class OutputRootError(ValueError):
    """A release root that no release may be written to: empty, an unresolved deployment template,
    not a directory, not writable, or under a parent that does not exist (exit 2)."""


def check_root_value(out: object) -> str:
    """The text of a release root parameter when it names a path at all: OutputRootError in one
    line for an empty one and for an unresolved deployment template (`prefect deploy` keeps
    `{{ $MATHINDEX_OUT }}` as it is when the variable is unset). No file system access: what
    `prefect deploy` checks (`flows.deploy.check_release_root`)."""
    text = out.strip() if isinstance(out, str) else ""
    if not text:
        raise OutputRootError(f"the release root (`out`) is empty ({out!r}): give --out ROOT, or set MATHINDEX_OUT "
                              "before `prefect deploy` (or run the deployment with -p out=/path/to/root)")
    if "{{" in text or "}}" in text:
        raise OutputRootError(f"the release root {text!r} is an unresolved template: MATHINDEX_OUT was not set "
                              "when the deployment was made; set it and run `prefect deploy` again")
    return text


def check_output_root(out: object) -> Path:
    """The release root `out` names, resolved, when a release can be written there; else
    OutputRootError in one line (`check_root_value`, then: not a directory, not writable, a parent
    that does not exist). Checked before any build work (the CLI before Prefect starts, the flows
    first thing), so a deployment made without `MATHINDEX_OUT` fails at the start of its run, not
    after the build, and never writes into its working directory. A missing root is created later
    only when its parent is a writable directory."""
    text = check_root_value(out)
    root = Path(text).expanduser().resolve()
    target = root if root.exists() else root.parent
    if root.exists() and not root.is_dir():
        raise OutputRootError(f"the release root {text} is not a directory")
    if not target.is_dir():
        why = "is not a directory" if target.exists() else "does not exist"
        raise OutputRootError(f"the release root {text} cannot be created: its parent {target} {why}")
    if not os.access(target, os.W_OK | os.X_OK):
        raise OutputRootError(f"the release root {text} is not writable ({target})")
    return root
