"""Chapter 04: add2 (c = a + b) in CUDA C, loaded three ways — built ahead of time (add2._C, the dispatcher ops
in add2.ops), just in time from files (torch.utils.cpp_extension.load) and from strings (load_inline), see
add2.jit."""

from add2.ops import DTYPES, add2, add2_capped, add2_seed, emulate_seed, pitfall_seed_n

__all__ = ["DTYPES", "add2", "add2_seed", "add2_capped", "pitfall_seed_n", "emulate_seed"]
