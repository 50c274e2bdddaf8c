"""The CLI contract: bad usage and bad paths are one line on stderr and exit 2."""

import pytest

from mathindex.cli import main


@pytest.mark.parametrize(
    "argv",
    [
        ["release", "--out", "x", "--lean", "/no/such/dir"],
        ["release", "--out", "x", "--bogus"],
        ["search", "/no/such/release", "q"],
        ["extract", "lean", "/no/such/dir", "--out", "x.parquet"],
        ["gate", "--baseline", "/no/such.json", "--current", "/no/such.json"],
        ["bench", "/tmp", "--suite", "/no/such.json"],
        ["formula"],
        [],
    ],
)
def test_bad_usage_is_one_line_and_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "Traceback" not in err


def test_sources_file_with_moving_ref_is_refused(tmp_path, capsys):
    (tmp_path / "lean").mkdir()
    (tmp_path / "lean" / "A.lean").write_text("theorem a : True := trivial\n")
    (tmp_path / "s.yaml").write_text("sources:\n  - {name: x, kind: lean, path: lean, commit: main}\n")
    assert main(["release", "--sources", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "moving ref" in err and "\n" not in err.strip()
    assert not (tmp_path / "out").exists()


def test_version_prints_the_code_version(capsys):
    from mathindex import __version__

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"mathindex {__version__}\n"


def test_a_closed_pipe_ends_quietly(tmp_path):
    """`mathindex … | head`: when the reader goes away, no BrokenPipeError traceback or error line."""
    import subprocess
    import sys
    from pathlib import Path

    formulas = tmp_path / "f.txt"
    formulas.write_text("x^2+1\n" * 3000)  # far more output than a pipe buffers
    run = subprocess.Popen([sys.executable, "-m", "mathindex", "formula", "--file", str(formulas)],
                           cwd=Path(__file__).resolve().parent.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert run.stdout.readline().startswith(b"formula:")
    run.stdout.close()
    err = run.stderr.read().decode()
    assert run.wait(timeout=60) == 1
    assert err == ""
