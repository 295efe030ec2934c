"""Builds square_bias._C (or _C_exercise under EXERCISE=1): `make build` runs
`pip install --no-build-isolation --no-deps --editable .` here, which calls this file through setuptools."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))

from course.build import exercise_mode, setup_extension  # noqa: E402

# The C core is compiled by make into a static library (see the Makefile); the extension links it.
core = "build/libsquare_bias_exercise.a" if exercise_mode() else "build/libsquare_bias.a"
setup_extension(
    "square_bias", sources=["src/binding.cpp"], include_dirs=[str(Path("src").resolve())], extra_objects=[core]
)
