# The rules every chapter shares. A chapter's Makefile names itself and includes this file:
#
#     PACKAGE := square_bias          # the chapter's Python package (its demo is `python -m $(PACKAGE)`)
#     include ../../common/chapter.mk
#
# and may add prerequisites afterwards, e.g. `build: build/c_test` for a C program.
#
# Targets: build, run, test, bench, sanitize, gpu-check LOG_DIR=dir, clean.
# EXERCISE=1 builds and tests the student's exercises/ instead of the reference solution.

include $(dir $(lastword $(MAKEFILE_LIST)))python.mk

CHAPTER_NAME := $(notdir $(CURDIR))
EXERCISE    ?= 0
VARIANT     := $(if $(filter 1,$(EXERCISE)),exercise,reference)
BUILD_DIR   := build
LOG_DIR     ?= $(BUILD_DIR)/logs
PYTEST_ARGS ?=
SANITIZE_PYTEST_ARGS ?= -m "gpu and not slow"
export EXERCISE
export PYTHONPATH := $(CURDIR):$(PYTHONPATH)

# The exercise rule (common/course/build.py says it for Python and setup.py): under EXERCISE=1 a file in exercises/
# replaces the reference's file of the same name. For what make compiles: $(call chapter_source,src/name.c) is
# exercises/name.c when the student has one, and EXERCISE_INCLUDES puts exercises/ first on the include path (the
# reference includes such headers as <name.h>).
chapter_source = $(if $(and $(filter 1,$(EXERCISE)),$(wildcard exercises/$(notdir $(1)))),exercises/$(notdir $(1)),$(1))
EXERCISE_INCLUDES := $(if $(filter 1,$(EXERCISE)),-Iexercises)

.PHONY: build run test bench sanitize gpu-check clean python help
.DEFAULT_GOAL := help

help:
	@echo "make run        the chapter's demo ($(PYTHON_NAME) -m $(PACKAGE))"
	@echo "make test       its tests (EXERCISE=1 make test: tests on your exercises/ files)"
	@echo "make bench      its benchmark, where it has speed claims"
	@echo "make sanitize   GPU tests under compute-sanitizer (memcheck, racecheck)"
	@echo "make gpu-check LOG_DIR=dir   all of the above on a GPU machine, logs into dir"
	@echo "make clean      remove what the build made"
PYTHON_NAME := $(notdir $(PYTHON))

python: $(PYTHON_READY)

# --- the PyTorch extension, when the chapter has a setup.py -----------------------------------------------------
# pip builds it in place (an editable install); the stamp keeps make from rebuilding unchanged sources.
# EXTENSION_SOURCES may be extended by a chapter whose extension compiles files from elsewhere.
ifneq ($(wildcard setup.py),)
EXTENSION_STAMP   := $(BUILD_DIR)/.extension-$(VARIANT).stamp
EXTENSION_SOURCES += setup.py $(wildcard pyproject.toml src/* exercises/*) \
                     $(wildcard $(COMMON_DIR)/include/*.h $(COMMON_DIR)/include/*.cuh) $(COMMON_DIR)/course/build.py
$(EXTENSION_STAMP): $(EXTENSION_SOURCES) | python
	@mkdir -p $(BUILD_DIR)
	@if grep -q "cuda=True" setup.py && ! test -x "$(NVCC)"; then \
	  echo "[$(CHAPTER_NAME)] nvcc not found (looked for $(NVCC)): this chapter compiles CUDA code. Install the CUDA"; \
	  echo "  toolkit whose major version matches torch's CUDA (python -c 'import torch; print(torch.version.cuda)')"; \
	  echo "  and set CUDA_HOME to its folder, e.g. export CUDA_HOME=/usr/local/cuda"; exit 1; fi
	@echo "[$(CHAPTER_NAME)] building the $(VARIANT) extension (a minute or two on 2 cores; log: $(BUILD_DIR)/extension-$(VARIANT).log)"
	@$(PYTHON) -m pip install --no-build-isolation --no-deps --editable . > $(BUILD_DIR)/extension-$(VARIANT).log 2>&1 \
	  || { tail -n 60 $(BUILD_DIR)/extension-$(VARIANT).log; echo "[$(CHAPTER_NAME)] extension build FAILED (full log above: $(BUILD_DIR)/extension-$(VARIANT).log)"; exit 1; }
	@touch $@
build: $(EXTENSION_STAMP)
endif

build: | python

# A chapter whose Python imports other chapters' packages names them in IMPORTS_CHAPTERS (the top-level `make build`
# orders the chapters by it, as by DEPENDS_ON for C code); its build builds theirs first, always the reference
# (EXERCISE=0): only this chapter's own files are the student's.
ifdef IMPORTS_CHAPTERS
build: $(addprefix build-chapter-,$(IMPORTS_CHAPTERS))
build-chapter-%:
	@$(MAKE) --no-print-directory -C ../$* build EXERCISE=0
endif

# `make bench` copies its tables and plots to results/<machine>/ where the chapter sets BENCH_ARGS to do so; the
# machine is the GPU's model (h100, h200, ...) or cpu.
RESULTS_MACHINE = $(or $(shell nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 \
                    | grep -oE '[A-Z][0-9]{2,}' | head -n 1 | tr A-Z a-z),cpu)

run: build
	$(PYTHON) -m $(PACKAGE)

# JUNIT_XML is set by the top-level `make test-all` to collect the score table.
test: build
	$(PYTHON) -m pytest tests $(if $(JUNIT_XML),--junitxml=$(JUNIT_XML)) $(PYTEST_ARGS)

bench: build
	@if [ -f bench.py ]; then $(PYTHON) bench.py --out $(LOG_DIR) $(BENCH_ARGS); else echo "[$(CHAPTER_NAME)] no benchmark in this chapter"; fi

# Sanitizers see every allocation only when PyTorch's caching allocator is off; COURSE_SANITIZE=1 asks the tests
# for small sizes, since everything runs tens of times slower under the tools. A chapter without GPU tests has
# nothing to sanitize (compute-sanitizer fails a program that never touches the GPU), so the tests are counted first.
# SANITIZER_FLAGS lets a chapter add options, e.g. to ignore API errors that a library it only calls makes on purpose.
# memcheck and racecheck are separate processes, so they run side by side (each mostly waits on its own
# instrumentation); each writes its own log, shown when both are done.
SANITIZER = compute-sanitizer --error-exitcode 99 --print-limit 20 $(SANITIZER_FLAGS)
SANITIZE_RUN = COURSE_SANITIZE=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 $(SANITIZER) --tool $(1) \
	  $(PYTHON) -m pytest -q -p no:cacheprovider tests $(SANITIZE_PYTEST_ARGS) > $(LOG_DIR)/$(1).log 2>&1
sanitize: build
	@command -v compute-sanitizer >/dev/null || { echo "[$(CHAPTER_NAME)] compute-sanitizer not found (it ships with the CUDA toolkit)"; exit 1; }
	@mkdir -p $(LOG_DIR)
	@if $(PYTHON) -m pytest -q -p no:cacheprovider --collect-only tests $(SANITIZE_PYTEST_ARGS) >/dev/null 2>&1; then \
	  echo "[$(CHAPTER_NAME)] memcheck and racecheck on the GPU tests, side by side (logs: $(LOG_DIR)/{memcheck,racecheck}.log)"; \
	  $(call SANITIZE_RUN,memcheck) & memcheck=$$!; \
	  $(call SANITIZE_RUN,racecheck) & racecheck=$$!; \
	  wait $$memcheck; memcheck_status=$$?; wait $$racecheck; racecheck_status=$$?; \
	  for tool in memcheck racecheck; do echo "----- $$tool -----"; tail -n 30 $(LOG_DIR)/$$tool.log; done; \
	  echo "[$(CHAPTER_NAME)] memcheck exit $$memcheck_status, racecheck exit $$racecheck_status (0 = clean)"; \
	  test $$memcheck_status -eq 0 -a $$racecheck_status -eq 0; \
	else echo "[$(CHAPTER_NAME)] no GPU tests: nothing to sanitize"; fi

# On a GPU machine: everything, logged. Each step runs even if an earlier one failed; the exit status says
# whether all passed.
gpu-check:
	@mkdir -p $(LOG_DIR)
	@status=0; \
	for step in build test sanitize bench; do \
	  start=$$(date +%s); \
	  $(MAKE) --no-print-directory $$step LOG_DIR=$(abspath $(LOG_DIR)) JUNIT_XML=$(if $(JUNIT_XML),$(JUNIT_XML),$(abspath $(LOG_DIR))/junit.xml) \
	    > $(LOG_DIR)/$$step.log 2>&1 && result=ok || { result=FAILED; status=1; }; \
	  printf '[%s] %-9s %-6s %4ss  (%s)\n' "$(CHAPTER_NAME)" $$step $$result $$(( $$(date +%s) - start )) $(LOG_DIR)/$$step.log \
	    | tee -a $(LOG_DIR)/summary.txt; \
	done; exit $$status

clean:
	rm -rf $(BUILD_DIR) *.egg-info .pytest_cache $(CLEAN_EXTRA)
	find . -name '__pycache__' -prune -exec rm -rf {} +
	find . \( -name '*.so' -o -name '*.o' \) -not -path './build/*' -delete

SHELL := /bin/bash
