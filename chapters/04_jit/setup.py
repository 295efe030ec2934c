"""Ahead-of-time build of add2._C (the chapter-03 way): `make build` runs this through pip.

The same sources are also loaded just in time by add2/jit.py (torch.utils.cpp_extension.load and load_inline).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))

from course.build import setup_extension  # noqa: E402

setup_extension(
    "add2",
    sources=["src/add2_ops.cpp", "src/add2_seed.cu", "src/add2_vec.cu"],
    cuda=True,
    include_dirs=[str(Path(__file__).resolve().parent / "src")],
)
