"""Every notebook runs top to bottom (GPU cells print a skip message where there is no GPU).

With Jupyter installed (the course's venv) the notebook runs in a real kernel through nbclient. Where Jupyter is
missing (the GPU machine), its code cells run in order as one Python script, which is why notebooks use no magics.
"""

import json
import os
import re
import subprocess
import sys

import pytest
from course_layout import NOTEBOOKS, ROOT, ids

ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(ROOT / "common"), os.environ.get("PYTHONPATH", "")]),
    "MPLBACKEND": "Agg",  # as a script; a Jupyter kernel gets its inline backend (test_notebook_runs)
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


# Notebooks of new chapters whose GPU cells have not had their first run on a GPU yet: named here, one by one, so
# that the wait shows as a skip with its reason in every test run. Remove a name once `make notebooks-from-gpu` has
# stored that notebook's GPU outputs; every other notebook must have them.
GPU_OUTPUTS_PENDING: set[str] = {
    "09_fused_rowwise",  # rebuilt as a ladder on 2026-12-08; no GPU machine was lent again before the session ended
}
NOT_ON_A_GPU = "a GPU cell whose output comes from a machine without a GPU"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_committed_outputs_are_present_and_fresh(notebook):
    """Students open the notebooks with their outputs: every code cell was executed from its current source, GPU
    cells on a GPU. `make notebooks` (CPU cells) and `make notebooks-from-gpu LOG_DIR=...` (GPU cells) refresh them."""
    nbformat = pytest.importorskip("nbformat")
    from course.notebooks import problems

    found = problems(nbformat.read(notebook, as_version=4))
    if notebook.stem in GPU_OUTPUTS_PENDING:
        waiting = [p for p in found if p.endswith(NOT_ON_A_GPU)]
        found = [p for p in found if not p.endswith(NOT_ON_A_GPU)]
        assert not found, f"{notebook.name}: " + "; ".join(found) + " (run make notebooks)"
        assert waiting, f"{notebook.name} has its GPU outputs: remove it from GPU_OUTPUTS_PENDING"
        pytest.skip(f"{notebook.name}: {len(waiting)} GPU cells wait for their first run on a GPU")
    assert not found, f"{notebook.name}: " + "; ".join(found) + " (run make notebooks / make notebooks-from-gpu)"


# A path of the machine that ran a notebook: a Path's repr, or a folder under a home, temp or checkout root. Tool
# locations that every CUDA machine shares (/usr/local/cuda) are information, not a machine's path.
MACHINE_PATH = re.compile(r"PosixPath\(|(?<![\w.~-])/(?:work|home|root|tmp|opt|mnt|scratch|Users)/[\w.-]")


def machine_paths(notebook) -> list[str]:
    """Each output text of a notebook that shows a path of the machine it ran on, with its cell's index."""
    found = []
    for index, cell in enumerate(json.loads(notebook.read_text())["cells"]):
        for output in cell.get("outputs", []):
            text = json.dumps(output)
            match = MACHINE_PATH.search(text)
            if match:
                found.append(f"cell {index}: ...{text[max(0, match.start() - 40) : match.end() + 40]}...")
    return found


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_outputs_show_no_machine_paths(notebook):
    """Students read the stored outputs: they must not show where the course sat on the machine that ran it."""
    found = machine_paths(notebook)
    assert not found, f"{notebook.name} shows a machine's paths: " + "; ".join(found)


def test_a_machine_path_in_an_output_is_caught(tmp_path):
    notebook = tmp_path / "nb.ipynb"
    outputs = [{"output_type": "stream", "name": "stdout", "text": ["built in /home/ana/course/build\n"]}]
    notebook.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "", "outputs": outputs}]}))
    assert machine_paths(notebook)
    outputs[0]["text"] = ["nvcc 13.0 at /usr/local/cuda/bin/nvcc\n"]
    notebook.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "", "outputs": outputs}]}))
    assert not machine_paths(notebook)


def test_a_drawing_cell_without_its_picture_is_caught():
    """A cell that draws stores its picture, so that the committed notebook and the site show it: a figure shown under
    MPLBACKEND=Agg, or written to a file and only named, leaves an output with no image (issue seen in notebooks 02
    and 07)."""
    nbformat = pytest.importorskip("nbformat")
    from course.notebooks import merge, problems, source_hash

    drawing = "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nplt.show()"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(drawing)])
    cell = nb.cells[0]
    cell.execution_count = 1
    cell.metadata["course"] = {"source_sha": source_hash(cell), "ran_on": "CPU only (x86_64)", "gpu_cell": False}
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": "<Figure size 640x480 with 1 Axes>"})]
    assert any("draws a picture but stores none" in p for p in problems(merge(nb)))
    cell.outputs.append(nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="}))
    assert problems(merge(nb)) == []


def test_a_stale_or_unexecuted_cell_is_caught():
    nbformat = pytest.importorskip("nbformat")
    from course.notebooks import merge, problems, source_hash

    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("print(1)"), nbformat.v4.new_code_cell("if gpu_cell(): x")]
    )
    assert any("has not been executed" in p for p in problems(merge(nb)))
    for cell in nb.cells:
        cell.execution_count = 1
        cell.metadata["course"] = {"source_sha": source_hash(cell), "ran_on": "CPU only (x86_64)", "gpu_cell": False}
    committed = merge(nb)
    assert any("GPU cell" in p for p in problems(committed))  # the GPU cell never ran on a GPU
    committed.cells[1].source = "print(2)"  # edited after it ran
    assert any("source changed" in p for p in problems(committed))


def test_merging_a_gpu_run_of_some_chapters_keeps_the_others(tmp_path):
    """`make notebooks-from-gpu` after `make gpu-check CHAPTER=09`: the log holds notebook 09 only; the other
    committed notebooks keep their GPU outputs (they were once rewritten as 'not run on a GPU yet')."""
    nbformat = pytest.importorskip("nbformat")
    from course.notebooks import main

    committed, gpu = tmp_path / "notebooks", tmp_path / "gpu"
    committed.mkdir()
    gpu.mkdir()
    for name in ("a.ipynb", "b.ipynb"):
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")]), committed / name)
    before = (committed / "b.ipynb").read_text()
    nbformat.write(nbformat.read(committed / "a.ipynb", as_version=4), gpu / "a.ipynb")
    assert main(["merge", str(committed), "--cpu", str(committed), "--gpu", str(gpu)]) == 0
    assert (committed / "b.ipynb").read_text() == before
    assert (committed / "a.ipynb").read_text() != before  # merged: the generated note comes first


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_runs(notebook, monkeypatch):
    if has_jupyter():
        import nbclient
        import nbformat
        from course.notebooks import INLINE_BACKEND

        for key, value in {**ENV, "MPLBACKEND": INLINE_BACKEND}.items():
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
