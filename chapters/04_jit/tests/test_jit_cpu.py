"""The JIT mechanism without a GPU: load_inline builds a tiny C++ CPU function into the chapter's
build/torch_extensions (TORCH_EXTENSIONS_DIR), and a second load in a fresh process reuses it."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from add2 import jit

CHAPTER_DIR = Path(__file__).resolve().parents[1]


def _run(code: str, env_extra: dict | None = None) -> str:
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=str(jit.extensions_dir()), **(env_extra or {}))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=CHAPTER_DIR, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def demo():
    return jit.load_cpu_demo()


def test_cpu_demo_adds(demo):
    a, b = torch.randn(1001), torch.randn(1001)
    torch.testing.assert_close(demo.add2(a, b), a + b, rtol=0, atol=0)
    assert demo.add2(torch.empty(0), torch.empty(0)).numel() == 0


def test_build_directory_holds_ninja_files(demo):
    build = Path(demo.path).parent
    assert build.parent == Path(os.environ["TORCH_EXTENSIONS_DIR"])
    for name in ("build.ninja", "main.cpp", ".ninja_log"):
        assert (build / name).exists(), name
    assert "add2_cpu" in (build / "main.cpp").read_text()


def test_second_load_in_fresh_process_does_not_rebuild(demo):
    so = Path(demo.path)
    mtime, log = so.stat().st_mtime_ns, (so.parent / ".ninja_log").read_text()
    out = _run(
        """
        import time
        from add2.jit import load_cpu_demo
        start = time.perf_counter()
        load_cpu_demo(verbose=True)
        print(f"LOAD_SECONDS {time.perf_counter() - start:.3f}")
        """
    )
    assert "ninja: no work to do" in out, out
    assert so.stat().st_mtime_ns == mtime, "the .so was rebuilt"
    assert (so.parent / ".ninja_log").read_text() == log, "ninja compiled something"
    seconds = float(out.split("LOAD_SECONDS")[1].split()[0])
    assert seconds < 2.0, f"cached load took {seconds:.2f} s"


def test_changed_source_rebuilds():
    """Change one character of the source: ninja sees a newer main.cpp and compiles again."""
    code = """
        from add2 import jit
        src = jit.CPU_DEMO_SOURCE.replace("c[i] = a[i] + b[i];", "c[i] = a[i] + b[i] + {k}.0f;")
        demo = jit.load_cpu_demo(verbose=True, source=src, name="add2_cpu_demo_edit")
        import torch
        print("RESULT", demo.add2(torch.zeros(3), torch.zeros(3)).tolist())
        """
    first = _run(code.replace("{k}", "1"))
    second = _run(code.replace("{k}", "2"))
    assert "RESULT [1.0, 1.0, 1.0]" in first
    assert "RESULT [2.0, 2.0, 2.0]" in second, "the edited source was not rebuilt"
    assert "ninja: no work to do" not in second
