"""Chapter 07: the same work done every way the course built, measured side by side."""

from perf.harness import WORKLOADS, Implementation, implementations, run

__all__ = ["WORKLOADS", "Implementation", "implementations", "run"]
