"""Benchmark tables: printed row by row as they are measured, then saved as CSV and Markdown.

table = Table("add2, fp32", ["n", "kernel", "time_us", "GB/s", "vs torch"])
table.add(n=1024, kernel="seed", time_us=3.1, **{"GB/s": 4.0, "vs torch": 1.2})
table.save(out_dir / "add2")       # add2.csv and add2.md

and the speed goals a benchmark checks, one PASS or MISS line each (check_rounds for a value measured once per
round: the verdict on the median, the line with min / median / max):

goals = Goals()
goals.check("add2 / torch.add at 2^26", 0.99, "<=", 1.02)   # PASS  add2 / torch.add at 2^26: 0.99 (goal <= 1.02)
goals.report(out_dir / "goals.txt")                          # prints the lines and saves them

and copy_results(out_dir, Path("results/h100"), names): what `make bench` commits, copied out of its log folder.
"""

from __future__ import annotations

import csv
import datetime
import operator
import platform
import statistics
from pathlib import Path


def environment_line() -> str:
    """Where a measurement was taken: device, driver, torch and CUDA versions, date."""
    import torch

    parts = []
    if torch.cuda.is_available():
        parts.append(torch.cuda.get_device_name())
        try:
            import subprocess

            driver = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=20,
            ).stdout.split("\n")[0]
            if driver:
                parts.append(f"driver {driver}")
        except (OSError, subprocess.SubprocessError):
            pass
    else:
        parts.append(f"CPU only ({platform.processor() or platform.machine()})")
    parts.append(f"torch {torch.__version__} (CUDA {torch.version.cuda})")
    parts.append(datetime.date.today().isoformat())
    return ", ".join(parts)


def _format(value: object) -> str:
    if isinstance(value, float):
        if value != value:  # NaN
            return "—"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.3g}" if abs(value) < 0.01 else f"{value:.2f}"
    return str(value)


class Table:
    def __init__(self, title: str, columns: list[str], *, echo: bool = True):
        self.title = title
        self.columns = columns
        self.rows: list[dict[str, object]] = []
        self.echo = echo
        self._widths = [max(len(c), 10) for c in columns]
        if echo:
            print(f"\n## {title}\n{environment_line()}\n", flush=True)
            print(self._line(columns), flush=True)
            print(self._line(["-" * w for w in self._widths]), flush=True)

    def _line(self, cells: list[str]) -> str:
        return "| " + " | ".join(c.rjust(w) for c, w in zip(cells, self._widths)) + " |"

    def add(self, **row: object) -> None:
        missing = [c for c in self.columns if c not in row]
        if missing:
            raise KeyError(f"row lacks columns {missing}")
        self.rows.append(row)
        if self.echo:
            print(self._line([_format(row[c]) for c in self.columns]), flush=True)

    def markdown(self) -> str:
        lines = [f"**{self.title}** — {environment_line()}", ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append("|" + "|".join("---:" for _ in self.columns) + "|")
        lines += ["| " + " | ".join(_format(r[c]) for c in self.columns) + " |" for r in self.rows]
        return "\n".join(lines) + "\n"

    def save(self, stem: str | Path) -> None:
        """Write stem.csv (full precision) and stem.md (as printed)."""
        stem = Path(stem)
        stem.parent.mkdir(parents=True, exist_ok=True)
        with open(stem.with_suffix(".csv"), "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self.columns, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(self.rows)
        stem.with_suffix(".md").write_text(self.markdown())


class Goals:
    """A benchmark's speed goals: each measured value against its limit. Goals are checked in benchmarks, never in
    unit tests (timings vary from run to run and machine to machine); a MISS is reported, not hidden or retried."""

    COMPARE = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}

    def __init__(self, title: str = "Goals"):
        self.title = title
        self.lines: list[str] = []

    def check(self, what: str, value: float, op: str, limit: float, unit: str = "", digits: int = 3) -> None:
        """Record `what` = value against `value op limit` (op one of >=, >, <=, <) as a PASS or MISS line."""
        verdict = "PASS" if self.COMPARE[op](value, limit) else "MISS"
        self.lines.append(f"{verdict}  {what}: {value:.{digits}g}{unit} (goal {op} {limit:g}{unit})")

    def check_rounds(
        self, what: str, values: list[float], op: str, limit: float, unit: str = "", digits: int = 3
    ) -> None:
        """Like check, for a value measured once per round (course.timing.interleaved_rounds): the verdict is on the
        median, and the line shows min / median / max so that a reader sees how much the value moves."""
        ordered = sorted(values)
        median = statistics.median(ordered)
        verdict = "PASS" if self.COMPARE[op](median, limit) else "MISS"
        spread = f"min {ordered[0]:.{digits}g} / median {median:.{digits}g} / max {ordered[-1]:.{digits}g}"
        goal = f"goal {op} {limit:g}{unit}; {spread} over {len(values)} rounds"
        self.lines.append(f"{verdict}  {what}: {median:.{digits}g}{unit} ({goal})")

    def note(self, text: str) -> None:
        """A line of context under the goals (not a goal)."""
        self.lines.append(f"      {text}")

    def report(self, path: str | Path | None = None) -> None:
        """Print the goals under a heading (and save them to `path`)."""
        print(f"\n## {self.title}")
        print("\n".join(self.lines), flush=True)
        if path is not None:
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{self.title} ({environment_line()})\n" + "\n".join(self.lines) + "\n")


def copy_results(out: Path, copy_to: Path, names) -> None:
    """Copy the files `names` that a benchmark wrote into `out` to `copy_to` (a chapter's results/<machine>/, which
    the lesson and notebook read), and say so. A name the run did not write (a part that needs a GPU, say) is left
    out; copying a folder onto itself does nothing."""
    import shutil

    copy_to.mkdir(parents=True, exist_ok=True)
    for name in names:
        source, target = out / name, copy_to / name
        if source.exists() and source.resolve() != target.resolve():
            shutil.copy2(source, target)
    print("copied the results into", copy_to)
