# Which Python the course uses, and the build settings every CUDA build needs.
# Included by the top-level Makefile and by common/chapter.mk.
#
# - If the python3 on PATH already imports torch (the GPU machine, or an activated venv), use it.
# - Otherwise use the project's virtual environment in .venv, creating it on first use (common/bootstrap.sh).

COURSE_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
COMMON_DIR  := $(COURSE_ROOT)/common
VENV        := $(COURSE_ROOT)/.venv
VENV_STAMP  := $(VENV)/.course-ready

ifndef PYTHON
  ifeq ($(shell python3 -c 'import torch' >/dev/null 2>&1 && echo yes),yes)
    PYTHON := $(shell command -v python3)
    PYTHON_READY :=
  else
    PYTHON := $(VENV)/bin/python
    PYTHON_READY := $(VENV_STAMP)
  endif
endif
export PYTHON

$(VENV_STAMP): $(COMMON_DIR)/requirements.txt $(COMMON_DIR)/bootstrap.sh
	@bash $(COMMON_DIR)/bootstrap.sh

# The toolkit: PyTorch derives it from nvcc's folder unless told. /usr/local/bin/nvcc may be a wrapper, so point
# CUDA_HOME at the real toolkit when one is there (building a CUDA extension fails with -lcudart otherwise).
ifndef CUDA_HOME
  CUDA_HOME := $(firstword $(wildcard /usr/local/cuda) $(patsubst %/bin/nvcc,%,$(realpath $(shell command -v nvcc 2>/dev/null))))
endif
export CUDA_HOME
NVCC := $(if $(CUDA_HOME),$(CUDA_HOME)/bin/nvcc,nvcc)

# The C++ compiler. An extension must use the C++ runtime the process already has (libstdc++.so.6, which torch
# loads): a compiler that has only the static libstdc++.a copies a second runtime into every extension, and that
# copy's locale is never set up, so the first number formatted into a stream (a TORCH_CHECK message with a size in
# it) crashes the process. The course's GPU machine sets CXX=/opt/gcc/bin/g++, such a compiler; then the course uses
# the `g++` on PATH instead, and says so (docs/troubleshooting.md: "Segmentation fault in a failing TORCH_CHECK").
shared_cxx_runtime = $(filter /%,$(shell $(1) -print-file-name=libstdc++.so 2>/dev/null))
ifneq ($(origin CXX),default)
  ifeq ($(call shared_cxx_runtime,$(CXX)),)
    $(info note: CXX=$(CXX) links libstdc++ statically into extensions; building with g++ from PATH instead)
    override CXX := g++
  endif
endif
export CXX

# The GPU architecture to build for: the visible GPU's, or 9.0 (the course's H100) when there is none.
ifndef TORCH_CUDA_ARCH_LIST
  TORCH_CUDA_ARCH_LIST := $(or $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1),9.0)
endif
export TORCH_CUDA_ARCH_LIST
CUDA_ARCH := sm_$(subst .,,$(TORCH_CUDA_ARCH_LIST))

# Shared Python helpers (the `course` package) are importable everywhere.
export PYTHONPATH := $(COMMON_DIR)$(if $(PYTHONPATH),:$(PYTHONPATH))
export PYTHONDONTWRITEBYTECODE := 1

comma := ,
# Compiling the course's own C and CUDA C outside setuptools (C programs, static libraries, sanitizer demos).
# Warnings are errors in CI (CI=true), so a warning never lands.
WARNING_FLAGS := -Wall -Wextra $(if $(CI),-Werror)
COURSE_CFLAGS := -std=c11 -O2 -fPIC $(WARNING_FLAGS) -I$(COMMON_DIR)/include -I$(CUDA_HOME)/include
COURSE_NVCCFLAGS := -O3 -arch=$(CUDA_ARCH) -lineinfo -Xcompiler=-fPIC,-Wall,-Wextra$(if $(CI),$(comma)-Werror) \
                    -I$(COMMON_DIR)/include
CUDA_LIB_DIR := $(CUDA_HOME)/lib64
