"""Bad input becomes `errors` rows, never an exception or a hang; a property test on mutated text."""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathindex.lean import extract_lean_tree
from mathindex.lean.shards import extract_file

GOOD = """namespace Good
/-- doc -/
theorem fine (n : Nat) : n = n := rfl
structure S where
  x : Nat
end Good
"""


def _tree(tmp_path: Path, files: dict[str, bytes]) -> Path:
    root = tmp_path / "lib"
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root


def test_each_bad_file_is_an_error_row_and_others_still_extract(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "A/Good.lean": GOOD.encode(),
        "A/Latin1.lean": "theorem caf\xe9 : True := trivial\n".encode("latin-1"),
        "A/OpenComment.lean": b"theorem before : True := trivial\n/- never closed\ntheorem hidden : True\n",
        "A/OpenString.lean": b'def s : String := "no end\ntheorem after : True := trivial\n',
        "A/Truncated.lean": b"theorem cut (h : (a = b\n",
        "A/Binary.lean": bytes(range(256)) * 4,
        "A/NotLean.lean": b"<html><body>hello</body></html>\n",
        "A/Python.lean": b"import os\n\ndef foo(x):\n    return x\n",
        "A/C.lean": b"#include <stdio.h>\nint main() { return 0; }\n",
        "A/LongLine.lean": b"def big : Nat := " + b"1 + " * 2_500_000 + b"1\n",
    })
    t0 = time.perf_counter()
    out = extract_lean_tree(root, "bad")
    assert time.perf_counter() - t0 < 30
    names = set(out.declarations["full_name"].to_pylist())
    assert {"Good.fine", "Good.S", "Good.S.x", "before", "big"} <= names
    assert "hidden" not in names
    reasons = {(e["file"], e["reason"].split(";")[0]) for e in out.errors.to_pylist()}
    files_with_errors = {f for f, _ in reasons}
    assert files_with_errors == {
        "A/Latin1.lean", "A/OpenComment.lean", "A/OpenString.lean", "A/Truncated.lean",
        "A/Binary.lean", "A/NotLean.lean", "A/Python.lean", "A/C.lean",
    }
    assert "foo" not in names
    assert ("A/OpenComment.lean", "unterminated block comment") in reasons
    assert ("A/OpenString.lean", "unterminated string literal") in reasons
    assert all(e["stage"] == "extract_lean" and e["corpus"] == "bad" for e in out.errors.to_pylist())
    lines = {e["file"]: e["line"] for e in out.errors.to_pylist()}
    assert lines["A/OpenComment.lean"] == 2 and lines["A/Latin1.lean"] == 1


FRAGMENTS = [
    "namespace X\n", "end X\n", "section\n", "end\n", "variable {α : Type*} [Foo α]\n",
    "/-- doc -/\n", "@[simp, to_additive]\n", "theorem t (a : α) : a = a := rfl\n",
    "instance : Foo (Bar α) where\n  x := 1\n", "structure S extends T where\n  f : Nat\n",
    "inductive I\n  | a | b (n : Nat)\n", "/- ", "-/", '"', "'", "«", "»", "(", ")", "[", "]",
    "{", "}", ":=", " where ", "\n", "|", "--", "open X in\n", "omit [Foo α] in\n",
    "include a in\n", "alias ⟨a, b⟩ := c\n", "attribute [to_additive] foo\n", "deriving ",
    "\u00e9", "\x00", "@[", "private ", "protected ", "_root_.", ".{u}",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=8), max_size=40))
def test_mutated_lean_never_raises_or_loops(parts: list[str]) -> None:
    data = "".join(parts).encode("utf-8", errors="replace")
    t0 = time.perf_counter()
    rows, errs = extract_file(data, "fuzz", "F.lean")
    assert time.perf_counter() - t0 < 2.0
    assert isinstance(rows, list) and isinstance(errs, list)
    for r in rows:
        assert isinstance(r["full_name"], str) and r["line_start"] <= r["line_end"]


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=len(GOOD)), st.integers(min_value=0, max_value=40),
       st.binary(max_size=6))
def test_cut_and_spliced_files_never_raise(cut: int, drop: int, junk: bytes) -> None:
    raw = GOOD.encode()
    data = raw[:cut] + junk + raw[cut + drop:]
    rows, errs = extract_file(data, "fuzz", "G.lean")
    assert all(e["file"] == "G.lean" for e in errs)
