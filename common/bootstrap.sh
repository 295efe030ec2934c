#!/usr/bin/env bash
# Make the course's Python environment: the project venv in .venv, built from common/requirements.txt.
# Used only when the current python3 has no torch (the GPU machine's python3 already has everything).
# A venv counts as ready only once its stamp exists, so a half-built one is thrown away and built again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
stamp="$venv/.course-ready"
requirements="$root/common/requirements.txt"

if [ -f "$stamp" ] && [ "$stamp" -nt "$requirements" ]; then
  exit 0
fi
if ! command -v python3 >/dev/null; then
  echo "bootstrap: python3 not found. Install Python 3.10 or newer first." >&2
  exit 1
fi
if [ -d "$venv" ]; then
  echo "bootstrap: $venv is incomplete or out of date; rebuilding it."
  rm -rf "$venv"
fi
echo "bootstrap: creating the course's virtual environment in .venv (torch is large: expect 1-3 minutes)"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# pip prints one line per package it collects, which is the progress a student sees.
"$venv/bin/python" -m pip install --progress-bar off -r "$requirements" 2>&1 \
  | grep --line-buffered -E '^(Collecting|Successfully installed|ERROR)' \
  | sed -u 's/^/bootstrap: /'
"$venv/bin/python" -c "import torch, pytest, numpy; print('bootstrap: torch', torch.__version__, '(CUDA', torch.version.cuda, ') ready')"
touch "$stamp"
