"""A release root that no release may be written to is refused before any build work (issue 13):
in `store.check_output_root`, at the start of a flow run (a deployment made without MATHINDEX_OUT),
and by the CLI (exit 2, one line)."""

from __future__ import annotations

import os
import time

import pytest

from mathindex.cli import main
from mathindex.store.layout import OutputRootError, check_output_root

UNRESOLVED = "{{ $MATHINDEX_OUT }}"  # what `prefect deploy` leaves in the parameter when the variable is unset


@pytest.mark.parametrize("out, says", [
    ("", "is empty"), ("   ", "is empty"), (None, "is empty"),
    (UNRESOLVED, "unresolved template"),
])  # fmt: skip
def test_empty_or_template_roots_are_refused(out, says):
    with pytest.raises(OutputRootError, match=says) as info:
        check_output_root(out)
    assert "\n" not in str(info.value)


def test_file_missing_parent_and_unwritable_roots_are_refused(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputRootError, match="is not a directory"):
        check_output_root(str(tmp_path / "file"))
    with pytest.raises(OutputRootError, match="parent .* is not a directory"):
        check_output_root(str(tmp_path / "file" / "root"))
    with pytest.raises(OutputRootError, match="parent .* does not exist"):
        check_output_root(str(tmp_path / "no" / "such" / "root"))
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real_access(p, mode))
    with pytest.raises(OutputRootError, match="is not writable"):  # tests run as root: os.access is the boundary
        check_output_root(str(tmp_path))


def test_good_roots_resolve(tmp_path):
    assert check_output_root(str(tmp_path)) == tmp_path.resolve()
    assert check_output_root(f" {tmp_path / 'new'} ") == (tmp_path / "new").resolve()  # created later, by the run
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("out", ["", UNRESOLVED])
def test_release_flow_refuses_an_empty_root_before_building(out, tmp_path, monkeypatch, prefect_harness):
    """Before: `Path("").resolve()` is the working directory, so a deployment without MATHINDEX_OUT
    built a whole release into it (or into a directory named `{{ $MATHINDEX_OUT }}`)."""
    from mathindex.flows.release import release_flow

    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    state = release_flow(out=out, return_state=True)
    assert state.is_failed()
    assert "release root" in state.message and ("is empty" in state.message or "unresolved" in state.message)
    assert list(tmp_path.iterdir()) == []  # no lock, no cache, no staging directory
    assert time.monotonic() - started < 30


def test_reembed_flow_refuses_an_empty_root(tmp_path, monkeypatch, prefect_harness):
    from mathindex.flows.reembed import reembed_flow

    monkeypatch.chdir(tmp_path)
    state = reembed_flow(release=str(tmp_path / "nothing"), model="default", out=" ", return_state=True)
    assert state.is_failed() and "is empty" in state.message
    assert list(tmp_path.iterdir()) == []


def test_cli_refuses_bad_roots_in_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    for argv in (["release", "--out", ""], ["release", "--out", str(tmp_path / "file")],
                 ["release", "--out", str(tmp_path / "no" / "root")]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("mathindex release: argument --out: the release root") and "\n" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
