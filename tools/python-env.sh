#!/usr/bin/env bash
# Makes the Python environment the build uses for the Python package and its tests: a venv at
# build/venv with nanobind, scikit-build-core and pytest from PyPI. Idempotent (a venv that has
# them is kept). Prints the venv's python on stdout when it is ready; prints why not on stderr
# and exits 1 when PyPI cannot be reached (the build then skips the Python package).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/venv
want=(nanobind scikit-build-core pytest)
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import nanobind, scikit_build_core, pytest" 2>/dev/null; then
  echo "$PWD/$venv/bin/python"
  exit 0
fi
mkdir -p build
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if ! "$python" -m venv "$venv" >&2; then
  echo "python-env: cannot make a venv (Debian: apt-get install python3-venv)" >&2
  exit 1
fi
if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --timeout 30 --retries 1 \
    "${want[@]}" >&2; then
  echo "python-env: pip could not install ${want[*]} from PyPI; the Python package is skipped" >&2
  exit 1
fi
echo "$PWD/$venv/bin/python"
