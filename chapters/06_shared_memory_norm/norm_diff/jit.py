"""The same op built the other way the seed shows: JIT, with torch.utils.cpp_extension.load (course.build.jit_load).

The JIT build compiles the same binding and kernels into a module of its own, with the ops in the namespace
norm_diff_jit (a process may load both builds, and a namespace can be defined only once). It links the CPU code
that `make build` compiled (build/libnorm_diff_cpu.a). The first call compiles (a minute or so); later calls
reuse build/jit while the sources are unchanged.

    ops = load_jit()
    ops.norm_diff(a, b, 3)
"""

from __future__ import annotations

from pathlib import Path

from course.build import exercise_include_dirs, exercise_mode, jit_load

CHAPTER = Path(__file__).resolve().parents[1]
NAMESPACE = "norm_diff_jit"


def load_jit(verbose: bool = False):
    """Build (or reuse) the JIT module and return torch.ops.norm_diff_jit."""
    import torch

    cpu_library = CHAPTER / "build" / "libnorm_diff_cpu.a"
    if not cpu_library.exists():
        raise FileNotFoundError(f"{cpu_library} is missing: run `make build` in {CHAPTER} first")
    build_dir = CHAPTER / "build" / ("jit-exercise" if exercise_mode() else "jit")
    build_dir.mkdir(parents=True, exist_ok=True)
    include_dirs = [*exercise_include_dirs(CHAPTER), str(CHAPTER / "src")]  # exercises/ first under EXERCISE=1
    define = f"-DNORM_DIFF_NS={NAMESPACE}"
    jit_load(
        "norm_diff_jit_exercise" if exercise_mode() else "norm_diff_jit",
        [CHAPTER / "src" / "norm_diff_binding.cpp", CHAPTER / "src" / "norm_diff_kernels.cu"],
        cuda=True,
        verbose=verbose,
        extra_include_paths=include_dirs,
        extra_cflags=[define],
        extra_cuda_cflags=[define],
        extra_ldflags=[str(cpu_library)],
        build_directory=str(build_dir),
    )
    return getattr(torch.ops, NAMESPACE)
