"""The artifact store: deterministic Parquet, DuckDB over it, and the release root's layout and
integrity (one owner for both).

A release is built in `ROOT/releases/.staging-<id>/`, renamed to `ROOT/releases/<id>/`, and only
then gets `manifest.json` (a reader never sees half a release); the manifest records the sha256
and size of every other file, and `verify_release` checks a directory against it. `ROOT/published.json`
names the last release that passed its gate; it is replaced atomically and only by a passing
release. A release-writing run holds `ROOT/.lock` (`root_lock`) from before its id is chosen until
its release is published, and removes what interrupted runs left (`clean_leftovers`) under it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.schemas import TableSpec, comment_of, table_specs
from mathindex.schemas.manifest import Manifest
from mathindex.schemas.views import VIEWS, View

log = logging.getLogger(__name__)



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

    def __init__(self, root: Path | str):
        self.root = Path(root)

    releases = property(lambda self: self.root / self.RELEASES)
    published = property(lambda self: self.root / self.PUBLISHED)
    lock = property(lambda self: self.root / self.LOCK)
    cache = property(lambda self: self.root / self.CACHE)
    models = property(lambda self: self.root / self.MODELS)

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


class IntegrityError(Exception):
    """A release or pointer file that does not match what was written: a file missing, of another
    size or sha256 than the manifest records, or an unreadable manifest or published.json (exit 4)."""


class RootBusy(Exception):
    """Another run holds the release root's lock (exit 5)."""


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


def write_table(table: pa.Table, spec: TableSpec, directory: Path) -> Path:
    """Writes `<name>.parquet` cast to the spec's schema and sorted by its keys (deterministic)."""
    table = table.select(spec.schema.names).cast(spec.schema)
    if table.num_rows:
        table = table.sort_by([(k, "ascending") for k in spec.sort_keys])
    path = ReleaseLayout(directory).table(spec.name)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd", row_group_size=65536)
    os.replace(tmp, path)
    return path


def read_table(directory: Path, name: str, columns: list[str] | None = None) -> pa.Table:
    """A release's table (`ReleaseLayout.table`), or some of its columns."""
    return pq.read_table(ReleaseLayout(directory).table(name), columns=columns)


def write_duckdb(directory: Path, names: list[str], previous: Path | None = None) -> Path:
    """`search.duckdb` holding a copy of each Parquet table (same rows, same order). Each table is
    created from its schema first (NOT NULL kept: CREATE TABLE AS from Parquet drops it), then
    filled; table and column comments come from the schemas; then the views and table macros of
    `schemas.views` whose tables are all present. When release `previous` holds a database of the
    same tables (each Parquet file's sha256 equal to the one its manifest records) and the same
    catalog (tables, columns, comments, views, macros: `_catalog`), and its database matches its
    manifest, that file is linked instead (a no-change nightly)."""
    specs = table_specs()
    path = ReleaseLayout(directory).duckdb
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    if previous is not None and _reuse_duckdb(directory, names, Path(previous), tmp):
        os.replace(tmp, path)
        return path
    _fill_duckdb(tmp, directory, names, [])
    os.replace(tmp, path)
    return path


def start_duckdb(directory: Path, names: list[str], previous: Path | None = None) -> Path | None:
    """The first part of `write_duckdb` while a release's last tables are still being made (the flow
    runs it beside the benchmarks: DuckDB works without the GIL): when release `previous` cannot
    lend its database because one of these tables differs from its, they are loaded now into a
    temporary database, whose path is returned for `finish_duckdb`; None when the database may yet
    be linked, which only the last tables decide."""
    if previous is not None and _same_tables(directory, names, Path(previous)):
        return None
    part = ReleaseLayout(directory).duckdb.with_name(ReleaseLayout.DUCKDB + ".part")
    part.unlink(missing_ok=True)
    _fill_duckdb(part, directory, sorted(names), [])
    return part


def finish_duckdb(directory: Path, names: list[str], previous: Path | None, part: Path | None,
                  first: list[str]) -> Path:
    """`search.duckdb` over `names`: `write_duckdb` when `start_duckdb` gave no database (`part`
    None), else `part` (holding the tables `first`) with the other tables, and the views that read
    them, added. The catalog is the one `write_duckdb` makes (test)."""
    if part is None:
        return write_duckdb(directory, sorted(names), previous)
    _fill_duckdb(part, directory, sorted(set(names) - set(first)), sorted(first))
    path = ReleaseLayout(directory).duckdb
    os.replace(part, path)
    return path


def _fill_duckdb(db: Path, directory: Path, names: list[str], present: list[str]) -> None:
    """Adds tables `names` (schema first, then the Parquet rows) to database `db`, which holds the
    tables `present`, and the views whose tables are now all there and were not before."""
    con = duckdb.connect(str(db))
    try:
        _create_catalog(con, names, table_specs(), present)
        for name in names:
            src = _sql_string(ReleaseLayout(directory).table(name).as_posix())
            con.execute(f'INSERT INTO "{name}" BY NAME SELECT * FROM read_parquet({src})')
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _create_catalog(con: duckdb.DuckDBPyConnection, names: list[str], specs: dict, present: list[str] = ()) -> None:
    """The empty tables (with comments), then the views and macros whose tables are all there
    (with the tables `present` that the database holds already) and were not before."""
    for name in names:
        for statement in table_ddl(specs[name]):
            con.execute(statement)
    now, before = set(names) | set(present), set(present)
    for view in VIEWS:
        if set(view.tables) <= now and not set(view.tables) <= before:
            write_view(con, view, [specs[t].schema for t in view.tables])


def _catalog(con: duckdb.DuckDBPyConnection) -> list:
    """Everything of a database but its rows: tables, columns (type, nullability, comment), views
    and table macros with their SQL and comments."""
    queries = (
        "SELECT table_name, comment FROM duckdb_tables() ORDER BY ALL",
        "SELECT table_name, column_index, column_name, data_type, is_nullable, comment FROM duckdb_columns() "
        "WHERE NOT internal ORDER BY ALL",
        "SELECT view_name, sql, comment FROM duckdb_views() WHERE NOT internal ORDER BY ALL",
        "SELECT function_name, macro_definition, comment FROM duckdb_functions() "
        "WHERE function_type = 'table_macro' AND NOT internal ORDER BY ALL",
    )
    return [con.execute(q).fetchall() for q in queries]


def _same_tables(directory: Path, names: list[str], previous: Path, files: dict | None = None) -> bool:
    """Whether each table's Parquet file has the sha256 that release `previous`'s manifest records
    for it (`files`: that manifest's hashes, when the caller has read them)."""
    layout = ReleaseLayout(directory)
    if files is None:
        try:
            files = load_manifest(previous).get("files", {})
        except (FileNotFoundError, IntegrityError, ValueError):
            return False
    wanted = {layout.table(n).relative_to(directory).as_posix(): layout.table(n) for n in names}
    return all(rel in files for rel in wanted) and all(sha256_file(p) == files[rel] for rel, p in wanted.items())


def _reuse_duckdb(directory: Path, names: list[str], previous: Path, tmp: Path) -> bool:
    """Links `previous`'s database to `tmp` when it holds exactly these tables' bytes and catalog."""
    before = ReleaseLayout(previous)
    try:
        files = load_manifest(previous).get("files", {})
    except (FileNotFoundError, IntegrityError, ValueError):
        return False
    db_name = before.duckdb.relative_to(previous).as_posix()
    if db_name not in files or not _same_tables(directory, names, previous, files):
        return False
    if sha256_file(before.duckdb) != files[db_name]:
        return False
    con = duckdb.connect(":memory:")
    try:
        _create_catalog(con, names, table_specs())
        ours = _catalog(con)
    finally:
        con.close()
    old = duckdb.connect(str(before.duckdb), read_only=True)
    try:
        if _catalog(old) != ours:  # the same tables, columns, comments, views and macros
            return False
    finally:
        old.close()
    try:
        os.link(before.duckdb, tmp)
    except OSError:
        shutil.copy2(before.duckdb, tmp)
    log.info("search.duckdb linked from release %s (same tables and catalog)", previous.name)
    return True


_SQL_TYPES = {pa.string(): "VARCHAR", pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.bool_(): "BOOLEAN", pa.float64(): "DOUBLE"}


def _sql_type(t: pa.DataType) -> str:
    return _sql_type(t.value_type) + "[]" if pa.types.is_list(t) else _SQL_TYPES[t]


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def table_ddl(spec: TableSpec) -> list[str]:
    """CREATE TABLE (NOT NULL for each non-nullable field) and the COMMENT ON statements of a
    table, from its schema and the descriptions on it (`schemas.comment_of`)."""
    cols = ", ".join(f'"{f.name}" {_sql_type(f.type)}' + ("" if f.nullable else " NOT NULL") for f in spec.schema)
    out = [f'CREATE TABLE "{spec.name}" ({cols})']
    if comment_of(spec.schema):
        out.append(f'COMMENT ON TABLE "{spec.name}" IS {_sql_string(comment_of(spec.schema))}')
    out += [f'COMMENT ON COLUMN "{spec.name}"."{f.name}" IS {_sql_string(comment_of(f))}' for f in spec.schema if comment_of(f)]
    return out


def write_view(con: duckdb.DuckDBPyConnection, view: View, schemas: list[pa.Schema]) -> None:
    """Creates a view (or a table macro) and comments on it and on each of a view's columns: from
    `view.columns`, else from the same-named column of the first of `schemas` (its tables) holding one."""
    kind = "MACRO TABLE" if view.macro is not None else "VIEW"
    if view.macro is not None:
        con.execute(f'CREATE MACRO "{view.name}"({view.macro}) AS TABLE {view.sql}')
    else:
        con.execute(f'CREATE VIEW "{view.name}" AS {view.sql}')
    con.execute(f'COMMENT ON {kind} "{view.name}" IS {_sql_string(view.comment)}')
    if view.macro is not None:
        return
    comments = {f.name: comment_of(f) for schema in reversed(schemas) for f in schema if comment_of(f)}
    comments |= dict(view.columns)
    for (name, *_) in con.execute(f'DESCRIBE "{view.name}"').fetchall():
        if comments.get(name):
            con.execute(f'COMMENT ON COLUMN "{view.name}"."{name}" IS {_sql_string(comments[name])}')


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


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _release_files(directory: Path) -> list[Path]:
    return [p for p in sorted(directory.rglob("*")) if p.is_file() and p.name != MANIFEST]


def file_hashes(directory: Path) -> dict[str, str]:
    """sha256 of every file under a release directory except the manifest."""
    return {p.relative_to(directory).as_posix(): sha256_file(p) for p in _release_files(directory)}


def file_sizes(directory: Path) -> dict[str, int]:
    """Size in bytes of every file under a release directory except the manifest (the quick check)."""
    return {p.relative_to(directory).as_posix(): p.stat().st_size for p in _release_files(directory)}


# -- release ids, staging, publication -----------------------------------------------------------


def unique_release_id(root: Path, digest: str, now: datetime | None = None) -> str:
    """`<UTC time>Z-<digest[:8]>`, or with `-2`, `-3`, … appended when a release or staging
    directory of that id exists under ROOT/releases (a second run on the same inputs within one
    second). Ids sort by time to the second; unique under the root's lock, and `staging_dir`
    refuses an id that is taken even without it."""
    base = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ") + "-" + digest[:8]
    releases = RootLayout(root).releases
    n = 1
    while True:
        rid = base if n == 1 else f"{base}-{n}"
        if not (releases / rid).exists() and not (releases / f"{STAGING}{rid}").exists():
            return rid
        n += 1


def staging_dir(root: Path, release_id: str) -> Path:
    """A new, empty staging directory; FileExistsError when a run already builds (or built) this id:
    another run's directory is never removed or shared."""
    releases = RootLayout(root).releases
    if (releases / release_id).exists():
        raise FileExistsError(f"release already exists: {releases / release_id}")
    releases.mkdir(parents=True, exist_ok=True)
    path = releases / f"{STAGING}{release_id}"
    try:
        path.mkdir()
    except FileExistsError:
        raise FileExistsError(f"release {release_id} is being built by another run: {path}") from None
    return path


def finalise(staging: Path, release_id: str, manifest: Manifest) -> Path:
    """Renames staging to its final name, then writes the manifest last."""
    final = staging.parent / release_id
    if final.exists():
        raise FileExistsError(f"release already exists: {final}")
    os.replace(staging, final)
    write_manifest(final, manifest)
    return final


def discard(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def building(root: Path, release_id: str) -> Iterator[Path]:
    """A fresh staging directory for a release; removed if the block fails (whatever the error),
    so a failed build leaves nothing behind and never touches published releases."""
    staging = staging_dir(root, release_id)
    try:
        yield staging
    except BaseException:
        discard(staging)
        raise


def published_id(root: Path) -> str | None:
    """The release id ROOT/published.json names; None when there is no such file. IntegrityError
    naming the file when it is unreadable (a truncated write) or names no valid release id."""
    pointer = Path(root) / PUBLISHED
    if not pointer.is_file():
        return None
    try:
        rid = read_json(pointer).get("release_id")
    except IntegrityError as exc:
        raise IntegrityError(f"{exc}: it does not name a release; write {{\"release_id\": \"<id>\"}} "
                             f"into it or remove it") from None
    if not isinstance(rid, str) or not rid or "/" in rid or rid.startswith("."):
        raise IntegrityError(f"{pointer} names no valid release id: {rid!r}")
    return rid


def published_release(root: Path) -> Path | None:
    """The last release that passed its gate, or None (IntegrityError: published.json unreadable)."""
    rid = published_id(root)
    if rid is None:
        return None
    path = RootLayout(root).releases / rid
    return path if (path / MANIFEST).is_file() else None


def resolve_release(path: Path | str) -> Path:
    """The release a path names where a release is expected: a release directory itself, or a
    release root's published release. FileNotFoundError in one line when it is neither, or when
    nothing is published under the root; IntegrityError when published.json is unreadable."""
    path = Path(path)
    if ReleaseLayout(path).is_release():
        return path
    if not RootLayout(path).holds(path):
        raise FileNotFoundError(f"{path} is neither a release (no {MANIFEST}) nor a release root")
    rid = published_id(path)
    if rid is None:
        raise FileNotFoundError(f"nothing is published under {path} (no {PUBLISHED}); give a release directory")
    release = RootLayout(path).release(rid)
    if not release.is_release():
        raise FileNotFoundError(f"{RootLayout(path).published} names release {rid}, which is not complete (no {MANIFEST})")
    return release.dir


def published_releases(root: Path, limit: int) -> list[Path]:
    """The last `limit` published releases under root, oldest first: those whose manifest says
    `published`, up to the one `published.json` names (one after it was withdrawn by pointing
    back). Release ids begin with their UTC build time, so name order is build order."""
    last = published_release(root)
    if last is None:
        return []
    found = []
    for path in sorted(RootLayout(root).releases.iterdir()):
        if path.name.startswith(".") or path.name > last.name or not (path / MANIFEST).is_file():
            continue
        try:
            if load_manifest(path).get("published") is True:
                found.append(path)
        except (OSError, ValueError):
            continue
    return found[-limit:] if limit > 0 else []


def publish(root: Path, release_id: str) -> None:
    write_json(Path(root) / PUBLISHED, {"release_id": release_id})


# -- integrity -------------------------------------------------------------------------------------


def read_manifest(release: Path) -> Manifest:
    """A release's manifest, typed (`Manifest.from_json`: keys of another version kept, not refused);
    FileNotFoundError when it is no complete release, IntegrityError when the file is unreadable or
    does not validate."""
    obj = load_manifest(release)
    try:
        return Manifest.from_json(obj)
    except ValueError as exc:
        raise IntegrityError(f"{ReleaseLayout(release).manifest} does not validate: {' '.join(str(exc).split())[:300]}") from None


def write_manifest(release: Path, manifest: Manifest) -> Path:
    """Writes a release's manifest (atomically, sorted keys: `write_json`)."""
    path = ReleaseLayout(release).manifest
    write_json(path, manifest.to_json())
    return path


def load_manifest(release: Path) -> dict:
    path = Path(release) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"not a complete release (no {MANIFEST}): {release}")
    return read_json(path)


def verify_release(release: Path, quick: bool = False, only: Iterable[str] | None = None) -> list[str]:
    """What is wrong with a release directory against its manifest, one line per bad file (empty:
    the release is intact): the manifest missing or unreadable, or a file it lists missing, of
    another size than it records, or (unless `quick`) of another sha256. `quick` costs a stat per
    file (a manifest written before sizes were recorded: presence only); the full check reads every
    byte. `only`: these paths alone, each of which the manifest must list."""
    release = Path(release)
    try:
        manifest = load_manifest(release)
    except FileNotFoundError:
        return [f"{MANIFEST}: missing"]
    except IntegrityError as exc:
        return [f"{MANIFEST}: {exc}"]
    files, sizes = manifest.get("files"), manifest.get("sizes") or {}
    if not isinstance(files, dict) or not files:
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


# -- the root's lock and the leftovers of interrupted runs ---------------------------------------

_HELD: dict[str, tuple[tuple[int, int], int]] = {}  # resolved root -> ((pid, thread), lock fd)


@contextmanager
def root_lock(root: Path, wait_s: float = 0.0) -> Iterator[None]:
    """An exclusive `flock` on ROOT/.lock for the block: one release-writing run per root. RootBusy
    (naming the holder's pid, which the holder writes into the file) at once, or after `wait_s`
    seconds of retrying. Reentrant on the thread holding it (the CLI takes it before Prefect
    starts, the flow again, for runs that do not come through the CLI). The kernel drops the lock
    when its holder dies, however it dies."""
    key = str(Path(root).resolve())
    me = (os.getpid(), threading.get_ident())
    if key in _HELD and _HELD[key][0] == me:
        yield
        return
    fd = _acquire(Path(key), wait_s)
    _HELD[key] = (me, fd)
    try:
        yield
    finally:
        del _HELD[key]
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _acquire(root: Path, wait_s: float) -> int:
    """The lock's file descriptor, locked and holding this process's pid."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                holder = _holder(fd)
                os.close(fd)
                waited = f"; waited {wait_s:g} s" if wait_s > 0 else ""
                raise RootBusy(f"another release is running on {root} ({holder}){waited}") from None
            time.sleep(min(0.2, max(0.01, deadline - time.monotonic())))
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _holder(fd: int) -> str:
    """`pid N` of the lock's holder, as it wrote it; says so when that process is gone (a child it
    forked still holds the lock) or when it has not written its pid yet."""
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    if not text.isdigit():
        return "pid unknown"
    try:
        os.kill(int(text), 0)
    except ProcessLookupError:
        return f"pid {text}, no longer running: a process it started still holds the lock"
    except PermissionError:
        pass
    return f"pid {text}"


def clean_leftovers(root: Path) -> list[str]:
    """Removes what interrupted runs left under ROOT/releases: staging directories, and release
    directories without their manifest (a kill between the rename and the manifest), plus a
    half-written published.json.tmp. Only under the root's lock, when no live run owns any of
    them. Returns one line per removal, for the run's log."""
    root = Path(root)
    removed = []
    releases = RootLayout(root).releases
    for path in sorted(releases.iterdir()) if releases.is_dir() else []:
        if not path.is_dir() or path.is_symlink():
            continue
        if path.name.startswith(STAGING):
            why = "an interrupted run's staging directory"
        elif RELEASE_ID.match(path.name) and not (path / MANIFEST).exists():
            why = f"an interrupted run's release, renamed but without its {MANIFEST}"
        else:
            continue
        shutil.rmtree(path)
        removed.append(f"removed {path} ({why})")
    tmp = root / f"{PUBLISHED}.tmp"
    if tmp.is_file():
        tmp.unlink()
        removed.append(f"removed {tmp} (an interrupted write of {PUBLISHED})")
    return removed
