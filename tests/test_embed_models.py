"""Models as pinned release inputs: the models directory, resolving `--model`, pinning, references.

Model directories here are fakes (a weights file and a config); nothing is loaded, so these are cheap.
The releases that load real models are in test_release_e2e.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mathindex.cli import main
from mathindex.embed import default_model_path
from mathindex.embed.models import (
    ModelError,
    entry_name,
    install_model,
    model_name,
    model_revision,
    pin_model,
    reference_path,
    resolve_model,
)
from mathindex.store.integrity import write_json
from mathindex.store.releases import publish
from tests.manifests import manifest_json


def fake_model(path: Path, weights: bytes = b"w") -> Path:
    path.mkdir(parents=True)
    (path / "model.safetensors").write_bytes(weights)
    (path / "config.json").write_text("{}")
    return path


def fake_release(root: Path, release_id: str, model: str | None) -> Path:
    """A published release whose manifest records `model` (only what resolution reads)."""
    rel = root / "releases" / release_id
    rel.mkdir(parents=True)
    write_json(rel / "manifest.json", manifest_json(release_id, vector_index={"model": model}))
    publish(root, release_id)
    return rel


def listing(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) if root.exists() else []


@pytest.fixture
def root(tmp_path):
    """A release root with two entries of one name and one of another."""
    root = tmp_path / "root"
    for name, w in [("mini", b"1"), ("mini", b"2"), ("other", b"3")]:
        install_model(fake_model(tmp_path / "src" / f"{name}{w.decode()}", w), root / "models", name)
    return root


def entry_of(root: Path, name: str) -> Path:
    return next(p for p in sorted((root / "models").iterdir()) if p.name.startswith(name + "@"))


def test_entries_resolve_by_name_at_revision_and_bare_name(root):
    other = entry_of(root, "other")
    rev = model_revision(other)
    assert other.name == entry_name("other", rev)
    assert resolve_model(other.name, root) == other
    assert resolve_model(f"other@{rev}", root) == other  # a full revision, as a manifest's embedder records it
    assert resolve_model("other", root) == other
    assert resolve_model(f"models/{other.name}", root) == other  # the manifest's reference form
    mini = entry_of(root, "mini")
    assert resolve_model(mini.name, root) == mini
    with pytest.raises(ModelError, match=r"ambiguous: mini@[0-9a-f]{16}, mini@[0-9a-f]{16}"):
        resolve_model("mini", root)


def test_default_paths_and_unknown_names(root, tmp_path):
    assert resolve_model("default", root) is None
    assert resolve_model(str(default_model_path()), root) is None  # the bundled model by its path
    assert resolve_model(None, root) is None  # nothing published: the bundled model
    given = fake_model(tmp_path / "given")
    assert resolve_model(str(given), root) == given
    with pytest.raises(ModelError) as exc:
        resolve_model("nosuch", root)
    msg = str(exc.value)
    assert "nosuch" in msg and entry_of(root, "other").name in msg and "\n" not in msg
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="no weights"):
        resolve_model(str(tmp_path / "empty"), root)


def test_no_model_means_the_last_published_releases_model(root, tmp_path):
    other = entry_of(root, "other")
    fake_release(root, "r1", f"models/{other.name}")
    assert resolve_model(None, root) == other
    assert resolve_model("default", root) is None
    fake_release(root, "r2", None)  # published with the bundled model
    assert resolve_model(None, root) is None
    fake_release(root, "r3", "models/gone@0123456789abcdef")
    with pytest.raises(ModelError, match="last published release r3 was embedded with models/gone"):
        resolve_model(None, root)


def test_pin_installs_a_model_from_elsewhere_once_and_records_a_relative_reference(tmp_path):
    root = tmp_path / "root"
    src = fake_model(tmp_path / "elsewhere" / "my-model")
    pin = pin_model(str(src), root)
    rev = model_revision(src)
    assert pin.reference == f"models/my-model@{rev[:16]}" and pin.path == (root / pin.reference).resolve()
    assert model_revision(pin.path) == rev and model_name(pin.path, rev) == "my-model"
    assert pin_model(str(src), root) == pin  # same content: the same entry, nothing copied again
    assert pin_model("my-model", root) == pin and pin_model(str(pin.path), root) == pin
    assert pin_model("default", root).reference is None and pin_model("default", root).path is None
    (pin.path / "config.json").write_text('{"changed": 1}')
    with pytest.raises(ModelError, match="was modified"):
        pin_model("my-model", root)


def test_reference_path_is_relative_to_the_root_the_release_is_in_now(tmp_path):
    assert reference_path(None, tmp_path) is None
    assert reference_path("/old/absolute/model", tmp_path) == Path("/old/absolute/model")  # releases before pinning
    with pytest.raises(ModelError, match="not found under release root"):
        reference_path("models/x@0123456789abcdef", tmp_path)
    (tmp_path / "models" / "x@0123456789abcdef").mkdir(parents=True)
    assert reference_path("models/x@0123456789abcdef", tmp_path) == tmp_path / "models" / "x@0123456789abcdef"


@pytest.mark.parametrize("verb", ["release", "reembed"])
def test_cli_unknown_model_exits_2_naming_the_entries_and_writes_nothing(root, tmp_path, verb, capsys):
    src_release = fake_release(tmp_path / "src", "r0", None)
    before = listing(root)
    argv = ["release"] if verb == "release" else ["reembed", str(src_release)]
    assert main([*argv, "--out", str(root), "--model", "nosuch"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"mathindex {verb}: embedding model not found: nosuch")
    assert all(p.name in err for p in (root / "models").iterdir())
    assert main([*argv, "--out", str(root), "--model", "mini"]) == 2  # ambiguous
    assert "ambiguous" in capsys.readouterr().err
    (tmp_path / "no-weights").mkdir()
    assert main([*argv, "--out", str(root), "--model", str(tmp_path / "no-weights")]) == 2
    err = capsys.readouterr().err.strip()
    assert "no weights" in err and "\n" not in err
    assert listing(root) == before


def test_cli_release_without_model_refuses_a_missing_published_model(tmp_path, capsys):
    root = tmp_path / "root"
    fake_release(root, "r1", "models/gone@0123456789abcdef")
    before = listing(root)
    assert main(["release", "--out", str(root)]) == 2
    err = capsys.readouterr().err.strip()
    assert "r1" in err and "--model" in err and "\n" not in err
    assert listing(root) == before
    assert json.loads((root / "published.json").read_text())["release_id"] == "r1"


def test_precision_follows_the_published_release(tmp_path):
    """`--precision` wins; else reembed's source release, else the published release, else fp32; an
    index's embedder name says how queries must be encoded."""
    from mathindex.embed.embedder import precision_of
    from mathindex.embed.models import ModelError, resolve_precision
    from mathindex.store.integrity import write_json
    from mathindex.store.releases import publish

    root = tmp_path / "root"
    assert resolve_precision(None, root) == "fp32"
    rel = root / "releases" / "20261201T000000Z-00000000"
    rel.mkdir(parents=True)
    write_json(rel / "manifest.json", manifest_json(vector_index={"embedding": {"precision": "int8"}}))
    publish(root, rel.name)
    assert resolve_precision(None, root) == "int8"
    assert resolve_precision("fp32", root) == "fp32"
    other = tmp_path / "other"
    other.mkdir()
    write_json(other / "manifest.json", manifest_json())
    assert resolve_precision(None, root, release=other) == "fp32"
    with pytest.raises(ModelError, match="unknown embedding precision 'int4'"):
        resolve_precision("int4", root)
    assert precision_of("mathindex-minilm+onnx-int8") == ("int8", "onnx")
    assert precision_of("mathindex-minilm+int8") == ("int8", "torch")
    assert precision_of("mathindex-minilm")[0] == "fp32"
