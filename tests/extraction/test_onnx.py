"""The one ONNX loader: meta.json reading, sessions, versions, the process-wide cache, and each model
package's ``shared_models`` built on them (folders passed in, never read from the environment)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from extraction import onnx
from extraction.blockclf import classifier
from extraction.onnx import ModelError, clear_cache, meta_version, read_meta, session, shared
from extraction.pagetype import models as pagetype
from extraction.paths import MODELS_DIR
from extraction.web2text import model as web2text

# A small shipped model: the paragraph SVM (9 float32 features in, probabilities out).
SMALL_MODEL = MODELS_DIR / "paragraphs.onnx"


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


# --- read_meta ----------------------------------------------------------------------------------


def test_read_meta_returns_the_object(tmp_path: Path) -> None:
    (tmp_path / "meta.json").write_text(json.dumps({"version": 3}), encoding="utf-8")
    assert read_meta(tmp_path, "make train-x") == {"version": 3}
    assert read_meta(str(tmp_path), "make train-x") == {"version": 3}


def test_read_meta_missing_names_file_and_training_command(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"meta\.json is missing.*`make train-x`") as error:
        read_meta(tmp_path, "make train-x")
    assert str(tmp_path / "meta.json") in str(error.value)


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
def test_read_meta_unreadable_or_not_an_object(tmp_path: Path, content: str) -> None:
    (tmp_path / "meta.json").write_text(content, encoding="utf-8")
    with pytest.raises(ModelError, match="make train-x") as error:
        read_meta(tmp_path, "make train-x")
    assert str(tmp_path / "meta.json") in str(error.value)


# --- meta_version -------------------------------------------------------------------------------


def test_meta_version_is_a_prefix_of_the_sha256_of_the_bytes(tmp_path: Path) -> None:
    data = b'{"version": 1}'
    (tmp_path / "meta.json").write_bytes(data)
    version = meta_version(tmp_path)
    assert version == hashlib.sha256(data).hexdigest()[:onnx.VERSION_CHARS] and len(version) == 12
    (tmp_path / "meta.json").write_bytes(data + b"\n")
    assert meta_version(tmp_path) != version  # any change is a new version


def test_meta_version_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"meta\.json"):
        meta_version(tmp_path)


# --- session ------------------------------------------------------------------------------------


def test_session_options_one_thread_on_the_cpu() -> None:
    loaded = session(SMALL_MODEL)
    options = loaded.get_session_options()
    assert options.intra_op_num_threads == 1 and options.inter_op_num_threads == 1
    assert loaded.get_providers() == ["CPUExecutionProvider"]
    rows = np.zeros((2, loaded.get_inputs()[0].shape[1]), dtype=np.float32)
    assert len(loaded.run(None, {loaded.get_inputs()[0].name: rows})[0]) == 2


def test_session_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="no such file") as error:
        session(tmp_path / "absent.onnx")
    assert "absent.onnx" in str(error.value)


def test_session_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.onnx"
    path.write_bytes(SMALL_MODEL.read_bytes()[:100])
    with pytest.raises(ModelError, match=r"cannot load .*broken\.onnx"):
        session(path)


# --- shared -------------------------------------------------------------------------------------


def test_shared_loads_once_per_resolved_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []

    def load(folder: Path) -> str:
        calls.append(folder)
        return f"models of {folder.name}"

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path)
    first = shared(load, tmp_path / "a", tmp_path / "b")
    assert shared(load, "a", tmp_path / "b") is first  # relative and absolute: one folder
    assert shared(load, None, tmp_path / "b") == shared(load, "", tmp_path / "b") == "models of b"
    assert calls == [(tmp_path / "a").resolve(), (tmp_path / "b").resolve()]
    clear_cache()
    shared(load, "a", tmp_path / "b")
    assert len(calls) == 3


def test_shared_does_not_keep_a_failed_load(tmp_path: Path) -> None:
    attempts = []

    def load(folder: Path) -> str:
        attempts.append(folder)
        if len(attempts) == 1:
            raise ModelError("not yet")
        return "loaded"

    with pytest.raises(ModelError):
        shared(load, tmp_path, tmp_path)
    assert shared(load, tmp_path, tmp_path) == "loaded"


# --- the model packages -------------------------------------------------------------------------


def test_every_model_error_is_one_base() -> None:
    assert classifier.ModelError is ModelError  # blockclf's name stays importable
    assert web2text.ModelError is ModelError
    assert issubclass(pagetype.PageTypeModelError, ModelError)


def test_block_models_shared_per_folder_with_version(tmp_path: Path) -> None:
    default = classifier.shared_models()
    assert classifier.shared_models(MODELS_DIR) is default
    assert classifier.shared_models(str(MODELS_DIR)) is default  # positional folder, str or Path
    assert classifier.shared_models("") is default
    assert default.version == _shipped_block_version()
    for name in ("meta.json", "blocks.onnx", "paragraphs.onnx"):
        shutil.copy(MODELS_DIR / name, tmp_path / name)
    copy = classifier.shared_models(tmp_path)  # no stack/ folder: the SVMs decide, their version alone
    assert copy is not default and copy.version == meta_version(MODELS_DIR) and copy.stack is None
    if (MODELS_DIR / "stack").is_dir():
        shutil.copytree(MODELS_DIR / "stack", tmp_path / "with-stack" / "stack")
        for name in ("meta.json", "blocks.onnx", "paragraphs.onnx"):
            shutil.copy(MODELS_DIR / name, tmp_path / "with-stack" / name)
        assert classifier.shared_models(tmp_path / "with-stack").version == default.version


def _shipped_block_version() -> str:
    """The block models' version: the SVMs' meta.json hash, joined by the stacked model's when it is shipped."""
    stack = MODELS_DIR / "stack"
    return meta_version(MODELS_DIR) + (f"+{meta_version(stack)}" if stack.is_dir() else "")


def test_model_folders_come_from_the_caller_not_the_environment(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLOCKS_MODEL_DIR", str(tmp_path))  # an empty folder: would fail if it were read
    monkeypatch.setenv("WEB2TEXT_MODEL_DIR", str(tmp_path))
    assert classifier.shared_models().version == _shipped_block_version()
    with pytest.raises(ModelError, match="make train-blocks"):
        classifier.shared_models(tmp_path)
    with pytest.raises(ModelError, match="make train-web2text"):
        web2text.shared_models(tmp_path)
    with pytest.raises(pagetype.PageTypeModelError, match="make train-pagetype"):
        pagetype.shared_models(tmp_path)


def test_block_model_file_missing_is_a_model_error(tmp_path: Path) -> None:
    shutil.copy(MODELS_DIR / "meta.json", tmp_path / "meta.json")
    shutil.copy(MODELS_DIR / "blocks.onnx", tmp_path / "blocks.onnx")
    with pytest.raises(ModelError, match=r"paragraphs\.onnx"):
        classifier.shared_models(tmp_path)


@pytest.mark.skipif(not (pagetype.MODELS_DIR / "meta.json").exists(), reason="models/pagetype absent (train first)")
def test_page_type_models_shared_with_version(tmp_path: Path) -> None:
    default = pagetype.shared_models()
    assert pagetype.shared_models(pagetype.MODELS_DIR) is default
    assert default.version == meta_version(pagetype.MODELS_DIR)
    meta = json.loads((pagetype.MODELS_DIR / "meta.json").read_text(encoding="utf-8"))
    (tmp_path / "meta.json").write_text(json.dumps(meta), encoding="utf-8")  # its ONNX files absent
    with pytest.raises(pagetype.PageTypeModelError, match="no such file"):
        pagetype.shared_models(tmp_path)


@pytest.mark.skipif(not (web2text.MODEL_DIR / "meta.json").exists(), reason="models/web2text absent (train first)")
def test_web2text_model_shared_with_version() -> None:
    default = web2text.shared_models()
    assert web2text.shared_models(str(web2text.MODEL_DIR)) is default
    assert default.version == meta_version(web2text.MODEL_DIR)
