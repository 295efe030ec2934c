"""Nothing generated is tracked by git, and the top-level Makefile helps a lost user."""

import os
import re
import subprocess

import pytest
from course_layout import ROOT

GENERATED = re.compile(
    r"(^|/)(build|\.venv|__pycache__|\.pytest_cache|\.ipynb_checkpoints|[^/]*\.egg-info)(/|$)"
    r"|\.(so|o|a|pyc|ptx|cubin|fatbin)$"
)


def tracked_files():
    result = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip("not a git checkout")
    return result.stdout.split()


def test_no_generated_files_are_tracked():
    offenders = [f for f in tracked_files() if GENERATED.search(f)]
    assert offenders == [], f"generated files tracked by git: {offenders}"


def test_no_large_files_are_tracked():
    large = [f for f in tracked_files() if (ROOT / f).exists() and (ROOT / f).stat().st_size > 1_000_000]
    assert large == [], f"files over 1 MB tracked by git: {large}"


# A make that runs these tests (make test-all, make gpu-check LOG_DIR=...) passes its command-line variables down,
# both in MAKEFLAGS and as environment variables; left in, `make gpu-check` below inherited LOG_DIR on the H100 and
# started a whole second GPU check. The course's own variables go too.
INHERITED = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "LOG_DIR", "CHAPTER", "STEPS", "EXERCISE", "JUNIT_XML", "PYTEST_ARGS"}
CLEAN_MAKE_ENV = {k: v for k, v in os.environ.items() if k not in INHERITED}


def make(*args, directory=ROOT):
    # None of these should take more than seconds; a hang fails the test with make's output instead of stalling.
    try:
        return subprocess.run(
            ["make", "--no-print-directory", "-C", str(directory), *args],
            capture_output=True,
            text=True,
            env=CLEAN_MAKE_ENV,
            timeout=120,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"make {' '.join(args)} in {directory} still ran after 120 s:\n{error.stdout}\n{error.stderr}")


def test_help_lists_every_target():
    out = make("help").stdout
    for target in ("run", "test-all", "grade", "gpu-check", "lint", "clean"):
        assert f"make {target}" in out


def test_unknown_target_gets_a_helpful_message():
    result = make("tset-all")
    assert result.returncode != 0 and "no target 'tset-all'" in result.stdout and "make help" in result.stdout


def test_unknown_chapter_gets_a_helpful_message():
    result = make("run", "CHAPTER=42")
    assert result.returncode != 0 and "No chapter matches CHAPTER=42" in result.stderr
    assert "00_environment" in result.stderr


def test_gpu_check_needs_a_log_dir():
    result = make("gpu-check")
    assert result.returncode != 0 and "LOG_DIR" in result.stdout


def test_missing_nvcc_gets_a_clear_message():
    chapter = ROOT / "chapters" / "04_jit"
    result = make("-W", "setup.py", "build", "CUDA_HOME=/nonexistent", directory=chapter)
    # -W setup.py makes the extension look out of date; the nvcc check stops the build before pip starts.
    assert result.returncode != 0
    assert "nvcc not found" in result.stdout and "export CUDA_HOME=" in result.stdout


# Chapter 07's appendix measures what PyTorch's private shortcuts buy; it is the one place course code may use them.
PRIVATE_API_APPENDIX = "chapters/07_performance/perf/appendix_private.py"


def test_no_private_torch_api_outside_chapter_07s_appendix():
    """Course code copied into a project must keep working on the next torch: public APIs only (docs/how-an-op-is-
    built.md). Tests may poke at internals; code may not."""
    offenders = []
    for path in tracked_files():
        if path == PRIVATE_API_APPENDIX or "/tests/" in path or path.startswith("tests/"):
            continue
        if path.endswith((".py", ".cpp", ".cu", ".h", ".cuh", ".ipynb")) and (ROOT / path).exists():
            for number, line in enumerate((ROOT / path).read_text().splitlines(), 1):
                if "torch._C" in line:
                    offenders.append(f"{path}:{number}: {line.strip()}")
    assert offenders == [], "torch._C outside chapter 07's appendix:\n" + "\n".join(offenders)
    assert (ROOT / PRIVATE_API_APPENDIX).exists(), "chapter 07's appendix on private shortcuts is missing"
