"""The other chapters' packages this one builds on: chapter 06's norm kernels and chapter 03's x*x + b op.

`make build` here builds both (IMPORTS_CHAPTERS in the Makefile); importing this module puts their folders on
sys.path and imports their reference builds, also under EXERCISE=1 (the exercise here is this chapter's own).
Processes that torch.multiprocessing or torchrun start import this module again, so they find the packages too.
"""

from course.build import import_reference_chapter

norm_diff = import_reference_chapter("06_shared_memory_norm", "norm_diff")
square_bias_cuda = import_reference_chapter("03_cuda_extension", "square_bias_cuda")
