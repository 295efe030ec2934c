"""The version rules, on made-up combinations (no GPU needed)."""

import pytest
from envcheck import Version, driver_can_run_toolkit, max_cuda_for_driver
from envcheck.compat import extension_build_compatible


@pytest.mark.parametrize(
    "text, expected",
    [
        ("12.4", (12, 4)),
        ("V13.0.88", (13, 0)),
        ("Cuda compilation tools, release 12.8, V12.8.93", (12, 8)),
        (13000, (13, 0)),
        (12040, (12, 4)),
        (11080, (11, 8)),
    ],
)
def test_version_parse(text, expected):
    assert Version.parse(text) == expected


def test_version_parse_rejects_garbage():
    with pytest.raises(ValueError, match="not a version"):
        Version.parse("thirteen")


@pytest.mark.parametrize(
    "driver, toolkit, ok",
    [
        ((13, 0), (13, 0), True),  # same version
        ((13, 0), (12, 8), True),  # newer driver, older toolkit: backward compatible
        ((12, 8), (12, 4), True),
        ((12, 8), (11, 8), True),
        ((12, 4), (12, 8), False),  # older driver, newer toolkit (minor)
        ((12, 8), (13, 0), False),  # older driver, newer toolkit (major)
        ((11, 8), (12, 0), False),
        ((12, 10), (12, 9), True),  # compared as numbers, not text
        ((12, 9), (12, 10), False),
    ],
)
def test_driver_can_run_toolkit(driver, toolkit, ok):
    assert driver_can_run_toolkit(Version(*driver), Version(*toolkit)) is ok


@pytest.mark.parametrize(
    "driver, cuda",
    [
        ("580.95.05", (13, 0)),
        ("575.51.03", (12, 9)),
        ("570.124.06", (12, 8)),
        ("550.54.14", (12, 4)),
        ("535.104.05", (12, 2)),
        ("525.60.13", (12, 0)),
        ("520.61.05", (11, 8)),
        ("470.82.01", (11, 0)),
        ("440.33", None),
    ],
)
def test_max_cuda_for_driver(driver, cuda):
    expected = Version(*cuda) if cuda else None
    assert max_cuda_for_driver(driver) == expected


@pytest.mark.parametrize(
    "torch_cuda, nvcc, ok",
    [((13, 0), (13, 0), True), ((13, 0), (13, 2), True), ((12, 8), (13, 0), False), ((13, 0), (12, 9), False)],
)
def test_extension_build_needs_same_major(torch_cuda, nvcc, ok):
    assert extension_build_compatible(Version(*torch_cuda), Version(*nvcc)) is ok
