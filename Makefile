# The course's top-level Makefile. Chapters are every chapters/*/Makefile, in order; none is listed by hand.
#
#   make run          a tour: every chapter's `make run`
#   make test-all     every chapter's tests and the course tests, then the score table
#   make grade        the same on the students' exercises/ files (EXERCISE=1)
#   make gpu-check LOG_DIR=dir   on a GPU machine: build, test, sanitize and benchmark everything, logs into dir
#   make lint         formatters in check mode, ruff, cppcheck
#   make notebooks    run every notebook here in a Jupyter kernel; store the outputs (GPU cells keep the H100's)
#   make notebooks-from-gpu LOG_DIR=dir   put the GPU cells' outputs of a gpu-check run into notebooks/
#   make lab          JupyterLab on notebooks/ (installs it into .venv the first time)
#   make site         the course as a website in site/ (installs Sphinx into .venv the first time)
#   make serve        serve site/ on localhost (PORT=8000)
#   make clean        remove build outputs (keeps a complete .venv; `make distclean` removes it too)
#
# CHAPTER=03 (or 03_cuda_extension) limits run/test-all/grade/gpu-check to one chapter; CHAPTER="00 01 02" to several
# (the whole course no longer fits one 10-minute GPU call: `make gpu-check` takes it in two lists).
# STEPS="test sanitize" (any of test, sanitize, bench) limits what gpu-check runs after the build.

include common/python.mk

ALL_CHAPTERS := $(patsubst chapters/%/Makefile,%,$(sort $(wildcard chapters/*/Makefile)))
ifdef CHAPTER
  CHAPTERS := $(filter $(addsuffix %,$(CHAPTER)),$(ALL_CHAPTERS))
  ifeq ($(CHAPTERS),)
    $(error No chapter matches CHAPTER=$(CHAPTER). The chapters are: $(ALL_CHAPTERS))
  endif
else
  CHAPTERS := $(ALL_CHAPTERS)
endif
RESULTS := build/results
space := $(subst ,, )
SHELL := /bin/bash

.PHONY: help build run test-all grade gpu-check lint format clean distclean python notebooks notebooks-from-gpu lab site serve
.DEFAULT_GOAL := help

help:
	@echo "Extending PyTorch with C and CUDA — make targets:"
	@echo "  make run                     the tour: every chapter's demo, in order"
	@echo "  make build                   build every chapter (add -j4 to build several at once)"
	@echo "  make test-all                every chapter's tests + the course tests, then a score table"
	@echo "  make grade                   the same on the exercises/ files (EXERCISE=1): the instructor's table"
	@echo "  make gpu-check LOG_DIR=dir   on a GPU machine: build, test, sanitize, benchmark; logs into dir"
	@echo "  make lint                    clang-format, ruff and cppcheck in check mode"
	@echo "  make lab                     JupyterLab on notebooks/ (installed into .venv on first use)"
	@echo "  make site                    the course as a website in site/ (Sphinx installed into .venv on first use)"
	@echo "  make serve                   serve site/ on http://127.0.0.1:8000 (PORT=8001 for another port)"
	@echo "  make notebooks               run every notebook here and store its outputs in notebooks/"
	@echo "  make notebooks-from-gpu LOG_DIR=dir   store the GPU cells' outputs of a gpu-check run"
	@echo "  make format                  apply clang-format and ruff format"
	@echo "  make clean                   remove build outputs;  make distclean: also the .venv"
	@echo "  CHAPTER=NN (or CHAPTER=\"NN MM\") limits run/test-all/grade/gpu-check to those chapters. Chapters: $(ALL_CHAPTERS)"

python: $(PYTHON_READY)

# Every chapter's build, in parallel under -j (chapters are independent builds).
build: python
	@$(MAKE) --no-print-directory $(addprefix build-,$(CHAPTERS))
build-%:
	@$(MAKE) --no-print-directory -C chapters/$* build
# A chapter that builds on another's code says so in its Makefile (DEPENDS_ON := 01_c_extension for C code,
# IMPORTS_CHAPTERS := ... for Python packages).
$(foreach c,$(ALL_CHAPTERS),$(eval build-$(c): $(addprefix build-,$(shell sed -nE 's/^(DEPENDS_ON|IMPORTS_CHAPTERS) *:= *//p' chapters/$(c)/Makefile))))

run: python
	@set -e; for c in $(CHAPTERS); do \
	  echo; echo "==================== $$c ===================="; \
	  $(MAKE) --no-print-directory -C chapters/$$c run; \
	done

# Every chapter runs even when an earlier one fails; the score table and the exit status tell.
define run_all_tests
	@rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	@for c in $(CHAPTERS); do \
	  echo; echo "==================== $$c: $(1) ===================="; \
	  EXERCISE=$(2) $(MAKE) --no-print-directory -C chapters/$$c test JUNIT_XML=$(CURDIR)/$(RESULTS)/$$c.xml \
	    || echo "[$$c] make test failed"; \
	done
endef

test-all: python
	$(call run_all_tests,tests,0)
	@echo; echo "==================== course tests ===================="
	@$(PYTHON) -m pytest tests $(if $(CHAPTER),-k "$(subst $(space), or ,$(strip $(CHAPTER)))") --junitxml=$(RESULTS)/course.xml || true
	@$(PYTHON) -m course.score $(RESULTS) $(CHAPTERS) course

grade: python
	$(call run_all_tests,exercises,1)
	@$(PYTHON) -m course.score $(RESULTS) $(CHAPTERS)

gpu-check: python
	@test -n "$(LOG_DIR)" || { echo "usage: make gpu-check LOG_DIR=/path/to/logs"; exit 2; }
	@PYTHON=$(PYTHON) CHAPTER="$(CHAPTER)" STEPS="$(STEPS)" bash common/gpu_check.sh $(abspath $(LOG_DIR)) $(CHAPTERS)

# ---- notebooks -------------------------------------------------------------------------------------------------
# The committed notebooks carry outputs: CPU cells from this machine, GPU cells from the H100 (course/notebooks.py).
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))
notebooks: build
	@rm -rf build/notebooks/cpu
	$(PYTHON) -m course.notebooks execute $(NOTEBOOKS) --out build/notebooks/cpu
	@# the committed notebooks are the GPU side: their GPU cells keep the H100's output while their source is unchanged
	$(PYTHON) -m course.notebooks merge notebooks --cpu build/notebooks/cpu --gpu notebooks

notebooks-from-gpu: python
	@test -d "$(LOG_DIR)/notebooks" || { echo "usage: make notebooks-from-gpu LOG_DIR=dir (dir/notebooks/ from make gpu-check)"; exit 2; }
	$(PYTHON) -m course.notebooks merge notebooks --cpu notebooks --gpu $(LOG_DIR)/notebooks
	$(PYTHON) -m course.notebooks check $(NOTEBOOKS)

# JupyterLab is not in the default environment (it is large); the first `make lab` installs it, pinned.
LAB_STAMP := $(VENV)/.course-lab
$(LAB_STAMP): common/requirements-lab.txt | python
	@echo "lab: installing JupyterLab into the course's environment (once, a minute or two)"
	$(PYTHON) -m pip install --progress-bar on -r common/requirements-lab.txt
	@touch $@
lab: $(if $(PYTHON_READY),$(LAB_STAMP),python)
	@$(PYTHON) -c "import jupyterlab" 2>/dev/null || { echo "lab: JupyterLab is not installed for $(PYTHON): pip install -r common/requirements-lab.txt"; exit 1; }
	@echo "lab: JupyterLab on notebooks/ (the kernel sees the course's common/ helpers; stop with Ctrl-C)"
	cd notebooks && PYTHONPATH=$(COMMON_DIR) $(PYTHON) -m jupyterlab --notebook-dir=. $(LAB_ARGS)

# ---- the website -----------------------------------------------------------------------------------------------
# Built from the files that exist (README, lessons, docs, notebooks with their stored outputs): docs/_site/build.py.
SITE_STAMP := $(VENV)/.course-site
$(SITE_STAMP): common/requirements-site.txt | python
	@echo "site: installing Sphinx, MyST-NB, Furo and Playwright into the course's environment (once, under a minute)"
	@set -o pipefail; $(PYTHON) -m pip install --progress-bar off -r common/requirements-site.txt 2>&1 \
	  | { grep --line-buffered -E '^(Collecting|Successfully installed|ERROR)' || true; } | sed -u 's/^/site: /'
	@touch $@
site: $(if $(PYTHON_READY),$(SITE_STAMP),python)
	@$(PYTHON) -c "import sphinx, myst_nb, furo" 2>/dev/null || { echo "site: Sphinx is not installed for $(PYTHON): pip install -r common/requirements-site.txt"; exit 1; }
	@$(PYTHON) docs/_site/build.py

PORT ?= 8000
serve: site
	@echo "serve: the course at http://127.0.0.1:$(PORT)/ (stop with Ctrl-C)"
	@$(PYTHON) -m http.server --bind 127.0.0.1 --directory site $(PORT)

C_SOURCES = $(shell git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.cpp')
PY_SOURCES = $(shell git ls-files '*.py' '*.ipynb')

lint: python
	@echo "clang-format (check)"; $(dir $(PYTHON))clang-format --dry-run -Werror $(C_SOURCES)
	@echo "ruff check"; $(PYTHON) -m ruff check $(PY_SOURCES)
	@echo "ruff format (check)"; $(PYTHON) -m ruff format --check $(PY_SOURCES)
	@echo "cppcheck"; command -v cppcheck >/dev/null || { echo "cppcheck not found: apt-get install cppcheck"; exit 1; }; \
	  cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr --std=c11 \
	    -I common/include $(filter %.c,$(C_SOURCES))

format: python
	$(dir $(PYTHON))clang-format -i $(C_SOURCES)
	$(PYTHON) -m ruff format $(PY_SOURCES)

clean:
	@for c in $(ALL_CHAPTERS); do $(MAKE) --no-print-directory -C chapters/$$c clean; done
	rm -rf build site .pytest_cache
	@if [ -d .venv ] && [ ! -f $(VENV_STAMP) ]; then echo "removing the incomplete .venv"; rm -rf .venv; fi

distclean: clean
	rm -rf .venv

.DEFAULT:
	@echo "make: no target '$@'. Run 'make help' for the list of targets."; exit 2
