# Makes the shared helpers importable and loads the course's pytest plugin (gpu/nvcc markers) for every test.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "common"))

pytest_plugins = ["course.pytest_plugin"]
