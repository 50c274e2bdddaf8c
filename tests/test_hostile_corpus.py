"""A hostile corpus: links out of the root, FIFOs, devices, huge and unreadable files, hidden
DOCTYPEs, empty corpora, system directories as sources, SIGTERM. Each case ends in a one-line
message or an errors row within its time bound, and nothing outside a corpus root reaches a table.

Cases that could hang (a FIFO) or exhaust memory (a 2 GB file) run in a subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import psutil
import pyarrow.parquet as pq
import pytest
from prefect.settings import PREFECT_API_URL

import mathindex.flows.release  # noqa: F401 - imported here, so time bounds measure the work, not imports
from mathindex.cli import main
from mathindex.latex import extract_latex_tree
from mathindex.latex.xmlreader import extract_xml_file
from mathindex.lean import extract_lean_tree
from mathindex.sources import SourceError, load_sources, sources_from_dirs

REPO = Path(__file__).resolve().parent.parent
SECRET = "SecretOutside"  # every file outside the corpus roots carries it; no table may
GOOD_LEAN = "namespace Good\n/-- Two is two. -/\ntheorem two_eq : 2 = 2 := rfl\nend Good\n"
GOOD_TEX = "\\begin{lemma}\\label{lemma-good} Good $x$. \\end{lemma}\n"
SECRET_LEAN = f"theorem {SECRET}_lean : True := trivial\n"
SECRET_TEX = f"\\begin{{theorem}}\\label{{{SECRET}-tex}} {SECRET} $q$. \\end{{theorem}}\n"
SECRET_XML = f'<document><theorem class="ltx_theorem_lemma"><p>{SECRET} <Math tex="s" mode="inline"/></p></theorem></document>\n'
# Permission bits do not stop root: as root, the kernel's EACCES at open is simulated for `locked*`.
SIMULATE_EACCES = textwrap.dedent("""
    import io, os
    _os_open, _io_open = os.open, io.open
    def _locked(path):
        return os.path.basename(os.fspath(path)).lower().startswith("locked")
    def _deny(opener):
        def open_(path, *args, **kwargs):
            if isinstance(path, (str, bytes, os.PathLike)) and _locked(path):
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return opener(path, *args, **kwargs)
        return open_
    os.open, io.open = _deny(_os_open), _deny(_io_open)
""")


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def _outside(tmp_path: Path) -> Path:
    return _write(tmp_path / "outside", {"Secret.lean": SECRET_LEAN, "secret.tex": SECRET_TEX, "secret.xml": SECRET_XML,
                                          "tags": f"0SEC,lemma-good\n0SEX,{SECRET}-tex\n"})


def _link(path: Path, target: Path | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)


def _lock(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0)


def _errors(errors_table) -> dict[str, str]:
    return {r["file"]: r["reason"] for r in errors_table.to_pylist()}


def _run_bounded(args: list[str], timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs a command in its own process group; fails the test (killing the group) past `timeout`."""
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, **(env or {})})
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{' '.join(args[:3])}… still running after {timeout:g} s (a hang)")
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def _python(code: str, *args: str, timeout: float) -> subprocess.CompletedProcess:
    return _run_bounded([sys.executable, "-c", code, *args], timeout)


# -- links out of the root ------------------------------------------------------------------------
def test_links_out_of_the_root_are_refused_with_an_errors_row(tmp_path):
    outside = _outside(tmp_path)
    lean = _write(tmp_path / "lean", {"Good.lean": GOOD_LEAN})
    _link(lean / "Out.lean", outside / "Secret.lean")
    _link(lean / "Inside.lean", lean / "Good.lean")  # a link that stays inside is read as usual
    _link(lean / "Dir", outside)  # directory links are not followed
    tex = _write(tmp_path / "tex", {"a.tex": GOOD_TEX})
    _link(tex / "out.tex", outside / "secret.tex")
    _link(tex / "out.xml", outside / "secret.xml")
    _link(tex / "tags" / "tags", outside / "tags")
    start = time.monotonic()
    lean_run = extract_lean_tree(lean, "l")
    tex_run = extract_latex_tree(tex, "t", workers=1)
    assert time.monotonic() - start < 60
    names = lean_run.declarations["full_name"].to_pylist()
    assert names.count("Good.two_eq") == 2 and not any(SECRET in n for n in names)
    assert _errors(lean_run.errors) == {"Out.lean": "resolves outside the corpus root (a symbolic link out of the tree); not read"}
    assert [(s["label"], s["tag"]) for s in tex_run.statements.to_pylist()] == [("lemma-good", None)]
    assert SECRET not in str(tex_run.formulas.to_pylist())
    reasons = _errors(tex_run.errors)
    assert set(reasons) == {"out.tex", "out.xml", "tags/tags"}
    assert all("outside the corpus root" in r for r in reasons.values()) and reasons["tags/tags"].startswith("tags file")


# -- sources entries --------------------------------------------------------------------------------
@pytest.mark.parametrize("path, why", [("/", "filesystem root"), ("../../../../../../../../../..", "filesystem root"),
                                       ("/etc", "system directory /etc"), ("etc-link", "system directory /etc")])
def test_sources_entries_resolving_to_root_or_system_dirs_are_refused(tmp_path, path, why):
    _link(tmp_path / "etc-link", "/etc")
    (tmp_path / "s.yaml").write_text(f"sources:\n  - {{name: bad, kind: lean, path: '{path}'}}\n")
    with pytest.raises(SourceError, match=f"source 'bad': path .*{why}; refused"):
        load_sources(tmp_path / "s.yaml")


def test_system_dirs_are_refused_in_one_line_before_prefect_starts(tmp_path, capfd):
    with pytest.raises(SourceError, match="filesystem root"):
        sources_from_dirs([Path("/")], [])
    lean = _write(tmp_path / "lean", {"Good.lean": GOOD_LEAN})
    start = time.monotonic()
    assert main(["release", "--lean", "/etc", "--out", str(tmp_path / "out")]) == 2
    assert main(["release", "--lean", str(lean), "--suite", "/etc/passwd", "--out", str(tmp_path / "out")]) == 2
    assert main(["extract", "lean", "/usr/share", "--out", str(tmp_path / "x.parquet")]) == 2
    assert time.monotonic() - start < 10
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "Traceback" not in "".join(err)
    assert "source 'etc': path /etc, inside the system directory /etc; refused" in err[0]
    assert "suite 'passwd': path /etc/passwd, inside the system directory /etc; refused" in err[1]
    assert "mathindex extract: lean directory: path /usr/share, inside the system directory /usr; refused" in err[2]
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.parquet").exists()


# -- FIFOs, devices, huge files (in a subprocess: a regression would hang or exhaust memory) -----------
_EXTRACT_ALL = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from mathindex.latex import extract_latex_tree
    from mathindex.lean import extract_lean_tree
    from mathindex.sources import pin_source, sources_from_dirs
    lean, tex = Path(sys.argv[1]), Path(sys.argv[2])
    start = time.monotonic()
    pins = [pin_source(s).files for s in sources_from_dirs([lean], [tex])]
    runs = [extract_lean_tree(lean, "l"), extract_latex_tree(tex, "t", workers=1)]
    print(json.dumps({
        "pins": pins,
        "errors": {r["file"]: r["reason"] for x in runs for r in x.errors.to_pylist()},
        "names": runs[0].declarations["full_name"].to_pylist() + runs[1].statements["label"].to_pylist(),
        "seconds": time.monotonic() - start,
        # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across execve, so a child of a big pytest
        # process starts at its parent's peak
        "max_rss_mb": next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM:")) / 1024,
    }))
""")


def _extract_all(lean: Path, tex: Path, timeout: float) -> dict:
    run = _python(_EXTRACT_ALL, str(lean), str(tex), timeout=timeout)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.splitlines()[-1])


def test_fifos_and_devices_are_refused_without_being_opened(tmp_path):
    lean = _write(tmp_path / "lean", {"Good.lean": GOOD_LEAN})
    tex = _write(tmp_path / "tex", {"a.tex": GOOD_TEX})
    for fifo in (lean / "Fifo.lean", tex / "fifo.tex", tex / "fifo.xml"):
        os.mkfifo(fifo)
    _link(lean / "Zero.lean", "/dev/zero")
    _link(tex / "zero.tex", "/dev/zero")
    _link(tex / "null.xml", "/dev/null")
    _link(lean / "Broken.lean", lean / "Missing.lean")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tex / "sock.tex"))
        got = _extract_all(lean, tex, timeout=180)
    assert got["pins"] == [4, 6]
    assert sorted(got["names"]) == ["Good.two_eq", "lemma-good"]
    device = "resolves outside the corpus root (a symbolic link out of the tree); not read"  # /dev is outside
    assert got["errors"] == {
        "Fifo.lean": "a FIFO, not a regular file; not read",
        "Zero.lean": device,
        "Broken.lean": "broken symbolic link; not read",
        "fifo.tex": "a FIFO, not a regular file; not read",
        "fifo.xml": "a FIFO, not a regular file; not read",
        "sock.tex": "a socket, not a regular file; not read",
        "zero.tex": device,
        "null.xml": device,
    }


def test_a_2_gb_file_is_refused_before_a_byte_is_read(tmp_path):
    lean = _write(tmp_path / "lean", {"Good.lean": GOOD_LEAN})
    tex = _write(tmp_path / "tex", {"a.tex": GOOD_TEX})
    for huge in (lean / "Huge.lean", tex / "huge.tex", tex / "huge.xml"):
        with open(huge, "wb") as handle:
            handle.truncate(2 * 1024**3)  # sparse: 2 GB of zeros that take no disk
    got = _extract_all(lean, tex, timeout=240)
    assert got["max_rss_mb"] < 700, got  # reading any of them whole would take 2 GB
    assert got["seconds"] < 60 and sorted(got["names"]) == ["Good.two_eq", "lemma-good"]
    size = 2 * 1024**3
    assert got["errors"] == {
        "Huge.lean": f"file too large ({size} bytes > cap 50000000); not read",
        "huge.tex": f"file too large ({size} bytes > cap {16 * 1024**2}); not read",
        "huge.xml": f"file too large ({size} bytes > cap {256 * 1024**2}); not read",
    }


# -- unreadable files -------------------------------------------------------------------------------
def test_an_unreadable_file_is_an_errors_row_and_pinning_goes_on(tmp_path):
    lean = _write(tmp_path / "lean", {"Good.lean": GOOD_LEAN})
    tex = _write(tmp_path / "tex", {"a.tex": GOOD_TEX})
    _lock(lean / "Locked.lean", SECRET_LEAN)
    _lock(tex / "locked.tex", SECRET_TEX)
    _lock(tex / "locked.xml", SECRET_XML)
    code = (SIMULATE_EACCES if os.geteuid() == 0 else "") + _EXTRACT_ALL
    run = _python(code, str(lean), str(tex), timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.splitlines()[-1])
    assert got["pins"] == [2, 3] and sorted(got["names"]) == ["Good.two_eq", "lemma-good"]
    assert got["errors"] == {name: "permission denied; not read" for name in ("Locked.lean", "locked.tex", "locked.xml")}


# -- XML entity declarations anywhere before the root ------------------------------------------------
XXE_DOCTYPE = '<!DOCTYPE doc [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
PE_DOCTYPE = '<!DOCTYPE doc [<!ENTITY % pe SYSTEM "file:///etc/passwd"> %pe;]>\n'


@pytest.mark.parametrize("doctype, body", [
    (XXE_DOCTYPE, '<document><theorem class="ltx_theorem_lemma"><p>&xxe;</p></theorem></document>\n'),
    (PE_DOCTYPE, '<document><theorem class="ltx_theorem_lemma"><p>x</p></theorem></document>\n'),
    (XXE_DOCTYPE, "<mediawiki><page><title>T</title><ns>0</ns><revision><text>{{Theorem|&xxe;}}</text></revision>"
                  "</page></mediawiki>\n"),
], ids=["external-entity", "parameter-entity", "mediawiki"])
def test_a_doctype_hidden_behind_a_long_comment_is_refused(tmp_path, doctype, body):
    path = tmp_path / "evil.xml"
    path.write_text('<?xml version="1.0"?>\n<!--' + "x" * 1_200_000 + "-->\n" + doctype + body)
    start = time.monotonic()
    result = extract_xml_file(path, "evil.xml", "x")
    assert time.monotonic() - start < 20
    assert result.statements == [] and result.formulas == []
    assert result.errors == [(None, "XML refused: DOCTYPE declares entities (entity expansion and external "
                                    "entities are refused)")]
    plain = tmp_path / "plain.xml"  # a DOCTYPE that declares no entity is read
    plain.write_text("<!--" + "x" * 1_200_000 + '-->\n<!DOCTYPE document [<!ELEMENT p ANY>]>\n' + SECRET_XML)
    assert len(extract_xml_file(plain, "plain.xml", "x").statements) == 1


# -- SIGTERM -------------------------------------------------------------------------------------------
_BUSY_POOL = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    kind, root = sys.argv[1], Path(sys.argv[2])

    def deferred(signum, frame):  # a parent's handler that raises, as Prefect's SIGTERM bridge does
        raise RuntimeError("SIGTERM deferred")

    signal.signal(signal.SIGTERM, deferred)

    def busy(*args, **kwargs):  # stands in for a file that takes long to scan
        (root / f"busy-{os.getpid()}").touch()
        while True:
            try:
                time.sleep(600)
            except RuntimeError:
                pass

    if kind == "lean":
        import mathindex.lean.extract as lean
        import mathindex.lean.shards as shards
        shards.scan_file = busy
        for i in range(4):
            (root / f"F{i}.lean").write_text("theorem t : True := trivial\\n")
        plan = lean.plan_extraction(root, "c", None, spread=2, shard_bytes=1)  # a shard a file
        lean.scan_in_pool(plan.shards, None, workers=2)
    else:
        import mathindex.latex.tree as tree
        tree.SERIAL_BELOW_BYTES, tree.extract_tex_text = 0, busy
        for i in range(4):
            (root / f"f{i}.tex").write_text("$x$\\n")
        tree.extract_latex_tree(root, "c", workers=2)
""")


def _running(pid: int) -> bool:
    """Whether the process exists and is not a zombie; one that exits while it is read counts as gone."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _gone(pids: list[int], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [p for p in pids if _running(p)]
        if not alive:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("kind", ["lean", "latex"])
@pytest.mark.parametrize("target", ["worker", "parent"])
def test_extraction_workers_stop_on_sigterm(tmp_path, kind, target):
    """SIGTERM to a busy worker ends it; SIGKILL to its parent ends the workers too (no orphans)."""
    proc = subprocess.Popen([sys.executable, "-c", _BUSY_POOL, kind, str(tmp_path)], cwd=REPO, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(busy := sorted(tmp_path.glob("busy-*"))) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert len(busy) == 2, "the pool's workers never started"
        workers = [int(p.name.removeprefix("busy-")) for p in busy]
        if target == "worker":
            for pid in workers:
                os.kill(pid, signal.SIGTERM)
        else:
            proc.kill()
        assert _gone(workers, timeout=10), f"workers {workers} still running after {target} got its signal"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the script and whatever of its workers is left
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


# -- empty corpora ---------------------------------------------------------------------------------
def test_an_empty_corpus_directory_is_refused_in_one_line_before_prefect_starts(tmp_path, capfd):
    (tmp_path / "empty").mkdir()
    start = time.monotonic()
    assert main(["release", "--lean", str(tmp_path / "empty"), "--out", str(tmp_path / "out")]) == 2
    assert time.monotonic() - start < 10
    err = capfd.readouterr().err.strip()
    assert err == f"mathindex release: source 'empty': no lean files under {(tmp_path / 'empty').resolve()}"
    assert not (tmp_path / "out").exists()


def test_a_corpus_without_statements_gives_an_empty_valid_release(tmp_path, prefect_harness, capsys):
    lean = _write(tmp_path / "lean", {"Notes.lean": "-- nothing declared here\n"})
    tex = _write(tmp_path / "tex", {"notes.tex": "Some prose, no theorem.\n"})
    out = tmp_path / "out"
    # no suite: published only ungated (the gate fails closed)
    assert main(["release", "--lean", str(lean), "--latex", str(tex), "--out", str(out), "--no-gate"]) == 0
    (release,) = [p for p in (out / "releases").iterdir() if not p.name.startswith(".")]
    manifest = json.loads((release / "manifest.json").read_text())
    counts = manifest["row_counts"]
    assert counts["declarations"] == counts["latex_statements"] == counts["nodes"] == counts["embedding_texts"] == 0
    assert json.loads((out / "published.json").read_text())["release_id"] == release.name
    capsys.readouterr()
    assert main(["search", str(release), "two $x$", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["hits"] == [] and answer["unavailable"] == {}


# -- a whole release over a hostile corpus --------------------------------------------------------------
def _table_text(release: Path) -> str:
    """Every value of every Parquet table and DuckDB table of a release, as one string."""
    parts = [str(pq.read_table(p).to_pylist()) for p in sorted(release.rglob("*.parquet"))]
    with duckdb.connect(str(release / "search.duckdb"), read_only=True) as db:
        for (name,) in db.execute("select table_name from information_schema.tables").fetchall():
            parts.append(str(db.execute(f'select * from "{name}"').fetchall()))
    return "\n".join(parts)


def test_a_release_over_a_hostile_corpus_keeps_everything_outside_out(tmp_path, prefect_harness):
    outside = _outside(tmp_path)
    lean = _write(tmp_path / "lean", {"Good.lean": GOOD_LEAN})
    tex = _write(tmp_path / "tex", {"a.tex": GOOD_TEX})
    _link(lean / "Out.lean", outside / "Secret.lean")
    _link(tex / "out.tex", outside / "secret.tex")
    _link(tex / "out.xml", outside / "secret.xml")
    _link(tex / "tags" / "tags", outside / "tags")
    os.mkfifo(lean / "Fifo.lean")
    os.mkfifo(tex / "fifo.tex")
    _link(lean / "Zero.lean", "/dev/zero")
    _lock(lean / "Locked.lean", SECRET_LEAN)
    _lock(tex / "locked.tex", SECRET_TEX)
    out = tmp_path / "out"
    argv = ["release", "--lean", str(lean), "--latex", str(tex), "--out", str(out), "--no-gate"]
    code = (SIMULATE_EACCES if os.geteuid() == 0 else "") + f"from mathindex.cli import main; raise SystemExit(main({argv!r}))"
    env = {"PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_API_URL": PREFECT_API_URL.value()}  # the session's server
    run = _run_bounded([sys.executable, "-c", code], timeout=900, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    (release,) = [p for p in (out / "releases").iterdir() if not p.name.startswith(".")]
    errors = {(r["file"], r["reason"]) for r in pq.read_table(release / "errors.parquet").to_pylist()}
    assert errors >= {
        ("Out.lean", "resolves outside the corpus root (a symbolic link out of the tree); not read"),
        ("out.tex", "resolves outside the corpus root (a symbolic link out of the tree); not read"),
        ("out.xml", "resolves outside the corpus root (a symbolic link out of the tree); not read"),
        ("tags/tags", "tags file unreadable: resolves outside the corpus root (a symbolic link out of the tree); not read"),
        ("Fifo.lean", "a FIFO, not a regular file; not read"),
        ("fifo.tex", "a FIFO, not a regular file; not read"),
        ("Zero.lean", "resolves outside the corpus root (a symbolic link out of the tree); not read"),
        ("Locked.lean", "permission denied; not read"),
        ("locked.tex", "permission denied; not read"),
    }
    names = pq.read_table(release / "nodes.parquet").column("name").to_pylist()
    assert "Good.two_eq" in names and "lemma-good" in names
    text = _table_text(release)
    assert SECRET not in text and "0SEC" not in text
