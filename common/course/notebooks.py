"""The walkthrough notebooks, committed with their outputs: CPU cells as they ran on the CPU machine, GPU cells as
they ran on the H100.

    python -m course.notebooks execute notebooks/*.ipynb --out DIR      run each in a Jupyter kernel, save to DIR
    python -m course.notebooks merge notebooks/ --cpu DIR1 --gpu DIR2   committed = DIR1's outputs, GPU cells from DIR2
    python -m course.notebooks check notebooks/*.ipynb                  outputs present and not stale (CI); a cell
                                                                        that draws stores its picture

A GPU cell is a code cell that calls `gpu_cell()` (course.notebook): it skips with a message where there is no GPU.
Each executed code cell records in its metadata the hash of the source that produced its output and where it ran,
so `check` can tell a cell whose source was edited after its output was made. The first cell of a committed
notebook is a generated Markdown note saying where and when its outputs were made.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import platform
import re
import sys
from pathlib import Path

COURSE_ROOT = Path(__file__).resolve().parents[2]
NOTE_KEY = "course_outputs_note"  # metadata flag of the generated first cell
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


def is_gpu_cell(cell) -> bool:
    return cell.cell_type == "code" and "gpu_cell()" in cell.source


def source_hash(cell) -> str:
    return hashlib.sha256(cell.source.encode()).hexdigest()[:16]


def machine() -> str:
    """Where this process runs: the GPU's name and torch version, or the CPU."""
    import torch

    where = torch.cuda.get_device_name() if torch.cuda.is_available() else f"CPU only ({platform.machine()})"
    return f"{where}, torch {torch.__version__}, {datetime.date.today().isoformat()}"


def _kernel_env() -> dict[str, str]:
    """The kernel sees the course's shared helpers (common/) and this Python's packages, whatever the cwd."""
    paths = [str(COURSE_ROOT / "common"), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    # The kernel's inline backend: a figure a cell draws becomes an image in that cell's output, which the notebook
    # stores and the site shows (Agg would draw it nowhere).
    return {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)), "MPLBACKEND": INLINE_BACKEND, "PYTHON": sys.executable}


def require_jupyter() -> None:
    try:
        import ipykernel  # noqa: F401
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
    except ImportError as error:
        raise SystemExit(
            f"course.notebooks: no Jupyter kernel here ({error}). In the course's venv it is installed; on a machine "
            "without network, bring the wheels (bash common/jupyter_wheels.sh, then pip install --target from .whl/)."
        ) from error


def execute(path: Path, timeout: int = 900):
    """Run the notebook top to bottom in a real Jupyter kernel (this Python's), in notebooks/ as its working
    directory; returns the executed notebook, each code cell stamped with its source hash and where it ran."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nb.cells = [c for c in nb.cells if not c.metadata.get(NOTE_KEY)]
    saved = {key: os.environ.get(key) for key in _kernel_env()}
    os.environ.update(_kernel_env())
    try:
        nbclient.NotebookClient(
            nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        ).execute()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    where = machine()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.metadata.pop("execution", None)  # nbclient's timestamps: noise in every diff
            cell.metadata["course"] = {"source_sha": source_hash(cell), "ran_on": where, "gpu_cell": is_gpu_cell(cell)}
    return nb


def merge(cpu_nb, gpu_nb=None):
    """The notebook to commit: every code cell's output from cpu_nb, GPU cells' from gpu_nb where it has the same
    source (else the CPU run's skip message stays), and a first cell saying where each kind of output was made."""
    import nbformat

    merged = nbformat.from_dict(cpu_nb)
    merged.cells = [c for c in merged.cells if not c.metadata.get(NOTE_KEY)]
    gpu_where = None
    if gpu_nb is not None:
        by_source = {source_hash(c): c for c in gpu_nb.cells if c.cell_type == "code"}
        for cell in merged.cells:
            twin = by_source.get(source_hash(cell)) if is_gpu_cell(cell) else None
            stamp = twin.metadata.get("course", {}) if twin is not None else {}
            if stamp.get("source_sha") == source_hash(cell) and not stamp.get("ran_on", "CPU only").startswith("CPU"):
                cell.outputs = twin.outputs
                cell.execution_count = twin.execution_count
                cell.metadata["course"] = dict(twin.metadata["course"])
                gpu_where = twin.metadata["course"]["ran_on"]
    cpu_where = next(
        (c.metadata["course"]["ran_on"] for c in merged.cells if "course" in c.metadata and not is_gpu_cell(c)), "?"
    )
    note = f"*Outputs stored in this notebook: CPU cells ran on {cpu_where}"
    note += f"; GPU cells ran on {gpu_where}.*" if gpu_where else "; GPU cells have not run on a GPU yet.*"
    first = nbformat.v4.new_markdown_cell(note + " Run it yourself: `make lab` (see the README).")
    first.metadata[NOTE_KEY] = True
    merged.cells.insert(0, first)
    return merged


def problems(nb) -> list[str]:
    """What is wrong with a committed notebook's outputs: missing, stale against the source, or GPU cells that did
    not run on a GPU."""
    found = []
    if not (nb.cells and nb.cells[0].metadata.get(NOTE_KEY)):
        found.append("the first cell is not the generated note on where the outputs were made")
    for number, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        stamp = cell.metadata.get("course")
        where = f"cell {number} ({cell.source.splitlines()[0][:50] if cell.source else 'empty'!r})"
        if cell.execution_count is None or stamp is None:
            found.append(f"{where} has not been executed")
        elif stamp.get("source_sha") != source_hash(cell):
            found.append(f"{where}: its source changed after its output was made")
        elif is_gpu_cell(cell) and not stamp.get("gpu_cell", False):
            found.append(f"{where}: is a GPU cell but its stamp says it is not")
        elif is_gpu_cell(cell) and stamp.get("ran_on", "").startswith("CPU only"):
            found.append(f"{where}: a GPU cell whose output comes from a machine without a GPU")
        elif draws(cell) and not shows_a_picture(cell):
            found.append(f"{where} draws a picture but stores none in its output")
    return found


# A cell that draws: it calls matplotlib (plt.*), a chapter's plot_all, savefig, or displays an Image. Its output must
# hold the picture, so that the committed notebook and the site show it.
DRAWING = re.compile(r"\bplt\.\w+\(|\bplot_all\(|\.savefig\(|\bdisplay\(\s*Image\(")


def draws(cell) -> bool:
    return cell.cell_type == "code" and DRAWING.search(cell.source) is not None


def shows_a_picture(cell) -> bool:
    return any(key.startswith("image/") for output in cell.get("outputs", []) for key in output.get("data", {}))


def main(argv: list[str] | None = None) -> int:
    import nbformat

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("execute", help="run notebooks in a Jupyter kernel, save the executed copies")
    run.add_argument("notebooks", nargs="+", type=Path)
    run.add_argument("--out", type=Path, required=True)
    both = sub.add_parser("merge", help="combine CPU and GPU outputs into the committed notebooks")
    both.add_argument("folder", type=Path)
    both.add_argument("--cpu", type=Path, required=True, help="folder of notebooks executed on the CPU machine")
    both.add_argument("--gpu", type=Path, help="folder of notebooks executed on the GPU machine")
    check = sub.add_parser("check", help="fail on missing or stale outputs")
    check.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)

    if args.command == "execute":
        require_jupyter()
        args.out.mkdir(parents=True, exist_ok=True)
        failed = 0
        for path in args.notebooks:
            try:
                nbformat.write(execute(path.resolve()), args.out / path.name)
                print(f"executed {path.name} -> {args.out / path.name}", flush=True)
            except Exception as error:  # noqa: BLE001 - report every notebook, fail at the end
                failed += 1
                print(f"FAILED {path.name}: {type(error).__name__}: {str(error)[-3000:]}", flush=True)
        return 1 if failed else 0
    if args.command == "merge":
        for path in sorted(args.folder.glob("*.ipynb")):
            cpu_path = args.cpu / path.name
            if not cpu_path.exists():
                print(f"skipped {path.name}: no CPU run in {args.cpu}")
                continue
            gpu_path = args.gpu / path.name if args.gpu else None
            if gpu_path is not None and not gpu_path.exists():
                # a GPU run of some chapters only (gpu-check CHAPTER=...): the others keep their committed outputs
                print(f"kept {path.name}: no GPU run in {args.gpu}")
                continue
            gpu_nb = nbformat.read(gpu_path, as_version=4) if gpu_path else None
            nbformat.write(merge(nbformat.read(cpu_path, as_version=4), gpu_nb), path)
            print(f"merged {path.name}")
        return 0
    bad = 0
    for path in args.notebooks:
        for problem in problems(nbformat.read(path, as_version=4)):
            bad += 1
            print(f"{path.name}: {problem}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
