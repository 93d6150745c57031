"""The benchmark scripts' own modules, importable as the scripts import them.

``python benchmarks/X.py`` puts ``benchmarks/`` on ``sys.path`` and the scripts import each
other by bare name (``import stats``); the tests here do the same.
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))
