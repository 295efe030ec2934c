"""The score table: one row per chapter (passed / failed / skipped), from the JUnit XML files that `make test-all`
and `make grade` collect, then pytest's usual closing summary line. Exits 1 on any failure or missing result.

    python -m course.score build/results chapter1 chapter2 ... course
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def count(xml_path: Path) -> dict[str, float]:
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    root = ET.parse(xml_path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    for suite in suites:
        for key in totals:
            totals[key] += float(suite.get(key, 0))
    return totals


def main(argv: list[str]) -> int:
    results_dir, names = Path(argv[0]), argv[1:]
    width = max([len(n) for n in names] + [8])
    print(f"\n{'chapter':<{width}}  {'passed':>6}  {'failed':>6}  {'skipped':>7}")
    print(f"{'-' * width}  ------  ------  -------")
    passed = failed = skipped = 0
    seconds = 0.0
    for name in names:
        xml_path = results_dir / f"{name}.xml"
        if not xml_path.exists():
            print(f"{name:<{width}}  {'—':>6}  {'build or run failed: no results':>6}")
            failed += 1
            continue
        c = count(xml_path)
        chapter_failed = int(c["failures"] + c["errors"])
        chapter_passed = int(c["tests"] - c["failures"] - c["errors"] - c["skipped"])
        print(f"{name:<{width}}  {chapter_passed:>6}  {chapter_failed:>6}  {int(c['skipped']):>7}")
        passed, failed, skipped, seconds = (
            passed + chapter_passed,
            failed + chapter_failed,
            skipped + int(c["skipped"]),
            seconds + c["time"],
        )
    parts = [f"{failed} failed"] if failed else []
    parts.append(f"{passed} passed")
    if skipped:
        parts.append(f"{skipped} skipped")
    print(f"{'=' * 20} {', '.join(parts)} in {seconds:.2f}s {'=' * 20}")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
