"""Pydantic models for the release manifest and the sources file (both refuse unknown keys)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Upstream(_Strict):
    """Where a laid-out corpus comes from: a public repository, its licence (an SPDX-style name and
    the licence file's path in that repository) and the files laid out (glob patterns, `*` within
    one directory, `**` across directories). The commit is the source's own `commit`."""

    repository: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
    license: str
    license_file: str
    files: list[str] = Field(min_length=1)


class SourceSpec(_Strict):
    """One corpus input. Local paths are pinned by content sha256; `commit` and `sha256`, when
    given, are verified and a mismatch refuses the build. Moving refs (`ref: main`) are refused."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    kind: Literal["lean", "latex"]
    path: str
    commit: str | None = None
    sha256: str | None = None
    tags: str | None = None  # a tags file (Stacks format), relative to the sources file
    upstream: Upstream | None = None  # a corpus laid out from a public repository (bench/layout_corpus.py)

    @field_validator("commit")
    @classmethod
    def _commit_is_pinned(cls, v: str | None) -> str | None:
        if v is not None and not _COMMIT.match(v):
            raise ValueError(f"commit must be a full 40-hex commit id, not a moving ref: {v!r}")
        return v

    @field_validator("sha256")
    @classmethod
    def _sha_is_hex(cls, v: str | None) -> str | None:
        if v is not None and not _SHA256.match(v):
            raise ValueError(f"sha256 must be 64 lowercase hex digits: {v!r}")
        return v


class SuiteSpec(_Strict):
    """A benchmark query set: the project's own JSON format or MathlibQR's."""

    name: str
    path: str


class SuitePin(_Strict):
    """A suite as it was read (`bench.suites` of the manifest): the sha256 of its file, None when
    it could not be read (the suite then fails the gate). A different sha256 than the baseline
    release's means a changed query or gold set, not a search regression."""

    name: str
    path: str
    sha256: str | None


class SourcesFile(_Strict):
    """The sources file (`data/sources.yaml`): corpora and suites of a release."""

    sources: list[SourceSpec]
    suites: list[SuiteSpec] = []


class CorpusPin(_Strict):
    """A corpus as it was read: the content hash of every input file it contributed."""

    name: str
    kind: Literal["lean", "latex"]
    path: str
    sha256: str
    files: int
    commit: str | None = None


class EmbedderInfo(_Strict):
    name: str
    revision: str
    dim: int
    normalised: bool = True


class Manifest(_Strict):
    """`manifest.json`, written last: what a release is made of and how it scored. Written strictly
    (a field that is not declared here is an error); read by `store.read_manifest` through
    `from_json`, which keeps the keys another version wrote in `unknown`, so old releases open."""

    release_id: str
    code_version: str
    corpora: list[CorpusPin]
    embedder: EmbedderInfo
    vector_index: dict
    formula_index: dict
    formal_index: dict = {}  # mathindex.formal: keys, postings, seconds, bytes; empty before it existed
    premises: dict = {}  # mathindex.premises: split, suite size, weights, figures; empty before it existed
    stages: dict[str, str]
    row_counts: dict[str, int]
    files: dict[str, str]  # relative path -> sha256
    sizes: dict[str, int] = {}  # relative path -> bytes (the quick check); empty before it existed
    bench: dict
    gate: dict
    published: bool
    previous_release: str | None = None
    unknown: dict = Field(default_factory=dict, exclude=True)  # keys of another version, kept on read, never written

    @classmethod
    def from_json(cls, obj: dict) -> "Manifest":
        """A manifest as another version may have written it: the keys declared here validated,
        the others kept in `unknown` (and dropped when written again)."""
        known = {k: v for k, v in obj.items() if k in cls.model_fields and k != "unknown"}
        return cls.model_validate({**known, "unknown": {k: v for k, v in obj.items() if k not in known}})

    def to_json(self) -> dict:
        return self.model_dump(mode="json")
