"""Every notebook runs top to bottom (GPU cells print a skip message where there is no GPU).

With Jupyter installed (the course's venv) the notebook runs in a real kernel through nbclient. Where Jupyter is
missing (the GPU machine), its code cells run in order as one Python script, which is why notebooks use no magics.
"""

import json
import os
import subprocess
import sys

import pytest
from course_layout import NOTEBOOKS, ROOT, ids

ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(ROOT / "common"), os.environ.get("PYTHONPATH", "")]),
    "MPLBACKEND": "Agg",
    "PYTHON": sys.executable,
}


def has_jupyter() -> bool:
    if os.environ.get("COURSE_NOTEBOOK_AS_SCRIPT") == "1":
        return False
    try:
        import ipykernel  # noqa: F401
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
    except ImportError:
        return False
    return True


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_has_no_stored_outputs(notebook):
    cells = json.loads(notebook.read_text())["cells"]
    assert all(not c.get("outputs") for c in cells if c["cell_type"] == "code"), "clear the outputs before committing"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_runs(notebook, monkeypatch):
    if has_jupyter():
        import nbclient
        import nbformat

        for key, value in ENV.items():
            monkeypatch.setenv(key, value)
        nb = nbformat.read(notebook, as_version=4)
        nbclient.NotebookClient(
            nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(notebook.parent)}}
        ).execute()
    else:
        cells = json.loads(notebook.read_text())["cells"]
        code = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        result = subprocess.run(
            [sys.executable, "-c", code], cwd=notebook.parent, env=ENV, capture_output=True, text=True, timeout=900
        )
        assert result.returncode == 0, (
            f"{notebook.name} failed as a script:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
        )
