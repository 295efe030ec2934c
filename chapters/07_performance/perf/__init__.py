"""Chapter 07: the same work done every way the course built, measured side by side."""

from course.build import exercises_first

exercises_first(__path__)  # under EXERCISE=1, perf.extra_implementation is the student's exercises/ file

from perf.harness import WORKLOADS, Implementation, implementations, run  # noqa: E402

__all__ = ["WORKLOADS", "Implementation", "implementations", "run"]
