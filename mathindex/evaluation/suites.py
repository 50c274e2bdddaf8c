"""Query sets: the project's own JSON format and the MathlibQR format, read into one shape."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from mathindex.sources import DEFAULT_SOURCES, PACKAGE_ROOT
from mathindex.store.integrity import read_manifest
from mathindex.store.layout import ReleaseLayout

MATHLIBQR_STYLES = ("q1a_lean", "q1b_latex", "q1c_natural", "q2_slogan", "q3_nickname", "q4_special_case")
DEFAULT_HEADLINE = ("ndcg@10", "recall@10", "mrr@10")


class SuiteError(ValueError):
    """A query set that cannot be read."""


@dataclass(frozen=True)
class Query:
    id: str
    style: str
    text: str
    gold: frozenset[str]
    fair: bool = True


@dataclass(frozen=True)
class Suite:
    name: str
    k: int
    headline: tuple[str, ...]
    queries: tuple[Query, ...]


def load_suite(path: Path, name: str | None = None) -> Suite:
    """Reads either format; the MathlibQR format is a JSON list of targets."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SuiteError(f"cannot read suite {path}: {exc}") from None
    if isinstance(raw, list):
        return _mathlibqr(raw, name or Path(path).stem)
    if isinstance(raw, dict) and "queries" in raw:
        return _own(raw, name or raw.get("suite") or Path(path).stem)
    raise SuiteError(f"{path}: neither a MathlibQR list nor a query set with 'queries'")


def _own(raw: dict, name: str) -> Suite:
    queries = []
    for i, q in enumerate(raw["queries"]):
        try:
            gold = frozenset(q["gold"])
            queries.append(Query(id=str(q["id"]), style=str(q.get("style", "natural")), text=str(q["query"]), gold=gold))
        except (KeyError, TypeError) as exc:
            raise SuiteError(f"suite {name}: query #{i} lacks {exc}") from None
        if not gold or not q["query"].strip():
            raise SuiteError(f"suite {name}: query {q['id']!r} has an empty query or no gold")
    return Suite(name=name, k=int(raw.get("k", 10)), headline=tuple(raw.get("headline", DEFAULT_HEADLINE)), queries=tuple(queries))


def _mathlibqr(targets: list, name: str) -> Suite:
    queries = []
    for t in targets:
        try:
            gold = frozenset([t["full_name"]])
            tid = str(t["id"])
        except (KeyError, TypeError) as exc:
            raise SuiteError(f"suite {name}: target lacks {exc}") from None
        for style in MATHLIBQR_STYLES:
            text = (t.get(style) or "").strip()
            if text:
                queries.append(Query(id=f"{tid}:{style}", style=style, text=text, gold=gold, fair=bool(t.get("fair", True))))
    return Suite(name=name, k=10, headline=("ndcg@10", "recall@10"), queries=tuple(queries))


def project_suite_files(release: Path | None = None) -> list[Path]:
    """Every query-set file the project ships or reads: the suites named by the bundled and the
    benchmark sources files, JSON suites under bench/suites/, and the suites a release's manifest names."""
    files: set[Path] = set()
    for sources in [DEFAULT_SOURCES, *sorted((PACKAGE_ROOT / "bench" / "sources").glob("*.yaml"))]:
        files |= set(_suite_paths_of(sources))
    files |= set((PACKAGE_ROOT / "bench" / "suites").glob("*.json"))
    if release is not None and ReleaseLayout(release).is_release():
        files |= {Path(pin.path) for pin in read_manifest(release).bench.suites}
    return sorted(p.resolve() for p in files)


def _suite_paths_of(sources: Path) -> list[Path]:
    """The suite paths a sources file names (read without pinning its corpora, which may be absent here)."""
    raw = yaml.safe_load(sources.read_text(encoding="utf-8")) or {}
    return [(sources.parent / s["path"]).resolve() for s in raw.get("suites", []) if isinstance(s, dict) and "path" in s]


def project_suite_queries(release: Path | None = None, extra: list[Path] = ()) -> tuple[list[str], set[str], list[Path]]:
    """(query texts, gold names, suite files read) over `project_suite_files` and `extra` suite files;
    files absent here are skipped."""
    texts, gold, read = [], set(), []
    for path in sorted(set(project_suite_files(release)) | {Path(p).resolve() for p in extra}):
        if not path.is_file():
            continue
        suite = load_suite(path)
        texts += [q.text for q in suite.queries]
        gold |= {g for q in suite.queries for g in q.gold}
        read.append(path)
    return texts, gold, read


def is_suite_file(path: Path) -> bool:
    """True when `path` reads as a query set (either format)."""
    try:
        load_suite(Path(path))
    except SuiteError:
        return False
    return True
