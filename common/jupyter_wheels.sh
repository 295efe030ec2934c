#!/usr/bin/env bash
# Download the wheels of a Jupyter kernel (nbclient, ipykernel and what they need) for the GPU machine's Python
# (3.12, x86-64) into .whl/, so that `make gpu-check` can run the notebooks with a real kernel on a machine with no
# network. The versions are the ones in the course's own venv (common/requirements.txt pins the top ones).
# There, before `make gpu-check`:
#     python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
packages=(
  nbclient==0.11.0 nbformat==5.11.1 ipykernel==7.4.0 jupyter_client==8.10.0 jupyter_core==5.9.1
  ipython==9.18.1 ipython_pygments_lexers==1.1.1 traitlets==5.16.1 pyzmq==27.3.0 tornado==6.6.1 comm==0.2.3
  debugpy==1.8.22 matplotlib-inline==0.2.2 nest-asyncio2==1.7.4 prompt_toolkit==3.0.53 wcwidth==0.9.4
  jedi==0.20.1 parso==0.8.7 pexpect==4.9.0 ptyprocess==0.7.0 stack-data==0.6.3 asttokens==3.0.2 executing==2.3.0
  pure_eval==0.2.4 fastjsonschema==2.22.3 jsonschema==4.26.0 jsonschema-specifications==2025.9.1
  referencing==0.37.0 rpds-py==2026.9.1 platformdirs==4.14.7
)
mkdir -p .whl
"$python" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform manylinux_2_26_x86_64 \
  --platform manylinux_2_24_x86_64 --platform manylinux_2_5_x86_64 -d .whl "${packages[@]}"
echo "jupyter_wheels: $(ls .whl/*.whl | wc -l) wheels, $(du -sh .whl | cut -f1) in .whl/"
