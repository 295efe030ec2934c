"""Building the chapters' extensions the same way everywhere: ahead of time with setuptools, or JIT.

A chapter's setup.py is a few lines:

    from course.build import setup_extension
    setup_extension("square_bias", sources=["src/binding.cpp"], extra_objects=["build/libsquare_bias.a"])

and its package imports the compiled module with `import_extension("square_bias")`.

Exercises, one rule in every chapter: under EXERCISE=1 (`EXERCISE=1 make test`) a file in the chapter's
exercises/ folder replaces the reference's file of the same name. Each language's own lookup does the replacing:
- a C or CUDA source in a build: chapter_source() here (setup.py), $(call chapter_source,...) in chapter.mk;
- a header: exercises/ comes first on the include path, and the reference includes it as <name.h>;
- a Python module of the chapter's package: exercises/ comes first on the package's __path__ (exercises_first(),
  called in the package's __init__.py), so `import package.name` finds the student's name.py.
The compiled module is named `_C_exercise` instead of `_C`, so the reference and the exercise builds live side by
side and switching between them rebuilds nothing.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

COMMON_DIR = Path(__file__).resolve().parent.parent
INCLUDE_DIR = COMMON_DIR / "include"

# Warnings on for the course's own code; CI (CI=true) also turns them into errors where the code is all ours.
WARNINGS = ["-Wall", "-Wextra"]
CXX_FLAGS = ["-O3", *WARNINGS]  # torch adds the C++ standard it was built with
NVCC_FLAGS = ["-O3", "--use_fast_math", "-lineinfo", "-Xcompiler=-Wall,-Wextra"]


def shared_cxx_runtime(compiler: str) -> bool:
    """Whether `compiler` links extensions against the shared C++ runtime (libstdc++.so), the one torch loads."""
    import subprocess

    try:
        found = subprocess.run([compiler, "-print-file-name=libstdc++.so"], capture_output=True, text=True).stdout
    except OSError:
        return False
    return found.strip().startswith("/")


def prepare_build_environment() -> None:
    """Outside make (a notebook, a plain `python`), set up the environment as common/python.mk does:
    - CUDA_HOME: on some machines /usr/local/bin/nvcc is a wrapper, and PyTorch would look for -lcudart under
      /usr/local;
    - CXX: a compiler with only the static libstdc++ gives each extension a second C++ runtime, whose first
      formatted number crashes the process (docs/troubleshooting.md); then g++ from PATH builds instead."""
    toolkit = Path("/usr/local/cuda")
    if not os.environ.get("CUDA_HOME") and not os.environ.get("CUDA_PATH") and (toolkit / "bin" / "nvcc").exists():
        os.environ["CUDA_HOME"] = str(toolkit)
    compiler = os.environ.get("CXX")
    if compiler and not shared_cxx_runtime(compiler):
        print(f"note: CXX={compiler} links libstdc++ statically into extensions; building with g++ from PATH instead")
        os.environ["CXX"] = "g++"


def exercise_mode() -> bool:
    return os.environ.get("EXERCISE", "0") == "1"


def module_name() -> str:
    """The compiled module's name inside a chapter package: _C, or _C_exercise for the student's build."""
    return "_C_exercise" if exercise_mode() else "_C"


def chapter_source(path: str | Path, chapter_dir: str | Path = ".") -> str:
    """src/<name> normally; exercises/<name> under EXERCISE=1 when the student has a copy of that file."""
    path = Path(path)
    exercise = Path(chapter_dir) / "exercises" / path.name
    if exercise_mode() and exercise.exists():
        return str(exercise)
    return str(Path(chapter_dir) / path)


def exercises_first(package_path: list[str]) -> None:
    """Under EXERCISE=1, put the chapter's exercises/ folder before the package's own on its __path__, so that
    `import package.name` loads exercises/name.py where the student has one. Call it from the package's
    __init__.py as `exercises_first(__path__)`, before the package imports its modules."""
    if exercise_mode():
        exercises = str(Path(package_path[0]).resolve().parent / "exercises")
        if exercises not in package_path:
            package_path.insert(0, exercises)


def exercise_include_dirs(chapter_dir: str | Path = ".") -> list[str]:
    """[chapter/exercises] under EXERCISE=1, else []. Put first on the include path, it makes
    `#include <name.h>` find the student's copy of a header; quotes would find the one beside the includer."""
    return [str(Path(chapter_dir, "exercises").resolve())] if exercise_mode() else []


def setup_extension(
    package: str,
    sources: list[str],
    *,
    cuda: bool = False,
    include_dirs: list[str] | None = None,
    extra_objects: list[str] | None = None,
    cxx_flags: list[str] | None = None,
    nvcc_flags: list[str] | None = None,
    define_macros: list[tuple[str, str | None]] | None = None,
    libraries: list[str] | None = None,
    py_limited_api: bool = False,
    distribution: str | None = None,
) -> None:
    """Build `package._C` (or `_C_exercise`) from `sources` with torch's BuildExtension (ninja, the right ABI
    flags, nvcc for .cu files). Call it from a chapter's setup.py; `make build` runs it through pip."""
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

    extension_class = CUDAExtension if cuda else CppExtension
    extra_compile_args: dict[str, list[str]] = {"cxx": CXX_FLAGS + (cxx_flags or [])}
    if cuda:
        extra_compile_args["nvcc"] = NVCC_FLAGS + (nvcc_flags or [])
    if py_limited_api:
        define_macros = [*(define_macros or []), ("Py_LIMITED_API", "0x03090000")]
    extension = extension_class(
        f"{package}.{module_name()}",
        [chapter_source(s) for s in sources],
        include_dirs=[*exercise_include_dirs(), str(INCLUDE_DIR), *(include_dirs or [])],
        extra_objects=extra_objects or [],
        extra_compile_args=extra_compile_args,
        define_macros=define_macros or [],
        libraries=libraries or [],
        py_limited_api=py_limited_api,
    )
    setup(
        name=distribution or f"course-{package.replace('_', '-')}",
        version="0.0.0",
        packages=[package],
        ext_modules=[extension],
        cmdclass={"build_ext": BuildExtension},
        options={"bdist_wheel": {"py_limited_api": "cp39"}} if py_limited_api else {},
    )


def load_c_library(chapter_dir: str | Path, stem: str):
    """ctypes handle to a chapter's plain-C library, build/<stem>-reference.so (or -exercise.so under EXERCISE=1,
    built from the student's files), or an ImportError that says which `make` builds it."""
    import ctypes

    variant = "exercise" if exercise_mode() else "reference"
    path = Path(chapter_dir) / "build" / f"{stem}-{variant}.so"
    if not path.exists():
        make = "EXERCISE=1 make build" if exercise_mode() else "make build"
        raise ImportError(f"{path} is not built: run `{make}` in {Path(chapter_dir)}")
    return ctypes.CDLL(str(path))


def builds_required() -> bool:
    """True under `make gpu-check` and CI (COURSE_REQUIRE_BUILDS=1): there, a chapter whose build is missing is an
    error. Elsewhere a benchmark may leave out what is not built, and says so."""
    return os.environ.get("COURSE_REQUIRE_BUILDS") == "1"


def import_if_built(module: str):
    """The module, or None with a printed note when it cannot be imported (its chapter is not built); under
    builds_required() the ImportError propagates. Only ImportError is caught: any other error is a real one."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        if builds_required():
            raise
        print(f"note: {module} is left out: {error}")
        return None


def import_extension(package: str):
    """Import the chapter's compiled module, or explain how to build it."""
    name = f"{package}.{module_name()}"
    try:
        return importlib.import_module(name)
    except ImportError as error:
        variant = "EXERCISE=1 make build" if exercise_mode() else "make build"
        raise ImportError(
            f"{name} is not built (or was built for another torch): run `{variant}` in the chapter's folder. "
            f"Import error: {error}"
        ) from error


def jit_load(name: str, sources: list[str | Path], *, cuda: bool | None = None, verbose: bool = False, **kwargs):
    """torch.utils.cpp_extension.load with the course's include directory and flags.

    The JIT builds in TORCH_EXTENSIONS_DIR (default ~/.cache/torch_extensions/<python>_<cuda>/<name>), runs ninja
    there, and reuses the result while the sources and flags hash the same."""
    prepare_build_environment()
    from torch.utils.cpp_extension import load

    sources = [str(s) for s in sources]
    if cuda is None:
        cuda = any(s.endswith(".cu") for s in sources)
    return load(
        name=name,
        sources=sources,
        extra_include_paths=[str(INCLUDE_DIR), *kwargs.pop("extra_include_paths", [])],
        extra_cflags=CXX_FLAGS + kwargs.pop("extra_cflags", []),
        extra_cuda_cflags=(NVCC_FLAGS + kwargs.pop("extra_cuda_cflags", [])) if cuda else None,
        verbose=verbose,
        **kwargs,
    )


def import_reference_chapter(chapter: str, package: str):
    """Another chapter's package, imported from its folder and always as its reference build: under EXERCISE=1 only
    the importing chapter's own files are the student's (IMPORTS_CHAPTERS in its Makefile builds the others)."""
    from course.notebook import use_chapter

    use_chapter(chapter, build=False)
    saved = os.environ.get("EXERCISE")
    os.environ["EXERCISE"] = "0"
    try:
        return importlib.import_module(package)
    finally:
        if saved is None:
            del os.environ["EXERCISE"]
        else:
            os.environ["EXERCISE"] = saved
