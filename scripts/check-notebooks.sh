#!/usr/bin/env bash
# The notebook check of CI: makes a Python venv with the pinned Jupyter stack
# (python3-venv from apt when missing) and the fetchlab package of python/
# (pip install ./python), runs the package's pytest suite, then
# scripts/check-notebooks.py: validates notebooks-export/*.ipynb, exports a
# small run's notebook with `fetchlab report --notebook` and executes it, and
# executes every exported notebook (the default benchmark's, and the story
# from a collector's log to a paper figure). About 1 min for the pip install on a new
# machine, 1 min after (pytest about 20 s).
#
#   bash scripts/check-notebooks.sh [FETCHLAB]   # default: the debug build
#   bash scripts/check-notebooks.sh --venv-only  # make the venv, print its path
#
# The venv is NOTEBOOK_VENV (default .build/notebook-venv); it is reused while
# it has the pinned packages.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${NOTEBOOK_VENV:-.build/notebook-venv}
# Versions on PyPI for CPython 3.11 (the machine's python3).
pins=(nbformat==5.11.1 nbconvert==7.17.2 nbclient==0.11.0 ipykernel==7.4.0 pandas==3.1.1 matplotlib==3.11.2
  pytest==9.2.0 gymnasium==1.4.0)
# Their dependencies too: python/constraints.txt pins every package of the venv.
constraints=python/constraints.txt

if ! python3 -c "import venv, ensurepip" >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: python3-venv" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >&2
fi
have_pins() {
  "$venv/bin/python" -c 'import sys, importlib.metadata as m
sys.exit(any(m.version(p.split("==")[0]) != p.split("==")[1] for p in sys.argv[1:]))' "${pins[@]}" >/dev/null 2>&1
}
if ! have_pins; then
  echo "creating the notebook venv in $venv (pip install ${pins[*]})" >&2
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$constraints" "${pins[@]}" >&2
fi
# The package as it is in this checkout (its dependencies are the pins above).
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps ./python >&2
if [ "${1:-}" = "--venv-only" ]; then
  echo "$venv"
  exit 0
fi
fetchlab=${1:-$(swift build --show-bin-path)/fetchlab}
FETCHLAB="$fetchlab" "$venv/bin/python" -m pytest -p no:cacheprovider python/tests
"$venv/bin/python" scripts/check-notebooks.py --fetchlab "$fetchlab"
