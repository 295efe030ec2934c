"""Every chapter has the same skeleton (shared/COURSE.md, "One chapter")."""

import pytest
from course_layout import CHAPTERS, ROOT, ids, package_of


def test_there_are_chapters():
    assert CHAPTERS, "no chapters/*/Makefile found"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=ids(CHAPTERS))
def test_chapter_skeleton(chapter):
    for name in ("README.md", "Makefile", "tests", "exercises"):
        assert (chapter / name).exists(), f"{chapter.name} lacks {name}"
    # C, C++ and CUDA sources live in a src/ folder (also a sub-project's, like ch03's stable/src/); C test
    # programs in tests/, the student's copies in exercises/, kept seed bugs in pitfalls/.
    allowed = {"src", "exercises", "pitfalls", "tests", "build"}
    stray = [
        p
        for ext in ("*.c", "*.cu", "*.cpp", "*.h", "*.cuh")
        for p in chapter.rglob(ext)
        if p.relative_to(chapter).parts[0] not in allowed and "src" not in p.relative_to(chapter).parts
    ]
    assert stray == [], f"{chapter.name}: sources outside src/: {stray}"
    package = chapter / package_of(chapter)
    assert (package / "__init__.py").exists(), f"{chapter.name}: package {package.name}/ lacks __init__.py"
    assert (package / "__main__.py").exists(), f"{chapter.name}: `make run` needs {package.name}/__main__.py"
    assert list((chapter / "tests").glob("test_*.py")), f"{chapter.name}/tests has no test_*.py"
    assert [p for p in (chapter / "exercises").iterdir() if p.is_file()], f"{chapter.name}/exercises is empty"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=ids(CHAPTERS))
def test_chapter_makefile_uses_the_shared_rules(chapter):
    text = (chapter / "Makefile").read_text()
    assert "include ../../common/chapter.mk" in text


@pytest.mark.parametrize("chapter", CHAPTERS, ids=ids(CHAPTERS))
def test_chapter_has_a_notebook(chapter):
    assert (ROOT / "notebooks" / f"{chapter.name}.ipynb").exists(), f"notebooks/{chapter.name}.ipynb is missing"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=ids(CHAPTERS))
def test_kernel_and_c_files_use_the_shared_check_header(chapter):
    """Every C/CUDA source that calls a CUDA API checks it with common/include/course_check.h."""
    for path in [*chapter.glob("src/*.c"), *chapter.glob("src/*.cu"), *chapter.glob("src/*.cpp")]:
        text = path.read_text()
        calls_api = any(
            token in text
            for token in ("cudaMalloc", "cudaMemcpy", "cudaGetLastError", "driver.cu", "nvrtcCreateProgram", "<<<")
        )
        if calls_api:
            assert "course_check.h" in text or "course_torch.h" in text, f"{path} calls CUDA unchecked"
