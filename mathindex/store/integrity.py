"""What a release holds against what its manifest records: atomic JSON, file hashes and sizes,
the manifest read and written, and the check of a directory against it (`verify_release`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from mathindex.cache.filehash import sha256_file
from mathindex.errors import IntegrityError
from mathindex.schemas.manifest import Manifest
from mathindex.store.layout import MANIFEST, ReleaseLayout


def write_json(path: Path, obj: object) -> None:
    """JSON with sorted keys, written to a temporary name, flushed to disk and renamed: a reader
    (or a crash at any point) sees the old file or the new one, never a part of either."""
    tmp = path.with_name(path.name + ".tmp")
    data = (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)  # the rename itself survives a power cut
    finally:
        os.close(dir_fd)


def read_json(path: Path) -> dict:
    """A JSON object file; IntegrityError naming the file when it is not one (a truncated write)."""
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise IntegrityError(f"{path} is unreadable ({type(exc).__name__}: {exc})") from None
    if not isinstance(obj, dict):
        raise IntegrityError(f"{path} is not a JSON object")
    return obj


def _release_files(directory: Path) -> list[Path]:
    return [p for p in sorted(directory.rglob("*")) if p.is_file() and p.name != MANIFEST]


def file_hashes(directory: Path) -> dict[str, str]:
    """sha256 of every file under a release directory except the manifest."""
    return {p.relative_to(directory).as_posix(): sha256_file(p) for p in _release_files(directory)}


def file_sizes(directory: Path) -> dict[str, int]:
    """Size in bytes of every file under a release directory except the manifest (the quick check)."""
    return {p.relative_to(directory).as_posix(): p.stat().st_size for p in _release_files(directory)}


def read_manifest(release: Path) -> Manifest:
    """A release's manifest, typed (`Manifest.from_json`: keys of another version kept, not refused):
    the one reader of `manifest.json`. FileNotFoundError when it is no complete release,
    IntegrityError when the file is unreadable or does not validate."""
    path = ReleaseLayout(release).manifest
    if not path.is_file():
        raise FileNotFoundError(f"not a complete release (no {MANIFEST}): {release}")
    obj = read_json(path)
    try:
        return Manifest.from_json(obj)
    except ValueError as exc:
        raise IntegrityError(f"{path} does not validate: {' '.join(str(exc).split())[:300]}") from None


def write_manifest(release: Path, manifest: Manifest) -> Path:
    """Writes a release's manifest (atomically, sorted keys: `write_json`)."""
    path = ReleaseLayout(release).manifest
    write_json(path, manifest.to_json())
    return path


def verify_release(release: Path, quick: bool = False, only: Iterable[str] | None = None) -> list[str]:
    """What is wrong with a release directory against its manifest, one line per bad file (empty:
    the release is intact): the manifest missing or unreadable, or a file it lists missing, of
    another size than it records, or (unless `quick`) of another sha256. `quick` costs a stat per
    file (a manifest written before sizes were recorded: presence only); the full check reads every
    byte. `only`: these paths alone, each of which the manifest must list."""
    release = Path(release)
    try:
        manifest = read_manifest(release)
    except FileNotFoundError:
        return [f"{MANIFEST}: missing"]
    except IntegrityError as exc:
        return [f"{MANIFEST}: {exc}"]
    files, sizes = manifest.files, manifest.sizes
    if not files:
        return [f"{MANIFEST}: lists no file hashes"]
    problems = []
    for rel in sorted(files if only is None else only):
        path = release / rel
        if rel not in files:
            problems.append(f"{rel}: not in the manifest")
        elif not path.is_file():
            problems.append(f"{rel}: missing")
        elif rel in sizes and path.stat().st_size != sizes[rel]:
            problems.append(f"{rel}: {path.stat().st_size} bytes, the manifest records {sizes[rel]}")
        elif not quick and sha256_file(path) != files[rel]:
            problems.append(f"{rel}: sha256 mismatch")
    return problems


def integrity_message(release: Path, problems: list[str]) -> str:
    """One line for a damaged release: its name and its first three problems."""
    more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
    return f"release {Path(release).name}: {'; '.join(problems[:3])}{more}"


def check_release(release: Path, quick: bool = False, only: Iterable[str] | None = None) -> None:
    """`verify_release`, raised: IntegrityError naming the bad files."""
    problems = verify_release(release, quick=quick, only=only)
    if problems:
        raise IntegrityError(integrity_message(release, problems))
